// The avx512 instantiation of the optimized kernel bodies (kernels_impl.h); runtime/CMakeLists.txt
// gives this file its ISA flags, and dispatch.cc only uses the table when cpuinfo reports the ISA.
#if defined(__x86_64__) || defined(_M_X64)
// GCC 12 warns about the undefined-value idiom inside its own AVX512 headers.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#define XONNX_OPT_ISA_AVX512 1
#define XONNX_OPT_NS avx512
#define XONNX_OPT_MR 8
#include "runtime/ops/optimized/kernels_impl.h"
#else
#include "runtime/ops/optimized/kernels.h"
#endif

namespace xonnx {
namespace opt {

const KernelTable* avx512_table() {
#if defined(__x86_64__) || defined(_M_X64)
  static const KernelTable table = avx512::make_table("avx512");
  return &table;
#else
  return nullptr;
#endif
}

}  // namespace opt
}  // namespace xonnx
