// Graph editing helpers shared by every graph pass (runtime/passes, the converter): subgraph
// walks, outer-scope reads, constants, renaming, node removal, fresh names, deep copies.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/ir/graph.h"
#include "runtime/ir/graph_index.h"

namespace xonnx {
// Names a graph (and its nested subgraphs) reads but does not define: its outer-scope captures.
std::set<std::string> outer_scope_reads(const Graph& graph);
// The constant value of `name` in `graph`: an initializer that is not also a graph input.
// nullptr otherwise.
const Tensor* constant_tensor(const Graph& graph, const std::string& name);
// Renames every read of `from` to `to` in the graph's nodes and nested subgraphs (stopping where
// a subgraph defines its own `from`); graph outputs are not touched.
void replace_uses(Graph& graph, const std::string& from, const std::string& to);
// The same for many renames at once, in one sweep (`renames` maps each old name to its final
// new name; chains must already be resolved).
void replace_uses(Graph& graph, const std::unordered_map<std::string, std::string>& renames);
// Removes the nodes with dead[i] == true, keeping the order of the rest.
void erase_nodes(Graph& graph, const std::vector<bool>& dead);
// A value/node name not used anywhere in the graph (including subgraphs), derived from `base`.
// It collects the graph's names on every call: a pass adding many names uses NameAllocator.
std::string unique_name(const Graph& graph, const std::string& base);
// Fresh names for what one edit adds: the graph's names (subgraphs included) are collected once,
// and each name handed out is taken from then on. Valid while no one else names new values.
class NameAllocator {
 public:
  explicit NameAllocator(const Graph& graph);
  // `base`, or `base`_1, `base`_2 ...: the first used neither in the graph nor by this allocator.
  std::string fresh(const std::string& base);

 private:
  std::set<std::string> taken_;
};
// Adds an initializer with a fresh unique name derived from `base`; returns the name.
std::string add_initializer(Graph& graph, const std::string& base, Tensor tensor);
std::string add_initializer(Graph& graph, NameAllocator& names, const std::string& base, Tensor tensor);
// The opset of `domain` the model imports (0 if none); node.opset overrides it for inlined nodes.
int64_t opset_of(const Model& model, const Node& node);

// Calls fn on every subgraph attribute (g and graphs) of `node`.
void for_each_subgraph(const Node& node, const std::function<void(const Graph&)>& fn);
void for_each_subgraph(Node& node, const std::function<void(Graph&)>& fn);
// True when any node of the graph has a subgraph attribute.
bool has_subgraphs(const Graph& graph);
// Names of the graph's inputs, initializers and node outputs (not its subgraphs').
std::set<std::string> defined_names(const Graph& graph);
// A Slice bound (step 1) as ONNX reads it for an axis of n: negative counts from the end, then
// clamped into [0, n].
inline int64_t slice_bound(int64_t v, int64_t n) { return std::clamp<int64_t>(v < 0 ? v + n : v, 0, n); }
// The attribute's value as int / float, or `fallback` when absent.
int64_t attr_int_or(const Node& node, const std::string& name, int64_t fallback);
float attr_float_or(const Node& node, const std::string& name, float fallback);
// A float32 constant whose elements all equal `value` within `tol` (any shape, >= 1 element).
bool is_float_constant(const Graph& graph, const std::string& name, double value, double tol);
// A graph that has `name` among its declared outputs, value_info or inputs: returns its info
// (nullptr when undeclared).
const ValueInfo* find_value_info(const Graph& graph, const std::string& name);

// Gives every subgraph attribute of `graph` (recursively) its own copy: Model and Graph copies
// share subgraphs through shared_ptr, so a pass that edits bodies must not run on a shallow copy.
void deep_copy_subgraphs(Graph& graph);
// A copy of `model` that shares no subgraph with it (initializer storage stays shared: read-only).
Model clone_model(const Model& model);

}  // namespace xonnx
