// The neon instantiation of the LLM kernel bodies (kernels_impl_attention.h); runtime/CMakeLists.txt
// gives this file its ISA flags, and llm_kernels() uses the table only when kernels() chose neon.
#include "runtime/ops/optimized/kernels_llm.h"

#if defined(__ARM_NEON) || defined(__ARM_NEON__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define XONNX_OPT_ISA_NEON 1
#define XONNX_OPT_NS neon
#include "runtime/ops/optimized/kernels_impl_attention.h"
#endif

namespace xonnx {
namespace opt {

const LlmKernelTable* llm_neon_table() {
#if defined(__ARM_NEON) || defined(__ARM_NEON__)
  static const LlmKernelTable table = neon::llm::make_llm_table("neon");
  return &table;
#else
  return nullptr;
#endif
}

}  // namespace opt
}  // namespace xonnx
