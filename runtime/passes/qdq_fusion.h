// The QDQ fusion pass: at session creation (XNNPACK enabled, before the NHWC layout pass) it
// rewrites the QuantizeLinear / DequantizeLinear groups that quantizers such as ORT's
// quantize_static and `xonnx convert --quantize int8` emit into integer ops, so that int8
// models run on XNNPACK's integer kernels instead of dequantize-compute-quantize in float.
//
// What it does to the IR (graph.h); names at the graph's edges stay as they are:
//  - Signed activations: Q -> DQ pairs on uint8 (same scale and zero point, Q read only by the
//    DQs) move to int8 with the zero point minus 128. The real values are the same; XNNPACK's
//    per-channel (qc8) kernels want int8 activations.
//  - DQ(x), DQ(W const, 4-D or a Conv1d's 3-D) [, DQ(B int32 const) or float B] -> Conv
//    [-> Relu / Clip] -> Q becomes QLinearConv (bias requantized to x_scale * w_scale). Relu /
//    Clip are dropped only when the Q's saturation already clamps the same way (see
//    `saturation_implies`).
//  - DQ(A), DQ(B const 8-bit 2-D) [, bias] -> Gemm [-> Relu / Clip -> Q] becomes com.microsoft
//    QGemm: quantized output with a Q after it, float output without one (classifier heads);
//    only on CPUs where its integer kernel runs (AVX512-VNNI).
//  - DQ(A [..., K]), DQ(B const 8-bit [K, N]) -> MatMul [-> Relu / Clip] -> Q becomes
//    QLinearMatMul (a transformer's projections) where a fast kernel takes it: the own one
//    (AVX512-VNNI) for per-column B scales, XNNPACK's too for per-tensor ones; without a Q
//    after it (an LM head), com.microsoft MatMulIntegerToFloat, where the own kernel runs.
//  - int8 dynamic MatMulInteger(A, int8 B const [K, N]) -> Cast(float) -> Mul(a_scale * b_scale)
//    [-> Add(bias const [N])] becomes com.microsoft MatMulIntegerToFloat where the own kernel
//    runs (AVX512-VNNI); the same bits, one pass over the output instead of four.
//  - int8 dynamic ConvInteger(x, 8-bit W const) -> Cast(float) -> Mul(x_scale * w_scale)
//    [-> Add(bias const)] becomes DequantizeLinear(x) -> Conv(W dequantized once [, bias]): a
//    float Conv on the fast kernels, the activations still quantized.
//  - DQ(a), DQ(b) -> Add / Mul [-> Relu / Clip] -> Q becomes com.microsoft QLinearAdd /
//    QLinearMul (same 8-bit type on all three).
//  - DQ(x) -> MaxPool -> Q and DQ(x1), DQ(x2).. -> Concat -> Q with equal parameters become
//    MaxPool / Concat on the integers (exact).
//  - DequantizeLinear with constant inputs that is still read is evaluated once into a float
//    initializer (float ops fed by quantized weights do not dequantize them on every run).
//  - Q and DQ nodes nobody reads any more are removed, and so are unused initializers.
// Per-tensor activation parameters only (scalar constant scale and zero point); anything else
// stays as it is. Integer results may differ from the float QDQ definition by one quantization
// step (integer accumulation, XNNPACK's requantization); the reference path keeps the QDQ form.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace xonnx {

struct QdqFusionStats {
  int signed_activations = 0;  // Q -> DQ pairs moved from uint8 to int8
  int conv = 0;                // QLinearConv made
  int gemm = 0;                // com.microsoft QGemm made
  int matmul = 0;              // QLinearMatMul / MatMulIntegerToFloat made (QDQ or dynamic)
  int conv_integer = 0;        // dynamic ConvInteger made a float Conv on its dequantized input
  int binary = 0;              // QLinearAdd / QLinearMul made
  int max_pool = 0;            // MaxPool moved onto integers
  int concat = 0;              // Concat moved onto integers
  int activations = 0;         // Relu / Clip folded into a Q's saturation
  int folded_dequantize = 0;   // constant DequantizeLinear evaluated at creation
  int total() const {
    return signed_activations + conv + gemm + matmul + conv_integer + binary + max_pool + concat + activations +
           folded_dequantize;
  }
};

// Rewrites `graph` (the main graph; subgraphs are left alone). Never fails on a model it does
// not understand: such nodes stay as they are.
Result<QdqFusionStats> apply_qdq_fusion(Graph& graph, const std::map<std::string, int64_t>& opset_imports);

// True when QuantizeLinear(scale, zero_point) of type [qmin, qmax] gives the same codes for x
// and for clamp(x, lo, hi): the Q saturates at or inside the clamp, so Relu / Clip before it
// is redundant. Shared with the converter, which folds the same activations away.
bool saturation_implies(float lo, float hi, float scale, int32_t zero_point, int32_t qmin, int32_t qmax);

}  // namespace xonnx
