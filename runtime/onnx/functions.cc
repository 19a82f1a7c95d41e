#include "runtime/onnx/functions.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

namespace xonnx {
namespace {

using FunctionKey = std::tuple<std::string, std::string, std::string>;  // domain, name, overload

FunctionKey key_of(const FunctionDef& f) { return {f.domain, f.name, f.overload}; }
FunctionKey call_key(const Node& n) { return {n.domain, n.op_type, n.overload}; }
std::string function_name(const FunctionDef& f) {
  return "'" + (f.domain.empty() ? f.name : f.domain + "::" + f.name) + "'";
}

// Calls of functions in `nodes` and in their subgraphs (depth-bounded by the loader).
void collect_calls(const std::vector<Node>& nodes, const std::map<FunctionKey, size_t>& index, std::set<size_t>& out) {
  for (const Node& n : nodes) {
    auto it = index.find(call_key(n));
    if (it != index.end()) out.insert(it->second);
    for (const Attribute& a : n.attributes) {
      if (a.g) collect_calls(a.g->nodes, index, out);
      for (const auto& sg : a.graphs) collect_calls(sg->nodes, index, out);
    }
  }
}

class Inliner {
 public:
  Inliner(Model& model, const LoadOptions& options) : model_(model), options_(options) {
    for (const FunctionDef& f : model.functions) functions_[key_of(f)] = &f;
  }

  Status run() { return inline_graph(model_.graph, 0); }

 private:
  const FunctionDef* find(const Node& n) const {
    auto it = functions_.find(call_key(n));
    return it == functions_.end() ? nullptr : it->second;
  }

  Status inline_graph(Graph& g, int depth) {
    std::vector<Node> out;
    out.reserve(g.nodes.size());
    for (Node& n : g.nodes) XONNX_RETURN_IF_ERROR(inline_node(std::move(n), depth, out));
    g.nodes = std::move(out);
    return Status::ok();
  }

  Status inline_subgraphs(Node& n, int depth) {
    for (Attribute& a : n.attributes) {
      if (a.g) XONNX_RETURN_IF_ERROR(inline_graph(*a.g, depth));
      for (auto& sg : a.graphs) XONNX_RETURN_IF_ERROR(inline_graph(*sg, depth));
    }
    return Status::ok();
  }

  Status inline_node(Node n, int depth, std::vector<Node>& out) {
    const FunctionDef* fn = find(n);
    if (!fn) {
      XONNX_RETURN_IF_ERROR(inline_subgraphs(n, depth));
      out.push_back(std::move(n));
      return Status::ok();
    }
    if (depth >= options_.max_nesting_depth) {
      return invalid_model(n.describe(), ": calls of function ", function_name(*fn), " nest more than ",
                           options_.max_nesting_depth, " deep (max_nesting_depth)");
    }
    // Every body node copied counts, checked before the copies are made: a small file can
    // expand exponentially (F1 calls F0 twice, F2 calls F1 twice, ...).
    copies_ += static_cast<int64_t>(fn->nodes.size());
    if (copies_ > options_.max_inlined_nodes) return too_many_nodes(n);
    if (n.inputs.size() > fn->inputs.size() || n.outputs.size() > fn->outputs.size()) {
      return invalid_model(n.describe(), ": calls function '", fn->name, "' with ", n.inputs.size(), " inputs and ",
                           n.outputs.size(), " outputs; it declares ", fn->inputs.size(), " and ", fn->outputs.size());
    }
    const std::string prefix = (n.name.empty() ? fn->name : n.name) + "/" + std::to_string(counter_++) + "/";
    std::unordered_map<std::string, std::string> rename;
    for (size_t i = 0; i < fn->inputs.size(); ++i) {
      rename[fn->inputs[i]] = i < n.inputs.size() ? n.inputs[i] : std::string();
    }
    for (size_t i = 0; i < fn->outputs.size(); ++i) {
      const bool bound = i < n.outputs.size() && !n.outputs[i].empty();
      rename[fn->outputs[i]] = bound ? n.outputs[i] : prefix + fn->outputs[i];
    }
    for (const Node& body : fn->nodes) {
      for (const std::string& o : body.outputs) {
        if (!o.empty() && !rename.count(o)) rename[o] = prefix + o;
      }
    }
    for (const Node& body : fn->nodes) {
      Node copy = body;
      deep_copy_subgraphs(copy);  // each call renames its own copy of an If/Loop body
      copy.name = prefix + body.name;
      for (std::string& in : copy.inputs) {
        if (in.empty()) continue;
        auto it = rename.find(in);
        if (it == rename.end()) {
          return invalid_model("function '", fn->name, "': ", body.describe(), " uses '", in,
                               "', which is neither a function input nor produced in the body");
        }
        in = it->second;
      }
      for (std::string& o : copy.outputs) {
        if (!o.empty()) o = rename.at(o);
      }
      XONNX_RETURN_IF_ERROR(resolve_attributes(copy.attributes, n, *fn));
      for (Attribute& a : copy.attributes) {
        if (a.g) rename_in_subgraph(*a.g, rename, n, *fn);
        for (auto& sg : a.graphs) rename_in_subgraph(*sg, rename, n, *fn);
      }
      XONNX_RETURN_IF_ERROR(set_opset(copy, *fn));
      XONNX_RETURN_IF_ERROR(inline_node(std::move(copy), depth + 1, out));
    }
    return Status::ok();
  }

