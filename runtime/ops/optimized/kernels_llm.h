// The vectorized blocks of the LLM kernels (attention, RMS normalization), one table per ISA as
// KernelTable (kernels.h) has, in a table of their own: kernels_llm_<isa>.cc compile the bodies of
// kernels_impl_attention.h per ISA, and llm_kernels() gives the table of the ISA that kernels()
// chose. All functions are single-threaded.
#pragma once

#include <cstdint>

namespace xonnx {
namespace opt {

struct LlmKernelTable {
  const char* isa;
  // s[i * lds + j] = scale * dot(q_i, k_j) for m query rows ([m, d] contiguous) and n key rows
  // (ldk apart).
  void (*attn_scores)(const float* q, int64_t m, const float* k, int64_t ldk, int64_t n, int64_t d, float scale,
                      float* s, int64_t lds);
  // acc[i][:d] += sum over j < n of p[i][j] * v_j: value rows ldv apart, p rows ldp apart, acc
  // [m, d] contiguous.
  void (*attn_accumulate)(const float* p, int64_t ldp, int64_t m, const float* v, int64_t ldv, int64_t n, int64_t d,
                          float* acc);
  // y = x / sqrt(mean(x^2) + eps) * scale over n values; *inv_std (when not null) = that factor.
  void (*rms_norm_row)(const float* x, float* y, int64_t n, const float* scale, float eps, float* inv_std);
};

// The table of the ISA kernels() chose.
const LlmKernelTable& llm_kernels();
// Every table this build has that the CPU supports (differential tests across ISAs).
int supported_llm_tables(const LlmKernelTable** out, int max);

}  // namespace opt
}  // namespace xonnx
