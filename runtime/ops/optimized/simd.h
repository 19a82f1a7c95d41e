// A minimal float SIMD vector type `V` for the optimized kernels, one definition per ISA.
// Each kernels_<isa>.cc defines exactly one XONNX_OPT_ISA_* macro before including this file
// (and kernels_impl.h), so the same templated kernel bodies compile once per ISA; dispatch.cc
// picks the table at run time with cpuinfo. Only what the kernels need is here.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(XONNX_OPT_ISA_AVX512) || defined(XONNX_OPT_ISA_AVX2)
#include <immintrin.h>
#elif defined(XONNX_OPT_ISA_NEON)
#include <arm_neon.h>
#elif !defined(XONNX_OPT_ISA_GENERIC)
#error "define one XONNX_OPT_ISA_* before including simd.h"
#endif

namespace xonnx {
namespace opt {
namespace XONNX_OPT_NS {

#if defined(XONNX_OPT_ISA_AVX512)

struct V {
  static constexpr int kLanes = 16;
  __m512 v;
  static V load(const float* p) { return {_mm512_loadu_ps(p)}; }
  void store(float* p) const { _mm512_storeu_ps(p, v); }
  static V set1(float x) { return {_mm512_set1_ps(x)}; }
  static V zero() { return {_mm512_setzero_ps()}; }
  friend V operator+(V a, V b) { return {_mm512_add_ps(a.v, b.v)}; }
  friend V operator-(V a, V b) { return {_mm512_sub_ps(a.v, b.v)}; }
  friend V operator*(V a, V b) { return {_mm512_mul_ps(a.v, b.v)}; }
  friend V operator/(V a, V b) { return {_mm512_div_ps(a.v, b.v)}; }
  static V fma(V a, V b, V c) { return {_mm512_fmadd_ps(a.v, b.v, c.v)}; }  // a * b + c
  static V max(V a, V b) { return {_mm512_max_ps(a.v, b.v)}; }
  static V max_gt(V a, V b) { return {_mm512_max_ps(a.v, b.v)}; }  // a > b ? a : b (b if NaN)
  static V min_lt(V a, V b) { return {_mm512_min_ps(a.v, b.v)}; }  // a < b ? a : b (b if NaN)
  static V min(V a, V b) { return {_mm512_min_ps(a.v, b.v)}; }
  static V abs(V a) { return {_mm512_abs_ps(a.v)}; }
  static V round(V a) { return {_mm512_roundscale_ps(a.v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)}; }
  // 2^n for integral n in [-126, 127].
  static V pow2i(V n) {
    const __m512i e = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n.v), _mm512_set1_epi32(127)), 23);
    return {_mm512_castsi512_ps(e)};
  }
  // a < b ? x : y
  static V select_lt(V a, V b, V x, V y) {
    return {_mm512_mask_blend_ps(_mm512_cmp_ps_mask(a.v, b.v, _CMP_LT_OQ), y.v, x.v)};
  }
  // x where x is NaN, else r
  static V keep_nan(V x, V r) { return {_mm512_mask_blend_ps(_mm512_cmp_ps_mask(x.v, x.v, _CMP_UNORD_Q), r.v, x.v)}; }
  // |mag| with the sign of s
  static V copysign(V mag, V s) {
    const __m512i m = _mm512_set1_epi32(INT32_MIN);
    const __m512i r = _mm512_or_si512(_mm512_andnot_si512(m, _mm512_castps_si512(mag.v)),
                                      _mm512_and_si512(m, _mm512_castps_si512(s.v)));
    return {_mm512_castsi512_ps(r)};
  }
  static float hsum(V a) { return _mm512_reduce_add_ps(a.v); }
  static float hmax(V a) { return _mm512_reduce_max_ps(a.v); }
};

#elif defined(XONNX_OPT_ISA_AVX2)

