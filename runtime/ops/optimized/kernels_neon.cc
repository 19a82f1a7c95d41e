// The neon instantiation of the optimized kernel bodies (kernels_impl.h); runtime/CMakeLists.txt
// gives this file its ISA flags, and dispatch.cc only uses the table when cpuinfo reports the ISA.
#if defined(__ARM_NEON) || defined(__ARM_NEON__)
#define XONNX_OPT_ISA_NEON 1
#define XONNX_OPT_NS neon
#define XONNX_OPT_MR 6
#include "runtime/ops/optimized/kernels_impl.h"
#else
#include "runtime/ops/optimized/kernels.h"
#endif

namespace xonnx {
namespace opt {

const KernelTable* neon_table() {
#if defined(__ARM_NEON) || defined(__ARM_NEON__)
  static const KernelTable table = neon::make_table("neon");
  return &table;
#else
  return nullptr;
#endif
}

}  // namespace opt
}  // namespace xonnx
