// The bodies of the KernelTable functions, written once over the SIMD type V (simd.h) and
// compiled per ISA by kernels_<isa>.cc, which defines XONNX_OPT_NS, XONNX_OPT_MR and the
// ISA macro first. Tails (n not a multiple of the lane count) go through a padded stack
// vector, so every element gets the same arithmetic as the vector body.
#pragma once

#include <cmath>
#include <cstring>
#include <limits>

#include "runtime/ops/optimized/kernels.h"
#include "runtime/ops/optimized/simd.h"
#include "runtime/ops/optimized/stream_prefetch.h"

namespace xonnx {
namespace opt {
namespace XONNX_OPT_NS {

constexpr int L = V::kLanes;
constexpr int kMR = XONNX_OPT_MR;
constexpr int kNR = 2 * L;
// Not std::min: a std template instantiated here with ISA flags could be merged by the linker
// into the generic build's calls (COMDAT), so these files use only their own helpers.
inline int64_t lmin(int64_t a, int64_t b) { return a < b ? a : b; }

}  // namespace XONNX_OPT_NS
}  // namespace opt
}  // namespace xonnx

#include "runtime/ops/optimized/kernels_impl_elementwise.h"

namespace xonnx {
namespace opt {
namespace XONNX_OPT_NS {

// ---- reductions --------------------------------------------------------------------------

inline float row_sum(const float* x, int64_t n) {
  V a0 = V::zero(), a1 = V::zero();
  int64_t i = 0;
  for (; i + 2 * L <= n; i += 2 * L) {
    a0 = a0 + V::load(x + i);
    a1 = a1 + V::load(x + i + L);
  }
  for (; i + L <= n; i += L) a0 = a0 + V::load(x + i);
  float s = V::hsum(a0 + a1);
  for (; i < n; ++i) s += x[i];
  return s;
}

// The smallest and largest of n values, folded into *mn / *mx. Returns false (the range is then
// meaningless) when a value is NaN or infinite: x * 0 + p is NaN exactly then.
inline bool row_range(const float* x, int64_t n, float* mn, float* mx) {
  V lo0 = V::set1(*mn), lo1 = lo0, hi0 = V::set1(*mx), hi1 = hi0, probe0 = V::zero(), probe1 = V::zero();
  int64_t i = 0;
  for (; i + 2 * L <= n; i += 2 * L) {
    const V a = V::load(x + i), b = V::load(x + i + L);
    lo0 = V::min(lo0, a);
    hi0 = V::max(hi0, a);
    lo1 = V::min(lo1, b);
    hi1 = V::max(hi1, b);
    probe0 = V::fma(a, V::zero(), probe0);
    probe1 = V::fma(b, V::zero(), probe1);
  }
  bool finite = !std::isnan(V::hsum(probe0 + probe1));
  float lo = -V::hmax(V::zero() - V::min(lo0, lo1)), hi = V::hmax(V::max(hi0, hi1));
  for (; i < n; ++i) {
    finite = finite && std::isfinite(x[i]);
    lo = x[i] < lo ? x[i] : lo;
    hi = x[i] > hi ? x[i] : hi;
  }
  *mn = lo;
  *mx = hi;
  return finite;
}

inline float row_max(const float* x, int64_t n) {
  if (n <= 0) return -std::numeric_limits<float>::infinity();
  float m = x[0];
  int64_t i = 0;
  if (n >= L) {
    V a = V::load(x);
    V nan_probe = V::zero();  // x * 0 is NaN for NaN (and inf) inputs
    for (i = L; i + L <= n; i += L) {
      const V v = V::load(x + i);
      a = V::max(a, v);
      nan_probe = nan_probe + v * V::zero();
    }
    nan_probe = nan_probe + V::load(x) * V::zero();
    m = V::hmax(a);
    if (std::isnan(V::hsum(nan_probe))) {
      for (int64_t j = 0; j < i; ++j)
        if (std::isnan(x[j])) return x[j];
    }
  }
  for (; i < n; ++i) {
    if (std::isnan(x[i])) return x[i];
    if (x[i] > m) m = x[i];
  }
  return m;
}

inline void add_into(const float* x, float* acc, int64_t n) {
  int64_t i = 0;
  for (; i + L <= n; i += L) (V::load(acc + i) + V::load(x + i)).store(acc + i);
  for (; i < n; ++i) acc[i] += x[i];
}

// GCC contracts a vector product and sum into an FMA by default (-ffp-contract=fast), whose one
// rounding would leave the reference's bits; clang contracts within one expression only.
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("fp-contract=off")))
#endif
inline void
scale_shift_clamp(const float* x, const float* mul, const float* add, float lo, float hi, float* y, int64_t n) {
  const V vlo = V::set1(lo), vhi = V::set1(hi);
  int64_t i = 0;
  // lo > v ? lo : v, then hi < v ? hi : v: v when it is NaN, and -0 kept at lo = 0 (on every ISA,
  // unlike NEON's vmaxq_f32).
  for (; i + L <= n; i += L) {
    const V v = V::load(x + i) * V::load(mul + i) + V::load(add + i);
    V::min_lt(vhi, V::max_gt(vlo, v)).store(y + i);
  }
  for (; i < n; ++i) {
    float v = x[i] * mul[i] + add[i];
    v = lo > v ? lo : v;
    y[i] = hi < v ? hi : v;
  }
}

inline void column_sums(const float* x, int64_t rows, int64_t stride, int64_t n, float* out) {
  int64_t j = 0;
  for (; j + 2 * L <= n; j += 2 * L) {  // two column vectors, each with an even and an odd chain
    V e0 = V::zero(), e1 = V::zero(), o0 = V::zero(), o1 = V::zero();
    const float* p = x + j;
    int64_t i = 0;
    for (; i + 2 <= rows; i += 2, p += 2 * stride) {
      e0 = e0 + V::load(p);
      e1 = e1 + V::load(p + L);
      o0 = o0 + V::load(p + stride);
      o1 = o1 + V::load(p + stride + L);
    }
    if (i < rows) {
      e0 = e0 + V::load(p);
      e1 = e1 + V::load(p + L);
    }
    (e0 + o0).store(out + j);
    (e1 + o1).store(out + j + L);
  }
  for (; j + L <= n; j += L) {
    V e = V::zero(), o = V::zero();
    const float* p = x + j;
    int64_t i = 0;
    for (; i + 2 <= rows; i += 2, p += 2 * stride) {
      e = e + V::load(p);
      o = o + V::load(p + stride);
    }
    if (i < rows) e = e + V::load(p);
    (e + o).store(out + j);
  }
  for (; j < n; ++j) {
    float e = 0.0f, o = 0.0f;
    int64_t i = 0;
    for (; i + 2 <= rows; i += 2) {
      e += x[i * stride + j];
      o += x[(i + 1) * stride + j];
    }
    if (i < rows) e += x[i * stride + j];
    out[j] = e + o;
  }
}

// NaN-propagating: a NaN in x or acc stays NaN.
inline void max_into(const float* x, float* acc, int64_t n) {
  int64_t i = 0;
  for (; i + L <= n; i += L) {
    const V a = V::load(acc + i), v = V::load(x + i);
    V::keep_nan(a, V::keep_nan(v, V::max(a, v))).store(acc + i);
  }
  for (; i < n; ++i) {
    if (std::isnan(acc[i])) continue;
    if (std::isnan(x[i]) || x[i] > acc[i]) acc[i] = x[i];
  }
}

// ---- max pooling --------------------------------------------------------------------------

// out[p * out_stride + j] = max over t of taps[p * ntaps + t][j], for j < c: a later value wins only when
// strictly greater and NaN never wins (the reference MaxPool's rule). Returns whether an output
// is -inf: an all-NaN window (the reference gives NaN) or a real -inf, which the caller redoes.
inline bool max_pool_pixels(const float* const* taps, int64_t ntaps, int64_t pixels, int64_t c, float* out,
                            int64_t out_stride) {
  const float neg_inf = -std::numeric_limits<float>::infinity();
  V low = V::set1(-neg_inf);  // the smallest output so far (outputs are never NaN)
  bool low_tail = false;
  for (int64_t p = 0; p < pixels; ++p, taps += ntaps, out += out_stride) {
    int64_t j = 0;
    for (; j + 4 * L <= c; j += 4 * L) {  // four independent chains hide the compare latency
      V m0 = V::set1(neg_inf), m1 = m0, m2 = m0, m3 = m0;
      for (int64_t t = 0; t < ntaps; ++t) {
        const float* x = taps[t] + j;
        m0 = V::max_gt(V::load(x), m0);
        m1 = V::max_gt(V::load(x + L), m1);
        m2 = V::max_gt(V::load(x + 2 * L), m2);
        m3 = V::max_gt(V::load(x + 3 * L), m3);
      }
      m0.store(out + j);
      m1.store(out + j + L);
      m2.store(out + j + 2 * L);
      m3.store(out + j + 3 * L);
      low = V::min(low, V::min(V::min(m0, m1), V::min(m2, m3)));
    }
    for (; j + L <= c; j += L) {
      V m = V::set1(neg_inf);
      for (int64_t t = 0; t < ntaps; ++t) m = V::max_gt(V::load(taps[t] + j), m);
      m.store(out + j);
      low = V::min(low, m);
    }
    for (; j < c; ++j) {
      float m = neg_inf;
      for (int64_t t = 0; t < ntaps; ++t) m = taps[t][j] > m ? taps[t][j] : m;
      out[j] = m;
      low_tail = low_tail || m == neg_inf;
    }
  }
  return low_tail || V::hmax(V::zero() - low) == -neg_inf;
}

// ---- LayerNorm / Softmax rows ------------------------------------------------------------

inline void layer_norm_row(const float* x, float* y, int64_t n, const float* scale, const float* bias, float eps,
                           float* mean_out, float* inv_out) {
  const float mean = row_sum(x, n) / static_cast<float>(n);
  const V vm = V::set1(mean);
  V q0 = V::zero(), q1 = V::zero();
  int64_t i = 0;
  for (; i + 2 * L <= n; i += 2 * L) {
    const V d0 = V::load(x + i) - vm, d1 = V::load(x + i + L) - vm;
    q0 = V::fma(d0, d0, q0);
    q1 = V::fma(d1, d1, q1);
  }
  for (; i + L <= n; i += L) {
    const V d = V::load(x + i) - vm;
    q0 = V::fma(d, d, q0);
  }
  float q = V::hsum(q0 + q1);
  for (; i < n; ++i) q += (x[i] - mean) * (x[i] - mean);
  const float inv = 1.0f / std::sqrt(q / static_cast<float>(n) + eps);
  const V vi = V::set1(inv);
  i = 0;
  if (bias) {
    for (; i + L <= n; i += L) V::fma((V::load(x + i) - vm) * vi, V::load(scale + i), V::load(bias + i)).store(y + i);
    for (; i < n; ++i) y[i] = (x[i] - mean) * inv * scale[i] + bias[i];
  } else {
    for (; i + L <= n; i += L) ((V::load(x + i) - vm) * vi * V::load(scale + i)).store(y + i);
    for (; i < n; ++i) y[i] = (x[i] - mean) * inv * scale[i];
  }
  if (mean_out) *mean_out = mean;
  if (inv_out) *inv_out = inv;
}

// y = exp(x - max x) over n values; returns their sum (softmax_row without the division).
inline float exp_shifted_row(const float* x, float* y, int64_t n) {
  // NaN/inf need no special case: exp(NaN) and exp(inf - inf) give NaN sums, hence NaN rows,
  // as the reference kernel does.
#if defined(XONNX_OPT_ISA_AVX512)
  // Masked tails, and a plain maximum without row_max's NaN scan (a NaN makes the sum NaN
  // either way): attention's 197-key rows spent more time in their tails and scans than in exp.
  if (n <= 0) return 0.0f;
  const __mmask16 tail = static_cast<__mmask16>((1u << (n % L)) - 1u);
  const int64_t body = n - n % L;
  // Four chains: one waits 4 cycles per vector on the one before (a 500-key row: 16 % of the
  // attention's time).
  __m512 mx0 = _mm512_set1_ps(-std::numeric_limits<float>::infinity()), mx1 = mx0, mx2 = mx0, mx3 = mx0;
  int64_t i4 = 0;
  for (; i4 + 4 * L <= body; i4 += 4 * L) {
    mx0 = _mm512_max_ps(mx0, _mm512_loadu_ps(x + i4));
    mx1 = _mm512_max_ps(mx1, _mm512_loadu_ps(x + i4 + L));
    mx2 = _mm512_max_ps(mx2, _mm512_loadu_ps(x + i4 + 2 * L));
    mx3 = _mm512_max_ps(mx3, _mm512_loadu_ps(x + i4 + 3 * L));
  }
  for (; i4 < body; i4 += L) mx0 = _mm512_max_ps(mx0, _mm512_loadu_ps(x + i4));
  if (tail) mx1 = _mm512_mask_max_ps(mx1, tail, mx1, _mm512_maskz_loadu_ps(tail, x + body));
  const __m512 mx = _mm512_max_ps(_mm512_max_ps(mx0, mx1), _mm512_max_ps(mx2, mx3));
  const V m = V::set1(_mm512_reduce_max_ps(mx));
  V s0 = V::zero();
  for (int64_t i = 0; i < body; i += L) {
    const V e = exp_nonpositive_v(V::load(x + i) - m);
    e.store(y + i);
    s0 = s0 + e;
  }
  if (tail) {
    const V e = exp_nonpositive_v(V{_mm512_maskz_loadu_ps(tail, x + body)} - m);
    _mm512_mask_storeu_ps(y + body, tail, e.v);
    s0.v = _mm512_mask_add_ps(s0.v, tail, s0.v, e.v);
  }
  return V::hsum(s0);
#else
  const V m = V::set1(row_max(x, n));
  V s0 = V::zero();
  int64_t i = 0;
  for (; i + L <= n; i += L) {
    const V e = exp_nonpositive_v(V::load(x + i) - m);
    e.store(y + i);
    s0 = s0 + e;
  }
  float s = V::hsum(s0);
  if (i < n) {
    float buf[L];
    for (int j = 0; j < L; ++j) buf[j] = i + j < n ? x[i + j] : -std::numeric_limits<float>::infinity();
    exp_nonpositive_v(V::load(buf) - m).store(buf);
    for (int64_t j = i; j < n; ++j) {
      y[j] = buf[j - i];
      s += y[j];
    }
  }
  return s;
#endif
}

inline void softmax_row(const float* x, float* y, int64_t n) {
  const float s = exp_shifted_row(x, y, n);
  const V inv = V::set1(1.0f / s);
  int64_t i = 0;
  for (; i + L <= n; i += L) (V::load(y + i) * inv).store(y + i);
  for (; i < n; ++i) y[i] *= 1.0f / s;
}

// Softmax down each of `cols` contiguous columns over n rows `stride` apart (a softmax over an
// axis other than the last: NCHW class scores, YOLOv8's DFL bins), a vector of columns at a time.
// A column holding NaN, or with inf, is NaN, as in softmax_row.
inline void softmax_columns(const float* x, float* y, int64_t n, int64_t stride, int64_t cols) {
  int64_t c = 0;
  for (; c + L <= cols; c += L) {
    V m = V::load(x + c);
    for (int64_t r = 1; r < n; ++r) m = V::max(m, V::load(x + r * stride + c));
    V s = V::zero();
    for (int64_t r = 0; r < n; ++r) {
      const V e = exp_nonpositive_v(V::load(x + r * stride + c) - m);
      e.store(y + r * stride + c);
      s = s + e;
    }
    const V inv = V::set1(1.0f) / s;
    for (int64_t r = 0; r < n; ++r) (V::load(y + r * stride + c) * inv).store(y + r * stride + c);
  }
  if (c == cols) return;
  // The last columns through a vector padded with -inf (their lanes are dropped).
  const int64_t w = cols - c;
  float buf[L];
  const auto load_tail = [&](const float* p) {
    for (int64_t j = 0; j < L; ++j) buf[j] = j < w ? p[j] : -std::numeric_limits<float>::infinity();
    return V::load(buf);
  };
  V m = load_tail(x + c);
  for (int64_t r = 1; r < n; ++r) m = V::max(m, load_tail(x + r * stride + c));
  V s = V::zero();
  for (int64_t r = 0; r < n; ++r) {
    const V e = exp_nonpositive_v(load_tail(x + r * stride + c) - m);
    s = s + e;
    e.store(buf);
    std::copy(buf, buf + w, y + r * stride + c);
  }
  s.store(buf);
  float inv[L];
  for (int64_t j = 0; j < w; ++j) inv[j] = 1.0f / buf[j];
  for (int64_t r = 0; r < n; ++r)
    for (int64_t j = 0; j < w; ++j) y[r * stride + c + j] *= inv[j];
}

// ---- GEMM --------------------------------------------------------------------------------

inline void pack_b(const float* b, int64_t ldb, int64_t K, int64_t ncols, float* dst) {
  if (ncols == kNR) {
    for (int64_t k = 0; k < K; ++k) {
      V::load(b + k * ldb).store(dst + k * kNR);
      V::load(b + k * ldb + L).store(dst + k * kNR + L);
    }
    return;
  }
  for (int64_t k = 0; k < K; ++k) {
    for (int64_t j = 0; j < kNR; ++j) dst[k * kNR + j] = j < ncols ? b[k * ldb + j] : 0.0f;
  }
}

// One register tile: R rows x kNR columns, accumulating over the whole K.
template <int R>
void micro_tile(int64_t K, const float* a, int64_t lda, const float* bp, float* c, int64_t ldc, int64_t ncols) {
  V acc0[R], acc1[R];
  const float* ar[R];
  for (int i = 0; i < R; ++i) {
    acc0[i] = V::zero();
    acc1[i] = V::zero();
    ar[i] = a + i * lda;
  }
  for (int64_t k = 0; k < K; ++k) {
    if constexpr (R <= 2) {  // few rows stream the panel from memory (stream_prefetch.h)
      prefetch_weights_ahead(bp);
      if constexpr (kNR * sizeof(float) > 64) prefetch_weights_ahead(bp + 16);
    }
    const V b0 = V::load(bp), b1 = V::load(bp + L);
    bp += kNR;
    for (int i = 0; i < R; ++i) {
      const V ai = V::set1(ar[i][k]);
      acc0[i] = V::fma(ai, b0, acc0[i]);
      acc1[i] = V::fma(ai, b1, acc1[i]);
    }
  }
  if (ncols == kNR) {
    for (int i = 0; i < R; ++i) {
      acc0[i].store(c + i * ldc);
      acc1[i].store(c + i * ldc + L);
    }
    return;
  }
  float buf[kNR];
  for (int i = 0; i < R; ++i) {
    acc0[i].store(buf);
    acc1[i].store(buf + L);
    std::memcpy(c + i * ldc, buf, static_cast<size_t>(ncols) * sizeof(float));
  }
}

template <int R>
void micro_rows(int rows, int64_t K, const float* a, int64_t lda, const float* bp, float* c, int64_t ldc,
                int64_t ncols) {
  if constexpr (R > 0) {
    if (rows == R) return micro_tile<R>(K, a, lda, bp, c, ldc, ncols);
    micro_rows<R - 1>(rows, K, a, lda, bp, c, ldc, ncols);
  }
}

inline void gemm_panel(int64_t M, int64_t K, const float* a, int64_t lda, const float* packed, int64_t ncols, float* c,
                       int64_t ldc) {
  int64_t m = 0;
  for (; m + kMR <= M; m += kMR) micro_tile<kMR>(K, a + m * lda, lda, packed, c + m * ldc, ldc, ncols);
  if (m < M) micro_rows<kMR - 1>(static_cast<int>(M - m), K, a + m * lda, lda, packed, c + m * ldc, ldc, ncols);
}

// Row by row, 4 vectors of columns at a time, B read in place. A B of exactly 4 vectors per row
// (a column block stored contiguously, as the recurrent kernels keep R) is prefetched 8 rows
// ahead: there one pass over B is the whole cost (LSTM hidden 256: 18 % less per step); B rows
// far apart (MatMul reading B in place) did not gain from it.
inline void gemm_direct(int64_t M, int64_t N, int64_t K, const float* a, int64_t lda, const float* b, int64_t ldb,
                        float* c, int64_t ldc) {
  const bool prefetch = ldb == 4 * L;
  constexpr int64_t kPrefetchRows = 8;
  for (int64_t i = 0; i < M; ++i) {
    const float* ai = a + i * lda;
    float* ci = c + i * ldc;
    int64_t j = 0;
    for (; j + 4 * L <= N; j += 4 * L) {
      V c0 = V::zero(), c1 = V::zero(), c2 = V::zero(), c3 = V::zero();
      const float* bj = b + j;
      for (int64_t k = 0; k < K; ++k, bj += ldb) {
        if (prefetch) {  // prefetches do not fault past the end
          const float* ahead = bj + kPrefetchRows * ldb;
          __builtin_prefetch(ahead);
          __builtin_prefetch(ahead + L);
          __builtin_prefetch(ahead + 2 * L);
          __builtin_prefetch(ahead + 3 * L);
        }
        const V av = V::set1(ai[k]);
        c0 = V::fma(av, V::load(bj), c0);
        c1 = V::fma(av, V::load(bj + L), c1);
        c2 = V::fma(av, V::load(bj + 2 * L), c2);
        c3 = V::fma(av, V::load(bj + 3 * L), c3);
      }
      c0.store(ci + j);
      c1.store(ci + j + L);
      c2.store(ci + j + 2 * L);
      c3.store(ci + j + 3 * L);
    }
    for (; j + L <= N; j += L) {
      V c0 = V::zero();
      const float* bj = b + j;
      for (int64_t k = 0; k < K; ++k, bj += ldb) c0 = V::fma(V::set1(ai[k]), V::load(bj), c0);
      c0.store(ci + j);
    }
    for (; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += ai[k] * b[k * ldb + j];
      ci[j] = s;
    }
  }
}

// ---- transpose ---------------------------------------------------------------------------

#if defined(XONNX_OPT_ISA_AVX2) || defined(XONNX_OPT_ISA_AVX512)
// One 8x8 tile through registers (unpack / shuffle / 128-bit lane permute).
inline void transpose_8x8(const float* s, int64_t ls, float* d, int64_t ld) {
  __m256 r0 = _mm256_loadu_ps(s), r1 = _mm256_loadu_ps(s + ls), r2 = _mm256_loadu_ps(s + 2 * ls),
         r3 = _mm256_loadu_ps(s + 3 * ls), r4 = _mm256_loadu_ps(s + 4 * ls), r5 = _mm256_loadu_ps(s + 5 * ls),
         r6 = _mm256_loadu_ps(s + 6 * ls), r7 = _mm256_loadu_ps(s + 7 * ls);
  const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
  const __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
  const __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
  const __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 u1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 u3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 u4 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 u5 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 u6 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 u7 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2));
  _mm256_storeu_ps(d, _mm256_permute2f128_ps(u0, u4, 0x20));
  _mm256_storeu_ps(d + ld, _mm256_permute2f128_ps(u1, u5, 0x20));
  _mm256_storeu_ps(d + 2 * ld, _mm256_permute2f128_ps(u2, u6, 0x20));
  _mm256_storeu_ps(d + 3 * ld, _mm256_permute2f128_ps(u3, u7, 0x20));
  _mm256_storeu_ps(d + 4 * ld, _mm256_permute2f128_ps(u0, u4, 0x31));
  _mm256_storeu_ps(d + 5 * ld, _mm256_permute2f128_ps(u1, u5, 0x31));
  _mm256_storeu_ps(d + 6 * ld, _mm256_permute2f128_ps(u2, u6, 0x31));
  _mm256_storeu_ps(d + 7 * ld, _mm256_permute2f128_ps(u3, u7, 0x31));
}
constexpr bool kHasTile8 = true;
#else
inline void transpose_8x8(const float* s, int64_t ls, float* d, int64_t ld) {
  for (int r = 0; r < 8; ++r)
    for (int c = 0; c < 8; ++c) d[c * ld + r] = s[r * ls + c];
}
constexpr bool kHasTile8 = false;
#endif

