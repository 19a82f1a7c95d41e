// int8 static quantization in QDQ form, as ONNX Runtime's quantize_static emits it:
//   - calibration (calibration.h): min-max range (always including 0) of every input X and output
//     Y of a quantizable node (Conv / MatMul / Gemm with a constant float weight), shared across
//     the ops that only move values between them;
//   - each such tensor T gets QuantizeLinear(T, s, zp uint8) -> DequantizeLinear right after its
//     producer, and its readers read the dequantized value;
//   - the weight becomes DequantizeLinear(int8 symmetric, scale per output channel (axis) or per
//     tensor, zero point 0); a constant bias becomes DequantizeLinear(int32, x_scale * w_scale),
//     corrected for the mean shift the weights' rounding causes (bias_correction.h).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <set>

#include "converter/quantize/bias_correction.h"
#include "converter/quantize/calibration.h"
#include "converter/quantize/quantize_internal.h"
#include "runtime/ir/graph_edit.h"
#include "runtime/passes/pass_util.h"
#include "runtime/passes/qdq_fusion.h"
#include "runtime/exec/session.h"
#include "runtime/onnx/functions.h"

namespace xonnx {
namespace convert {
namespace {

struct ActivationQ {
  float scale = 1;
  uint8_t zero_point = 0;
};

ActivationQ uint8_params(const Range& r) {
  ActivationQ q;
  q.scale = (r.hi - r.lo) / 255.0f;
  if (!(q.scale > 0) || !std::isfinite(q.scale)) q.scale = 1.0f;
  const long zp = std::lround(-r.lo / q.scale);
  q.zero_point = static_cast<uint8_t>(std::min(255L, std::max(0L, zp)));
  return q;
}

struct WeightQ {
  std::string dq_output;
  std::vector<float> scales;  // per channel or one
  int64_t axis = 0;
};

// int8 symmetric weight along `axis` (per channel) or per tensor; returns DequantizeLinear pieces.
WeightQ quantize_weight(Graph& g, const std::string& name, const Tensor& w, int64_t axis, bool per_channel,
                        long code_max, std::vector<Node>& dq_nodes, QuantizedNode& info,
                        std::set<std::string>& reserved) {
  WeightQ q;
  q.axis = axis;
  const int64_t channels = per_channel ? w.dim(static_cast<size_t>(axis)) : 1;
  int64_t inner = 1;
  for (size_t d = static_cast<size_t>(axis) + 1; d < w.rank(); ++d) inner *= w.dim(d);
  const float* p = w.data<float>();
  auto channel_of = [&](int64_t i) { return per_channel ? (i / inner) % channels : 0; };
  q.scales.assign(static_cast<size_t>(channels), 0.0f);
  for (int64_t i = 0; i < w.numel(); ++i) {
    if (std::isfinite(p[i])) q.scales[channel_of(i)] = std::max(q.scales[channel_of(i)], std::fabs(p[i]));
  }
  for (float& s : q.scales) s = s > 0 ? s / static_cast<float>(code_max) : 1.0f;
  std::vector<int8_t> codes(static_cast<size_t>(w.numel()));
  double max_err = 0;
  for (int64_t i = 0; i < w.numel(); ++i) {
    const float s = q.scales[channel_of(i)];
    long c = std::isnan(p[i]) ? 0 : std::lround(p[i] / s);
    c = std::min(code_max, std::max(-code_max, c));
    codes[static_cast<size_t>(i)] = static_cast<int8_t>(c);
    if (std::isfinite(p[i])) max_err = std::max(max_err, std::fabs(static_cast<double>(p[i]) - c * s));
  }
  const Shape vec = per_channel ? Shape{channels} : Shape{};
  const std::string wq = add_initializer(g, name + "_quantized", Tensor::from_vector<int8_t>(codes, w.shape()));
  const std::string ws = add_initializer(g, name + "_scale", Tensor::from_vector<float>(q.scales, vec));
  const std::string wz = add_initializer(g, name + "_zero_point",
                                         Tensor::from_vector<int8_t>(std::vector<int8_t>(q.scales.size(), 0), vec));
  q.dq_output = unique_name(g, name + "_DequantizeLinear_Output");
  g.value_info.push_back(ValueInfo{q.dq_output, {}});  // reserved until the graph holds the node
  reserved.insert(q.dq_output);
  Node dq = make_node(name + "_DequantizeLinear", "DequantizeLinear", {wq, ws, wz}, {q.dq_output});
  if (per_channel) dq.attributes = {int_attr("axis", axis)};
  dq_nodes.push_back(std::move(dq));
  const auto mm = std::minmax_element(q.scales.begin(), q.scales.end());
  info.scale_min = *mm.first;
  info.scale_max = *mm.second;
  info.max_abs_error = max_err;
  info.bytes_before = w.numel() * 4;
  info.bytes_after = w.numel() + static_cast<int64_t>(q.scales.size()) * 5;
  return q;
}

// Ops whose outputs hold only values of their data inputs: quantized with one set of parameters,
// a Q after such an op gives back the codes the Q before it made, so values are rounded once on
// their way from one quantized node to the next instead of twice (ORT shares parameters across
// such ops too). Pad is left out: its constant need not lie on the grid.
bool moves_values_only(const Node& n) {
  static const std::set<std::string> kOps = {"Concat",    "MaxPool", "Reshape",      "Flatten",
                                             "Transpose", "Squeeze", "Unsqueeze",    "Identity",
                                             "Slice",     "Split",   "DepthToSpace", "SpaceToDepth"};
  return n.domain.empty() && kOps.count(n.op_type) > 0 && !n.inputs.empty();
}

// The inputs whose values a mover passes on: all of Concat's, the first of the others'.
std::vector<std::string> moved_inputs(const Node& n) {
  return n.op_type == "Concat" ? n.inputs : std::vector<std::string>{n.inputs[0]};
}

// Adds to `activations` the non-constant inputs of the movers whose outputs are in it, up to a
// fixed point (Conv -> MaxPool -> Concat -> Conv), so that the whole chain can share parameters.
void add_moved_inputs(const Graph& g, std::set<std::string>& activations) {
  for (bool grew = true; grew;) {
    grew = false;
    for (const Node& n : g.nodes) {
      if (!moves_values_only(n)) continue;
      const bool read_quantized = std::any_of(n.outputs.begin(), n.outputs.end(),
                                              [&](const std::string& o) { return activations.count(o) > 0; });
      if (!read_quantized) continue;
      for (const std::string& in : moved_inputs(n)) {
        if (!in.empty() && !constant_tensor(g, in) && activations.insert(in).second) grew = true;
      }
    }
  }
}

// Gives every calibrated value that a mover links to another one (input to output) the range
// that covers them all, so the whole group shares one scale and zero point.
void share_ranges_across_movers(const Graph& g, std::map<std::string, Range>& ranges) {
  std::map<std::string, std::string> parent;
  std::function<std::string(const std::string&)> root = [&](const std::string& v) {
    auto it = parent.find(v);
    if (it == parent.end() || it->second == v) return v;
    return it->second = root(it->second);
  };
  for (const Node& n : g.nodes) {
    if (!moves_values_only(n)) continue;
    for (const std::string& out : n.outputs) {
      if (!ranges.count(out)) continue;
      for (const std::string& in : moved_inputs(n)) {
        if (ranges.count(in)) parent[root(in)] = root(out);
      }
    }
  }
  std::map<std::string, Range> group;
  for (const auto& [name, r] : ranges) {
    Range& u = group[root(name)];
    u.lo = std::min(u.lo, r.lo);
    u.hi = std::max(u.hi, r.hi);
  }
  for (auto& [name, r] : ranges) r = group[root(name)];
}

// The Relu / Clip (constant bounds) that alone reads `n`'s output, or -1.
int folded_activation(const Graph& g, const GraphIndex& index, const Node& n, int64_t opset) {
  const std::string& out = n.outputs[0];
  if (index.use_count(out) != 1 || index.consumers(out).size() != 1) return -1;
  const int c = index.consumers(out)[0];
  const Node& act = g.nodes[static_cast<size_t>(c)];
  float lo = 0, hi = 0;
  const bool ok = activation_bounds(
      act, act.opset ? act.opset : opset, [&](const std::string& v) { return constant_tensor(g, v); }, lo, hi);
  return ok && act.inputs[0] == out && !index.is_graph_output(act.outputs[0]) ? c : -1;
}

// A node to quantize.
struct Target {
  size_t node;
  std::string weight;
  int64_t axis;
  int activation;           // the Relu / Clip reading its output alone, or -1
  std::string folded = "";  // that activation's op when its Q's saturation replaces it
  // The axis of its input's channels, whose means correct the bias: a Conv's C, else the last.
  int input_channels = 0;
};

struct TargetSet {
  std::vector<Target> targets;
  std::set<std::string> activations;
  std::set<std::pair<std::string, int>> mean_keys;  // the inputs whose channel means correct biases
};

int64_t default_opset(const Model& model) {
  const auto it = model.opset_imports.find("");
  return it == model.opset_imports.end() ? 0 : it->second;
}

// The nodes int8 static quantizes (Conv / MatMul / Gemm with a constant float weight, not
// excluded), with the activations they read and write and the inputs whose channel means correct
// their biases; the others go to `skipped` when given.
TargetSet select_targets(const Graph& g, const GraphIndex& index, const QuantizeOptions& opt, int64_t opset,
                         std::vector<SkippedNode>* skipped) {
  TargetSet set;
  std::vector<Target>& targets = set.targets;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (!n.domain.empty() || (n.op_type != "Conv" && n.op_type != "MatMul" && n.op_type != "Gemm")) continue;
    std::string why;
    int64_t axis = 0;
    if (is_excluded(n, opt)) {
      why = "excluded (--exclude)";
    } else if (opset < 10) {
      why = "the model's ONNX opset is below 10 (QuantizeLinear)";
    } else if (n.op_type == "Conv") {
      const Tensor* w = n.inputs.size() > 1 ? constant_tensor(g, n.inputs[1]) : nullptr;
      if (!w || w->dtype() != DataType::kFloat || w->rank() < 3 || !w->raw_data()) {
        why = "the weight is not a constant float32 initializer";
      }
    } else {
      WeightSource src;
      why = matmul_weight_blocker(g, index, n, &src);
      if (why.empty() && !src.via_transpose.empty()) why = "the weight is read through a Transpose";
      axis = src.transposed ? 0 : 1;
    }
    if (!why.empty()) {
      if (skipped) skipped->push_back({n.describe(), why});
      continue;
    }
    targets.push_back({i, n.inputs[1], axis, folded_activation(g, index, n, opset)});
    targets.back().input_channels = n.op_type == "Conv" ? 1 : -1;
    if (opt.bias_correction) set.mean_keys.insert({n.inputs[0], targets.back().input_channels});
    set.activations.insert(n.inputs[0]);
    set.activations.insert(n.outputs[0]);
    if (targets.back().activation >= 0) set.activations.insert(g.nodes[targets.back().activation].outputs[0]);
  }
  if (!targets.empty()) add_moved_inputs(g, set.activations);
  return set;
}

}  // namespace

std::vector<size_t> int8_static_targets(const Model& model, const QuantizeOptions& options) {
  const GraphIndex index(model.graph);
  std::vector<size_t> nodes;
  for (const Target& t : select_targets(model.graph, index, options, default_opset(model), nullptr).targets) {
    nodes.push_back(t.node);
  }
  return nodes;
}

Result<Calibration> calibrate_int8_static(const Model& model, const QuantizeOptions& options) {
  const GraphIndex index(model.graph);
  const TargetSet set = select_targets(model.graph, index, options, default_opset(model), nullptr);
  return calibrate(model, set.activations, set.mean_keys, options.calibration, options);
}

Status quantize_int8_static(Model& model, const QuantizeOptions& opt, QuantizeResult& result,
                            const Calibration* calibrated) {
  Graph& g = model.graph;
  const int64_t opset = default_opset(model);
  const bool per_channel = opt.per_channel && opset >= 13;  // DequantizeLinear's axis: opset 13
  const GraphIndex index(g);
  std::set<std::string> reserved;  // fresh value names held in value_info until the nodes exist
  auto reserve = [&](const std::string& base) {
    std::string name = unique_name(g, base);
    g.value_info.push_back(ValueInfo{name, {}});
    reserved.insert(name);
    return name;
  };
  // 1. Which nodes, and which activations they read and write.
  TargetSet set = select_targets(g, index, opt, opset, &result.skipped);
  std::vector<Target>& targets = set.targets;
  if (targets.empty()) return Status::ok();
  Calibration cal;
  if (calibrated) {  // measured for a superset of these targets: the ranges of their activations
    cal.means = calibrated->means;
    cal.shapes = calibrated->shapes;
    for (const std::string& a : set.activations) {
      auto r = calibrated->ranges.find(a);
      if (r != calibrated->ranges.end()) cal.ranges.insert(*r);
    }
  } else {
    XONNX_ASSIGN_OR_RETURN(cal, calibrate(model, set.activations, set.mean_keys, opt.calibration, opt));
  }
  std::map<std::string, Range>& ranges = cal.ranges;
  share_ranges_across_movers(g, ranges);
  // 1b. Relu / Clip after a target goes when the Q of its output saturates the same way (as ORT
  // does): the target writes the activation's output, and its own output gets no Q/DQ.
  std::set<size_t> dropped;
  for (Target& t : targets) {
    if (t.activation < 0) continue;
    Node& act = g.nodes[static_cast<size_t>(t.activation)];
    float lo = 0, hi = 0;
    activation_bounds(
        act, act.opset ? act.opset : opset, [&](const std::string& v) { return constant_tensor(g, v); }, lo, hi);
    const ActivationQ q = uint8_params(ranges[act.outputs[0]]);
    if (!saturation_implies(lo, hi, q.scale, q.zero_point, 0, 255)) continue;
    ranges.erase(g.nodes[t.node].outputs[0]);
    g.nodes[t.node].outputs[0] = act.outputs[0];
    dropped.insert(static_cast<size_t>(t.activation));
    t.folded = act.op_type;
  }
  // 2. Q/DQ pairs for every calibrated activation, right after its producer.
  std::map<std::string, ActivationQ> params;
  std::map<std::string, Range> used_ranges = ranges;
  std::map<std::string, std::vector<Node>> after;  // producer output ("" = graph input) -> Q, DQ
  std::map<std::string, std::string> dequantized;  // activation -> its DQ output
  for (const auto& [name, range] : ranges) {
    const ActivationQ q = uint8_params(range);
    params[name] = q;
    if (index.consumers(name).empty()) continue;  // only a graph output: a Q/DQ pair would be dead
    const std::string s = add_initializer(g, name + "_scale", Tensor::from_vector<float>({q.scale}, {}));
    const std::string z = add_initializer(g, name + "_zero_point", Tensor::from_vector<uint8_t>({q.zero_point}, {}));
    const std::string qo = reserve(name + "_QuantizeLinear_Output");
    const std::string dqo = reserve(name + "_DequantizeLinear_Output");
    const int p = index.producer(name);
    auto& list = after[p >= 0 ? name : std::string()];
    list.push_back(make_node(name + "_QuantizeLinear", "QuantizeLinear", {name, s, z}, {qo}));
    list.push_back(make_node(name + "_DequantizeLinear", "DequantizeLinear", {qo, s, z}, {dqo}));
    dequantized[name] = dqo;
  }
  // 3. Weights and biases of the targets.
  std::vector<Node> weight_dq;
  std::map<std::string, WeightQ> weights;
  for (const Target& t : targets) {
    Node& n = g.nodes[t.node];
    QuantizedNode info;
    info.node = n.describe();
    info.weight = t.weight;
    const std::string key = t.weight + "|" + std::to_string(t.axis);
    auto wit = weights.find(key);
    if (wit == weights.end()) {
      const Tensor w = *constant_tensor(g, t.weight);
      wit = weights
                .emplace(key, quantize_weight(g, t.weight, w, t.axis, per_channel, int8_weight_max(opt), weight_dq,
                                              info, reserved))
                .first;
      result.weight_bytes_before += info.bytes_before;
      result.weight_bytes_after += info.bytes_after;
    }
    const WeightQ& wq = wit->second;
    n.inputs[1] = wq.dq_output;
    info.as = std::string("QDQ int8 weight (") + (per_channel ? "per channel" : "per tensor") +
              (opt.reduce_range ? ", 7-bit range" : "") + ")";
    if (!t.folded.empty()) info.as += ", " + t.folded + " folded into the output quantization";
    auto xq = params.find(n.inputs[0]);
    if (xq != params.end()) {
      const Range& xr = used_ranges[n.inputs[0]];
      char buf[160];
      std::snprintf(buf, sizeof(buf), ", x range [%.4g, %.4g] scale %.4g zp %d", xr.lo, xr.hi, xq->second.scale,
                    xq->second.zero_point);
      info.as += buf;
      // The shift of each output channel's mean that the weight's rounding causes (bias correction).
      std::vector<double> shift;
      const auto key = std::make_pair(n.inputs[0], t.input_channels);
      auto mean = cal.means.find(key);
      if (mean != cal.means.end()) {  // only with opt.bias_correction
        const bool conv = n.op_type == "Conv";
        const Tensor& w = *constant_tensor(g, t.weight);
        shift = rounding_mean_shift(w, wq.scales, wq.axis, int8_weight_max(opt), mean->second,
                                    conv ? attr_int_or(n, "group", 1) : 1,
                                    conv ? tap_coverage(n, cal.shapes[key], w.shape()) : std::vector<double>());
      }
      // A constant 1-D bias: int32 with scale x_scale * w_scale, as ORT does. A Conv or Gemm
      // without one gets one when the correction needs it.
      const bool no_bias = n.inputs.size() < 3 || n.inputs[2].empty();
      const Tensor* b = no_bias ? nullptr : constant_tensor(g, n.inputs[2]);
      const bool add_bias =
          !shift.empty() && no_bias && n.op_type != "MatMul" && attr_float_or(n, "beta", 1.0f) == 1.0f;
      const bool bias_ok = add_bias || (b && b->dtype() == DataType::kFloat && b->rank() == 1 && b->raw_data() &&
                                        (!per_channel || b->numel() == static_cast<int64_t>(wq.scales.size())));
      if (bias_ok) {
        const std::string base = add_bias ? t.weight + "_bias" : n.inputs[2];
        std::vector<double> bias(shift.size(), 0.0);
        if (!add_bias) bias.assign(b->data<float>(), b->data<float>() + b->numel());
        const bool corrected = shift.size() == bias.size();
        for (size_t c = 0; corrected && c < bias.size(); ++c) bias[c] -= shift[c];
        std::vector<int32_t> codes(bias.size());
        std::vector<float> scales(per_channel ? wq.scales.size() : 1);
        for (size_t c = 0; c < scales.size(); ++c) scales[c] = xq->second.scale * wq.scales[c];
        for (size_t c = 0; c < bias.size(); ++c) {
          const double v = bias[c] / scales[per_channel ? c : 0];
          codes[c] = static_cast<int32_t>(std::max(-2147483647.0, std::min(2147483647.0, std::round(v))));
        }
        const Shape vec = per_channel ? Shape{static_cast<int64_t>(scales.size())} : Shape{};
        const std::string bq = add_initializer(
            g, base + "_quantized", Tensor::from_vector<int32_t>(codes, {static_cast<int64_t>(bias.size())}));
        const std::string bs = add_initializer(g, base + "_scale", Tensor::from_vector<float>(scales, vec));
        const std::string bz = add_initializer(
            g, base + "_zero_point", Tensor::from_vector<int32_t>(std::vector<int32_t>(scales.size(), 0), vec));
        const std::string bo = reserve(base + "_DequantizeLinear_Output");
        Node dq = make_node(base + "_DequantizeLinear", "DequantizeLinear", {bq, bs, bz}, {bo});
        if (per_channel) dq.attributes = {int_attr("axis", 0)};
        weight_dq.push_back(std::move(dq));
        n.inputs.resize(std::max<size_t>(n.inputs.size(), 3));
        n.inputs[2] = bo;
        info.as += ", int32 bias";
        if (corrected) info.as += " (corrected for the weights' rounding)";
      }
    }
    result.quantized.push_back(std::move(info));
  }
  // 4. Readers of each activation read its DQ output (the Q node keeps the float one).
  for (const auto& [name, dqo] : dequantized) {
    for (Node& n : g.nodes) {
      for (std::string& in : n.inputs) {
        if (in == name) in = dqo;
      }
    }
  }
  std::vector<Node> nodes = std::move(weight_dq);
  auto emit = [&](const std::string& key) {
    auto a = after.find(key);
    if (a != after.end()) nodes.insert(nodes.end(), a->second.begin(), a->second.end());
  };
  emit("");
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (dropped.count(i)) continue;
    std::vector<std::string> outs = g.nodes[i].outputs;
    nodes.push_back(std::move(g.nodes[i]));
    for (const std::string& o : outs) emit(o);
  }
  g.nodes = std::move(nodes);
  std::vector<ValueInfo> kept;  // drop the name reservations
  for (ValueInfo& v : g.value_info) {
    if (!reserved.count(v.name)) kept.push_back(std::move(v));
  }
  g.value_info = std::move(kept);
  drop_unused_initializers(g);
  return Status::ok();
}

}  // namespace convert
}  // namespace xonnx
