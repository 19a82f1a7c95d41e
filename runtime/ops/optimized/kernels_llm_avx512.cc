// The avx512 instantiation of the LLM kernel bodies (kernels_impl_attention.h); runtime/CMakeLists.txt
// gives this file its ISA flags, and llm_kernels() uses the table only when kernels() chose avx512.
#include "runtime/ops/optimized/kernels_llm.h"

#if defined(__x86_64__) || defined(_M_X64)
// GCC 12 warns about the undefined-value idiom inside its own AVX512 headers.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#define XONNX_OPT_ISA_AVX512 1
#define XONNX_OPT_NS avx512
#include "runtime/ops/optimized/kernels_impl_attention.h"
#endif

namespace xonnx {
namespace opt {

const LlmKernelTable* llm_avx512_table() {
#if defined(__x86_64__) || defined(_M_X64)
  static const LlmKernelTable table = avx512::llm::make_llm_table("avx512");
  return &table;
#else
  return nullptr;
#endif
}

}  // namespace opt
}  // namespace xonnx
