// The converter's passes, in the order the pipeline applies them: the runtime's structural
// passes (runtime/passes, the same code session creation runs) and the converter-only ones.
// Levels are the converter's: 1 = clean-up, 2 = also folding and fusions.
#include "converter/passes/passes.h"

namespace xonnx {
namespace convert {

const std::vector<PassDef>& pass_list() {
  static const std::vector<PassDef> table = {
      {"inline-functions", 1, inline_functions_pass},
      {"constants-to-initializers", 1, passes::constants_to_initializers},
      {"constant-folding", 2, passes::constant_folding},
      {"remove-noop", 1, passes::remove_noop},
      {"transpose-reshape-pairs", 1, passes::collapse_transpose_reshape_pairs},
      {"fuse-batchnorm", 2, passes::fuse_batchnorm},
      {"fuse-conv-scale-bias", 2, passes::fuse_conv_scale_bias},
      {"narrow-selected-rows", 2, passes::narrow_selected_rows},
      {"fuse-matmul-add", 2, passes::fuse_matmul_add},
      {"fuse-layernorm", 2, passes::fuse_layernorm},
      {"fuse-gelu", 2, passes::fuse_gelu},
      {"fuse-hardswish", 2, passes::fuse_hardswish},
      {"fuse-pad", 2, passes::fuse_pad},
      {"reorder-avgpool-conv", 2, passes::reorder_avgpool_conv},
      {"crop-conv-taps", 2, passes::crop_conv_taps},
      {"cse", 1, passes::common_subexpression_elimination},
      {"dedup-weights", 1, dedup_weights},
      {"dead-code", 1, passes::dead_code_elimination},
      // --genai: after the clean-up, so they see the folded graph in the first round.
      {"fuse-rms-norm", 2, passes::fuse_rms_norm, true},
      {"fuse-skip-rms-norm", 2, passes::fuse_skip_rms_norm, true},
      {"fuse-rotary-embedding", 2, fuse_rotary_embedding, true},
      {"fuse-group-query-attention", 2, fuse_group_query_attention, true},
      // Last: the value_info the writer emits describes the final graph.
      {"infer-shapes", 1, infer_shapes_pass},
  };
  return table;
}

}  // namespace convert
}  // namespace xonnx
