// The converter-only passes, one function each (converter/passes/<name>.cc); the structural
// passes both the converter and session creation run are in runtime/passes/passes.h. The order
// the converter runs them in is the table in converter/pass_list.cc.
#pragma once

#include "runtime/passes/pass.h"
#include "runtime/passes/passes.h"
#include "runtime/passes/fusion_view.h"
#include "runtime/passes/node_eval.h"
#include "runtime/passes/pipeline.h"
#include "runtime/passes/shape_inference.h"

namespace xonnx {
namespace convert {

// The pass library's names the converter uses everywhere.
using passes::all_known;
using passes::count_model;
using passes::dims_equal;
using passes::evaluate_node;
using passes::FusionView;
using passes::infer_shapes;
using passes::ShapeFacts;
using passes::type_info_equal;
using passes::write_value_info;
using passes::GenaiOptions;
using passes::ModelCounts;
using passes::op_histogram;
using passes::PassContext;
using passes::PassDef;
using passes::PassStats;
using passes::PipelineResult;
using passes::ProgressFn;
using passes::run_pipeline;
using passes::dedup_weights;

// The pipeline's options plus what only the writer reads.
struct ConvertOptions : passes::PassOptions {
  // Write every initializer to OUT's .data file (forced above 2 GB of protobuf).
  bool external_data = false;
};

Result<bool> inline_functions_pass(Model& model, PassContext& ctx);  // inline functions, drop unused imports
Result<bool> infer_shapes_pass(Model& model, PassContext& ctx);      // writes inferred value_info

// --genai only (ORT GenAI's decoder form; docs/converter.md), with passes::fuse_rms_norm and
// passes::fuse_skip_rms_norm, which session creation runs too:
Result<bool> fuse_rotary_embedding(Model& model, PassContext& ctx);  // rotate-half / interleaved -> RotaryEmbedding
Result<bool> fuse_group_query_attention(Model& model, PassContext& ctx);  // attention + KV cache -> GroupQueryAttention

// The converter's table: the runtime's structural passes plus the ones above.
const std::vector<PassDef>& pass_list();

}  // namespace convert
}  // namespace xonnx
