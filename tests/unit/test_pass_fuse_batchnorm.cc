// fuse_batchnorm: BN folded into Conv (groups, with/without bias), ConvTranspose (groups) and
// Gemm (transB, C, beta); results match the unfused model; shared producers are left alone.
#include "tests/unit/fuse_test_util.h"

namespace xonnx {
namespace testing {
namespace {

// Adds BN parameters for `c` channels (non-trivial stats) and the BN node reading `x`.
void add_bn(Model& m, const std::string& x, const std::string& y, int64_t c, uint32_t seed) {
  add_init(m.graph, "scale", f32(noise(c, seed, 0.5f, 1.5f), {c}));
  add_init(m.graph, "bias", f32(noise(c, seed + 1), {c}));
  add_init(m.graph, "mean", f32(noise(c, seed + 2), {c}));
  add_init(m.graph, "var", f32(noise(c, seed + 3, 0.2f, 2.0f), {c}));
  m.graph.nodes.push_back(
      make_node("BatchNormalization", {x, "scale", "bias", "mean", "var"}, {y}, {attr_float("epsilon", 1e-3f)}));
}

Model conv_bn(const std::string& op, int64_t group, bool with_bias) {
  Model m = make_model(17);
  const int64_t cin = 4, cout = 6;
  m.graph.inputs = {tensor_info("x", DataType::kFloat, {dim(1), dim(cin), dim(5), dim(5)})};
  m.graph.outputs = {untyped("y")};
  const Shape w_shape = op == "Conv" ? Shape{cout, cin / group, 3, 3} : Shape{cin, cout / group, 3, 3};
  add_init(m.graph, "w", f32(noise(static_cast<size_t>(shape_numel(w_shape)), 7), w_shape));
  std::vector<std::string> ins = {"x", "w"};
  if (with_bias) {
    add_init(m.graph, "b", f32(noise(cout, 8), {cout}));
    ins.push_back("b");
  }
  m.graph.nodes.push_back(make_node(op, ins, {"c"}, {attr_int("group", group)}));
  add_bn(m, "c", "bn", cout, 11);
  m.graph.nodes.push_back(make_node("Relu", {"bn"}, {"y"}));
  return m;
}

TEST(PassFuseBatchnorm, ConvWithBiasAndGroups) {
  for (int64_t group : {1, 2}) {
    for (bool bias : {false, true}) {
      Model m = conv_bn("Conv", group, bias);
      bool changed = false;
      Model out = run_pass(m, passes::fuse_batchnorm, &changed);
      EXPECT_TRUE(changed);
      EXPECT_EQ(op_list(out.graph), (std::vector<std::string>{"Conv", "Relu"}));
      EXPECT_EQ(out.graph.nodes[0].inputs.size(), 3u);
      expect_close_outputs(m, out, {random_value({1, 4, 5, 5}, 3)}, 1e-4);
    }
  }
}

TEST(PassFuseBatchnorm, ConvTransposeWithGroups) {
  for (int64_t group : {1, 2}) {
    Model m = conv_bn("ConvTranspose", group, true);
    Model out = run_pass(m, passes::fuse_batchnorm);
    EXPECT_EQ(op_list(out.graph), (std::vector<std::string>{"ConvTranspose", "Relu"}));
    expect_close_outputs(m, out, {random_value({1, 4, 5, 5}, 4)}, 1e-4);
  }
}

// The folded W is made when read: nothing resident after the pass, and any byte range read
// (unaligned, across rows) holds the bytes of W scaled per output channel.
TEST(PassFuseBatchnorm, FoldedWeightsAreMadeWhenReadOverAnyRange) {
  for (const std::string op : {"Conv", "ConvTranspose"}) {
    Model m = conv_bn(op, 2, false);
    Model out = run_pass(m, passes::fuse_batchnorm);
    const Tensor* w = constant_tensor(m.graph, "w");
    const Tensor* folded = constant_tensor(out.graph, out.graph.nodes[0].inputs[1]);
    ASSERT_TRUE(w && folded);
    ASSERT_EQ(folded->shape(), w->shape());
    EXPECT_FALSE(folded->storage()->resident()) << op;
    // The expected values: w[a][b][k] * s of output channel a (Conv) or group(a) * 3 + b (ConvTranspose).
    const Tensor* scale = constant_tensor(m.graph, "scale");
    const Tensor* var = constant_tensor(m.graph, "var");
    std::vector<float> expected(static_cast<size_t>(w->numel()));
    const int64_t d0 = w->dim(0), d1 = w->dim(1), inner = 9;
    for (int64_t a = 0; a < d0; ++a)
      for (int64_t b = 0; b < d1; ++b) {
        const int64_t ch = op == "Conv" ? a : (a / (d0 / 2)) * d1 + b;
        const double s = scale->data<float>()[ch] / std::sqrt(var->data<float>()[ch] + double{1e-3f});
        for (int64_t k = 0; k < inner; ++k) {
          const size_t i = static_cast<size_t>((a * d1 + b) * inner + k);
          expected[i] = static_cast<float>(w->data<float>()[i] * s);
        }
      }
    const size_t bytes = expected.size() * sizeof(float);
    for (const auto& [offset, n] :
         std::vector<std::pair<size_t, size_t>>{{0, bytes}, {3, 77}, {70, 150}, {bytes - 5, 5}}) {
      std::vector<char> got(n);
      folded->read_bytes(offset, n, got.data());
      EXPECT_EQ(std::memcmp(got.data(), reinterpret_cast<const char*>(expected.data()) + offset, n), 0)
          << op << " bytes " << offset << " + " << n;
    }
    EXPECT_FALSE(folded->storage()->resident()) << op << ": read_bytes made no copy";
  }
}

// fuse_conv_scale_bias: Conv -> Mul(c) -> Add(d) with c, d scalars (PP-LCNet's learnable affine
// block) or one value per output channel ([C,1,1] or [1,C,1,1]) fold into the Conv; a constant
// that broadcasts along another axis ([C] meets the last axis) stays.
Model conv_scale_bias(Shape scale_shape, Shape shift_shape, const std::string& op = "Conv") {
  Model m = make_model(17);
  m.graph.inputs = {tensor_info("x", DataType::kFloat, {dim(1), dim(4), dim(5), dim(5)})};
  m.graph.outputs = {untyped("y")};
  const Shape w_shape = op == "Conv" ? Shape{6, 2, 3, 3} : Shape{4, 3, 3, 3};
  add_init(m.graph, "w", f32(noise(static_cast<size_t>(shape_numel(w_shape)), 7), w_shape));
  add_init(m.graph, "s", f32(noise(static_cast<size_t>(shape_numel(scale_shape)), 8, 0.5f, 2.0f), scale_shape));
  add_init(m.graph, "d", f32(noise(static_cast<size_t>(shape_numel(shift_shape)), 9), shift_shape));
  m.graph.nodes.push_back(make_node(op, {"x", "w"}, {"c"}, {attr_int("group", 2)}));
  m.graph.nodes.push_back(make_node("Mul", {"s", "c"}, {"m"}));
  m.graph.nodes.push_back(make_node("Add", {"m", "d"}, {"y"}));
  return m;
}

TEST(PassFuseConvScaleBias, ScalarsAndPerChannelConstantsFold) {
  for (const auto& [scale, shift] :
       std::vector<std::pair<Shape, Shape>>{{{}, {}}, {{1}, {6, 1, 1}}, {{1, 6, 1, 1}, {}}}) {
    Model m = conv_scale_bias(scale, shift);
    bool changed = false;
    Model out = m;
    for (int round = 0; round < 2; ++round) out = run_pass(out, passes::fuse_conv_scale_bias, &changed);
    EXPECT_EQ(op_list(out.graph), (std::vector<std::string>{"Conv"}));
    expect_close_outputs(m, out, {random_value({1, 4, 5, 5}, 3)}, 1e-4);
  }
  Model t = conv_scale_bias({1, 6, 1, 1}, {6, 1, 1}, "ConvTranspose");
  Model t_out = run_pass(run_pass(t, passes::fuse_conv_scale_bias), passes::fuse_conv_scale_bias);
  EXPECT_EQ(op_list(t_out.graph), (std::vector<std::string>{"ConvTranspose"}));
  expect_close_outputs(t, t_out, {random_value({1, 4, 5, 5}, 5)}, 1e-4);
}

TEST(PassFuseConvScaleBias, OtherBroadcastsStay) {
  Model m = conv_scale_bias({5}, {6, 5, 5});  // along the last axis; a full tensor
  bool changed = true;
  run_pass(m, passes::fuse_conv_scale_bias, &changed);
  EXPECT_FALSE(changed);
}

TEST(PassFuseBatchnorm, Gemm) {
  for (int64_t trans_b : {0, 1}) {
    Model m = make_model(17);
    m.graph.inputs = {tensor_info("a", DataType::kFloat, {dim(3), dim(5)})};
    m.graph.outputs = {untyped("bn")};
    const Shape b_shape = trans_b ? Shape{4, 5} : Shape{5, 4};
    add_init(m.graph, "B", f32(noise(20, 5), b_shape));
    add_init(m.graph, "C", f32(noise(4, 6), {4}));
    m.graph.nodes.push_back(
        make_node("Gemm", {"a", "B", "C"}, {"g"},
                  {attr_int("transB", trans_b), attr_float("beta", 0.5f), attr_float("alpha", 2.0f)}));
    add_bn(m, "g", "bn", 4, 21);
    Model out = run_pass(m, passes::fuse_batchnorm);
    EXPECT_EQ(op_list(out.graph), (std::vector<std::string>{"Gemm"}));
    EXPECT_EQ(out.graph.outputs[0].name, "bn");
    expect_close_outputs(m, out, {random_value({3, 5}, 9)}, 1e-4);
  }
}

TEST(PassFuseBatchnorm, LeavesSharedOrTrainingBnAlone) {
  Model shared = conv_bn("Conv", 1, true);
  shared.graph.outputs.push_back(untyped("c"));  // the conv output is also a graph output
  bool changed = true;
  run_pass(shared, passes::fuse_batchnorm, &changed);
  EXPECT_FALSE(changed);

  Model training = conv_bn("Conv", 1, true);
  training.graph.nodes[1].attributes.push_back(attr_int("training_mode", 1));
  run_pass(training, passes::fuse_batchnorm, &changed);
  EXPECT_FALSE(changed);

  Model dynamic = conv_bn("Conv", 1, true);
  dynamic.graph.inputs.push_back(untyped("var"));  // overridable: not a constant
  run_pass(dynamic, passes::fuse_batchnorm, &changed);
  EXPECT_FALSE(changed);
}

}  // namespace
}  // namespace testing
}  // namespace xonnx
