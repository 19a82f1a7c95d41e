// The avx2 instantiation of the optimized kernel bodies (kernels_impl.h); runtime/CMakeLists.txt
// gives this file its ISA flags, and dispatch.cc only uses the table when cpuinfo reports the ISA.
#if defined(__x86_64__) || defined(_M_X64)
#define XONNX_OPT_ISA_AVX2 1
#define XONNX_OPT_NS avx2
#define XONNX_OPT_MR 6
#include "runtime/ops/optimized/kernels_impl.h"
#else
#include "runtime/ops/optimized/kernels.h"
#endif

namespace xonnx {
namespace opt {

const KernelTable* avx2_table() {
#if defined(__x86_64__) || defined(_M_X64)
  static const KernelTable table = avx2::make_table("avx2");
  return &table;
#else
  return nullptr;
#endif
}

}  // namespace opt
}  // namespace xonnx
