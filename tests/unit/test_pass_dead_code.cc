// dead_code_elimination: dead chains and unused initializers go; subgraph captures and graph
// outputs keep their producers; initializers listed as inputs become constants.
#include "tests/unit/fuse_test_util.h"

namespace xonnx {
namespace testing {
namespace {

TEST(PassDeadCode, RemovesDeadChainsAndInitializers) {
  Model m = make_model(17);
  m.graph.inputs = {tensor_info("x", DataType::kFloat, {dim(3)})};
  m.graph.outputs = {untyped("y")};
  add_init(m.graph, "used", f32({1, 2, 3}, {3}));
  add_init(m.graph, "unused", f32({1, 2, 3}, {3}));
  add_init(m.graph, "dead_only", f32({1, 2, 3}, {3}));
  Graph& g = m.graph;
  g.nodes.push_back(make_node("Add", {"x", "dead_only"}, {"d1"}));
  g.nodes.push_back(make_node("Relu", {"d1"}, {"d2"}));
  g.nodes.push_back(make_node("Add", {"x", "used"}, {"y"}));
  g.value_info = {untyped("d1"), untyped("y")};
  bool changed = false;
  Model out = run_pass(m, passes::dead_code_elimination, &changed);
  EXPECT_TRUE(changed);
  EXPECT_EQ(op_list(out.graph), (std::vector<std::string>{"Add"}));
  ASSERT_EQ(out.graph.initializers.size(), 1u);
  EXPECT_EQ(out.graph.initializers[0].name, "used");
  ASSERT_EQ(out.graph.value_info.size(), 1u);
  EXPECT_EQ(out.graph.value_info[0].name, "y");
  run_pass(out, passes::dead_code_elimination, &changed);
  EXPECT_FALSE(changed);  // a fixed point
}

TEST(PassDeadCode, SubgraphCapturesKeepProducersAlive) {
  Model m = make_model(17);
  m.graph.inputs = {tensor_info("x", DataType::kFloat, {dim(2)}), tensor_info("c", DataType::kBool, {})};
  m.graph.outputs = {untyped("y")};
  Graph& g = m.graph;
  add_init(g, "w", f32({2, 3}, {2}));
  g.nodes.push_back(make_node("Neg", {"x"}, {"captured"}));
  auto then_g = std::make_shared<Graph>();
  then_g->outputs = {untyped("t")};
  then_g->nodes.push_back(make_node("Mul", {"captured", "w"}, {"t"}));
  then_g->nodes.push_back(make_node("Relu", {"captured"}, {"dead_inside"}));
  auto else_g = std::make_shared<Graph>();
  else_g->outputs = {untyped("x")};  // passes the outer value straight through
  Attribute then_attr, else_attr;
  then_attr.name = "then_branch";
  then_attr.type = AttrType::kGraph;
  then_attr.g = then_g;
  else_attr.name = "else_branch";
  else_attr.type = AttrType::kGraph;
  else_attr.g = else_g;
  g.nodes.push_back(make_node("If", {"c"}, {"y"}, {then_attr, else_attr}));
  Model out = run_pass(m, passes::dead_code_elimination);
  EXPECT_EQ(op_list(out.graph), (std::vector<std::string>{"Neg", "If"}));
  EXPECT_EQ(out.graph.initializers.size(), 1u);
  EXPECT_EQ(op_list(*out.graph.nodes[1].attributes[0].g), (std::vector<std::string>{"Mul"}));
  for (bool c : {true, false}) {
    expect_close_outputs(m, out, {random_value({2}, 1), Value(Tensor::from_vector<bool>({c}, {}))}, 0);
  }
}

TEST(PassDeadCode, InitializerInputsBecomeConstants) {
  Model m = make_model(17);
  m.graph.inputs = {tensor_info("x", DataType::kFloat, {dim(2)}), untyped("bias")};
  m.graph.outputs = {untyped("y")};
  add_init(m.graph, "bias", f32({1, 2}, {2}));
  m.graph.nodes.push_back(make_node("Add", {"x", "bias"}, {"y"}));
  std::vector<std::string> notes;
  Model out = run_pass(m, passes::dead_code_elimination, nullptr, &notes);
  ASSERT_EQ(out.graph.inputs.size(), 1u);
  EXPECT_EQ(out.graph.inputs[0].name, "x");
  EXPECT_EQ(out.graph.initializers.size(), 1u);
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(notes[0].find("constants"), std::string::npos);
}

}  // namespace
}  // namespace testing
}  // namespace xonnx
