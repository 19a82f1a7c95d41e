#include "converter/quantize/calibration.h"

#include <algorithm>
#include <cmath>

#include "runtime/exec/session.h"
#include "runtime/ir/graph_edit.h"
#include "runtime/onnx/functions.h"

namespace xonnx {
namespace convert {
namespace {

constexpr int kBins = 4096;

// Per name: the values' histogram over its min-max range (the second calibration pass).
struct Histogram {
  std::vector<int64_t> counts = std::vector<int64_t>(kBins, 0);
  int64_t total = 0;
};

// Narrows `r` to the central `percentile` % of the histogrammed values (still including 0).
Range clip_to_percentile(const Range& r, const Histogram& h, double percentile) {
  if (h.total == 0 || r.hi <= r.lo) return r;
  const double tail = static_cast<double>(h.total) * (100.0 - percentile) / 200.0;
  const double width = (static_cast<double>(r.hi) - r.lo) / kBins;
  double seen = 0;
  int lo_bin = 0;
  while (lo_bin < kBins - 1 && seen + h.counts[lo_bin] <= tail) seen += h.counts[lo_bin++];
  seen = 0;
  int hi_bin = kBins - 1;
  while (hi_bin > 0 && seen + h.counts[hi_bin] <= tail) seen += h.counts[hi_bin--];
  Range c;
  c.lo = std::min(0.0f, static_cast<float>(r.lo + lo_bin * width));
  c.hi = std::max(0.0f, static_cast<float>(r.lo + (hi_bin + 1) * width));
  return c;
}

// Adds the per-channel sums of `t` along `axis` (1 or -1) to `sums`, and the count per channel.
void add_channel_sums(const Tensor& t, int axis, std::vector<double>& sums, int64_t& count) {
  const int64_t rank = static_cast<int64_t>(t.rank());
  const int64_t a = axis < 0 ? rank - 1 : axis;
  if (a < 0 || a >= rank) return;
  const int64_t channels = t.dim(static_cast<size_t>(a));
  int64_t inner = 1;
  for (int64_t d = a + 1; d < rank; ++d) inner *= t.dim(static_cast<size_t>(d));
  if (sums.empty()) sums.assign(static_cast<size_t>(channels), 0.0);
  if (static_cast<int64_t>(sums.size()) != channels || channels == 0) return;
  const float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (std::isfinite(p[i])) sums[static_cast<size_t>((i / inner) % channels)] += p[i];
  }
  count += t.numel() / channels;
}

}  // namespace

// The min-max range per name, clipped to a percentile when asked (a second pass builds the
// histograms), and the channel means asked for.
Result<Calibration> calibrate(const Model& model, const std::set<std::string>& names,
                              const std::set<std::pair<std::string, int>>& mean_keys,
                              const std::vector<NamedValues>& samples, const QuantizeOptions& opt) {
  Model m = clone_model(model);
  XONNX_RETURN_IF_ERROR(inline_functions(m));
  std::set<std::string> outputs;
  for (const ValueInfo& v : m.graph.outputs) outputs.insert(v.name);
  for (const std::string& n : names) {
    if (!outputs.count(n)) m.graph.outputs.push_back(ValueInfo{n, {}});
  }
  std::vector<std::string> out_names;
  for (const ValueInfo& v : m.graph.outputs) out_names.push_back(v.name);
  SessionOptions so;
  so.optimization = passes::OptLevel::kNone;  // calibrate the graph being quantized, node for node
  XONNX_ASSIGN_OR_RETURN(auto session, Session::create_from_model(std::move(m), so));
  Calibration cal;
  std::map<std::string, Range>& ranges = cal.ranges;
  std::map<std::string, Histogram> histograms;
  std::map<std::pair<std::string, int>, int64_t> mean_counts;
  const int passes = opt.percentile_calibration && opt.percentile < 100.0 ? 2 : 1;
  for (int pass = 0; pass < passes; ++pass) {
    for (size_t s = 0; s < samples.size(); ++s) {
      auto out = session->run_named(samples[s]);
      if (!out.is_ok()) return out.status().with_context("calibration sample " + std::to_string(s) + ": ");
      for (size_t i = 0; i < out_names.size() && i < out->size(); ++i) {
        if (!names.count(out_names[i]) || !(*out)[i].is_tensor()) continue;
        const Tensor& t = (*out)[i].tensor();
        if (t.dtype() != DataType::kFloat) continue;
        Range& r = ranges[out_names[i]];
        const float* p = t.data<float>();
        if (pass == 0) {
          for (int64_t e = 0; e < t.numel(); ++e) {
            if (!std::isfinite(p[e])) continue;
            r.lo = std::min(r.lo, p[e]);
            r.hi = std::max(r.hi, p[e]);
          }
          for (int axis : {1, -1}) {
            const auto key = std::make_pair(out_names[i], axis);
            if (!mean_keys.count(key)) continue;
            add_channel_sums(t, axis, cal.means[key], mean_counts[key]);
            cal.shapes[key] = t.shape();
          }
          continue;
        }
        Histogram& h = histograms[out_names[i]];
        const double width = (static_cast<double>(r.hi) - r.lo) / kBins;
        if (!(width > 0)) continue;
        for (int64_t e = 0; e < t.numel(); ++e) {
          if (!std::isfinite(p[e])) continue;
          const int bin = std::min(kBins - 1, std::max(0, static_cast<int>((p[e] - r.lo) / width)));
          ++h.counts[static_cast<size_t>(bin)];
          ++h.total;
        }
      }
    }
  }
  for (auto& [name, h] : histograms) ranges[name] = clip_to_percentile(ranges[name], h, opt.percentile);
  for (auto& [key, sums] : cal.means) {
    const int64_t n = mean_counts[key];
    for (double& v : sums) v = n > 0 ? v / static_cast<double>(n) : 0.0;
  }
  return cal;
}

}  // namespace convert
}  // namespace xonnx
