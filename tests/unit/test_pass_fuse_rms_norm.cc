// fuse_rms_norm / fuse_skip_rms_norm as session creation runs them: the RMSNorm spellings of torch
// exports fuse into SimplifiedLayerNormalization (look-alikes do not), and a residual Add before
// one joins it as SkipSimplifiedLayerNormalization, its sum kept as output 3 while others read it.
#include "tests/unit/fuse_test_util.h"

namespace xonnx {
namespace testing {
namespace {

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

TEST(PassFuseRmsNorm, FusesEverySpelling) {
  for (RmsInverse inverse : {RmsInverse::kDivOne, RmsInverse::kReciprocal, RmsInverse::kDivX}) {
    for (bool square_as_mul : {false, true}) {
      Model m = decomposed_rms(inverse, square_as_mul, true);
      bool changed = false;
      std::vector<std::string> notes;
      Model out = run_pass(m, passes::fuse_rms_norm, &changed, &notes);
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

TEST(PassFuseRmsNorm, WithoutGammaOrWithABroadcastOne) {
  Model plain = decomposed_rms(RmsInverse::kDivOne, false, false);
  Model out = run_pass(plain, passes::fuse_rms_norm);
  ASSERT_EQ(op_list(out.graph), (std::vector<std::string>{"SimplifiedLayerNormalization"}));
  expect_close_outputs(plain, out, {random_value({2, 3, 8}, 12)}, 1e-5);
  // A [1] gamma broadcasts in the decomposition but is not the op's scale: its Mul stays.
  Model broadcast = decomposed_rms(RmsInverse::kDivOne, false, true, {1});
  out = run_pass(broadcast, passes::fuse_rms_norm);
  EXPECT_EQ(op_list(out.graph), (std::vector<std::string>{"SimplifiedLayerNormalization", "Mul"}));
  expect_close_outputs(broadcast, out, {random_value({2, 3, 8}, 13)}, 1e-5);
}

// A value inside the pattern that something else reads (here the mean square, as a graph
// output) keeps the decomposition; so do other exponents and a ReduceMean over a leading axis.
TEST(PassFuseRmsNorm, LeavesWhatIsNotAnRmsNorm) {
  bool changed = true;
  Model read_inside = decomposed_rms(RmsInverse::kDivOne, false, true);
  read_inside.graph.outputs.push_back(untyped("v"));
  run_pass(read_inside, passes::fuse_rms_norm, &changed);
  EXPECT_FALSE(changed);
  Model cube = decomposed_rms(RmsInverse::kDivOne, false, true);
  add_init(cube.graph, "three", f32({3.0f}, {}));
  cube.graph.nodes[0].inputs[1] = "three";
  run_pass(cube, passes::fuse_rms_norm, &changed);
  EXPECT_FALSE(changed);
  Model leading = decomposed_rms(RmsInverse::kDivOne, false, true);
  leading.graph.nodes[1].attributes = {attr_ints("axes", {1})};
  run_pass(leading, passes::fuse_rms_norm, &changed);
  EXPECT_FALSE(changed);
  Model other_x = decomposed_rms(RmsInverse::kDivOne, false, true);  // x * r must be the squared x
  other_x.graph.inputs.push_back(tensor_info("z", DataType::kFloat, {sym("batch"), dim(3), dim(8)}));
  other_x.graph.nodes[5].inputs[0] = "z";
  run_pass(other_x, passes::fuse_rms_norm, &changed);
  EXPECT_FALSE(changed);
}

TEST(PassFuseRmsNorm, ResidualAddJoinsTheNorm) {
  Model m = decomposed_rms(RmsInverse::kDivOne, false, true);
  // x = a + b, and the sum is also the next residual (y2 = x + y).
  m.graph.inputs = {tensor_info("a", DataType::kFloat, {dim(2), dim(3), dim(8)}),
                    tensor_info("b", DataType::kFloat, {dim(2), dim(3), dim(8)})};
  m.graph.nodes.insert(m.graph.nodes.begin(), make_node("Add", {"a", "b"}, {"x"}));
  m.graph.nodes.push_back(make_node("Add", {"x", "y"}, {"y2"}));
  m.graph.outputs = {untyped("y2")};
  Model norm = run_pass(m, passes::fuse_rms_norm);
  Model out = run_pass(norm, passes::fuse_skip_rms_norm);
  ASSERT_EQ(op_list(out.graph), (std::vector<std::string>{"com.microsoft:SkipSimplifiedLayerNormalization", "Add"}));
  const Node& skip = out.graph.nodes[0];
  EXPECT_EQ(skip.inputs, (std::vector<std::string>{"a", "b", "gamma"}));
  EXPECT_EQ(skip.outputs, (std::vector<std::string>{"y", "", "", "x"}));
  expect_close_outputs(m, out, {random_value({2, 3, 8}, 14), random_value({2, 3, 8}, 15)}, 1e-5);
}

}  // namespace
}  // namespace testing
}  // namespace xonnx
