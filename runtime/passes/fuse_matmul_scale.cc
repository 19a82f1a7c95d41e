// MatMul(A, B) then Mul or Div by a constant float scalar -> com.microsoft FusedMatMul(A, B)
// with alpha: attention's scores scaled by 1 / sqrt(d) after Q x K^T (Whisper, BERT), whose
// [heads, S, S] product was written and then read and written again by the Div. The own
// FusedMatMul scales B's packed panels instead (optimized/matmul.cc). Session creation only:
// the converter's output is for any runtime (ORT makes the same fusion itself).
// The scalar's rank must not exceed the product's (it would broadcast the shape up), the
// product must have no other reader, and alpha (c, or 1 / c for a Div) must be finite and
// non-zero: the same bits when c is a power of two, within an ulp otherwise.
#include <cmath>
#include <string>
#include <vector>

#include "runtime/ir/graph_edit.h"
#include "runtime/ops/registry.h"
#include "runtime/passes/fusion_view.h"
#include "runtime/passes/pass_util.h"
#include "runtime/passes/passes.h"
#include "runtime/passes/shape_inference.h"

namespace xonnx {
namespace passes {

Result<bool> fuse_matmul_scale(Model& model, PassContext& ctx) {
  // A selective build may leave the contrib op out.
  if (!OpRegistry::global().resolve("com.microsoft", "FusedMatMul", 1).is_ok()) return false;
  Graph& g = model.graph;
  if (!has_default_node(g, "MatMul")) return false;
  const ShapeFacts& facts = ctx.shape_facts(model);
  FusionView view(g);
  int fused = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const int mm = static_cast<int>(i);
    if (!view.is(mm, "MatMul") || view.node(mm).inputs.size() != 2) continue;
    const Node& matmul = view.node(mm);
    const int op = view.sole_consumer(matmul.outputs[0]);
    const bool div = view.is(op, "Div");
    if (!div && !view.is(op, "Mul")) continue;
    if (div && view.node(op).inputs[0] != matmul.outputs[0]) continue;  // c / Y is no scale
    const Tensor* c = constant_tensor(g, view.other_input(op, matmul.outputs[0]));
    const std::vector<Dim>* y_dims = facts.dims(matmul.outputs[0]);
    if (!c || c->dtype() != DataType::kFloat || c->numel() != 1 || !y_dims || c->rank() > y_dims->size()) continue;
    const float v = static_cast<float>(c->get_as_double(0));
    const float alpha = div ? 1.0f / v : v;
    if (!std::isfinite(alpha) || alpha == 0.0f || !view.claim({mm, op})) continue;
    Node fused_node;
    fused_node.op_type = "FusedMatMul";
    fused_node.domain = "com.microsoft";
    fused_node.name = view.node(op).name;
    fused_node.inputs = matmul.inputs;
    fused_node.outputs = view.node(op).outputs;
    fused_node.attributes = {float_attribute("alpha", alpha)};
    view.replace({mm, op}, op, std::move(fused_node));
    ++fused;
  }
  if (fused == 0) return false;
  view.commit();
  if (!model.opset_imports.count("com.microsoft")) model.opset_imports["com.microsoft"] = 1;
  ctx.note("fused " + std::to_string(fused) + " MatMul + scalar Mul / Div pairs into com.microsoft:FusedMatMul");
  return true;
}

}  // namespace passes
}  // namespace xonnx
