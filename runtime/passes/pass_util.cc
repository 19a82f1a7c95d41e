#include "runtime/passes/pass_util.h"

#include <algorithm>
#include <limits>

#include "runtime/ir/graph_edit.h"

namespace xonnx {

std::string add_ones_initializer(Graph& g, const std::string& base, const Shape& shape, int64_t max_bytes) {
  const int64_t n = shape_numel(shape);
  if (n <= 0 || n > max_bytes / static_cast<int64_t>(sizeof(float))) return "";
  return add_initializer(g, base, Tensor::from_vector<float>(std::vector<float>(static_cast<size_t>(n), 1.0f), shape));
}

bool has_default_node(const Graph& g, const char* op) {
  return std::any_of(g.nodes.begin(), g.nodes.end(), [op](const Node& n) { return is_default(n, op); });
}

bool activation_bounds(const Node& act, int64_t opset, const std::function<const Tensor*(const std::string&)>& constant,
                       float& lo, float& hi) {
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

bool constant_ints(const Graph& g, const Node& n, size_t input, const char* attr, std::vector<int64_t>& out) {
  out.clear();
  if (input < n.inputs.size() && !n.inputs[input].empty()) {
    const Tensor* t = constant_tensor(g, n.inputs[input]);
    if (!t || (t->dtype() != DataType::kInt64 && t->dtype() != DataType::kInt32) || t->rank() > 1) return false;
    for (int64_t i = 0; i < t->numel(); ++i) out.push_back(t->get_as_int64(i));
    return true;
  }
  const Attribute* a = attr ? n.find_attr(attr) : nullptr;
  if (!a) return false;
  out = a->ints;
  return true;
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

Attribute ints_attribute(const char* name, std::vector<int64_t> values) {
  Attribute a;
  a.name = name;
  a.type = AttrType::kInts;
  a.ints = std::move(values);
  return a;
}

Attribute string_attribute(const char* name, std::string value) {
  Attribute a;
  a.name = name;
  a.type = AttrType::kString;
  a.s = std::move(value);
  return a;
}

void erase_absorbed_nodes(Graph& g, const GraphIndex& index, const std::vector<int>& readers_absorbed) {
  std::vector<bool> dead(g.nodes.size(), false);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    dead[i] = readers_absorbed[i] > 0 && index.use_count(g.nodes[i].outputs[0]) == readers_absorbed[i];
  erase_nodes(g, dead);
}

void set_attribute(Node& n, Attribute attr) {
  for (Attribute& a : n.attributes) {
    if (a.name == attr.name) {
      a = std::move(attr);
      return;
    }
  }
  n.attributes.push_back(std::move(attr));
}

}  // namespace xonnx
