// The generic instantiation of the LLM kernel bodies (kernels_impl_attention.h); runtime/CMakeLists.txt
// gives this file its ISA flags, and llm_kernels() uses the table only when kernels() chose generic.
#include "runtime/ops/optimized/kernels_llm.h"

#if 1
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define XONNX_OPT_ISA_GENERIC 1
#define XONNX_OPT_NS generic
#include "runtime/ops/optimized/kernels_impl_attention.h"
#endif

namespace xonnx {
namespace opt {

const LlmKernelTable* llm_generic_table() {
#if 1
  static const LlmKernelTable table = generic::llm::make_llm_table("generic");
  return &table;
#else
  return nullptr;
#endif
}

}  // namespace opt
}  // namespace xonnx
