// The AVX-512 rows of the float32 depthwise and grouped (4 x 4, 8 x 8, 16 x 16) convolutions
// (fdwconv.h): 16 channels per vector, one FMA per tap (G for a group of G). 3x3 depthwise keeps its nine
// weight vectors in named registers across the row; rows 5 or 7 wide at stride 1 keep a kernel
// row's and load each input vector once for up to eight pixels; the rest read each tap's
// weights once from L1 for four pixels (eight when grouped). Compiled with AVX-512 flags on
// x86-64 only; used only when cpuinfo reports it.
#include "runtime/ops/optimized/fdwconv.h"

#if defined(__x86_64__) && defined(__AVX512F__)
// GCC 12 warns about the undefined-value idiom inside its own AVX512 headers.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include "runtime/ops/optimized/avx512_exact.h"

namespace xonnx {
namespace opt {
namespace {

using avx512_exact::add;  // products and sums as the twin does them (no FMA contraction)
using avx512_exact::mul;

struct Clamp {
  __mmask16 mask;  // the real channels of the block
  __m512 lo, hi;
};

inline Clamp clamp_for(const FdwRow& p) {
  return {static_cast<__mmask16>((1u << p.valid) - 1u), _mm512_set1_ps(p.lo), _mm512_set1_ps(p.hi)};
}

// max/min return their second operand when either is NaN: NaN in v passes through.
// (The zero-masking forms: GCC 12 warns about the plain ones' undefined pass-through operand.)
inline void store16(__m512 v, const Clamp& c, float* out) {
  v = _mm512_maskz_min_ps(0xFFFF, c.hi, _mm512_maskz_max_ps(0xFFFF, c.lo, v));
  if (c.mask == 0xFFFF) {
    _mm512_storeu_ps(out, v);
  } else {
    _mm512_mask_storeu_ps(out, c.mask, v);
  }
}

// 3x3, the depthwise kernel of MobileNets: nine named weight vectors (GCC spills arrays of
// vectors that are passed around), and four pixels in flight, each as three row chains.
// SW > 0: stride SW and dilation 1 as constants, so every load is a row pointer plus a fixed
// displacement (with runtime offsets GCC ran out of registers for the twelve addresses).
template <int64_t SW>
void row_3x3(const FdwRow& p, float* out) {
  // Locals: the stores may alias p.
  const int64_t step = SW > 0 ? SW * 16 : p.sw * 16, tap = SW > 0 ? 16 : p.dw * 16;
  const int64_t stride = p.out_stride, ow = p.ow;
  const Clamp c = clamp_for(p);
  const __m512 bias = _mm512_loadu_ps(p.bias);
  const __m512 w0 = _mm512_loadu_ps(p.weights), w1 = _mm512_loadu_ps(p.weights + 16),
               w2 = _mm512_loadu_ps(p.weights + 32), w3 = _mm512_loadu_ps(p.weights + 48),
               w4 = _mm512_loadu_ps(p.weights + 64), w5 = _mm512_loadu_ps(p.weights + 80),
               w6 = _mm512_loadu_ps(p.weights + 96), w7 = _mm512_loadu_ps(p.weights + 112),
               w8 = _mm512_loadu_ps(p.weights + 128);
  const float* x0 = p.rows[0];
  const float* x1 = p.rows[1];
  const float* x2 = p.rows[2];
  const auto pixel = [&](int64_t o) {  // o: the pixel's offset from the row pointers
    __m512 a = _mm512_fmadd_ps(_mm512_loadu_ps(x0 + o), w0, bias);
    __m512 b = mul(_mm512_loadu_ps(x1 + o), w3);
    __m512 d = mul(_mm512_loadu_ps(x2 + o), w6);
    a = _mm512_fmadd_ps(_mm512_loadu_ps(x0 + o + tap), w1, a);
    b = _mm512_fmadd_ps(_mm512_loadu_ps(x1 + o + tap), w4, b);
    d = _mm512_fmadd_ps(_mm512_loadu_ps(x2 + o + tap), w7, d);
    a = _mm512_fmadd_ps(_mm512_loadu_ps(x0 + o + 2 * tap), w2, a);
    b = _mm512_fmadd_ps(_mm512_loadu_ps(x1 + o + 2 * tap), w5, b);
    d = _mm512_fmadd_ps(_mm512_loadu_ps(x2 + o + 2 * tap), w8, d);
    return add(add(a, b), d);
  };
  int64_t ox = 0;
  for (; ox + 4 <= ow; ox += 4, out += 4 * stride, x0 += 4 * step, x1 += 4 * step, x2 += 4 * step) {
    const __m512 a0 = pixel(0), a1 = pixel(step), a2 = pixel(2 * step), a3 = pixel(3 * step);
    store16(a0, c, out);
    store16(a1, c, out + stride);
    store16(a2, c, out + 2 * stride);
    store16(a3, c, out + 3 * stride);
  }
  for (; ox < ow; ++ox, out += stride, x0 += step, x1 += step, x2 += step) store16(pixel(0), c, out);
}

// Groups of 4: each tap's 16 input channels are 4 groups, one per 128-bit lane, so
// vpermilps with an immediate spreads input i of every group over its group's 4 outputs.
template <int I>
inline __m512 group_input(__m512 x) {
  return _mm512_permute_ps(x, I * 0x55);
}

// Groups of 8: each is one 256-bit half. The half's 128-bit lane holding input i (inputs 0-3:
// `lo`, 4-7: `hi`) is first copied over both lanes of the half, then vpermilps spreads it.
template <int I>
inline __m512 group8_input(__m512 lo, __m512 hi) {
  return _mm512_permute_ps(I < 4 ? lo : hi, (I % 4) * 0x55);
}
inline __m512 group8_lo(__m512 x) { return _mm512_shuffle_f32x4(x, x, _MM_SHUFFLE(2, 2, 0, 0)); }
inline __m512 group8_hi(__m512 x) { return _mm512_shuffle_f32x4(x, x, _MM_SHUFFLE(3, 3, 1, 1)); }
// Inputs 1-7 of a group's tap onto the chain that input 0 started.
inline __m512 group8_rest(__m512 lo, __m512 hi, const float* w, __m512 chain) {
  chain = _mm512_fmadd_ps(group8_input<1>(lo, hi), _mm512_loadu_ps(w + 16), chain);
  chain = _mm512_fmadd_ps(group8_input<2>(lo, hi), _mm512_loadu_ps(w + 32), chain);
  chain = _mm512_fmadd_ps(group8_input<3>(lo, hi), _mm512_loadu_ps(w + 48), chain);
  chain = _mm512_fmadd_ps(group8_input<4>(lo, hi), _mm512_loadu_ps(w + 64), chain);
  chain = _mm512_fmadd_ps(group8_input<5>(lo, hi), _mm512_loadu_ps(w + 80), chain);
  chain = _mm512_fmadd_ps(group8_input<6>(lo, hi), _mm512_loadu_ps(w + 96), chain);
  return _mm512_fmadd_ps(group8_input<7>(lo, hi), _mm512_loadu_ps(w + 112), chain);
}

// One tap (every input channel of it: 1 depthwise, G = 4 or 8 of a group) onto a row's chain, in
// the twin's order; the row's first tap starts the chain, onto the bias (row 0) or as a product.
template <int G>
inline __m512 tap(__m512 x, const float* w, __m512 chain);
template <>
inline __m512 tap<1>(__m512 x, const float* w, __m512 chain) {
  return _mm512_fmadd_ps(x, _mm512_loadu_ps(w), chain);
}
// Inputs 1-3 of a group's tap onto the chain that input 0 started.
inline __m512 group_rest(__m512 x, const float* w, __m512 chain) {
  chain = _mm512_fmadd_ps(group_input<1>(x), _mm512_loadu_ps(w + 16), chain);
  chain = _mm512_fmadd_ps(group_input<2>(x), _mm512_loadu_ps(w + 32), chain);
  return _mm512_fmadd_ps(group_input<3>(x), _mm512_loadu_ps(w + 48), chain);
}
template <>
inline __m512 tap<4>(__m512 x, const float* w, __m512 chain) {
  return group_rest(x, w, tap<1>(group_input<0>(x), w, chain));
}
template <>
inline __m512 tap<8>(__m512 x, const float* w, __m512 chain) {
  const __m512 lo = group8_lo(x), hi = group8_hi(x);
  return group8_rest(lo, hi, w, tap<1>(group8_input<0>(lo, hi), w, chain));
}
template <int G>
inline __m512 first_tap(__m512 x, const float* w, const __m512* bias);
template <>
inline __m512 first_tap<1>(__m512 x, const float* w, const __m512* bias) {
  return bias ? _mm512_fmadd_ps(x, _mm512_loadu_ps(w), *bias) : mul(x, _mm512_loadu_ps(w));
}
template <>
inline __m512 first_tap<4>(__m512 x, const float* w, const __m512* bias) {
  return group_rest(x, w, first_tap<1>(group_input<0>(x), w, bias));
}
template <>
inline __m512 first_tap<8>(__m512 x, const float* w, const __m512* bias) {
  const __m512 lo = group8_lo(x), hi = group8_hi(x);
  return group8_rest(lo, hi, w, first_tap<1>(group8_input<0>(lo, hi), w, bias));
}

// Any kh x kw, P pixels from ox on: the pixels share each tap's weights (read from L1); per
// pixel one chain per kernel row, added to the total in ky order (fdwconv.h).
template <int G, int P>
inline void any_pixels(const FdwRow& p, int64_t ox, const Clamp& c, __m512 bias, float* out) {
  constexpr int64_t kTapFloats = G * 16;
  const int64_t step = p.sw * 16, dx = p.dw * 16, kw = p.kw;
  __m512 total[P];
  for (int64_t ky = 0; ky < p.kh; ++ky) {
    const float* x = p.rows[ky] + ox * step;
    const float* w = p.weights + ky * kw * kTapFloats;
    const __m512* b = ky == 0 ? &bias : nullptr;
    __m512 chain[P];
#pragma GCC unroll 8
    for (int px = 0; px < P; ++px) chain[px] = first_tap<G>(_mm512_loadu_ps(x + px * step), w, b);
    for (int64_t kx = 1; kx < kw; ++kx) {
      const float* xk = x + kx * dx;
      const float* wk = w + kx * kTapFloats;
#pragma GCC unroll 8
      for (int px = 0; px < P; ++px) chain[px] = tap<G>(_mm512_loadu_ps(xk + px * step), wk, chain[px]);
    }
#pragma GCC unroll 8
    for (int px = 0; px < P; ++px) total[px] = ky == 0 ? chain[px] : add(total[px], chain[px]);
  }
#pragma GCC unroll 8
  for (int px = 0; px < P; ++px) store16(total[px], c, out + px * p.out_stride);
}

// Groups of 16: a group is the whole block, and input i of a tap is broadcast from memory (a
// load the FMA takes as its operand, no shuffle). Each of the tap's 16 weight vectors is loaded
// once for the P pixels. A kernel row is two chains, inputs 0-7 and 8-15 of its taps
// (fdwconv.h), so that rows of 7 pixels (RegNet's last stage) still have eight in flight.
// SW > 0: stride SW as a constant, so that every broadcast is one pointer plus a fixed
// displacement (with a runtime stride GCC kept the eight pixels' pointers on the stack).
template <int I0, int P, int64_t SW>
inline void group16_inputs(const float* x, const float* w, int64_t step, __m512* chain) {
  if constexpr (SW > 0) step = SW * 16;
#pragma GCC unroll 8
  for (int i = I0; i < 8; ++i) {
    const __m512 wv = _mm512_loadu_ps(w + i * 16), wh = _mm512_loadu_ps(w + (i + 8) * 16);
#pragma GCC unroll 8
    for (int px = 0; px < P; ++px) {
      chain[px] = _mm512_fmadd_ps(_mm512_set1_ps(x[px * step + i]), wv, chain[px]);
      chain[P + px] = _mm512_fmadd_ps(_mm512_set1_ps(x[px * step + i + 8]), wh, chain[P + px]);
    }
  }
}

template <int P, int64_t SW>
inline void group16_pixels(const FdwRow& p, int64_t ox, const Clamp& c, __m512 bias, float* out) {
  constexpr int64_t kTapFloats = 16 * 16;
  const int64_t step = SW > 0 ? SW * 16 : p.sw * 16, dx = p.dw * 16, kw = p.kw;
  __m512 total[P];
  for (int64_t ky = 0; ky < p.kh; ++ky) {
    const float* x = p.rows[ky] + ox * step;
    const float* w = p.weights + ky * kw * kTapFloats;
    __m512 chain[2 * P];  // [0, P): inputs 0-7, [P, 2P): inputs 8-15
    {                     // the row's first tap: inputs 0 and 8 start the chains, 0 onto the bias (row 0)
      const __m512 w0 = _mm512_loadu_ps(w), w8 = _mm512_loadu_ps(w + 8 * 16);
#pragma GCC unroll 8
      for (int px = 0; px < P; ++px) {
        const __m512 x0 = _mm512_set1_ps(x[px * step]);
        chain[px] = ky == 0 ? _mm512_fmadd_ps(x0, w0, bias) : mul(x0, w0);
        chain[P + px] = mul(_mm512_set1_ps(x[px * step + 8]), w8);
      }
    }
    group16_inputs<1, P, SW>(x, w, step, chain);
    for (int64_t kx = 1; kx < kw; ++kx) group16_inputs<0, P, SW>(x + kx * dx, w + kx * kTapFloats, step, chain);
#pragma GCC unroll 8
    for (int px = 0; px < P; ++px) {
      const __m512 row = add(chain[px], chain[P + px]);
      total[px] = ky == 0 ? row : add(total[px], row);
    }
  }
#pragma GCC unroll 8
  for (int px = 0; px < P; ++px) store16(total[px], c, out + px * p.out_stride);
}

template <int64_t SW>
void row_group16(const FdwRow& p, float* out) {
  const int64_t stride = p.out_stride, ow = p.ow;
  const Clamp c = clamp_for(p);
  const __m512 bias = _mm512_loadu_ps(p.bias);
  int64_t ox = 0;
  for (; ox + 4 <= ow; ox += 4) group16_pixels<4, SW>(p, ox, c, bias, out + ox * stride);
  if (ox > 0 && ox < ow) {  // the last 4 pixels again, the earlier ones to the same bits: eight
    ox = ow - 4;            // chains in flight where 2 + 1 pixels had 4 and 2 (rows of 7 and 14)
    group16_pixels<4, SW>(p, ox, c, bias, out + ox * stride);
    return;
  }
  if (ox + 2 <= ow) {
    group16_pixels<2, SW>(p, ox, c, bias, out + ox * stride);
    ox += 2;
  }
  if (ox < ow) group16_pixels<1, SW>(p, ox, c, bias, out + ox * stride);
}

// Depthwise: four pixels in flight. Grouped: a tap's G FMAs are one chain, so eight pixels'
// chains are in flight, to hide more of the FMA latency. ResNeXt-50's grouped layers of
// layer1 and layer2 (on these rows), profiled in the model, 1 thread, four alternating
// rounds: 2.35-2.38 -> 2.15-2.24 ms; regnet_y_400mf 0.97x.
template <int G>
void row_any(const FdwRow& p, float* out) {
  const int64_t stride = p.out_stride, ow = p.ow;
  const Clamp c = clamp_for(p);
  const __m512 bias = _mm512_loadu_ps(p.bias);
  int64_t ox = 0;
  if constexpr (G > 1) {
    for (; ox + 8 <= ow; ox += 8) any_pixels<G, 8>(p, ox, c, bias, out + ox * stride);
  }
  for (; ox + 4 <= ow; ox += 4) any_pixels<G, 4>(p, ox, c, bias, out + ox * stride);
  if (ox + 2 <= ow) {
    any_pixels<G, 2>(p, ox, c, bias, out + ox * stride);
    ox += 2;
  }
  if (ox < ow) any_pixels<G, 1>(p, ox, c, bias, out + ox * stride);
}

// Depthwise KW wide, stride 1, dilation 1, P pixels from ox on: each input vector of a kernel
// row loaded once for every pixel whose window holds it (P + KW - 1 loads for P KW FMAs, where
// row_any loads one per FMA), the row's KW weight vectors in registers. Each chain still takes
// its taps in kx order, so the bits are row_any's.
template <int KW, int P>
inline void slide_pixels(const FdwRow& p, int64_t ox, const Clamp& c, __m512 bias, float* out) {
  constexpr int kLoads = P + KW - 1;
  __m512 total[P];
  for (int64_t ky = 0; ky < p.kh; ++ky) {
    const float* x = p.rows[ky] + ox * 16;
    const float* w = p.weights + ky * KW * 16;
    __m512 wv[KW];
#pragma GCC unroll 8
    for (int kx = 0; kx < KW; ++kx) wv[kx] = _mm512_loadu_ps(w + kx * 16);
    __m512 chain[P];
#pragma GCC unroll 64
    for (int j = 0; j < kLoads; ++j) {
      const __m512 xv = _mm512_loadu_ps(x + j * 16);
#pragma GCC unroll 8
      for (int px = 0; px < P; ++px) {
        const int kx = j - px;
        if (kx < 0 || kx >= KW) continue;
        if (kx > 0) {
          chain[px] = _mm512_fmadd_ps(xv, wv[kx], chain[px]);
        } else {
          chain[px] = ky == 0 ? _mm512_fmadd_ps(xv, wv[0], bias) : mul(xv, wv[0]);
        }
      }
    }
#pragma GCC unroll 8
    for (int px = 0; px < P; ++px) total[px] = ky == 0 ? chain[px] : add(total[px], chain[px]);
  }
#pragma GCC unroll 8
  for (int px = 0; px < P; ++px) store16(total[px], c, out + px * p.out_stride);
}

// MNASNet's and MobileNetV3's 5x5 layers and ConvNeXt's 7x7 ones (rows of 7 to 112 pixels):
// blocks of 8, then 4, 2, 1. BM_FdwConv, rows alone, 1 thread, before / after: 5x5 at 7 x 7 x
// 1152 63-67 / 49-51 us, at 14 x 14 x 1152 203-208 / 151-157 us; 7x7 at 56 x 56 x 96 427-445 /
// 296-308 us. At stride 2 it gained nothing (28 x 28 x 120 5x5: 22.8 / 23.0 us).
template <int KW>
void row_slide(const FdwRow& p, float* out) {
  const int64_t stride = p.out_stride, ow = p.ow;
  const Clamp c = clamp_for(p);
  const __m512 bias = _mm512_loadu_ps(p.bias);
  int64_t ox = 0;
  for (; ox + 8 <= ow; ox += 8) slide_pixels<KW, 8>(p, ox, c, bias, out + ox * stride);
  if (ox + 4 <= ow) {
    slide_pixels<KW, 4>(p, ox, c, bias, out + ox * stride);
    ox += 4;
  }
  if (ox + 2 <= ow) {
    slide_pixels<KW, 2>(p, ox, c, bias, out + ox * stride);
    ox += 2;
  }
  if (ox < ow) slide_pixels<KW, 1>(p, ox, c, bias, out + ox * stride);
}

void row_avx512(const FdwRow& p, float* out) {
  if (p.group == 4) return row_any<4>(p, out);
  if (p.group == 8) return row_any<8>(p, out);
  if (p.group == 16)
    return p.sw == 1 ? row_group16<1>(p, out) : p.sw == 2 ? row_group16<2>(p, out) : row_group16<0>(p, out);
  if (p.kh == 3 && p.kw == 3) {
    if (p.dw == 1 && p.sw == 1) return row_3x3<1>(p, out);
    if (p.dw == 1 && p.sw == 2) return row_3x3<2>(p, out);
    return row_3x3<0>(p, out);
  }
  if (p.sw == 1 && p.dw == 1 && p.kw == 5) return row_slide<5>(p, out);
  if (p.sw == 1 && p.dw == 1 && p.kw == 7) return row_slide<7>(p, out);
  row_any<1>(p, out);
}

inline __mmask16 lanes_below(int64_t n) {
  return n >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << (n > 0 ? n : 0)) - 1u);
}

void pack_avx512(const float* src, int64_t w, int64_t src_stride, int64_t channels, int64_t blocks, float* dst,
                 int64_t block_floats, const float* ahead) {
  const __mmask16 last = lanes_below(channels - (blocks - 1) * 16);
  if (blocks == 1) {  // block by block (wide rows): the loop without the block loop
    for (int64_t x = 0; x < w; ++x, src += src_stride, dst += 16) {
      if (ahead) _mm_prefetch(reinterpret_cast<const char*>(ahead + x * src_stride), _MM_HINT_T0);
      _mm512_storeu_ps(dst, _mm512_maskz_loadu_ps(last, src));
    }
    return;
  }
  for (int64_t x = 0; x < w; ++x, src += src_stride, dst += 16) {
    if (ahead) {
      for (int64_t b = 0; b < blocks; ++b) _mm_prefetch(reinterpret_cast<const char*>(ahead + b * 16), _MM_HINT_T0);
      ahead += src_stride;
    }
    for (int64_t b = 0; b + 1 < blocks; ++b) _mm512_storeu_ps(dst + b * block_floats, _mm512_loadu_ps(src + b * 16));
    _mm512_storeu_ps(dst + (blocks - 1) * block_floats, _mm512_maskz_loadu_ps(last, src + (blocks - 1) * 16));
  }
}

}  // namespace

FdwRowFn fdw_row_avx512() { return row_avx512; }
FdwPackFn fdw_pack_avx512() { return pack_avx512; }

}  // namespace opt
}  // namespace xonnx

#else

namespace xonnx {
namespace opt {
FdwRowFn fdw_row_avx512() { return nullptr; }
FdwPackFn fdw_pack_avx512() { return nullptr; }
}  // namespace opt
}  // namespace xonnx

#endif
