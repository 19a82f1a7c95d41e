// The AVX-512 Winograd transforms (fwinograd.h): 16 channels per step, the same additions in
// the same order as the scalar twins. Compiled with AVX-512 flags on x86-64 only; used only
// when cpuinfo reports it.
#include "runtime/ops/optimized/fwinograd.h"

#if defined(__x86_64__) && defined(__AVX512F__)
// GCC 12 warns about the undefined-value idiom inside its own AVX512 headers.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

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

}  // namespace

WinoInputFn wino_input_avx512() { return input_avx512; }
WinoOutputFn wino_output_avx512() { return output_avx512; }

}  // namespace opt
}  // namespace xonnx

#else

namespace xonnx {
namespace opt {
WinoInputFn wino_input_avx512() { return nullptr; }
WinoOutputFn wino_output_avx512() { return nullptr; }
}  // namespace opt
}  // namespace xonnx

#endif
