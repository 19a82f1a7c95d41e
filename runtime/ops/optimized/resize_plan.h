// The taps of the own Resize (resize.cc): per output row or column of an image, the input
// positions and weights of nearest or linear interpolation, by the reference's formulas
// (ops/ref/resize.cc, in double), and the row kernel that applies them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/tensor.h"
#include "runtime/ops/common/fast_kernel.h"
#include "runtime/ops/kernel.h"

namespace xonnx {
namespace opt {

enum class ResizeCoord { kHalfPixel, kPytorchHalfPixel, kAlignCorners, kAsymmetric };
enum class ResizeNearest { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };

struct ResizeMode {
  bool linear = false;
  ResizeCoord coord = ResizeCoord::kHalfPixel;
  ResizeNearest nearest = ResizeNearest::kRoundPreferFloor;
};

// False for names the own kernel does not cover.
bool parse_resize_coord(const std::string& name, ResizeCoord& coord);
bool parse_resize_nearest(const std::string& name, ResizeNearest& nearest);

// One axis: output position o reads i0[o] (nearest) or w0[o] * in[i0[o]] + w1[o] * in[i1[o]].
struct ResizeAxis {
  int64_t in = -1, out = -1;
  bool linear = false;
  bool identity = false;  // linear with every output on its own input: the reference skips the axis
  std::vector<int64_t> i0, i1;
  std::vector<double> w0, w1;
};
ResizeAxis plan_resize_axis(const ResizeMode& mode, int64_t in, int64_t out, double scale);

// The output height and width (and their scales) of Resize's inputs 2 (scales) or 3 (sizes)
// for X of rank >= 2 (`nhwc`: X is [N, H, W, C], the scales / sizes still NCHW's); false when
// they touch a leading axis or are not well formed (the reference kernel then handles or
// reports them).
bool resize_output_hw(KernelContext& ctx, const Tensor& x, bool nhwc, int64_t& out_h, int64_t& out_w,
                      double& scale_h, double& scale_w);

// Output rows [oy0, oy1) of one [in_h, in_w, c] image `in` (c = 1: an NCHW plane) into `out`
// (pw.out * c values per row); `scratch` holds two width-passed input rows (2 * pw.out * c doubles).
void resize_rows(const ResizeAxis& ph, const ResizeAxis& pw, const float* in, int64_t in_w, int64_t c, int64_t oy0,
                 int64_t oy1, float* out, double* scratch);

}  // namespace opt
}  // namespace xonnx
