// Every converter pass, one function each (converter/passes/<name>.cc); the order they run in
// is the table in converter/pass_list.cc.
#pragma once

#include "converter/pass.h"

namespace xonnx {
namespace convert {

Result<bool> constants_to_initializers(Model& model, PassContext& ctx);  // Constant -> initializer
Result<bool> constant_folding(Model& model, PassContext& ctx);  // evaluate constant nodes + Shape chains
Result<bool> remove_noop(Model& model, PassContext& ctx);        // Identity, same-type Cast, same-shape Reshape...
Result<bool> infer_shapes_pass(Model& model, PassContext& ctx);  // writes inferred value_info
Result<bool> inline_functions_pass(Model& model, PassContext& ctx);  // inline functions, drop unused imports
Result<bool> collapse_transpose_reshape_pairs(Model& model, PassContext& ctx);  // Transpose∘Transpose, Reshape∘Reshape
Result<bool> fuse_batchnorm(Model& model, PassContext& ctx);     // BN into Conv/ConvTranspose/Gemm
Result<bool> fuse_matmul_add(Model& model, PassContext& ctx);    // 2-D MatMul+Add -> Gemm
Result<bool> fuse_layernorm(Model& model, PassContext& ctx);     // decomposed LN -> LayerNormalization
Result<bool> fuse_gelu(Model& model, PassContext& ctx);          // erf GELU -> Gelu / com.microsoft:Gelu
Result<bool> common_subexpression_elimination(Model& model, PassContext& ctx);  // duplicate nodes
Result<bool> dedup_weights(Model& model, PassContext& ctx);      // identical / transposed initializers
Result<bool> dead_code_elimination(Model& model, PassContext& ctx);  // dead nodes/initializers

// --genai only (ORT GenAI's decoder form; docs/converter.md):
Result<bool> fuse_rms_norm(Model& model, PassContext& ctx);       // RMSNorm -> SimplifiedLayerNormalization
Result<bool> fuse_skip_rms_norm(Model& model, PassContext& ctx);  // residual Add + it -> SkipSimplifiedLayerNormalization
Result<bool> fuse_rotary_embedding(Model& model, PassContext& ctx);  // rotate-half / interleaved -> RotaryEmbedding
Result<bool> fuse_group_query_attention(Model& model, PassContext& ctx);  // attention + KV cache -> GroupQueryAttention

}  // namespace convert
}  // namespace xonnx
