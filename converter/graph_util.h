// Helpers every converter pass needs: who produces and who reads each value (subgraph captures
// count as reads by the node that owns the subgraph), constants, renaming, fresh names.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "runtime/ir/graph.h"

namespace xonnx {
namespace convert {

// Producers and consumers of every value of one graph (not its subgraphs); a name read inside a
// node's subgraph (outer-scope capture, at any depth) counts as a use by that node.
class GraphIndex {
 public:
  explicit GraphIndex(const Graph& graph);
  int producer(const std::string& value) const;                       // node index, -1 if none
  const std::vector<int>& consumers(const std::string& value) const;  // node indices, one per use
  bool is_graph_output(const std::string& value) const;
  bool is_graph_input(const std::string& value) const;
  int use_count(const std::string& value) const;  // consumers + graph-output uses

 private:
  std::map<std::string, int> producer_;
  std::map<std::string, std::vector<int>> consumers_;
  std::map<std::string, int> output_uses_;
  std::set<std::string> inputs_;
  std::vector<int> none_;
};

// Names a graph (and its nested subgraphs) reads but does not define: its outer-scope captures.
std::set<std::string> outer_scope_reads(const Graph& graph);
// The constant value of `name` in `graph`: an initializer that is not also a graph input.
// nullptr otherwise.
const Tensor* constant_tensor(const Graph& graph, const std::string& name);
// Renames every read of `from` to `to` in the graph's nodes and nested subgraphs (stopping where
// a subgraph defines its own `from`); graph outputs are not touched.
void replace_uses(Graph& graph, const std::string& from, const std::string& to);
// Removes the nodes with dead[i] == true, keeping the order of the rest.
void erase_nodes(Graph& graph, const std::vector<bool>& dead);
// A value/node name not used anywhere in the graph (including subgraphs), derived from `base`.
std::string unique_name(const Graph& graph, const std::string& base);
// Adds an initializer with a fresh unique name derived from `base`; returns the name.
std::string add_initializer(Graph& graph, const std::string& base, Tensor tensor);
// The opset of `domain` the model imports (0 if none); node.opset overrides it for inlined nodes.
int64_t opset_of(const Model& model, const Node& node);

// --- additions beyond the shared signatures ---

// Calls fn on every subgraph attribute (g and graphs) of `node`.
void for_each_subgraph(const Node& node, const std::function<void(const Graph&)>& fn);
void for_each_subgraph(Node& node, const std::function<void(Graph&)>& fn);
// True when any node of the graph has a subgraph attribute.
bool has_subgraphs(const Graph& graph);
// Names of the graph's inputs, initializers and node outputs (not its subgraphs').
std::set<std::string> defined_names(const Graph& graph);
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

// Pattern-matching helper for the fusion passes: single-reader checks over a GraphIndex, node
// claiming (a node joins at most one fusion per run) and deferred replacement, so indices stay
// valid while matching. Only default-domain ops match `is`.
class FusionView {
 public:
  explicit FusionView(Graph& graph);
  const Node& node(int i) const { return graph_.nodes[static_cast<size_t>(i)]; }
  const GraphIndex& index() const { return index_; }
  // Node i exists, is unclaimed and is the default-domain `op` with a first input and output
  // (binary ops: exactly two inputs; Erf/Sqrt: one).
  bool is(int i, const char* op) const;
  // The producer of `value` when `value` has exactly one reader and is no graph output; else -1.
  int sole_producer(const std::string& value) const;
  // The one node reading `value` (no other reader, no graph output), unclaimed; else -1.
  int sole_consumer(const std::string& value) const;
  bool is_const(const std::string& name, double value, double tol) const;
  // Binary node i: its input that is not `known` ("" when `known` is not an input).
  std::string other_input(int i, const std::string& known) const;
  // Binary node i with one float32 constant operand equal to `value`: the other operand in *x.
  bool other_is_const(int i, double value, double tol, std::string* x) const;
  bool other_is_const_given(int i, const std::string& known, double value, double tol) const;
  // Marks the nodes as used by a fusion; false (and nothing marked) when one already is.
  bool claim(const std::vector<int>& nodes);
  // Schedules: `nodes` are removed and `replacement` takes the place of node `at`.
  void replace(const std::vector<int>& nodes, int at, Node replacement);
  // Applies the scheduled replacements (indices change afterwards).
  void commit();

 private:
  Graph& graph_;
  GraphIndex index_;
  std::vector<bool> claimed_;
  std::vector<bool> dead_;
  std::map<int, Node> replacements_;
};

}  // namespace convert
}  // namespace xonnx
