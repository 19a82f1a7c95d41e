// Output rows of the int8 depthwise convolution (optimized/qlinear_depthwise.cc):
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

constexpr int64_t kQdwChannelBlock = 16;  // channels are padded to a multiple of this

// One block of 16 channels of one output row. The caller converts a block's input rows right
// before the row kernel reads them, so they are still in L1 (whole converted rows are 4x
// the bytes of the input and spill to L2 at MobileNet's early widths).
struct QdwRow {
  const float* const* rows = nullptr;  // kh converted input rows of the block, each [wp][16] (pads included)
  const float* weights = nullptr;      // [kh * kw][16]
  const float* bias = nullptr;         // [16] (exact integers)
  const float* scale = nullptr;        // [16]: x_scale * w_scale / y_scale
  int64_t kh = 0, kw = 0, sw = 1, dw = 1;
  int64_t valid = 16;      // real channels of the block
  int64_t out_stride = 0;  // bytes from one output pixel to the next (the channel count)
  int64_t ow = 0;          // output pixels
  int32_t zero_point = 0, lo = -128, hi = 127;
};

// Writes ow pixels of `valid` bytes (int8 or uint8 through the clamp) at out + ox * out_stride.
using QdwRowFn = void (*)(const QdwRow& p, uint8_t* out);
// Converts one block of w pixels (`valid` 8-bit codes each, src_stride bytes apart) to float
// at dst [w][16] (zeros for lanes past valid).
using QdwConvertFn = void (*)(const uint8_t* src, int64_t w, int64_t src_stride, int64_t valid, bool is_signed,
                              float* dst);

void qdw_row_reference(const QdwRow& p, uint8_t* out);
void qdw_convert_reference(const uint8_t* src, int64_t w, int64_t src_stride, int64_t valid, bool is_signed,
                           float* dst);

// The AVX-512 kernels, or nullptr where the CPU (or XONNX_OPT_ISA) has no AVX-512.
QdwRowFn qdw_row_fast();
QdwConvertFn qdw_convert_fast();

}  // namespace opt
}  // namespace xonnx
