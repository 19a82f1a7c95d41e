// Small helpers the GenAI passes (RMSNorm, rotary, attention fusions) share: attributes, new
// nodes, constant reads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/ir/graph_edit.h"
#include "runtime/core/status.h"
#include "runtime/ir/graph.h"
#include "runtime/passes/pass_util.h"

namespace xonnx {
namespace convert {
namespace genai {

inline Attribute int_attribute(const std::string& name, int64_t value) {
  Attribute a;
  a.name = name;
  a.type = AttrType::kInt;
  a.i = value;
  return a;
}

inline Attribute float_attribute(const std::string& name, float value) {
  Attribute a;
  a.name = name;
  a.type = AttrType::kFloat;
  a.f = value;
  return a;
}

inline Attribute ints_attribute(const std::string& name, std::vector<int64_t> values) {
  Attribute a;
  a.name = name;
  a.type = AttrType::kInts;
  a.ints = std::move(values);
  return a;
}

using ::xonnx::make_node;  // runtime/passes/pass_util.h

// The integer elements of a constant (an initializer that is no graph input); false otherwise.
inline bool constant_ints(const Graph& g, const std::string& name, std::vector<int64_t>* out) {
  const Tensor* t = constant_tensor(g, name);
  if (!t) return false;
  auto v = t->to_int64_vector();
  if (!v.is_ok()) return false;
  *out = std::move(v).value();
  return true;
}

// A one-element integer constant.
inline bool constant_int(const Graph& g, const std::string& name, int64_t* out) {
  std::vector<int64_t> v;
  if (!constant_ints(g, name, &v) || v.size() != 1) return false;
  *out = v[0];
  return true;
}

// Orders the nodes so every value is computed before it is read (subgraph captures included),
// keeping the original order where it already is; fails naming a value nothing computes.
Status sort_topologically(Graph& g);

// The default-domain opset of the model (0 when it imports none).
inline int64_t onnx_opset(const Model& m) { return m.opset_imports.count("") ? m.opset_imports.at("") : 0; }

}  // namespace genai
}  // namespace convert
}  // namespace xonnx
