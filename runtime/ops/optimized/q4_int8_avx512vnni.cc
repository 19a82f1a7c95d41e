// The AVX512-VNNI kernel of the int8 MatMulNBits path (q4_int8.h). Compiled with -mavx512vnni on
// x86-64 only; used only when cpuinfo reports the extension. One group of 16 columns at a time,
// one 32-bit lane per column, so a block ends with vector arithmetic and no horizontal sum: per
// 8 values of depth one 64-byte load of packed nibbles, masked into the low (values k..k+3) and
// high (k+4..k+7) halves, each multiplied by 4 broadcast codes of A with one vpdpbusd per row.
#include "runtime/ops/optimized/q4_int8.h"
#include "runtime/ops/optimized/q4_int8_panel.h"
#include "runtime/ops/optimized/stream_prefetch.h"

#if defined(__x86_64__) && defined(__AVX512VNNI__)
// GCC 12 warns about the undefined-value idiom inside its own AVX512 headers.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include <cstring>

namespace xonnx {
namespace opt {
namespace {

constexpr int kMaxRows = 4;  // rows of A per pass over a group's weights

inline __m512i broadcast4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

// Rows [0, R) of `a` (from row r0) times group g.
template <int R>
void group_rows(const Q4Int8A& a, int64_t r0, const Q4Int8Weights& w, int64_t g, float* c, int64_t ldc) {
  const int64_t blocks = w.blocks, bs = w.bs, kp = blocks * bs;
  const __m512i low4 = _mm512_set1_epi8(0x0F);
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
  __m512 acc[R];
  for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
  for (int64_t blk = 0; blk < blocks; ++blk) {
    __m512i lo_dot[R], hi_dot[R];
    for (int r = 0; r < R; ++r) lo_dot[r] = hi_dot[r] = _mm512_setzero_si512();
    const int64_t k0 = blk * bs;
    for (int64_t k = k0; k < k0 + bs; k += 8, rows += 64) {
      prefetch_weights_ahead(rows);  // a decode step streams the weights (stream_prefetch.h)
      const __m512i x = _mm512_loadu_si512(rows);
      const __m512i lo = _mm512_and_si512(x, low4);
      const __m512i hi = _mm512_and_si512(_mm512_srli_epi32(x, 4), low4);
      for (int r = 0; r < R; ++r) {
        lo_dot[r] = _mm512_dpbusd_epi32(lo_dot[r], lo, broadcast4(codes[r] + k));
        hi_dot[r] = _mm512_dpbusd_epi32(hi_dot[r], hi, broadcast4(codes[r] + k + 4));
      }
    }
    const __m512i zp = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(wz + blk * kQ4Int8Cols)));
    const __m512 scale = _mm512_loadu_ps(ws + blk * kQ4Int8Cols);
    for (int r = 0; r < R; ++r) {
      // sum q * (w - zp) = sum q * w - zp * sum q
      const __m512i dot = _mm512_sub_epi32(_mm512_add_epi32(lo_dot[r], hi_dot[r]),
                                           _mm512_mullo_epi32(zp, _mm512_set1_epi32(asum[r][blk])));
      const __m512 s = _mm512_mul_ps(scale, _mm512_set1_ps(as[r][blk]));
      acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), s, acc[r]);
    }
  }
  const int64_t col = g * kQ4Int8Cols, valid = w.n - col < kQ4Int8Cols ? w.n - col : kQ4Int8Cols;
  const __mmask16 mask = static_cast<__mmask16>((1u << valid) - 1u);
  for (int r = 0; r < R; ++r) _mm512_mask_storeu_ps(c + (r0 + r) * ldc + col, mask, acc[r]);
}

void q4_int8_vnni(const Q4Int8A& a, const Q4Int8Weights& w, int64_t group_begin, int64_t group_end, float* c,
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

void q4_int8_panel_avx512(const Q4Int8Weights& w, int64_t j0, int64_t nc, int64_t width, int64_t K, float* out) {
  q4_int8_panel_body(w, j0, nc, width, K, out);
}

}  // namespace

Q4Int8Fn q4_int8_avx512vnni() { return q4_int8_vnni; }
Q4Int8PanelFn q4_int8_panel_avx512vnni() { return q4_int8_panel_avx512; }

}  // namespace opt
}  // namespace xonnx

#else

namespace xonnx {
namespace opt {
Q4Int8Fn q4_int8_avx512vnni() { return nullptr; }
Q4Int8PanelFn q4_int8_panel_avx512vnni() { return nullptr; }
}  // namespace opt
}  // namespace xonnx

#endif
