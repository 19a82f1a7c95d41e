// The generic instantiation of the optimized kernel bodies (kernels_impl.h); runtime/CMakeLists.txt
// gives this file its ISA flags, and dispatch.cc only uses the table when cpuinfo reports the ISA.
#define XONNX_OPT_ISA_GENERIC 1
#define XONNX_OPT_NS generic
#define XONNX_OPT_MR 4
#include "runtime/ops/optimized/kernels_impl.h"

namespace xonnx {
namespace opt {

const KernelTable* generic_table() {
  static const KernelTable table = generic::make_table("generic");
  return &table;
}

}  // namespace opt
}  // namespace xonnx
