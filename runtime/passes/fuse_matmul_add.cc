// MatMul(A, B) + C -> Gemm(A, B, C) where that is the same computation: A is 2-D (Gemm is 2-D
// only; shapes from shape inference), B a 2-D constant, C a constant unidirectionally broadcastable
// to [M, N], floating point, and the MatMul result has no other reader.
// Session creation also fuses an A of rank > 2 (a transformer's [batch, tokens, E] projection,
// ConvNeXt's [1, H, W, C] Linear) with a bias row: Reshape(A, [-1, K]) -> Gemm -> Reshape back
// (to a constant shape, or with two unknown leading dims to Concat(Shape(A, end = -1), [N])).
// The Reshapes are views, and the Gemm kernel adds the bias in its tiles where the separate Add
// wrote the whole product once more. The converter keeps such pairs (its output is for any
// runtime: ORT fuses them itself).
#include <cstdint>

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

Attribute int_attribute(const char* name, int64_t value) {
  Attribute a;
  a.name = name;
  a.type = AttrType::kInt;
  a.i = value;
  return a;
}

// The int64 shape initializer of a Reshape, named after `base`.
std::string add_shape(Graph& g, const std::string& base, const std::vector<int64_t>& dims) {
  return add_initializer(g, base, Tensor::from_vector(dims, Shape{static_cast<int64_t>(dims.size())}));
}

Result<bool> fuse(Model& model, PassContext& ctx, bool any_rank) {
  Graph& g = model.graph;
  const ShapeFacts facts = infer_shapes(model);
  FusionView view(g);
  int fused = 0, reshaped = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const int mm = static_cast<int>(i);
    if (!view.is(mm, "MatMul") || view.node(mm).inputs.size() != 2) continue;
    const Node& matmul = view.node(mm);
    const std::vector<Dim>* a_dims = facts.dims(matmul.inputs[0]);
    const Tensor* b = constant_tensor(g, matmul.inputs[1]);
    if (!a_dims || a_dims->size() < 2 || !b || b->rank() != 2 || !gemm_type(b->dtype())) continue;
    const bool two_d = a_dims->size() == 2;
    if (!two_d && !any_rank) continue;
    const int add = view.sole_consumer(matmul.outputs[0]);
    if (!view.is(add, "Add")) continue;
    const std::string c_name = view.other_input(add, matmul.outputs[0]);
    const Tensor* c = constant_tensor(g, c_name);
    const int64_t m = two_d && (*a_dims)[0].known() ? (*a_dims)[0].value : -1;
    const int64_t k = b->dim(0), n = b->dim(1);
    if (!c || c->dtype() != b->dtype() || !bias_broadcasts(*c, m, n)) continue;  // a row, past 2-D
    // The product's leading dims, for the Reshape back: at most one unknown (-1).
    std::vector<int64_t> out_dims;
    int unknown = 0;
    for (size_t d = 0; d + 1 < a_dims->size(); ++d) {
      const Dim& dim = (*a_dims)[d];
      out_dims.push_back(dim.known() ? dim.value : -1);
      unknown += dim.known() ? 0 : 1;
    }
    out_dims.push_back(n);
    const Dim& a_k = a_dims->back();
    if (!two_d && a_k.known() && a_k.value != k) continue;
    if (!view.claim({mm, add})) continue;
    const Node& add_node = view.node(add);
    Node gemm;
    gemm.op_type = "Gemm";
    gemm.name = add_node.name;
    gemm.inputs = {matmul.inputs[0], matmul.inputs[1], c_name};
    gemm.outputs = {add_node.outputs[0]};
    if (two_d) {
      view.replace({mm, add}, add, std::move(gemm));
      ++fused;
      continue;
    }
    const std::string& out = add_node.outputs[0];
    Node to_2d, back;
    to_2d.op_type = back.op_type = "Reshape";
    to_2d.name = unique_name(g, gemm.name + "/to_2d");
    back.name = unique_name(g, gemm.name + "/from_2d");
    to_2d.inputs = {matmul.inputs[0], add_shape(g, out + "/shape_2d", {-1, k})};
    to_2d.outputs = {unique_name(g, out + "/a_2d")};
    gemm.inputs[0] = to_2d.outputs[0];
    gemm.outputs = {unique_name(g, out + "/gemm_2d")};
    back.outputs = {out};
    std::vector<Node> nodes;
    nodes.push_back(std::move(to_2d));
    nodes.push_back(std::move(gemm));
    if (unknown <= 1) {  // the product's shape as a constant, its unknown dim as -1
      back.inputs = {nodes[1].outputs[0], add_shape(g, out + "/shape", out_dims)};
    } else {  // Concat(Shape(A, end = -1), [N]) at run time; Shape's `end` is opset 15
      Node lead, shape;
      lead.op_type = "Shape";
      lead.name = unique_name(g, add_node.name + "/leading_dims");
      lead.opset = opset_of(model, matmul) < 15 ? 15 : matmul.opset;
      lead.attributes = {int_attribute("end", -1)};
      lead.inputs = {matmul.inputs[0]};
      lead.outputs = {unique_name(g, out + "/leading_dims")};
      shape.op_type = "Concat";
      shape.name = unique_name(g, add_node.name + "/shape");
      shape.attributes = {int_attribute("axis", 0)};
      shape.inputs = {lead.outputs[0], add_shape(g, out + "/n", {n})};
      shape.outputs = {unique_name(g, out + "/shape")};
      back.inputs = {nodes[1].outputs[0], shape.outputs[0]};
      nodes.push_back(std::move(lead));
      nodes.push_back(std::move(shape));
    }
    nodes.push_back(std::move(back));
    view.replace({mm, add}, add, std::move(nodes));
    ++reshaped;
  }
  if (fused + reshaped == 0) return false;
  view.commit();
  if (fused > 0) ctx.note("fused " + std::to_string(fused) + " MatMul+Add pairs into Gemm");
  if (reshaped > 0)
    ctx.note("fused " + std::to_string(reshaped) + " MatMul+Add pairs of rank > 2 into Gemm between Reshapes");
  return true;
}

}  // namespace

Result<bool> fuse_matmul_add(Model& model, PassContext& ctx) { return fuse(model, ctx, false); }
Result<bool> fuse_matmul_add_any_rank(Model& model, PassContext& ctx) { return fuse(model, ctx, true); }

}  // namespace passes
}  // namespace xonnx
