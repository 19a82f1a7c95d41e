// collapse_transpose_reshape_pairs: Transpose pairs compose (or vanish), Reshape pairs skip the
// middle shape unless the outer target has a 0 (copied from the middle tensor).
#include "tests/unit/fuse_test_util.h"

namespace xonnx {
namespace testing {
namespace {

Model two_transposes(std::vector<int64_t> p1, std::vector<int64_t> p2) {
  Model m = make_model(17);
  m.graph.inputs = {tensor_info("x", DataType::kFloat, {dim(2), dim(3), dim(4)})};
  m.graph.outputs = {untyped("y")};
  m.graph.nodes.push_back(make_node("Transpose", {"x"}, {"t1"}, {attr_ints("perm", p1)}));
  m.graph.nodes.push_back(make_node("Transpose", {"t1"}, {"t2"}, {attr_ints("perm", p2)}));
  m.graph.nodes.push_back(make_node("Relu", {"t2"}, {"y"}));
  return m;
}

TEST(PassTransposeReshapePairs, TransposesCompose) {
  Model m = two_transposes({1, 2, 0}, {0, 2, 1});
  Model out = run_pass(m, passes::collapse_transpose_reshape_pairs);
  out = run_pass(out, passes::dead_code_elimination);
  ASSERT_EQ(op_list(out.graph), (std::vector<std::string>{"Transpose", "Relu"}));
  EXPECT_EQ(out.graph.nodes[0].inputs[0], "x");
  EXPECT_EQ(out.graph.nodes[0].find_attr("perm")->ints, (std::vector<int64_t>{1, 0, 2}));
  expect_close_outputs(m, out, {random_value({2, 3, 4}, 1)}, 0);
}

TEST(PassTransposeReshapePairs, InverseTransposesVanish) {
  Model m = two_transposes({1, 2, 0}, {2, 0, 1});
  Model out = run_pass(m, passes::collapse_transpose_reshape_pairs);
  out = run_pass(out, passes::dead_code_elimination);
  ASSERT_EQ(op_list(out.graph), (std::vector<std::string>{"Relu"}));
  EXPECT_EQ(out.graph.nodes[0].inputs[0], "x");
  expect_close_outputs(m, out, {random_value({2, 3, 4}, 2)}, 0);
}

Model two_reshapes(std::vector<int64_t> s2) {
  Model m = make_model(17);
  m.graph.inputs = {tensor_info("x", DataType::kFloat, {dim(2), dim(3), dim(4)})};
  m.graph.outputs = {untyped("y")};
  add_init(m.graph, "s1", i64({6, 4}));
  add_init(m.graph, "s2", i64(s2));
  m.graph.nodes.push_back(make_node("Reshape", {"x", "s1"}, {"r1"}));
  m.graph.nodes.push_back(make_node("Reshape", {"r1", "s2"}, {"y"}));
  return m;
}

TEST(PassTransposeReshapePairs, ReshapesCollapseUnlessZeroCopiesMiddleDim) {
  Model m = two_reshapes({4, -1});
  bool changed = false;
  Model out = run_pass(m, passes::collapse_transpose_reshape_pairs, &changed);
  EXPECT_TRUE(changed);
  out = run_pass(out, passes::dead_code_elimination);
  ASSERT_EQ(op_list(out.graph), (std::vector<std::string>{"Reshape"}));
  EXPECT_EQ(out.graph.nodes[0].inputs[0], "x");
  expect_close_outputs(m, out, {random_value({2, 3, 4}, 3)}, 0);

  run_pass(two_reshapes({0, -1}), passes::collapse_transpose_reshape_pairs, &changed);
  EXPECT_FALSE(changed);
}

}  // namespace
}  // namespace testing
}  // namespace xonnx
