// Channel Slices and channel shuffles inside NHWC regions (runtime/passes/layout_relabel.cc):
//  - the rewrite: a ShuffleNetV2 unit (Convs, channel Concat, Reshape -> Transpose -> Reshape
//    shuffle, two channel Slices) stays one region, entered and left once; Slices along other
//    axes (negative, absent, stepped) are re-labelled too; a shuffle whose shape copies a dim
//    (0), splits N, or whose dims the graph does not record, or a Transpose of another perm
//    is no shuffle (those splitting C read the NHWC data as a detection head's view, below);
//  - a ConvNeXt block's permutes to and from channels-last around its LayerNorm and Linears
//    become Identities of the region's NHWC data;
//  - a detection head's view + permute of a Conv output (SSD's [N, A, K, H, W] -> [N, H, W, A,
//    K]: an Identity; YOLO's [N, A, H, W, K]: one Transpose) reads the NHWC data, no ToNCHW;
//    views that copy a dim, do not keep H and W last, have another reader, or infer a part
//    of C over an unknown batch stay outside;
//  - a Split of a region value (YOLOv8's C2f) splits the NHWC data's matching axis;
//  - the values: sessions agree with the reference kernels (no layout pass), 1 and 2 threads.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/exec/session.h"
#include "runtime/ops/internal_ops.h"
#include "runtime/ops/registry.h"
#include "runtime/passes/layout_nhwc.h"
#include "runtime/passes/shape_inference.h"
#include "tests/unit/backend_test_util.h"
#include "tests/unit/graph_builder.h"