// 32x32 cache blocks of 8x8 register tiles; scalar edges.
inline void transpose_2d(const float* src, int64_t ls, float* dst, int64_t ld, int64_t rows, int64_t cols) {
  constexpr int64_t kB = 32;
  (void)kHasTile8;
  for (int64_t r0 = 0; r0 < rows; r0 += kB) {
    const int64_t r1 = lmin(rows, r0 + kB);
    for (int64_t c0 = 0; c0 < cols; c0 += kB) {
      const int64_t c1 = lmin(cols, c0 + kB);
      int64_t r = r0;
      for (; r + 8 <= r1; r += 8) {
        int64_t c = c0;
        for (; c + 8 <= c1; c += 8) transpose_8x8(src + r * ls + c, ls, dst + c * ld + r, ld);
        for (; c < c1; ++c)
          for (int64_t k = r; k < r + 8; ++k) dst[c * ld + k] = src[k * ls + c];
      }
      for (; r < r1; ++r)
        for (int64_t c = c0; c < c1; ++c) dst[c * ld + r] = src[r * ls + c];
    }
  }
}

}  // namespace XONNX_OPT_NS
}  // namespace opt
}  // namespace xonnx

#include "runtime/ops/optimized/kernels_impl_q4.h"

namespace xonnx {
namespace opt {
namespace XONNX_OPT_NS {

// ---- the table ---------------------------------------------------------------------------

inline void exp_n(const float* x, float* y, int64_t n) { map_n<exp_v>(x, y, n); }
inline void erf_n(const float* x, float* y, int64_t n) { map_n<erf_v>(x, y, n); }
inline void gelu_erf_n(const float* x, float* y, int64_t n) { map_n<gelu_erf_v>(x, y, n); }
inline void gelu_tanh_n(const float* x, float* y, int64_t n) { map_n<gelu_tanh_v>(x, y, n); }
inline void swish_n(const float* x, float* y, int64_t n) { map_n<swish_v>(x, y, n); }
inline void hard_swish_n(const float* x, float* y, int64_t n) { map_n<hard_swish_v>(x, y, n); }
inline void sigmoid_n(const float* x, float* y, int64_t n) { map_n<sigmoid_v>(x, y, n); }
inline void tanh_n(const float* x, float* y, int64_t n) { map_n<tanh_v>(x, y, n); }

inline KernelTable make_table(const char* isa) {
  KernelTable t;
  t.isa = isa;
  t.mr = kMR;
  t.nr = kNR;
  t.pack_b = pack_b;
  t.gemm_panel = gemm_panel;
  t.gemm_direct = gemm_direct;
  t.layer_norm_row = layer_norm_row;
  t.softmax_row = softmax_row;
  t.softmax_columns = softmax_columns;
  t.exp_shifted_row = exp_shifted_row;
  t.exp = exp_n;
  t.erf = erf_n;
  t.gelu_erf = gelu_erf_n;
  t.gelu_tanh = gelu_tanh_n;
  t.swish = swish_n;
  t.hard_swish = hard_swish_n;
  t.sigmoid = sigmoid_n;
  t.tanh = tanh_n;
  t.binary = binary_n;
  t.add_into = add_into;
  t.max_into = max_into;
  t.scale_shift_clamp = scale_shift_clamp;
  t.column_sums = column_sums;
  t.row_sum = row_sum;
  t.row_max = row_max;
  t.row_range = row_range;
  t.max_pool_pixels = max_pool_pixels;
  t.transpose_2d = transpose_2d;
  t.q4_dequant_col = q4_dequant_col;
  t.q4_pack_a = q4_pack_a;
  t.q4_gemm_direct = q4_gemm_direct;
  return t;
}

}  // namespace XONNX_OPT_NS
}  // namespace opt
}  // namespace xonnx
