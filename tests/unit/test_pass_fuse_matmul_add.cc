// fuse_matmul_add: 2-D MatMul + bias becomes Gemm; a 3-D A, a second reader of the MatMul result
// or a bias that does not broadcast like Gemm's C keep the pair. fuse_matmul_add_any_rank (session
// creation) also puts an A of rank > 2 with a bias row through Gemm between two Reshapes.
#include "tests/unit/fuse_test_util.h"

namespace xonnx {
namespace testing {
namespace {

Model matmul_add(std::vector<Dim> a_dims, Shape bias_shape, int64_t opset = 17) {
  Model m = make_model(opset);
  m.graph.inputs = {tensor_info("a", DataType::kFloat, a_dims)};
  m.graph.outputs = {untyped("y")};
  add_init(m.graph, "W", f32(noise(6 * 4, 1), {6, 4}));
  add_init(m.graph, "b", f32(noise(static_cast<size_t>(shape_numel(bias_shape)), 2), bias_shape));
  m.graph.nodes.push_back(make_node("MatMul", {"a", "W"}, {"mm"}));
  m.graph.nodes.push_back(make_node("Add", {"b", "mm"}, {"y"}));
  return m;
}

TEST(PassFuseMatmulAdd, TwoDimensionalBecomesGemm) {
  for (Shape bias : {Shape{4}, Shape{1, 4}, Shape{}, Shape{3, 4}}) {
    Model m = matmul_add({dim(3), dim(6)}, bias);
    bool changed = false;
    Model out = run_pass(m, passes::fuse_matmul_add, &changed);
    ASSERT_TRUE(changed) << shape_to_string(bias);
    EXPECT_EQ(op_list(out.graph), (std::vector<std::string>{"Gemm"}));
    EXPECT_EQ(out.graph.nodes[0].inputs, (std::vector<std::string>{"a", "W", "b"}));
    expect_close_outputs(m, out, {random_value({3, 6}, 3)}, 1e-5);
  }
}

TEST(PassFuseMatmulAdd, KeepsWhatGemmCannotExpress) {
  bool changed = true;
  run_pass(matmul_add({dim(2), dim(3), dim(6)}, {4}), passes::fuse_matmul_add, &changed);
  EXPECT_FALSE(changed);  // 3-D A
  run_pass(matmul_add({sym("n"), dim(6)}, {2, 4}), passes::fuse_matmul_add, &changed);
  EXPECT_FALSE(changed);  // [2, 4] bias with an unknown M
  Model shared = matmul_add({dim(3), dim(6)}, {4});
  shared.graph.outputs.push_back(untyped("mm"));
  run_pass(shared, passes::fuse_matmul_add, &changed);
  EXPECT_FALSE(changed);
}

TEST(PassFuseMatmulAdd, AnyRankGoesThroughGemmBetweenReshapes) {
  for (Shape bias : {Shape{4}, Shape{1, 4}, Shape{}}) {
    Model m = matmul_add({dim(2), dim(3), dim(6)}, bias);
    bool changed = false;
    Model out = run_pass(m, passes::fuse_matmul_add_any_rank, &changed);
    ASSERT_TRUE(changed) << shape_to_string(bias);
    EXPECT_EQ(op_list(out.graph), (std::vector<std::string>{"Reshape", "Gemm", "Reshape"}));
    EXPECT_EQ(out.graph.nodes[2].outputs, (std::vector<std::string>{"y"}));
    expect_close_outputs(m, out, {random_value({2, 3, 6}, 4)}, 1e-5);
  }
  // One unknown leading dim becomes the -1 of the Reshape back.
  bool changed = false;
  Model dynamic = matmul_add({sym("batch"), dim(5), dim(3), dim(6)}, {4});
  Model out = run_pass(dynamic, passes::fuse_matmul_add_any_rank, &changed);
  ASSERT_TRUE(changed);
  expect_close_outputs(dynamic, out, {random_value({2, 5, 3, 6}, 5)}, 1e-5);
  expect_close_outputs(dynamic, out, {random_value({1, 5, 3, 6}, 6)}, 1e-5);
}

TEST(PassFuseMatmulAdd, AnyRankWithUnknownDimsReadsTheShapeAtRunTime) {
  bool changed = false;
  Model m = matmul_add({sym("b"), sym("t"), dim(6)}, {4}, 13);
  Model out = run_pass(m, passes::fuse_matmul_add_any_rank, &changed);
  ASSERT_TRUE(changed);
  EXPECT_EQ(op_list(out.graph), (std::vector<std::string>{"Reshape", "Gemm", "Shape", "Concat", "Reshape"}));
  EXPECT_EQ(out.graph.nodes[2].opset, 15);  // Shape's `end`, past the model's opset 13: its own
  expect_close_outputs(m, out, {random_value({2, 3, 6}, 7)}, 1e-5);
  expect_close_outputs(m, out, {random_value({3, 1, 6}, 8)}, 1e-5);
}

TEST(PassFuseMatmulAdd, AnyRankKeepsABiasPerRow) {
  bool changed = true;
  run_pass(matmul_add({dim(2), dim(3), dim(6)}, {3, 4}), passes::fuse_matmul_add_any_rank, &changed);
  EXPECT_FALSE(changed);
}

}  // namespace
}  // namespace testing
}  // namespace xonnx
