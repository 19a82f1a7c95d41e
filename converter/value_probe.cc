#include "converter/value_probe.h"

#include <vector>

#include "runtime/ir/graph_edit.h"
#include "converter/passes/passes.h"

namespace xonnx {
namespace convert {
namespace {

constexpr int64_t kMaxProbeOutputBytes = 64 << 20;

}  // namespace

ValueProbe::ValueProbe(const Model& model, const ShapeFacts* facts) : model_(model), facts_(facts) {
  const Graph& g = model.graph;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (const std::string& o : g.nodes[i].outputs) {
      if (!o.empty()) producer_[o] = static_cast<int>(i);
    }
  }
}

Result<Tensor> ValueProbe::shape_from_facts(const Node& shape_node, const Probe& probe, bool* answered) {
  *answered = false;
  const std::vector<Dim>* dims = facts_ ? facts_->dims(shape_node.inputs[0]) : nullptr;
  if (!dims) return Tensor();
  std::vector<int64_t> sizes;
  for (const Dim& d : *dims) {
    if (d.known()) {
      sizes.push_back(d.value);
      continue;
    }
    auto it = d.param.empty() ? probe.symbols.end() : probe.symbols.find(d.param);
    if (it == probe.symbols.end()) return Tensor();
    sizes.push_back(it->second);
  }
  // Shape-15's start / end slice the dims (negative counts from the end, clamped).
  const int64_t rank = static_cast<int64_t>(sizes.size());
  auto clamp = [rank](int64_t v) {
    if (v < 0) v += rank;
    return v < 0 ? 0 : (v > rank ? rank : v);
  };
  const int64_t start = clamp(attr_int_or(shape_node, "start", 0));
  const int64_t end = clamp(attr_int_or(shape_node, "end", rank));
  std::vector<int64_t> out;
  for (int64_t i = start; i < end; ++i) out.push_back(sizes[static_cast<size_t>(i)]);
  *answered = true;
  return Tensor::from_vector<int64_t>(out, {static_cast<int64_t>(out.size())});
}

Result<Tensor> ValueProbe::evaluate(const std::string& name, const Probe& probe) {
  if (auto it = probe.pinned.find(name); it != probe.pinned.end()) return it->second;
  if (auto it = cache_.find(name); it != cache_.end()) return it->second;
  const Graph& g = model_.graph;
  if (const Tensor* c = constant_tensor(g, name)) return *c;
  auto p = producer_.find(name);
  if (p == producer_.end()) {
    for (const ValueInfo& vi : g.inputs) {
      if (vi.name == name) return invalid_argument("it depends on the graph input '", name, "'");
    }
    return invalid_model("no node computes '", name, "'");
  }
  const Node& node = g.nodes[static_cast<size_t>(p->second)];
  for (const Attribute& a : node.attributes) {
    if (a.g || !a.graphs.empty()) return unsupported("it depends on ", node.describe(), ", which has a subgraph");
  }
  if (node.domain.empty() && node.op_type == "Shape" && !node.inputs.empty()) {
    bool answered = false;
    XONNX_ASSIGN_OR_RETURN(Tensor shape, shape_from_facts(node, probe, &answered));
    if (answered) {
      cache_[name] = shape;
      return shape;
    }
  }
  std::vector<Tensor> held(node.inputs.size());
  std::vector<const Tensor*> inputs(node.inputs.size(), nullptr);
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (node.inputs[i].empty()) continue;
    XONNX_ASSIGN_OR_RETURN(held[i], evaluate(node.inputs[i], probe));
    inputs[i] = &held[i];
  }
  auto outs = evaluate_node(model_, node, inputs, kMaxProbeOutputBytes);
  if (!outs.is_ok()) return outs.status().with_context(node.describe() + ": ");
  for (size_t i = 0; i < node.outputs.size() && i < outs->size(); ++i) {
    const Value& v = (*outs)[i];
    if (!node.outputs[i].empty() && v.is_tensor()) cache_[node.outputs[i]] = v.tensor();
  }
  auto it = cache_.find(name);
  if (it == cache_.end()) return unsupported(node.describe(), " gives no tensor for '", name, "'");
  return it->second;
}

Tensor probe_filled_i64(Shape shape, int64_t value) {
  const size_t n = static_cast<size_t>(shape_numel(shape));  // before the shape is moved away
  return Tensor::from_vector<int64_t>(std::vector<int64_t>(n, value), std::move(shape));
}

Tensor probe_ranges_i64(int64_t rows, int64_t start, int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(rows * n));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(r * n + i)] = start + i;
  }
  return Tensor::from_vector<int64_t>(v, {rows, n});
}

}  // namespace convert
}  // namespace xonnx
