#include "runtime/ir/graph_edit.h"

#include <cmath>

namespace xonnx {
void for_each_subgraph(const Node& node, const std::function<void(const Graph&)>& fn) {
  for (const Attribute& a : node.attributes) {
    if (a.g) fn(*a.g);
    for (const auto& g : a.graphs) {
      if (g) fn(*g);
    }
  }
}

void for_each_subgraph(Node& node, const std::function<void(Graph&)>& fn) {
  for (Attribute& a : node.attributes) {
    if (a.g) fn(*a.g);
    for (auto& g : a.graphs) {
      if (g) fn(*g);
    }
  }
}

bool has_subgraphs(const Graph& graph) {
  for (const Node& n : graph.nodes) {
    for (const Attribute& a : n.attributes) {
      if (a.g || !a.graphs.empty()) return true;
    }
  }
  return false;
}

std::set<std::string> defined_names(const Graph& graph) {
  std::set<std::string> names;
  for (const ValueInfo& vi : graph.inputs) names.insert(vi.name);
  for (const NamedTensor& t : graph.initializers) names.insert(t.name);
  for (const Node& n : graph.nodes) {
    for (const std::string& o : n.outputs) {
      if (!o.empty()) names.insert(o);
    }
  }
  return names;
}

std::set<std::string> outer_scope_reads(const Graph& graph) {
  const std::set<std::string> defined = defined_names(graph);
  std::set<std::string> reads;
  auto read = [&](const std::string& name) {
    if (!name.empty() && !defined.count(name)) reads.insert(name);
  };
  for (const Node& n : graph.nodes) {
    for (const std::string& in : n.inputs) read(in);
    for_each_subgraph(n, [&](const Graph& sub) {
      for (const std::string& name : outer_scope_reads(sub)) read(name);
    });
  }
  // A graph output may be an outer-scope value passed straight through.
  for (const ValueInfo& vi : graph.outputs) read(vi.name);
  return reads;
}

const Tensor* constant_tensor(const Graph& graph, const std::string& name) {
  if (name.empty()) return nullptr;
  for (const ValueInfo& vi : graph.inputs) {
    if (vi.name == name) return nullptr;  // overridable by the caller: not a constant
  }
  const NamedTensor* t = graph.find_initializer(name);
  return t ? &t->tensor : nullptr;
}

void replace_uses(Graph& graph, const std::string& from, const std::string& to) {
  for (Node& n : graph.nodes) {
    for (std::string& in : n.inputs) {
      if (in == from) in = to;
    }
    for_each_subgraph(n, [&](Graph& sub) {
      if (defined_names(sub).count(from)) return;  // the subgraph shadows `from`
      replace_uses(sub, from, to);
      // Inside a subgraph, an output naming the outer value is a read of it.
      for (ValueInfo& vi : sub.outputs) {
        if (vi.name == from) vi.name = to;
      }
    });
  }
}

void replace_uses(Graph& graph, const std::unordered_map<std::string, std::string>& renames) {
  if (renames.empty()) return;
  for (Node& n : graph.nodes) {
    for (std::string& in : n.inputs) {
      auto it = in.empty() ? renames.end() : renames.find(in);
      if (it != renames.end()) in = it->second;
    }
    for_each_subgraph(n, [&](Graph& sub) {
      // Names the subgraph defines shadow the outer ones.
      std::unordered_map<std::string, std::string> visible = renames;
      for (const std::string& name : defined_names(sub)) visible.erase(name);
      replace_uses(sub, visible);
      for (ValueInfo& vi : sub.outputs) {
        auto it = visible.find(vi.name);
        if (it != visible.end()) vi.name = it->second;
      }
    });
  }
}

void erase_nodes(Graph& graph, const std::vector<bool>& dead) {
  std::vector<Node> kept;
  kept.reserve(graph.nodes.size());
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (i < dead.size() && dead[i]) continue;
    kept.push_back(std::move(graph.nodes[i]));
  }
  graph.nodes = std::move(kept);
}

