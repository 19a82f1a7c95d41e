#include "runtime/ops/optimized/attention_core.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace xonnx {
namespace opt {

namespace {
constexpr float kNegInf = -std::numeric_limits<float>::infinity();
}

void AttnState::reset(int64_t m, int64_t d) {
  std::fill(acc, acc + m * d, 0.0f);
  std::fill(max, max + m, kNegInf);
  std::fill(sum, sum + m, 0.0f);
}

void attend(const KernelTable& t, const LlmKernelTable& lt, const AttnTile& tile, AttnState& st) {
  const int64_t m = tile.m, d = tile.d;
  // Keys any row sees within this call's range.
  int64_t first = tile.k_end, last = tile.k_begin;
  for (int64_t i = 0; i < m; ++i) {
    first = std::min(first, std::max(tile.lo[i], tile.k_begin));
    last = std::max(last, std::min(tile.hi[i], tile.k_end));
  }
  for (int64_t kb = first; kb < last; kb += kKeyBlock) {
    const int64_t n = std::min(kKeyBlock, last - kb);
    float* s = st.scores;
    lt.attn_scores(tile.q, m, tile.k + kb * tile.ld, tile.ld, n, d, tile.scale, s, kKeyBlock);
    for (int64_t i = 0; i < m; ++i) {
      float* row = s + i * kKeyBlock;
      if (tile.softcap > 0) {
        const float c = tile.softcap;
        for (int64_t j = 0; j < n; ++j) row[j] = c * std::tanh(row[j] / c);
      }
      if (tile.bias && tile.bias[i]) {
        const float* b = tile.bias[i] + kb;
        for (int64_t j = 0; j < n; ++j) row[j] += b[j];
      }
      // Keys outside [lo, hi) of this row.
      const int64_t vis_lo = std::clamp<int64_t>(tile.lo[i] - kb, 0, n);
      const int64_t vis_hi = std::clamp<int64_t>(tile.hi[i] - kb, vis_lo, n);
      std::fill(row, row + vis_lo, kNegInf);
      std::fill(row + vis_hi, row + n, kNegInf);
      if (vis_lo == vis_hi) {
        std::fill(row, row + n, 0.0f);
        continue;
      }
      const float block_max = t.row_max(row + vis_lo, vis_hi - vis_lo);
      const float new_max = std::max(st.max[i], block_max);
      if (new_max != st.max[i] && st.max[i] != kNegInf) {
        const float alpha = std::exp(st.max[i] - new_max);
        st.sum[i] *= alpha;
        float* a = st.acc + i * d;
        for (int64_t c = 0; c < d; ++c) a[c] *= alpha;
      }
      st.max[i] = new_max;
      const float neg = -new_max;
      t.binary(BinaryOp::kAdd, false, row, &neg, true, row, n, 1);
      t.exp(row, row, n);  // -inf -> 0
      st.sum[i] += t.row_sum(row, n);
    }
    lt.attn_accumulate(s, kKeyBlock, m, tile.v + kb * tile.ld, tile.ld, n, d, st.acc);
  }
}

void merge_state(int64_t m, int64_t d, AttnState& st, const AttnState& other) {
  for (int64_t i = 0; i < m; ++i) {
    if (other.max[i] == kNegInf) continue;
    const float mx = std::max(st.max[i], other.max[i]);
    const float a = st.max[i] == kNegInf ? 0.0f : std::exp(st.max[i] - mx);
    const float b = std::exp(other.max[i] - mx);
    st.sum[i] = st.sum[i] * a + other.sum[i] * b;
    for (int64_t c = 0; c < d; ++c) st.acc[i * d + c] = st.acc[i * d + c] * a + other.acc[i * d + c] * b;
    st.max[i] = mx;
  }
}

void finish_rows(int64_t m, int64_t d, const AttnState& st, const float* sinks, float* const* out) {
  for (int64_t i = 0; i < m; ++i) {
    float sum = st.sum[i];
    float alpha = 1.0f;
    if (sinks) {
      const float mx = std::max(st.max[i], sinks[i]);
      alpha = st.max[i] == kNegInf ? 0.0f : std::exp(st.max[i] - mx);
      sum = sum * alpha + std::exp(sinks[i] - mx);
    }
    const float f = sum > 0 ? alpha / sum : 0.0f;
    const float* a = st.acc + i * d;
    for (int64_t c = 0; c < d; ++c) out[i][c] = a[c] * f;
  }
}

}  // namespace opt
}  // namespace xonnx
