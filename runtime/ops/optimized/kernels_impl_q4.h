// The 4-bit block-quantized weight bodies of the KernelTable (MatMulNBits), part of
// kernels_impl.h: included from there, after V (simd.h), L and lmin, once per ISA.
#pragma once

namespace xonnx {
namespace opt {
namespace XONNX_OPT_NS {

// ---- 4-bit block-quantized weights (MatMulNBits) -----------------------------------------

// 16 values per 8 bytes: kQV vectors of L lanes.
constexpr int kQV = 16 / L;

inline int q4_zero_point(const uint8_t* zp, int64_t blk) { return zp ? (zp[blk >> 1] >> ((blk & 1) * 4)) & 0xF : 8; }

// q[v] = float(nibble - zp) for the 16 values of 8 bytes at p, in element order.
#if defined(XONNX_OPT_ISA_AVX2) || defined(XONNX_OPT_ISA_AVX512)
inline void q4_unpack16(const uint8_t* p, int zp, V q[kQV]) {
  const __m128i mask = _mm_set1_epi8(0x0F);
  const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  const __m128i lo = _mm_and_si128(b, mask), hi = _mm_and_si128(_mm_srli_epi16(b, 4), mask);
  const __m128i x = _mm_sub_epi8(_mm_unpacklo_epi8(lo, hi), _mm_set1_epi8(static_cast<char>(zp)));
#if defined(XONNX_OPT_ISA_AVX512)
  q[0] = {_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(x))};
#else
  q[0] = {_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(x))};
  q[1] = {_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(x, 8)))};
#endif
}
#elif defined(XONNX_OPT_ISA_NEON)
inline void q4_unpack16(const uint8_t* p, int zp, V q[kQV]) {
  const uint8x8_t b = vld1_u8(p);
  const uint8x8x2_t z = vzip_u8(vand_u8(b, vdup_n_u8(0x0F)), vshr_n_u8(b, 4));
  const int8x16_t x =
      vsubq_s8(vreinterpretq_s8_u8(vcombine_u8(z.val[0], z.val[1])), vdupq_n_s8(static_cast<int8_t>(zp)));
  const int16x8_t x0 = vmovl_s8(vget_low_s8(x)), x1 = vmovl_s8(vget_high_s8(x));
  q[0] = {vcvtq_f32_s32(vmovl_s16(vget_low_s16(x0)))};
  q[1] = {vcvtq_f32_s32(vmovl_s16(vget_high_s16(x0)))};
  q[2] = {vcvtq_f32_s32(vmovl_s16(vget_low_s16(x1)))};
  q[3] = {vcvtq_f32_s32(vmovl_s16(vget_high_s16(x1)))};
}
#else
inline void q4_unpack16(const uint8_t* p, int zp, V q[kQV]) {
  float buf[16];
  for (int i = 0; i < 8; ++i) {
    buf[2 * i] = static_cast<float>((p[i] & 0x0F) - zp);
    buf[2 * i + 1] = static_cast<float>((p[i] >> 4) - zp);
  }
  for (int v = 0; v < kQV; ++v) q[v] = V::load(buf + v * L);
}
#endif

inline void q4_dequant_col(const uint8_t* blob, const float* scales, const uint8_t* zp, int64_t blocks, int64_t bs,
                           float* w) {
  V q[kQV];
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const int z = q4_zero_point(zp, blk);
    const V s = V::set1(scales[blk]);
    for (int64_t i = 0; i < bs; i += 16, blob += 8, w += 16) {
      q4_unpack16(blob, z, q);
      for (int v = 0; v < kQV; ++v) (q[v] * s).store(w + v * L);
    }
  }
}

// R rows of A times one quantized column; two accumulator sets (even / odd chunks) per row
// keep the FMA chains short.
template <int R>
void q4_col_rows(const float* a, int64_t lda, const uint8_t* blob, const float* scales, const uint8_t* zp,
                 int64_t blocks, int64_t bs, float* c, int64_t ldc) {
  V acc[R][2 * kQV];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < 2 * kQV; ++v) acc[r][v] = V::zero();
  V q[kQV];
  const float* ak = a;
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const int z = q4_zero_point(zp, blk);
    const V s = V::set1(scales[blk]);
    int64_t i = 0;
    for (; i + 32 <= bs; i += 32, blob += 16, ak += 32) {
      q4_unpack16(blob, z, q);
      for (int v = 0; v < kQV; ++v) {
        const V w = q[v] * s;
        for (int r = 0; r < R; ++r) acc[r][v] = V::fma(w, V::load(ak + r * lda + v * L), acc[r][v]);
      }
      q4_unpack16(blob + 8, z, q);
      for (int v = 0; v < kQV; ++v) {
        const V w = q[v] * s;
        for (int r = 0; r < R; ++r) acc[r][kQV + v] = V::fma(w, V::load(ak + r * lda + 16 + v * L), acc[r][kQV + v]);
      }
    }
    if (i < bs) {  // a 16-value block
      q4_unpack16(blob, z, q);
      for (int v = 0; v < kQV; ++v) {
        const V w = q[v] * s;
        for (int r = 0; r < R; ++r) acc[r][v] = V::fma(w, V::load(ak + r * lda + v * L), acc[r][v]);
      }
      blob += 8;
      ak += 16;
    }
  }
  for (int r = 0; r < R; ++r) {
    V sum = acc[r][0];
    for (int v = 1; v < 2 * kQV; ++v) sum = sum + acc[r][v];
    c[r * ldc] = V::hsum(sum);
  }
}

