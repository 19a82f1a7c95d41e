#include "converter/verify.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "runtime/exec/session.h"
#include "runtime/onnx/functions.h"

namespace xonnx {
namespace convert {
namespace {

void add_to_histogram(DiffHistogram& h, double v) {
  if (!(v < kDiffBinEdges.back())) {  // also NaN
    ++h.beyond;
    return;
  }
  size_t bin = 0;
  while (bin + 1 < kDiffBins && v >= kDiffBinEdges[bin + 1]) ++bin;
  ++h.counts[bin];
}

void compare_tensors(const Tensor& a, const Tensor& b, const VerifyOptions& opt, ValueDiff& d) {
  if (a.dtype() != b.dtype()) {
    d.error = std::string("dtype ") + dtype_name(a.dtype()) + " vs " + dtype_name(b.dtype());
    return;
  }
  if (a.shape() != b.shape()) {
    d.error = "shape " + shape_to_string(a.shape()) + " vs " + shape_to_string(b.shape());
    return;
  }
  const int64_t n = a.numel();
  d.elements += n;
  if (a.dtype() == DataType::kString) {
    for (int64_t i = 0; i < n; ++i) {
      const bool same = a.string_data()[i] == b.string_data()[i];
      const double diff = same ? 0.0 : INFINITY;
      d.max_abs = std::max(d.max_abs, diff);
      d.max_rel = std::max(d.max_rel, diff);
      add_to_histogram(d.abs_hist, diff);
      add_to_histogram(d.rel_hist, diff);
      if (!same) d.close = false;
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    const double x = a.get_as_double(i);
    const double y = b.get_as_double(i);
    double diff, rel;
    if (std::isnan(x) || std::isnan(y)) {
      diff = rel = (std::isnan(x) && std::isnan(y)) ? 0.0 : NAN;
    } else if (x == y) {  // also equal infinities
      diff = rel = 0.0;
    } else {
      diff = std::fabs(x - y);
      rel = x == 0 ? INFINITY : diff / std::fabs(x);
    }
    if (std::isnan(diff)) {
      d.max_abs = d.max_rel = NAN;
    } else if (!std::isnan(d.max_abs)) {
      d.max_abs = std::max(d.max_abs, diff);
      d.max_rel = std::max(d.max_rel, rel);
    }
    add_to_histogram(d.abs_hist, diff);
    add_to_histogram(d.rel_hist, rel);
    if (diff != 0 && !(diff <= opt.atol + opt.rtol * std::fabs(x))) d.close = false;
  }
}

// Names the main graph's nodes compute, in node order.
std::vector<std::string> computed_values(const Graph& g) {
  std::vector<std::string> names;
  for (const Node& n : g.nodes) {
    for (const std::string& o : n.outputs) {
      if (!o.empty()) names.push_back(o);
    }
  }
  return names;
}

void expose_as_outputs(Graph& g, const std::vector<std::string>& names) {
  std::set<std::string> already;
  for (const ValueInfo& v : g.outputs) already.insert(v.name);
  for (const std::string& n : names) {
    if (already.insert(n).second) g.outputs.push_back(ValueInfo{n, {}});
  }
}

}  // namespace

Result<std::vector<Value>> run_model(Model m, const NamedValues& inputs, int num_threads, const char* which,
                                     passes::OptLevel optimization) {
  Status s = inline_functions(m);
  if (!s.is_ok()) return s.with_context(std::string(which) + ": ");
  SessionOptions so;
  so.num_threads = num_threads;
  so.optimization = optimization;
  auto session = Session::create_from_model(std::move(m), so);
  if (!session.is_ok()) return session.status().with_context(std::string(which) + ": ");
  NamedValues feed;
  for (const ValueInfo& in : (*session)->inputs()) {
    bool found = false;
    for (const auto& [name, value] : inputs) {
      if (name == in.name) {
        feed.emplace_back(name, value);
        found = true;
      }
    }
    if (!found) return invalid_argument(which, ": no value given for input '", in.name, "'");
  }
  auto out = (*session)->run_named(feed);
  if (!out.is_ok()) return out.status().with_context(std::string(which) + ": ");
  return std::move(out).value();
}

namespace {

std::string three_digits(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3g", v);
  return buf;
}

}  // namespace

bool VerifyResult::ok() const {
  for (const ValueDiff& d : outputs) {
    if (!d.close) return false;
  }
  return true;
}

ValueDiff compare_values(const std::string& name, const Value& a, const Value& b, const VerifyOptions& options) {
  ValueDiff d;
  d.name = name;
  if (a.kind() != b.kind()) {
    d.error = "kinds differ (tensor / sequence / none)";
  } else if (a.is_tensor()) {
    compare_tensors(a.tensor(), b.tensor(), options, d);
  } else if (a.is_sequence()) {
    const auto& x = a.sequence().items;
    const auto& y = b.sequence().items;
    if (x.size() != y.size()) {
      d.error = "sequence lengths " + std::to_string(x.size()) + " vs " + std::to_string(y.size());
    }
    for (size_t i = 0; i < x.size() && d.error.empty(); ++i) compare_tensors(x[i], y[i], options, d);
  }
  if (!d.error.empty()) d.close = false;
  return d;
}

Result<VerifyResult> verify_models(Model a, Model b, const NamedValues& inputs, const VerifyOptions& options) {
  VerifyResult result;
  const std::vector<ValueInfo> outputs_a = a.graph.outputs;
  std::vector<std::string> shared;
  if (options.intermediates) {
    std::set<std::string> in_a;
    for (const std::string& n : computed_values(a.graph)) in_a.insert(n);
    std::set<std::string> outputs;
    for (const ValueInfo& v : outputs_a) outputs.insert(v.name);
    for (const std::string& n : computed_values(b.graph)) {
      if (in_a.count(n) && !outputs.count(n)) shared.push_back(n);
    }
  }
  // Which node of `b` computes each shared value, for naming the first divergence.
  std::map<std::string, std::string> producer_b;
  for (const Node& n : b.graph.nodes) {
    for (const std::string& o : n.outputs) producer_b.emplace(o, n.describe());
  }
  std::vector<std::string> wanted;
  for (const ValueInfo& v : outputs_a) wanted.push_back(v.name);
  wanted.insert(wanted.end(), shared.begin(), shared.end());
  expose_as_outputs(a.graph, shared);
  expose_as_outputs(b.graph, shared);
  std::vector<std::string> b_names;
  for (const ValueInfo& v : b.graph.outputs) b_names.push_back(v.name);
  XONNX_ASSIGN_OR_RETURN(std::vector<Value> va,
                         run_model(std::move(a), inputs, options.num_threads, "first model", options.optimization));
  XONNX_ASSIGN_OR_RETURN(std::vector<Value> vb,
                         run_model(std::move(b), inputs, options.num_threads, "second model", options.optimization));
  for (size_t i = 0; i < wanted.size() && i < va.size(); ++i) {
    const size_t j = static_cast<size_t>(std::find(b_names.begin(), b_names.end(), wanted[i]) - b_names.begin());
    ValueDiff d;
    if (j >= vb.size()) {
      d.name = wanted[i];
      d.error = "the second model has no output '" + wanted[i] + "'";
      d.close = false;
    } else {
      d = compare_values(wanted[i], va[i], vb[j], options);
    }
    (i < outputs_a.size() ? result.outputs : result.intermediates).push_back(std::move(d));
  }
  // `shared` is in the second model's node order: the first divergent value names the node.
  for (const ValueDiff& d : result.intermediates) {
    if (d.close) continue;
    result.first_divergent_value = d.name;
    result.first_divergent_node = producer_b[d.name];
    break;
  }
  return result;
}

std::string verify_markdown(const VerifyResult& r, const VerifyOptions& options) {
  std::ostringstream os;
  os << "| output | elements | max abs diff | max rel diff | within rtol " << three_digits(options.rtol) << ", atol "
     << three_digits(options.atol) << " |\n|---|---:|---:|---:|---|\n";
  for (const ValueDiff& d : r.outputs) {
    if (!d.error.empty()) {
      os << "| `" << d.name << "` | | | | **no**: " << d.error << " |\n";
      continue;
    }
    os << "| `" << d.name << "` | " << d.elements << " | " << three_digits(d.max_abs) << " | "
       << three_digits(d.max_rel) << " | " << (d.close ? "yes" : "**no**") << " |\n";
  }
  os << "\nAbsolute differences per output (torch.onnx verification bins):\n\n| output |";
  for (size_t b = 0; b < kDiffBins; ++b) {
    os << " [" << three_digits(kDiffBinEdges[b]) << ", " << three_digits(kDiffBinEdges[b + 1]) << ") |";
  }
  os << " ≥1e6/NaN |\n|---|";
  for (size_t b = 0; b <= kDiffBins; ++b) os << "---:|";
  os << "\n";
  for (const ValueDiff& d : r.outputs) {
    if (!d.error.empty()) continue;
    os << "| `" << d.name << "` |";
    for (int64_t c : d.abs_hist.counts) os << " " << c << " |";
    os << " " << d.abs_hist.beyond << " |\n";
  }
  if (!r.intermediates.empty() || !r.first_divergent_value.empty()) {
    int64_t close = 0;
    for (const ValueDiff& d : r.intermediates) close += d.close ? 1 : 0;
    os << "\nIntermediates: " << r.intermediates.size() << " values computed by both models, " << close
       << " within tolerance.";
    if (!r.first_divergent_value.empty()) {
      os << " First divergence: value `" << r.first_divergent_value << "` from " << r.first_divergent_node
         << " of the second model.";
    }
    os << "\n";
  }
  return os.str();
}

}  // namespace convert
}  // namespace xonnx
