// cse: duplicate deterministic nodes merge (chains too, attribute order ignored); different
// attributes, random ops and graph outputs do not; subgraph reads follow the rename.
#include "tests/unit/fuse_test_util.h"

namespace xonnx {
namespace testing {
namespace {

TEST(PassCse, MergesDuplicateChains) {
  Model m = make_model(17);
  m.graph.inputs = {tensor_info("x", DataType::kFloat, {dim(2), dim(3)})};
  m.graph.outputs = {untyped("y")};
  Graph& g = m.graph;
  g.nodes.push_back(make_node("Relu", {"x"}, {"r1"}));
  g.nodes.push_back(make_node("Relu", {"x"}, {"r2"}));
  g.nodes.push_back(make_node("LeakyRelu", {"r1"}, {"l1"}, {attr_float("alpha", 0.1f)}));
  g.nodes.push_back(make_node("LeakyRelu", {"r2"}, {"l2"}, {attr_float("alpha", 0.1f)}));
  g.nodes.push_back(make_node("LeakyRelu", {"r2"}, {"l3"}, {attr_float("alpha", 0.2f)}));
  g.nodes.push_back(make_node("Sum", {"l1", "l2", "l3"}, {"y"}));
  bool changed = false;
  Model out = run_pass(m, passes::common_subexpression_elimination, &changed);
  ASSERT_TRUE(changed);
  EXPECT_EQ(op_list(out.graph), (std::vector<std::string>{"Relu", "LeakyRelu", "LeakyRelu", "Sum"}));
  EXPECT_EQ(out.graph.nodes[3].inputs, (std::vector<std::string>{"l1", "l1", "l3"}));
  EXPECT_EQ(out.graph.nodes[2].inputs[0], "r1");
  expect_close_outputs(m, out, {random_value({2, 3}, 1)}, 0);
}

TEST(PassCse, AttributeOrderIgnoredButValuesCompared) {
  Model m = make_model(17);
  m.graph.inputs = {tensor_info("x", DataType::kFloat, {dim(1), dim(1), dim(4), dim(4)})};
  m.graph.outputs = {untyped("y")};
  Graph& g = m.graph;
  g.nodes.push_back(
      make_node("MaxPool", {"x"}, {"a"}, {attr_ints("kernel_shape", {2, 2}), attr_ints("strides", {2, 2})}));
  g.nodes.push_back(
      make_node("MaxPool", {"x"}, {"b"}, {attr_ints("strides", {2, 2}), attr_ints("kernel_shape", {2, 2})}));
  g.nodes.push_back(make_node("Add", {"a", "b"}, {"y"}));
  Model out = run_pass(m, passes::common_subexpression_elimination);
  EXPECT_EQ(op_list(out.graph), (std::vector<std::string>{"MaxPool", "Add"}));
  EXPECT_EQ(out.graph.nodes[1].inputs, (std::vector<std::string>{"a", "a"}));
}

TEST(PassCse, KeepsRandomOpsAndGraphOutputs) {
  Model m = make_model(17);
  m.graph.inputs = {tensor_info("x", DataType::kFloat, {dim(2)})};
  m.graph.outputs = {untyped("y1"), untyped("y2"), untyped("n1"), untyped("n2")};
  Graph& g = m.graph;
  g.nodes.push_back(make_node("Relu", {"x"}, {"y1"}));
  g.nodes.push_back(make_node("Relu", {"x"}, {"y2"}));
  g.nodes.push_back(make_node("RandomNormalLike", {"x"}, {"n1"}));
  g.nodes.push_back(make_node("RandomNormalLike", {"x"}, {"n2"}));
  bool changed = true;
  run_pass(m, passes::common_subexpression_elimination, &changed);
  EXPECT_FALSE(changed);
}

TEST(PassCse, RenamesReadsInsideSubgraphs) {
  Model m = make_model(17);
  m.graph.inputs = {tensor_info("x", DataType::kFloat, {dim(2)}), tensor_info("c", DataType::kBool, {})};
  m.graph.outputs = {untyped("y")};
  Graph& g = m.graph;
  g.nodes.push_back(make_node("Neg", {"x"}, {"n1"}));
  g.nodes.push_back(make_node("Neg", {"x"}, {"n2"}));
  auto branch = [](const std::string& read, const std::string& out) {
    auto sub = std::make_shared<Graph>();
    sub->outputs = {untyped(out)};
    sub->nodes.push_back(make_node("Relu", {read}, {out}));
    return sub;
  };
  Attribute then_attr, else_attr;
  then_attr.name = "then_branch";
  then_attr.type = AttrType::kGraph;
  then_attr.g = branch("n2", "t");
  else_attr.name = "else_branch";
  else_attr.type = AttrType::kGraph;
  else_attr.g = branch("n1", "e");
  g.nodes.push_back(make_node("If", {"c"}, {"y"}, {then_attr, else_attr}));
  Model out = run_pass(m, passes::common_subexpression_elimination);
  ASSERT_EQ(op_list(out.graph), (std::vector<std::string>{"Neg", "If"}));
  EXPECT_EQ(out.graph.nodes[1].attributes[0].g->nodes[0].inputs[0], "n1");
  // The original model's branch is untouched (run_pass works on a deep copy).
  EXPECT_EQ(m.graph.nodes[2].attributes[0].g->nodes[0].inputs[0], "n2");
  for (bool c : {true, false}) {
    expect_close_outputs(m, out, {random_value({2}, 2), Value(Tensor::from_vector<bool>({c}, {}))}, 0);
  }
}

}  // namespace
}  // namespace testing
}  // namespace xonnx
