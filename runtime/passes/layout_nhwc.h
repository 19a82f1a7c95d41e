// The NHWC layout pass: at session creation (XNNPACK enabled, and a fast kernel for NHWC
// convolutions on this CPU: nhwc_layout_pays) it rewrites the main graph so that maximal
// regions of 4-D ops XNNPACK and the own kernels run in NHWC stay in NHWC, with layout
// conversions only where a region meets the rest of the graph. An own-kernels build for a CPU
// without such kernels (ARM without XNNPACK) links passes/no_nhwc_layout.cc instead.
//
// What it does to the IR (graph.h), names stay stable at the graph's edges:
//  - Conv (constant 4-D float W, constant B), MaxPool / AveragePool (2-D, no Indices output)
//    and GlobalAveragePool become internal ops of domain "com.xonnx.nhwc" (same attributes,
//    NHWC input 0 and output 0; runtime/ops/ref/nhwc.cc). Each has a reference twin. So does
//    an inference BatchNormalization of a region value with constant parameters (DenseNet's
//    pre-activation BN after a Concat), with a Relu / Clip after it fused as its output range.
//  - QLinearConv with constant weights, scales, zero points and bias (what passes/qdq_fusion.h
//    makes of QDQ convolutions) becomes the com.xonnx.nhwc QLinearConv the same way.
//  - Layout-agnostic ops inside a region stay ONNX ops on NHWC tensors: element-wise unary
//    ops, Add/Sub/Mul/Div whose operands are both region values or constants that broadcast
//    per channel ([1,C,1,1], [C,1,1], scalars: re-labelled [1,1,1,C], a zero-copy view),
//    Concat on the channel axis (axis becomes 3), per-tensor QuantizeLinear /
//    DequantizeLinear, and com.microsoft QLinearAdd / QLinearMul of two region values.
//  - Conv followed by Relu or Clip with constant bounds, when the Conv output has that one
//    consumer and is not a graph output, becomes one Conv with attributes
//    "activation_min"/"activation_max" (XNNPACK's output range); a Swish (alpha 1) after a Conv
//    becomes its string attribute "activation" = "Swish" (the own kernels apply it in cache).
//  - A region value read outside the region (or a graph output) gets one "ToNCHW" node that
//    produces the original name; a value entering a region gets one "ToNHWC" node. Values known
//    to be [N,C,1,1] (after global pooling) convert without a copy (attribute unit_spatial=1).
//  - with NhwcLayoutOptions::fuse_pointwise_depthwise, a 1x1 Conv (stride 1, no pads) whose
//    output only a depthwise Conv reads is merged into it: one PointwiseDepthwiseConv.
//  - with NhwcLayoutOptions::nchw_input_conv, an image (C <= 4) whose one region reader is a
//    Conv enters through it: a ConvNchwInput reading the NCHW value, no ToNHWC.
//  - with NhwcLayoutOptions::fuse_concat, a channel Concat of Conv outputs that only a 1x1 Conv
//    (parts of equal channels) or a MaxPool reads, or any channel Concat that only an inference
//    BatchNormalization reads, is merged into it: one ConcatConv, ConcatMaxPool or
//    ConcatBatchNorm over the parts.
//  - with NhwcLayoutOptions::fuse_stem_pool, an image's Conv (C <= 4) whose output only a
//    MaxPool reads is merged into it: one ConvMaxPool (the pool's attributes as pool_*).
//  - with NhwcLayoutOptions::fuse_stem_depthwise, an image's Conv whose output only a
//    depthwise Conv reads is merged into it: one StemDepthwiseConv (the stem's as stem_*).
//  - x * Sigmoid(x) becomes Swish (opset 24) and x * HardSigmoid(x) (alpha 1/6, beta 1/2)
//    HardSwish (opset 14), via Node::opset, when the gate has no other reader.
// Only values whose rank is certainly 4 enter a region (Conv weights and 2-D pool kernels
// prove it; other ops join only when their inputs are region values). Shapes stay dynamic.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "runtime/core/status.h"
#include "runtime/ir/graph.h"
#include "runtime/ops/internal_ops.h"

