// Input-file readers: a serialized TensorProto (.pb inputs, ONNX test data) and .npy.
#include "runtime/onnx/loader.h"
#include "sdk/cli/npy.h"
#include "tests/fuzz/fuzz_target.h"

XONNX_FUZZ_TARGET(fuzz_tensor_readers) {
  using namespace xonnx;
  (void)parse_tensor_proto(data, size, "fuzz.pb");
  (void)cli::parse_npy(data, size, "fuzz.npy");
  return 0;
}
