// Runs a pass table over a model to a fixed point and measures what each pass did.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/passes/pass.h"

namespace xonnx {
namespace passes {

// Sizes the report compares; nodes and initializers of subgraphs count too.
struct ModelCounts {
  int64_t nodes = 0;
  int64_t initializers = 0;
  int64_t initializer_bytes = 0;  // element bytes (string tensors: characters)
};
ModelCounts count_model(const Model& model);
// Node count per op ("Conv", "com.microsoft:MatMulNBits"), subgraphs included.
std::map<std::string, int64_t> op_histogram(const Model& model);

struct PassStats {
  std::string name;
  int runs = 0;
  int changed_runs = 0;
  ModelCounts before;  // before its first run
  ModelCounts after;   // `before` plus what every run of this pass added or removed
  double ms = 0;       // summed over rounds
  std::vector<std::string> notes;
  std::vector<std::string> warnings;
  std::vector<std::string> diagnostics;  // from its last run
  int64_t bytes_saved = 0;
};

struct PipelineResult {
  std::vector<PassStats> passes;  // the passes that ran, in table order
  int rounds = 0;
  bool reached_fixed_point = true;
  ModelCounts before, after;
  std::map<std::string, int64_t> ops_before, ops_after;
  std::vector<std::string> warnings;  // the pipeline's own (round cap)
  double ms = 0;
  // Shape inference over the final model, when the passes left one valid (else nullptr).
  std::shared_ptr<const ShapeFacts> shapes;
};

// Called before each pass runs: round (1-based), pass index and count within the round.
using ProgressFn = std::function<void(int round, size_t index, size_t count, const char* name)>;

constexpr int kMaxRounds = 8;

// Runs the passes of `table` with min_level <= options.level, in order, until a round changes
// nothing (or `max_rounds` rounds). An error from a pass names the pass and stops.
Result<PipelineResult> run_pipeline(Model& model, const std::vector<PassDef>& table, const PassOptions& options,
                                    const ProgressFn& progress = nullptr, int max_rounds = kMaxRounds);

}  // namespace passes
}  // namespace xonnx