namespace xonnx {

class OpRegistry;

// Rewrites that pay only where a fast kernel runs the internal op they make
// (fast_layout_fusions); elsewhere the op would run on its reference twin.
struct NhwcLayoutOptions {
  // Merge a 1x1 Conv into the depthwise Conv that alone reads its output.
  bool fuse_pointwise_depthwise = false;
  // An image (C <= 4) whose one region reader is a Conv enters the region through that Conv
  // (ConvNchwInput) instead of a ToNHWC.
  bool nchw_input_conv = false;
  // A channel Concat of Conv outputs that only a 1x1 Conv (equal parts) or a MaxPool reads, or
  // one that only a BatchNormalization reads, is read by it part by part (ConcatConv,
  // ConcatMaxPool, ConcatBatchNorm): the concatenation is never written.
  bool fuse_concat = false;
  // An image's Conv (C <= 4) whose output only a MaxPool reads runs with it as one ConvMaxPool:
  // the Conv's output (a CNN stem's largest tensor) is pooled while in cache, never written.
  bool fuse_stem_pool = false;
  // An image's Conv whose output only a depthwise Conv reads (MobileNetV1 / V2's and MNASNet's
  // first block) runs with it as one StemDepthwiseConv: the stem's rows go straight into the
  // depthwise layer's ring, never written whole.
  bool fuse_stem_depthwise = false;
  // An inference BatchNormalization (a ConcatBatchNorm too) whose output, after its fused Relu,
  // only a 1x1 Conv reads runs with it as one BatchNormConv (DenseNet's pre-activation layers):
  // the normalized map is made a block of pixels at a time in cache, never written whole.
  bool fuse_norm_conv = false;
  // A Conv whose output only an Add reads takes the Add's other input as a residual Z
  // (Conv(X, W, B, Z)), and the Relu / Clip that alone reads the sum as its output range.
  bool fuse_residual_add = false;
  // 1-D Convs and pools run as 2-D ones of height 1 (layout_conv1d.cc), in the regions.
  bool lift_1d = false;
  // A 2-D ConvTranspose with constant weights is an NHWC op (no boundaries around it).
  bool nhwc_conv_transpose = false;
};

struct NhwcLayoutStats {
  int nhwc_ops = 0;             // nodes rewritten to the NHWC domain (boundaries excluded)
  int agnostic_ops = 0;         // ONNX ops left as they are but running on NHWC tensors
  int to_nhwc = 0;              // boundary conversions into a region
  int to_nchw = 0;              // boundary conversions out of a region
  int free_boundaries = 0;      // of those, conversions known to need no copy
  int fused = 0;                // Relu / Clip folded into a Conv
  int gated = 0;                // x * Sigmoid(x) -> Swish, x * HardSigmoid(x) -> HardSwish
  int pointwise_depthwise = 0;  // 1x1 Convs merged into their depthwise Conv
  int nchw_input = 0;           // ToNHWC conversions left to a ConvNchwInput
  int concat = 0;               // Concats merged into the 1x1 Conv or MaxPool that reads them
  int stem_pool = 0;            // image Convs merged into the MaxPool that reads them
  int stem_depthwise = 0;       // image Convs merged into the depthwise Conv that reads them
  int norm_conv = 0;            // BatchNormalizations merged into the 1x1 Conv that reads them
  int residual = 0;             // Adds merged into the Conv whose output they read
  int lifted_1d = 0;            // 1-D Convs / pools rewritten as 2-D ones of height 1
  int channels_last = 0;        // Transposes to / from channels-last run as Identities
  int shapes = 0;               // Shapes of region values read from the NHWC twin
  int reductions = 0;           // Reduce* of region values over the NHWC twin's axes
  int split_exits = 0;          // channel-splitting Reshape + Transpose pairs reading the NHWC twin
  int group_norms = 0;          // torch GroupNorms (Reshape, InstanceNormalization, Reshape) as one NHWC op
};

// Whether a fast kernel of `registry` runs an NHWC Conv or QLinearConv on this CPU (XNNPACK's,
// or with `own_kernels` the optimized ones too). Without one the layout would move every
// convolution onto its reference twin (a copy to NCHW and back around the reference kernel):
// slower than leaving the graph in NCHW.
bool nhwc_layout_pays(const OpRegistry& registry, bool own_kernels);

// The fusions whose internal ops (ops/internal_ops.h) a fast kernel of `registry` runs on
// this CPU (OpRegistry::has_fast_kernel).
NhwcLayoutOptions fast_layout_fusions(const OpRegistry& registry);

// Rewrites `graph` (the main graph; subgraphs are left alone). `opset_imports` are the model's;
// the ONNX opset decides the semantics the NHWC ops keep. Never fails on a model it does not
// understand: such nodes stay as they are.
Result<NhwcLayoutStats> apply_nhwc_layout(Graph& graph, const std::map<std::string, int64_t>& opset_imports,
                                          const NhwcLayoutOptions& options = {});

}  // namespace xonnx
