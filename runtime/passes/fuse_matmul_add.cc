// MatMul(A, B) + C -> Gemm(A, B, C) where that is the same computation: A is 2-D (Gemm is 2-D
// only; shapes from shape inference), B a 2-D constant, C a constant unidirectionally broadcastable
// to [M, N], floating point, and the MatMul result has no other reader.
#include "runtime/ir/graph_edit.h"
#include "runtime/passes/fusion_view.h"
#include "runtime/passes/passes.h"
#include "runtime/passes/shape_inference.h"

namespace xonnx {
namespace passes {

namespace {

bool gemm_type(DataType t) { return t == DataType::kFloat || t == DataType::kDouble || t == DataType::kFloat16; }

// C (rank <= 2) broadcasts to [M, N] with Gemm's unidirectional rule; M may be unknown (-1).
bool bias_broadcasts(const Tensor& c, int64_t m, int64_t n) {
  if (c.rank() > 2) return false;
  const int64_t last = c.rank() >= 1 ? c.dim(c.rank() - 1) : 1;
  if (last != 1 && last != n) return false;
  if (c.rank() == 2) {
    const int64_t first = c.dim(0);
    return first == 1 || (m >= 0 && first == m);
  }
  return true;
}

}  // namespace

Result<bool> fuse_matmul_add(Model& model, PassContext& ctx) {
  Graph& g = model.graph;
  const ShapeFacts facts = infer_shapes(model);
  FusionView view(g);
  int fused = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const int mm = static_cast<int>(i);
    if (!view.is(mm, "MatMul") || view.node(mm).inputs.size() != 2) continue;
    const Node& matmul = view.node(mm);
    const std::vector<Dim>* a_dims = facts.dims(matmul.inputs[0]);
    const Tensor* b = constant_tensor(g, matmul.inputs[1]);
    if (!a_dims || a_dims->size() != 2 || !b || b->rank() != 2 || !gemm_type(b->dtype())) continue;
    const int add = view.sole_consumer(matmul.outputs[0]);
    if (!view.is(add, "Add")) continue;
    const std::string c_name = view.other_input(add, matmul.outputs[0]);
    const Tensor* c = constant_tensor(g, c_name);
    const int64_t m = (*a_dims)[0].known() ? (*a_dims)[0].value : -1;
    if (!c || c->dtype() != b->dtype() || !bias_broadcasts(*c, m, b->dim(1))) continue;
    if (!view.claim({mm, add})) continue;
    Node gemm;
    gemm.op_type = "Gemm";
    gemm.name = view.node(add).name;
    gemm.inputs = {matmul.inputs[0], matmul.inputs[1], c_name};
    gemm.outputs = {view.node(add).outputs[0]};
    view.replace({mm, add}, add, std::move(gemm));
    ++fused;
  }
  if (fused == 0) return false;
  view.commit();
  ctx.note("fused " + std::to_string(fused) + " MatMul+Add pairs into Gemm");
  return true;
}

}  // namespace passes
}  // namespace xonnx
