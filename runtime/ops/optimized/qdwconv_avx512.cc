// The AVX-512 rows of the int8 depthwise convolution (qdwconv.h): 16 channels per vector,
// one FMA per tap on the float-converted input. 3x3 (MobileNet's depthwise convolutions)
// keeps its nine weight vectors in registers across the row; other kernel sizes read them
// from L1. Compiled with AVX-512 flags on x86-64 only; used only when cpuinfo reports it.
#include "runtime/ops/optimized/qdwconv.h"

#if defined(__x86_64__) && defined(__AVX512F__)
#include <immintrin.h>

#include <algorithm>

namespace xonnx {
namespace opt {
namespace {

struct Requant {
  __mmask16 mask;  // the real channels of this block
  __m512 bias, scale, lo, hi;
  __m512i zero_point;
};

inline Requant requant_for(const QdwRow& p, int64_t c0) {
  const int64_t valid = std::min<int64_t>(16, p.c - c0);
  Requant r;
  r.mask = static_cast<__mmask16>((1u << valid) - 1u);
  r.bias = _mm512_loadu_ps(p.bias + c0);
  r.scale = _mm512_loadu_ps(p.scale + c0);
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

// One kernel row's taps of one pixel: a short FMA chain.
template <int KW>
inline __m512 taps(const float* x, int64_t tap, const __m512* w, __m512 acc) {
  for (int kx = 0; kx < KW; ++kx) acc = _mm512_fmadd_ps(_mm512_loadu_ps(x + kx * tap), w[kx], acc);
  return acc;
}

// A pixel as KH independent row chains summed at the end: one long FMA chain per pixel is
// latency-bound (the FP scheduler cannot hold enough pixels to hide it).
template <int KH, int KW>
inline __m512 pixel(const float* const* rows, int64_t offset, int64_t tap, const __m512* w, __m512 bias) {
  __m512 acc = taps<KW>(rows[0] + offset, tap, w, bias);
  for (int ky = 1; ky < KH; ++ky)
    acc = _mm512_add_ps(acc, taps<KW>(rows[ky] + offset, tap, w + ky * KW, _mm512_setzero_ps()));
  return acc;
}

template <int KH, int KW>
void row_fixed(const QdwRow& p, uint8_t* out) {
  const int64_t step = p.sw * 16, tap = p.dw * 16, c = p.c, ow = p.ow;  // locals: the stores may alias p
  for (int64_t c0 = 0; c0 < c; c0 += 16) {
    const Requant r = requant_for(p, c0);
    __m512 w[KH * KW];
    for (int t = 0; t < KH * KW; ++t) w[t] = _mm512_loadu_ps(p.weights + t * p.cp + c0);
    const float* rows[KH];
    for (int ky = 0; ky < KH; ++ky) rows[ky] = p.rows[ky] + c0 * p.wp;
    uint8_t* o = out + c0;
    int64_t ox = 0;
    for (; ox + 4 <= ow; ox += 4, o += 4 * c) {  // four pixels in flight
      const __m512 a0 = pixel<KH, KW>(rows, ox * step, tap, w, r.bias);
      const __m512 a1 = pixel<KH, KW>(rows, (ox + 1) * step, tap, w, r.bias);
      const __m512 a2 = pixel<KH, KW>(rows, (ox + 2) * step, tap, w, r.bias);
      const __m512 a3 = pixel<KH, KW>(rows, (ox + 3) * step, tap, w, r.bias);
      store16(a0, r, o);
      store16(a1, r, o + c);
      store16(a2, r, o + 2 * c);
      store16(a3, r, o + 3 * c);
    }
    for (; ox < ow; ++ox, o += c) store16(pixel<KH, KW>(rows, ox * step, tap, w, r.bias), r, o);
  }
}

void row_any(const QdwRow& p, uint8_t* out) {
  const int64_t step = p.sw * 16, tap = p.dw * 16;
  for (int64_t c0 = 0; c0 < p.c; c0 += 16) {
    const Requant r = requant_for(p, c0);
    uint8_t* o = out + c0;
    for (int64_t ox = 0; ox < p.ow; ++ox, o += p.c) {
      __m512 acc = r.bias;
      const float* w = p.weights + c0;
      for (int64_t ky = 0; ky < p.kh; ++ky) {
        const float* x = p.rows[ky] + c0 * p.wp + ox * step;
        for (int64_t kx = 0; kx < p.kw; ++kx, w += p.cp)
          acc = _mm512_fmadd_ps(_mm512_loadu_ps(x + kx * tap), _mm512_loadu_ps(w), acc);
      }
      store16(acc, r, o);
    }
  }
}

void row_avx512(const QdwRow& p, uint8_t* out) {
  if (p.kh == 3 && p.kw == 3) return row_fixed<3, 3>(p, out);
  row_any(p, out);
}

void convert_avx512(const uint8_t* src, int64_t w, int64_t c, bool is_signed, float* dst, int64_t block_stride) {
  for (int64_t c0 = 0; c0 < c; c0 += 16, dst += block_stride) {
    const int64_t valid = std::min<int64_t>(16, c - c0);
    const __mmask16 mask = static_cast<__mmask16>((1u << valid) - 1u);
    const uint8_t* s = src + c0;
    for (int64_t x = 0; x < w; ++x, s += c) {
      const __m128i bytes = _mm_maskz_loadu_epi8(mask, s);
      const __m512i v = is_signed ? _mm512_cvtepi8_epi32(bytes) : _mm512_cvtepu8_epi32(bytes);
      _mm512_storeu_ps(dst + x * 16, _mm512_cvtepi32_ps(v));
    }
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
