// fuse_matmul_scale (session creation): MatMul then Mul / Div by a constant float scalar becomes
// com.microsoft FusedMatMul with alpha; a second reader of the product, a scalar whose rank
// would broadcast the product up, c / Y, a non-constant or zero scale keep the pair.
#include <tuple>

#include "runtime/passes/passes.h"
#include "tests/unit/fuse_test_util.h"

namespace xonnx {
namespace testing {
namespace {

// Y = MatMul(a, b) op c: the scores of attention, [2, 4, 5] x [2, 5, 4].
Model matmul_scale(const std::string& op, Tensor c, bool y_first = true) {
  Model m = make_model(17);
  m.graph.inputs = {tensor_info("a", DataType::kFloat, {dim(2), dim(4), dim(5)}),
                    tensor_info("b", DataType::kFloat, {dim(2), dim(5), dim(4)})};
  m.graph.outputs = {untyped("y")};
  add_init(m.graph, "c", std::move(c));
  m.graph.nodes.push_back(make_node("MatMul", {"a", "b"}, {"mm"}));
  m.graph.nodes.push_back(
      make_node(op, y_first ? std::vector<std::string>{"mm", "c"} : std::vector<std::string>{"c", "mm"}, {"y"}));
  return m;
}

std::vector<Value> inputs() { return {random_value({2, 4, 5}, 1), random_value({2, 5, 4}, 2)}; }

TEST(PassFuseMatmulScale, DivAndMulByAScalarBecomeAlpha) {
  for (const auto& [op, c, y_first, alpha] :
       std::vector<std::tuple<std::string, Tensor, bool, float>>{{"Div", Tensor::scalar<float>(8.0f), true, 0.125f},
                                                                 {"Mul", f32({0.3f}, {1}), true, 0.3f},
                                                                 {"Mul", f32({-2.0f}, {1, 1, 1}), false, -2.0f}}) {
    Model m = matmul_scale(op, c, y_first);
    bool changed = false;
    Model out = run_pass(m, passes::fuse_matmul_scale, &changed);
    ASSERT_TRUE(changed) << op;
    ASSERT_EQ(op_list(out.graph), (std::vector<std::string>{"com.microsoft:FusedMatMul"}));
    const Node& n = out.graph.nodes[0];
    EXPECT_EQ(n.domain, "com.microsoft");
    EXPECT_EQ(n.inputs, (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(n.outputs, (std::vector<std::string>{"y"}));
    ASSERT_NE(n.find_attr("alpha"), nullptr);
    EXPECT_FLOAT_EQ(n.find_attr("alpha")->f, alpha);
    EXPECT_EQ(out.opset_imports.at("com.microsoft"), 1);
    expect_close_outputs(m, out, inputs(), 1e-5);
  }
}

TEST(PassFuseMatmulScale, KeepsWhatIsNoScaleOfTheProduct) {
  bool changed = true;
  run_pass(matmul_scale("Div", Tensor::scalar<float>(8.0f), false), passes::fuse_matmul_scale, &changed);
  EXPECT_FALSE(changed);  // 8 / Y
  run_pass(matmul_scale("Mul", f32({1, 2, 3, 4}, {4})), passes::fuse_matmul_scale, &changed);
  EXPECT_FALSE(changed);  // a row, not a scalar
  run_pass(matmul_scale("Mul", f32({2.0f}, {1, 1, 1, 1})), passes::fuse_matmul_scale, &changed);
  EXPECT_FALSE(changed);  // rank 4 over a rank-3 product: Y's shape grows
  run_pass(matmul_scale("Div", Tensor::scalar<float>(0.0f)), passes::fuse_matmul_scale, &changed);
  EXPECT_FALSE(changed);  // 1 / 0
  run_pass(matmul_scale("Mul", Tensor::scalar<float>(0.0f)), passes::fuse_matmul_scale, &changed);
  EXPECT_FALSE(changed);  // alpha 0 would turn inf * 0 = NaN into 0
  Model shared = matmul_scale("Div", Tensor::scalar<float>(8.0f));
  shared.graph.outputs.push_back(untyped("mm"));
  run_pass(shared, passes::fuse_matmul_scale, &changed);
  EXPECT_FALSE(changed);  // the product is read elsewhere
}

}  // namespace
}  // namespace testing
}  // namespace xonnx
