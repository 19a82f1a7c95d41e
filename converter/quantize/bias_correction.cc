#include "converter/quantize/bias_correction.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace xonnx {
namespace convert {

std::vector<double> tap_coverage(const Node& conv, const Shape& x, const Shape& w) {
  if (x.size() != w.size() || x.size() < 3) return {};
  const size_t dims = x.size() - 2;
  auto ints = [&](const char* name, int64_t fill, size_t n) {
    const Attribute* a = conv.find_attr(name);
    return a && a->ints.size() == n ? a->ints : std::vector<int64_t>(n, fill);
  };
  const std::vector<int64_t> strides = ints("strides", 1, dims), dilations = ints("dilations", 1, dims);
  std::vector<int64_t> pads = ints("pads", 0, 2 * dims);
  const Attribute* auto_pad = conv.find_attr("auto_pad");
  const std::string mode = auto_pad ? auto_pad->s : "NOTSET";
  std::vector<std::vector<double>> per_dim(dims);
  for (size_t d = 0; d < dims; ++d) {
    const int64_t in = x[d + 2], k = w[d + 2], s = strides[d], dl = dilations[d];
    if (in <= 0 || k <= 0 || s <= 0 || dl <= 0) return {};
    const int64_t extent = (k - 1) * dl + 1;
    int64_t begin = pads[d], out;
    if (mode == "SAME_UPPER" || mode == "SAME_LOWER") {
      out = (in + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (out - 1) * s + extent - in);
      begin = mode == "SAME_UPPER" ? total / 2 : total - total / 2;
    } else {
      if (mode == "VALID") pads[d] = pads[d + dims] = begin = 0;
      out = (in + pads[d] + pads[d + dims] - extent) / s + 1;
    }
    if (out <= 0) return {};
    for (int64_t t = 0; t < k; ++t) {
      int64_t valid = 0;
      for (int64_t j = 0; j < out; ++j) {
        const int64_t at = j * s - begin + t * dl;
        valid += at >= 0 && at < in ? 1 : 0;
      }
      per_dim[d].push_back(static_cast<double>(valid) / static_cast<double>(out));
    }
  }
  std::vector<double> coverage(1, 1.0);
  for (size_t d = 0; d < dims; ++d) {
    std::vector<double> next;
    for (double c : coverage) {
      for (double f : per_dim[d]) next.push_back(c * f);
    }
    coverage = std::move(next);
  }
  return coverage;
}

std::vector<double> rounding_mean_shift(const Tensor& w, const std::vector<float>& scales, int64_t axis, long code_max,
                                        const std::vector<double>& mean, int64_t group,
                                        const std::vector<double>& coverage) {
  const int64_t n = w.numel();
  const size_t rank = w.rank();
  if (rank < 2 || n == 0 || group < 1) return {};
  const bool conv = rank > 2;
  const int64_t outs = conv || axis == 0 ? w.dim(0) : w.dim(1);
  const int64_t cin = w.dim(1);  // Conv: channels per group; [N, K]: K
  const int64_t ks = conv ? n / (w.dim(0) * cin) : 1;
  const int64_t in_channels = conv ? cin * group : (axis == 0 ? w.dim(1) : w.dim(0));
  if (static_cast<int64_t>(mean.size()) != in_channels || (conv && outs % group != 0)) return {};
  if (!coverage.empty() && static_cast<int64_t>(coverage.size()) != ks) return {};
  const bool per_channel = scales.size() > 1;
  std::vector<double> shift(static_cast<size_t>(outs), 0.0);
  const float* p = w.data<float>();
  for (int64_t i = 0; i < n; ++i) {
    int64_t o, k;
    if (conv) {
      o = i / (cin * ks);
      k = (o / (outs / group)) * cin + (i / ks) % cin;
    } else if (axis == 0) {  // [N, K]
      o = i / w.dim(1);
      k = i % w.dim(1);
    } else {  // [K, N]
      o = i % w.dim(1);
      k = i / w.dim(1);
    }
    if (!std::isfinite(p[i])) continue;
    const float sc = scales[per_channel ? static_cast<size_t>(o) : 0];
    const long c = std::min(code_max, std::max(-code_max, std::lround(p[i] / sc)));
    const double reach = coverage.empty() ? 1.0 : coverage[static_cast<size_t>(i % ks)];
    shift[static_cast<size_t>(o)] += (static_cast<double>(c) * sc - p[i]) * mean[static_cast<size_t>(k)] * reach;
  }
  return shift;
}

}  // namespace convert
}  // namespace xonnx
