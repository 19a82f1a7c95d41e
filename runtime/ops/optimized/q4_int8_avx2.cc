// The AVX2 kernel of the int8 MatMulNBits path (q4_int8.h), for CPUs without AVX512-VNNI. The
// weight layout is the VNNI kernel's: a group of 16 columns is two 8-lane halves, and vpdpbusd
// becomes vpmaddubsw (nibble x code pairs into int16) + vpmaddwd (pairs into int32 lanes). The
// int16 pair sums of one block (<= 2 * 15 * 127 per step, 8 steps for bs 32 ... kept within
// int16 by widening every 8 steps) are widened once per block. Compiled with -mavx2 -mfma on
// x86-64 only; used only when the CPU has AVX2.
#include "runtime/ops/optimized/q4_int8.h"
#include "runtime/ops/optimized/q4_int8_panel.h"
#include "runtime/ops/optimized/stream_prefetch.h"

#if defined(__x86_64__) && defined(__AVX2__)
#include <immintrin.h>

#include <cstring>

namespace xonnx {
namespace opt {
namespace {

constexpr int kMaxRows = 4;  // rows of A per pass over a group's weights
// int16 partial sums stay below 2^15: a step adds at most 2 * 15 * 127 = 3810 per lane (low
// and high nibbles go to separate sums), so at most 8 steps before widening.
constexpr int kStepsPerWiden = 8;

inline __m256i broadcast4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

template <int R>
void group_rows(const Q4Int8A& a, int64_t r0, const Q4Int8Weights& w, int64_t g, float* c, int64_t ldc) {
  const int64_t blocks = w.blocks, bs = w.bs, kp = blocks * bs;
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  const __m256i ones16 = _mm256_set1_epi16(1);
  const uint8_t* rows = w.packed.data() + g * blocks * bs * 8;  // 16 columns x bs / 2 bytes per block
  const float* ws = w.scales.data() + g * blocks * kQ4Int8Cols;
  const uint8_t* wz = w.zero_points.data() + g * blocks * kQ4Int8Cols;
  const int8_t* codes[R];
  const float* as[R];
  const int32_t* asum[R];
  for (int r = 0; r < R; ++r) {
    codes[r] = a.codes.data() + (r0 + r) * kp;
    as[r] = a.scales.data() + (r0 + r) * blocks;
    asum[r] = a.sums.data() + (r0 + r) * blocks;
  }
  __m256 acc[R][2];
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
  for (int64_t blk = 0; blk < blocks; ++blk) {
    __m256i dot[R][2];
    for (int r = 0; r < R; ++r) dot[r][0] = dot[r][1] = _mm256_setzero_si256();
    const int64_t k0 = blk * bs;
    for (int64_t kc = k0; kc < k0 + bs; kc += 8 * kStepsPerWiden) {
      __m256i s16[R][2][2];  // [row][half][low / high nibbles]
      for (int r = 0; r < R; ++r)
        for (int h = 0; h < 2; ++h) s16[r][h][0] = s16[r][h][1] = _mm256_setzero_si256();
      const int64_t k_end = kc + 8 * kStepsPerWiden < k0 + bs ? kc + 8 * kStepsPerWiden : k0 + bs;
      for (int64_t k = kc; k < k_end; k += 8, rows += 64) {
        prefetch_weights_ahead(rows);  // a decode step streams the weights (stream_prefetch.h)
        for (int h = 0; h < 2; ++h) {
          const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows + 32 * h));
          const __m256i lo = _mm256_and_si256(x, low4);
          const __m256i hi = _mm256_and_si256(_mm256_srli_epi32(x, 4), low4);
          for (int r = 0; r < R; ++r) {
            s16[r][h][0] = _mm256_add_epi16(s16[r][h][0], _mm256_maddubs_epi16(lo, broadcast4(codes[r] + k)));
            s16[r][h][1] = _mm256_add_epi16(s16[r][h][1], _mm256_maddubs_epi16(hi, broadcast4(codes[r] + k + 4)));
          }
        }
      }
      for (int r = 0; r < R; ++r)
        for (int h = 0; h < 2; ++h) {
          dot[r][h] = _mm256_add_epi32(dot[r][h], _mm256_madd_epi16(s16[r][h][0], ones16));
          dot[r][h] = _mm256_add_epi32(dot[r][h], _mm256_madd_epi16(s16[r][h][1], ones16));
        }
    }
    for (int h = 0; h < 2; ++h) {
      const __m256i zp =
          _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(wz + blk * kQ4Int8Cols + 8 * h)));
      const __m256 scale = _mm256_loadu_ps(ws + blk * kQ4Int8Cols + 8 * h);
      for (int r = 0; r < R; ++r) {
        // sum q * (w - zp) = sum q * w - zp * sum q
        const __m256i d = _mm256_sub_epi32(dot[r][h], _mm256_mullo_epi32(zp, _mm256_set1_epi32(asum[r][blk])));
        const __m256 s = _mm256_mul_ps(scale, _mm256_set1_ps(as[r][blk]));
        acc[r][h] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(d), s, acc[r][h]);
      }
    }
  }
  const int64_t col = g * kQ4Int8Cols, valid = w.n - col < kQ4Int8Cols ? w.n - col : kQ4Int8Cols;
  for (int r = 0; r < R; ++r) {
    float* dst = c + (r0 + r) * ldc + col;
    if (valid == kQ4Int8Cols) {
      _mm256_storeu_ps(dst, acc[r][0]);
      _mm256_storeu_ps(dst + 8, acc[r][1]);
    } else {
      alignas(32) float tmp[kQ4Int8Cols];
      _mm256_store_ps(tmp, acc[r][0]);
      _mm256_store_ps(tmp + 8, acc[r][1]);
      std::memcpy(dst, tmp, static_cast<size_t>(valid) * sizeof(float));
    }
  }
}

void q4_int8_avx2_kernel(const Q4Int8A& a, const Q4Int8Weights& w, int64_t group_begin, int64_t group_end, float* c,
                         int64_t ldc) {
  for (int64_t g = group_begin; g < group_end; ++g) {
    int64_t r = 0;
    for (; r + kMaxRows <= a.m; r += kMaxRows) group_rows<kMaxRows>(a, r, w, g, c, ldc);
    switch (a.m - r) {
      case 3: group_rows<3>(a, r, w, g, c, ldc); break;
      case 2: group_rows<2>(a, r, w, g, c, ldc); break;
      case 1: group_rows<1>(a, r, w, g, c, ldc); break;
      default: break;
    }
  }
}

void q4_int8_panel_avx2_kernel(const Q4Int8Weights& w, int64_t j0, int64_t nc, int64_t width, int64_t K, float* out) {
  q4_int8_panel_body(w, j0, nc, width, K, out);
}

}  // namespace

Q4Int8Fn q4_int8_avx2() { return q4_int8_avx2_kernel; }
Q4Int8PanelFn q4_int8_panel_avx2() { return q4_int8_panel_avx2_kernel; }

}  // namespace opt
}  // namespace xonnx

#else

namespace xonnx {
namespace opt {
Q4Int8Fn q4_int8_avx2() { return nullptr; }
Q4Int8PanelFn q4_int8_panel_avx2() { return nullptr; }
}  // namespace opt
}  // namespace xonnx

#endif
