// The passes session creation runs (SessionOptions::optimization), in order. The converter runs
// the same functions from converter/pass_list.cc. Part of the graph-pass library.
#include <algorithm>

#include "runtime/passes/pass.h"
#include "runtime/passes/passes.h"
#include "runtime/passes/session_passes.h"
#include "runtime/passes/shape_inference.h"

namespace xonnx {
namespace passes {

const std::vector<PassDef>& session_pass_list() {
  static const std::vector<PassDef> passes = {
      {"constants-to-initializers", 1, constants_to_initializers},
      {"float16-in-float", 1, compute_float16_in_float},
      {"absorb-weight-transposes", 2, absorb_weight_transposes},
      {"constant-folding", 1, constant_folding},
      {"remove-noop", 1, remove_noop},
      {"lower-einsum", 2, lower_einsum},
      {"transpose-reshape-pairs", 1, collapse_transpose_reshape_pairs},
      {"fuse-batchnorm", 2, fuse_batchnorm},
      {"fuse-conv-scale-bias", 2, fuse_conv_scale_bias},
      {"lower-3d", 2, lower_3d},
      {"split-sliced-projections", 2, split_sliced_projections},
      {"narrow-selected-rows", 2, narrow_selected_rows},
      {"fuse-matmul-add", 2, fuse_matmul_add_any_rank},
      {"fuse-attention", 2, fuse_attention},
      {"fuse-matmul-scale", 2, fuse_matmul_scale},
      {"absorb-runtime-transposes", 2, absorb_runtime_transposes},
      {"fuse-layernorm", 2, fuse_layernorm_any_opset},
      {"fuse-rms-norm", 2, fuse_rms_norm},
      {"fuse-skip-rms-norm", 2, fuse_skip_rms_norm},
      {"fuse-gelu", 2, fuse_gelu},
      {"fuse-hardswish", 2, fuse_hardswish},
      {"fuse-pad", 2, fuse_pad},
      {"reorder-avgpool-conv", 2, reorder_avgpool_conv},
      {"crop-conv-taps", 2, crop_conv_taps},
      {"dedup-weights", 1, dedup_weights},
      {"cse", 1, common_subexpression_elimination},
      {"dead-code", 1, dead_code_elimination},
  };
  return passes;
}

namespace {
// Session creation merges equal small constants only (the per-layer copies of shape arithmetic
// constants torch exports), so that CSE merges what reads them; comparing large weights would
// page in mapped files for little gain at run time (the converter merges those).
constexpr int64_t kSessionDedupMaxBytes = 4096;
}  // namespace

bool graph_passes_built() { return true; }

Result<PipelineResult> optimize_for_session(Model& model, OptLevel level, int64_t fold_size_limit_bytes,
                                            bool own_kernels) {
  if (level == OptLevel::kNone) return PipelineResult{};
  PassOptions options;
  options.own_kernels = own_kernels;
  options.level = static_cast<int>(level);
  options.fold_size_limit_bytes = std::min(options.fold_size_limit_bytes, fold_size_limit_bytes);
  options.cast_fold_limit_bytes = fold_size_limit_bytes;
  options.dedup_max_bytes = kSessionDedupMaxBytes;
  XONNX_ASSIGN_OR_RETURN(PipelineResult result, run_pipeline(model, session_pass_list(), options));
  // The inferred shapes go into value_info, where kernels read the static ones at creation
  // (KernelInit::static_input_shape): a 3x3 Conv packs the Winograd tiles its map will take.
  write_value_info(model.graph, result.shapes ? *result.shapes : infer_shapes(model));
  return result;
}

}  // namespace passes
}  // namespace xonnx