struct V {
  static constexpr int kLanes = 8;
  __m256 v;
  static V load(const float* p) { return {_mm256_loadu_ps(p)}; }
  void store(float* p) const { _mm256_storeu_ps(p, v); }
  static V set1(float x) { return {_mm256_set1_ps(x)}; }
  static V zero() { return {_mm256_setzero_ps()}; }
  friend V operator+(V a, V b) { return {_mm256_add_ps(a.v, b.v)}; }
  friend V operator-(V a, V b) { return {_mm256_sub_ps(a.v, b.v)}; }
  friend V operator*(V a, V b) { return {_mm256_mul_ps(a.v, b.v)}; }
  friend V operator/(V a, V b) { return {_mm256_div_ps(a.v, b.v)}; }
  static V fma(V a, V b, V c) { return {_mm256_fmadd_ps(a.v, b.v, c.v)}; }
  static V max(V a, V b) { return {_mm256_max_ps(a.v, b.v)}; }
  static V max_gt(V a, V b) { return {_mm256_max_ps(a.v, b.v)}; }  // a > b ? a : b (b if NaN)
  static V min_lt(V a, V b) { return {_mm256_min_ps(a.v, b.v)}; }  // a < b ? a : b (b if NaN)
  static V min(V a, V b) { return {_mm256_min_ps(a.v, b.v)}; }
  static V abs(V a) { return {_mm256_andnot_ps(_mm256_set1_ps(-0.0f), a.v)}; }
  static V round(V a) { return {_mm256_round_ps(a.v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)}; }
  static V pow2i(V n) {
    const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n.v), _mm256_set1_epi32(127)), 23);
    return {_mm256_castsi256_ps(e)};
  }
  static V select_lt(V a, V b, V x, V y) { return {_mm256_blendv_ps(y.v, x.v, _mm256_cmp_ps(a.v, b.v, _CMP_LT_OQ))}; }
  static V keep_nan(V x, V r) { return {_mm256_blendv_ps(r.v, x.v, _mm256_cmp_ps(x.v, x.v, _CMP_UNORD_Q))}; }
  static V copysign(V mag, V s) {
    const __m256 m = _mm256_set1_ps(-0.0f);
    return {_mm256_or_ps(_mm256_andnot_ps(m, mag.v), _mm256_and_ps(m, s.v))};
  }
  static float hsum(V a) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(a.v), _mm256_extractf128_ps(a.v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
  }
  static float hmax(V a) {
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(a.v), _mm256_extractf128_ps(a.v, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
  }
};

#elif defined(XONNX_OPT_ISA_NEON)

struct V {
  static constexpr int kLanes = 4;
  float32x4_t v;
  static V load(const float* p) { return {vld1q_f32(p)}; }
  void store(float* p) const { vst1q_f32(p, v); }
  static V set1(float x) { return {vdupq_n_f32(x)}; }
  static V zero() { return {vdupq_n_f32(0.0f)}; }
  friend V operator+(V a, V b) { return {vaddq_f32(a.v, b.v)}; }
  friend V operator-(V a, V b) { return {vsubq_f32(a.v, b.v)}; }
  friend V operator*(V a, V b) { return {vmulq_f32(a.v, b.v)}; }
#if defined(__aarch64__)
  friend V operator/(V a, V b) { return {vdivq_f32(a.v, b.v)}; }
  static V fma(V a, V b, V c) { return {vfmaq_f32(c.v, a.v, b.v)}; }
  static V round(V a) { return {vrndnq_f32(a.v)}; }
  static float hsum(V a) { return vaddvq_f32(a.v); }
  static float hmax(V a) { return vmaxvq_f32(a.v); }
#else
  friend V operator/(V a, V b) {  // reciprocal estimate + two Newton steps (armv7 has no vdivq)
    float32x4_t r = vrecpeq_f32(b.v);
    r = vmulq_f32(vrecpsq_f32(b.v, r), r);
    r = vmulq_f32(vrecpsq_f32(b.v, r), r);
    return {vmulq_f32(a.v, r)};
  }
  static V fma(V a, V b, V c) { return {vmlaq_f32(c.v, a.v, b.v)}; }
  static V round(V a) {  // nearest via the 1.5 * 2^23 trick (|a| < 2^22 here)
    const float32x4_t magic = vdupq_n_f32(12582912.0f);
    return {vsubq_f32(vaddq_f32(a.v, magic), magic)};
  }
  static float hsum(V a) {
    float32x2_t s = vadd_f32(vget_low_f32(a.v), vget_high_f32(a.v));
    return vget_lane_f32(vpadd_f32(s, s), 0);
  }
  static float hmax(V a) {
    float32x2_t s = vmax_f32(vget_low_f32(a.v), vget_high_f32(a.v));
    return vget_lane_f32(vpmax_f32(s, s), 0);
  }
#endif
  static V max(V a, V b) { return {vmaxq_f32(a.v, b.v)}; }
  // a > b ? a : b (b if NaN; vmaxq_f32 would return NaN and order -0 below +0)
  static V max_gt(V a, V b) { return {vbslq_f32(vcgtq_f32(a.v, b.v), a.v, b.v)}; }
  static V min_lt(V a, V b) { return {vbslq_f32(vcltq_f32(a.v, b.v), a.v, b.v)}; }  // likewise
  static V min(V a, V b) { return {vminq_f32(a.v, b.v)}; }
  static V abs(V a) { return {vabsq_f32(a.v)}; }
  static V pow2i(V n) {
    const int32x4_t e = vshlq_n_s32(vaddq_s32(vcvtq_s32_f32(n.v), vdupq_n_s32(127)), 23);
    return {vreinterpretq_f32_s32(e)};
  }
  static V select_lt(V a, V b, V x, V y) { return {vbslq_f32(vcltq_f32(a.v, b.v), x.v, y.v)}; }
  static V keep_nan(V x, V r) { return {vbslq_f32(vceqq_f32(x.v, x.v), r.v, x.v)}; }
  static V copysign(V mag, V s) {
    const uint32x4_t m = vdupq_n_u32(0x80000000u);
    return {vbslq_f32(m, s.v, mag.v)};
  }
};

