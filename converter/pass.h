// The converter's pass interface: every optimization is a function Model -> Model (in place)
// that reports whether it changed anything. The pipeline (pipeline.h) runs the table in
// pass_list.cc to a fixed point and records per-pass statistics for the report.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace xonnx {
namespace convert {

// `xonnx convert --genai`: the passes that turn a TorchScript decoder export into ONNX Runtime
// GenAI's form (RMSNorm, rotary and attention fusions; docs/converter.md).
struct GenaiOptions {
  bool enabled = false;
  // Positions to tabulate for rotary tables computed in the graph (and the KV buffers' length);
  // 0: unknown (gathered tables give their own row count).
  int64_t context_length = 0;
};

struct ConvertOptions {
  // 0: write the model back unchanged (after validation); 1: clean-up passes (inline,
  // constants to initializers, identity/no-op removal, DCE, CSE, dedup); 2: also constant
  // folding and fusions.
  int level = 2;
  // A folded tensor larger than this is left computed at run time (reported).
  int64_t fold_size_limit_bytes = 16 << 20;
  // Write every initializer to OUT's .data file (forced above 2 GB of protobuf).
  bool external_data = false;
  GenaiOptions genai;
};

// What a pass tells the report besides the counts the pipeline measures itself.
struct PassContext {
  const ConvertOptions& options;
  std::vector<std::string> notes;     // e.g. "merged 'lm_head.weight' into 'wte' (6.0 MB)"
  std::vector<std::string> warnings;  // e.g. "not folded: node 'x' (Tile) output 80 MB > limit"
  // Why a candidate was left alone ("attention at node 'x' not fused: the scale is not a
  // constant"): a property of the graph the pass saw, so the report keeps the last run's only.
  std::vector<std::string> diagnostics;
  int64_t bytes_saved = 0;            // dedup: bytes of initializers merged away

  explicit PassContext(const ConvertOptions& o) : options(o) {}
  void note(std::string s) { notes.push_back(std::move(s)); }
  void warn(std::string s) { warnings.push_back(std::move(s)); }
  void diagnose(std::string s) { diagnostics.push_back(std::move(s)); }
};

// Returns true when the model changed. Errors abort the conversion (nothing is written).
using PassFn = Result<bool> (*)(Model& model, PassContext& ctx);

struct PassDef {
  const char* name;   // "constant-folding": shown in the report and `--passes` lists
  int min_level;      // runs when options.level >= min_level
  PassFn run;
  bool genai_only = false;  // runs only with options.genai.enabled
};

// The passes in the order the pipeline applies them (converter/pass_list.cc).
const std::vector<PassDef>& pass_list();

}  // namespace convert
}  // namespace xonnx
