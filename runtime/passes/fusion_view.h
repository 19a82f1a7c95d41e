// Pattern-matching state for the fusion passes (fuse_*.cc here and the converter's --genai
// fusions).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "runtime/ir/graph_edit.h"

namespace xonnx {
namespace passes {

// Pattern-matching helper for the fusion passes: single-reader checks over a GraphIndex, node
// claiming (a node joins at most one fusion per run) and deferred replacement, so indices stay
// valid while matching. Only default-domain ops match `is`.
class FusionView {
 public:
  explicit FusionView(Graph& graph);
  const Node& node(int i) const { return graph_.nodes[static_cast<size_t>(i)]; }
  const GraphIndex& index() const { return index_; }
  // Node i exists, is unclaimed and is the default-domain `op` with a first input and output
  // (binary ops: exactly two inputs; Erf, Sqrt, Reciprocal: one).
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
  // The same with several nodes, in this order, in the place of node `at`.
  void replace(const std::vector<int>& nodes, int at, std::vector<Node> replacement);
  // Applies the scheduled replacements (indices change afterwards).
  void commit();

 private:
  Graph& graph_;
  GraphIndex index_;
  std::vector<bool> claimed_;
  std::vector<bool> dead_;
  std::map<int, std::vector<Node>> replacements_;
};

}  // namespace passes
}  // namespace xonnx