namespace {

void collect_all_names(const Graph& graph, std::set<std::string>& names) {
  names.insert(graph.name);
  for (const ValueInfo& vi : graph.inputs) names.insert(vi.name);
  for (const ValueInfo& vi : graph.outputs) names.insert(vi.name);
  for (const ValueInfo& vi : graph.value_info) names.insert(vi.name);
  for (const NamedTensor& t : graph.initializers) names.insert(t.name);
  for (const Node& n : graph.nodes) {
    names.insert(n.name);
    names.insert(n.inputs.begin(), n.inputs.end());
    names.insert(n.outputs.begin(), n.outputs.end());
    for_each_subgraph(n, [&](const Graph& sub) { collect_all_names(sub, names); });
  }
}

}  // namespace

NameAllocator::NameAllocator(const Graph& graph) { collect_all_names(graph, taken_); }

std::string NameAllocator::fresh(const std::string& base) {
  const std::string stem = base.empty() ? std::string("v") : base;
  std::string name = stem;
  for (int64_t k = 1; taken_.count(name); ++k) name = stem + "_" + std::to_string(k);
  taken_.insert(name);
  return name;
}

std::string unique_name(const Graph& graph, const std::string& base) { return NameAllocator(graph).fresh(base); }

std::string add_initializer(Graph& graph, const std::string& base, Tensor tensor) {
  NameAllocator names(graph);
  return add_initializer(graph, names, base, std::move(tensor));
}

std::string add_initializer(Graph& graph, NameAllocator& names, const std::string& base, Tensor tensor) {
  std::string name = names.fresh(base);
  graph.initializers.push_back(NamedTensor{name, std::move(tensor)});
  return name;
}

int64_t opset_of(const Model& model, const Node& node) {
  if (node.opset != 0) return node.opset;
  auto it = model.opset_imports.find(normalize_domain(node.domain));
  return it == model.opset_imports.end() ? 0 : it->second;
}

int64_t attr_int_or(const Node& node, const std::string& name, int64_t fallback) {
  const Attribute* a = node.find_attr(name);
  return a && a->type == AttrType::kInt ? a->i : fallback;
}

float attr_float_or(const Node& node, const std::string& name, float fallback) {
  const Attribute* a = node.find_attr(name);
  return a && a->type == AttrType::kFloat ? a->f : fallback;
}

bool is_float_constant(const Graph& graph, const std::string& name, double value, double tol) {
  const Tensor* t = constant_tensor(graph, name);
  if (!t || t->dtype() != DataType::kFloat || t->numel() < 1 || !t->raw_data()) return false;
  const float* p = t->data<float>();
  for (int64_t i = 0; i < t->numel(); ++i) {
    if (!(std::fabs(static_cast<double>(p[i]) - value) <= tol)) return false;
  }
  return true;
}

const ValueInfo* find_value_info(const Graph& graph, const std::string& name) {
  for (const auto* list : {&graph.inputs, &graph.outputs, &graph.value_info}) {
    for (const ValueInfo& vi : *list) {
      if (vi.name == name) return &vi;
    }
  }
  return nullptr;
}

void deep_copy_subgraphs(Graph& graph) {
  for (Node& n : graph.nodes) {
    for (Attribute& a : n.attributes) {
      if (a.g) {
        a.g = std::make_shared<Graph>(*a.g);
        deep_copy_subgraphs(*a.g);
      }
      for (auto& sub : a.graphs) {
        if (!sub) continue;
        sub = std::make_shared<Graph>(*sub);
        deep_copy_subgraphs(*sub);
      }
    }
  }
}

Model clone_model(const Model& model) {
  Model copy = model;
  deep_copy_subgraphs(copy.graph);
  for (FunctionDef& f : copy.functions) {
    for (Node& n : f.nodes) {
      Graph holder;  // reuse the graph walker for function bodies
      holder.nodes.push_back(std::move(n));
      deep_copy_subgraphs(holder);
      n = std::move(holder.nodes[0]);
    }
  }
  return copy;
}

}  // namespace xonnx
