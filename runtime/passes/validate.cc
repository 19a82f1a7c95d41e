#include "runtime/passes/validate.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <set>

#include "runtime/ir/graph_edit.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace {

// Names visible from enclosing graphs, innermost last.
using Scopes = std::vector<const std::set<std::string>*>;

bool visible(const Scopes& scopes, const std::string& name) {
  for (const auto* s : scopes) {
    if (s->count(name)) return true;
  }
  return false;
}

const Attribute* graph_attr(const Node& n, const char* name) {
  const Attribute* a = n.find_attr(name);
  return a && a->type == AttrType::kGraph && a->g ? a : nullptr;
}

// A window's sizes (kernel_shape, strides, dilations, pads, output_padding, output_shape) within
// +-2^31 - 1: shape inference, the passes and the kernels add and multiply them with dims, and
// values near 2^63 overflowed int64 there (a MaxPool with pads 2^63 - 1 ran and gave a wrong
// answer). Whether a value is valid for the op (a stride of 0, a negative pad) the kernels check.
bool has_window(const Node& n) {
  static const std::set<std::string> kWindowOps = {"Conv",
                                                   "ConvTranspose",
                                                   "ConvInteger",
                                                   "QLinearConv",
                                                   "DeformConv",
                                                   "MaxPool",
                                                   "AveragePool",
                                                   "LpPool",
                                                   "MaxUnpool",
                                                   "Col2Im",
                                                   "FusedConv",
                                                   "NhwcConv",
                                                   "QLinearAveragePool",
                                                   "NhwcMaxPool"};
  return (n.domain.empty() || n.domain == "com.microsoft") && kWindowOps.count(n.op_type) != 0;
}

// For a node with has_window; `label` names it in the error.
Status window_attributes(const Node& n, const std::string& label) {
  static const char* const kWindowAttributes[] = {"kernel_shape", "strides",        "dilations",
                                                  "pads",         "output_padding", "output_shape"};
  constexpr int64_t kLimit = 2147483647;
  for (const char* name : kWindowAttributes) {
    const Attribute* a = n.find_attr(name);
    if (!a) continue;
    for (size_t i = 0; i < a->ints.size(); ++i) {
      if (a->ints[i] < -kLimit || a->ints[i] > kLimit) {
        return invalid_model(label, "attribute ", name, "[", i, "] = ", a->ints[i],
                             " is out of range: window sizes, strides, dilations and pads must be within +-", kLimit);
      }
    }
  }
  return Status::ok();
}

class Validator {
 public:
  explicit Validator(const Model& model) : model_(model) {
    for (const FunctionDef& f : model.functions) functions_.insert(f.domain + "::" + f.name);
  }

  Status graph(const Graph& g, const std::string& where, const Scopes& outer,
               const std::map<std::string, int64_t>& opsets) {
    // 1. Definitions: inputs, initializers, node outputs; one writer per name.
    std::set<std::string> defined;
    for (const ValueInfo& v : g.inputs) {
      if (v.name.empty()) return invalid_model(where, ": a graph input has an empty name");
      if (!defined.insert(v.name).second) {
        return invalid_model(where, ": graph input '", v.name, "' is declared twice");
      }
    }
    for (const NamedTensor& t : g.initializers) defined.insert(t.name);  // may override an input
    std::unordered_map<std::string, size_t> producer;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      for (const std::string& o : g.nodes[i].outputs) {
        if (o.empty()) continue;
        if (!defined.insert(o).second) {
          auto p = producer.find(o);
          return invalid_model(
              where, ": ", g.nodes[i].describe(), ": output '", o, "' is already produced by ",
              p != producer.end() ? g.nodes[p->second].describe() : std::string("a graph input or initializer"),
              " (duplicate producer)");
        }
        producer[o] = i;
      }
    }
    Scopes scopes = outer;
    scopes.push_back(&defined);

