// fuse_gelu: the three operand orders of the erf-GELU decomposition fuse into com.microsoft:Gelu
// below opset 20 (import added) and Gelu at 20; a shared intermediate blocks the fusion.
#include "tests/unit/fuse_test_util.h"

namespace xonnx {
namespace testing {
namespace {

enum class Tail { kMulXThenHalf, kHalfXThenMul, kHalfAThenMulX };

Model gelu_model(int64_t opset, Tail tail, bool mul_by_inverse) {
  Model m = make_model(opset);
  m.graph.inputs = {tensor_info("x", DataType::kFloat, {dim(2), dim(8)})};
  m.graph.outputs = {untyped("y")};
  add_init(m.graph, "sqrt2", f32({mul_by_inverse ? 0.70710678f : 1.41421356f}, {}));
  add_init(m.graph, "one", f32({1.0f}, {}));
  add_init(m.graph, "half", f32({0.5f}, {}));
  Graph& g = m.graph;
  g.nodes.push_back(make_node("Relu", {"x"}, {"r"}));
  g.nodes.push_back(make_node(mul_by_inverse ? "Mul" : "Div", {"r", "sqrt2"}, {"s"}));
  g.nodes.push_back(make_node("Erf", {"s"}, {"e"}));
  g.nodes.push_back(make_node("Add", {"one", "e"}, {"a"}));
  switch (tail) {
    case Tail::kMulXThenHalf:
      g.nodes.push_back(make_node("Mul", {"r", "a"}, {"m"}));
      g.nodes.push_back(make_node("Mul", {"m", "half"}, {"y"}));
      break;
    case Tail::kHalfXThenMul:
      g.nodes.push_back(make_node("Mul", {"half", "r"}, {"h"}));
      g.nodes.push_back(make_node("Mul", {"a", "h"}, {"y"}));
      break;
    case Tail::kHalfAThenMulX:
      g.nodes.push_back(make_node("Mul", {"a", "half"}, {"m"}));
      g.nodes.push_back(make_node("Mul", {"m", "r"}, {"y"}));
      break;
  }
  return m;
}

Value signed_input() { return random_value({2, 8}, 17); }

TEST(PassFuseGelu, AllFormsFuseToContribGeluBelowOpset20) {
  for (Tail tail : {Tail::kMulXThenHalf, Tail::kHalfXThenMul, Tail::kHalfAThenMulX}) {
    for (bool inverse : {false, true}) {
      Model m = gelu_model(17, tail, inverse);
      bool changed = false;
      Model out = run_pass(m, passes::fuse_gelu, &changed);
      ASSERT_TRUE(changed);
      EXPECT_EQ(op_list(out.graph), (std::vector<std::string>{"Relu", "com.microsoft:Gelu"}));
      EXPECT_EQ(out.graph.nodes[1].outputs[0], "y");
      EXPECT_EQ(out.opset_imports.at("com.microsoft"), 1);
      expect_close_outputs(m, out, {signed_input()}, 1e-6);
    }
  }
}

TEST(PassFuseGelu, OnnxGeluAtOpset20) {
  Model m = gelu_model(20, Tail::kMulXThenHalf, false);
  Model out = run_pass(m, passes::fuse_gelu);
  EXPECT_EQ(op_list(out.graph), (std::vector<std::string>{"Relu", "Gelu"}));
  EXPECT_EQ(out.opset_imports.count("com.microsoft"), 0u);
  expect_close_outputs(m, out, {signed_input()}, 1e-6);
}

TEST(PassFuseGelu, SharedIntermediateOrWrongConstantBlocks) {
  Model shared = gelu_model(17, Tail::kMulXThenHalf, false);
  shared.graph.outputs.push_back(untyped("e"));
  bool changed = true;
  run_pass(shared, passes::fuse_gelu, &changed);
  EXPECT_FALSE(changed);

  Model wrong = gelu_model(17, Tail::kMulXThenHalf, false);
  wrong.graph.initializers[2] = {"half", f32({0.25f}, {})};
  run_pass(wrong, passes::fuse_gelu, &changed);
  EXPECT_FALSE(changed);
}

}  // namespace
}  // namespace testing
}  // namespace xonnx
