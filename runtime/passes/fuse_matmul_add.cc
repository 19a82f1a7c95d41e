// MatMul(A, B) + C -> Gemm(A, B, C) where that is the same computation: A is 2-D (Gemm is 2-D
// only; shapes from shape inference), B a 2-D constant, C a constant unidirectionally broadcastable
// to [M, N], floating point, and the MatMul result has no other reader.
// Session creation also fuses an A of rank > 2 (a transformer's [batch, tokens, E] projection,
// ConvNeXt's [1, H, W, C] Linear) with a bias row: Reshape(A, [-1, K]) -> Gemm -> Reshape back
// (to a constant shape, or with two unknown leading dims to Concat(Shape(A, end = -1), [N])).
// The Reshapes are views, and the Gemm kernel adds the bias in its tiles where the separate Add
// wrote the whole product once more. The converter keeps such pairs (its output is for any
// runtime: ORT fuses them itself).
// A com.microsoft FusedMatMul(A, W, transB = 1) of a constant W (absorb_weight_transposes.cc
// makes it from MatMul(A, Transpose(W))) fuses the same way, into a Gemm with transB.
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
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

bool gemm_type(DataType t) { return t == DataType::kFloat || t == DataType::kDouble || t == DataType::kFloat16; }

// A com.microsoft FusedMatMul that is MatMul(A, B^T): transB only, alpha 1.
bool is_matmul_b_transposed(const Node& n) {
  if (n.domain != "com.microsoft" || n.op_type != "FusedMatMul" || n.inputs.size() != 2 || n.outputs.size() != 1)
    return false;
  for (const char* flag : {"transA", "transBatchA", "transBatchB"}) {
    if (attr_int_or(n, flag, 0) != 0) return false;
  }
  return attr_int_or(n, "transB", 0) == 1 && attr_float_or(n, "alpha", 1.0f) == 1.0f;
}

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

// Builds the Reshape -> Gemm -> Reshape of N-D pairs: fresh names from one allocator, and one
// int64 shape initializer per distinct shape (the projections of a model share a few).
class ReshapedGemms {
 public:
  explicit ReshapedGemms(Model& model) : model_(model), names_(model.graph) {}

  // The nodes replacing MatMul(A, B) + C for A of rank > 2 with dims a_dims (the last is K),
  // B [K, N], `gemm` already reading A, B, C and named after the Add.
  std::vector<Node> build(const Node& matmul, const Node& add, Node gemm, const std::vector<Dim>& a_dims, int64_t k,
                          int64_t n) {
    const std::string& out = add.outputs[0];
    // The product's shape: A's leading dims (unknown ones -1) and N.
    std::vector<int64_t> out_dims;
    int unknown = 0;
    for (size_t d = 0; d + 1 < a_dims.size(); ++d) {
      out_dims.push_back(a_dims[d].known() ? a_dims[d].value : -1);
      unknown += a_dims[d].known() ? 0 : 1;
    }
    out_dims.push_back(n);
    Node to_2d = reshape(gemm.name + "/to_2d", matmul.inputs[0], shape({-1, k}), names_.fresh(out + "/a_2d"));
    gemm.inputs[0] = to_2d.outputs[0];
    gemm.outputs = {names_.fresh(out + "/gemm_2d")};
    std::vector<Node> nodes;
    nodes.push_back(std::move(to_2d));
    nodes.push_back(std::move(gemm));
    std::string back_shape;
    if (unknown <= 1) {  // a constant, its unknown dim as -1
      back_shape = shape(out_dims);
    } else {  // Concat(Shape(A, end = -1), [N]) at run time; Shape's `end` is opset 15
      Node lead = node("Shape", add.name + "/leading_dims", {matmul.inputs[0]}, names_.fresh(out + "/leading_dims"));
      lead.opset = opset_of(model_, matmul) < 15 ? 15 : matmul.opset;
      lead.attributes = {int_attribute("end", -1)};
      Node concat = node("Concat", add.name + "/shape", {lead.outputs[0], shape({n})}, names_.fresh(out + "/shape"));
      concat.attributes = {int_attribute("axis", 0)};
      back_shape = concat.outputs[0];
      nodes.push_back(std::move(lead));
      nodes.push_back(std::move(concat));
    }
    nodes.push_back(reshape(add.name + "/from_2d", nodes[1].outputs[0], back_shape, out));
    return nodes;
  }