    // 2. Reads, each node's op and its bodies (which see this graph's names).
    std::vector<std::vector<std::string>> reads(g.nodes.size());
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const Node& n = g.nodes[i];
      for (const std::string& in : n.inputs) {
        if (in.empty()) continue;
        if (!visible(scopes, in)) {
          return invalid_model(where, ": ", n.describe(), " uses '", in,
                               "', which is not a graph input, an initializer, or the output of any node");
        }
        reads[i].push_back(in);
      }
      XONNX_RETURN_IF_ERROR(op(n, where, opsets));
      XONNX_RETURN_IF_ERROR(control_flow(n, where));
      for (const Attribute& a : n.attributes) {
        std::vector<const Graph*> bodies;
        if (a.g) bodies.push_back(a.g.get());
        for (const auto& sg : a.graphs) bodies.push_back(sg.get());
        for (const Graph* body : bodies) {
          const std::string inner = where + " > " + n.describe() + " > " + a.name;
          XONNX_RETURN_IF_ERROR(graph(*body, inner, scopes, opsets));
        }
      }
      std::set<std::string> implicit;
      collect_free_names_of_bodies(n, implicit);
      for (const std::string& name : implicit) {
        if (defined.count(name)) reads[i].push_back(name);
      }
    }
    for (const ValueInfo& v : g.outputs) {
      if (!visible(scopes, v.name)) return invalid_model(where, ": graph output '", v.name, "' is never produced");
    }
    // 3. Order.
    auto order = topological_order(g, reads, producer);
    if (!order.is_ok()) return order.status().with_context(where + ": ");
    return Status::ok();
  }

  Status function(const FunctionDef& f) {
    Graph body;
    body.name = f.domain + "::" + f.name;
    for (const std::string& in : f.inputs) body.inputs.push_back({in, {}});
    for (const std::string& out : f.outputs) body.outputs.push_back({out, {}});
    body.nodes = f.nodes;
    std::map<std::string, int64_t> opsets = model_.opset_imports;
    for (const auto& [domain, version] : f.opset_imports) opsets[domain] = version;
    return graph(body, "function '" + body.name + "'", {}, opsets);
  }

 private:
  Status op(const Node& n, const std::string& where, const std::map<std::string, int64_t>& opsets) {
    if (functions_.count(n.domain + "::" + n.op_type)) return Status::ok();  // a local function
    int64_t opset = n.opset;
    if (opset == 0) {
      auto it = opsets.find(n.domain);
      if (it == opsets.end()) {
        return invalid_model(where, ": ", n.describe(), ": domain '", n.domain, "' is not imported by the model");
      }
      opset = it->second;
    }
    const std::string label = where + ": " + n.describe() + " [opset " + std::to_string(opset) + "]: ";
    auto resolved = OpRegistry::global().resolve(n.domain, n.op_type, opset);
    if (!resolved.is_ok()) return resolved.status().with_context(label);
    if (n.domain.empty() && n.op_type == "Constant") XONNX_RETURN_IF_ERROR(constant_value(n, label));
    if (has_window(n)) XONNX_RETURN_IF_ERROR(window_attributes(n, label));
    return check_arity(*resolved->spec, label, static_cast<int>(n.inputs.size()), static_cast<int>(n.outputs.size()));
  }

  // A Constant holds exactly one value attribute (its kernel checks the contents).
  static Status constant_value(const Node& n, const std::string& label) {
    static const std::set<std::string> kValues = {"value",      "value_float",  "value_floats",  "value_int",
                                                  "value_ints", "value_string", "value_strings", "sparse_value"};
    const auto count = std::count_if(n.attributes.begin(), n.attributes.end(),
                                     [](const Attribute& a) { return kValues.count(a.name) != 0; });
    if (count == 1) return Status::ok();
    return invalid_model(label, "Constant needs exactly one of value, value_float(s), value_int(s), value_string(s), ",
                         "sparse_value; got ", count);
  }

  // The body arities the If, Loop and Scan kernels require (runtime/ops/ref/control_flow.cc).
  static Status control_flow(const Node& n, const std::string& where) {
    if (!n.domain.empty()) return Status::ok();
    const std::string label = where + ": " + n.describe() + ": ";
    auto body = [&](const char* name) -> Result<const Graph*> {
      const Attribute* a = graph_attr(n, name);
      if (!a) return invalid_model(label, "the graph attribute '", name, "' is missing");
      return a->g.get();
    };
    if (n.op_type == "If") {
      for (const char* branch : {"then_branch", "else_branch"}) {
        XONNX_ASSIGN_OR_RETURN(const Graph* g, body(branch));
        if (g->outputs.size() != n.outputs.size()) {
          return invalid_model(label, branch, " gives ", g->outputs.size(), " outputs; the If node has ",
                               n.outputs.size());
        }
      }
    } else if (n.op_type == "Loop") {
      XONNX_ASSIGN_OR_RETURN(const Graph* g, body("body"));
      const size_t carried = n.inputs.size() < 2 ? 0 : n.inputs.size() - 2;
      if (g->inputs.size() != carried + 2) {
        return invalid_model(label, "the body takes ", g->inputs.size(), " inputs; expected ", carried + 2,
                             " (iteration, condition, ", carried, " loop-carried)");
      }
      if (g->outputs.size() < carried + 1 || n.outputs.size() > g->outputs.size() - 1) {
        return invalid_model(label, "the body gives ", g->outputs.size(), " outputs for ", carried,
                             " loop-carried values and a node with ", n.outputs.size(), " outputs");
      }
    } else if (n.op_type == "Scan") {
      XONNX_ASSIGN_OR_RETURN(const Graph* g, body("body"));
      const Attribute* m = n.find_attr("num_scan_inputs");
      if (!m || m->type != AttrType::kInt || m->i < 1 || static_cast<size_t>(m->i) > n.inputs.size()) {
        return invalid_model(label, "num_scan_inputs is missing or does not fit ", n.inputs.size(), " inputs");
      }
      // Opset 8's first input (sequence_lens) is not fed to the body: allow either count.
      if (g->inputs.size() != n.inputs.size() && g->inputs.size() + 1 != n.inputs.size()) {
        return invalid_model(label, "the body takes ", g->inputs.size(), " inputs; the node has ", n.inputs.size());
      }
      if (g->outputs.size() != n.outputs.size()) {
        return invalid_model(label, "the body gives ", g->outputs.size(), " outputs; the node has ", n.outputs.size());
      }
    }
    return Status::ok();
  }

  const Model& model_;
  std::set<std::string> functions_;
};

}  // namespace

