// The bodies of the LlmKernelTable (kernels_llm.h) over the SIMD type V (simd.h), compiled per
// ISA by kernels_llm_<isa>.cc, which define XONNX_OPT_NS and the ISA macro first. Head sizes need
// not be a multiple of the lane count: tails run scalar.
#pragma once

#include <cmath>

#include "runtime/ops/optimized/kernels_llm.h"
#include "runtime/ops/optimized/simd.h"
#include "runtime/ops/optimized/stream_prefetch.h"

namespace xonnx {
namespace opt {
namespace XONNX_OPT_NS {
namespace llm {

constexpr int L = V::kLanes;
inline int64_t lmin(int64_t a, int64_t b) { return a < b ? a : b; }

// A decode step reads the KV cache from memory once per token, row after row: the row this many
// rows ahead (kWeightPrefetchAheadBytes of row data) is prefetched into L2 (stream_prefetch.h).
// A 0.5B model at 1,057 cached tokens decoded 37-40 -> 42-44 tok/s (1 thread, paired runs).
inline int64_t rows_ahead(int64_t d) {
  const int64_t rows = kWeightPrefetchAheadBytes / (d * static_cast<int64_t>(sizeof(float)));
  return rows > 0 ? rows : 1;
}

// s[i * lds + j] = scale * dot(q row i, k row j) for i < m, j < n (d values; q rows d apart,
// k rows ldk apart). Each key row is loaded once for up to four query rows.
inline void attn_scores(const float* q, int64_t m, const float* k, int64_t ldk, int64_t n, int64_t d, float scale,
                        float* s, int64_t lds) {
  const int64_t dv = d - d % L, ahead = rows_ahead(d) * ldk;
  for (int64_t i0 = 0; i0 < m; i0 += 4) {
    const int rows = static_cast<int>(lmin(4, m - i0));
    const float* q0 = q + i0 * d;
    for (int64_t j = 0; j < n; ++j) {
      const float* kj = k + j * ldk;
      V a[4] = {V::zero(), V::zero(), V::zero(), V::zero()};
      for (int64_t c = 0; c < dv; c += L) {
        __builtin_prefetch(kj + ahead + c, 0, 2);  // a hint: no fault past the cache's end
        const V kv = V::load(kj + c);
        for (int r = 0; r < rows; ++r) a[r] = V::fma(V::load(q0 + r * d + c), kv, a[r]);
      }
      for (int r = 0; r < rows; ++r) {
        float t = V::hsum(a[r]);
        for (int64_t c = dv; c < d; ++c) t += q0[r * d + c] * kj[c];
        s[(i0 + r) * lds + j] = t * scale;
      }
    }
  }
}

// acc[i * d + c] += sum over j < n of p[i * ldp + j] * v[j * ldv + c] for i < m, c < d.
// Four accumulator rows stay in registers per column block while the value rows stream.
inline void attn_accumulate(const float* p, int64_t ldp, int64_t m, const float* v, int64_t ldv, int64_t n, int64_t d,
                            float* acc) {
  const int64_t dv = d - d % L, ahead = rows_ahead(d) * ldv;
  for (int64_t i0 = 0; i0 < m; i0 += 4) {
    const int rows = static_cast<int>(lmin(4, m - i0));
    for (int64_t c = 0; c < dv; c += L) {
      V a[4];
      for (int r = 0; r < rows; ++r) a[r] = V::load(acc + (i0 + r) * d + c);
      for (int64_t j = 0; j < n; ++j) {
        __builtin_prefetch(v + j * ldv + ahead + c, 0, 2);  // a hint: no fault past the cache's end
        const V vv = V::load(v + j * ldv + c);
        for (int r = 0; r < rows; ++r) a[r] = V::fma(V::set1(p[(i0 + r) * ldp + j]), vv, a[r]);
      }
      for (int r = 0; r < rows; ++r) a[r].store(acc + (i0 + r) * d + c);
    }
    for (int64_t c = dv; c < d; ++c) {
      for (int r = 0; r < rows; ++r) {
        float t = acc[(i0 + r) * d + c];
        for (int64_t j = 0; j < n; ++j) t += p[(i0 + r) * ldp + j] * v[j * ldv + c];
        acc[(i0 + r) * d + c] = t;
      }
    }
  }
}

// y = x / sqrt(mean(x^2) + eps) * scale over n values; inv_std (may be null) gets the factor.
inline void rms_norm_row(const float* x, float* y, int64_t n, const float* scale, float eps, float* inv_std) {
  V s0 = V::zero(), s1 = V::zero();
  int64_t i = 0;
  for (; i + 2 * L <= n; i += 2 * L) {
    const V a = V::load(x + i), b = V::load(x + i + L);
    s0 = V::fma(a, a, s0);
    s1 = V::fma(b, b, s1);
  }
  for (; i + L <= n; i += L) {
    const V a = V::load(x + i);
    s0 = V::fma(a, a, s0);
  }
  float ss = V::hsum(s0 + s1);
  for (; i < n; ++i) ss += x[i] * x[i];
  const float inv = 1.0f / std::sqrt(ss / static_cast<float>(n) + eps);
  const V vi = V::set1(inv);
  for (i = 0; i + L <= n; i += L) (V::load(x + i) * vi * V::load(scale + i)).store(y + i);
  for (; i < n; ++i) y[i] = x[i] * inv * scale[i];
  if (inv_std) *inv_std = inv;
}

inline LlmKernelTable make_llm_table(const char* isa) {
  LlmKernelTable t;
  t.isa = isa;
  t.attn_scores = attn_scores;
  t.attn_accumulate = attn_accumulate;
  t.rms_norm_row = rms_norm_row;
  return t;
}

}  // namespace llm
}  // namespace XONNX_OPT_NS
}  // namespace opt
}  // namespace xonnx
