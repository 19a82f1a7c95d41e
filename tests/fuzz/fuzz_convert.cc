// Model bytes -> loader (functions kept) -> validator -> converter pipeline -> serialized
// output, which must load and pass the validator again: a valid input never converts into an
// invalid output (that aborts, as a converter bug).
#include <cstdio>
#include <cstdlib>

#include "converter/convert.h"
#include "runtime/onnx/loader.h"
#include "runtime/passes/validate.h"
#include "tests/fuzz/fuzz_target.h"

XONNX_FUZZ_TARGET(fuzz_convert) {
  using namespace xonnx;
  LoadOptions load;
  load.max_tensor_bytes = fuzz::kMaxTensorBytes;
  load.inline_functions = false;
  auto model = load_model_from_memory(data, size, "", load);
  if (!model.is_ok() || !validate_model(*model).is_ok()) return 0;
  convert::ConvertOptions options;
  options.fold_size_limit_bytes = 1 << 20;
  auto bytes = convert::convert_model_to_bytes(std::move(model).value(), options);
  if (!bytes.is_ok()) return 0;
  auto back = load_model_from_memory(bytes->data(), bytes->size(), "", load);
  Status s = back.is_ok() ? validate_model(*back) : back.status();
  if (!s.is_ok()) {
    std::fprintf(stderr, "a valid model converted into an invalid one: %s\n", s.to_string().c_str());
    std::abort();
  }
  return 0;
}