 private:
  Node node(const char* op, const std::string& name, std::vector<std::string> inputs, std::string output) {
    Node n;
    n.op_type = op;
    n.name = names_.fresh(name);
    n.inputs = std::move(inputs);
    n.outputs = {std::move(output)};
    return n;
  }
  Node reshape(const std::string& name, const std::string& x, const std::string& shape, std::string output) {
    return node("Reshape", name, {x, shape}, std::move(output));
  }
  // The name of an int64 initializer holding `dims`.
  const std::string& shape(const std::vector<int64_t>& dims) {
    std::string& name = shapes_[dims];
    if (name.empty())
      name = add_initializer(model_.graph, names_, "matmul_add_shape",
                             Tensor::from_vector(dims, Shape{static_cast<int64_t>(dims.size())}));
    return name;
  }

  Model& model_;
  NameAllocator names_;
  std::map<std::vector<int64_t>, std::string> shapes_;
};

Result<bool> fuse(Model& model, PassContext& ctx, bool any_rank) {
  Graph& g = model.graph;
  const bool products = std::any_of(g.nodes.begin(), g.nodes.end(),
                                    [](const Node& n) { return is_default(n, "MatMul") || is_matmul_b_transposed(n); });
  if (!products || !has_default_node(g, "Add")) return false;
  const ShapeFacts& facts = ctx.shape_facts(model);
  FusionView view(g);
  std::optional<ReshapedGemms> reshaped_gemms;  // collects the graph's names: only when needed
  int fused = 0, reshaped = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const int mm = static_cast<int>(i);
    const bool trans_b = is_matmul_b_transposed(g.nodes[i]);
    if (!trans_b && (!view.is(mm, "MatMul") || view.node(mm).inputs.size() != 2)) continue;
    const Node& matmul = view.node(mm);
    const std::vector<Dim>* a_dims = facts.dims(matmul.inputs[0]);
    const Tensor* b = constant_tensor(g, matmul.inputs[1]);
    if (!a_dims || a_dims->size() < 2 || !b || b->rank() != 2 || !gemm_type(b->dtype())) continue;
    const bool two_d = a_dims->size() == 2;
    const int64_t k = b->dim(trans_b ? 1 : 0), n = b->dim(trans_b ? 0 : 1);
    if (!two_d && (!any_rank || (a_dims->back().known() && a_dims->back().value != k))) continue;
    const int add = view.sole_consumer(matmul.outputs[0]);
    if (!view.is(add, "Add")) continue;
    const std::string c_name = view.other_input(add, matmul.outputs[0]);
    const Tensor* c = constant_tensor(g, c_name);
    const int64_t m = two_d && (*a_dims)[0].known() ? (*a_dims)[0].value : -1;
    if (!c || c->dtype() != b->dtype() || !bias_broadcasts(*c, m, n)) continue;  // past 2-D: a row
    if (!view.claim({mm, add})) continue;
    Node gemm;
    gemm.op_type = "Gemm";
    gemm.name = view.node(add).name;
    gemm.inputs = {matmul.inputs[0], matmul.inputs[1], c_name};
    gemm.outputs = {view.node(add).outputs[0]};
    if (trans_b) gemm.attributes = {int_attribute("transB", 1)};
    if (two_d) {
      view.replace({mm, add}, add, std::move(gemm));
      ++fused;
    } else {
      if (!reshaped_gemms) reshaped_gemms.emplace(model);
      view.replace({mm, add}, add, reshaped_gemms->build(matmul, view.node(add), std::move(gemm), *a_dims, k, n));
      ++reshaped;
    }
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
