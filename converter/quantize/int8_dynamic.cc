// int8 dynamic quantization (no calibration data), as ONNX Runtime's quantize_dynamic emits it for
// MatMul: the weight is stored int8 (symmetric, per output column or per tensor) and the
// activation is quantized at run time:
//   DynamicQuantizeLinear(A) -> A_q (uint8), A_scale, A_zp        (once per distinct A)
//   MatMulInteger(A_q, W_q, A_zp, W_zp) -> int32 -> Cast(float) -> Mul(A_scale * W_scale) [-> Add(C)]
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "runtime/ir/graph_edit.h"
#include "converter/quantize/quantize_internal.h"

namespace xonnx {
namespace convert {
namespace {

struct Int8Weight {
  std::string q, scale, zero_point;  // initializer names
  int64_t k = 0, n = 0;
};

struct DynamicInput {
  std::string q, scale, zero_point;  // DynamicQuantizeLinear outputs
};

Int8Weight quantize_weight(Graph& g, const std::string& name, const Tensor& w, bool transposed, bool per_channel,
                           long code_max, QuantizedNode& info) {
  Int8Weight q;
  q.k = transposed ? w.dim(1) : w.dim(0);
  q.n = transposed ? w.dim(0) : w.dim(1);
  const float* data = w.data<float>();
  auto at = [&](int64_t kk, int64_t nn) { return transposed ? data[nn * q.k + kk] : data[kk * q.n + nn]; };
  std::vector<float> scales(static_cast<size_t>(per_channel ? q.n : 1), 0.0f);
  for (int64_t kk = 0; kk < q.k; ++kk) {
    for (int64_t nn = 0; nn < q.n; ++nn) {
      const float v = std::fabs(at(kk, nn));
      float& s = scales[per_channel ? static_cast<size_t>(nn) : 0];
      if (std::isfinite(v)) s = std::max(s, v);
    }
  }
  for (float& s : scales) s = s > 0 ? s / static_cast<float>(code_max) : 1.0f;  // a zero scale is invalid
  std::vector<int8_t> codes(static_cast<size_t>(q.k * q.n));
  double max_err = 0;
  for (int64_t kk = 0; kk < q.k; ++kk) {
    for (int64_t nn = 0; nn < q.n; ++nn) {
      const float s = scales[per_channel ? static_cast<size_t>(nn) : 0];
      const float v = at(kk, nn);
      long c = std::isnan(v) ? 0 : std::lround(v / s);
      c = std::min(code_max, std::max(-code_max, c));
      codes[static_cast<size_t>(kk * q.n + nn)] = static_cast<int8_t>(c);
      if (std::isfinite(v)) max_err = std::max(max_err, std::fabs(static_cast<double>(v) - c * s));
    }
  }
  const auto mm = std::minmax_element(scales.begin(), scales.end());
  info.scale_min = *mm.first;
  info.scale_max = *mm.second;
  info.max_abs_error = max_err;
  info.bytes_before = w.numel() * 4;
  info.bytes_after = static_cast<int64_t>(codes.size() + scales.size() * 5);
  const Shape vec = per_channel ? Shape{q.n} : Shape{};
  q.q = add_initializer(g, name + "_quantized", Tensor::from_vector<int8_t>(codes, {q.k, q.n}));
  q.scale = add_initializer(g, name + "_scale", Tensor::from_vector<float>(scales, vec));
  q.zero_point =
      add_initializer(g, name + "_zero_point", Tensor::from_vector<int8_t>(std::vector<int8_t>(scales.size(), 0), vec));
  return q;
}

}  // namespace

Status quantize_int8_dynamic(Model& model, const QuantizeOptions& opt, QuantizeResult& result) {
  Graph& g = model.graph;
  const auto onnx_opset = model.opset_imports.find("");
  const bool opset_ok = onnx_opset != model.opset_imports.end() && onnx_opset->second >= 11;
  std::map<std::string, Int8Weight> weights;        // weight name (+ "|T")
  std::map<std::string, DynamicInput> activations;  // A name
  std::vector<Node> rewritten;
  rewritten.reserve(g.nodes.size());
  std::set<std::string> reserved;  // names held in value_info while `rewritten` is built
  auto reserve = [&](const std::string& base) {
    std::string name = unique_name(g, base);
    g.value_info.push_back(ValueInfo{name, {}});
    reserved.insert(name);
    return name;
  };
  const GraphIndex index(g);
  std::set<std::string> bypassed;  // Transpose outputs no longer read
  bool changed = false;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node node = g.nodes[i];
    if (!node.domain.empty() || (node.op_type != "MatMul" && node.op_type != "Gemm")) {
      rewritten.push_back(std::move(node));
      continue;
    }
    WeightSource src;
    std::string why = is_excluded(node, opt) ? "excluded (--exclude)" : matmul_weight_blocker(g, index, node, &src);
    if (why.empty() && !opset_ok) why = "the model's ONNX opset is below 11 (MatMulInteger, DynamicQuantizeLinear)";
    if (!why.empty()) {
      result.skipped.push_back({node.describe(), why});
      rewritten.push_back(std::move(node));
      continue;
    }
    const std::string& a = node.inputs[0];
    const std::string& weight = src.name;
    const bool transposed = src.transposed;
    if (!src.via_transpose.empty()) bypassed.insert(src.via_transpose);
    QuantizedNode info;
    info.node = node.describe();
    info.weight = weight;
    const std::string key = weight + (transposed ? "|T" : "");
    auto wit = weights.find(key);
    if (wit == weights.end()) {
      const Tensor w = *constant_tensor(g, weight);  // a copy: add_initializer may reallocate
      wit = weights.emplace(key, quantize_weight(g, weight, w, transposed, opt.per_channel, int8_weight_max(opt), info))
                .first;
      result.weight_bytes_before += info.bytes_before;
      result.weight_bytes_after += info.bytes_after;
    } else {
      info.as = "(shares the weight quantized above) ";
    }
    const Int8Weight& q = wit->second;
    auto ait = activations.find(a);
    if (ait == activations.end()) {
      DynamicInput d;
      d.q = reserve(a + "_quantized");
      d.scale = reserve(a + "_scale");
      d.zero_point = reserve(a + "_zero_point");
      rewritten.push_back(make_node(a + "_QuantizeLinear", "DynamicQuantizeLinear", {a}, {d.q, d.scale, d.zero_point}));
      ait = activations.emplace(a, d).first;
    }
    const DynamicInput& d = ait->second;
    const std::string base = node.name.empty() ? node.outputs[0] : node.name;
    const std::string y_int = reserve(base + "_output_quantized");
    const std::string y_float = reserve(base + "_output_cast");
    const std::string scale = reserve(base + "_scales_mul");
    const bool has_bias = node.op_type == "Gemm" && node.inputs.size() > 2 && !node.inputs[2].empty();
    const std::string y = has_bias ? reserve(base + "_nobias") : node.outputs[0];
    rewritten.push_back(
        make_node(base + "_MatMulInteger", "MatMulInteger", {d.q, q.q, d.zero_point, q.zero_point}, {y_int}));
    Node cast = make_node(base + "_cast", "Cast", {y_int}, {y_float});
    cast.attributes = {int_attr("to", static_cast<int64_t>(DataType::kFloat))};
    rewritten.push_back(std::move(cast));
    rewritten.push_back(make_node(base + "_scales_mul", "Mul", {d.scale, q.scale}, {scale}));
    rewritten.push_back(make_node(base + "_output_scale_mul", "Mul", {y_float, scale}, {y}));
    if (has_bias) rewritten.push_back(make_node(base + "_bias", "Add", {y, node.inputs[2]}, {node.outputs[0]}));
    info.as += std::string("MatMulInteger int8 weight (") + (opt.per_channel ? "per column" : "per tensor") +
               (opt.reduce_range ? ", 7-bit range" : "") + "), uint8 dynamic activation, K=" + std::to_string(q.k) +
               " N=" + std::to_string(q.n) + (has_bias ? " + Add(bias)" : "");
    result.quantized.push_back(std::move(info));
    changed = true;
  }
  g.nodes = std::move(rewritten);
  if (changed) {
    drop_dead_transposes(g, bypassed);
    drop_unused_initializers(g);
  }
  // The reservations carry no type: drop them again.
  std::vector<ValueInfo> kept;
  for (ValueInfo& v : g.value_info) {
    if (!reserved.count(v.name)) kept.push_back(std::move(v));
  }
  g.value_info = std::move(kept);
  return Status::ok();
}

}  // namespace convert
}  // namespace xonnx
