// int8 static calibration: the float model runs in the runtime over the calibration samples
// with the tensors to quantize exposed as outputs; per tensor its min-max range (or a percentile
// of its values) and, for bias correction, its per-channel means.
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "converter/quantize/quantize.h"
#include "runtime/core/shape.h"

namespace xonnx {
namespace convert {

// A tensor's calibrated range.
struct Range {
  float lo = 0, hi = 0;  // always includes 0
};

// Per value and channel axis (1, or -1 for the last): the mean of each channel over the samples.
using ChannelMeans = std::map<std::pair<std::string, int>, std::vector<double>>;

struct Calibration {
  std::map<std::string, Range> ranges;
  ChannelMeans means;                                   // the keys asked for, of float tensors
  std::map<std::pair<std::string, int>, Shape> shapes;  // those tensors' shapes (the last sample's)
};

// Runs `model` (not changed; its functions are inlined in a copy) over `samples` at optimization
// kNone, so names match the graph being quantized; `names` are the tensors whose ranges to
// measure, `mean_keys` the (tensor, axis) pairs whose channel means to measure.
Result<Calibration> calibrate(const Model& model, const std::set<std::string>& names,
                              const std::set<std::pair<std::string, int>>& mean_keys,
                              const std::vector<NamedValues>& samples, const QuantizeOptions& opt);

}  // namespace convert
}  // namespace xonnx