void collect_free_names(const Graph& g, std::set<std::string>& out) {
  std::set<std::string> defined;
  for (const ValueInfo& v : g.inputs) defined.insert(v.name);
  for (const NamedTensor& t : g.initializers) defined.insert(t.name);
  for (const Node& n : g.nodes) defined.insert(n.outputs.begin(), n.outputs.end());
  auto use = [&](const std::string& name) {
    if (!name.empty() && !defined.count(name)) out.insert(name);
  };
  for (const Node& n : g.nodes) {
    for (const std::string& in : n.inputs) use(in);
    std::set<std::string> inner;
    collect_free_names_of_bodies(n, inner);
    for (const std::string& name : inner) use(name);
  }
  for (const ValueInfo& v : g.outputs) use(v.name);
}

void collect_free_names_of_bodies(const Node& n, std::set<std::string>& out) {
  for (const Attribute& a : n.attributes) {
    if (a.g) collect_free_names(*a.g, out);
    for (const auto& sg : a.graphs) collect_free_names(*sg, out);
  }
}

Result<std::vector<size_t>> topological_order(const Graph& g, const std::vector<std::vector<std::string>>& reads,
                                              const std::unordered_map<std::string, size_t>& producer) {
  std::vector<int> pending(g.nodes.size(), 0);
  std::vector<std::vector<size_t>> users(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (const std::string& name : reads[i]) {
      auto it = producer.find(name);
      if (it == producer.end()) continue;
      if (it->second == i) {
        return invalid_model(g.nodes[i].describe(), " reads its own output '", name, "' (cycle)");
      }
      ++pending[i];
      users[it->second].push_back(i);
    }
  }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> ready;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (pending[i] == 0) ready.push(i);
  }
  std::vector<size_t> order;
  while (!ready.empty()) {
    const size_t i = ready.top();
    ready.pop();
    order.push_back(i);
    for (size_t u : users[i]) {
      if (--pending[u] == 0) ready.push(u);
    }
  }
  if (order.size() != g.nodes.size()) {
    std::string names;
    int shown = 0;
    for (size_t i = 0; i < g.nodes.size() && shown < 3; ++i) {
      if (pending[i] > 0) names += (shown++ ? ", " : "") + g.nodes[i].describe();
    }
    return invalid_model("the graph has a cycle involving ", names);
  }
  return order;
}

Status check_window_attributes(const Graph& g, const std::string& where) {
  for (const Node& n : g.nodes) {
    if (has_window(n)) XONNX_RETURN_IF_ERROR(window_attributes(n, where + ": " + n.describe() + ": "));
    for (const Attribute& a : n.attributes) {
      if (a.g) XONNX_RETURN_IF_ERROR(check_window_attributes(*a.g, where + " > " + n.describe() + " > " + a.name));
      for (const auto& body : a.graphs)
        XONNX_RETURN_IF_ERROR(check_window_attributes(*body, where + " > " + n.describe() + " > " + a.name));
    }
  }
  return Status::ok();
}

Status validate_model(const Model& model) {
  Validator v(model);
  const std::string main = "graph '" + model.graph.name + "'";
  XONNX_RETURN_IF_ERROR(v.graph(model.graph, main, {}, model.opset_imports));
  for (const FunctionDef& f : model.functions) XONNX_RETURN_IF_ERROR(v.function(f));
  return Status::ok();
}

std::vector<std::string> node_reads(const Node& n, std::set<std::string>* captures) {
  std::set<std::string> implicit;
  collect_free_names_of_bodies(n, implicit);
  if (captures) captures->insert(implicit.begin(), implicit.end());
  std::vector<std::string> reads(n.inputs.begin(), n.inputs.end());
  reads.insert(reads.end(), implicit.begin(), implicit.end());
  return reads;
}

Status sort_topologically(Graph& g) {
  for (Node& n : g.nodes) {
    Status sub = Status::ok();
    for_each_subgraph(n, [&](Graph& body) {
      if (sub.is_ok()) sub = sort_topologically(body);
    });
    XONNX_RETURN_IF_ERROR(sub);
  }
  std::unordered_map<std::string, size_t> producer;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (const std::string& o : g.nodes[i].outputs) {
      if (!o.empty()) producer.emplace(o, i);
    }
  }
  std::vector<std::vector<std::string>> reads(g.nodes.size());
  bool sorted = true;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    reads[i] = node_reads(g.nodes[i]);
    for (const std::string& name : reads[i]) {
      auto it = producer.find(name);
      if (!name.empty() && it != producer.end() && it->second >= i) sorted = false;
    }
  }
  if (sorted) return Status::ok();
  XONNX_ASSIGN_OR_RETURN(std::vector<size_t> order, topological_order(g, reads, producer));
  std::vector<Node> nodes;
  nodes.reserve(order.size());
  for (size_t i : order) nodes.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(nodes);
  return Status::ok();
}

}  // namespace xonnx