  // Replaces attribute references with the caller's value or the function's default.
  Status resolve_attributes(std::vector<Attribute>& attrs, const Node& call, const FunctionDef& fn) {
    std::vector<Attribute> resolved;
    for (Attribute& a : attrs) {
      if (a.ref_attr_name.empty()) {
        resolved.push_back(std::move(a));
        continue;
      }
      const Attribute* given = call.find_attr(a.ref_attr_name);
      const Attribute* source = given;
      if (!source) {
        for (const Attribute& d : fn.attribute_defaults) {
          if (d.name == a.ref_attr_name) source = &d;
        }
      }
      if (!source) continue;  // unset: the op's own default applies
      Attribute copy = *source;
      copy.name = a.name;
      copy.ref_attr_name.clear();
      resolved.push_back(std::move(copy));
    }
    attrs = std::move(resolved);
    return Status::ok();
  }

  void rename_in_subgraph(Graph& g, const std::unordered_map<std::string, std::string>& rename, const Node& call,
                          const FunctionDef& fn) {
    std::set<std::string> local;
    for (const ValueInfo& v : g.inputs) local.insert(v.name);
    for (const NamedTensor& t : g.initializers) local.insert(t.name);
    for (const Node& n : g.nodes) local.insert(n.outputs.begin(), n.outputs.end());
    auto map_name = [&](std::string& s) {
      if (s.empty() || local.count(s)) return;
      auto it = rename.find(s);
      if (it != rename.end()) s = it->second;
    };
    for (Node& n : g.nodes) {
      for (std::string& in : n.inputs) map_name(in);
      (void)resolve_attributes(n.attributes, call, fn);
      for (Attribute& a : n.attributes) {
        if (a.g) rename_in_subgraph(*a.g, rename, call, fn);
        for (auto& sg : a.graphs) rename_in_subgraph(*sg, rename, call, fn);
      }
    }
    for (ValueInfo& o : g.outputs) map_name(o.name);
  }

  Status set_opset(Node& n, const FunctionDef& fn) {
    auto fn_it = fn.opset_imports.find(n.domain);
    if (fn_it == fn.opset_imports.end()) return Status::ok();
    auto model_it = model_.opset_imports.find(n.domain);
    if (model_it == model_.opset_imports.end()) {
      model_.opset_imports[n.domain] = fn_it->second;
    } else if (model_it->second != fn_it->second) {
      n.opset = fn_it->second;
    }
    return Status::ok();
  }

  Status too_many_nodes(const Node& call) const {
    return resource_exhausted(call.describe(), ": inlining the model's functions makes more than ",
                              options_.max_inlined_nodes, " nodes (max_inlined_nodes)");
  }

  Model& model_;
  const LoadOptions& options_;
  std::map<FunctionKey, const FunctionDef*> functions_;
  int counter_ = 0;
  int64_t copies_ = 0;  // function body nodes copied so far (max_inlined_nodes)
};

}  // namespace

Status check_function_calls(const Model& model, const LoadOptions& options) {
  const size_t n = model.functions.size();
  if (n == 0) return Status::ok();
  std::map<FunctionKey, size_t> index;
  for (size_t i = 0; i < n; ++i) {
    if (!index.emplace(key_of(model.functions[i]), i).second) {
      return invalid_model("function ", function_name(model.functions[i]), " is defined twice");
    }
  }
  std::vector<std::set<size_t>> calls(n);
  std::vector<size_t> callers(n, 0);
  for (size_t i = 0; i < n; ++i) {
    collect_calls(model.functions[i].nodes, index, calls[i]);
    for (size_t c : calls[i]) ++callers[c];
  }
  // Kahn's algorithm from the functions nobody calls; `height` is the longest chain of calls
  // reaching each function (iterative: a long chain must not exhaust the stack).
  std::vector<size_t> ready, height(n, 1);
  for (size_t i = 0; i < n; ++i) {
    if (callers[i] == 0) ready.push_back(i);
  }
  size_t done = 0;
  while (!ready.empty()) {
    const size_t f = ready.back();
    ready.pop_back();
    ++done;
    if (height[f] > static_cast<size_t>(options.max_nesting_depth)) {
      return invalid_model("calls of function ", function_name(model.functions[f]), " nest ", height[f],
                           " deep, more than ", options.max_nesting_depth, " (max_nesting_depth)");
    }
    for (size_t c : calls[f]) {
      height[c] = std::max(height[c], height[f] + 1);
      if (--callers[c] == 0) ready.push_back(c);
    }
  }
  if (done == n) return Status::ok();
  // Every function left has a caller left: walking callers from any of them must come back
  // to a function already passed, which closes a cycle.
  std::vector<std::vector<size_t>> called_by(n);
  for (size_t i = 0; i < n; ++i) {
    for (size_t c : calls[i]) called_by[c].push_back(i);
  }
  size_t f = 0;
  while (callers[f] == 0) ++f;
  std::vector<size_t> path;
  std::vector<bool> seen(n, false);
  while (!seen[f]) {
    seen[f] = true;
    path.push_back(f);
    for (size_t c : called_by[f]) {
      if (callers[c] != 0) {
        f = c;
        break;
      }
    }
  }
  std::string cycle = function_name(model.functions[f]);
  for (auto it = path.rbegin(); it != path.rend() && *it != f; ++it)
    cycle += " -> " + function_name(model.functions[*it]);
  cycle += " -> " + function_name(model.functions[f]);
  return invalid_model("function ", function_name(model.functions[f]), " is recursive (", cycle,
                       "): ONNX functions may not call themselves");
}

Status inline_functions(Model& model, const LoadOptions& options) {
  if (model.functions.empty()) return Status::ok();
  XONNX_RETURN_IF_ERROR(check_function_calls(model, options));
  Inliner inliner(model, options);
  XONNX_RETURN_IF_ERROR(inliner.run());
  model.functions.clear();
  return Status::ok();
}

}  // namespace xonnx