#else  // portable: four lanes in plain C++, which the compiler vectorizes for the baseline ISA

struct V {
  static constexpr int kLanes = 4;
  float v[4];
  static V load(const float* p) {
    V r;
    for (int i = 0; i < 4; ++i) r.v[i] = p[i];
    return r;
  }
  void store(float* p) const {
    for (int i = 0; i < 4; ++i) p[i] = v[i];
  }
  static V set1(float x) { return {{x, x, x, x}}; }
  static V zero() { return set1(0.0f); }
#define XONNX_OPT_LANEWISE(expr)               \
  V r;                                         \
  for (int i = 0; i < 4; ++i) r.v[i] = (expr); \
  return r
  friend V operator+(V a, V b) { XONNX_OPT_LANEWISE(a.v[i] + b.v[i]); }
  friend V operator-(V a, V b) { XONNX_OPT_LANEWISE(a.v[i] - b.v[i]); }
  friend V operator*(V a, V b) { XONNX_OPT_LANEWISE(a.v[i] * b.v[i]); }
  friend V operator/(V a, V b) { XONNX_OPT_LANEWISE(a.v[i] / b.v[i]); }
  static V fma(V a, V b, V c) { XONNX_OPT_LANEWISE(a.v[i] * b.v[i] + c.v[i]); }
  static V max(V a, V b) { XONNX_OPT_LANEWISE(a.v[i] > b.v[i] ? a.v[i] : b.v[i]); }
  static V max_gt(V a, V b) { return max(a, b); }
  static V min_lt(V a, V b) { return min(a, b); }
  static V min(V a, V b) { XONNX_OPT_LANEWISE(a.v[i] < b.v[i] ? a.v[i] : b.v[i]); }
  static V abs(V a) { XONNX_OPT_LANEWISE(std::fabs(a.v[i])); }
  static V round(V a) { XONNX_OPT_LANEWISE(std::nearbyint(a.v[i])); }
  static V pow2i(V n) {
    V r;
    for (int i = 0; i < 4; ++i) {
      const int32_t bits = (static_cast<int32_t>(n.v[i]) + 127) << 23;
      std::memcpy(&r.v[i], &bits, sizeof(float));
    }
    return r;
  }
  static V select_lt(V a, V b, V x, V y) { XONNX_OPT_LANEWISE(a.v[i] < b.v[i] ? x.v[i] : y.v[i]); }
  static V keep_nan(V x, V other) { XONNX_OPT_LANEWISE(std::isnan(x.v[i]) ? x.v[i] : other.v[i]); }
  static V copysign(V mag, V s) { XONNX_OPT_LANEWISE(std::copysign(mag.v[i], s.v[i])); }
#undef XONNX_OPT_LANEWISE
  static float hsum(V a) { return (a.v[0] + a.v[1]) + (a.v[2] + a.v[3]); }
  static float hmax(V a) {
    const float m01 = a.v[0] > a.v[1] ? a.v[0] : a.v[1], m23 = a.v[2] > a.v[3] ? a.v[2] : a.v[3];
    return m01 > m23 ? m01 : m23;
  }
};

#endif

// 1 / d for d >= 1, inf (-> 0) or NaN, within 1 ulp. AVX-512: a reciprocal estimate and a Newton
// step (vdivps issues once per 16 cycles); elsewhere a division.
inline V recip_ge1(V d) {
#if defined(XONNX_OPT_ISA_AVX512)
  const __m512 r = _mm512_rcp14_ps(d.v);
  const __m512 refined = _mm512_fmadd_ps(r, _mm512_fnmadd_ps(d.v, r, _mm512_set1_ps(1.0f)), r);
  return {_mm512_mask_blend_ps(_mm512_cmp_ps_mask(r, _mm512_setzero_ps(), _CMP_EQ_OQ), refined, r)};
#else
  return V::set1(1.0f) / d;
#endif
}

// p * 2^n for integral n in [-126, 128], rounded once. AVX-512: vscalefps; elsewhere in two
// exact steps, since 2^128 is not a float.
inline V scale_pow2(V p, V n) {
#if defined(XONNX_OPT_ISA_AVX512)
  return {_mm512_scalef_ps(p.v, n.v)};
#else
  const V n_lo = V::min(n, V::set1(127.0f));
  return p * V::pow2i(n_lo) * (V::set1(1.0f) + (n - n_lo));
#endif
}

}  // namespace XONNX_OPT_NS
}  // namespace opt
}  // namespace xonnx
