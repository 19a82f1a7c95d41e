// MatMul(A, Transpose(W)) with W a constant 2-D float -> com.microsoft FusedMatMul(A, W,
// transB = 1), and Gemm(A, Transpose(W)) -> Gemm(A, W) with transB flipped. An export without
// constant folding (do_constant_folding=False) transposes every Linear's weight in the graph:
// folded, each weight was copied once more at session creation and the copy kept beside the
// kernels' packed panels (distilbert: 170 MB). The kernels pack op(B) from W directly, so no
// transposed copy is made and W's pages go back to the OS once packed. A Transpose with other
// readers stays for them (constant folding then folds it); one without goes. Session creation
// only, before constant folding; fuse-matmul-add turns FusedMatMul(transB) + bias into a Gemm.
#include <string>
#include <vector>

#include "runtime/ir/graph_edit.h"
#include "runtime/ir/graph_index.h"
#include "runtime/ops/registry.h"
#include "runtime/passes/pass_util.h"
#include "runtime/passes/passes.h"

namespace xonnx {
namespace passes {

namespace {

// W when `t` is Transpose(W) of a constant 2-D float W with the default or [1, 0] perm.
const std::string* transposed_weight(const Graph& g, const Node& t) {
  if (!t.domain.empty() || t.op_type != "Transpose" || t.inputs.size() != 1 || t.outputs.size() != 1) return nullptr;
  const Attribute* perm = t.find_attr("perm");
  if (perm && (perm->type != AttrType::kInts || perm->ints != std::vector<int64_t>{1, 0})) return nullptr;
  const Tensor* w = constant_tensor(g, t.inputs[0]);
  return w && w->rank() == 2 && w->dtype() == DataType::kFloat ? &t.inputs[0] : nullptr;
}

}  // namespace

Result<bool> absorb_weight_transposes(Model& model, PassContext& ctx) {
  if (!ctx.options.own_kernels) return false;
  // A selective build may leave the contrib op out.
  const bool fused_matmul = OpRegistry::global().resolve("com.microsoft", "FusedMatMul", 1).is_ok();
  Graph& g = model.graph;
  const GraphIndex index(g);
  int absorbed = 0, fused = 0;
  std::vector<int> readers_absorbed(g.nodes.size(), 0);
  for (Node& n : g.nodes) {
    const bool matmul = fused_matmul && n.domain.empty() && n.op_type == "MatMul" && n.inputs.size() == 2;
    const bool gemm = n.domain.empty() && n.op_type == "Gemm" && n.inputs.size() >= 2;
    if (!matmul && !gemm) continue;
    const int p = index.producer(n.inputs[1]);
    const std::string* w = p < 0 ? nullptr : transposed_weight(g, g.nodes[static_cast<size_t>(p)]);
    if (!w) continue;
    ++readers_absorbed[static_cast<size_t>(p)];
    if (n.origin.empty()) n.origin = n.describe();
    n.inputs[1] = *w;
    if (gemm) {
      set_attribute(n, int_attribute("transB", attr_int_or(n, "transB", 0) == 0 ? 1 : 0));
    } else {
      n.op_type = "FusedMatMul";
      n.domain = "com.microsoft";
      n.opset = 0;
      n.attributes = {int_attribute("transB", 1)};
      ++fused;
    }
    ++absorbed;
  }
  if (absorbed == 0) return false;
  // A Transpose no one reads now goes at once: constant folding would transpose it first.
  erase_absorbed_nodes(g, index, readers_absorbed);
  if (fused > 0 && !model.opset_imports.count("com.microsoft")) model.opset_imports["com.microsoft"] = 1;
  ctx.note("read " + std::to_string(absorbed) + " transposed constant weights untransposed (transB)");
  return true;
}

}  // namespace passes
}  // namespace xonnx
