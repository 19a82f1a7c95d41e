// Lifts Constant nodes to initializers (in the graph that holds them, subgraph bodies included).
// The value comes from the runtime's own Constant kernel, so every attribute form (value,
// value_float(s), value_int(s), value_string(s), sparse_value) means what the runtime says.
#include <cstdint>
#include <set>

#include "runtime/ir/graph_edit.h"
#include "runtime/passes/node_eval.h"
#include "runtime/passes/passes.h"

namespace xonnx {
namespace passes {

namespace {

// Returns the number of Constant nodes lifted in `graph` and its subgraphs.
int lift_constants(const Model& model, Graph& graph, PassContext& ctx) {
  int lifted = 0;
  std::set<std::string> outputs;
  for (const ValueInfo& vi : graph.outputs) outputs.insert(vi.name);
  std::vector<bool> dead(graph.nodes.size(), false);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    Node& n = graph.nodes[i];
    for_each_subgraph(n, [&](Graph& sub) { lifted += lift_constants(model, sub, ctx); });
    if (!n.domain.empty() || n.op_type != "Constant" || n.outputs.size() != 1) continue;
    const std::string& name = n.outputs[0];
    // A graph output stays a node output: not every consumer accepts an initializer there.
    if (name.empty() || outputs.count(name)) continue;
    auto value = evaluate_node(model, n, {}, INT64_MAX);
    if (!value.is_ok() || value->size() != 1 || !(*value)[0].is_tensor()) {
      ctx.warn("kept " + n.describe() + ": " +
               (value.is_ok() ? std::string("no tensor value") : value.status().message()));
      continue;
    }
    graph.initializers.push_back({name, (*value)[0].tensor()});
    dead[i] = true;
    ++lifted;
  }
  if (lifted > 0) erase_nodes(graph, dead);
  return lifted;
}

}  // namespace

Result<bool> constants_to_initializers(Model& model, PassContext& ctx) {
  const int lifted = lift_constants(model, model.graph, ctx);
  if (lifted > 0) ctx.note("lifted " + std::to_string(lifted) + " Constant nodes to initializers");
  return lifted > 0;
}

}  // namespace passes
}  // namespace xonnx
