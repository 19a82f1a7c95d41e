// int8 static with a cosine target (QuantizeOptions::target_cosine, `--target-cosine`): the
// layer-wise sensitivity search of post-training quantization toolkits.
//   1. One calibration of every candidate's activations, which every trial reuses.
//   2. The model with every candidate quantized; if its outputs reach the target, that is it.
//   3. Per candidate, the model with it alone quantized: its cosine ranks what it costs.
//   4. A binary search for the fewest of the costliest candidates that, kept in float, bring the
//      outputs to the target (keeping more in float is taken to cost no accuracy).
// Each trial builds the quantized model with ranges from the first half of the calibration
// samples and runs it in the runtime over the other half against the float model's outputs:
// 1 + N + log2(N) trials for N candidates.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <set>

#include "converter/quantize/calibration.h"
#include "converter/quantize/quant_verify.h"
#include "converter/quantize/quantize_internal.h"
#include "runtime/exec/session.h"
#include "runtime/onnx/functions.h"

namespace xonnx {
namespace convert {
namespace {

using SampleOutputs = std::vector<std::vector<Value>>;

Result<SampleOutputs> run_samples(Model model, const std::vector<NamedValues>& samples, const QuantizeOptions& opt) {
  XONNX_RETURN_IF_ERROR(inline_functions(model));
  SessionOptions so;
  so.num_threads = std::max(1, opt.search_threads);
  XONNX_ASSIGN_OR_RETURN(auto session, Session::create_from_model(std::move(model), so));
  SampleOutputs outputs;
  for (size_t s = 0; s < samples.size(); ++s) {
    auto out = session->run_named(samples[s]);
    if (!out.is_ok()) return out.status().with_context("calibration sample " + std::to_string(s) + ": ");
    outputs.push_back(std::move(*out));
  }
  return outputs;
}

// The smallest cosine similarity over the float outputs of every sample (NaN counts as 0).
double smallest_cosine(const SampleOutputs& got, const SampleOutputs& want) {
  double worst = 1.0;
  for (size_t s = 0; s < want.size() && s < got.size(); ++s) {
    for (size_t i = 0; i < want[s].size() && i < got[s].size(); ++i) {
      if (!want[s][i].is_tensor() || !dtype_is_float(want[s][i].tensor().dtype())) continue;
      const OutputAgreement a = compare_outputs("", got[s][i], want[s][i], 0.0);
      worst = std::min(worst, a.error.empty() && std::isfinite(a.cosine) ? a.cosine : 0.0);
    }
  }
  return worst;
}

// Candidates are kept in float by name: one without a name, or with an earlier node's, gets a
// name no other node has. Returns the candidates' names.
std::vector<std::string> name_uniquely(Graph& g, const std::vector<size_t>& candidates) {
  std::map<std::string, size_t> first;  // each name's first node
  for (size_t i = 0; i < g.nodes.size(); ++i) first.emplace(g.nodes[i].name, i);
  std::vector<std::string> names;
  for (size_t i : candidates) {
    Node& n = g.nodes[i];
    if (n.name.empty() || first[n.name] < i) {
      std::string name = (n.name.empty() ? n.op_type : n.name) + "_" + std::to_string(i);
      while (first.count(name)) name += "_";
      n.name = name;
      first.emplace(name, i);
    }
    names.push_back(n.name);
  }
  return names;
}

}  // namespace

Status quantize_int8_static_to_cosine(Model& model, const QuantizeOptions& opt, QuantizeResult& result) {
  const auto start = std::chrono::steady_clock::now();
  CosineSearch& search = result.search;
  search.ran = true;
  search.target = opt.target_cosine;
  const std::vector<std::string> candidates = name_uniquely(model.graph, int8_static_targets(model, opt));
  search.candidates = static_cast<int64_t>(candidates.size());
  if (candidates.empty()) return quantize_int8_static(model, opt, result);

  // Trials are judged on samples their ranges were not measured on, as a deployed model's inputs
  // are: min-max ranges hold every value of the samples they came from, so judged on those, the
  // clipping of unseen inputs' larger values goes unnoticed (deeplabv3: 0.990 on them, 0.977 on
  // a new input). The written model's ranges come from every sample.
  QuantizeOptions fit = opt;
  std::vector<NamedValues> held_out = opt.calibration;
  if (opt.calibration.size() >= 2) {
    const auto half = static_cast<std::ptrdiff_t>((opt.calibration.size() + 1) / 2);
    fit.calibration.assign(opt.calibration.begin(), opt.calibration.begin() + half);
    held_out.assign(opt.calibration.begin() + half, opt.calibration.end());
  }
  search.held_out_samples = static_cast<int64_t>(held_out.size());
  XONNX_ASSIGN_OR_RETURN(const SampleOutputs want, run_samples(clone_model(model), held_out, opt));
  XONNX_ASSIGN_OR_RETURN(const Calibration cal, calibrate_int8_static(model, fit));
  auto with_float = [&](const std::vector<std::string>& keep_float) {
    QuantizeOptions o = opt;
    o.exclude.insert(o.exclude.end(), keep_float.begin(), keep_float.end());
    return o;
  };
  auto trial = [&](const std::vector<std::string>& keep_float) -> Result<double> {
    Model m = clone_model(model);
    QuantizeResult unused;
    XONNX_RETURN_IF_ERROR(quantize_int8_static(m, with_float(keep_float), unused, &cal));
    ++search.trials;
    XONNX_ASSIGN_OR_RETURN(const SampleOutputs got, run_samples(std::move(m), held_out, opt));
    return smallest_cosine(got, want);
  };

  XONNX_ASSIGN_OR_RETURN(search.cosine_all_quantized, trial({}));
  search.cosine = search.cosine_all_quantized;
  std::vector<std::string> keep;
  if (search.cosine_all_quantized < opt.target_cosine) {
    std::vector<CosineSearch::Kept> alone;  // per candidate, the cosine with it alone quantized
    for (size_t i = 0; i < candidates.size(); ++i) {
      std::vector<std::string> others = candidates;
      others.erase(others.begin() + static_cast<std::ptrdiff_t>(i));
      XONNX_ASSIGN_OR_RETURN(const double c, trial(others));
      alone.push_back({candidates[i], c});
    }
    std::stable_sort(alone.begin(), alone.end(), [](const CosineSearch::Kept& a, const CosineSearch::Kept& b) {
      return a.cosine_alone < b.cosine_alone;
    });
    auto costliest = [&](size_t k) {
      std::vector<std::string> names;
      for (size_t i = 0; i < k; ++i) names.push_back(alone[i].node);
      return names;
    };
    // lo fails the target (all quantized); hi meets it (all in float is the float model).
    size_t lo = 0, hi = alone.size();
    double hi_cosine = 1.0;
    while (hi - lo > 1) {
      const size_t mid = lo + (hi - lo) / 2;
      XONNX_ASSIGN_OR_RETURN(const double c, trial(costliest(mid)));
      if (c >= opt.target_cosine) {
        hi = mid;
        hi_cosine = c;
      } else {
        lo = mid;
      }
    }
    keep = costliest(hi);
    search.cosine = hi_cosine;
    search.kept_float.assign(alone.begin(), alone.begin() + static_cast<std::ptrdiff_t>(hi));
  }
  XONNX_RETURN_IF_ERROR(quantize_int8_static(model, with_float(keep), result));
  // The nodes the search kept say so in the skipped list (quantize_int8_static saw an --exclude).
  const std::set<std::string> kept(keep.begin(), keep.end());
  std::set<std::string> kept_described;
  for (const Node& n : model.graph.nodes) {
    if (kept.count(n.name)) kept_described.insert(n.describe());
  }
  for (SkippedNode& s : result.skipped) {
    if (kept_described.count(s.node)) s.why = "kept in float for --target-cosine";
  }
  search.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return Status::ok();
}

}  // namespace convert
}  // namespace xonnx
