// InstanceNormalization and spatial Pads inside NHWC regions (layout_nhwc.cc, layout_relabel.cc,
// layout_conv1d.cc):
//  - a style-transfer block (ReflectionPad2d -> Conv -> InstanceNorm2d(affine) -> ReLU, and a
//    constant Pad) is one region, entered and left once: the norm becomes the NHWC
//    InstanceNormalization (optimized/group_norm.cc, its twin in ops/ref/nhwc.cc) and the Pads
//    read the NHWC data with their pads in NHWC order (each used to leave the region);
//  - a Pad of a 1 x 1 map (after a global pool) makes it larger: its exit is no free one;
//  - wav2vec2's feature extractor (Conv1d -> GroupNorm(C, C), which is InstanceNormalization
//    then Mul / Add once its identity reshapes are gone -> GELU -> Conv1d) stays lifted and in
//    the region, its Mul and Add folded into the norm's scale and B;
//  - a Pad of the channels stays outside;
//  - the values: sessions agree with the reference kernels (no layout pass), 1 and 2 threads.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/ir/graph_edit.h"
#include "runtime/passes/layout_nhwc.h"
#include "tests/unit/graph_builder.h"
#include "tests/unit/layout_fusions_common.h"

namespace xonnx {
namespace {

using backendtest::rand_tensor;
using layout_test::count_op;
using layout_test::expect_agree;
using layout_test::session;
using testing::attr_ints;

std::string ints_constant(testing::GraphBuilder& b, const std::vector<int64_t>& v) {
  return b.constant(Tensor::from_vector<int64_t>(v, {static_cast<int64_t>(v.size())}));
}

std::string conv(testing::GraphBuilder& b, const std::string& x, int64_t cin, int64_t cout, int64_t k, uint32_t seed,
                 bool one_d = false) {
  const Shape w = one_d ? Shape{cout, cin, k} : Shape{cout, cin, k, k};
  return b.node("Conv", {x, b.constant(rand_tensor(w, seed, -0.4f, 0.4f)), b.constant(rand_tensor({cout}, seed + 1))},
                {attr_ints("kernel_shape", one_d ? std::vector<int64_t>{k} : std::vector<int64_t>{k, k})});
}

std::string instance_norm(testing::GraphBuilder& b, const std::string& x, int64_t c, uint32_t seed) {
  return b.node("InstanceNormalization",
                {x, b.constant(rand_tensor({c}, seed, 0.5f, 1.5f)), b.constant(rand_tensor({c}, seed + 1))});
}

// x [N, 3, H, W] -> Conv 1x1 -> reflect Pad 1 -> Conv 3x3 -> InstanceNorm -> Relu -> constant
// Pad (0.5, uneven) -> Conv 3x3 -> y. With `pad_channels`, the second Pad also pads C (8 -> 11
// channels feed the last Conv).
Model style_block(bool pad_channels) {
  testing::GraphBuilder b(17);
  b.input("x", 4);
  const std::string reflect = b.node("Pad", {conv(b, "x", 3, 6, 1, 11), ints_constant(b, {0, 0, 1, 1, 0, 0, 1, 1})},
                                     {testing::attr_string("mode", "reflect")});
  const std::string a = b.node("Relu", {instance_norm(b, conv(b, reflect, 6, 8, 3, 1), 8, 5)});
  const std::vector<int64_t> pads =
      pad_channels ? std::vector<int64_t>{0, 1, 0, 2, 0, 2, 1, 0} : std::vector<int64_t>{0, 0, 0, 2, 0, 0, 1, 0};
  const std::string padded =
      b.node("Pad", {a, ints_constant(b, pads), b.constant(Tensor::from_vector<float>({0.5f}, {}))});
  b.node("Conv", {padded, b.constant(rand_tensor({4, pad_channels ? 11 : 8, 3, 3}, 9, -0.4f, 0.4f))},
         {attr_ints("kernel_shape", {3, 3})}, "y");
  b.output("y");
  return b.model;
}

void expect_sessions_agree(const Model& m, const std::vector<Shape>& shapes, const std::string& what) {
  for (int threads : {1, 2}) {
    auto ref = session(m, threads, /*reference=*/true);
    auto fast = session(m, threads);
    ASSERT_TRUE(ref.is_ok() && fast.is_ok()) << what;
    uint32_t seed = 40;
    for (const Shape& s : shapes) expect_agree(**ref, **fast, nullptr, 0, rand_tensor(s, seed++), what);
  }
}

TEST(LayoutNormPad, AStyleTransferBlockIsOneRegion) {
  Model m = style_block(false);
  auto stats = apply_nhwc_layout(m.graph, m.opset_imports);
  ASSERT_TRUE(stats.is_ok()) << stats.status().to_string();
  EXPECT_EQ(stats->to_nhwc, 1);
  EXPECT_EQ(stats->to_nchw, 1);
  EXPECT_EQ(count_op(m.graph, "InstanceNormalization"), 1);
  // The Pads read the NHWC data: pads [n, h, w, c] begins, then ends.
  std::vector<std::vector<int64_t>> pads;
  for (const Node& n : m.graph.nodes) {
    if (n.op_type != "Pad") continue;
    const Tensor* t = constant_tensor(m.graph, n.inputs[1]);
    ASSERT_NE(t, nullptr);
    auto values = t->to_int64_vector();
    ASSERT_TRUE(values.is_ok());
    pads.push_back(std::move(values).value());
  }
  EXPECT_EQ(pads, (std::vector<std::vector<int64_t>>{{0, 1, 1, 0, 0, 1, 1, 0}, {0, 0, 2, 0, 0, 1, 0, 0}}));
  expect_sessions_agree(style_block(false), {{1, 3, 9, 11}, {2, 3, 5, 4}}, "style block");
}

TEST(LayoutNormPad, APadOfChannelsStaysOutside) {
  Model m = style_block(true);
  auto stats = apply_nhwc_layout(m.graph, m.opset_imports);
  ASSERT_TRUE(stats.is_ok()) << stats.status().to_string();
  EXPECT_EQ(stats->to_nchw, 2);  // at the channel Pad, and at the output
  EXPECT_EQ(stats->to_nhwc, 2);  // at the first Conv, and at the Conv after the Pad
  expect_sessions_agree(style_block(true), {{1, 3, 7, 6}}, "channel pad");
}

// x -> Conv -> GlobalAveragePool (1 x 1) -> constant Pad to 3 x 3 -> Conv 1x1 -> y: the map
// leaving the region is 3 x 3, its exit no free (1 x 1) one.
TEST(LayoutNormPad, APadMakesAOneByOneMapLarger) {
  testing::GraphBuilder b(17);
  b.input("x", 4);
  const std::string pooled = b.node("GlobalAveragePool", {conv(b, "x", 3, 8, 3, 1)});
  const std::string padded = b.node("Pad", {pooled, ints_constant(b, {0, 0, 1, 1, 0, 0, 1, 1})});
  b.node("Conv", {padded, b.constant(rand_tensor({4, 8, 1, 1}, 7, -0.4f, 0.4f))}, {attr_ints("kernel_shape", {1, 1})},
         "y");
  b.output("y");
  Model m = b.model;
  auto stats = apply_nhwc_layout(m.graph, m.opset_imports);
  ASSERT_TRUE(stats.is_ok()) << stats.status().to_string();
  EXPECT_EQ(stats->to_nchw, 1);
  EXPECT_EQ(stats->free_boundaries, 0);
  expect_sessions_agree(b.model, {{1, 3, 6, 6}, {2, 3, 5, 7}}, "pad after a global pool");
}

// wav [N, 1, T] -> Conv1d k 10 -> InstanceNormalization -> Mul(gamma [16, 1]) -> Add(beta
// [16, 1]) (GroupNorm(16, 16)'s affine, torch's form) -> Gelu -> Conv1d k 3 -> y.
Model wav2vec_stem() {
  testing::GraphBuilder b(20);  // Gelu
  b.input("x", 3);
  const std::string norm = instance_norm(b, conv(b, "x", 1, 16, 10, 1, /*one_d=*/true), 16, 3);
  const std::string affine =
      b.node("Add", {b.node("Mul", {norm, b.constant(rand_tensor({16, 1}, 7))}), b.constant(rand_tensor({16, 1}, 8))});
  conv(b, b.node("Gelu", {affine}), 16, 8, 3, 9, /*one_d=*/true);
  b.model.graph.nodes.back().outputs[0] = "y";
  b.output("y");
  return b.model;
}

TEST(LayoutNormPad, AConv1dStemWithItsNormStaysLifted) {
  Model m = wav2vec_stem();
  NhwcLayoutOptions lift;
  lift.lift_1d = true;
  auto stats = apply_nhwc_layout(m.graph, m.opset_imports, lift);
  ASSERT_TRUE(stats.is_ok()) << stats.status().to_string();
  EXPECT_EQ(stats->to_nhwc, 1);
  EXPECT_EQ(stats->to_nchw, 1);
  EXPECT_EQ(count_op(m.graph, "InstanceNormalization"), 1);
  int affine_ops = 0;  // folded into the norm's scale and B
  for (const Node& n : m.graph.nodes) affine_ops += n.op_type == "Mul" || n.op_type == "Add";
  EXPECT_EQ(affine_ops, 0);
  expect_sessions_agree(wav2vec_stem(), {{1, 1, 200}, {2, 1, 57}}, "Conv1d stem");
}

}  // namespace
}  // namespace xonnx
