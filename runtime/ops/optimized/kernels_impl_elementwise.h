// The element-wise bodies of the KernelTable (exp, erf, GELU, Swish, sigmoid, tanh, the binary
// ops and map_n), part of kernels_impl.h: included from there, after V (simd.h), L and lmin,
// once per ISA.
#pragma once

#include <cmath>
#include <cstring>
#include <limits>

namespace xonnx {
namespace opt {
namespace XONNX_OPT_NS {

// ---- element-wise math -------------------------------------------------------------------

// e^t / 2^n for n = round(t / ln 2): the Cody-Waite reduction r = t - n ln2 in two parts,
// then the Cephes expf polynomial of r.
inline V exp_reduced(V t, V n) {
  V r = V::fma(n, V::set1(-0.693359375f), t);
  r = V::fma(n, V::set1(2.12194440e-4f), r);
  V p = V::set1(1.9875691500e-4f);
  p = V::fma(p, r, V::set1(1.3981999507e-3f));
  p = V::fma(p, r, V::set1(8.3334519073e-3f));
  p = V::fma(p, r, V::set1(4.1665795894e-2f));
  p = V::fma(p, r, V::set1(1.6666665459e-1f));
  p = V::fma(p, r, V::set1(5.0000001201e-1f));
  return V::fma(p, r * r, r + V::set1(1.0f));
}

constexpr float kExpLo = -87.3365478515625f, kExpHi = 88.72283935546875f;  // ln FLT_MIN, ln FLT_MAX

// exp with <= ~2 ulp error on [ln FLT_MIN, ln FLT_MAX]; 0 below, inf above, NaN kept.
inline V exp_v(V x) {
  const V xc = V::min(V::max(x, V::set1(kExpLo)), V::set1(kExpHi));
  const V n = V::round(xc * V::set1(1.44269504088896341f));
  V res = scale_pow2(exp_reduced(xc, n), n);  // n reaches 128 just below ln FLT_MAX
  res = V::select_lt(x, V::set1(kExpLo), V::zero(), res);
  res = V::select_lt(V::set1(kExpHi), x, V::set1(std::numeric_limits<float>::infinity()), res);
  return V::keep_nan(x, res);
}

// exp_v's bits for x <= 0 or NaN (softmax's x - max), without the overflow side.
inline V exp_nonpositive_v(V x) {
#if defined(XONNX_OPT_ISA_AVX512)
  // max with the constant first and an unordered compare keep a NaN x; the zeros below ln
  // FLT_MIN come from scalef's zero-masking: one compare where a select and a NaN fix-up took
  // four instructions (21 -> 18 per vector of a softmax row). Not scalef's own underflow:
  // denormal probabilities (swin_t's -100 masks) slowed every FMA reading them, 80 -> 108 ms.
  const V xc = {_mm512_max_ps(_mm512_set1_ps(kExpLo), x.v)};
  const V n = V::round(xc * V::set1(1.44269504088896341f));
  const __mmask16 in_range = _mm512_cmp_ps_mask(x.v, _mm512_set1_ps(kExpLo), _CMP_NLT_UQ);
  return {_mm512_maskz_scalef_ps(in_range, exp_reduced(xc, n).v, n.v)};
#else
  const V xc = V::max(x, V::set1(kExpLo));
  const V n = V::round(xc * V::set1(1.44269504088896341f));
  const V res = V::select_lt(x, V::set1(kExpLo), V::zero(), scale_pow2(exp_reduced(xc, n), n));
  return V::keep_nan(x, res);
#endif
}

// erf with <= ~5e-7 absolute error (measured against double erf): x P(x^2) / Q(x^2) on x clamped
// to [-4, 4], the rational form of Eigen's fast float erf. One division instead of a Taylor
// branch, an exp and a reciprocal: Gelu 2x faster, which is 6 % of a ConvNeXt and 3 % of a ViT.
inline V erf_v(V x) {
  const V xc = V::min(V::max(x, V::set1(-4.0f)), V::set1(4.0f));
  const V x2 = xc * xc;
  V p = V::set1(-2.72614225801306e-10f);
  p = V::fma(p, x2, V::set1(2.77068142495902e-08f));
  p = V::fma(p, x2, V::set1(-2.10102402082508e-06f));
  p = V::fma(p, x2, V::set1(-5.69250639462346e-05f));
  p = V::fma(p, x2, V::set1(-7.34990630326855e-04f));
  p = V::fma(p, x2, V::set1(-2.95459980854025e-03f));
  p = V::fma(p, x2, V::set1(-1.60960333262415e-02f));
  V q = V::set1(-1.45660718464996e-05f);
  q = V::fma(q, x2, V::set1(-2.13374055278905e-04f));
  q = V::fma(q, x2, V::set1(-1.68282697438203e-03f));
  q = V::fma(q, x2, V::set1(-7.37332916720468e-03f));
  q = V::fma(q, x2, V::set1(-1.42647390514189e-02f));
  // |x| >= 3.92 (erfc below half an ulp of 1): exactly +-1, also where the division is a
  // refined reciprocal estimate (armv7), so that Gelu(-inf) stays -inf * 0 = NaN.
  const V one = V::copysign(V::set1(1.0f), x);
  return V::keep_nan(x, V::select_lt(V::abs(x), V::set1(3.92f), xc * p / q, one));
}

inline V gelu_erf_v(V x) {
  const V e = erf_v(x * V::set1(0.70710678118654752f));
  return V::set1(0.5f) * x * (V::set1(1.0f) + e);
}

inline V gelu_tanh_v(V x) {
  const V u = V::set1(0.79788456080286536f) * V::fma(V::set1(0.044715f) * x, x * x, x);
  const V e = exp_nonpositive_v(V::set1(-2.0f) * V::abs(u));
  const V th = V::copysign((V::set1(1.0f) - e) / (V::set1(1.0f) + e), u);
  return V::keep_nan(x, V::set1(0.5f) * x * (V::set1(1.0f) + th));
}

// e^r for r = -u in [-ln2 / 2, ln2 / 2] as 1 - u p(u): XNNPACK's degree-5 exp polynomial, the
// signs of its odd terms flipped for -u (Swish's e^-x = 2^n e^r with r = -(x + n ln2) = -u).
inline V exp_of_negated_reduced(V u) {
  V p = V::set1(0x1.0F9F9Cp-7f);
  p = V::fma(p, u, V::set1(-0x1.573A1Ap-5f));
  p = V::fma(p, u, V::set1(0x1.555A80p-3f));
  p = V::fma(p, u, V::set1(-0x1.FFFDC6p-2f));
  p = V::fma(p, u, V::set1(0x1.FFFFF6p-1f));
#if defined(XONNX_OPT_ISA_AVX512)
  return {_mm512_fnmadd_ps(u.v, p.v, _mm512_set1_ps(1.0f))};
#else
  return V::set1(1.0f) - u * p;
#endif
}

// x / (1 + e^-x) in one pass (a fused Swish runs over every activation of an EfficientNet or a
// YOLO), e^-x = 2^n e^r with n = round(-x log2e) from one FMA's reduction and
// exp_of_negated_reduced: 13 operations per AVX-512 vector where exp_v's two-constant
// reduction, degree-7 polynomial and range fix-ups took 18 (16K values in L1: 6.6 -> 9.6 G/s;
// worst error against double 1.2e-7 relative, as exp_v's), then a division, not recip_ge1's
// estimate, refinement and zero fix-up. NaN stays NaN (the numerator), +inf gives inf, -inf
// gives -inf / inf = NaN like the reference's -inf * sigmoid(-inf).
inline V swish_v(V x) {
#if defined(XONNX_OPT_ISA_AVX512)
  // x clamped to +-100 keeps the reduction finite; scalef saturates 2^n to 0 or inf itself.
  const V xc = V::min(V::max(x, V::set1(-100.0f)), V::set1(100.0f));
  const V n = V::round(xc * V::set1(-1.44269504088896341f));
  const V e_r = exp_of_negated_reduced(V::fma(n, V::set1(0.693147182464599609375f), xc));
  return x / (V::set1(1.0f) + V{_mm512_scalef_ps(e_r.v, n.v)});
#else
  // 2^n as a float needs |n| <= 126: x clamped to +-87, and e^-x below x = -87 made inf.
  const V xc = V::min(V::max(x, V::set1(-87.0f)), V::set1(87.0f));
  const V n = V::round(xc * V::set1(-1.44269504088896341f));
  const V e_r = exp_of_negated_reduced(V::fma(n, V::set1(0.693147182464599609375f), xc));
  const V e = V::select_lt(x, V::set1(-87.0f), V::set1(std::numeric_limits<float>::infinity()), e_r * V::pow2i(n));
  return x / (V::set1(1.0f) + e);
#endif
}

// 1 / (1 + e^-x): 0 at -inf, 1 at +inf, NaN kept.
inline V sigmoid_v(V x) { return recip_ge1(V::set1(1.0f) + exp_v(V::zero() - x)); }

// sign(x) (1 - e) / (1 + e) with e = e^-2|x| <= 1: no overflow, +-1 at +-inf, NaN kept. Below
// |x| = 1/8, where 1 - e cancels (x = 1e-4 lost 3 digits), the odd Taylor series to x^7 (next
// term 62/2835 x^9: under 3e-10 relative).
inline V tanh_v(V x) {
  const V e = exp_nonpositive_v(V::set1(-2.0f) * V::abs(x));
  const V large = V::copysign((V::set1(1.0f) - e) * recip_ge1(V::set1(1.0f) + e), x);
  const V x2 = x * x;
  V p = V::set1(-17.0f / 315.0f);
  p = V::fma(p, x2, V::set1(2.0f / 15.0f));
  p = V::fma(p, x2, V::set1(-1.0f / 3.0f));
  const V small = V::fma(x * x2, p, x);
  return V::keep_nan(x, V::select_lt(V::abs(x), V::set1(0.125f), small, large));
}

// x * clamp(fma(x, 1/6, 1/2), 0, 1) in the reference's order: -inf gives NaN (-inf * 0), NaN stays.
// ONNX's alpha x + beta with alpha = 1/6, as one fma (ref/activation.cc does the same), where a
// division by 6 waited on the divider: mobilenet_v3_large 1 thread 5.15 -> 4.97 ms.
inline V hard_swish_v(V x) {
  const V gate = V::max(V::zero(), V::min(V::set1(1.0f), V::fma(x, V::set1(1.0f / 6.0f), V::set1(0.5f))));
  return V::keep_nan(x, x * gate);
}

template <BinaryOp Op>
inline V apply_v(V a, V b) {
  if (Op == BinaryOp::kAdd) return a + b;
  if (Op == BinaryOp::kSub) return a - b;
  if (Op == BinaryOp::kMul) return a * b;
  return a / b;
}

// armv7 NEON divides by a reciprocal estimate: the own Div must give IEEE quotients (x / 0
// included), so there it divides one element at a time.
#if defined(XONNX_OPT_ISA_NEON) && !defined(__aarch64__)
constexpr bool kExactVectorDivide = false;
#else
constexpr bool kExactVectorDivide = true;
#endif

template <BinaryOp Op, bool Swapped, bool Scalar>
inline void binary_row(const float* x, const float* s, float* y, int64_t n) {
  if (Op == BinaryOp::kDiv && !kExactVectorDivide) {
    for (int64_t i = 0; i < n; ++i) {
      const float b = Scalar ? s[0] : s[i];
      y[i] = Swapped ? b / x[i] : x[i] / b;
    }
    return;
  }
  const V sv = V::set1(s[0]);
  int64_t i = 0;
  for (; i + L <= n; i += L) {
    const V a = V::load(x + i), b = Scalar ? sv : V::load(s + i);
    (Swapped ? apply_v<Op>(b, a) : apply_v<Op>(a, b)).store(y + i);
  }
  if (i < n) {
    float xa[L] = {}, sa[L] = {};
    std::memcpy(xa, x + i, static_cast<size_t>(n - i) * sizeof(float));
    if (!Scalar) std::memcpy(sa, s + i, static_cast<size_t>(n - i) * sizeof(float));
    const V a = V::load(xa), b = Scalar ? sv : V::load(sa);
    (Swapped ? apply_v<Op>(b, a) : apply_v<Op>(a, b)).store(xa);
    std::memcpy(y + i, xa, static_cast<size_t>(n - i) * sizeof(float));
  }
}

// Rows of n values that share s: a per-channel gate over NHWC pixels is one call, not one
// dispatch per pixel (EfficientNet's gates have 32-value rows).
template <BinaryOp Op, bool Swapped, bool Scalar>
void binary_loop(const float* x, const float* s, float* y, int64_t n, int64_t rows) {
  for (int64_t r = 0; r < rows; ++r, x += n, y += n) binary_row<Op, Swapped, Scalar>(x, s, y, n);
}

template <BinaryOp Op>
void binary_op(bool swapped, const float* x, const float* s, bool s_scalar, float* y, int64_t n, int64_t rows) {
  if (swapped) {
    s_scalar ? binary_loop<Op, true, true>(x, s, y, n, rows) : binary_loop<Op, true, false>(x, s, y, n, rows);
  } else {
    s_scalar ? binary_loop<Op, false, true>(x, s, y, n, rows) : binary_loop<Op, false, false>(x, s, y, n, rows);
  }
}

inline void binary_n(BinaryOp op, bool swapped, const float* x, const float* s, bool s_scalar, float* y, int64_t n,
                     int64_t rows) {
  switch (op) {
    case BinaryOp::kAdd: return binary_op<BinaryOp::kAdd>(swapped, x, s, s_scalar, y, n, rows);
    case BinaryOp::kSub: return binary_op<BinaryOp::kSub>(swapped, x, s, s_scalar, y, n, rows);
    case BinaryOp::kMul: return binary_op<BinaryOp::kMul>(swapped, x, s, s_scalar, y, n, rows);
    case BinaryOp::kDiv: return binary_op<BinaryOp::kDiv>(swapped, x, s, s_scalar, y, n, rows);
  }
}

// Four vectors per step: their long dependency chains (an exp, a division) interleave where
// the out-of-order window alone kept too few in flight (Swish 5 % faster).
template <V (*F)(V)>
void map_n(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 4 * L <= n; i += 4 * L) {
    const V a = F(V::load(x + i)), b = F(V::load(x + i + L)), c = F(V::load(x + i + 2 * L)),
            d = F(V::load(x + i + 3 * L));
    a.store(y + i);
    b.store(y + i + L);
    c.store(y + i + 2 * L);
    d.store(y + i + 3 * L);
  }
  for (; i + L <= n; i += L) F(V::load(x + i)).store(y + i);
  if (i < n) {
    float buf[L] = {};
    std::memcpy(buf, x + i, static_cast<size_t>(n - i) * sizeof(float));
    F(V::load(buf)).store(buf);
    std::memcpy(y + i, buf, static_cast<size_t>(n - i) * sizeof(float));
  }
}

}  // namespace XONNX_OPT_NS
}  // namespace opt
}  // namespace xonnx
