// The structural passes of the runtime's pass library, one function each
// (runtime/passes/<name>.cc). Session creation runs them from session_pass_list(); the
// converter from its own table (converter/pass_list.cc), with converter-only passes around them.
#pragma once

#include "runtime/passes/pass.h"

namespace xonnx {
namespace passes {

Result<bool> constants_to_initializers(Model& model, PassContext& ctx);  // Constant -> initializer
Result<bool> constant_folding(Model& model, PassContext& ctx);           // evaluate constant nodes + Shape chains
Result<bool> remove_noop(Model& model, PassContext& ctx);  // Identity, same-type Cast, same-shape Reshape...
Result<bool> collapse_transpose_reshape_pairs(Model& model, PassContext& ctx);  // Transpose∘Transpose, Reshape∘Reshape
Result<bool> fuse_batchnorm(Model& model, PassContext& ctx);                    // BN into Conv/ConvTranspose/Gemm
Result<bool> fuse_conv_scale_bias(Model& model, PassContext& ctx);              // constant Mul / Add into Conv
Result<bool> fuse_matmul_add(Model& model, PassContext& ctx);                   // 2-D MatMul+Add -> Gemm
Result<bool> fuse_matmul_add_any_rank(Model& model, PassContext& ctx);          // also N-D A, between Reshapes
Result<bool> compute_float16_in_float(Model& model, PassContext& ctx);  // float16 values as float32 (session only)
Result<bool> absorb_weight_transposes(Model& model, PassContext& ctx);  // Transpose(W) into transB (session only)
Result<bool> fuse_matmul_scale(Model& model, PassContext& ctx);         // MatMul * scalar -> FusedMatMul (session only)
Result<bool> absorb_runtime_transposes(Model& model, PassContext& ctx);  // MatMul(A, Transpose(X)) -> transB (session only)
// MatMul [+ bias] read only in column ranges by Slice / Split -> one per range (session only)
Result<bool> split_sliced_projections(Model& model, PassContext& ctx);
// Gather / Slice of rows -> Slices of the inputs of the row-wise ops before it (session only)
Result<bool> narrow_selected_rows(Model& model, PassContext& ctx);
Result<bool> lower_3d(Model& model, PassContext& ctx);      // 3-D Conv / MaxPool -> 2-D ones over frames (session only)
Result<bool> lower_einsum(Model& model, PassContext& ctx);  // 2-operand batched-matmul Einsum -> MatMul (session only)
Result<bool> fuse_attention(Model& model, PassContext& ctx);  // MatMul-Softmax-MatMul -> Attention (session only)
Result<bool> fuse_layernorm(Model& model, PassContext& ctx);  // decomposed LN -> LayerNormalization
// The same at any opset (session creation): below 17 the fused node carries opset 17 itself.
Result<bool> fuse_layernorm_any_opset(Model& model, PassContext& ctx);
// torch's decomposed RMSNorm -> SimplifiedLayerNormalization, and a residual Add before one ->
// com.microsoft SkipSimplifiedLayerNormalization: ORT's contrib ops, which the ONNX checker does
// not know (session creation; the converter with --genai only)
Result<bool> fuse_rms_norm(Model& model, PassContext& ctx);
Result<bool> fuse_skip_rms_norm(Model& model, PassContext& ctx);
Result<bool> fuse_gelu(Model& model, PassContext& ctx);       // erf GELU -> Gelu / com.microsoft:Gelu
Result<bool> fuse_hardswish(Model& model, PassContext& ctx);  // x * Clip(x + 3, 0, 6) / 6 -> x * HardSigmoid(x)
Result<bool> fuse_pad(Model& model, PassContext& ctx);  // zero Pad -> the pads of the Conv / AveragePool reading it
// AveragePool <-> 1x1 Conv, whichever order computes less (reorder_avgpool_conv.cc)
Result<bool> reorder_avgpool_conv(Model& model, PassContext& ctx);
Result<bool> crop_conv_taps(Model& model, PassContext& ctx);                    // drop Conv taps that only read padding
Result<bool> dedup_weights(Model& model, PassContext& ctx);                     // identical / transposed initializers
Result<bool> common_subexpression_elimination(Model& model, PassContext& ctx);  // duplicate nodes
Result<bool> dead_code_elimination(Model& model, PassContext& ctx);             // dead nodes/initializers

}  // namespace passes
}  // namespace xonnx
