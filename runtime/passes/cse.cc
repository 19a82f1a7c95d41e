// Common-subexpression elimination: a node with the same op, domain, opset, inputs and attributes
// (compared fully, tensors byte for byte) as an earlier one is replaced by it. Random ops are never
// merged; nodes with subgraphs are not merged (their bodies are CSE'd on their own).
#include <cstring>
#include <map>
#include <set>

#include "runtime/ir/graph_edit.h"
#include "runtime/passes/passes.h"

namespace xonnx {
namespace passes {

namespace {

bool is_nondeterministic(const Node& n) {
  static const std::set<std::string> kRandom = {
      "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial", "Bernoulli", "Dropout"};
  return n.domain.empty() ? kRandom.count(n.op_type) > 0 : n.op_type.find("Random") != std::string::npos;
}

bool tensors_equal(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  if (!a.defined()) return true;
  if (a.dtype() == DataType::kString) {
    for (int64_t i = 0; i < a.numel(); ++i) {
      if (a.string_data()[i] != b.string_data()[i]) return false;
    }
    return true;
  }
  const size_t bytes = a.nbytes();
  return bytes == b.nbytes() && (bytes == 0 || std::memcmp(a.raw_data(), b.raw_data(), bytes) == 0);
}

bool floats_equal(float a, float b) { return std::memcmp(&a, &b, sizeof(float)) == 0; }

// Type infos are compared only where attributes carry them (rare); structural equality.
bool type_protos_equal(const TypeInfo& a, const TypeInfo& b) {
  if (a.kind != b.kind || a.elem_type != b.elem_type || a.has_shape != b.has_shape || a.dims.size() != b.dims.size() ||
      static_cast<bool>(a.elem) != static_cast<bool>(b.elem)) {
    return false;
  }
  for (size_t i = 0; i < a.dims.size(); ++i) {
    if (a.dims[i].value != b.dims[i].value || a.dims[i].param != b.dims[i].param) return false;
  }
  return !a.elem || type_protos_equal(*a.elem, *b.elem);
}

bool attributes_equal(const Attribute& a, const Attribute& b) {
  if (a.name != b.name || a.type != b.type || a.ref_attr_name != b.ref_attr_name) return false;
  if (a.g || b.g || !a.graphs.empty() || !b.graphs.empty()) return false;  // never merged
  if (!floats_equal(a.f, b.f) || a.i != b.i || a.s != b.s || a.ints != b.ints || a.strings != b.strings ||
      a.floats.size() != b.floats.size() || a.tensors.size() != b.tensors.size() ||
      a.type_protos.size() != b.type_protos.size()) {
    return false;
  }
  for (size_t i = 0; i < a.floats.size(); ++i) {
    if (!floats_equal(a.floats[i], b.floats[i])) return false;
  }
  if (!tensors_equal(a.t, b.t)) return false;
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    if (!tensors_equal(a.tensors[i], b.tensors[i])) return false;
  }
  if (!type_protos_equal(a.tp, b.tp)) return false;
  for (size_t i = 0; i < a.type_protos.size(); ++i) {
    if (!type_protos_equal(a.type_protos[i], b.type_protos[i])) return false;
  }
  return true;
}

bool nodes_equivalent(const Node& a, const Node& b) {
  if (a.op_type != b.op_type || a.domain != b.domain || a.overload != b.overload || a.opset != b.opset ||
      a.inputs != b.inputs || a.outputs.size() != b.outputs.size() || a.attributes.size() != b.attributes.size()) {
    return false;
  }
  // The same outputs must be present (an omitted optional output can't stand in for a used one).
  for (size_t k = 0; k < a.outputs.size(); ++k) {
    if (a.outputs[k].empty() != b.outputs[k].empty()) return false;
  }
  // Attribute order is not meaningful: match by name.
  for (const Attribute& attr : a.attributes) {
    const Attribute* other = b.find_attr(attr.name);
    if (!other || !attributes_equal(attr, *other)) return false;
  }
  return true;
}

// A cheap bucket key; equality is decided by nodes_equivalent.
std::string bucket_key(const Node& n) {
  std::string key = n.domain + "|" + n.op_type + "|" + std::to_string(n.opset) + "|" + std::to_string(n.outputs.size());
  for (const std::string& in : n.inputs) key += "|" + in;
  return key;
}

bool mergeable(const Node& n) {
  if (n.outputs.empty() || is_nondeterministic(n)) return false;
  for (const Attribute& a : n.attributes) {
    if (a.g || !a.graphs.empty()) return false;
  }
  return true;
}

int cse_in_graph(Graph& graph) {
  int merged = 0;
  for (Node& n : graph.nodes) {
    for_each_subgraph(n, [&](Graph& sub) { merged += cse_in_graph(sub); });
  }
  std::set<std::string> graph_outputs;
  for (const ValueInfo& vi : graph.outputs) graph_outputs.insert(vi.name);

  std::map<std::string, std::string> renamed;  // merged output -> surviving output
  std::map<std::string, std::vector<size_t>> buckets;
  std::vector<bool> dead(graph.nodes.size(), false);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    Node& n = graph.nodes[i];
    for (std::string& in : n.inputs) {
      auto it = renamed.find(in);
      if (it != renamed.end()) in = it->second;
    }
    for_each_subgraph(n, [&](Graph& sub) {
      for (const std::string& name : outer_scope_reads(sub)) {
        auto it = renamed.find(name);
        if (it != renamed.end()) replace_uses(sub, name, it->second);
      }
    });
    if (!mergeable(n)) continue;
    bool feeds_output = false;
    for (const std::string& o : n.outputs) feeds_output |= graph_outputs.count(o) > 0;
    std::vector<size_t>& bucket = buckets[bucket_key(n)];
    size_t match = graph.nodes.size();
    if (!feeds_output) {
      for (size_t j : bucket) {
        if (nodes_equivalent(graph.nodes[j], n)) {
          match = j;
          break;
        }
      }
    }
    if (match == graph.nodes.size()) {
      bucket.push_back(i);
      continue;
    }
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      if (!n.outputs[k].empty()) renamed[n.outputs[k]] = graph.nodes[match].outputs[k];
    }
    dead[i] = true;
    ++merged;
  }
  erase_nodes(graph, dead);
  return merged;
}

}  // namespace

Result<bool> common_subexpression_elimination(Model& model, PassContext& ctx) {
  const int merged = cse_in_graph(model.graph);
  if (merged > 0) ctx.note("merged " + std::to_string(merged) + " duplicate nodes");
  return merged > 0;
}

}  // namespace passes
}  // namespace xonnx
