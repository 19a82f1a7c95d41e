// fuse_layernorm: the decomposed LayerNorm fuses at opset 17 (with and without the affine Mul/Add),
// stays decomposed below 17 (each node at its own opset), and a gamma that only broadcasts is not mistaken for LayerNorm.
// fuse_rmsnorm: the RMSNorm spellings of torch exports fuse into SimplifiedLayerNormalization.
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

// How an RMSNorm's 1 / rms reaches x: torch.rsqrt (Div(1, Sqrt)), Reciprocal, or x / Sqrt.
enum class RmsInverse { kDivOne, kReciprocal, kDivX };

// x [batch, 3, 8] -> y = gamma * (x * rsqrt(mean(x^2) + eps)) as Llama's and T5's exports spell it.
Model decomposed_rms(RmsInverse inverse, bool square_as_mul, bool affine, Shape gamma_shape = {8}) {
  Model m = make_model(17);
  m.graph.inputs = {tensor_info("x", DataType::kFloat, {sym("batch"), dim(3), dim(8)})};
  m.graph.outputs = {untyped("y")};
  Graph& g = m.graph;
  add_init(g, "two", f32({2.0f}, {}));
  add_init(g, "one", f32({1.0f}, {}));
  add_init(g, "eps", f32({1e-6f}, {}));
  add_init(g, "gamma", f32(noise(static_cast<size_t>(shape_numel(gamma_shape)), 3, 0.5f, 1.5f), gamma_shape));
  g.nodes.push_back(square_as_mul ? make_node("Mul", {"x", "x"}, {"p"}) : make_node("Pow", {"x", "two"}, {"p"}));
  g.nodes.push_back(make_node("ReduceMean", {"p"}, {"v"}, {attr_ints("axes", {-1})}));
  g.nodes.push_back(make_node("Add", {"eps", "v"}, {"ve"}));
  g.nodes.push_back(make_node("Sqrt", {"ve"}, {"s"}));
  const std::string n = affine ? "n" : "y";
  switch (inverse) {
    case RmsInverse::kDivOne:
      g.nodes.push_back(make_node("Div", {"one", "s"}, {"r"}));
      g.nodes.push_back(make_node("Mul", {"x", "r"}, {n}));
      break;
    case RmsInverse::kReciprocal:
      g.nodes.push_back(make_node("Reciprocal", {"s"}, {"r"}));
      g.nodes.push_back(make_node("Mul", {"r", "x"}, {n}));
      break;
    case RmsInverse::kDivX: g.nodes.push_back(make_node("Div", {"x", "s"}, {n})); break;
  }
  if (affine) g.nodes.push_back(make_node("Mul", {"gamma", "n"}, {"y"}));
  return m;
}

TEST(PassFuseRmsnorm, FusesEverySpelling) {
  for (RmsInverse inverse : {RmsInverse::kDivOne, RmsInverse::kReciprocal, RmsInverse::kDivX}) {
    for (bool square_as_mul : {false, true}) {
      Model m = decomposed_rms(inverse, square_as_mul, true);
      bool changed = false;
      std::vector<std::string> notes;
      Model out = run_pass(m, passes::fuse_rmsnorm, &changed, &notes);
      ASSERT_TRUE(changed);
      ASSERT_EQ(op_list(out.graph), (std::vector<std::string>{"SimplifiedLayerNormalization"}));
      const Node& norm = out.graph.nodes[0];
      EXPECT_EQ(norm.inputs, (std::vector<std::string>{"x", "gamma"}));
      EXPECT_EQ(norm.outputs[0], "y");
      EXPECT_EQ(norm.find_attr("axis")->i, -1);
      EXPECT_FLOAT_EQ(norm.find_attr("epsilon")->f, 1e-6f);
      expect_close_outputs(m, out, {random_value({2, 3, 8}, 11)}, 1e-5);
    }
  }
}

TEST(PassFuseRmsnorm, WithoutGammaOrWithABroadcastOne) {
  Model plain = decomposed_rms(RmsInverse::kDivOne, false, false);
  Model out = run_pass(plain, passes::fuse_rmsnorm);
  ASSERT_EQ(op_list(out.graph), (std::vector<std::string>{"SimplifiedLayerNormalization"}));
  expect_close_outputs(plain, out, {random_value({2, 3, 8}, 12)}, 1e-5);
  // A [1] gamma broadcasts in the decomposition but is not the op's scale: its Mul stays.
  Model broadcast = decomposed_rms(RmsInverse::kDivOne, false, true, {1});
  out = run_pass(broadcast, passes::fuse_rmsnorm);
  EXPECT_EQ(op_list(out.graph), (std::vector<std::string>{"SimplifiedLayerNormalization", "Mul"}));
  expect_close_outputs(broadcast, out, {random_value({2, 3, 8}, 13)}, 1e-5);
}

// A value inside the pattern that something else reads (here the mean square, as a graph
// output) keeps the decomposition; so do other exponents and a ReduceMean over a leading axis.
TEST(PassFuseRmsnorm, LeavesWhatIsNotAnRmsNorm) {
  bool changed = true;
  Model read_inside = decomposed_rms(RmsInverse::kDivOne, false, true);
  read_inside.graph.outputs.push_back(untyped("v"));
  run_pass(read_inside, passes::fuse_rmsnorm, &changed);
  EXPECT_FALSE(changed);
  Model cube = decomposed_rms(RmsInverse::kDivOne, false, true);
  add_init(cube.graph, "three", f32({3.0f}, {}));
  cube.graph.nodes[0].inputs[1] = "three";
  run_pass(cube, passes::fuse_rmsnorm, &changed);
  EXPECT_FALSE(changed);
  Model leading = decomposed_rms(RmsInverse::kDivOne, false, true);
  leading.graph.nodes[1].attributes = {attr_ints("axes", {1})};
  run_pass(leading, passes::fuse_rmsnorm, &changed);
  EXPECT_FALSE(changed);
  Model other_x = decomposed_rms(RmsInverse::kDivOne, false, true);  // x * r must be the squared x
  other_x.graph.inputs.push_back(tensor_info("z", DataType::kFloat, {sym("batch"), dim(3), dim(8)}));
  other_x.graph.nodes[5].inputs[0] = "z";
  run_pass(other_x, passes::fuse_rmsnorm, &changed);
  EXPECT_FALSE(changed);
}

}  // namespace
}  // namespace testing
}  // namespace xonnx
