// 2-D convolution geometry of the fast kernels (XNNPACK's float and quantized Conv, the own
// NHWC Convs): kernel, strides, dilations and padding of a node, read once at creation.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "runtime/core/shape.h"
#include "runtime/core/status.h"
#include "runtime/ops/kernel.h"

namespace xonnx {

struct ConvGeometry {
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  std::string auto_pad;                    // NOTSET, SAME_UPPER, SAME_LOWER or VALID
  std::array<int64_t, 4> explicit_pads{};  // top, left, bottom, right (NOTSET)

  // Pads (top, left, bottom, right) for an h x w input; false if the geometry is degenerate
  // (input plus pads smaller than the dilated kernel).
  bool pads_for(int64_t h, int64_t w, std::array<int64_t, 4>& pads) const;
  // The pads when they do not depend on the input size (not SAME, or SAME with stride 1): the
  // operator can then be created at session creation, so XNNPACK's refusal declines the node.
  bool fixed_pads(std::array<int64_t, 4>& pads) const;
  // The output size for an input of h x w with `pads` (from pads_for).
  int64_t out_h(int64_t h, const std::array<int64_t, 4>& pads) const {
    return (h + pads[0] + pads[2] - ((kh - 1) * dh + 1)) / sh + 1;
  }
  int64_t out_w(int64_t w, const std::array<int64_t, 4>& pads) const {
    return (w + pads[1] + pads[3] - ((kw - 1) * dw + 1)) / sw + 1;
  }

  // Reads auto_pad, group, kernel_shape, strides, dilations and pads of a 2-D Conv-like node
  // with 4-D weights of shape `w` ([M][C/group][kh][kw]); declines (`what`: the kernel) what
  // the kernels do not cover: other ranks, a kernel_shape that disagrees with W, values
  // beyond uint32 range, unknown auto_pad. `prefix` selects a fused node's part (its attributes
  // named prefix + name, as StemDepthwiseConv's stem_*).
  static Result<ConvGeometry> parse(const KernelInit& init, const Shape& w, int64_t& group, const char* what,
                                    const std::string& prefix = "");
  // The same for a 1-D node with 3-D weights [M][C/group][k]: the geometry of a 1 x k kernel
  // over a 1 x L input ([N, C, L] read as [N, C, 1, L]).
  static Result<ConvGeometry> parse_1d(const KernelInit& init, const Shape& w, int64_t& group, const char* what);
};

}  // namespace xonnx
