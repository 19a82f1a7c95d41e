// runtime/ir/graph_edit + graph_index: use counts with subgraph captures, renaming that respects shadowing,
// fresh names, constants vs overridable initializers.
#include "runtime/ir/graph_edit.h"

#include <gtest/gtest.h>

#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace convert {
namespace {

Node make_node(const std::string& op, std::vector<std::string> ins, std::vector<std::string> outs,
               const std::string& name = "") {
  Node n;
  n.op_type = op;
  n.name = name;
  n.inputs = std::move(ins);
  n.outputs = std::move(outs);
  return n;
}

ValueInfo vi(const std::string& name) {
  ValueInfo v;
  v.name = name;
  return v;
}

// x -> Relu -> a -> If(cond) { then: Add(a, w) -> t } -> y; the branch reads `a` and `w` from
// the outer scope (the then-branch nests one more level for `w`).
Graph graph_with_capture() {
  Graph g;
  g.inputs = {vi("x"), vi("cond")};
  g.outputs = {vi("y")};
  g.initializers.push_back({"w", testing::tensor_of<float>({1.0f}, {1})});
  g.nodes.push_back(make_node("Relu", {"x"}, {"a"}, "relu"));
  auto inner = std::make_shared<Graph>();
  inner->outputs = {vi("w2")};
  inner->nodes.push_back(make_node("Identity", {"w"}, {"w2"}));
  auto then_branch = std::make_shared<Graph>();
  then_branch->outputs = {vi("t")};
  Node nested_if = make_node("If", {"cond"}, {"wn"});
  Attribute nested;
  nested.name = "then_branch";
  nested.type = AttrType::kGraph;
  nested.g = inner;
  nested_if.attributes.push_back(nested);
  then_branch->nodes.push_back(nested_if);
  then_branch->nodes.push_back(make_node("Add", {"a", "wn"}, {"t"}));
  Node if_node = make_node("If", {"cond"}, {"y"}, "if");
  Attribute then_attr;
  then_attr.name = "then_branch";
  then_attr.type = AttrType::kGraph;
  then_attr.g = then_branch;
  if_node.attributes.push_back(then_attr);
  g.nodes.push_back(if_node);
  return g;
}

TEST(GraphUtil, IndexCountsSubgraphCapturesAsUses) {
  Graph g = graph_with_capture();
  GraphIndex index(g);
  EXPECT_EQ(index.producer("a"), 0);
  EXPECT_EQ(index.producer("x"), -1);
  ASSERT_EQ(index.consumers("a").size(), 1u);
  EXPECT_EQ(index.consumers("a")[0], 1);       // the If reads `a` inside its branch
  ASSERT_EQ(index.consumers("w").size(), 1u);  // read two levels down
  EXPECT_EQ(index.consumers("w")[0], 1);
  EXPECT_EQ(index.use_count("y"), 1);
  EXPECT_TRUE(index.is_graph_output("y"));
  EXPECT_FALSE(index.is_graph_output("a"));
  EXPECT_TRUE(index.is_graph_input("x"));
  EXPECT_TRUE(index.consumers("nothing").empty());
  EXPECT_EQ(index.use_count("nothing"), 0);
}

TEST(GraphUtil, OuterScopeReads) {
  Graph g = graph_with_capture();
  const Graph& then_branch = *g.nodes[1].attributes[0].g;
  EXPECT_EQ(outer_scope_reads(then_branch), (std::set<std::string>{"a", "cond", "w"}));
  EXPECT_TRUE(outer_scope_reads(g).empty());  // the main graph defines everything it reads
}

TEST(GraphUtil, ReplaceUsesRecursesAndRespectsShadowing) {
  Graph g = graph_with_capture();
  replace_uses(g, "w", "w_new");
  const Graph& then_branch = *g.nodes[1].attributes[0].g;
  const Graph& inner = *then_branch.nodes[0].attributes[0].g;
  EXPECT_EQ(inner.nodes[0].inputs[0], "w_new");

  // A subgraph that defines its own `a` keeps reading it.
  Graph h = graph_with_capture();
  Graph& branch = *h.nodes[1].attributes[0].g;
  branch.inputs.push_back(vi("a"));
  replace_uses(h, "a", "b");
  EXPECT_EQ(branch.nodes[1].inputs[0], "a");
  // Graph outputs are not renamed.
  replace_uses(h, "y", "z");
  EXPECT_EQ(h.outputs[0].name, "y");
}

TEST(GraphUtil, ConstantTensorExcludesOverridableInitializers) {
  Graph g = graph_with_capture();
  EXPECT_NE(constant_tensor(g, "w"), nullptr);
  g.inputs.push_back(vi("w"));
  EXPECT_EQ(constant_tensor(g, "w"), nullptr);
  EXPECT_EQ(constant_tensor(g, "x"), nullptr);
  EXPECT_EQ(constant_tensor(g, ""), nullptr);
}

TEST(GraphUtil, UniqueNameAvoidsNestedNames) {
  Graph g = graph_with_capture();
  EXPECT_EQ(unique_name(g, "fresh"), "fresh");
  EXPECT_EQ(unique_name(g, "w2"), "w2_1");  // w2 only exists two levels down
  std::string name = add_initializer(g, "w", testing::tensor_of<float>({2.0f}, {1}));
  EXPECT_EQ(name, "w_1");
  EXPECT_EQ(unique_name(g, "w"), "w_2");
  EXPECT_NE(g.find_initializer("w_1"), nullptr);
}

TEST(GraphUtil, EraseNodesKeepsOrder) {
  Graph g;
  for (int i = 0; i < 5; ++i) {
    g.nodes.push_back(
        make_node("Relu", {"v" + std::to_string(i)}, {"v" + std::to_string(i + 1)}, "n" + std::to_string(i)));
  }
  erase_nodes(g, {false, true, false, true, false});
  ASSERT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(g.nodes[0].name, "n0");
  EXPECT_EQ(g.nodes[1].name, "n2");
  EXPECT_EQ(g.nodes[2].name, "n4");
}

TEST(GraphUtil, OpsetOfNodeOverride) {
  Model m;
  m.opset_imports[""] = 17;
  m.opset_imports["com.microsoft"] = 1;
  Node n = make_node("Relu", {}, {});
  EXPECT_EQ(opset_of(m, n), 17);
  n.domain = "com.microsoft";
  EXPECT_EQ(opset_of(m, n), 1);
  n.domain = "other";
  EXPECT_EQ(opset_of(m, n), 0);
  n.domain = "";
  n.opset = 13;
  EXPECT_EQ(opset_of(m, n), 13);
}

TEST(GraphUtil, FloatConstantCheck) {
  Graph g;
  g.initializers.push_back({"half", testing::tensor_of<float>({0.5f, 0.5f}, {2})});
  g.initializers.push_back({"ints", testing::tensor_of<int64_t>({1}, {1})});
  EXPECT_TRUE(is_float_constant(g, "half", 0.5, 0.0));
  EXPECT_FALSE(is_float_constant(g, "half", 1.0, 1e-6));
  EXPECT_FALSE(is_float_constant(g, "ints", 1.0, 0.0));
  EXPECT_FALSE(is_float_constant(g, "missing", 1.0, 0.0));
}

}  // namespace
}  // namespace convert
}  // namespace xonnx
