// Model bytes -> loader (protobuf scan, tensors, functions inlined) -> graph validator.
#include "runtime/onnx/loader.h"
#include "runtime/passes/validate.h"
#include "tests/fuzz/fuzz_target.h"

XONNX_FUZZ_TARGET(fuzz_load_model) {
  using namespace xonnx;
  for (bool inline_functions : {true, false}) {
    LoadOptions options;
    options.max_tensor_bytes = fuzz::kMaxTensorBytes;
    options.inline_functions = inline_functions;
    auto model = load_model_from_memory(data, size, "", options);
    if (model.is_ok()) (void)validate_model(*model);
  }
  return 0;
}
