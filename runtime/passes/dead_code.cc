// Dead-code elimination: nodes whose outputs nobody reads (no node, no subgraph capture, no graph
// output), initializers nobody reads, and value_info of values that no longer exist. Initializers
// listed as graph inputs (overridable defaults) are dropped from the inputs first: the converted
// model treats them as constants, which is what lets folding and fusions use them.
#include <set>

#include "runtime/ir/graph_edit.h"
#include "runtime/passes/passes.h"

namespace xonnx {
namespace passes {

namespace {

// Removes dead nodes/initializers of `graph` and its subgraphs; returns how many were removed.
int eliminate_in_graph(Graph& graph) {
  int removed = 0;
  // Subgraphs first: what they stop reading may make outer nodes dead.
  for (Node& n : graph.nodes) {
    for_each_subgraph(n, [&](Graph& sub) { removed += eliminate_in_graph(sub); });
  }

  std::set<std::string> needed;
  for (const ValueInfo& vi : graph.outputs) needed.insert(vi.name);
  std::vector<bool> dead(graph.nodes.size(), false);
  for (size_t k = graph.nodes.size(); k-- > 0;) {
    const Node& n = graph.nodes[k];
    bool live = false;
    for (const std::string& o : n.outputs) {
      if (!o.empty() && needed.count(o)) live = true;
    }
    if (!live) {
      dead[k] = true;
      ++removed;
      continue;
    }
    for (const std::string& in : n.inputs) {
      if (!in.empty()) needed.insert(in);
    }
    for_each_subgraph(n, [&](const Graph& sub) {
      for (const std::string& name : outer_scope_reads(sub)) needed.insert(name);
    });
  }
  erase_nodes(graph, dead);

  std::vector<NamedTensor> kept;
  for (NamedTensor& t : graph.initializers) {
    if (needed.count(t.name)) {
      kept.push_back(std::move(t));
    } else {
      ++removed;
    }
  }
  graph.initializers = std::move(kept);

  // value_info of values that are gone (keeps the written model tidy; does not count as a change
  // on its own).
  std::set<std::string> defined = defined_names(graph);
  std::vector<ValueInfo> infos;
  for (ValueInfo& vi : graph.value_info) {
    if (defined.count(vi.name)) infos.push_back(std::move(vi));
  }
  graph.value_info = std::move(infos);
  return removed;
}

}  // namespace

Result<bool> dead_code_elimination(Model& model, PassContext& ctx) {
  Graph& graph = model.graph;
  int promoted = 0;
  std::vector<ValueInfo> inputs;
  for (ValueInfo& vi : graph.inputs) {
    if (graph.find_initializer(vi.name)) {
      ++promoted;
    } else {
      inputs.push_back(std::move(vi));
    }
  }
  graph.inputs = std::move(inputs);
  if (promoted > 0) {
    ctx.note("made " + std::to_string(promoted) +
             " initializers that were also graph inputs into constants (no longer overridable)");
  }
  const int removed = eliminate_in_graph(graph);
  if (removed > 0) ctx.note("removed " + std::to_string(removed) + " dead nodes/initializers");
  return promoted > 0 || removed > 0;
}

}  // namespace passes
}  // namespace xonnx
