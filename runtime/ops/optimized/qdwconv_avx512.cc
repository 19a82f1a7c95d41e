// The AVX-512 rows of the int8 depthwise convolution (qdwconv.h): 16 channels per vector,
// one FMA per tap on the float-converted input. 3x3 keeps its nine weight vectors in registers
// across the row; other kernel sizes read them from L1. Compiled with AVX-512 flags on x86-64 only; used only when cpuinfo reports it.
#include "runtime/ops/optimized/qdwconv.h"

#if defined(__x86_64__) && defined(__AVX512F__)
// GCC 12 warns about the undefined-value idiom inside its own AVX512 headers.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include <algorithm>

namespace xonnx {
namespace opt {
namespace {

struct Requant {
  __mmask16 mask;  // the real channels of the block
  __m512 bias, scale, lo, hi;
  __m512i zero_point;
};

inline Requant requant_for(const QdwRow& p) {
  Requant r;
  r.mask = static_cast<__mmask16>((1u << p.valid) - 1u);
  r.bias = _mm512_loadu_ps(p.bias);
  r.scale = _mm512_loadu_ps(p.scale);
  r.lo = _mm512_set1_ps(static_cast<float>(p.lo - p.zero_point));
  r.hi = _mm512_set1_ps(static_cast<float>(p.hi - p.zero_point));
  r.zero_point = _mm512_set1_epi32(p.zero_point);
  return r;
}

// qgemm.h's rule: clamp in float to [lo - zp, hi - zp], round to nearest even, add zp.
inline void store16(__m512 acc, const Requant& r, uint8_t* out) {
  __m512 scaled = _mm512_mul_ps(acc, r.scale);
  scaled = _mm512_min_ps(_mm512_max_ps(scaled, r.lo), r.hi);
  const __m512i q = _mm512_add_epi32(_mm512_cvtps_epi32(scaled), r.zero_point);
  __m128i bytes = _mm512_cvtepi32_epi8(q);
  // vpmovdb straight to memory is microcoded and slow on AMD Zen 4/5: narrow in a register.
  __asm__("" : "+v"(bytes));
  if (r.mask == 0xFFFF) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), bytes);
  } else {
    _mm_mask_storeu_epi8(out, r.mask, bytes);
  }
}

// 3x3, the depthwise kernel of MobileNets: nine named weight vectors (GCC spills arrays of
// vectors that are passed around), and four pixels in flight, each as three row chains.
void row_3x3(const QdwRow& p, uint8_t* out) {
  // Locals: the byte stores may alias p.
  const int64_t step = p.sw * 16, tap = p.dw * 16, stride = p.out_stride, ow = p.ow;
  const Requant r = requant_for(p);
  const __m512 w0 = _mm512_loadu_ps(p.weights), w1 = _mm512_loadu_ps(p.weights + 16),
               w2 = _mm512_loadu_ps(p.weights + 32), w3 = _mm512_loadu_ps(p.weights + 48),
               w4 = _mm512_loadu_ps(p.weights + 64), w5 = _mm512_loadu_ps(p.weights + 80),
               w6 = _mm512_loadu_ps(p.weights + 96), w7 = _mm512_loadu_ps(p.weights + 112),
               w8 = _mm512_loadu_ps(p.weights + 128);
  const float* const x0 = p.rows[0];
  const float* const x1 = p.rows[1];
  const float* const x2 = p.rows[2];
  const auto pixel = [&](int64_t ox) {
    const int64_t o = ox * step;
    __m512 a = _mm512_fmadd_ps(_mm512_loadu_ps(x0 + o), w0, r.bias);
    __m512 b = _mm512_mul_ps(_mm512_loadu_ps(x1 + o), w3);
    __m512 c = _mm512_mul_ps(_mm512_loadu_ps(x2 + o), w6);
    a = _mm512_fmadd_ps(_mm512_loadu_ps(x0 + o + tap), w1, a);
    b = _mm512_fmadd_ps(_mm512_loadu_ps(x1 + o + tap), w4, b);
    c = _mm512_fmadd_ps(_mm512_loadu_ps(x2 + o + tap), w7, c);
    a = _mm512_fmadd_ps(_mm512_loadu_ps(x0 + o + 2 * tap), w2, a);
    b = _mm512_fmadd_ps(_mm512_loadu_ps(x1 + o + 2 * tap), w5, b);
    c = _mm512_fmadd_ps(_mm512_loadu_ps(x2 + o + 2 * tap), w8, c);
    return _mm512_add_ps(_mm512_add_ps(a, b), c);
  };
  int64_t ox = 0;
  for (; ox + 4 <= ow; ox += 4, out += 4 * stride) {
    const __m512 a0 = pixel(ox), a1 = pixel(ox + 1), a2 = pixel(ox + 2), a3 = pixel(ox + 3);
    store16(a0, r, out);
    store16(a1, r, out + stride);
    store16(a2, r, out + 2 * stride);
    store16(a3, r, out + 3 * stride);
  }
  for (; ox < ow; ++ox, out += stride) store16(pixel(ox), r, out);
}

void row_any(const QdwRow& p, uint8_t* out) {
  const int64_t step = p.sw * 16, tap = p.dw * 16, stride = p.out_stride;
  const Requant r = requant_for(p);
  for (int64_t ox = 0; ox < p.ow; ++ox, out += stride) {
    __m512 acc = r.bias;
    const float* w = p.weights;
    for (int64_t ky = 0; ky < p.kh; ++ky) {
      const float* x = p.rows[ky] + ox * step;
      for (int64_t kx = 0; kx < p.kw; ++kx, w += 16)
        acc = _mm512_fmadd_ps(_mm512_loadu_ps(x + kx * tap), _mm512_loadu_ps(w), acc);
    }
    store16(acc, r, out);
  }
}

void row_avx512(const QdwRow& p, uint8_t* out) {
  if (p.kh == 3 && p.kw == 3) return row_3x3(p, out);
  row_any(p, out);
}

void convert_avx512(const uint8_t* src, int64_t w, int64_t src_stride, int64_t valid, bool is_signed, float* dst) {
  const __mmask16 mask = static_cast<__mmask16>((1u << valid) - 1u);
  for (int64_t x = 0; x < w; ++x, src += src_stride, dst += 16) {
    const __m128i bytes = _mm_maskz_loadu_epi8(mask, src);
    const __m512i v = is_signed ? _mm512_cvtepi8_epi32(bytes) : _mm512_cvtepu8_epi32(bytes);
    _mm512_storeu_ps(dst, _mm512_cvtepi32_ps(v));
  }
}

}  // namespace

QdwRowFn qdw_row_avx512() { return row_avx512; }
QdwConvertFn qdw_convert_avx512() { return convert_avx512; }

}  // namespace opt
}  // namespace xonnx

#else

namespace xonnx {
namespace opt {
QdwRowFn qdw_row_avx512() { return nullptr; }
QdwConvertFn qdw_convert_avx512() { return nullptr; }
}  // namespace opt
}  // namespace xonnx

#endif
