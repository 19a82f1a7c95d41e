// The graph-pass interface shared by session creation and the converter: every optimization is
// a function Model -> Model (in place) that reports whether it changed anything. The pipeline
// (pipeline.h) runs a table of them to a fixed point and records per-pass statistics. Session
// creation runs session_pass_list() (pass_list.cc); `xonnx convert` runs its own table of the
// same functions plus the converter-only ones (converter/pass_list.cc).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace xonnx {
namespace passes {

// `xonnx convert --genai`: the passes that turn a TorchScript decoder export into ONNX Runtime
// GenAI's form (RMSNorm, rotary and attention fusions; docs/converter.md). Converter-only
// passes; a table entry with genai_only runs only when enabled.
struct GenaiOptions {
  bool enabled = false;
  // Positions to tabulate for rotary tables computed in the graph (and the KV buffers' length);
  // 0: unknown (gathered tables give their own row count).
  int64_t context_length = 0;
};

// How much a pipeline does. Session creation: none / basic / all (SessionOptions); the
// converter's --level 0 / 1 / 2 select the same numbers in its own table.
enum class OptLevel : int { kNone = 0, kBasic = 1, kAll = 2 };
const char* opt_level_name(OptLevel level);  // "none", "basic", "all"
// Parses "none" / "basic" / "all" (and "0" / "1" / "2"); an error names the accepted values.
Result<OptLevel> parse_opt_level(const std::string& text);

struct PassOptions {
  // 0: nothing runs; 1: clean-up passes; 2: also the fusions (per table entry: min_level).
  int level = 2;
  // A folded tensor larger than this is left computed at run time (reported).
  int64_t fold_size_limit_bytes = 16 << 20;
  // Session creation: a Cast of a constant initializer that nothing else reads (a weight stored
  // as float16) folds up to this size instead: left computed, it would convert the whole weight
  // on every run, into a tensor of the same size. 0: no exception (the converter's files).
  int64_t cast_fold_limit_bytes = 0;
  // dedup-weights compares initializers up to this size (session creation: small constants only).
  int64_t dedup_max_bytes = INT64_MAX;
  // Session creation: the session runs the optimized kernels, so rewrites into forms only they
  // run well apply (absorb-weight-transposes: the reference FusedMatMul transposes per run).
  bool own_kernels = false;
  GenaiOptions genai;
};

struct ShapeFacts;  // shape_inference.h

// What a pass tells the report besides the counts the pipeline measures itself.
struct PassContext {
  const PassOptions& options;
  std::vector<std::string> notes;     // e.g. "merged 'lm_head.weight' into 'wte' (6.0 MB)"
  std::vector<std::string> warnings;  // e.g. "not folded: node 'x' (Tile) output 80 MB > limit"
  // Why a candidate was left alone ("attention at node 'x' not fused: the scale is not a
  // constant"): a property of the graph the pass saw, so the report keeps the last run's only.
  std::vector<std::string> diagnostics;
  int64_t bytes_saved = 0;  // dedup: bytes of initializers merged away

  // The shape facts of `model` as the pass received it, inferred on first use. run_pipeline hands
  // them on to the next passes until one reports a change, so a pass must read them before it
  // edits the graph, and must report every edit.
  std::shared_ptr<const ShapeFacts> shapes;

  explicit PassContext(const PassOptions& o) : options(o) {}
  const ShapeFacts& shape_facts(const Model& model);
  void note(std::string s) { notes.push_back(std::move(s)); }
  void warn(std::string s) { warnings.push_back(std::move(s)); }
  void diagnose(std::string s) { diagnostics.push_back(std::move(s)); }
};

// Returns true when the model changed. An error stops the pipeline (the model may be half
// rewritten: callers discard it).
using PassFn = Result<bool> (*)(Model& model, PassContext& ctx);

struct PassDef {
  const char* name;  // "constant-folding": shown in reports and `--passes` lists
  int min_level;     // runs when options.level >= min_level
  PassFn run;
  bool genai_only = false;  // runs only with options.genai.enabled
};

// The passes session creation runs, in order (runtime/passes/pass_list.cc): basic = folding,
// no-op and Identity removal, merging equal small constants, CSE, DCE; all = also BatchNorm folding and the MatMul+Add,
// LayerNorm and GELU fusions.
const std::vector<PassDef>& session_pass_list();

}  // namespace passes
}  // namespace xonnx
