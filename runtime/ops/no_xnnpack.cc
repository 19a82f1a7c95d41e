// The XNNPACK op family of a build without XNNPACK (XONNX_WITH_XNNPACK=OFF, and the own-kernels
// runtime variant): it registers nothing, so the family list (ops.def), the op
// selection files and `xonnx info --ops` stay the same in every build; the optimized and
// reference kernels take the nodes.
#include "runtime/ops/registry.h"

namespace xonnx {

void register_xnnpack_ops(OpRegistry& registry) { (void)registry; }

}  // namespace xonnx
