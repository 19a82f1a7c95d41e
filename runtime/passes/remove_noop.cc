// Removes nodes whose output equals their first input: Identity, Cast/CastLike to the same type,
// Reshape/Expand/Squeeze/Unsqueeze/Slice that keep the shape, identity Transpose, zero Pad,
// Concat of one input, Split into one output, Dropout that drops nothing (inference, or a
// constant ratio 0 as torch writes for eval-mode attention dropout). Shape-dependent cases use
// shape inference (main graph only); the shape-free ones also apply inside subgraph bodies.
#include <set>
#include <unordered_map>

#include "runtime/ir/graph_edit.h"
#include "runtime/passes/pass_util.h"
#include "runtime/passes/passes.h"
#include "runtime/passes/shape_inference.h"

namespace xonnx {
namespace passes {

namespace {

// The constant integers of input i, when it is an initializer.
bool constant_ints(const Graph& g, const Node& n, size_t i, std::vector<int64_t>* out) {
  if (i >= n.inputs.size() || n.inputs[i].empty()) return false;
  const Tensor* t = constant_tensor(g, n.inputs[i]);
  if (!t) return false;
  auto v = t->to_int64_vector();
  if (!v.is_ok()) return false;
  *out = std::move(v).value();
  return true;
}

// The constant float scalar of input i, when it is an initializer.
bool constant_scalar(const Graph& g, const Node& n, size_t i, double* out) {
  if (i >= n.inputs.size() || n.inputs[i].empty()) return false;
  const Tensor* t = constant_tensor(g, n.inputs[i]);
  if (!t || t->numel() != 1 || !dtype_is_float(t->dtype())) return false;
  *out = t->get_as_double(0);
  return true;
}

// Dropout whose output 0 is its input: inference mode (no training_mode, or a constant false),
// or training with a constant ratio 0 (scale 1 / (1 - 0), nothing dropped).
bool dropout_is_identity(const Graph& g, const Node& n, int64_t opset) {
  if (opset < 7) return attr_int_or(n, "is_test", 0) != 0;
  if (opset < 12 || n.inputs.size() < 3 || n.inputs[2].empty()) return true;
  std::vector<int64_t> mode;
  if (constant_ints(g, n, 2, &mode) && mode.size() == 1 && mode[0] == 0) return true;
  double ratio = 0;
  return constant_scalar(g, n, 1, &ratio) && ratio == 0;
}

// Same type and shape in and out, as far as inference can prove.
bool same_type_and_shape(const ShapeFacts* facts, const Node& n) {
  if (!facts) return false;
  const TypeInfo* in = facts->type(n.inputs[0]);
  const TypeInfo* out = facts->type(n.outputs[0]);
  return in && out && in->has_shape && out->has_shape && in->elem_type == out->elem_type &&
         in->elem_type != DataType::kUndefined && dims_equal(in->dims, out->dims);
}

bool is_noop(const Graph& g, const GraphIndex& index, const Node& n, int64_t opset, const ShapeFacts* facts) {
  if (!n.domain.empty() || n.inputs.empty() || n.inputs[0].empty() || n.outputs.empty() || n.outputs[0].empty()) {
    return false;
  }
  // Every output but the first must be unused (absent, or read by nobody) for the node to vanish.
  for (size_t k = 1; k < n.outputs.size(); ++k) {
    if (!n.outputs[k].empty() && index.use_count(n.outputs[k]) > 0) return false;
  }
  const std::string& op = n.op_type;
  if (op == "Identity") return true;
  if (op == "Cast" || op == "CastLike") {
    if (!facts) return false;
    const TypeInfo* in = facts->type(n.inputs[0]);
    const TypeInfo* out = facts->type(n.outputs[0]);
    return in && out && in->elem_type != DataType::kUndefined && in->elem_type == out->elem_type;
  }
  if (op == "Transpose") {
    const Attribute* perm = n.find_attr("perm");
    if (!perm || perm->ints.empty()) {
      return facts && facts->dims(n.inputs[0]) && facts->dims(n.inputs[0])->size() <= 1;
    }
    return is_identity_perm(perm->ints);
  }
  if (op == "Concat") return n.inputs.size() == 1;
  if (op == "Split") {
    // One output of a Split is its whole input (a split list can only be [dim]).
    return n.outputs.size() == 1;
  }
  if (op == "Dropout") return dropout_is_identity(g, n, opset);
  if (op == "Pad") {
    std::vector<int64_t> pads;
    if (opset >= 11) {
      if (!constant_ints(g, n, 1, &pads)) return false;
    } else if (const Attribute* a = n.find_attr("pads")) {
      pads = a->ints;
    }
    for (int64_t p : pads) {
      if (p != 0) return false;
    }
    return true;
  }
  if (op == "Slice") {
    std::vector<int64_t> steps;
    if (opset >= 10 && n.inputs.size() > 4 && !n.inputs[4].empty()) {
      if (!constant_ints(g, n, 4, &steps)) return false;
      for (int64_t s : steps) {
        if (s != 1) return false;  // a reversing slice keeps the shape but not the order
      }
    }
    return same_type_and_shape(facts, n);
  }
  if (op == "Unsqueeze" || op == "Squeeze") {
    std::vector<int64_t> axes;
    const bool empty_axes =
        opset >= 13 ? n.inputs.size() < 2 || n.inputs[1].empty() || (constant_ints(g, n, 1, &axes) && axes.empty())
                    : !n.find_attr("axes") || n.find_attr("axes")->ints.empty();
    if (op == "Unsqueeze" && empty_axes) return true;
    return same_type_and_shape(facts, n);
  }
  if (op == "Reshape" || op == "Expand") return same_type_and_shape(facts, n);
  return false;
}

// Removes the no-ops of `graph` (and, without shapes, of its subgraphs). Returns the count.
// One index and one renaming sweep for all of them (a chain Identity -> Identity resolves to
// its start); only a no-op writing a graph output is handled one at a time (rare).
int remove_in_graph(const Model& model, Graph& graph, const ShapeFacts* facts) {
  int removed = 0;
  std::vector<bool> dead(graph.nodes.size(), false);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    for_each_subgraph(graph.nodes[i], [&](Graph& sub) { removed += remove_in_graph(model, sub, nullptr); });
  }
  std::unordered_map<std::string, std::string> renames;  // output -> the value it equals
  auto resolve = [&renames](std::string v) {
    for (auto it = renames.find(v); it != renames.end(); it = renames.find(v)) v = it->second;
    return v;
  };
  std::vector<size_t> writes_output;
  {
    const GraphIndex index(graph);
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
      const Node& n = graph.nodes[i];
      if (!is_noop(graph, index, n, opset_of(model, n), facts)) continue;
      if (index.is_graph_output(n.outputs[0])) {
        writes_output.push_back(i);
        continue;
      }
      renames[n.outputs[0]] = resolve(n.inputs[0]);
      dead[i] = true;
      ++removed;
    }
  }
  if (!renames.empty()) {
    for (auto& [from, to] : renames) to = resolve(to);
    replace_uses(graph, renames);
  }
  for (size_t i : writes_output) {
    // The graph output keeps its name: the producer of `in` writes it directly. Values that
    // are not produced here (graph inputs, initializers, outer scope) keep the node.
    const Node& n = graph.nodes[i];
    const std::string in = n.inputs[0];
    const std::string out = n.outputs[0];
    const GraphIndex index(graph);
    const int producer = index.producer(in);
    if (producer < 0 || dead[producer] || index.is_graph_output(in)) continue;
    for (std::string& o : graph.nodes[producer].outputs) {
      if (o == in) o = out;
    }
    replace_uses(graph, in, out);
    dead[i] = true;
    ++removed;
  }
  erase_nodes(graph, dead);
  return removed;
}

}  // namespace

Result<bool> remove_noop(Model& model, PassContext& ctx) {
  const ShapeFacts& facts = ctx.shape_facts(model);
  const int removed = remove_in_graph(model, model.graph, &facts);
  if (removed > 0) ctx.note("removed " + std::to_string(removed) + " no-op nodes");
  return removed > 0;
}

}  // namespace passes
}  // namespace xonnx
