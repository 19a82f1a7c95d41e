// Reference kernels: quantize family. (Being filled in; see runtime/ops/op_families.inc.)
#include "runtime/ops/registry.h"

namespace xonnx {

void register_quantize_ops(OpRegistry& registry) { (void)registry; }

}  // namespace xonnx
