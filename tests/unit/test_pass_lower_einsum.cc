// lower_einsum: a two-operand Einsum that is a batched matrix product becomes MatMul with
// Transposes only where the labels are out of order (MaxViT's two equations, spaces and all;
// both operands transposed; the implicit output), with the same outputs; what is not one
// product (a label summed out of one operand, an outer product, repeated labels, an ellipsis,
// three operands, unknown ranks) stays an Einsum.
#include "runtime/passes/pass_util.h"
#include "tests/unit/fuse_test_util.h"

namespace xonnx {
namespace testing {
namespace {

// x [shape_a] and y [shape_b] -> Einsum(equation) -> z. Unknown shapes: no value info.
Model einsum_model(const std::string& equation, const Shape& a, const Shape& b, bool known = true) {
  Model m = make_model(17);
  const auto info = [&](const char* name, const Shape& s) {
    std::vector<Dim> dims;
    for (int64_t d : s) dims.push_back(dim(d));
    return known ? tensor_info(name, DataType::kFloat, dims) : untyped(name);
  };
  m.graph.inputs = {info("x", a), info("y", b)};
  m.graph.outputs = {untyped("z")};
  m.graph.nodes.push_back(make_node("Einsum", {"x", "y"}, {"z"}, {string_attribute("equation", equation)}));
  return m;
}

TEST(PassLowerEinsum, BatchedProductsBecomeMatMul) {
  struct Case {
    const char* equation;
    Shape a, b;
    std::vector<std::string> ops;
  };
  const Case cases[] = {
      {"B G H I D, B G H J D -> B G H I J", {1, 2, 3, 4, 5}, {1, 2, 3, 6, 5}, {"Transpose", "MatMul"}},
      {"BGHIJ,BGHJD->BGHID", {1, 2, 3, 4, 6}, {1, 2, 3, 6, 5}, {"MatMul"}},
      {"bid,bjd->bij", {2, 7, 8}, {2, 5, 8}, {"Transpose", "MatMul"}},
      {"bqhd,bkhd->bhqk", {2, 5, 3, 4}, {2, 6, 3, 4}, {"Transpose", "Transpose", "MatMul"}},
      {"ij,jk->ki", {3, 4}, {4, 5}, {"MatMul", "Transpose"}},
      {"ij,jk", {3, 4}, {4, 5}, {"MatMul"}},  // implicit output "ik"
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.equation);
    const Model m = einsum_model(c.equation, c.a, c.b);
    bool changed = false;
    const Model out = run_pass(m, passes::lower_einsum, &changed);
    EXPECT_TRUE(changed);
    EXPECT_EQ(op_list(out.graph), c.ops);
    expect_close_outputs(m, out, {random_value(c.a, 3), random_value(c.b, 4)}, 1e-5);
  }
}

TEST(PassLowerEinsum, WhatIsNotOneProductStays) {
  struct Case {
    const char* equation;
    Shape a, b;
    bool known = true;
  };
  const Case cases[] = {
      {"ij,jk->i", {3, 4}, {4, 5}},                   // k summed out of B alone
      {"i,j->ij", {3}, {4}},                          // outer product: nothing contracted
      {"bij,bjk->bk", {2, 3, 4}, {2, 4, 5}},          // i summed out of A alone
      {"bhwc,khwc->bk", {2, 3, 3, 4}, {5, 3, 3, 4}},  // three contracted labels
      {"...ij,...jk->...ik", {2, 3, 4}, {2, 4, 5}},   // ellipsis
      {"ii,ij->ij", {3, 3}, {3, 4}},                  // a repeated label (diagonal)
      {"bij,bjk->bik", {2, 3, 4}, {3, 4, 5}},         // batch dims differ: the kernel reports it
      {"bij,bjk->bik", {2, 3, 4}, {2, 4, 5}, false},  // ranks unknown
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.equation);
    const Model m = einsum_model(c.equation, c.a, c.b, c.known);
    bool changed = true;
    const Model out = run_pass(m, passes::lower_einsum, &changed);
    EXPECT_FALSE(changed);
    EXPECT_EQ(op_list(out.graph), std::vector<std::string>{"Einsum"});
  }
}

}  // namespace
}  // namespace testing
}  // namespace xonnx
