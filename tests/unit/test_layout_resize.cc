// The layout pass's NHWC Resize: a Resize of a region value stays in the region (no ToNCHW /
// ToNHWC around it, U-Net's decoder), the own kernel (resize.cc) blends each pixel's channels
// with the same bits as its twin (ONNX Resize on the transposed input), and what it does not
// cover goes to the twin.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/exec/session.h"
#include "runtime/ops/internal_ops.h"
#include "runtime/passes/layout_nhwc.h"
#include "tests/unit/backend_test_util.h"
#include "tests/unit/graph_builder.h"

namespace xonnx {
namespace {

using backendtest::Check;
using backendtest::cst;
using backendtest::diff_all;
using backendtest::In;
using backendtest::rand_tensor;
using backendtest::Runs;
using backendtest::var;
using testing::attr_string;

backendtest::Op nhwc_resize() {
  backendtest::Op op("Resize", kNhwcDomain, 19);
  op.domain_opset = 19;
  return op;
}
const backendtest::Op kNhwcResize = nhwc_resize();

Tensor scales(float h, float w) { return Tensor::from_vector<float>({1.0f, 1.0f, h, w}, {4}); }

TEST(NhwcResize, OwnKernelGivesTheTwinsBits) {
  struct Case {
    const char* mode;
    const char* coord;
    float sh, sw;
  };
  uint32_t seed = 1;
  for (const Case& c :
       {Case{"nearest", "asymmetric", 2, 2}, Case{"nearest", "half_pixel", 1.5f, 3}, Case{"linear", "half_pixel", 2, 2},
        Case{"linear", "align_corners", 2, 0.5f}, Case{"linear", "pytorch_half_pixel", 3, 1}}) {
    for (const Shape& x : {Shape{1, 5, 7, 3}, Shape{2, 4, 4, 16}, Shape{1, 1, 9, 33}}) {
      const std::string at = std::string(c.mode) + " " + c.coord + " " + shape_to_string(x);
      std::vector<Attribute> attrs = {attr_string("mode", c.mode),
                                      attr_string("coordinate_transformation_mode", c.coord)};
      if (std::string(c.mode) == "nearest") attrs.push_back(attr_string("nearest_mode", "floor"));
      diff_all(kNhwcResize, {var(rand_tensor(x, seed++)), In{}, cst(scales(c.sh, c.sw))}, attrs,
               Check(Runs::kMust, Runs::kNot), "scales, " + at);
      // sizes in NCHW order: [N, C, OH, OW]
      const Tensor sizes = Tensor::from_vector<int64_t>({x[0], x[3], x[1] * 2 + 1, x[2] + 3}, {4});
      diff_all(kNhwcResize, {var(rand_tensor(x, seed++)), In{}, In{}, cst(sizes)}, attrs,
               Check(Runs::kMust, Runs::kNot), "sizes, " + at);
    }
  }
  // Scales touching N or C, and cubic: the twin's.
  diff_all(kNhwcResize, {var(rand_tensor({1, 4, 4, 3}, 9)), In{}, cst(Tensor::from_vector<float>({1, 2, 2, 2}, {4}))},
           {attr_string("mode", "nearest")}, Check(Runs::kNot, Runs::kNot), "scales over C");
  diff_all(kNhwcResize, {var(rand_tensor({1, 4, 4, 3}, 10)), In{}, cst(scales(2, 2))}, {attr_string("mode", "cubic")},
           Check(Runs::kNot, Runs::kNot, {1e-6, 1e-6}), "cubic");
}

// x -> Conv -> Resize(x2) -> Conv -> y: one region, no boundary conversion between the Convs.
Model decoder(const std::string& mode) {
  testing::GraphBuilder b;
  b.input("x", 4);
  const auto conv = [&](const std::string& in, uint32_t seed) {
    return b.node(
        "Conv", {in, b.constant(rand_tensor({8, 8, 3, 3}, seed, -0.3f, 0.3f)), b.constant(rand_tensor({8}, seed + 1))},
        {testing::attr_ints("kernel_shape", {3, 3}), testing::attr_ints("pads", {1, 1, 1, 1})});
  };
  const std::string up = b.node("Resize", {conv("x", 3), "", b.constant(scales(2, 2))},
                                {attr_string("mode", mode), attr_string("coordinate_transformation_mode", "asymmetric"),
                                 attr_string("nearest_mode", "floor")});
  b.node("Conv", {up, b.constant(rand_tensor({8, 8, 3, 3}, 5, -0.3f, 0.3f))},
         {testing::attr_ints("kernel_shape", {3, 3}), testing::attr_ints("pads", {1, 1, 1, 1})}, "y");
  b.output("y");
  return b.model;
}

// Every output of `m` (input x [1, 8, 6, 5]) in a default session, layout pass included, as in
// one on the ONNX reference kernels (XNNPACK off: no layout pass).
void expect_reference_outputs(const Model& m) {
  SessionOptions ref_options, fast_options;
  ref_options.disable_xnnpack = true;
  auto ref = Session::create_from_model(m, ref_options);
  auto fast = Session::create_from_model(m, fast_options);
  ASSERT_TRUE(ref.is_ok() && fast.is_ok());
  const Tensor x = rand_tensor({1, 8, 6, 5}, 11);
  auto want = (*ref)->run({Value(x)});
  auto got = (*fast)->run({Value(x)});
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  ASSERT_EQ(got->size(), want->size());
  for (size_t i = 0; i < want->size(); ++i)
    backendtest::expect_close((*got)[i].tensor(), (*want)[i].tensor(), {1e-4, 1e-5}, "vs reference");
}

TEST(NhwcResize, StaysInTheRegionAndAgreesWithTheReference) {
  for (const char* mode : {"nearest", "linear"}) {
    SCOPED_TRACE(mode);
    Model m = decoder(mode);
    auto stats = apply_nhwc_layout(m.graph, m.opset_imports, {});
    ASSERT_TRUE(stats.is_ok()) << stats.status().to_string();
    EXPECT_EQ(stats->to_nhwc, 1);  // x only
    EXPECT_EQ(stats->to_nchw, 1);  // y only
    int resize = 0;
    for (const Node& n : m.graph.nodes) resize += n.domain == kNhwcDomain && n.op_type == "Resize";
    EXPECT_EQ(resize, 1);
    expect_reference_outputs(decoder(mode));
  }
}

// x [1, 8, h, w] -> Conv 3x3 (8 -> 8, pads 1) -> Resize(x factor, linear) -> `resized`;
// returns the Conv's output.
std::string conv_then_upsample(testing::GraphBuilder& b, float factor, const std::string& resized) {
  b.input("x", 4);
  const std::string conv =
      b.node("Conv", {"x", b.constant(rand_tensor({8, 8, 3, 3}, 3, -0.3f, 0.3f))},
             {testing::attr_ints("kernel_shape", {3, 3}), testing::attr_ints("pads", {1, 1, 1, 1})});
  b.node("Resize", {conv, "", b.constant(scales(factor, factor))}, {attr_string("mode", "linear")}, resized);
  return conv;
}

// x -> Conv -> Resize(x4) -> y: the upsampled map leaves the region, so the Resize stays NCHW
// and the boundary is the Conv's output, a sixteenth of the Resize's.
TEST(NhwcResize, AnUpsamplingThatLeavesTheRegionStaysNchw) {
  testing::GraphBuilder b;
  const std::string conv = conv_then_upsample(b, 4, "y");
  b.output("y");
  Model m = b.model;
  auto stats = apply_nhwc_layout(m.graph, m.opset_imports, {});
  ASSERT_TRUE(stats.is_ok()) << stats.status().to_string();
  EXPECT_EQ(stats->to_nchw, 1);
  for (const Node& n : m.graph.nodes) {
    if (n.op_type == "Resize") {
      EXPECT_TRUE(n.domain.empty()) << "the Resize moved into the region";
    }
    if (n.op_type == "ToNCHW") {
      EXPECT_EQ(n.outputs[0], conv) << "the boundary is not the Conv's output";
    }
  }
}

// x -> Conv -> Resize(x2) -> Conv -> y, the Resize's output also a graph output (the int8
// calibration session exposes every Conv input): a region node reads it, so it stays NHWC and
// both outputs are right. It was sent back to NCHW with its reader still in the region, which
// then read another value (LR-ASPP's calibration failed with a channel count mismatch).
TEST(NhwcResize, AnExitResizeThatTheRegionReadsStaysNhwc) {
  testing::GraphBuilder b;
  conv_then_upsample(b, 2, "up");
  b.node("Conv", {"up", b.constant(rand_tensor({4, 8, 1, 1}, 4, -0.3f, 0.3f))}, {}, "y");
  b.output("y");
  b.output("up");
  Model m = b.model;
  auto stats = apply_nhwc_layout(m.graph, m.opset_imports, {});
  ASSERT_TRUE(stats.is_ok()) << stats.status().to_string();
  int nhwc_resizes = 0;
  for (const Node& n : m.graph.nodes) nhwc_resizes += n.op_type == "Resize" && n.domain == kNhwcDomain;
  EXPECT_EQ(nhwc_resizes, 1);
  expect_reference_outputs(b.model);
}

}  // namespace
}  // namespace xonnx
