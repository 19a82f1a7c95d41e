// fuse_matmul_add: 2-D MatMul + bias becomes Gemm; a 3-D A, a second reader of the MatMul result
// or a bias that does not broadcast like Gemm's C keep the pair.
#include "tests/unit/fuse_test_util.h"

namespace xonnx {
namespace testing {
namespace {

Model matmul_add(std::vector<Dim> a_dims, Shape bias_shape) {
  Model m = make_model(17);
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

}  // namespace
}  // namespace testing
}  // namespace xonnx
