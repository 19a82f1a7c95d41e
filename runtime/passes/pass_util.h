// Shared pieces of the session-creation graph rewrites (layout_nhwc.cc, qdq_fusion.cc).
#pragma once

#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/core/tensor.h"
#include "runtime/ir/graph.h"
#include "runtime/ir/graph_index.h"

namespace xonnx {

// Relu, or Clip with constant scalar float bounds (opset < 11: attributes), as [lo, hi].
// False for NaN bounds and lo >= hi (the plain ops keep those).
bool activation_bounds(const Node& act, int64_t opset, const std::function<const Tensor*(const std::string&)>& constant,
                       float& lo, float& hi);

// A default-domain (ONNX) node of type `op`.
inline bool is_default(const Node& n, const char* op) { return n.domain.empty() && n.op_type == op; }
// Add, Sub, Mul or Div: the element-wise ops with numpy broadcasting of two operands.
inline bool is_arithmetic_binary(const std::string& op) {
  return op == "Add" || op == "Sub" || op == "Mul" || op == "Div";
}
// A permutation that leaves every axis in place ([] too).
inline bool is_identity_perm(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i)) return false;
  return true;
}
// Whether the main graph has a default-domain node of type `op`: a fusion that anchors on one
// returns early without building its views of the graph.
bool has_default_node(const Graph& g, const char* op);

// Integer values of a constant int32 / int64 input of rank <= 1, or of an ints attribute when
// that input is absent (the op's older form: Slice's starts below opset 10); false when neither
// is known.
bool constant_ints(const Graph& g, const Node& n, size_t input, const char* attr, std::vector<int64_t>& out);

Attribute float_attribute(const char* name, float value);
Attribute int_attribute(const char* name, int64_t value);
Attribute ints_attribute(const char* name, std::vector<int64_t> values);
Attribute string_attribute(const char* name, std::string value);
// Sets `attr` on `n`, replacing an attribute of the same name.
void set_attribute(Node& n, Attribute attr);

// Erases each node i whose output's readers_absorbed[i] > 0 readers were rewritten to read
// around it, when nothing else reads that output (a graph output counts): a Transpose that the
// products reading it absorbed. `index` is the graph's before the rewrites.
void erase_absorbed_nodes(Graph& g, const GraphIndex& index, const std::vector<int>& readers_absorbed);

// Ones of `shape` as a new float initializer named after `base` (a fused norm's weight where
// the pattern had none), or "" when the constant would take more than `max_bytes`: a pass holds
// what it adds to the folding limit (a declared dim of 2^31 - 1 would be 8 GB).
std::string add_ones_initializer(Graph& g, const std::string& base, const Shape& shape, int64_t max_bytes);

// A new node (a fusion's replacement) with these fields.
inline Node make_node(const std::string& op, const std::string& domain, const std::string& name,
                      std::vector<std::string> inputs, std::vector<std::string> outputs,
                      std::vector<Attribute> attributes = {}) {
  Node n;
  n.op_type = op;
  n.domain = domain;
  n.name = name;
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  n.attributes = std::move(attributes);
  return n;
}

}  // namespace xonnx
