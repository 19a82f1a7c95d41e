// fuse_layernorm: the decomposed LayerNorm fuses at opset 17 (with and without the affine Mul/Add),
// stays decomposed below 17 (each node at its own opset), and a gamma that only broadcasts is not mistaken for LayerNorm.
#include "tests/unit/fuse_test_util.h"

namespace xonnx {
namespace testing {
namespace {

Model decomposed_ln(int64_t opset, bool affine, Shape gamma_shape = {8}) {
  Model m = make_model(opset);
  m.graph.inputs = {tensor_info("x", DataType::kFloat, {sym("batch"), dim(3), dim(8)})};
  m.graph.outputs = {untyped("y")};
  Graph& g = m.graph;
  add_init(g, "two", f32({2.0f}, {}));
  add_init(g, "eps", f32({1e-5f}, {}));
  add_init(g, "gamma", f32(noise(static_cast<size_t>(shape_numel(gamma_shape)), 1, 0.5f, 1.5f), gamma_shape));
  add_init(g, "beta", f32(noise(8, 2), {8}));
  g.nodes.push_back(make_node("ReduceMean", {"x"}, {"m"}, {attr_ints("axes", {-1})}));
  g.nodes.push_back(make_node("Sub", {"x", "m"}, {"d"}));
  g.nodes.push_back(make_node("Pow", {"d", "two"}, {"p"}));
  g.nodes.push_back(make_node("ReduceMean", {"p"}, {"v"}, {attr_ints("axes", {2})}));
  g.nodes.push_back(make_node("Add", {"v", "eps"}, {"ve"}));
  g.nodes.push_back(make_node("Sqrt", {"ve"}, {"s"}));
  g.nodes.push_back(
      make_node("Div", {"d", "s"}, affine ? std::vector<std::string>{"n"} : std::vector<std::string>{"y"}));
  if (affine) {
    g.nodes.push_back(make_node("Mul", {"n", "gamma"}, {"gm"}));
    g.nodes.push_back(make_node("Add", {"beta", "gm"}, {"y"}));
  }
  return m;
}

TEST(PassFuseLayernorm, FusesAtOpset17) {
  Model m = decomposed_ln(17, true);
  bool changed = false;
  Model out = run_pass(m, passes::fuse_layernorm, &changed);
  ASSERT_TRUE(changed);
  ASSERT_EQ(op_list(out.graph), (std::vector<std::string>{"LayerNormalization"}));
  const Node& ln = out.graph.nodes[0];
  EXPECT_EQ(ln.inputs, (std::vector<std::string>{"x", "gamma", "beta"}));
  EXPECT_EQ(ln.outputs[0], "y");
  EXPECT_EQ(ln.find_attr("axis")->i, -1);
  EXPECT_FLOAT_EQ(ln.find_attr("epsilon")->f, 1e-5f);
  expect_close_outputs(m, out, {random_value({2, 3, 8}, 5)}, 1e-5);
}

TEST(PassFuseLayernorm, WithoutAffineUsesOnesScale) {
  Model m = decomposed_ln(17, false);
  Model out = run_pass(m, passes::fuse_layernorm);
  ASSERT_EQ(op_list(out.graph), (std::vector<std::string>{"LayerNormalization"}));
  EXPECT_EQ(out.graph.nodes[0].inputs.size(), 2u);
  expect_close_outputs(m, out, {random_value({2, 3, 8}, 6)}, 1e-5);
}

TEST(PassFuseLayernorm, NotBelowOpset17OrWithBroadcastGamma) {
  bool changed = true;
  run_pass(decomposed_ln(14, true), passes::fuse_layernorm, &changed);
  EXPECT_FALSE(changed);
  // A [1] gamma broadcasts in the decomposition but is not a LayerNorm scale: only the plain
  // normalization (no affine) fuses and the Mul/Add stay.
  Model m = decomposed_ln(17, true, {1});
  Model out = run_pass(m, passes::fuse_layernorm, &changed);
  EXPECT_EQ(op_list(out.graph), (std::vector<std::string>{"LayerNormalization", "Mul", "Add"}));
  expect_close_outputs(m, out, {random_value({2, 3, 8}, 7)}, 1e-5);
}

// Session creation fuses below opset 17 too: the node carries opset 17, which the runtime
// resolves per node (the converter cannot write it, so it keeps the pattern; above).
TEST(PassFuseLayernorm, AnyOpsetInSessionsGivesTheNodeOpset17) {
  for (int64_t opset : {13, 14, 17}) {
    Model m = decomposed_ln(opset, true);
    Model out = run_pass(m, passes::fuse_layernorm_any_opset);
    ASSERT_EQ(op_list(out.graph), (std::vector<std::string>{"LayerNormalization"}));
    EXPECT_EQ(out.graph.nodes[0].opset, opset < 17 ? 17 : 0);
    expect_close_outputs(m, out, {random_value({2, 3, 8}, 9)}, 1e-5);
  }
}

// Nodes inlined from a function carry their own opset: 17 inside a model at 14 fuses, and the
// LayerNormalization keeps opset 17 (written at the model's 14 it would not exist).
TEST(PassFuseLayernorm, ReadsEachNodeAtItsOwnOpset) {
  Model m = decomposed_ln(14, true);
  for (Node& n : m.graph.nodes) n.opset = 17;
  Model out = run_pass(m, passes::fuse_layernorm);
  ASSERT_EQ(op_list(out.graph), (std::vector<std::string>{"LayerNormalization"}));
  EXPECT_EQ(out.graph.nodes[0].opset, 17);
  expect_close_outputs(m, out, {random_value({2, 3, 8}, 8)}, 1e-5);
  // ReduceMean at 17 inside a model at 18 takes its axes from the attribute, not an input.
  Model old = decomposed_ln(18, true);
  for (Node& n : old.graph.nodes) n.opset = 17;
  ASSERT_EQ(op_list(run_pass(old, passes::fuse_layernorm).graph), (std::vector<std::string>{"LayerNormalization"}));
}

}  // namespace
}  // namespace testing
}  // namespace xonnx
