#include "runtime/passes/pass_util.h"

#include <limits>

namespace xonnx {

ValueIndex::ValueIndex(const Graph& g) : graph(g) {
  for (const NamedTensor& t : g.initializers) initializers[t.name] = &t.tensor;
  for (const ValueInfo& v : g.outputs) pinned_.insert(v.name);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    for (const std::string& o : n.outputs) {
      if (o.empty()) continue;
      if (producer.count(o) || initializers.count(o)) has_duplicate_outputs = true;
      producer[o] = i;
    }
    for (const std::string& in : n.inputs) {
      if (!in.empty()) consumers[in].push_back(i);
    }
    for (const Attribute& a : n.attributes) {
      if (a.g) collect_reads(*a.g, pinned_);
      for (const auto& sg : a.graphs) collect_reads(*sg, pinned_);
    }
  }
}

const Tensor* ValueIndex::constant(const std::string& name) const {
  auto it = initializers.find(name);
  if (it != initializers.end()) return it->second;
  const int p = producer_of(name);
  if (p < 0) return nullptr;
  const Node& n = graph.nodes[static_cast<size_t>(p)];
  if (!n.domain.empty() || n.op_type != "Constant") return nullptr;
  const Attribute* v = n.find_attr("value");
  return v && v->type == AttrType::kTensor ? &v->t : nullptr;
}

int ValueIndex::producer_of(const std::string& name) const {
  auto it = producer.find(name);
  return it == producer.end() ? -1 : static_cast<int>(it->second);
}

const std::vector<size_t>& ValueIndex::readers(const std::string& name) const {
  static const std::vector<size_t> none;
  auto it = consumers.find(name);
  return it == consumers.end() ? none : it->second;
}

void collect_reads(const Graph& g, std::set<std::string>& out) {
  for (const Node& n : g.nodes) {
    out.insert(n.inputs.begin(), n.inputs.end());
    for (const Attribute& a : n.attributes) {
      if (a.g) collect_reads(*a.g, out);
      for (const auto& sg : a.graphs) collect_reads(*sg, out);
    }
  }
  for (const ValueInfo& v : g.outputs) out.insert(v.name);
}

bool activation_bounds(const Node& act, int64_t opset,
                       const std::function<const Tensor*(const std::string&)>& constant, float& lo, float& hi) {
  if (!act.domain.empty() || act.outputs.size() != 1 || act.outputs[0].empty()) return false;
  if (act.op_type == "Relu") {
    lo = 0.0f;
    hi = std::numeric_limits<float>::infinity();
    return true;
  }
  if (act.op_type != "Clip") return false;
  lo = std::numeric_limits<float>::lowest();
  hi = std::numeric_limits<float>::max();
  if (opset < 11) {
    for (const Attribute& a : act.attributes) {
      if (a.type != AttrType::kFloat) continue;
      if (a.name == "min") lo = a.f;
      if (a.name == "max") hi = a.f;
    }
  } else {
    if (act.inputs.size() > 3) return false;
    for (size_t k = 1; k < act.inputs.size(); ++k) {
      if (act.inputs[k].empty()) continue;
      const Tensor* t = constant(act.inputs[k]);
      if (!t || t->dtype() != DataType::kFloat || t->numel() != 1) return false;
      (k == 1 ? lo : hi) = t->data<float>()[0];
    }
  }
  return lo < hi;
}

Attribute float_attribute(const char* name, float value) {
  Attribute a;
  a.name = name;
  a.type = AttrType::kFloat;
  a.f = value;
  return a;
}

Attribute int_attribute(const char* name, int64_t value) {
  Attribute a;
  a.name = name;
  a.type = AttrType::kInt;
  a.i = value;
  return a;
}

}  // namespace xonnx
