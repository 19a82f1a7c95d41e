// The NHWC layout pass (runtime/passes/layout_nhwc.h), differential runs: whole small CNNs with
// the pass (XNNPACK on) against the reference kernels (XNNPACK off). The graph rewrites are
// tested in test_layout_nhwc.cc.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "runtime/exec/session.h"
#include "runtime/ops/internal_ops.h"
#include "runtime/ops/optimized/opt_util.h"
#include "runtime/ops/xnnpack/xnnpack_util.h"
#include "runtime/passes/layout_nhwc.h"
#include "runtime/passes/shape_inference.h"
#include "tests/unit/layout_nhwc_models.h"

namespace xonnx {
namespace nhwc_models {
namespace {

// A mobilenet/resnet/efficientnet-like net over every construct the pass handles.
Model mini_net(int64_t cin, int64_t c) {
  ConvNetBuilder b;
  b.input("x");
  std::string v = b.node("Relu", {b.conv("x", cin, c, 3, 1, 2)});
  const std::string lo = b.constant(Tensor::scalar<float>(0.0f));
  const std::string hi = b.constant(Tensor::scalar<float>(6.0f));
  const std::string dw = b.node("Clip", {b.conv(v, c, c, 3, c), lo, hi});  // depthwise + ReLU6
  v = b.node("Add", {v, b.conv(dw, c, c, 1)});                             // residual
  const std::string silu = b.node("Mul", {v, b.node("Sigmoid", {v})});     // SiLU
  const std::string g = b.node("GlobalAveragePool", {silu});               // SE block
  const std::string gate = b.node("HardSigmoid", {b.conv(b.node("Relu", {b.conv(g, c, 3, 1)}), 3, c, 1)});
  v = b.node("Mul", {silu, gate});
  v = b.node("Mul", {b.node("HardSigmoid", {v}, {attr_float("alpha", 1.0f / 6.0f)}), v});  // hard-swish
  v = b.node("MaxPool", {v},
             {attr_ints("kernel_shape", {3, 3}), attr_ints("strides", {2, 2}), attr_ints("pads", {1, 1, 1, 1})});
  const std::string avg =
      b.node("AveragePool", {v},
             {attr_ints("kernel_shape", {3, 3}), attr_ints("pads", {1, 1, 1, 1}), attr_int("count_include_pad", 1)});
  v = b.node("Concat", {v, b.conv(avg, c, 2, 1)}, {attr_int("axis", 1)});
  v = b.node("Mul", {v, b.constant(rand_tensor({c + 2, 1, 1}, 9))});  // per-channel scale
  b.output(v);                                                        // a region value as a graph output
  const std::string flat = b.node("Flatten", {b.node("GlobalAveragePool", {v})});
  b.node("Gemm", {flat, b.constant(rand_tensor({c + 2, 5}, 11))}, {}, "logits");
  b.output("logits");
  return b.model;
}

// `atol`: the sums' rounding grows with their length (about sqrt(K)), and the engines add in
// other orders (armv7's NEON without FMA rounds each product).
void expect_same_outputs(const Model& model, const std::vector<Shape>& shapes, const std::string& what,
                         float nan_at = 0, double atol = 1e-5) {
  SCOPED_TRACE(what);
  SessionOptions ref_opts;
  ref_opts.disable_xnnpack = true;
  auto ref = Session::create_from_model(model, ref_opts);
  ASSERT_TRUE(ref.is_ok()) << ref.status().to_string();
  auto fast = Session::create_from_model(model, SessionOptions{});
  ASSERT_TRUE(fast.is_ok()) << fast.status().to_string();
  int nhwc_nodes = 0;
  for (const Node& n : (*fast)->model().graph.nodes) nhwc_nodes += n.domain == kNhwcDomain;
  EXPECT_GT(nhwc_nodes, 0);
  uint32_t seed = 3;
  for (const Shape& shape : shapes) {  // dynamic shapes: one session, several input sizes
    Tensor x = rand_tensor(shape, seed++);
    if (nan_at != 0) {
      x.data<float>()[0] = std::numeric_limits<float>::quiet_NaN();
      x.data<float>()[x.numel() - 1] = nan_at;
    }
    auto want = (*ref)->run({Value(x)});
    ASSERT_TRUE(want.is_ok()) << want.status().to_string();
    const uint64_t before = xnn::run_count() + opt::run_count();  // XNNPACK's or the own NHWC kernels
    auto got = (*fast)->run({Value(x)});
    ASSERT_TRUE(got.is_ok()) << got.status().to_string();
    if (nan_at == 0) {
      EXPECT_GT(xnn::run_count() + opt::run_count(), before);
    }
    ASSERT_EQ(got->size(), want->size());
    for (size_t i = 0; i < got->size(); ++i) {
      expect_close((*got)[i].tensor(), (*want)[i].tensor(), 1e-4, atol,
                   "output " + std::to_string(i) + " at " + shape_to_string(shape));
    }
  }
}

// x -> Conv -> QuantizeLinear -> DequantizeLinear -> y: the float map only leaves the region,
// so the DequantizeLinear stays NCHW and the boundary converts the 8-bit values (a quarter of
// the bytes). One that a region node also reads stays in the region. The Conv is an identity
// (exact in every summation order), so both paths quantize the same floats.
TEST(LayoutNhwcDiff, DequantizeLeavingTheRegionRunsAfterTheBoundary) {
  for (const bool region_reads : {false, true}) {
    ConvNetBuilder b(13);
    b.input("x");
    std::vector<float> eye(16, 0.0f);
    for (int k = 0; k < 4; ++k) eye[static_cast<size_t>(k * 5)] = 1.0f;
    const std::string w = b.constant(Tensor::from_vector<float>(eye, {4, 4, 1, 1}));
    const std::string s = b.constant(Tensor::scalar<float>(0.05f)), z = b.constant(Tensor::scalar<uint8_t>(128));
    const std::string q = b.node("QuantizeLinear", {b.node("Conv", {"x", w}), s, z});
    const std::string dq = b.node("DequantizeLinear", {q, s, z}, {}, "y");
    b.output("y");
    if (region_reads) {
      b.node("Conv", {dq, w}, {}, "y2");
      b.output("y2");
    }
    const std::string what = region_reads ? "a region node reads it" : "only leaves the region";
    Model rewritten = b.model;
    auto stats = apply_nhwc_layout(rewritten.graph, rewritten.opset_imports);
    ASSERT_TRUE(stats.is_ok()) << stats.status().to_string();
    std::string dq_input;
    for (const Node& n : rewritten.graph.nodes)
      if (n.op_type == "DequantizeLinear") dq_input = n.inputs[0];
    bool after_boundary = false;
    for (const Node& n : rewritten.graph.nodes)
      after_boundary = after_boundary || (n.op_type == "ToNCHW" && n.outputs[0] == dq_input);
    EXPECT_EQ(after_boundary, !region_reads) << what;
    expect_same_outputs(b.model, {{1, 4, 9, 7}, {2, 4, 5, 6}}, what);
  }
}

// x -> Conv + Relu -> Conv + Relu -> Concat(x, features) -> Conv -> y: a refinement net's
// concatenation of its input image (first) with its features. The Concat reads x's twin, which
// the first Conv reads too: one region, entered and left once (it used to leave the region for
// the Concat: a ToNCHW of the features, an NCHW Concat and a ToNHWC of the result).
TEST(LayoutNhwcDiff, AConcatOfTheInputImageStaysInTheRegion) {
  for (bool image_first : {true, false}) {
    ConvNetBuilder b(21);
    b.input("x");
    const std::string f = b.node("Relu", {b.conv(b.node("Relu", {b.conv("x", 3, 16, 3)}), 16, 16, 3)});
    const std::vector<std::string> parts =
        image_first ? std::vector<std::string>{"x", f} : std::vector<std::string>{f, "x"};
    b.node("Conv",
           {b.node("Concat", parts, {attr_int("axis", 1)}), b.constant(rand_tensor({3, 19, 3, 3}, 5, -0.5f, 0.5f))},
           {attr_ints("kernel_shape", {3, 3}), attr_ints("pads", {1, 1, 1, 1})}, "y");
    b.output("y");
    const std::string what = image_first ? "image first" : "image last";
    Model rewritten = b.model;
    auto stats = apply_nhwc_layout(rewritten.graph, rewritten.opset_imports);
    ASSERT_TRUE(stats.is_ok()) << stats.status().to_string();
    EXPECT_EQ(stats->to_nhwc, 1) << what;
    EXPECT_EQ(stats->to_nchw, 1) << what;
    for (const Node& n : rewritten.graph.nodes) {
      if (n.op_type == "Concat") {
        EXPECT_EQ(n.find_attr("axis")->i, 3) << what;
      }
    }
    expect_same_outputs(b.model, {{1, 3, 17, 15}, {2, 3, 8, 9}}, what);
  }
}

// A super-resolution net's upsampling (Conv -> PixelShuffle -> Relu -> Conv, torch's DepthToSpace
// CRD; DCR from other exporters) and an input PixelUnshuffle (SpaceToDepth) stay in the region:
// entered and left once (they used to leave it, each a ToNCHW and a ToNHWC).
TEST(LayoutNhwcDiff, PixelShufflesStayInTheRegion) {
  for (const char* mode : {"CRD", "DCR"}) {
    ConvNetBuilder b(31);
    b.input("x");
    const std::string d = b.node("SpaceToDepth", {b.conv("x", 3, 4, 3)}, {attr_int("blocksize", 2)});  // 16 ch, h / 2
    const std::string f = b.conv(d, 16, 12, 3);
    const std::string up =
        b.node("Relu", {b.node("DepthToSpace", {f}, {attr_int("blocksize", 2), attr_string("mode", mode)})});
    b.node("Conv",
           {b.node("DepthToSpace", {b.conv(up, 3, 12, 3)}, {attr_int("blocksize", 2), attr_string("mode", mode)}),
            b.constant(rand_tensor({2, 3, 3, 3}, 9, -0.5f, 0.5f))},
           {attr_ints("kernel_shape", {3, 3}), attr_ints("pads", {1, 1, 1, 1})}, "y");
    b.output("y");
    Model rewritten = b.model;
    auto stats = apply_nhwc_layout(rewritten.graph, rewritten.opset_imports);
    ASSERT_TRUE(stats.is_ok()) << stats.status().to_string();
    EXPECT_EQ(stats->to_nhwc, 1) << mode;
    EXPECT_EQ(stats->to_nchw, 1) << mode;
    EXPECT_EQ(count_domain_ops(rewritten.graph, "com.xonnx.nhwc", "DepthToSpace"), 2) << mode;
    EXPECT_EQ(count_domain_ops(rewritten.graph, "com.xonnx.nhwc", "SpaceToDepth"), 1) << mode;
    expect_same_outputs(b.model, {{1, 3, 8, 10}, {2, 3, 6, 4}}, mode);
  }
}

// torch's GroupNorm (Reshape [0, G, -1] -> InstanceNormalization(1, 0) -> Reshape(Shape(x)) ->
// Mul(gamma) -> Add(beta)) between Convs: one NHWC GroupNorm with gamma and beta as its inputs,
// the region entered and left once (each norm used to leave it). Not when the
// InstanceNormalization has its own scale, or the view is not [N, G, -1]; a gamma of one value
// for all channels stays a Mul (and the Add after it).
Model group_norm_net(int64_t groups, float in_scale, bool constant_back_shape, Shape view = {},
                     Shape gamma_shape = {16, 1, 1}) {
  ConvNetBuilder b(41);
  b.input("x");
  const std::string x = b.conv("x", 3, 16, 3);
  if (view.empty()) view = {0, groups, -1};
  const std::string r = b.node("Reshape", {x, b.constant(Tensor::from_vector<int64_t>(view, {3}))});
  const std::string norm =
      b.node("InstanceNormalization",
             {r, b.constant(Tensor::from_vector<float>(std::vector<float>(groups, in_scale), {groups})),
              b.constant(Tensor::from_vector<float>(std::vector<float>(groups, 0.0f), {groups}))},
             {attr_float("epsilon", 1e-5f)});
  const std::string back_shape =
      constant_back_shape ? b.constant(Tensor::from_vector<int64_t>({1, 16, 6, 7}, {4})) : b.node("Shape", {x});
  const std::string back = b.node("Reshape", {norm, back_shape});
  const std::string affine = b.node(
      "Add", {b.node("Mul", {back, b.constant(rand_tensor(gamma_shape, 3))}), b.constant(rand_tensor({16, 1, 1}, 4))});
  b.node("Conv", {b.node("Relu", {affine}), b.constant(rand_tensor({4, 16, 1, 1}, 5, -0.5f, 0.5f))}, {}, "y");
  b.output("y");
  if (constant_back_shape) {  // x's dims known, as the constant shape back needs
    std::vector<Dim>& dims = b.model.graph.inputs[0].type.dims;
    for (size_t k = 0; k < 4; ++k) dims[k].value = std::vector<int64_t>{1, 3, 6, 7}[k];
  }
  return b.model;
}

TEST(LayoutNhwcDiff, TorchGroupNormBecomesOneNhwcOp) {
  for (bool constant_back : {false, true}) {
    for (int64_t groups : {4, 16}) {
      const std::string what = "groups " + std::to_string(groups) + (constant_back ? ", constant shape back" : "");
      Model m = group_norm_net(groups, 1.0f, constant_back);
      Model rewritten = m;  // with the value_info a session writes first: C must be known
      passes::write_value_info(rewritten.graph, passes::infer_shapes(rewritten));
      auto stats = apply_nhwc_layout(rewritten.graph, rewritten.opset_imports);
      ASSERT_TRUE(stats.is_ok()) << stats.status().to_string();
      EXPECT_EQ(stats->group_norms, 1) << what;
      EXPECT_EQ(stats->to_nhwc, 1) << what;
      EXPECT_EQ(stats->to_nchw, 1) << what;
      EXPECT_EQ(count_domain_ops(rewritten.graph, "", "InstanceNormalization"), 0) << what;
      EXPECT_EQ(count_domain_ops(rewritten.graph, kNhwcDomain, kGroupNormOp), 1) << what;
      EXPECT_EQ(count_domain_ops(rewritten.graph, "", "Shape"), 0) << what;  // Shape(x) went with the view
      EXPECT_EQ(count_domain_ops(rewritten.graph, "", "Mul") + count_domain_ops(rewritten.graph, "", "Add"), 0) << what;
      // the constant shape back is the test's own 1 x 16 x 6 x 7
      expect_same_outputs(
          m, constant_back ? std::vector<Shape>{{1, 3, 6, 7}} : std::vector<Shape>{{1, 3, 6, 7}, {2, 3, 9, 5}}, what);
    }
  }
  for (const auto& [scale, view, what] : {std::make_tuple(2.0f, Shape{}, "InstanceNormalization scale 2"),
                                          std::make_tuple(1.0f, Shape{0, 4, 4, -1}, "a 4-D view")}) {
    Model m = group_norm_net(4, scale, false, view);
    passes::write_value_info(m.graph, passes::infer_shapes(m));
    auto stats = apply_nhwc_layout(m.graph, m.opset_imports);
    ASSERT_TRUE(stats.is_ok());
    EXPECT_EQ(stats->group_norms, 0) << what;
    EXPECT_EQ(count_domain_ops(m.graph, "", "InstanceNormalization"), 1) << what;
  }
  Model scalar_gamma = group_norm_net(4, 1.0f, false, {}, {1});
  Model rewritten = scalar_gamma;
  passes::write_value_info(rewritten.graph, passes::infer_shapes(rewritten));
  auto stats = apply_nhwc_layout(rewritten.graph, rewritten.opset_imports);
  ASSERT_TRUE(stats.is_ok());
  EXPECT_EQ(stats->group_norms, 1);
  EXPECT_EQ(count_domain_ops(rewritten.graph, "", "Mul"), 1);
  EXPECT_EQ(count_domain_ops(rewritten.graph, "", "Add"), 1);
  expect_same_outputs(scalar_gamma, {{1, 3, 6, 7}}, "gamma of one value");
}

TEST(LayoutNhwcDiff, MiniNetOddChannelsAndBatches) {
  // 3 and 4 input channels take the interleaving NCHW -> NHWC entry (three pixel chunks per
  // image at 131 x 127).
  for (int64_t cin : {3, 4}) {
    expect_same_outputs(mini_net(cin, 3), {{2, cin, 131, 127}}, "large image, cin " + std::to_string(cin));
  }
  for (int64_t cin : {1, 3}) {
    for (int64_t c : {1, 3, 13}) {
      expect_same_outputs(mini_net(cin, c), {{1, cin, 15, 13}, {2, cin, 9, 10}},
                          "cin " + std::to_string(cin) + " c " + std::to_string(c));
    }
  }
}

TEST(LayoutNhwcDiff, InputShapeChangesBetweenRuns) {
  // 24 x 20 and 20 x 24: as many output pixels (the stem's cached table must still change).
  expect_same_outputs(mini_net(3, 13),
                      {{1, 3, 16, 16}, {2, 3, 23, 11}, {1, 3, 16, 16}, {1, 3, 7, 7}, {1, 3, 24, 20}, {1, 3, 20, 24}},
                      "dynamic shapes");
}

TEST(LayoutNhwcDiff, UNetLevelsWithConvTranspose) {
  for (int64_t k : {2, 3}) {
    for (int64_t c : {8, 13}) {
      const std::string what =
          "ConvTranspose " + std::to_string(k) + "x" + std::to_string(k) + ", c " + std::to_string(c);
      // Four layers, the last two summing 2c * 9 products (234 at c = 13).
      const double atol = 1e-5 * std::sqrt(2.0 * static_cast<double>(c) * 9.0 / 16.0);
      expect_same_outputs(unet_level(c, k), {{1, 3, 16, 16}, {2, 3, 12, 20}, {1, 3, 16, 16}}, what, 0, atol);
      expect_same_outputs(unet_level(c, k), {{1, 3, 8, 10}}, what + ", NaN and inf",
                          std::numeric_limits<float>::infinity(), atol);
    }
  }
}

TEST(LayoutNhwcDiff, ShapesReadFromTheTwinsKeepTheirValues) {
  // Odd sizes: the pooled map resizes back to the skip's size, not to twice its own.
  expect_same_outputs(resize_to_skip(true), {{1, 3, 16, 16}, {2, 3, 13, 9}, {1, 3, 7, 12}},
                      "resize to the skip's size");
}

TEST(LayoutNhwcDiff, ReductionsOfTheTwinKeepTheirValues) {
  for (const Reduction& r : reductions()) {
    expect_same_outputs(reduce_after_conv(r), {{1, 3, 9, 7}, {2, 3, 5, 6}},
                        std::string(r.op) + " keepdims " + std::to_string(r.keepdims));
  }
}

TEST(LayoutNhwcDiff, NonFiniteInputsKeepReferenceSemantics) {
  expect_same_outputs(mini_net(3, 13), {{1, 3, 12, 12}}, "NaN and inf", std::numeric_limits<float>::infinity());
}

TEST(LayoutNhwcDiff, DenseBlockWithBatchNorms) {
  for (int64_t c : {1, 4, 13}) {
    expect_same_outputs(dense_block(c, 5, 3), {{1, 3, 9, 7}, {2, 3, 5, 6}}, "c " + std::to_string(c));
  }
  expect_same_outputs(dense_block(4, 3, 2), {{1, 3, 6, 6}}, "NaN and inf", std::numeric_limits<float>::infinity());
}

Model fused_conv(const std::string& act) {
  ConvNetBuilder b(11);
  b.input("x");
  const std::string c = b.conv("x", 3, 13, 3);
  if (act == "Relu") {
    b.node("Relu", {c}, {}, "y");
  } else {
    b.node("Clip", {c, b.constant(Tensor::scalar<float>(-0.25f)), b.constant(Tensor::scalar<float>(0.5f))}, {}, "y");
  }
  b.output("y");
  return b.model;
}

TEST(LayoutNhwcDiff, FusedConvActivationWithNanInput) {
  for (const char* act : {"Relu", "Clip"}) {
    Model m = fused_conv(act);
    Graph g = m.graph;
    auto s = apply_nhwc_layout(g, m.opset_imports);
    ASSERT_TRUE(s.is_ok());
    EXPECT_EQ(s->fused, 1) << act;
    expect_same_outputs(m, {{1, 3, 6, 5}}, std::string(act) + " finite");
    expect_same_outputs(m, {{2, 3, 6, 5}}, std::string(act) + " NaN", -std::numeric_limits<float>::infinity());
    // NaN must survive the fused clamp (XNNPACK alone would turn it into the lower bound).
    SessionOptions opts;
    auto fast = Session::create_from_model(m, opts);
    ASSERT_TRUE(fast.is_ok());
    Tensor x = rand_tensor({1, 3, 6, 5}, 4);
    x.data<float>()[7] = std::numeric_limits<float>::quiet_NaN();
    auto y = (*fast)->run({Value(x)});
    ASSERT_TRUE(y.is_ok());
    int nans = 0;
    for (int64_t i = 0; i < (*y)[0].tensor().numel(); ++i) nans += std::isnan((*y)[0].tensor().data<float>()[i]);
    EXPECT_GT(nans, 0) << act;
  }
}

TEST(LayoutNhwcDiff, BadRankFailsWithAClearError) {
  Model m = fused_conv("Relu");
  m.graph.inputs[0].type.has_shape = false;  // let a 3-D input through the session's check
  auto fast = Session::create_from_model(m, SessionOptions{});
  ASSERT_TRUE(fast.is_ok());
  auto y = (*fast)->run({Value(rand_tensor({3, 6, 5}, 1))});
  ASSERT_FALSE(y.is_ok());
  EXPECT_NE(y.status().to_string().find("4-D"), std::string::npos) << y.status().to_string();
}

}  // namespace
}  // namespace nhwc_models
}  // namespace xonnx
