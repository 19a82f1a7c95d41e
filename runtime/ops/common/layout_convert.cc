#include "runtime/ops/common/layout_convert.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#if defined(__SSE__) || defined(_M_X64)
#include <xmmintrin.h>
#define XONNX_LAYOUT_SSE 1
#elif defined(__ARM_NEON)
#include <arm_neon.h>
#endif

namespace xonnx {

namespace {

// Few rows (an int8 image's 3 channels): one pass writing whole pixels, A a constant.
template <size_t A>
void interleave_rows(const char* src, char* dst, size_t b) {
  for (size_t y = 0; y < b; ++y)
    for (size_t x = 0; x < A; ++x) dst[y * A + x] = src[x * b + y];
}

// The 8 x 8 bytes at s (rows ls apart) transposed to d (rows ld apart): each row one 64-bit
// word (byte j = column j, little-endian), then 4 x 4, 2 x 2 and 1 x 1 blocks swapped between
// words (about 3x the speed of a byte loop, which the compiler does not vectorize).
inline void transpose_8x8_bytes(const char* s, size_t ls, char* d, size_t ld) {
  uint64_t r[8];
  for (size_t i = 0; i < 8; ++i) std::memcpy(&r[i], s + i * ls, 8);
  constexpr uint64_t kLow32 = 0x00000000FFFFFFFFull, kLow16 = 0x0000FFFF0000FFFFull, kLow8 = 0x00FF00FF00FF00FFull;
  for (size_t i = 0; i < 4; ++i) {
    const uint64_t x = r[i], y = r[i + 4];
    r[i] = (x & kLow32) | (y << 32);
    r[i + 4] = (x >> 32) | (y & ~kLow32);
  }
  for (const size_t i : {size_t{0}, size_t{1}, size_t{4}, size_t{5}}) {
    const uint64_t x = r[i], y = r[i + 2];
    r[i] = (x & kLow16) | ((y << 16) & ~kLow16);
    r[i + 2] = ((x >> 16) & kLow16) | (y & ~kLow16);
  }
  for (size_t i = 0; i < 8; i += 2) {
    const uint64_t x = r[i], y = r[i + 1];
    r[i] = (x & kLow8) | ((y << 8) & ~kLow8);
    r[i + 1] = ((x >> 8) & kLow8) | (y & ~kLow8);
  }
  for (size_t i = 0; i < 8; ++i) std::memcpy(d + i * ld, &r[i], 8);
}

// dst[c * dst_ld + r] = src[r * src_ld + c] for r < rows, c < cols, bytes.
void transpose_tile_bytes(const char* src, size_t src_ld, char* dst, size_t dst_ld, size_t rows, size_t cols) {
  size_t r = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  for (; r + 8 <= rows; r += 8) {
    size_t c = 0;
    for (; c + 8 <= cols; c += 8) transpose_8x8_bytes(src + r * src_ld + c, src_ld, dst + c * dst_ld + r, dst_ld);
    for (; c < cols; ++c)
      for (size_t k = r; k < r + 8; ++k) dst[c * dst_ld + k] = src[k * src_ld + c];
  }
#endif
  for (; r < rows; ++r)
    for (size_t c = 0; c < cols; ++c) dst[c * dst_ld + r] = src[r * src_ld + c];
}

// [n][a][b] -> [n][b][a] for elements of `es` bytes; 8-bit elements (int8 models) in tiles split
// over the pool as the float transposes are.
void transpose_bytes(const char* src, char* dst, size_t n, size_t a, size_t b, size_t es, const ThreadPool& pool) {
  if (es == 1 && (a == 3 || a == 4)) {
    for (size_t i = 0; i < n; ++i) {
      if (a == 3) interleave_rows<3>(src + i * a * b, dst + i * a * b, b);
      if (a == 4) interleave_rows<4>(src + i * a * b, dst + i * a * b, b);
    }
    return;
  }
  if (es == 1) {
    // Tiles of 8 rows along the longer stride and 256 along the other: rows 64 KB apart (the
    // 256 x 256 maps of a U-Net) share one L1 set, and 32 of them evicted each other.
    const bool dst_strided = a > b;
    const size_t tx = dst_strided ? 256 : 8, ty = dst_strided ? 8 : 256;
    const size_t at = (a + tx - 1) / tx, bt = (b + ty - 1) / ty, tiles = n * at * bt;
    // Below ~1 MB a transpose is cheaper than waking the workers.
    const size_t min_chunk = n * a * b < (size_t{1} << 20) ? std::max<size_t>(tiles, 1) : 4;
    pool.parallel_for(tiles, min_chunk, [&](size_t begin, size_t end) {
      for (size_t t = begin; t < end; ++t) {
        const size_t i = t / (at * bt), rem = t % (at * bt);
        const size_t x0 = (rem / bt) * tx, y0 = (rem % bt) * ty;
        transpose_tile_bytes(src + i * a * b + x0 * b + y0, b, dst + i * a * b + y0 * a + x0, a, std::min(tx, a - x0),
                             std::min(ty, b - y0));
      }
    });
    return;
  }
  for (size_t i = 0; i < n; ++i) {
    const char* s = src + i * a * b * es;
    char* d = dst + i * a * b * es;
    for (size_t x = 0; x < a; ++x) {
      for (size_t y = 0; y < b; ++y) std::memcpy(d + (y * a + x) * es, s + (x * b + y) * es, es);
    }
  }
}

// dst[c * dst_ld + r] = src[r * src_ld + c] for r < rows, c < cols.
void transpose_tile(const float* src, size_t src_ld, float* dst, size_t dst_ld, size_t rows, size_t cols) {
  size_t r = 0;
#ifdef XONNX_LAYOUT_SSE
  for (; r + 4 <= rows; r += 4) {
    size_t c = 0;
    for (; c + 4 <= cols; c += 4) {
      __m128 a = _mm_loadu_ps(src + (r + 0) * src_ld + c);
      __m128 b = _mm_loadu_ps(src + (r + 1) * src_ld + c);
      __m128 d = _mm_loadu_ps(src + (r + 2) * src_ld + c);
      __m128 e = _mm_loadu_ps(src + (r + 3) * src_ld + c);
      _MM_TRANSPOSE4_PS(a, b, d, e);
      _mm_storeu_ps(dst + (c + 0) * dst_ld + r, a);
      _mm_storeu_ps(dst + (c + 1) * dst_ld + r, b);
      _mm_storeu_ps(dst + (c + 2) * dst_ld + r, d);
      _mm_storeu_ps(dst + (c + 3) * dst_ld + r, e);
    }
    for (; c < cols; ++c) {
      for (size_t i = 0; i < 4; ++i) dst[c * dst_ld + r + i] = src[(r + i) * src_ld + c];
    }
  }
#endif
  for (; r < rows; ++r) {
    for (size_t c = 0; c < cols; ++c) dst[c * dst_ld + r] = src[r * src_ld + c];
  }
}

// Transposes `batches` matrices [rows][cols] (src row stride src_ld, batch stride src_bs)
// into [cols][rows] (dst row stride dst_ld, batch stride dst_bs), in 32x32 tiles.
void transpose_batched(const float* src, size_t src_ld, size_t src_bs, float* dst, size_t dst_ld, size_t dst_bs,
                       size_t batches, size_t rows, size_t cols, const ThreadPool& pool) {
  constexpr size_t kTile = 32;
  const size_t rt = (rows + kTile - 1) / kTile, ct = (cols + kTile - 1) / kTile;
  const size_t tiles = batches * rt * ct;
  if (tiles == 0) return;
  // Below ~1 MB a transpose is cheaper than waking the workers.
  const size_t total = batches * rows * cols;
  const size_t min_chunk = total < (size_t{1} << 18) ? tiles : 8;
  pool.parallel_for(tiles, min_chunk, [&](size_t begin, size_t end) {
    for (size_t t = begin; t < end; ++t) {
      const size_t b = t / (rt * ct), rem = t % (rt * ct);
      const size_t r0 = (rem / ct) * kTile, c0 = (rem % ct) * kTile;
      transpose_tile(src + b * src_bs + r0 * src_ld + c0, src_ld, dst + b * dst_bs + c0 * dst_ld + r0, dst_ld,
                     std::min(kTile, rows - r0), std::min(kTile, cols - c0));
    }
  });
}

// Four pixels of C = 3 or 4 planes into [4][C] at dst (a 32x32 tile has only C rows here).
template <size_t C>
inline size_t interleave_four(const float* src, size_t hw, float* dst, size_t p0, size_t p1) {
  size_t p = p0;
#if defined(XONNX_LAYOUT_SSE)
  for (; p + 4 <= p1; p += 4) {
    const __m128 r = _mm_loadu_ps(src + p), g = _mm_loadu_ps(src + hw + p), b = _mm_loadu_ps(src + 2 * hw + p);
    float* d = dst + p * C;
    if (C == 3) {  // r0 g0 b0 r1 | g1 b1 r2 g2 | b2 r3 g3 b3
      const __m128 rg_lo = _mm_unpacklo_ps(r, g), rg_hi = _mm_unpackhi_ps(r, g);
      const __m128 br_lo = _mm_unpacklo_ps(b, r), br_hi = _mm_unpackhi_ps(b, r);
      const __m128 gb_lo = _mm_unpacklo_ps(g, b), gb_hi = _mm_unpackhi_ps(g, b);
      _mm_storeu_ps(d, _mm_shuffle_ps(rg_lo, br_lo, _MM_SHUFFLE(3, 0, 1, 0)));
      _mm_storeu_ps(d + 4, _mm_shuffle_ps(gb_lo, rg_hi, _MM_SHUFFLE(1, 0, 3, 2)));
      _mm_storeu_ps(d + 8, _mm_shuffle_ps(br_hi, gb_hi, _MM_SHUFFLE(3, 2, 3, 0)));
    } else {
      __m128 r4 = r, g4 = g, b4 = b, a4 = _mm_loadu_ps(src + 3 * hw + p);
      _MM_TRANSPOSE4_PS(r4, g4, b4, a4);
      _mm_storeu_ps(d, r4);
      _mm_storeu_ps(d + 4, g4);
      _mm_storeu_ps(d + 8, b4);
      _mm_storeu_ps(d + 12, a4);
    }
  }
#elif defined(__ARM_NEON)
  for (; p + 4 <= p1; p += 4) {
    if (C == 3) {
      float32x4x3_t v{{vld1q_f32(src + p), vld1q_f32(src + hw + p), vld1q_f32(src + 2 * hw + p)}};
      vst3q_f32(dst + p * C, v);
    } else {
      float32x4x4_t v{
          {vld1q_f32(src + p), vld1q_f32(src + hw + p), vld1q_f32(src + 2 * hw + p), vld1q_f32(src + 3 * hw + p)}};
      vst4q_f32(dst + p * C, v);
    }
  }
#endif
  return p;
}

// An image's few planes ([C][hw], C a constant) into pixels [hw][C], pixels p0..p1: one pass,
// four whole pixels at a time (the scalar loop ran a model's RGB input at 0.5 ns per value).
template <size_t C>
void interleave_planes(const float* src, size_t hw, float* dst, size_t p0, size_t p1) {
  for (size_t p = interleave_four<C>(src, hw, dst, p0, p1); p < p1; ++p)
    for (size_t c = 0; c < C; ++c) dst[p * C + c] = src[c * hw + p];
}

template <size_t C>
void interleave_images(const float* src, float* dst, size_t n, size_t hw, const ThreadPool& pool) {
  // Split even a 224 x 224 image (0.02 ms): as a run's first parallel region, this is where
  // the sleeping workers wake up, while the caller already copies (work stealing), instead of
  // at the stem convolution after it.
  constexpr size_t kPixelsPerChunk = 8192;
  const size_t chunks_per_image = (hw + kPixelsPerChunk - 1) / kPixelsPerChunk;
  pool.parallel_for(n * chunks_per_image, 1, [&](size_t begin, size_t end) {
    for (size_t t = begin; t < end; ++t) {
      const size_t b = t / chunks_per_image, p0 = (t % chunks_per_image) * kPixelsPerChunk;
      interleave_planes<C>(src + b * C * hw, hw, dst + b * C * hw, p0, std::min(hw, p0 + kPixelsPerChunk));
    }
  });
}

}  // namespace

void interleave_pixels(const float* src, size_t plane_stride, size_t c, size_t count, float* dst) {
  if (c == 3) return interleave_planes<3>(src, plane_stride, dst, 0, count);
  if (c == 4) return interleave_planes<4>(src, plane_stride, dst, 0, count);
  for (size_t p = 0; p < count; ++p)
    for (size_t k = 0; k < c; ++k) dst[p * c + k] = src[k * plane_stride + p];
}

void nchw_to_nhwc(const float* src, float* dst, size_t n, size_t c, size_t hw, const ThreadPool& pool) {
  if (c == 1 || hw == 1) {
    std::memcpy(dst, src, n * c * hw * sizeof(float));
    return;
  }
  if (c == 3) return interleave_images<3>(src, dst, n, hw, pool);  // RGB model inputs
  if (c == 4) return interleave_images<4>(src, dst, n, hw, pool);
  transpose_batched(src, hw, c * hw, dst, c, c * hw, n, c, hw, pool);
}

void nhwc_to_nchw(const float* src, float* dst, size_t n, size_t c, size_t hw, const ThreadPool& pool) {
  if (c == 1 || hw == 1) {
    std::memcpy(dst, src, n * c * hw * sizeof(float));
    return;
  }
  transpose_batched(src, c, c * hw, dst, hw, c * hw, n, hw, c, pool);
}

void nchw_to_nhwc_padded(const float* src, float* dst, size_t n, size_t c, size_t h, size_t w, size_t pt, size_t pl,
                         size_t pb, size_t pr, const ThreadPool& pool) {
  const size_t ph = h + pt + pb, pw = w + pl + pr;
  std::memset(dst, 0, n * ph * pw * c * sizeof(float));
  // One [c][w] -> [w][c] transpose per input row (n * h of them).
  for (size_t b = 0; b < n; ++b) {
    transpose_batched(src + b * c * h * w, h * w, w, dst + (b * ph + pt) * pw * c + pl * c, c, pw * c, h, c, w, pool);
  }
}

Status permute_layout(const Tensor& src, bool to_nhwc, Tensor& dst, const ThreadPool& pool) {
  if (!src.defined() || src.rank() != 4) return invalid_argument("expected a 4-D tensor");
  if (src.dtype() == DataType::kString || dtype_bits(src.dtype()) % 8 != 0) {
    return unsupported("layout conversion of ", dtype_name(src.dtype()), " tensors");
  }
  const Shape& s = src.shape();
  const size_t n = static_cast<size_t>(s[0]);
  const size_t c = static_cast<size_t>(to_nhwc ? s[1] : s[3]);
  const size_t hw = static_cast<size_t>(to_nhwc ? s[2] * s[3] : s[1] * s[2]);
  const size_t es = static_cast<size_t>(dtype_bits(src.dtype()) / 8);
  if (c == 1 || hw == 1) {
    if (src.nbytes() > 0) std::memcpy(dst.raw_data(), src.raw_data(), src.nbytes());
  } else if (src.dtype() == DataType::kFloat) {
    if (to_nhwc) {
      nchw_to_nhwc(src.data<float>(), dst.data<float>(), n, c, hw, pool);
    } else {
      nhwc_to_nchw(src.data<float>(), dst.data<float>(), n, c, hw, pool);
    }
  } else {
    const char* from = static_cast<const char*>(src.raw_data());
    char* to = static_cast<char*>(dst.raw_data());
    if (to_nhwc) {
      transpose_bytes(from, to, n, c, hw, es, pool);
    } else {
      transpose_bytes(from, to, n, hw, c, es, pool);
    }
  }
  return Status::ok();
}

}  // namespace xonnx