namespace xonnx {
namespace {

using backendtest::rand_tensor;
using testing::attr_ints;

struct Unit {
  std::vector<int64_t> shuffle_shape = {1, 2, 8, 6, 6};  // [N, g, C / g, H, W]
  std::vector<int64_t> perm = {0, 2, 1, 3, 4};
  std::vector<int64_t> slice_axes = {1};  // of the second Slice ({} : the input left out)
  std::vector<int64_t> slice_starts = {8}, slice_ends = {16};
  std::vector<int64_t> slice_steps;  // empty: none
};

std::string i64(testing::GraphBuilder& b, const std::vector<int64_t>& v) {
  return b.constant(Tensor::from_vector<int64_t>(v, {static_cast<int64_t>(v.size())}));
}

// x [1, 8, 6, 6] -> Conv 8 -> 8 ("a") and Conv 8 -> 8 ("b") -> Concat -> shuffle -> Slice
// channels [0, 8) -> Conv 8 -> 8 -> "y0"; Slice (per `u`) -> "y1".
Model shuffle_unit(const Unit& u) {
  testing::GraphBuilder b(14);
  b.input("x", 4);
  b.model.graph.inputs[0].type.dims = {Dim{1, ""}, Dim{8, ""}, Dim{6, ""}, Dim{6, ""}};
  uint32_t seed = 3;
  const auto conv = [&](const std::string& in) {
    return b.node(
        "Relu",
        {b.node("Conv",
                {in, b.constant(rand_tensor({8, 8, 3, 3}, seed++, -0.3f, 0.3f)), b.constant(rand_tensor({8}, seed++))},
                {attr_ints("kernel_shape", {3, 3}), attr_ints("pads", {1, 1, 1, 1})})});
  };
  std::vector<Attribute> axis1;
  Attribute axis;
  axis.name = "axis";
  axis.type = AttrType::kInt;
  axis.i = 1;
  axis1.push_back(axis);
  const std::string cat = b.node("Concat", {conv("x"), conv("x")}, axis1);
  const std::string grouped = b.node("Reshape", {cat, i64(b, u.shuffle_shape)});
  const std::string swapped = b.node("Transpose", {grouped}, {attr_ints("perm", u.perm)});
  const std::string shuffled = b.node("Reshape", {swapped, i64(b, {1, -1, 6, 6})});
  const std::string left = b.node("Slice", {shuffled, i64(b, {0}), i64(b, {8}), i64(b, {1})});
  b.node("Relu", {conv(left)}, {}, "y0");
  std::vector<std::string> slice = {shuffled, i64(b, u.slice_starts), i64(b, u.slice_ends)};
  if (!u.slice_axes.empty() || !u.slice_steps.empty())
    slice.push_back(u.slice_axes.empty() ? "" : i64(b, u.slice_axes));
  if (!u.slice_steps.empty()) slice.push_back(i64(b, u.slice_steps));
  b.node("Slice", slice, {}, "y1");
  b.output("y0");
  b.output("y1");
  return b.model;
}

// The model's outputs for x [1, 8, 6, 6] at 1 and 2 threads against the reference kernels
// (no layout pass).
void expect_agrees_with_reference(const Model& model) {
  for (int threads : {1, 2}) {
    SessionOptions fast, reference;
    fast.num_threads = reference.num_threads = threads;
    reference.disable_xnnpack = true;
    reference.disable_optimized = true;
    auto got_session = Session::create_from_model(model, fast);
    auto want_session = Session::create_from_model(model, reference);
    ASSERT_TRUE(got_session.is_ok()) << got_session.status().to_string();
    ASSERT_TRUE(want_session.is_ok()) << want_session.status().to_string();
    const Tensor x = rand_tensor({1, 8, 6, 6}, 9);
    auto got = (*got_session)->run({Value(x)});
    auto want = (*want_session)->run({Value(x)});
    ASSERT_TRUE(got.is_ok()) << got.status().to_string();
    ASSERT_TRUE(want.is_ok()) << want.status().to_string();
    ASSERT_EQ(got->size(), want->size());
    for (size_t k = 0; k < got->size(); ++k) {
      ASSERT_EQ((*got)[k].tensor().shape(), (*want)[k].tensor().shape()) << k;
      backendtest::expect_close((*got)[k].tensor(), (*want)[k].tensor(), {1e-4, 1e-5}, "output " + std::to_string(k));
    }
  }
}

// The value_info a session writes before the layout pass: a shuffle is re-labelled only where
// the dims of what it splits are known.
Model with_value_info(Model m) {
  passes::write_value_info(m.graph, passes::infer_shapes(m));
  return m;
}

TEST(LayoutRelabel, AShuffleUnitIsOneRegion) {
  Model m = with_value_info(shuffle_unit(Unit{}));
  auto s = apply_nhwc_layout(m.graph, m.opset_imports);
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  EXPECT_EQ(s->to_nhwc, 1);  // x
  EXPECT_EQ(s->to_nchw, 2);  // y0, y1
  for (const Node& n : m.graph.nodes) {
    if (n.op_type == "Transpose") {
      EXPECT_EQ(n.find_attr("perm")->ints, (std::vector<int64_t>{0, 1, 2, 4, 3}));
    }
  }
}

// YOLOv8's C2f: Conv -> Split(channels, or `split_axis`) into two -> a Conv on the second part ->
// Concat of all three -> Conv. A channel Split cuts the NHWC data's last axis in the region; a
// Split of H its axis 1; the block is entered and left once either way.
Model c2f_block(int64_t split_axis, int64_t opset = 17) {
  testing::GraphBuilder b(opset);
  b.input("x", 4);
  uint32_t seed = 20;
  const auto conv = [&](const std::string& in, int64_t cin, int64_t cout) {
    return b.node(
        "Conv",
        {in, b.constant(rand_tensor({cout, cin, 3, 3}, seed++, -0.3f, 0.3f)), b.constant(rand_tensor({cout}, seed++))},
        {attr_ints("kernel_shape", {3, 3}), attr_ints("pads", {1, 1, 1, 1})});
  };
  const std::string c = conv("x", 8, 16);
  Attribute axis;
  axis.name = "axis";
  axis.type = AttrType::kInt;
  axis.i = split_axis;
  Node split;
  split.op_type = "Split";
  const std::vector<int64_t> sizes = split_axis == 1 ? std::vector<int64_t>{8, 8} : std::vector<int64_t>{2, 4};
  split.inputs = {c};
  split.outputs = {"p0", "p1"};
  split.attributes = {axis};
  if (opset >= 13) {
    split.inputs.push_back(i64(b, sizes));
  } else {
    split.attributes.push_back(attr_ints("split", sizes));  // the sizes' form before opset 13
  }
  b.model.graph.nodes.push_back(split);
  const std::string m = conv("p1", split_axis == 1 ? 8 : 16, split_axis == 1 ? 8 : 16);
  const std::string cat = b.node("Concat", {"p0", "p1", m}, {axis});
  b.node("Conv", {cat, b.constant(rand_tensor({4, split_axis == 1 ? 24 : 16, 1, 1}, seed++, -0.3f, 0.3f))},
         {attr_ints("kernel_shape", {1, 1})}, "y");
  b.output("y");
  return b.model;
}

TEST(LayoutRelabel, AChannelSplitStaysInTheRegion) {
  Model m = with_value_info(c2f_block(1));
  auto s = apply_nhwc_layout(m.graph, m.opset_imports);
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  EXPECT_EQ(s->to_nhwc, 1);
  EXPECT_EQ(s->to_nchw, 1);
  for (const Node& n : m.graph.nodes) {
    if (n.op_type == "Split") {
      EXPECT_EQ(n.find_attr("axis")->i, 3);
    }
  }
  // With the own kernels' fusions, the 1x1 Conv reads the Split's parts and the bottleneck's
  // output where they are (ConcatConv): their channels are known through the Split's sizes.
  const NhwcLayoutOptions own = fast_layout_fusions(OpRegistry::global());
  for (const int64_t opset : {17, 11}) {
    Model fused = with_value_info(c2f_block(1, opset));
    ASSERT_TRUE(apply_nhwc_layout(fused.graph, fused.opset_imports, own).is_ok());
    int concat_convs = 0;
    for (const Node& n : fused.graph.nodes) concat_convs += n.op_type == kConcatConvOp;
    EXPECT_EQ(concat_convs, own.fuse_concat ? 1 : 0) << "opset " << opset;
    expect_agrees_with_reference(c2f_block(1, opset));
  }
  // A Split of H (2 and 4 of its 6 rows) keeps its sizes, on the NHWC axis 1.
  Model rows = with_value_info(c2f_block(2));
  ASSERT_TRUE(apply_nhwc_layout(rows.graph, rows.opset_imports).is_ok());
  for (const Node& n : rows.graph.nodes) {
    if (n.op_type == "Split") {
      EXPECT_EQ(n.find_attr("axis")->i, 1);
    }
  }
  expect_agrees_with_reference(c2f_block(2));
}

TEST(LayoutRelabel, WhatIsNoChannelShuffleStaysOutside) {
  Unit copies_a_dim;
  copies_a_dim.shuffle_shape = {0, 2, 8, 6, 6};
  Unit other_perm;
  other_perm.perm = {0, 1, 2, 4, 3};
  Unit splits_n;  // [1, 16, 6, 6] as [2, 8, 1, 6, 6]: the same ops, N and C mixed
  splits_n.shuffle_shape = {2, 8, 1, 6, 6};
  for (const Unit& u : {copies_a_dim, other_perm, splits_n}) {
    const bool splits_c = u.shuffle_shape[0] != 2;
    SCOPED_TRACE(splits_c ? "splits C" : "splits N");
    Model m = with_value_info(shuffle_unit(u));
    auto s = apply_nhwc_layout(m.graph, m.opset_imports);
    ASSERT_TRUE(s.is_ok());
    for (const Node& n : m.graph.nodes) {
      if (n.op_type == "Transpose") {
        EXPECT_NE(n.find_attr("perm")->ints, (std::vector<int64_t>{0, 1, 2, 4, 3}));
      }
    }
    if (splits_c) {  // a view splitting C with H and W last: the Reshape and Transpose read the NHWC twin
      EXPECT_EQ(s->split_exits, 1);
      EXPECT_EQ(s->to_nchw, 1);  // y0
    } else {
      EXPECT_GE(s->to_nchw, 2) << "the Concat leaves the region for the Reshape";
    }
  }
  Model unknown = shuffle_unit(Unit{});  // no value_info (optimization none)
  auto s = apply_nhwc_layout(unknown.graph, unknown.opset_imports);
  ASSERT_TRUE(s.is_ok());
  EXPECT_GE(s->to_nchw, 2);
}

TEST(LayoutRelabel, SessionsAgreeWithTheReference) {
  Unit height;  // rows 1..5 step 2 of the second half, along H (axis -2)
  height.slice_axes = {1, -2};
  height.slice_starts = {8, 1};
  height.slice_ends = {16, 5};
  height.slice_steps = {1, 2};
  Unit batch;  // axes absent: starts / ends along N
  batch.slice_axes = {};
  batch.slice_starts = {0};
  batch.slice_ends = {1};
  Unit copies_a_dim;
  copies_a_dim.shuffle_shape = {0, 2, 8, 6, 6};
  Unit splits_n;
  splits_n.shuffle_shape = {2, 8, 1, 6, 6};
  Unit other_perm;
  other_perm.perm = {0, 1, 2, 4, 3};
  for (const Unit& u : {Unit{}, height, batch, copies_a_dim, splits_n, other_perm}) {
    expect_agrees_with_reference(shuffle_unit(u));
  }
}

// x [1, 8, 6, 6] -> Conv ("a") -> Transpose [0, 2, 3, 1] -> LayerNorm -> MatMul -> Relu ->
// MatMul -> Transpose [0, 3, 1, 2] -> Mul (layer scale [8, 1, 1]) -> Add a -> Conv -> "y";
// the channels-last LayerNorm output is "ln" too (a graph output outside the region).
Model convnext_block(const std::vector<int64_t>& back_perm) {
  testing::GraphBuilder b(17);
  b.input("x", 4);
  uint32_t seed = 20;
  const auto conv = [&](const std::string& in, const char* out) {
    return b.node(
        "Conv", {in, b.constant(rand_tensor({8, 8, 3, 3}, seed++, -0.3f, 0.3f)), b.constant(rand_tensor({8}, seed++))},
        {attr_ints("kernel_shape", {3, 3}), attr_ints("pads", {1, 1, 1, 1})}, out);
  };
  const std::string a = conv("x", "");
  const std::string last = b.node("Transpose", {a}, {attr_ints("perm", {0, 2, 3, 1})});
  b.node("LayerNormalization", {last, b.constant(rand_tensor({8}, seed++)), b.constant(rand_tensor({8}, seed++))}, {},
         "ln");
  const std::string up = b.node("MatMul", {"ln", b.constant(rand_tensor({8, 16}, seed++, -0.4f, 0.4f))});
  const std::string down = b.node("MatMul", {b.node("Relu", {up}), b.constant(rand_tensor({16, 8}, seed++))});
  const std::string first = b.node("Transpose", {down}, {attr_ints("perm", back_perm)});
  const std::string scaled = b.node("Mul", {first, b.constant(rand_tensor({8, 1, 1}, seed++))});
  conv(b.node("Add", {scaled, a}), "y");
  b.output("y");
  b.output("ln");
  return b.model;
}

TEST(LayoutRelabel, ConvNextPermutesAreIdentitiesOfTheNhwcData) {
  Model m = convnext_block({0, 3, 1, 2});
  auto s = apply_nhwc_layout(m.graph, m.opset_imports);
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  EXPECT_EQ(s->channels_last, 2);
  EXPECT_EQ(s->to_nhwc, 1);  // x
  EXPECT_EQ(s->to_nchw, 1);  // y
  for (const Node& n : m.graph.nodes) EXPECT_NE(n.op_type, "Transpose");
  // Another perm back is no channels-last entry: the Mul and Add leave the region.
  Model other = convnext_block({0, 3, 2, 1});
  s = apply_nhwc_layout(other.graph, other.opset_imports);
  ASSERT_TRUE(s.is_ok());
  EXPECT_EQ(s->channels_last, 1);
  EXPECT_EQ(s->to_nhwc, 2);  // x, the Add
}

TEST(LayoutRelabel, ConvNextSessionsAgreeWithTheReference) {
  for (const std::vector<int64_t>& perm : {std::vector<int64_t>{0, 3, 1, 2}, std::vector<int64_t>{0, 3, 2, 1}}) {
    SCOPED_TRACE("perm back " + std::to_string(perm[2]) + std::to_string(perm[3]));
    expect_agrees_with_reference(convnext_block(perm));
  }
}

struct Head {
  std::vector<int64_t> view = {1, -1, 4, 6, 6};  // of the Conv's [1, 12, 6, 6]
  std::vector<int64_t> perm = {0, 3, 4, 1, 2};
  bool view_is_output = false;  // the view is a graph output too
  bool batch_unknown = false;   // x's N is symbolic
};

// x [N, 8, 6, 6] -> Conv 8 -> 12 -> Reshape (view) -> Transpose (perm) -> Reshape [1, -1, 4]
// -> "y" (and the view as "v").
Model detection_head(const Head& h) {
  testing::GraphBuilder b(17);
  b.input("x", 4);
  b.model.graph.inputs[0].type.dims = {h.batch_unknown ? Dim{-1, "n"} : Dim{1, ""}, Dim{8, ""}, Dim{6, ""}, Dim{6, ""}};
  const std::string conv =
      b.node("Conv", {"x", b.constant(rand_tensor({12, 8, 3, 3}, 5, -0.3f, 0.3f)), b.constant(rand_tensor({12}, 6))},
             {attr_ints("kernel_shape", {3, 3}), attr_ints("pads", {1, 1, 1, 1})});
  const std::string view = b.node("Reshape", {conv, i64(b, h.view)}, {}, h.view_is_output ? "v" : "");
  const std::string moved = b.node("Transpose", {view}, {attr_ints("perm", h.perm)});
  b.node("Reshape", {moved, i64(b, {1, -1, 4})}, {}, "y");
  b.output("y");
  if (h.view_is_output) b.output("v");
  return b.model;
}

const Node* find_op(const Model& m, const std::string& op) {
  for (const Node& n : m.graph.nodes) {
    if (n.op_type == op) return &n;
  }
  return nullptr;
}

TEST(LayoutRelabel, DetectionHeadViewsReadTheNhwcData) {
  Model ssd = with_value_info(detection_head(Head{}));
  auto s = apply_nhwc_layout(ssd.graph, ssd.opset_imports);
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  EXPECT_EQ(s->split_exits, 1);
  EXPECT_EQ(s->to_nchw, 0);
  EXPECT_EQ(find_op(ssd, "Transpose"), nullptr);  // [N, H, W, A, K] is the twin's own order
  ASSERT_NE(find_op(ssd, "Identity"), nullptr);

  Head yolo;  // [N, A, K, H, W] -> [N, A, H, W, K]
  yolo.view = {1, 3, 4, 6, 6};
  yolo.perm = {0, 1, 3, 4, 2};
  Model m = with_value_info(detection_head(yolo));
  s = apply_nhwc_layout(m.graph, m.opset_imports);
  ASSERT_TRUE(s.is_ok());
  EXPECT_EQ(s->split_exits, 1);
  EXPECT_EQ(s->to_nchw, 0);
  const Node* t = find_op(m, "Transpose");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->find_attr("perm")->ints, (std::vector<int64_t>{0, 3, 1, 2, 4}));
}

TEST(LayoutRelabel, OtherViewsOfARegionValueStayOutside) {
  Head copies_a_dim;  // 0 copies the NCHW dim at its position
  copies_a_dim.view = {1, 3, 4, 0, 6};
  Head spatial_split;  // H and W not last: [1, 12, 36, 1, 1]
  spatial_split.view = {1, 12, 36, 1, 1};
  spatial_split.perm = {0, 2, 1, 3, 4};
  Head two_readers;
  two_readers.view_is_output = true;
  Head unknown_batch;  // -1 over a symbolic N: a batch of 2 would mix into the parts
  unknown_batch.batch_unknown = true;
  for (const Head& h : {copies_a_dim, spatial_split, two_readers, unknown_batch}) {
    Model m = with_value_info(detection_head(h));
    auto s = apply_nhwc_layout(m.graph, m.opset_imports);
    ASSERT_TRUE(s.is_ok());
    EXPECT_EQ(s->split_exits, 0);
    EXPECT_EQ(s->to_nchw, 1) << "the Conv leaves the region for the Reshape";
  }
  Model unknown = detection_head(Head{});  // no value_info (optimization none)
  auto s = apply_nhwc_layout(unknown.graph, unknown.opset_imports);
  ASSERT_TRUE(s.is_ok());
  EXPECT_EQ(s->split_exits, 0);
}

TEST(LayoutRelabel, DetectionHeadSessionsAgreeWithTheReference) {
  Head yolo;
  yolo.view = {1, 3, 4, 6, 6};
  yolo.perm = {0, 1, 3, 4, 2};
  Head three_parts;  // [N, 3, 2, 2, H, W] -> [N, H, 2, W, 3, 2]
  three_parts.view = {1, 3, 2, 2, 6, 6};
  three_parts.perm = {0, 4, 3, 5, 1, 2};
  Head two_readers;
  two_readers.view_is_output = true;
  for (const Head& h : {Head{}, yolo, three_parts, two_readers}) {
    expect_agrees_with_reference(detection_head(h));
  }
}

}  // namespace
}  // namespace xonnx