#if defined(XONNX_OPT_ISA_AVX512)
// Blocks of >= 32 values: 16 codes per 16 bytes zero-extended to 32-bit lanes pick their weight
// from a 16-entry table (q - zp) * scale with one permute (the index's low 4 bits: the low
// nibble; shifted right by 4: the high one). The low nibbles are the even values, so
// q4_pack_a stores each 32 values of A as the 16 even then the 16 odd ones.
constexpr bool kQ4SplitA = true;
template <int R>
void q4_col_rows_lut(const float* a, int64_t lda, const uint8_t* blob, const float* scales, const uint8_t* zp,
                     int64_t blocks, int64_t bs, float* c, int64_t ldc) {
  const __m512 iota = _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  __m512 acc[R][2];
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  const float* ak = a;
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const __m512 lut = _mm512_mul_ps(_mm512_sub_ps(iota, _mm512_set1_ps(static_cast<float>(q4_zero_point(zp, blk)))),
                                     _mm512_set1_ps(scales[blk]));
    for (int64_t i = 0; i < bs; i += 32, blob += 16, ak += 32) {
      const __m512i x = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blob)));
      const __m512 even = _mm512_permutexvar_ps(x, lut);
      const __m512 odd = _mm512_permutexvar_ps(_mm512_srli_epi32(x, 4), lut);
      for (int r = 0; r < R; ++r) {
        acc[r][0] = _mm512_fmadd_ps(even, _mm512_loadu_ps(ak + r * lda), acc[r][0]);
        acc[r][1] = _mm512_fmadd_ps(odd, _mm512_loadu_ps(ak + r * lda + 16), acc[r][1]);
      }
    }
  }
  for (int r = 0; r < R; ++r) c[r * ldc] = _mm512_reduce_add_ps(_mm512_add_ps(acc[r][0], acc[r][1]));
}
#else
constexpr bool kQ4SplitA = false;
#endif

template <int R>
void q4_col(const float* a, int64_t lda, const uint8_t* blob, const float* scales, const uint8_t* zp, int64_t blocks,
            int64_t bs, float* c, int64_t ldc) {
  // A decode step streams the columns from memory one after another (stream_prefetch.h).
  for (int64_t off = 0; off < blocks * bs / 2; off += 64) prefetch_weights_ahead(blob + off);
#if defined(XONNX_OPT_ISA_AVX512)
  if (bs >= 32) return q4_col_rows_lut<R>(a, lda, blob, scales, zp, blocks, bs, c, ldc);
#endif
  q4_col_rows<R>(a, lda, blob, scales, zp, blocks, bs, c, ldc);
}

// M rows of A [.., K] (lda apart) into dst [M, kp] (kp = blocks * bs), zero past K, in the
// order q4_gemm_direct reads.
inline void q4_pack_a(int64_t M, const float* a, int64_t lda, int64_t K, int64_t kp, int64_t bs, float* dst) {
  for (int64_t m = 0; m < M; ++m) {
    const float* am = a + m * lda;
    float* dm = dst + m * kp;
    if (!kQ4SplitA || bs < 32) {
      std::memcpy(dm, am, static_cast<size_t>(K) * sizeof(float));
      std::memset(dm + K, 0, static_cast<size_t>(kp - K) * sizeof(float));
      continue;
    }
    for (int64_t g = 0; g < kp; g += 32)
      for (int64_t i = 0; i < 16; ++i) {
        dm[g + i] = g + 2 * i < K ? am[g + 2 * i] : 0.0f;
        dm[g + 16 + i] = g + 2 * i + 1 < K ? am[g + 2 * i + 1] : 0.0f;
      }
  }
}

inline void q4_gemm_direct(int64_t M, const float* a, int64_t lda, const uint8_t* b, const float* scales,
                           const uint8_t* zp, int64_t zp_row, int64_t blocks, int64_t bs, int64_t ncols, float* c,
                           int64_t ldc) {
  const int64_t col_bytes = blocks * bs / 2;
  for (int64_t j = 0; j < ncols; ++j) {
    const uint8_t* bj = b + j * col_bytes;
    const float* sj = scales + j * blocks;
    const uint8_t* zj = zp ? zp + j * zp_row : nullptr;
    int64_t m = 0;
    for (; m + 4 <= M; m += 4) q4_col<4>(a + m * lda, lda, bj, sj, zj, blocks, bs, c + m * ldc + j, ldc);
    switch (M - m) {
      case 3: q4_col<3>(a + m * lda, lda, bj, sj, zj, blocks, bs, c + m * ldc + j, ldc); break;
      case 2: q4_col<2>(a + m * lda, lda, bj, sj, zj, blocks, bs, c + m * ldc + j, ldc); break;
      case 1: q4_col<1>(a + m * lda, lda, bj, sj, zj, blocks, bs, c + m * ldc + j, ldc); break;
      default: break;
    }
  }
}

}  // namespace XONNX_OPT_NS
}  // namespace opt
}  // namespace xonnx
