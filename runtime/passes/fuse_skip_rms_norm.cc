// The residual Add before an RMSNorm joins it, as in ORT GenAI's graphs:
//   s = Add(a, b); y = SimplifiedLayerNormalization(s, w)
// becomes com.microsoft SkipSimplifiedLayerNormalization(a, b, w) with outputs (y, -, -, s): output
// 3, the sum, feeds the next residual Add when s has other readers (otherwise only y is written).
// a and b must be float tensors of equal inferred shape, rank 2 or 3 (ORT's kernel takes
// [B, S, D] or [T, D]), neither a constant; the norm over the last axis with its epsilon. A
// SimplifiedLayerNormalization whose input is an Add that does not qualify is reported.
#include <string>
#include <vector>

#include "runtime/ir/graph_edit.h"
#include "runtime/passes/fusion_view.h"
#include "runtime/passes/pass_util.h"
#include "runtime/passes/passes.h"
#include "runtime/passes/shape_inference.h"

namespace xonnx {
namespace passes {
namespace {

bool is_simplified_norm(const Node& n) {
  return n.domain.empty() && n.op_type == "SimplifiedLayerNormalization" && n.inputs.size() == 2 &&
         !n.outputs.empty() && attr_int_or(n, "axis", -1) == -1 && (n.outputs.size() < 2 || n.outputs[1].empty()) &&
         (n.outputs.size() < 3 || n.outputs[2].empty());
}

// Why the Add `add` cannot be the norm's skip input ("" when it can).
std::string add_blocker(const Graph& g, const Node& add, const ShapeFacts& facts) {
  if (add.inputs.size() != 2 || add.inputs[0].empty() || add.inputs[1].empty()) return "the Add is malformed";
  for (const std::string& in : add.inputs) {
    if (constant_tensor(g, in)) return "'" + in + "' is a constant (a bias, not a residual)";
    const TypeInfo* t = facts.type(in);
    if (!t || t->elem_type != DataType::kFloat) return "'" + in + "' is not known to be float32";
  }
  const std::vector<Dim>* a = facts.dims(add.inputs[0]);
  const std::vector<Dim>* b = facts.dims(add.inputs[1]);
  if (!a || !b || !dims_equal(*a, *b)) return "the Add's inputs are not known to have the same shape";
  if (a->size() != 2 && a->size() != 3) return "the Add's inputs are not 2-D or 3-D";
  return "";
}

}  // namespace

Result<bool> fuse_skip_rms_norm(Model& model, PassContext& ctx) {
  Graph& g = model.graph;
  if (!has_default_node(g, "SimplifiedLayerNormalization")) return false;  // spares the shape inference
  const ShapeFacts& facts = ctx.shape_facts(model);
  FusionView view(g);
  int fused = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& norm = g.nodes[i];
    if (!is_simplified_norm(norm)) continue;
    const std::string& sum = norm.inputs[0];
    const int add = view.index().producer(sum);
    if (add < 0 || !view.is(add, "Add")) continue;  // layer 0 reads the embedding: no skip
    const std::string why = add_blocker(g, view.node(add), facts);
    if (!why.empty()) {
      ctx.diagnose("residual Add before SimplifiedLayerNormalization '" + norm.outputs[0] + "' not fused: " + why);
      continue;
    }
    if (!view.claim({add, static_cast<int>(i)})) continue;
    const bool sum_read = view.index().use_count(sum) > 1;
    const float eps = norm.find_attr("epsilon") ? norm.find_attr("epsilon")->f : 1e-5f;
    Node skip = make_node(
        "SkipSimplifiedLayerNormalization", "com.microsoft", norm.name,
        {view.node(add).inputs[0], view.node(add).inputs[1], norm.inputs[1]},
        sum_read ? std::vector<std::string>{norm.outputs[0], "", "", sum} : std::vector<std::string>{norm.outputs[0]},
        {float_attribute("epsilon", eps)});
    ctx.note("residual Add '" + sum + "' + SimplifiedLayerNormalization '" + norm.outputs[0] +
             "' -> SkipSimplifiedLayerNormalization" + (sum_read ? " (sum kept as output 3)" : ""));
    // At the Add's place: a and b are defined there, and readers of the sum may sit between the
    // Add and the norm.
    view.replace({add, static_cast<int>(i)}, add, std::move(skip));
    ++fused;
  }
  if (fused == 0) return false;
  view.commit();
  model.opset_imports.emplace("com.microsoft", 1);
  return true;
}

}  // namespace passes
}  // namespace xonnx
