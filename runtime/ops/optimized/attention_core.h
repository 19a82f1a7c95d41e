// Flash-style attention over one K/V head (optimized/attention_core.cc): m query rows that share
// the head see keys [lo_i, hi_i) of a cache; keys are visited in blocks of kKeyBlock, each block
// scored for all rows at once (LlmKernelTable::attn_scores) and folded into running (max, sum, accumulator) per row, so K and
// V are read once per tile and no [rows, keys] matrix is ever materialized.
#pragma once

#include <cstdint>

#include "runtime/ops/optimized/kernels.h"
#include "runtime/ops/optimized/kernels_llm.h"

namespace xonnx {
namespace opt {

constexpr int64_t kKeyBlock = 64;

struct AttnTile {
  int64_t m = 0;             // query rows
  int64_t d = 0;             // head size (of Q, K and V)
  const float* q = nullptr;  // [m, d] contiguous
  const float* k = nullptr;  // key t at k + t * ld
  const float* v = nullptr;  // value t at v + t * ld
  int64_t ld = 0;
  const int64_t* lo = nullptr;         // per row: first visible key
  const int64_t* hi = nullptr;         // per row: one past the last visible key
  const float* const* bias = nullptr;  // per row: additive bias indexed by key, or null
  float scale = 1.0f;
  float softcap = 0.0f;
  int64_t k_begin = 0, k_end = 0;  // keys this call covers (a split of a long cache)
};

// Running softmax state of m rows: acc [m, d], max [m], sum [m]; scores [m, kKeyBlock] scratch.
struct AttnState {
  float* acc;
  float* max;
  float* sum;
  float* scores;
  void reset(int64_t m, int64_t d);
};

// Folds keys [k_begin, k_end) into the state.
void attend(const KernelTable& t, const LlmKernelTable& lt, const AttnTile& tile, AttnState& st);
// Folds `other` (the same rows over other keys) into `st`.
void merge_state(int64_t m, int64_t d, AttnState& st, const AttnState& other);
// out row i (at out[i] , d values) = acc_i / sum_i, with sink logits (per row, may be null)
// counted in the denominator. A row that saw no key gets zeros.
void finish_rows(int64_t m, int64_t d, const AttnState& st, const float* sinks, float* const* out);

}  // namespace opt
}  // namespace xonnx
