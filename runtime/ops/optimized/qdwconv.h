// Output rows of the int8 depthwise convolution (optimized/qlinear_dwconv.cc):
//   y[ox][c] = clamp(round((bias[c] + sum_{ky,kx} x[ky][ox*sw + kx*dw][c] * w[ky][kx][c]) * scale[c]) + zp, lo, hi)
// on input rows converted once to float (the 8-bit codes; padding holds the input zero point),
// weights as (code - weight zero point) in float and bias = int32 bias - x_zero_point * sum(w).
// Every product and partial sum is then an integer below 2^24 (the kernel factory checks the
// bound per channel), so float accumulation is exact in any order: qdw_row_reference is the
// scalar twin of the AVX-512 kernel and gives bit-identical results, with qgemm.h's
// requantization rule.
#pragma once

#include <cstddef>
#include <cstdint>

namespace xonnx {
namespace opt {

constexpr int64_t kQdwChannelBlock = 16;  // channels are padded to a multiple of this (cp)

// A converted input row is [cp / 16][wp][16] floats (wp: padded width): one channel block's kh
// rows then stay in L1 while the row kernel sweeps them, which [wp][cp] rows did not.
struct QdwRow {
  const float* const* rows = nullptr;  // kh converted input rows (pads included)
  const float* weights = nullptr;      // [kh * kw][cp]
  const float* bias = nullptr;         // [cp] (exact integers)
  const float* scale = nullptr;        // [cp]: x_scale * w_scale / y_scale
  int64_t kh = 0, kw = 0, sw = 1, dw = 1;
  int64_t c = 0, cp = 0, wp = 0, ow = 0;  // real and padded channels, padded input width, output pixels
  int32_t zero_point = 0, lo = -128, hi = 127;
};

// Writes ow pixels of c bytes (int8 or uint8 through the clamp) at out.
using QdwRowFn = void (*)(const QdwRow& p, uint8_t* out);
// Converts w pixels of c 8-bit codes to float at dst[block * block_stride + x * 16 + j] (channel
// block * 16 + j; zeros for channels past c).
using QdwConvertFn = void (*)(const uint8_t* src, int64_t w, int64_t c, bool is_signed, float* dst,
                              int64_t block_stride);

void qdw_row_reference(const QdwRow& p, uint8_t* out);
void qdw_convert_reference(const uint8_t* src, int64_t w, int64_t c, bool is_signed, float* dst, int64_t block_stride);

// The AVX-512 kernels, or nullptr where the CPU (or XONNX_OPT_ISA) has no AVX-512.
QdwRowFn qdw_row_fast();
QdwConvertFn qdw_convert_fast();

}  // namespace opt
}  // namespace xonnx
