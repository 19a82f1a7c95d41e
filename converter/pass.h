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

struct ConvertOptions {
  // 0: write the model back unchanged (after validation); 1: clean-up passes (inline,
  // constants to initializers, identity/no-op removal, DCE, CSE, dedup); 2: also constant
  // folding and fusions.
  int level = 2;
  // A folded tensor larger than this is left computed at run time (reported).
  int64_t fold_size_limit_bytes = 16 << 20;
  // Write every initializer to OUT's .data file (forced above 2 GB of protobuf).
  bool external_data = false;
};

// What a pass tells the report besides the counts the pipeline measures itself.
struct PassContext {
  const ConvertOptions& options;
  std::vector<std::string> notes;     // e.g. "merged 'lm_head.weight' into 'wte' (6.0 MB)"
  std::vector<std::string> warnings;  // e.g. "not folded: node 'x' (Tile) output 80 MB > limit"
  int64_t bytes_saved = 0;            // dedup: bytes of initializers merged away

  explicit PassContext(const ConvertOptions& o) : options(o) {}
  void note(std::string s) { notes.push_back(std::move(s)); }
  void warn(std::string s) { warnings.push_back(std::move(s)); }
};

// Returns true when the model changed. Errors abort the conversion (nothing is written).
using PassFn = Result<bool> (*)(Model& model, PassContext& ctx);

struct PassDef {
  const char* name;   // "constant-folding": shown in the report and `--passes` lists
  int min_level;      // runs when options.level >= min_level
  PassFn run;
};

// The passes in the order the pipeline applies them (converter/pass_list.cc).
const std::vector<PassDef>& pass_list();

}  // namespace convert
}  // namespace xonnx
