#include "runtime/onnx/functions.h"

#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

namespace xonnx {
namespace {

constexpr int kMaxInlineDepth = 32;

using FunctionKey = std::tuple<std::string, std::string, std::string>;  // domain, name, overload

class Inliner {
 public:
  explicit Inliner(Model& model) : model_(model) {
    for (const FunctionDef& f : model.functions) functions_[{f.domain, f.name, f.overload}] = &f;
  }

  Status run() { return inline_graph(model_.graph, 0); }

 private:
  const FunctionDef* find(const Node& n) const {
    auto it = functions_.find({n.domain, n.op_type, n.overload});
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
    if (depth >= kMaxInlineDepth) {
      return invalid_model("function '", fn->name, "' calls nest more than ", kMaxInlineDepth,
                           " deep (recursive function?)");
    }
    if (n.inputs.size() > fn->inputs.size() || n.outputs.size() > fn->outputs.size()) {
      return invalid_model(n.describe(), ": calls function '", fn->name, "' with ", n.inputs.size(),
                           " inputs and ", n.outputs.size(), " outputs; it declares ",
                           fn->inputs.size(), " and ", fn->outputs.size());
    }
    const std::string prefix =
        (n.name.empty() ? fn->name : n.name) + "/" + std::to_string(counter_++) + "/";
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

  void rename_in_subgraph(Graph& g, const std::unordered_map<std::string, std::string>& rename,
                          const Node& call, const FunctionDef& fn) {
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

  Model& model_;
  std::map<FunctionKey, const FunctionDef*> functions_;
  int counter_ = 0;
};

}  // namespace

Status inline_functions(Model& model) {
  if (model.functions.empty()) return Status::ok();
  Inliner inliner(model);
  XONNX_RETURN_IF_ERROR(inliner.run());
  model.functions.clear();
  return Status::ok();
}

}  // namespace xonnx
