// Reference kernels: cast family. (Being filled in; see runtime/ops/op_families.inc.)
#include "runtime/ops/registry.h"

namespace xonnx {

void register_cast_ops(OpRegistry& registry) { (void)registry; }

}  // namespace xonnx
