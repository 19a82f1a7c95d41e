// Reference kernels: control_flow family. (Being filled in; see runtime/ops/op_families.inc.)
#include "runtime/ops/registry.h"

namespace xonnx {

void register_control_flow_ops(OpRegistry& registry) { (void)registry; }

}  // namespace xonnx
