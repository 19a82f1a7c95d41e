// Bias correction for int8 weights (converter/quantize/int8_static.cc).
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/core/tensor.h"
#include "runtime/ir/graph.h"

namespace xonnx {
namespace convert {

// For a Conv reading `x` with weight shape `w`: per kernel tap (row-major over the kernel's
// spatial dims) the fraction of output positions at which it reads the input, not padding.
// Empty when the shapes or attributes are not the plain kind (the taps then count fully).
std::vector<double> tap_coverage(const Node& conv, const Shape& x, const Shape& w);

// Bias correction (Nagel et al., "Data-Free Quantization Through Weight Equalization and Bias
// Correction", 2019): rounding W moves output channel o's mean by sum_k (W_q - W)[o, k] * E[x_k].
// Per output channel that shift, for W quantized with `scales` along `axis` (codes clamped to
// +-code_max) and `mean` = E[x] per input channel (Conv: the C of NCHW, over `group` groups;
// MatMul / Gemm: the last axis), each Conv tap counted by `coverage` (tap_coverage; empty: fully).
// Empty when the shapes do not match.
std::vector<double> rounding_mean_shift(const Tensor& w, const std::vector<float>& scales, int64_t axis, long code_max,
                                        const std::vector<double>& mean, int64_t group,
                                        const std::vector<double>& coverage);

}  // namespace convert
}  // namespace xonnx
