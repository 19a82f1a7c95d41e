// The layout pass's rewrites of an image's Conv (fast_layout_fusions):
//  - an image read in NCHW by its one Conv (ConvNchwInput, conv.cc), no ToNHWC;
//  - an image's Conv merged into the MaxPool after it (ConvMaxPool, conv.cc);
//  - an image's Conv merged into the depthwise Conv after it (StemDepthwiseConv,
//    conv_stem_depthwise.cc).
// Each against the reference kernels, and bit for bit against the same graph without the
// rewrite (an extra graph output prevents it).
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "runtime/ops/optimized/opt_util.h"
#include "runtime/ops/registry.h"
#include "runtime/passes/layout_nhwc.h"
#include "tests/unit/graph_builder.h"
#include "tests/unit/layout_fusions_common.h"

namespace xonnx {
namespace {

using namespace xnntest;
using namespace layout_test;

// x (C channels) -> 3x3 stride-2 Conv + Relu -> "y"; with `pooled`, x is also pooled into
// a second output (a second region reader: x then enters through a ToNHWC).
Model stem_model(int64_t c, bool pooled) {
  testing::GraphBuilder b;
  b.input("x", 4);
  const std::string w = b.constant(rand_tensor({8, c, 3, 3}, 5, -0.5f, 0.5f)), bias = b.constant(rand_tensor({8}, 6));
  const std::string conv =
      b.node("Conv", {"x", w, bias},
             {attr_ints("kernel_shape", {3, 3}), attr_ints("pads", {1, 1, 1, 1}), attr_ints("strides", {2, 2})});
  b.node("Relu", {conv}, {}, "y");
  b.output("y");
  if (pooled) b.output(b.node("MaxPool", {"x"}, {attr_ints("kernel_shape", {1, 1})}));  // an NHWC op
  return b.model;
}

TEST(ConvNchwInput, LayoutPassDropsTheImagesToNhwc) {
  NhwcLayoutOptions on;
  on.nchw_input_conv = true;
  for (int64_t c : {1, 3, 4, 5}) {
    Model m = stem_model(c, false);
    auto s = apply_nhwc_layout(m.graph, m.opset_imports, on);
    ASSERT_TRUE(s.is_ok());
    const bool image = c <= 4;
    EXPECT_EQ(s->nchw_input, image ? 1 : 0) << c;
    EXPECT_EQ(s->to_nhwc, image ? 0 : 1) << c;
    EXPECT_EQ(count_op(m.graph, kConvNchwInputOp), image ? 1 : 0) << c;
    if (image) {
      EXPECT_EQ(m.graph.nodes[0].inputs[0], "x");
    }
  }
  Model two_readers = stem_model(3, true);
  auto s = apply_nhwc_layout(two_readers.graph, two_readers.opset_imports, on);
  ASSERT_TRUE(s.is_ok());
  EXPECT_EQ(s->nchw_input, 0);
  EXPECT_EQ(s->to_nhwc, 1);
}

// Against the reference, and bit for bit against the same Conv behind a ToNHWC.
TEST(ConvNchwInput, AgreesWithReferenceAndTheToNhwcPath) {
  for (int threads : {1, 2}) {
    for (int64_t c : {1, 3, 4}) {
      SCOPED_TRACE("C " + std::to_string(c) + ", threads " + std::to_string(threads));
      auto ref = session(stem_model(c, false), threads, true);
      auto fast = session(stem_model(c, false), threads);
      auto converted = session(stem_model(c, true), threads);
      ASSERT_TRUE(ref.is_ok() && fast.is_ok() && converted.is_ok());
      EXPECT_EQ(count_op((*fast)->model().graph, kConvNchwInputOp) == 1,
                fast_layout_fusions(OpRegistry::global()).nchw_input_conv);
      uint32_t seed = 1;
      for (Shape shape : {Shape{1, c, 1, 1}, Shape{2, c, 13, 7}, Shape{1, c, 64, 67}}) {
        Tensor x = rand_tensor(shape, seed++);
        x.data<float>()[x.numel() / 2] = std::numeric_limits<float>::quiet_NaN();
        expect_agree(**ref, **fast, converted->get(), 0, x, "ConvNchwInput");
      }
    }
  }
}

// An image's Conv merged into the node after it (`op`, made here when `fused`), at 1 and 2
// threads, over images of `shapes` with NaN in them: against the reference, and bit for bit
// against the pair unmerged (model(true): the Conv's output is a graph output too).
void check_image_conv_merge(const std::function<Model(bool expose_mid)>& model, const char* op, bool fused,
                            bool region_input, const std::vector<Shape>& shapes, const std::string& what) {
  for (int threads : {1, 2}) {
    SCOPED_TRACE(what + ", threads " + std::to_string(threads));
    auto ref = session(model(false), threads, true);
    auto fast = session(model(false), threads);
    auto unmerged = session(model(true), threads);
    ASSERT_TRUE(ref.is_ok() && fast.is_ok() && unmerged.is_ok());
    EXPECT_EQ(count_op((*fast)->model().graph, op) == 1, fused);
    uint32_t seed = 1;
    for (const Shape& shape : shapes) {
      Tensor x = rand_tensor(shape, seed++);
      for (int64_t i = 0; i < x.numel(); i += 211) x.data<float>()[i] = std::numeric_limits<float>::quiet_NaN();
      const uint64_t before = opt::run_count();
      ASSERT_TRUE((*fast)->run({Value(x)}).is_ok());
      if (fused && !region_input) {
        EXPECT_EQ(opt::run_count(), before + 2);  // the one node ran on the own kernel, then the ToNCHW
      }
      expect_agree(**ref, **fast, unmerged->get(), 1, x, op);
    }
  }
}

struct Stem {
  int64_t c = 3, m = 16, k = 3, stride = 2, pad = 0;  // the Conv
  int64_t pool_k = 3, pool_stride = 2, pool_pad = 0;  // the MaxPool
  bool ceil = false;
  bool expose_mid = false;    // the Conv's output is a graph output too: no merge
  bool region_input = false;  // x reaches the Conv through a 1x1 MaxPool (an NHWC value, not NCHW)
  bool pool_again = false;    // "y" is pooled once more into "z" (GoogLeNet: a MaxPool reads a MaxPool)
};

// x -> k x k Conv (c -> m) + Relu -> MaxPool -> "y".
Model stem_pool_model(const Stem& p) {
  testing::GraphBuilder b;
  b.input("x", 4);
  std::string in = "x";
  if (p.region_input) in = b.node("MaxPool", {in}, {attr_ints("kernel_shape", {1, 1})});
  const std::string w = b.constant(rand_tensor({p.m, p.c, p.k, p.k}, 5, -0.5f, 0.5f));
  const std::string conv =
      b.node("Conv", {in, w, b.constant(rand_tensor({p.m}, 6))},
             {attr_ints("kernel_shape", {p.k, p.k}), attr_ints("pads", {p.pad, p.pad, p.pad, p.pad}),
              attr_ints("strides", {p.stride, p.stride})});
  const std::string mid = b.node("Relu", {conv});
  if (p.expose_mid) b.output(mid);
  b.node("MaxPool", {mid},
         {attr_ints("kernel_shape", {p.pool_k, p.pool_k}), attr_ints("strides", {p.pool_stride, p.pool_stride}),
          attr_ints("pads", {p.pool_pad, p.pool_pad, p.pool_pad, p.pool_pad}), attr_int("ceil_mode", p.ceil ? 1 : 0)},
         "y");
  if (p.pool_again) {
    b.output(b.node("MaxPool", {"y"}, {attr_ints("kernel_shape", {3, 3}), attr_ints("pads", {1, 1, 1, 1})}));
  } else {
    b.output("y");
  }
  return b.model;
}

TEST(ConvMaxPool, LayoutPassMergesAnImagesConvIntoItsPool) {
  NhwcLayoutOptions on;
  on.nchw_input_conv = true;
  on.fuse_stem_pool = true;
  Stem region, twice;
  region.region_input = true;
  // The second pool's producer is a MaxPool: it has no weight to look at (this read past the
  // pool's one input and crashed on GoogLeNet).
  twice.pool_again = true;
  for (const Stem& p : {Stem{}, region, twice}) {
    Model m = stem_pool_model(p);
    auto s = apply_nhwc_layout(m.graph, m.opset_imports, on);
    ASSERT_TRUE(s.is_ok());
    EXPECT_EQ(s->stem_pool, 1);
    ASSERT_EQ(count_op(m.graph, kConvMaxPoolOp), 1);
    EXPECT_EQ(count_op(m.graph, "Conv") + count_op(m.graph, kConvNchwInputOp), 0);
    for (const Node& n : m.graph.nodes) {
      if (n.op_type != kConvMaxPoolOp) continue;
      EXPECT_EQ(n.inputs.size(), 3u);  // X, W, B
      EXPECT_EQ(n.inputs[0] == "x", !p.region_input);
      const Attribute* nchw = n.find_attr("nchw_input");
      EXPECT_EQ(nchw != nullptr && nchw->i == 1, !p.region_input);
      for (const char* name :
           {"kernel_shape", "strides", "activation_min", "pool_kernel_shape", "pool_strides", "pool_ceil_mode"})
        EXPECT_NE(n.find_attr(name), nullptr) << name;
    }
  }
  Stem exposed, wide;
  exposed.expose_mid = true;
  wide.c = 5;  // not an image: the Conv runs on its own
  for (const Stem& p : {exposed, wide}) {
    Model m = stem_pool_model(p);
    auto s = apply_nhwc_layout(m.graph, m.opset_imports, on);
    ASSERT_TRUE(s.is_ok());
    EXPECT_EQ(s->stem_pool, 0);
    EXPECT_EQ(count_op(m.graph, kConvMaxPoolOp), 0);
  }
}

// Against the reference, and bit for bit against the Conv and the MaxPool unmerged; NaN in
// the image makes NaN windows, which take the reference rule.
void check_stem_pool(const Stem& p) {
  Stem exposed = p;
  exposed.expose_mid = true;
  check_image_conv_merge([&](bool expose) { return stem_pool_model(expose ? exposed : p); }, kConvMaxPoolOp,
                         fast_layout_fusions(OpRegistry::global()).fuse_stem_pool, p.region_input,
                         {Shape{1, p.c, 9, 9}, Shape{2, p.c, 13, 7}, Shape{1, p.c, 30, 31}, Shape{1, p.c, 64, 67}},
                         "C " + std::to_string(p.c) + " M " + std::to_string(p.m) + " k " + std::to_string(p.k) +
                             " pool " + std::to_string(p.pool_k) + "/" + std::to_string(p.pool_stride) + " pad " +
                             std::to_string(p.pool_pad) + (p.ceil ? " ceil" : "") +
                             (p.region_input ? ", NHWC input" : ""));
}

TEST(ConvMaxPool, AgreesWithReferenceAndTheUnmergedPair) {
  check_stem_pool(Stem{});                               // SqueezeNet's: 3x3 / 2, pool 3x3 / 2
  check_stem_pool(Stem{3, 16, 3, 2, 0, 3, 2, 0, true});  // ... in ceil mode
  check_stem_pool(Stem{3, 64, 7, 2, 3, 3, 2, 1});        // ResNet's: 7x7 / 2 pad 3, pool pad 1
  check_stem_pool(Stem{1, 40, 3, 1, 1, 2, 2, 0});        // a partial panel, 2x2 pool
  check_stem_pool(Stem{4, 7, 5, 1, 2, 5, 1, 2});         // a narrow Conv, a stride-1 pool
  Stem region;
  region.region_input = true;
  check_stem_pool(region);
}

TEST(ConvMaxPool, BadInputNamesTheNode) {
  auto fast = session(stem_pool_model(Stem{}), 1);
  ASSERT_TRUE(fast.is_ok());
  // Too small for the Conv, then for the pool: unmerged, the Conv's error, then the MaxPool's.
  for (const auto& [shape, unmerged_op] :
       {std::pair<Shape, const char*>{{1, 3, 2, 9}, "Conv)"}, {{1, 3, 5, 5}, "MaxPool"}}) {
    auto y = (*fast)->run({Value(rand_tensor(shape, 1))});
    ASSERT_FALSE(y.is_ok());
    const std::string error = y.status().to_string();
    const char* op = fast_layout_fusions(OpRegistry::global()).fuse_stem_pool ? "ConvMaxPool" : unmerged_op;
    EXPECT_NE(error.find(op), std::string::npos) << error;
    EXPECT_NE(error.find("kernel 3"), std::string::npos) << error;
  }
}

// x -> k x k image Conv (c -> m) + Relu -> depthwise dk x dk Conv + Relu -> "y": MNASNet's and
// MobileNetV2's first block.
struct StemDw {
  int64_t c = 3, m = 32, k = 3, stride = 2, pad = 1;  // the image Conv
  int64_t dk = 3, dw_stride = 1, dw_pad = 1;          // the depthwise Conv
  bool hard_swish = false;                            // the stem's activation: HardSwish (MobileNetV3's), else Relu
  bool expose_mid = false;                            // the stem's output is a graph output too: no merge
  bool region_input = false;                          // x reaches the stem through a 1x1 MaxPool (an NHWC value)
};

Model stem_dw_model(const StemDw& p) {
  testing::GraphBuilder b(14);  // HardSwish
  b.input("x", 4);
  std::string in = "x";
  if (p.region_input) in = b.node("MaxPool", {in}, {attr_ints("kernel_shape", {1, 1})});
  const std::string conv = b.node(
      "Conv", {in, b.constant(rand_tensor({p.m, p.c, p.k, p.k}, 5, -0.5f, 0.5f)), b.constant(rand_tensor({p.m}, 6))},
      {attr_ints("kernel_shape", {p.k, p.k}), attr_ints("pads", {p.pad, p.pad, p.pad, p.pad}),
       attr_ints("strides", {p.stride, p.stride})});
  const std::string mid = b.node(p.hard_swish ? "HardSwish" : "Relu", {conv});
  if (p.expose_mid) b.output(mid);
  const std::string dw = b.node(
      "Conv", {mid, b.constant(rand_tensor({p.m, 1, p.dk, p.dk}, 7, -0.5f, 0.5f)), b.constant(rand_tensor({p.m}, 8))},
      {attr_ints("kernel_shape", {p.dk, p.dk}), attr_ints("pads", {p.dw_pad, p.dw_pad, p.dw_pad, p.dw_pad}),
       attr_int("group", p.m), attr_ints("strides", {p.dw_stride, p.dw_stride})});
  b.node("Relu", {dw}, {}, "y");
  b.output("y");
  return b.model;
}

TEST(StemDepthwise, LayoutPassMergesAnImagesConvIntoItsDepthwiseConv) {
  NhwcLayoutOptions on;
  on.nchw_input_conv = true;
  on.fuse_stem_depthwise = true;
  StemDw region;
  region.region_input = true;
  for (const StemDw& p : {StemDw{}, region}) {
    Model m = stem_dw_model(p);
    auto s = apply_nhwc_layout(m.graph, m.opset_imports, on);
    ASSERT_TRUE(s.is_ok());
    EXPECT_EQ(s->stem_depthwise, 1);
    ASSERT_EQ(count_op(m.graph, kStemDepthwiseOp), 1);
    EXPECT_EQ(count_op(m.graph, "Conv") + count_op(m.graph, kConvNchwInputOp), 0);
    for (const Node& n : m.graph.nodes) {
      if (n.op_type != kStemDepthwiseOp) continue;
      EXPECT_EQ(n.inputs.size(), 5u);  // X, W, B, W_dw, B_dw
      EXPECT_EQ(n.inputs[0] == "x", !p.region_input);
      const Attribute* nchw = n.find_attr("nchw_input");
      EXPECT_EQ(nchw != nullptr && nchw->i == 1, !p.region_input);
      for (const char* name : {"kernel_shape", "group", "activation_min", "stem_kernel_shape", "stem_strides",
                               "stem_pads", "stem_activation_min"})
        EXPECT_NE(n.find_attr(name), nullptr) << name;
    }
  }
  StemDw exposed, wide;
  exposed.expose_mid = true;
  wide.c = 5;  // not an image: the Convs run on their own
  for (const StemDw& p : {exposed, wide}) {
    Model m = stem_dw_model(p);
    auto s = apply_nhwc_layout(m.graph, m.opset_imports, on);
    ASSERT_TRUE(s.is_ok());
    EXPECT_EQ(s->stem_depthwise, 0);
    EXPECT_EQ(count_op(m.graph, kStemDepthwiseOp), 0);
  }
}

// Against the reference, and bit for bit against the two Convs unmerged; NaN in the image.
void check_stem_dw(const StemDw& p) {
  StemDw exposed = p;
  exposed.expose_mid = true;
  check_image_conv_merge([&](bool expose) { return stem_dw_model(expose ? exposed : p); }, kStemDepthwiseOp,
                         fast_layout_fusions(OpRegistry::global()).fuse_stem_depthwise, p.region_input,
                         {Shape{1, p.c, 9, 9}, Shape{2, p.c, 13, 7}, Shape{1, p.c, 30, 31}, Shape{1, p.c, 64, 227}},
                         "C " + std::to_string(p.c) + " M " + std::to_string(p.m) + " k " + std::to_string(p.k) + "/" +
                             std::to_string(p.stride) + " dw " + std::to_string(p.dk) + "/" +
                             std::to_string(p.dw_stride) + (p.hard_swish ? " HardSwish" : "") +
                             (p.region_input ? ", NHWC input" : ""));
}

TEST(StemDepthwise, AgreesWithReferenceAndTheUnmergedPair) {
  check_stem_dw(StemDw{});                               // MNASNet's and MobileNetV2's: 3x3 / 2 -> 32, dw 3x3
  check_stem_dw(StemDw{3, 16, 3, 2, 1, 3, 1, 1, true});  // MobileNetV3's stem (HardSwish)
  check_stem_dw(StemDw{3, 40, 5, 1, 2, 5, 2, 2});        // a partial panel, 5x5 taps, a stride-2 depthwise
  check_stem_dw(StemDw{1, 7, 3, 1, 0, 3, 1, 0});         // one channel in, seven out, no padding
  check_stem_dw(StemDw{4, 72, 7, 2, 3, 3, 1, 1});        // 7x7 over four channels, three panels
  StemDw region;
  region.region_input = true;
  check_stem_dw(region);
}

TEST(StemDepthwise, BadInputNamesTheNode) {
  StemDw p;
  p.dw_pad = 0;
  auto fast = session(stem_dw_model(p), 1);
  ASSERT_TRUE(fast.is_ok());
  // The image Conv's 2 x 2 output is smaller than the depthwise kernel; an image of four
  // channels where W has three.
  for (const auto& [shape, what] :
       {std::pair<Shape, const char*>{{1, 3, 3, 3}, "kernel 3"}, {{1, 4, 9, 9}, "4 channels"}}) {
    auto y = (*fast)->run({Value(rand_tensor(shape, 1))});
    ASSERT_FALSE(y.is_ok()) << shape_to_string(shape);
    const std::string error = y.status().to_string();
    const char* op = fast_layout_fusions(OpRegistry::global()).fuse_stem_depthwise ? "StemDepthwiseConv" : "Conv";
    EXPECT_NE(error.find(op), std::string::npos) << error;
    EXPECT_NE(error.find(what), std::string::npos) << error;
  }
}

}  // namespace
}  // namespace xonnx
