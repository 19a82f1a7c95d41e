// crop_conv_taps: the taps of a Conv that read only padding for every output are dropped (a
// 3x3 kernel dilated past a small map becomes 1x1), with the same output; a dropped weight that
// is not finite, unknown spatial dims or taps that read input leave the Conv alone.
#include <cmath>

#include "runtime/passes/pass_util.h"
#include "tests/unit/fuse_test_util.h"

namespace xonnx {
namespace testing {
namespace {

struct ConvCase {
  std::vector<Dim> x_dims = {dim(1), dim(2), dim(5), dim(6)};
  std::vector<int64_t> kernel = {3, 3};
  std::vector<int64_t> dilations = {6, 6};
  std::vector<int64_t> pads = {6, 6, 6, 6};
  std::vector<int64_t> strides = {1, 1};
  float poison = 0.0f;  // added to W's first weight
};

Model conv_model(const ConvCase& c) {
  Model m = make_model(17);
  m.graph.inputs = {tensor_info("x", DataType::kFloat, c.x_dims)};
  m.graph.outputs = {untyped("y")};
  Shape w_shape = {3, 2};
  for (int64_t k : c.kernel) w_shape.push_back(k);
  std::vector<float> w = noise(static_cast<size_t>(shape_numel(w_shape)), 11);
  w[0] += c.poison;
  add_init(m.graph, "w", f32(w, w_shape));
  add_init(m.graph, "b", f32({0.5f, -0.25f, 1.0f}, {3}));
  m.graph.nodes = {make_node("Conv", {"x", "w", "b"}, {"y"},
                             {ints_attribute("kernel_shape", c.kernel), ints_attribute("dilations", c.dilations),
                              ints_attribute("pads", c.pads), ints_attribute("strides", c.strides)})};
  return m;
}

Value input_for(const ConvCase& c) {
  Shape s;
  for (const Dim& d : c.x_dims) s.push_back(d.known() ? d.value : 7);
  return random_value(s, 5);
}

std::vector<int64_t> attr(const Model& m, const char* name) { return m.graph.nodes[0].find_attr(name)->ints; }

TEST(PassCropConvTaps, DilatedPastTheMapBecomesOneByOne) {
  const ConvCase c;
  const Model m = conv_model(c);
  bool changed = false;
  const Model out = run_pass(m, passes::crop_conv_taps, &changed);
  ASSERT_TRUE(changed);
  EXPECT_EQ(attr(out, "kernel_shape"), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(attr(out, "pads"), (std::vector<int64_t>{0, 0, 0, 0}));
  EXPECT_EQ(attr(out, "dilations"), (std::vector<int64_t>{1, 1}));
  const Tensor* w = constant_tensor(out.graph, out.graph.nodes[0].inputs[1]);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->shape(), (Shape{3, 2, 1, 1}));
  expect_close_outputs(m, out, {input_for(c)}, 1e-6);
}

// Only the last tap of H reads padding alone (pads 1 / 4, dilation 3, H 4); W keeps all taps.
// Strided and 1-D variants crop the same way.
TEST(PassCropConvTaps, CropsOnlyTheDeadEdgeTaps) {
  ConvCase c;
  c.x_dims = {dim(1), dim(2), dim(4), dim(6)};
  c.dilations = {3, 1};
  c.pads = {1, 1, 4, 1};
  Model m = conv_model(c);
  bool changed = false;
  Model out = run_pass(m, passes::crop_conv_taps, &changed);
  ASSERT_TRUE(changed);
  EXPECT_EQ(attr(out, "kernel_shape"), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(attr(out, "pads"), (std::vector<int64_t>{1, 1, 1, 1}));
  expect_close_outputs(m, out, {input_for(c)}, 1e-6);

  ConvCase strided;
  strided.x_dims = {dim(1), dim(2), dim(9), dim(9)};
  strided.dilations = {10, 10};
  strided.pads = {10, 10, 10, 10};
  strided.strides = {3, 3};
  m = conv_model(strided);
  out = run_pass(m, passes::crop_conv_taps, &changed);
  ASSERT_TRUE(changed);
  EXPECT_EQ(attr(out, "kernel_shape"), (std::vector<int64_t>{1, 1}));
  expect_close_outputs(m, out, {input_for(strided)}, 1e-6);

  ConvCase one_d;
  one_d.x_dims = {dim(2), dim(2), dim(8)};
  one_d.kernel = {5};
  one_d.dilations = {4};
  one_d.pads = {8, 8};
  one_d.strides = {1};
  m = conv_model(one_d);
  out = run_pass(m, passes::crop_conv_taps, &changed);
  ASSERT_TRUE(changed);
  EXPECT_EQ(attr(out, "kernel_shape"), (std::vector<int64_t>{3}));
  EXPECT_EQ(attr(out, "pads"), (std::vector<int64_t>{4, 4}));
  expect_close_outputs(m, out, {input_for(one_d)}, 1e-6);
}

TEST(PassCropConvTaps, LeavesLiveTapsUnknownDimsAndNonFiniteWeights) {
  std::vector<ConvCase> cases(3);
  cases[0].dilations = {2, 2};  // every tap reads the 5x6 map
  cases[0].pads = {2, 2, 2, 2};
  cases[1].x_dims = {dim(1), dim(2), sym("h"), sym("w")};
  cases[2].poison = INFINITY;  // a dropped tap: 0 * inf is NaN, so the tap stays
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    bool changed = true;
    run_pass(conv_model(cases[i]), passes::crop_conv_taps, &changed);
    EXPECT_FALSE(changed);
  }
}

}  // namespace
}  // namespace testing
}  // namespace xonnx
