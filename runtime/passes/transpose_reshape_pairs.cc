// Collapses back-to-back Transposes and Reshapes: Transpose(Transpose(x, p), q) reads x with the
// composed permutation (and vanishes when that is the identity), Reshape(Reshape(x, s1), s2)
// reads x directly when s2 is a constant without 0 entries (a 0 copies a dim of the middle
// tensor). The first node stays while something else reads it; DCE removes it otherwise.
#include "runtime/ir/graph_edit.h"
#include "runtime/passes/pass_util.h"
#include "runtime/passes/passes.h"

namespace xonnx {
namespace passes {

namespace {

const std::vector<int64_t>* perm_of(const Node& n) {
  const Attribute* a = n.find_attr("perm");
  return a && a->type == AttrType::kInts && !a->ints.empty() ? &a->ints : nullptr;
}

// Reshape's target shape is a constant with no 0 (so it does not depend on the input's dims).
bool target_independent_of_input(const Graph& g, const Node& reshape) {
  if (reshape.inputs.size() < 2) return false;
  const Tensor* shape = constant_tensor(g, reshape.inputs[1]);
  if (!shape || shape->dtype() != DataType::kInt64) return false;
  for (int64_t i = 0; i < shape->numel(); ++i) {
    if (shape->data<int64_t>()[i] == 0) return false;
  }
  return true;
}

int collapse_in_graph(Graph& g) {
  int changed = 0;
  for (Node& n : g.nodes) {
    for_each_subgraph(n, [&](Graph& sub) { changed += collapse_in_graph(sub); });
  }
  GraphIndex index(g);
  std::vector<bool> dead(g.nodes.size(), false);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& second = g.nodes[i];
    if (second.inputs.empty() || second.outputs.size() != 1) continue;
    const int p = index.producer(second.inputs[0]);
    if (p < 0 || dead[static_cast<size_t>(p)]) continue;
    const Node& first = g.nodes[static_cast<size_t>(p)];
    if (first.outputs.size() != 1 || first.inputs.empty()) continue;
    if (is_default(first, "Transpose") && is_default(second, "Transpose")) {
      const std::vector<int64_t>* p1 = perm_of(first);
      const std::vector<int64_t>* p2 = perm_of(second);
      if (!p1 || !p2 || p1->size() != p2->size()) continue;
      std::vector<int64_t> composed(p2->size());
      bool identity = true, valid = true;
      for (size_t k = 0; k < p2->size(); ++k) {
        const int64_t q = (*p2)[k];
        if (q < 0 || q >= static_cast<int64_t>(p1->size())) {
          valid = false;
          break;
        }
        composed[k] = (*p1)[static_cast<size_t>(q)];
        identity &= composed[k] == static_cast<int64_t>(k);
      }
      if (!valid) continue;
      const std::string x = first.inputs[0];
      if (identity && !index.is_graph_output(second.outputs[0])) {
        replace_uses(g, second.outputs[0], x);
        dead[i] = true;
      } else {
        second.inputs[0] = x;
        for (Attribute& a : second.attributes) {
          if (a.name == "perm") a.ints = composed;
        }
      }
      ++changed;
    } else if (is_default(first, "Reshape") && is_default(second, "Reshape") &&
               target_independent_of_input(g, second)) {
      second.inputs[0] = first.inputs[0];
      ++changed;
    }
  }
  erase_nodes(g, dead);
  return changed;
}

}  // namespace

Result<bool> collapse_transpose_reshape_pairs(Model& model, PassContext& ctx) {
  const int changed = collapse_in_graph(model.graph);
  if (changed > 0) {
    ctx.note("collapsed " + std::to_string(changed) + " Transpose/Reshape pairs");
  }
  return changed > 0;
}

}  // namespace passes
}  // namespace xonnx
