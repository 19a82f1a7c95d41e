// Who produces and who reads each value of a graph: the lookups every graph pass needs. Two
// views: GraphIndex (use counts; subgraph captures count as uses by the owning node) for the
// structural passes, ValueIndex (readers, constants, pinned names) for the session-time
// rewrites. Both describe the graph as it was when built; a pass that edits the graph rebuilds.
#pragma once

#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "runtime/core/tensor.h"
#include "runtime/ir/graph.h"

namespace xonnx {

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
  std::unordered_map<std::string, int> producer_;
  std::unordered_map<std::string, std::vector<int>> consumers_;
  std::unordered_map<std::string, int> output_uses_;
  std::unordered_set<std::string> inputs_;
  std::vector<int> none_;
};

// Producer, readers and constants of the main graph's values, as found when built. A pass that
// rewrites nodes keeps it true itself or stops reading it.
struct ValueIndex {
  explicit ValueIndex(const Graph& g);

  // The tensor of an initializer or of a Constant node's `value`, else nullptr.
  const Tensor* constant(const std::string& name) const;
  // The producing node's index, or -1 (graph input, initializer, unknown).
  int producer_of(const std::string& name) const;
  const std::vector<size_t>& readers(const std::string& name) const;
  // Graph outputs and names read inside subgraphs: their producers must keep them.
  bool pinned(const std::string& name) const { return pinned_.count(name) != 0; }

  const Graph& graph;
  std::unordered_map<std::string, size_t> producer;
  std::unordered_map<std::string, std::vector<size_t>> consumers;
  std::unordered_map<std::string, const Tensor*> initializers;
  std::set<std::string> pinned_;
  bool has_duplicate_outputs = false;  // the compiler reports it; passes back off
};

}  // namespace xonnx
