// 1-D Convs and pools lifted to 2-D ones of height 1 (runtime/passes/layout_conv1d.cc):
//  - the rewrite: a chain of 1-D layers with the element-wise ops between them (activations,
//    BatchNormalization, a residual Add, a per-channel scale) becomes one NHWC region, entered
//    and left once; a lifted value that is also a graph output keeps its Squeeze; a malformed
//    attribute leaves the node alone;
//  - the values: sessions with the rewrite agree with the reference kernels (no layout pass),
//    opsets 11 (Squeeze axes as an attribute) and 17, one and two threads;
//  - ConvTranspose1d (a vocoder's upsampling, with output_padding, groups and dilation) too;
//  - a residual that reads a block's input, and an int8 static Conv1d block (QDQ -> QLinearConv,
//    per-tensor Q / DQ and QLinearAdd between the layers): one region too.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/exec/session.h"
#include "runtime/ops/internal_ops.h"
#include "runtime/ops/registry.h"
#include "runtime/passes/layout_nhwc.h"
#include "tests/unit/backend_test_util.h"
#include "tests/unit/graph_builder.h"

namespace xonnx {
namespace {

using backendtest::rand_tensor;
using testing::attr_int;
using testing::attr_ints;

struct Tcn {
  int64_t opset = 17;
  bool expose_middle = false;  // the first block's output is a graph output too
};

// x [N, 8, W] -> Conv1d(8 -> 16, k 3, dilation 2) + Relu -> depthwise Conv1d(k 5, stride 2) ->
// BatchNorm -> Sigmoid -> + 1x1 Conv1d shortcut (stride 2) -> * per-channel [16, 1] -> MaxPool1d(2)
// -> AveragePool1d(3, pads 1, count_include_pad) -> "y".
Model tcn(const Tcn& t) {
  testing::GraphBuilder b(t.opset);
  b.input("x", 3);
  uint32_t seed = 11;
  const auto conv = [&](const std::string& in, int64_t cin, int64_t cout, int64_t k, std::vector<Attribute> attrs,
                        int64_t group = 1) {
    attrs.push_back(attr_int("group", group));
    return b.node("Conv",
                  {in, b.constant(rand_tensor({cout, cin / group, k}, seed++, -0.4f, 0.4f)),
                   b.constant(rand_tensor({cout}, seed++))},
                  attrs);
  };
  const std::string a = b.node("Relu", {conv("x", 8, 16, 3, {attr_ints("pads", {2, 2}), attr_ints("dilations", {2})})});
  if (t.expose_middle) b.output(a);
  const std::string dw = conv(a, 16, 16, 5, {attr_ints("pads", {2, 2}), attr_ints("strides", {2})}, 16);
  const std::string bn =
      b.node("BatchNormalization",
             {dw, b.constant(rand_tensor({16}, seed++, 0.5f, 1.5f)), b.constant(rand_tensor({16}, seed++)),
              b.constant(rand_tensor({16}, seed++)), b.constant(rand_tensor({16}, seed++, 0.5f, 2.0f))});
  const std::string gate = b.node("Sigmoid", {bn});
  const std::string shortcut = conv(a, 16, 16, 1, {attr_ints("strides", {2})});
  const std::string sum = b.node("Add", {gate, shortcut});
  const std::string scaled = b.node("Mul", {sum, b.constant(rand_tensor({16, 1}, seed++))});
  const std::string pooled = b.node("MaxPool", {scaled}, {attr_ints("kernel_shape", {2}), attr_ints("strides", {2})});
  b.node("AveragePool", {pooled},
         {attr_ints("kernel_shape", {3}), attr_ints("pads", {1, 1}), attr_int("count_include_pad", 1)}, "y");
  b.output("y");
  return b.model;
}

int count(const Graph& g, const std::string& domain, const std::string& op) {
  int n = 0;
  for (const Node& node : g.nodes) n += node.domain == domain && node.op_type == op;
  return n;
}

NhwcLayoutOptions lift_only() {
  NhwcLayoutOptions o;
  o.lift_1d = true;
  return o;
}

TEST(LayoutConv1d, AChainOfOneDLayersIsOneRegion) {
  for (int64_t opset : {11, 17}) {
    SCOPED_TRACE("opset " + std::to_string(opset));
    Tcn t;
    t.opset = opset;
    Model m = tcn(t);
    auto s = apply_nhwc_layout(m.graph, m.opset_imports, lift_only());
    ASSERT_TRUE(s.is_ok()) << s.status().to_string();
    EXPECT_EQ(s->lifted_1d, 5);  // three Convs, two pools
    EXPECT_EQ(count(m.graph, kNhwcDomain, "Conv") + count(m.graph, kNhwcDomain, "MaxPool") +
                  count(m.graph, kNhwcDomain, "AveragePool") + count(m.graph, kNhwcDomain, "BatchNormalization"),
              6);
    EXPECT_EQ(count(m.graph, "", "Unsqueeze"), 1);  // x, once
    EXPECT_EQ(count(m.graph, "", "Squeeze"), 1);    // y, once
    EXPECT_EQ(s->to_nhwc, 1);
    EXPECT_EQ(s->to_nchw, 1);
    for (const Node& n : m.graph.nodes) {
      if (n.op_type == "Squeeze" || n.op_type == "Unsqueeze") {
        EXPECT_EQ(n.inputs.size(), opset >= 13 ? 2u : 1u) << "axes as an input from opset 13";
      }
    }
  }
}

TEST(LayoutConv1d, ALiftedGraphOutputKeepsItsSqueeze) {
  Tcn t;
  t.expose_middle = true;
  Model m = tcn(t);
  auto s = apply_nhwc_layout(m.graph, m.opset_imports, lift_only());
  ASSERT_TRUE(s.is_ok());
  EXPECT_EQ(s->lifted_1d, 5);
  EXPECT_EQ(count(m.graph, "", "Squeeze"), 2);
}

TEST(LayoutConv1d, AMalformedAttributeLeavesTheNodeAlone) {
  testing::GraphBuilder b(17);
  b.input("x", 3);
  b.node("Conv", {"x", b.constant(rand_tensor({4, 2, 3}, 1))}, {attr_ints("pads", {1, 1, 1, 1})}, "y");
  b.output("y");
  Model m = b.model;
  auto s = apply_nhwc_layout(m.graph, m.opset_imports, lift_only());
  ASSERT_TRUE(s.is_ok());
  EXPECT_EQ(s->lifted_1d, 0);
  EXPECT_EQ(count(m.graph, "", "Conv"), 1);
  SessionOptions o;
  auto session = Session::create_from_model(Model(b.model), o);
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  auto out = (*session)->run({Value(rand_tensor({1, 2, 9}, 2))});
  ASSERT_FALSE(out.is_ok());
  EXPECT_NE(out.status().to_string().find("pads"), std::string::npos) << out.status().to_string();
}

TEST(LayoutConv1d, SessionsAgreeWithTheReference) {
  for (int64_t opset : {11, 17}) {
    for (bool expose : {false, true}) {
      for (int threads : {1, 2}) {
        Tcn t;
        t.opset = opset;
        t.expose_middle = expose;
        SCOPED_TRACE("opset " + std::to_string(opset) + (expose ? " exposed" : "") + " threads " +
                     std::to_string(threads));
        SessionOptions fast, reference;
        fast.num_threads = reference.num_threads = threads;
        reference.disable_xnnpack = true;  // no layout pass: the ONNX kernels on [N, C, W]
        reference.disable_optimized = true;
        auto want_session = Session::create_from_model(tcn(t), reference);
        auto got_session = Session::create_from_model(tcn(t), fast);
        ASSERT_TRUE(want_session.is_ok() && got_session.is_ok());
        if (fast_layout_fusions(OpRegistry::global()).lift_1d) {
          EXPECT_EQ(count((*got_session)->model().graph, kNhwcDomain, "Conv"), 3);
        }
        uint32_t seed = 3;
        for (Shape shape : {Shape{1, 8, 40}, Shape{2, 8, 97}, Shape{1, 8, 7}}) {
          const Tensor x = rand_tensor(shape, seed++);
          auto want = (*want_session)->run({Value(x)});
          auto got = (*got_session)->run({Value(x)});
          ASSERT_TRUE(want.is_ok()) << want.status().to_string();
          ASSERT_TRUE(got.is_ok()) << got.status().to_string();
          ASSERT_EQ(want->size(), got->size());
          for (size_t k = 0; k < got->size(); ++k) {
            ASSERT_EQ((*got)[k].tensor().shape(), (*want)[k].tensor().shape());
            backendtest::expect_close((*got)[k].tensor(), (*want)[k].tensor(), {1e-4, 1e-5},
                                      "output " + std::to_string(k) + " at " + shape_to_string(shape));
          }
        }
      }
    }
  }
}

// A vocoder's upsampling: x [N, 8, W] -> ConvTranspose1d(8 -> 6, k 16, stride 8, pads 4) ->
// LeakyRelu -> ConvTranspose1d(6 -> 4, k 7, stride 3, pads 2, output_padding 1, groups 2, dilation
// 2) -> y. Both lifted into one region; the values agree with the reference kernels.
Model upsampler() {
  testing::GraphBuilder b(17);
  b.input("x", 3);
  const std::string a = b.node(
      "ConvTranspose", {"x", b.constant(rand_tensor({8, 6, 16}, 1, -0.3f, 0.3f)), b.constant(rand_tensor({6}, 2))},
      {attr_ints("strides", {8}), attr_ints("pads", {4, 4})});
  const std::string r = b.node("LeakyRelu", {a});
  b.node("ConvTranspose", {r, b.constant(rand_tensor({6, 2, 7}, 3, -0.3f, 0.3f))},
         {attr_ints("strides", {3}), attr_ints("pads", {2, 2}), attr_ints("output_padding", {1}), attr_int("group", 2),
          attr_ints("dilations", {2})},
         "y");
  b.output("y");
  return b.model;
}

// `m` with the lift and the layout pass (1 and 2 threads) against the ONNX kernels on [N, C, W]:
// output 0 for an input of each shape (random, `seed`).
void expect_sessions_agree(const Model& m, const std::vector<Shape>& shapes, uint32_t seed) {
  for (int threads : {1, 2}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    SessionOptions fast, reference;
    fast.num_threads = reference.num_threads = threads;
    reference.disable_xnnpack = true;
    reference.disable_optimized = true;
    auto want_session = Session::create_from_model(Model(m), reference);
    auto got_session = Session::create_from_model(Model(m), fast);
    ASSERT_TRUE(want_session.is_ok() && got_session.is_ok());
    for (const Shape& shape : shapes) {
      const Tensor x = rand_tensor(shape, seed);
      auto want = (*want_session)->run({Value(x)});
      auto got = (*got_session)->run({Value(x)});
      ASSERT_TRUE(want.is_ok()) << want.status().to_string();
      ASSERT_TRUE(got.is_ok()) << got.status().to_string();
      ASSERT_EQ((*got)[0].tensor().shape(), (*want)[0].tensor().shape());
      backendtest::expect_close((*got)[0].tensor(), (*want)[0].tensor(), {1e-4, 1e-5}, shape_to_string(shape));
    }
  }
}

TEST(LayoutConv1d, ConvTranspose1dIsLiftedAndAgreesWithTheReference) {
  Model m = upsampler();
  auto s = apply_nhwc_layout(m.graph, m.opset_imports, lift_only());
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  EXPECT_EQ(s->lifted_1d, 2);
  EXPECT_EQ(count(m.graph, "", "Unsqueeze"), 1);
  EXPECT_EQ(count(m.graph, "", "Squeeze"), 1);
  expect_sessions_agree(upsampler(), {Shape{1, 8, 50}, Shape{2, 8, 3}}, 4);
}

// x -> Conv1d -> Relu = a; Conv1d(a) + a -> Relu -> y: `a` is read by the second Conv and by
// the Add. Its Squeeze stays for the Conv's Unsqueeze until the pair cancels: one region.
TEST(LayoutConv1d, AResidualReadingTheBlockInputStaysInTheRegion) {
  testing::GraphBuilder b(17);
  b.input("x", 3);
  const std::string a = b.node(
      "Relu", {b.node("Conv", {"x", b.constant(rand_tensor({8, 4, 3}, 1, -0.4f, 0.4f))}, {attr_ints("pads", {1, 1})})});
  const std::string c = b.node("Conv", {a, b.constant(rand_tensor({8, 8, 3}, 2, -0.4f, 0.4f))},
                               {attr_ints("pads", {2, 2}), attr_ints("dilations", {2})});
  b.node("Relu", {b.node("Add", {c, a})}, {}, "y");
  b.output("y");
  Model m = b.model;
  auto s = apply_nhwc_layout(m.graph, m.opset_imports, lift_only());
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  EXPECT_EQ(s->lifted_1d, 2);
  EXPECT_EQ(count(m.graph, "", "Unsqueeze"), 1);  // x, once
  EXPECT_EQ(count(m.graph, "", "Squeeze"), 1);    // y, once
  EXPECT_EQ(s->to_nhwc + s->to_nchw, 2);
}

// A TCN whose first residual shortcut is the graph input x: x -> [Conv1d(dilated) -> Relu ->
// 1x1 Conv1d -> + block input -> Relu] x 3 -> y. x's Unsqueeze for the first Conv is its lifted
// form for the first Add too, so the Squeezes sink through every block (each block's Add used
// to stay 3-D: a Squeeze, an Unsqueeze and two conversions per block).
Model input_residual_tcn() {
  testing::GraphBuilder b(17);
  b.input("x", 3);
  uint32_t seed = 70;
  std::string in = "x";
  for (int block = 0; block < 3; ++block) {
    const int64_t d = int64_t{1} << block;
    const std::string a = b.node("Relu", {b.node("Conv", {in, b.constant(rand_tensor({8, 8, 3}, seed++, -0.4f, 0.4f))},
                                                 {attr_ints("pads", {d, d}), attr_ints("dilations", {d})})});
    const std::string c = b.node("Conv", {a, b.constant(rand_tensor({8, 8, 1}, seed++, -0.4f, 0.4f))});
    in = b.node("Relu", {b.node("Add", {c, in})}, {}, block == 2 ? "y" : "");
  }
  b.output("y");
  return b.model;
}

TEST(LayoutConv1d, AResidualOnTheGraphInputKeepsTheChainLifted) {
  Model m = input_residual_tcn();
  auto s = apply_nhwc_layout(m.graph, m.opset_imports, lift_only());
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  EXPECT_EQ(s->lifted_1d, 6);
  EXPECT_EQ(count(m.graph, "", "Unsqueeze"), 1);  // x, once
  EXPECT_EQ(count(m.graph, "", "Squeeze"), 1);    // y, once
  EXPECT_EQ(s->to_nhwc + s->to_nchw, 2);
  expect_sessions_agree(input_residual_tcn(), {Shape{1, 8, 50}, Shape{2, 8, 9}}, 80);
}

// An int8 static Conv1d block as `xonnx convert --quantize int8` writes it: x -> Q -> DQ ->
// Conv1d(DQ(int8 W [M, C, k])) -> Relu -> Q -> DQ -> Conv1d -> Q -> DQ, + the block input's DQ
// -> Q -> DQ -> y. The QDQ pass makes QLinearConvs (3-D weights) and a QLinearAdd; the lift and
// the layout pass put them in one NHWC region. Against the QDQ form run in float: within one
// quantization step.
TEST(LayoutConv1d, AnInt8Conv1dBlockIsOneRegion) {
  testing::GraphBuilder b(17);
  b.input("x", 3);
  const float step = 1.0f / 32.0f;
  const std::string s = b.constant(Tensor::scalar<float>(step)), z = b.constant(Tensor::scalar<uint8_t>(128));
  const auto qdq = [&](const std::string& v) {
    return b.node("DequantizeLinear", {b.node("QuantizeLinear", {v, s, z}), s, z});
  };
  const auto conv = [&](const std::string& in, int64_t cin, int64_t cout, uint32_t seed, std::vector<Attribute> attrs) {
    std::vector<int8_t> w(static_cast<size_t>(cout * cin * 3));
    for (size_t k = 0; k < w.size(); ++k) w[k] = static_cast<int8_t>(static_cast<int>((k * 37 + seed) % 255) - 127);
    const std::string wq = b.constant(Tensor::from_vector<int8_t>(w, {cout, cin, 3}));
    const std::string ws =
        b.constant(Tensor::from_vector<float>(std::vector<float>(static_cast<size_t>(cout), 0.002f), {cout}));
    const std::string wz =
        b.constant(Tensor::from_vector<int8_t>(std::vector<int8_t>(static_cast<size_t>(cout), 0), {cout}));
    return b.node("Conv", {in, b.node("DequantizeLinear", {wq, ws, wz}, {attr_int("axis", 0)})}, attrs);
  };
  // The Relu's output quantized from 0: its Q's saturation is the Relu, which the QDQ pass drops.
  const std::string z0 = b.constant(Tensor::scalar<uint8_t>(0));
  const std::string relu = b.node("Relu", {conv(qdq("x"), 4, 8, 1, {attr_ints("pads", {1, 1})})});
  const std::string a = b.node("DequantizeLinear", {b.node("QuantizeLinear", {relu, s, z0}), s, z0});
  const std::string c = qdq(conv(a, 8, 8, 2, {attr_ints("pads", {2, 2}), attr_ints("dilations", {2})}));
  b.node("DequantizeLinear", {b.node("QuantizeLinear", {b.node("Add", {c, a}), s, z}), s, z}, {}, "y");
  b.output("y");
  SessionOptions reference, fast;
  reference.disable_xnnpack = true;  // no QDQ or layout pass: the QDQ form in float
  auto want_session = Session::create_from_model(b.model, reference);
  auto got_session = Session::create_from_model(b.model, fast);
  ASSERT_TRUE(want_session.is_ok() && got_session.is_ok());
  const Graph& g = (*got_session)->model().graph;
  EXPECT_EQ(count(g, kNhwcDomain, "QLinearConv"), 2);
  EXPECT_EQ(count(g, "", "Squeeze") + count(g, "", "Unsqueeze"), 2);  // in once, out once
  const Tensor x = rand_tensor({1, 4, 50}, 5, -2.0f, 2.0f);
  auto want = (*want_session)->run({Value(x)});
  auto got = (*got_session)->run({Value(x)});
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  backendtest::expect_close((*got)[0].tensor(), (*want)[0].tensor(), {0.0, 1.01 * step}, "int8 block");
}

}  // namespace
}  // namespace xonnx
