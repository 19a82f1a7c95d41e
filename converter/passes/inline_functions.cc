// Inlines model-local functions (the dynamo exporter emits one per module) with the loader's own
// inliner, then drops the functions and the opset imports no node uses any more (a function's
// domain is imported only so the graph can call it). The default domain's import always stays.
#include <set>

#include "runtime/ir/graph_edit.h"
#include "converter/passes/passes.h"
#include "runtime/onnx/functions.h"

namespace xonnx {
namespace convert {

namespace {

void collect_domains(const Graph& graph, std::set<std::string>& domains) {
  for (const Node& n : graph.nodes) {
    domains.insert(normalize_domain(n.domain));
    for_each_subgraph(n, [&](const Graph& sub) { collect_domains(sub, domains); });
  }
}

}  // namespace

Result<bool> inline_functions_pass(Model& model, PassContext& ctx) {
  bool changed = false;
  if (!model.functions.empty()) {
    const size_t count = model.functions.size();
    XONNX_RETURN_IF_ERROR(inline_functions(model));
    ctx.note("inlined " + std::to_string(count) + " model-local functions");
    changed = true;
  }
  std::set<std::string> used;
  collect_domains(model.graph, used);
  for (auto it = model.opset_imports.begin(); it != model.opset_imports.end();) {
    if (!it->first.empty() && !used.count(it->first)) {
      ctx.note("dropped the unused opset import '" + it->first + "'");
      it = model.opset_imports.erase(it);
      changed = true;
    } else {
      ++it;
    }
  }
  return changed;
}

}  // namespace convert
}  // namespace xonnx
