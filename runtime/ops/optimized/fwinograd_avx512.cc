// The AVX-512 Winograd transforms (fwinograd.h): 16 channels per step, the same additions in
// the same order as the scalar twins (F(4x4): the same templates, fwinograd4_math.h); and the
// weight transform, fwinograd_pack.h compiled with these flags. Compiled with AVX-512 flags on
// x86-64 only; used only when cpuinfo reports it.
#include "runtime/ops/optimized/fwinograd.h"

#if defined(__x86_64__) && defined(__AVX512F__)
// GCC 12 warns about the undefined-value idiom inside its own AVX512 headers.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include "runtime/ops/optimized/fwinograd4_math.h"
#include "runtime/ops/optimized/fwinograd_pack.h"

namespace xonnx {
namespace opt {
namespace {

// max/min return their second operand on NaN: NaN passes through the clamp.
inline __m512 clamp(__m512 v, __m512 lo, __m512 hi) { return _mm512_min_ps(hi, _mm512_max_ps(lo, v)); }

inline __mmask16 lanes(int64_t n) { return n >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << n) - 1u); }

bool input_avx512(const float* const* patch, int64_t c, float* v, int64_t ldv) {
  __m512i nonfinite = _mm512_setzero_si512();  // OR of x - x: zero bits unless inf or NaN met
  for (int64_t ci = 0; ci < c; ci += 16) {
    const __mmask16 k = lanes(c - ci);
    __m512 t[4][4];
    for (int j = 0; j < 4; ++j) {
      const __m512 d0 = _mm512_maskz_loadu_ps(k, patch[j] + ci), d1 = _mm512_maskz_loadu_ps(k, patch[4 + j] + ci);
      const __m512 d2 = _mm512_maskz_loadu_ps(k, patch[8 + j] + ci), d3 = _mm512_maskz_loadu_ps(k, patch[12 + j] + ci);
      t[0][j] = _mm512_sub_ps(d0, d2);
      t[1][j] = _mm512_add_ps(d1, d2);
      t[2][j] = _mm512_sub_ps(d2, d1);
      t[3][j] = _mm512_sub_ps(d1, d3);
    }
    for (int i = 0; i < 4; ++i) {
      const __m512 r[4] = {_mm512_sub_ps(t[i][0], t[i][2]), _mm512_add_ps(t[i][1], t[i][2]),
                           _mm512_sub_ps(t[i][2], t[i][1]), _mm512_sub_ps(t[i][1], t[i][3])};
      for (int j = 0; j < 4; ++j) _mm512_mask_storeu_ps(v + (i * 4 + j) * ldv + ci, k, r[j]);
      nonfinite = _mm512_ternarylogic_epi32(nonfinite, _mm512_castps_si512(_mm512_sub_ps(r[0], r[0])),
                                            _mm512_castps_si512(_mm512_sub_ps(r[1], r[1])), 0xFE);
      nonfinite = _mm512_ternarylogic_epi32(nonfinite, _mm512_castps_si512(_mm512_sub_ps(r[2], r[2])),
                                            _mm512_castps_si512(_mm512_sub_ps(r[3], r[3])), 0xFE);
    }
  }
  return _mm512_test_epi32_mask(nonfinite, nonfinite) == 0;
}

void output_avx512(const float* m, int64_t ldm, int64_t cols, const float* bias, float lo, float hi, float* const* out,
                   const float* const* z) {
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  for (int64_t j = 0; j < cols; j += 16) {
    const __mmask16 k = lanes(cols - j);
    __m512 s[4][2];
    for (int i = 0; i < 4; ++i) {
      const __m512 m0 = _mm512_maskz_loadu_ps(k, m + (i * 4) * ldm + j),
                   m1 = _mm512_maskz_loadu_ps(k, m + (i * 4 + 1) * ldm + j);
      const __m512 m2 = _mm512_maskz_loadu_ps(k, m + (i * 4 + 2) * ldm + j),
                   m3 = _mm512_maskz_loadu_ps(k, m + (i * 4 + 3) * ldm + j);
      s[i][0] = _mm512_add_ps(_mm512_add_ps(m0, m1), m2);
      s[i][1] = _mm512_sub_ps(_mm512_sub_ps(m1, m2), m3);
    }
    const __m512 b = _mm512_maskz_loadu_ps(k, bias + j);
    for (int kx = 0; kx < 2; ++kx) {
      __m512 y0 = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(s[0][kx], s[1][kx]), s[2][kx]), b);
      __m512 y1 = _mm512_add_ps(_mm512_sub_ps(_mm512_sub_ps(s[1][kx], s[2][kx]), s[3][kx]), b);
      if (z) {  // the residual rows of the pixels inside the image
        if (out[kx]) y0 = _mm512_add_ps(y0, _mm512_maskz_loadu_ps(k, z[kx] + j));
        if (out[2 + kx]) y1 = _mm512_add_ps(y1, _mm512_maskz_loadu_ps(k, z[2 + kx] + j));
      }
      if (out[kx]) _mm512_mask_storeu_ps(out[kx] + j, k, clamp(y0, vlo, vhi));
      if (out[2 + kx]) _mm512_mask_storeu_ps(out[2 + kx] + j, k, clamp(y1, vlo, vhi));
    }
  }
}

