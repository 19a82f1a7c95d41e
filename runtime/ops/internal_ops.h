// The names of the runtime's internal ops: what the session-time passes (runtime/passes) write
// into the graph and the kernels (ops/ref/nhwc.cc and the fast backends) register. Both sides
// read them from here, so neither includes the other.
#pragma once

#include <cstddef>

namespace xonnx {

// The domain of the layout pass's NHWC ops and of its boundary conversions (ToNHWC, ToNCHW).
constexpr const char* kNhwcDomain = "com.xonnx.nhwc";
// A 1x1 Conv and the depthwise Conv that alone reads its output, as one op: inputs X, W_pw,
// B_pw, W_dw, B_dw.
constexpr const char* kPointwiseDepthwiseOp = "PointwiseDepthwiseConv";
// The NHWC Conv whose input 0 is still NCHW (an image input entering an NHWC region).
constexpr const char* kConvNchwInputOp = "ConvNchwInput";
// The NHWC 1x1 Conv of a channel Concat of equal parts: inputs part 0, W, B (or ""), parts 1..
constexpr const char* kConcatConvOp = "ConcatConv";
// The NHWC MaxPool of a channel Concat: inputs the parts.
constexpr const char* kConcatMaxPoolOp = "ConcatMaxPool";
// The NHWC inference BatchNormalization of a channel Concat: inputs part 0, scale, B, mean,
// var, parts 1..; the BatchNormalization's attributes (and fused output range).
constexpr const char* kConcatBatchNormOp = "ConcatBatchNorm";
// An NHWC inference BatchNormalization (of a channel Concat or of one tensor) and the 1x1 Conv
// that alone reads it, as one op: inputs part 0, scale, B, mean, var, W, B_conv (or ""), parts
// 1..; the Conv's attributes (and fused output range), the BatchNormalization's as norm_*.
constexpr const char* kBatchNormConvOp = "BatchNormConv";
// An image's Conv and the MaxPool after it: inputs X, W, B; the Conv's attributes, the pool's
// as pool_*, and nchw_input = 1 when X is still NCHW (as for ConvNchwInput).
constexpr const char* kConvMaxPoolOp = "ConvMaxPool";
// An image's Conv and the depthwise Conv that alone reads its output: inputs X, W, B, W_dw,
// B_dw; the depthwise Conv's attributes, the image Conv's as stem_*, and nchw_input = 1 when X
// is still NCHW.
constexpr const char* kStemDepthwiseOp = "StemDepthwiseConv";
// torch's GroupNorm (Reshape [N, G, -1] -> InstanceNormalization with unit scale and zero bias
// -> Reshape back [-> Mul(gamma) -> Add(beta)]) on NHWC data: inputs X [, gamma [C], beta [C]];
// attributes groups, epsilon.
constexpr const char* kGroupNormOp = "GroupNorm";
// The NHWC Conv's optional input Z (the residual Add merged into it): clamp(conv + B + Z) over
// the output range (ops/common/residual.h).
constexpr size_t kConvResidualInput = 3;

}  // namespace xonnx
