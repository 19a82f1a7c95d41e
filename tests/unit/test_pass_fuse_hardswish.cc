// fuse_hardswish: x * Clip(x + 3, 0, 6) / 6 becomes x * HardSigmoid(x, 1/6, 1/2) with the Clip
// bounds as attributes (opset 10) or inputs (opset 13) and the scale as Div(6) or Mul(1/6);
// other bounds or a shared intermediate leave the pattern alone.
#include "runtime/passes/pass_util.h"
#include "tests/unit/fuse_test_util.h"

namespace xonnx {
namespace testing {
namespace {

Model hardswish_model(int64_t opset, bool mul_by_inverse, float clip_max = 6.0f, bool share_clip = false) {
  Model m = make_model(opset);
  m.graph.inputs = {tensor_info("x", DataType::kFloat, {dim(2), dim(16)})};
  m.graph.outputs = {untyped("y")};
  if (share_clip) m.graph.outputs.push_back(untyped("c"));
  add_init(m.graph, "three", f32({3.0f}, {}));
  add_init(m.graph, "scale", f32({mul_by_inverse ? 1.0f / 6.0f : 6.0f}, {}));
  Graph& g = m.graph;
  g.nodes.push_back(make_node("Add", {"three", "x"}, {"a"}));
  if (opset < 11) {
    g.nodes.push_back(
        make_node("Clip", {"a"}, {"c"}, {float_attribute("min", 0.0f), float_attribute("max", clip_max)}));
  } else {
    add_init(m.graph, "lo", f32({0.0f}, {}));
    add_init(m.graph, "hi", f32({clip_max}, {}));
    g.nodes.push_back(make_node("Clip", {"a", "lo", "hi"}, {"c"}));
  }
  g.nodes.push_back(make_node("Mul", {"c", "x"}, {"m"}));
  g.nodes.push_back(make_node(mul_by_inverse ? "Mul" : "Div", {"m", "scale"}, {"y"}));
  return m;
}

// Spans both saturation points (x = -3 and x = 3).
Value input() { return Value(f32(noise(32, 23, -8.0f, 8.0f), {2, 16})); }

TEST(PassFuseHardSwish, AllFormsBecomeMulOfHardSigmoid) {
  for (int64_t opset : {10, 13}) {
    for (bool inverse : {false, true}) {
      SCOPED_TRACE("opset " + std::to_string(opset) + (inverse ? ", Mul(1/6)" : ", Div(6)"));
      Model m = hardswish_model(opset, inverse);
      bool changed = false;
      Model out = run_pass(m, passes::fuse_hardswish, &changed);
      EXPECT_TRUE(changed);
      EXPECT_EQ(op_list(out.graph), (std::vector<std::string>{"HardSigmoid", "Mul"}));
      expect_close_outputs(m, out, {input()}, 1e-5);
    }
  }
}

TEST(PassFuseHardSwish, OtherBoundsAndSharedValuesStay) {
  bool changed = true;
  run_pass(hardswish_model(13, false, 4.0f), passes::fuse_hardswish, &changed);
  EXPECT_FALSE(changed);
  changed = true;
  run_pass(hardswish_model(13, false, 6.0f, /*share_clip=*/true), passes::fuse_hardswish, &changed);
  EXPECT_FALSE(changed);
}

}  // namespace
}  // namespace testing
}  // namespace xonnx
