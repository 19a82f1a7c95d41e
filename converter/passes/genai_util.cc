#include "converter/passes/genai_util.h"

#include <set>

namespace xonnx {
namespace convert {
namespace genai {

Status sort_topologically(Graph& g) {
  std::set<std::string> defined;
  for (const ValueInfo& vi : g.inputs) defined.insert(vi.name);
  for (const NamedTensor& t : g.initializers) defined.insert(t.name);
  // What each node needs: its inputs and what its subgraphs capture from this graph.
  std::vector<std::vector<std::string>> needs(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    needs[i] = g.nodes[i].inputs;
    for_each_subgraph(g.nodes[i], [&](const Graph& sub) {
      for (const std::string& name : outer_scope_reads(sub)) needs[i].push_back(name);
    });
  }
  std::vector<Node> sorted;
  sorted.reserve(g.nodes.size());
  std::vector<bool> placed(g.nodes.size(), false);
  // Repeatedly place, in the original order, every node whose inputs are defined: stable, and
  // quadratic only in how far nodes are out of order.
  size_t remaining = g.nodes.size();
  size_t first = 0;
  while (remaining > 0) {
    bool progress = false;
    for (size_t i = first; i < g.nodes.size(); ++i) {
      if (placed[i]) continue;
      const Node& n = g.nodes[i];
      bool ready = true;
      for (const std::string& in : needs[i]) ready = ready && (in.empty() || defined.count(in));
      if (!ready) continue;
      for (const std::string& o : n.outputs) {
        if (!o.empty()) defined.insert(o);
      }
      sorted.push_back(n);
      placed[i] = true;
      --remaining;
      progress = true;
      if (i == first) {
        while (first < g.nodes.size() && placed[first]) ++first;
      }
    }
    if (!progress) {
      for (size_t i = 0; i < g.nodes.size(); ++i) {
        if (placed[i]) continue;
        for (const std::string& in : needs[i]) {
          if (!in.empty() && !defined.count(in)) {
            return invalid_model(g.nodes[i].describe(), " reads '", in, "', which nothing computes (or a cycle)");
          }
        }
      }
      return internal_error("topological sort made no progress");
    }
  }
  g.nodes = std::move(sorted);
  for (const ValueInfo& out : g.outputs) {
    if (!defined.count(out.name)) return invalid_model("the graph output '", out.name, "' is not computed");
  }
  return Status::ok();
}

}  // namespace genai
}  // namespace convert
}  // namespace xonnx
