// MatMul(A, Transpose(X)) whose perm swaps X's last two axes, X a float value computed at run
// time -> com.microsoft FusedMatMul(A, X, transB = 1); a FusedMatMul(A, Transpose(X)) of
// fuse-matmul-scale keeps its alpha and takes transB too. Torch code writes `a @ b.transpose(-2,
// -1)` wherever attention is written by hand (a U-Net's spatial attention, Swin's shifted
// windows): the Transpose wrote all of X once more, and the product then packed that copy into
// its panels; the own FusedMatMul packs X's rows as the panels' columns instead
// (optimized/matmul.cc). A Transpose with other readers stays for them. Session creation only,
// after fuse-attention (which takes MatMul(Q, Transpose(K)) whole) and fuse-matmul-scale.
#include <string>
#include <utility>
#include <vector>

#include "runtime/ir/graph_edit.h"
#include "runtime/ir/graph_index.h"
#include "runtime/ops/registry.h"
#include "runtime/passes/pass_util.h"
#include "runtime/passes/passes.h"
#include "runtime/passes/shape_inference.h"

namespace xonnx {
namespace passes {

namespace {

// Whether `t` is a Transpose of a float value that swaps only its last two axes (an explicit
// perm: without one, only rank 2 would be that, and the rank is not read here).
bool swaps_last_two(const Node& t, const ShapeFacts& facts) {
  if (!t.domain.empty() || t.op_type != "Transpose" || t.inputs.size() != 1 || t.outputs.size() != 1) return false;
  const Attribute* perm = t.find_attr("perm");
  if (!perm || perm->type != AttrType::kInts || perm->ints.size() < 2) return false;
  std::vector<int64_t> undone = perm->ints;  // the perm with its last two entries swapped back
  std::swap(undone[undone.size() - 2], undone.back());
  if (!is_identity_perm(undone)) return false;
  const TypeInfo* x = facts.type(t.inputs[0]);
  return x && x->elem_type == DataType::kFloat;
}

// MatMul, or a FusedMatMul that transposes nothing yet (alpha only).
bool plain_product(const Node& n) {
  if (n.inputs.size() != 2 || n.outputs.size() != 1) return false;
  if (n.domain.empty() && n.op_type == "MatMul") return true;
  if (n.domain != "com.microsoft" || n.op_type != "FusedMatMul") return false;
  for (const char* flag : {"transA", "transB", "transBatchA", "transBatchB"}) {
    if (attr_int_or(n, flag, 0) != 0) return false;
  }
  return true;
}

}  // namespace

Result<bool> absorb_runtime_transposes(Model& model, PassContext& ctx) {
  if (!ctx.options.own_kernels) return false;
  // A selective build may leave the contrib op out.
  if (!OpRegistry::global().resolve("com.microsoft", "FusedMatMul", 1).is_ok()) return false;
  Graph& g = model.graph;
  if (!has_default_node(g, "Transpose")) return false;
  const ShapeFacts& facts = ctx.shape_facts(model);
  const GraphIndex index(g);
  std::vector<int> readers_absorbed(g.nodes.size(), 0);
  int absorbed = 0;
  for (Node& n : g.nodes) {
    if (!plain_product(n)) continue;
    const int p = index.producer(n.inputs[1]);
    if (p < 0 || !swaps_last_two(g.nodes[static_cast<size_t>(p)], facts)) continue;
    ++readers_absorbed[static_cast<size_t>(p)];
    if (n.origin.empty()) n.origin = n.describe();
    n.inputs[1] = g.nodes[static_cast<size_t>(p)].inputs[0];
    if (n.op_type == "MatMul") {
      n.op_type = "FusedMatMul";
      n.domain = "com.microsoft";
      n.opset = 0;
      n.attributes.clear();
    }
    set_attribute(n, int_attribute("transB", 1));
    ++absorbed;
  }
  if (absorbed == 0) return false;
  erase_absorbed_nodes(g, index, readers_absorbed);
  if (!model.opset_imports.count("com.microsoft")) model.opset_imports["com.microsoft"] = 1;
  ctx.note("read " + std::to_string(absorbed) + " transposed values untransposed (FusedMatMul transB)");
  return true;
}

}  // namespace passes
}  // namespace xonnx
