// The avx2 instantiation of the LLM kernel bodies (kernels_impl_attention.h); runtime/CMakeLists.txt
// gives this file its ISA flags, and llm_kernels() uses the table only when kernels() chose avx2.
#include "runtime/ops/optimized/kernels_llm.h"

#if defined(__x86_64__) || defined(_M_X64)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define XONNX_OPT_ISA_AVX2 1
#define XONNX_OPT_NS avx2
#include "runtime/ops/optimized/kernels_impl_attention.h"
#endif

namespace xonnx {
namespace opt {

const LlmKernelTable* llm_avx2_table() {
#if defined(__x86_64__) || defined(_M_X64)
  static const LlmKernelTable table = avx2::llm::make_llm_table("avx2");
  return &table;
#else
  return nullptr;
#endif
}

}  // namespace opt
}  // namespace xonnx
