// Output rows of the float32 depthwise convolution (optimized/conv_depthwise.cc), NHWC:
//   y[ox][c] = clamp(bias[c] + sum_{ky,kx} x[ky][ox*sw + kx*dw][c] * w[ky][kx][c], lo, hi)
// on input rows copied into a channel-blocked ring [wp][16] whose padding columns hold zeros;
// and of the grouped convolution with groups of G = 4, 8 or 16 input and as many output channels
// (ResNeXt-50 32x4d's first stages, RegNet's group widths 8 and 16), whose output channel c reads the G
// channels g = c - c % G + i:
//   y[ox][c] = clamp(bias[c] + sum_{ky,kx,i} x[ky][ox*sw + kx*dw][g] * w[ky][kx][i][c], lo, hi)
//
// Operation order (the AVX-512 rows and the scalar twin share it, so they are bit-identical):
// each kernel row ky is one chain (a tap of a group: its G inputs in order), the first
// tap of row 0 fused onto the bias
// (fma(x, w, bias)), the first tap of the other rows a product, every further tap of the row
// an fma; the chains are then summed in ky order. Groups of 16 split each row into two chains,
// inputs 0-7 and 8-15 of every tap (the second starting with a product), added before the row
// joins the sum. The clamp is max(lo, .) then min(hi, .)
// with the SECOND operand winning on NaN (x86 maxps/minps), so NaN passes through as ONNX's
// Conv -> Relu/Clip does, without any finiteness scan.
#pragma once

#include <cstddef>
#include <cstdint>

namespace xonnx {
namespace opt {

constexpr int64_t kFdwChannelBlock = 16;  // channels are padded to a multiple of this
// The grouped forms' channels per group: a 128-bit lane, a 256-bit half or the whole block.
inline bool fdw_group_supported(int64_t g) { return g == 1 || g == 4 || g == 8 || g == 16; }

// One block of 16 channels of one output row.
struct FdwRow {
  const float* const* rows = nullptr;  // kh input rows of the block, each [wp][16] (pads included)
  const float* weights = nullptr;      // [kh * kw][group][16]
  const float* bias = nullptr;         // [16]
  int64_t kh = 0, kw = 0, sw = 1, dw = 1;
  int64_t valid = 16;      // real channels of the block; lanes past it are not written
  int64_t out_stride = 0;  // floats from one output pixel to the next (the channel count)
  int64_t ow = 0;          // output pixels
  float lo = 0, hi = 0;    // the fused output range (-inf, +inf when none)
  int64_t group = 1;       // channels per group: 1 (depthwise), 4, 8 or 16
};

// Writes ow pixels of `valid` floats at out + ox * out_stride.
using FdwRowFn = void (*)(const FdwRow& p, float* out);
// Copies `blocks` blocks of 16 channels of w pixels (src_stride floats apart) into the ring:
// block b of pixel x to dst + b * block_floats + x * 16, zeros for channels past `channels`
// (counted from src). A pixel's blocks are read together, so the source streams in order.
// `ahead` (or nullptr): the same channels of a row to be copied later, prefetched alongside
// (a hint only; the twin ignores it).
using FdwPackFn = void (*)(const float* src, int64_t w, int64_t src_stride, int64_t channels, int64_t blocks,
                           float* dst, int64_t block_floats, const float* ahead);

void fdw_row_reference(const FdwRow& p, float* out);
void fdw_pack_reference(const float* src, int64_t w, int64_t src_stride, int64_t channels, int64_t blocks, float* dst,
                        int64_t block_floats, const float* ahead = nullptr);

// The AVX-512 kernels, or nullptr where the CPU (or XONNX_OPT_ISA) has no AVX-512.
FdwRowFn fdw_row_fast();
FdwPackFn fdw_pack_fast();

}  // namespace opt
}  // namespace xonnx
