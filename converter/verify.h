// Numerical comparison of two models on the same inputs (original vs converted, or any
// two models with the same input and output names), in the runtime: per output max abs / max
// rel difference and a histogram over torch.onnx verification's bins; optionally every value
// name both graphs compute, naming the first node (in the second model's order) that diverges.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/core/value.h"
#include "runtime/ir/graph.h"
#include "runtime/passes/pass.h"

namespace xonnx {
namespace convert {

// Bin edges of torch's verification histograms: [0, 1e-6), [1e-6, 1e-5), ... [10, 1e6).
constexpr std::array<double, 10> kDiffBinEdges = {0, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10, 1e6};
constexpr size_t kDiffBins = kDiffBinEdges.size() - 1;

struct DiffHistogram {
  std::array<int64_t, kDiffBins> counts{};
  int64_t beyond = 0;  // >= 1e6, Inf or NaN (NaN in one model only)
};

struct ValueDiff {
  std::string name;
  std::string error;  // non-empty: not comparable (missing, dtype/shape/kind differs)
  int64_t elements = 0;
  double max_abs = 0;
  double max_rel = 0;  // |a - b| / |a| with a from the first model; 0/0 counts as 0
  DiffHistogram abs_hist, rel_hist;
  bool close = true;  // every element within atol + rtol * |a| (and no error)
};

struct VerifyOptions {
  bool intermediates = false;  // also compare value names both main graphs compute
  double rtol = 1e-4;
  double atol = 1e-5;
  int num_threads = 1;
  // The sessions' optimization level (`xonnx verify --optimize`). kNone by default: each file
  // runs as written, so the comparison shows what the conversion changed.
  passes::OptLevel optimization = passes::OptLevel::kNone;
};

struct VerifyResult {
  std::vector<ValueDiff> outputs;        // the first model's outputs, in order
  std::vector<ValueDiff> intermediates;  // shared values, in the second model's node order
  std::string first_divergent_node;      // "node 'x' (Conv)" of the second model, or ""
  std::string first_divergent_value;
  bool ok() const;  // all outputs close
};

using NamedValues = std::vector<std::pair<std::string, Value>>;

// Runs `m` (functions inlined here) on the values of `inputs` named like its graph inputs;
// `which` names the model in errors ("original", "second model"). The session runs at
// `optimization` (kNone: the graph as written).
Result<std::vector<Value>> run_model(Model m, const NamedValues& inputs, int num_threads, const char* which,
                                     passes::OptLevel optimization = passes::OptLevel::kNone);

// Both models as loaded (functions may still be present: they are inlined here).
Result<VerifyResult> verify_models(Model a, Model b, const NamedValues& inputs, const VerifyOptions& options);

// Compares two values (tensors or sequences of tensors) element-wise.
ValueDiff compare_values(const std::string& name, const Value& a, const Value& b, const VerifyOptions& options);

// The markdown section: outputs table, histograms, intermediates summary.
std::string verify_markdown(const VerifyResult& r, const VerifyOptions& options);

}  // namespace convert
}  // namespace xonnx
