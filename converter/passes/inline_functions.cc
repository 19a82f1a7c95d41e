// Inlines model-local functions (the dynamo exporter emits one per module) with the loader's own
// inliner, then drops the functions and the opset imports no node uses any more (a function's
// domain is imported only so the graph can call it). The default domain's import always stays.
#include <set>

#include "runtime/ir/graph_edit.h"
#include "converter/passes/passes.h"
#include "runtime/onnx/functions.h"
#include "runtime/passes/validate.h"

namespace xonnx {
namespace convert {

namespace {

void collect_domains(const std::vector<Node>& nodes, std::set<std::string>& domains) {
  for (const Node& n : nodes) {
    domains.insert(normalize_domain(n.domain));
    for_each_subgraph(n, [&](const Graph& sub) { collect_domains(sub.nodes, domains); });
  }
}

// A function whose nodes use a domain at another version than the model (or an earlier function)
// imports it, or nullptr; `domain` and `other` name the domain and that other version. Inlined,
// its nodes would need a per-node opset, which an ONNX file cannot express.
const FunctionDef* version_conflict(const Model& model, std::string* domain, int64_t* other) {
  std::map<std::string, int64_t> versions = model.opset_imports;
  for (const FunctionDef& f : model.functions) {
    std::set<std::string> used;
    collect_domains(f.nodes, used);
    for (const std::string& d : used) {
      auto fn_it = f.opset_imports.find(d);
      if (fn_it == f.opset_imports.end()) continue;
      auto [seen, added] = versions.emplace(d, fn_it->second);
      if (!added && seen->second != fn_it->second) {
        *domain = d;
        *other = seen->second;
        return &f;
      }
    }
  }
  return nullptr;
}

}  // namespace

Result<bool> inline_functions_pass(Model& model, PassContext& ctx) {
  bool changed = false;
  std::string domain;
  int64_t other = 0;
  if (const FunctionDef* f = version_conflict(model, &domain, &other)) {
    ctx.note("kept the model-local functions: function '" + f->domain + "::" + f->name + "' imports domain '" +
             domain + "' at version " + std::to_string(f->opset_imports.at(domain)) + ", the model or another function at " +
             std::to_string(other));
  } else if (!model.functions.empty()) {
    const size_t count = model.functions.size();
    XONNX_RETURN_IF_ERROR(inline_functions(model));
    // Function bodies need not be sorted (the loader accepts them as it accepts the main graph);
    // the passes after this one walk nodes in order.
    XONNX_RETURN_IF_ERROR(sort_topologically(model.graph));
    ctx.note("inlined " + std::to_string(count) + " model-local functions");
    changed = true;
  }
  std::set<std::string> used;
  collect_domains(model.graph.nodes, used);
  for (const FunctionDef& f : model.functions) collect_domains(f.nodes, used);
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