// 16 lanes as a value for fwinograd4_math.h's templates.
struct Z {
  __m512 v;
  Z() = default;
  explicit Z(float f) : v(_mm512_set1_ps(f)) {}
  Z(__m512 x) : v(x) {}  // NOLINT: implicit, from the loads
};
inline Z operator+(Z a, Z b) { return _mm512_add_ps(a.v, b.v); }
inline Z operator-(Z a, Z b) { return _mm512_sub_ps(a.v, b.v); }
inline Z operator*(Z a, Z b) { return _mm512_mul_ps(a.v, b.v); }

bool input4_avx512(const float* const* patch, int64_t c, float* v, int64_t ldv) {
  __m512i nonfinite = _mm512_setzero_si512();  // OR of x - x: zero bits unless inf or NaN met
  for (int64_t ci = 0; ci < c; ci += 16) {
    const __mmask16 k = lanes(c - ci);
    Z t[6][6];  // B^T d
    for (int j = 0; j < 6; ++j) {
      Z d[6], r[6];
      for (int i = 0; i < 6; ++i) d[i] = _mm512_maskz_loadu_ps(k, patch[i * 6 + j] + ci);
      wino4_b(d, r);
      for (int i = 0; i < 6; ++i) t[i][j] = r[i];
    }
    for (int i = 0; i < 6; ++i) {  // (B^T d) B
      Z r[6];
      wino4_b(t[i], r);
      for (int j = 0; j < 6; ++j) {
        _mm512_mask_storeu_ps(v + (i * 6 + j) * ldv + ci, k, r[j].v);
        nonfinite = _mm512_or_si512(nonfinite, _mm512_castps_si512(_mm512_sub_ps(r[j].v, r[j].v)));
      }
    }
  }
  return _mm512_test_epi32_mask(nonfinite, nonfinite) == 0;
}

void output4_avx512(const float* m, int64_t ldm, int64_t cols, const float* bias, float lo, float hi, float* const* out,
                    const float* const* z) {
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  for (int64_t j = 0; j < cols; j += 16) {
    const __mmask16 k = lanes(cols - j);
    Z s[6][4];  // M A
    for (int i = 0; i < 6; ++i) {
      Z row[6];
      for (int q = 0; q < 6; ++q) row[q] = _mm512_maskz_loadu_ps(k, m + (i * 6 + q) * ldm + j);
      wino4_a(row, s[i]);
    }
    const Z b = _mm512_maskz_loadu_ps(k, bias + j);
    for (int kx = 0; kx < 4; ++kx) {  // A^T (M A), column kx
      Z col[6], y[4];
      for (int i = 0; i < 6; ++i) col[i] = s[i][kx];
      wino4_a(col, y);
      for (int ky = 0; ky < 4; ++ky) {
        float* const o = out[ky * 4 + kx];
        if (!o) continue;
        Z val = y[ky] + b;
        if (z) val = val + Z(_mm512_maskz_loadu_ps(k, z[ky * 4 + kx] + j));
        _mm512_mask_storeu_ps(o + j, k, clamp(val.v, vlo, vhi));
      }
    }
  }
}

}  // namespace

WinoInputFn wino_input_avx512() { return input_avx512; }
WinoOutputFn wino_output_avx512() { return output_avx512; }
WinoInputFn wino4_input_avx512() { return input4_avx512; }
WinoOutputFn wino4_output_avx512() { return output4_avx512; }
WinoPackFn wino_pack_avx512() { return pack_winograd_panel_for; }

}  // namespace opt
}  // namespace xonnx

#else

namespace xonnx {
namespace opt {
WinoInputFn wino_input_avx512() { return nullptr; }
WinoOutputFn wino_output_avx512() { return nullptr; }
WinoInputFn wino4_input_avx512() { return nullptr; }
WinoOutputFn wino4_output_avx512() { return nullptr; }
WinoPackFn wino_pack_avx512() { return nullptr; }
}  // namespace opt
}  // namespace xonnx

#endif
