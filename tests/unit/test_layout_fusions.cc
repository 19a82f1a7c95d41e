// The layout pass's rewrites for the own kernels (fast_layout_fusions) other than an image's
// Conv's (test_layout_image_fusions.cc):
//  - the merge of a 1x1 Conv into the depthwise Conv that alone reads it
//    (PointwiseDepthwiseConv): the rewrite, the fused kernel (conv_pointwise_depthwise.cc) against the
//    reference kernels over odd shapes, and against the two own kernels unfused, bit for bit;
//  - a channel Concat read part by part by the 1x1 Conv, MaxPool or BatchNormalization after
//    it (ConcatConv, conv.cc; ConcatMaxPool, pool.cc; ConcatBatchNorm, batch_norm.cc);
//  - a BatchNormalization (of a Concat or not) merged into the 1x1 Conv that alone reads it
//    (BatchNormConv, conv_batch_norm.cc).
// Each against the reference kernels, and bit for bit against the same graph without the
// rewrite (an extra graph output prevents it).
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "runtime/passes/layout_nhwc.h"
#include "runtime/exec/session.h"
#include "runtime/ops/registry.h"
#include "runtime/ops/optimized/opt_util.h"
#include "tests/unit/graph_builder.h"
#include "tests/unit/layout_fusions_common.h"

namespace xonnx {
namespace {

using namespace xnntest;
using namespace layout_test;

struct Block {
  int64_t cin = 8, m = 24, k = 3, stride = 1;
  bool swish = false;
  int64_t dilation = 1;     // the 1x1 Conv's activation: SiLU (else ReLU6)
  bool expose_mid = false;  // the 1x1 Conv's output is a graph output too: no merge
  bool inf_weight = false;  // one 1x1 weight is inf: the fused kernel declines (the reference runs)
  int64_t group_width = 1;  // input (and output) channels per group of the k x k Conv: 1 depthwise
  int64_t group = 0;        // the k x k Conv's group attribute as written (0: m / group_width)
};

// x -> 1x1 Conv (cin -> m) + ReLU6 / SiLU -> depthwise (or grouped) k x k Conv + ReLU6 -> "y".
Model block_model(const Block& p) {
  testing::GraphBuilder b;
  b.input("x", 4);
  const std::string lo = b.constant(Tensor::scalar<float>(0.0f)), hi = b.constant(Tensor::scalar<float>(6.0f));
  Tensor w1_values = rand_tensor({p.m, p.cin, 1, 1}, 5, -0.5f, 0.5f);
  if (p.inf_weight) w1_values.data<float>()[1] = std::numeric_limits<float>::infinity();
  const std::string w1 = b.constant(w1_values);
  const std::string b1 = b.constant(rand_tensor({p.m}, 6));
  std::string mid = b.node("Conv", {"x", w1, b1}, {attr_ints("kernel_shape", {1, 1})});
  mid = p.swish ? b.node("Mul", {mid, b.node("Sigmoid", {mid})}) : b.node("Clip", {mid, lo, hi});
  if (p.expose_mid) b.output(mid);
  const std::string w2 = b.constant(rand_tensor({p.m, p.group_width, p.k, p.k}, 7, -0.5f, 0.5f));
  const std::string b2 = b.constant(rand_tensor({p.m}, 8));
  const int64_t pad = p.k / 2 * p.dilation;
  const std::string dw =
      b.node("Conv", {mid, w2, b2},
             {attr_ints("kernel_shape", {p.k, p.k}), attr_ints("pads", {pad, pad, pad, pad}),
              attr_int("group", p.group != 0 ? p.group : p.m / p.group_width),
              attr_ints("strides", {p.stride, p.stride}), attr_ints("dilations", {p.dilation, p.dilation})});
  b.node("Clip", {dw, lo, hi}, {}, "y");
  b.output("y");
  return b.model;
}

const Node* merged_node(const Graph& g) {
  for (const Node& n : g.nodes)
    if (n.domain == kNhwcDomain && n.op_type == kPointwiseDepthwiseOp) return &n;
  return nullptr;
}

TEST(PointwiseDepthwise, LayoutPassMergesTheOneReaderDepthwiseConv) {
  Model m = block_model(Block{});
  NhwcLayoutOptions on;
  on.fuse_pointwise_depthwise = true;
  auto s = apply_nhwc_layout(m.graph, m.opset_imports, on);
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  EXPECT_EQ(s->pointwise_depthwise, 1);
  EXPECT_EQ(s->fused, 2);  // the two Clips
  EXPECT_EQ(s->nhwc_ops, 1);
  const Node* n = merged_node(m.graph);
  ASSERT_NE(n, nullptr);
  ASSERT_EQ(n->inputs.size(), 5u);  // X, W_pw, B_pw, W_dw, B_dw
  EXPECT_EQ(n->inputs[0], "x__nhwc");
  for (const char* name : {"pointwise_activation_min", "pointwise_activation_max", "activation_min", "activation_max"})
    EXPECT_NE(n->find_attr(name), nullptr) << name;
  EXPECT_EQ(n->find_attr("group")->i, 24);
}

TEST(PointwiseDepthwise, LayoutPassLeavesOtherShapesAlone) {
  Block exposed;
  exposed.expose_mid = true;
  Model off = block_model(Block{}), other_reader = block_model(exposed);
  NhwcLayoutOptions on;
  on.fuse_pointwise_depthwise = true;
  auto a = apply_nhwc_layout(off.graph, off.opset_imports);  // the option is off by default
  auto b = apply_nhwc_layout(other_reader.graph, other_reader.opset_imports, on);
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  EXPECT_EQ(a->pointwise_depthwise, 0);
  EXPECT_EQ(b->pointwise_depthwise, 0);
  EXPECT_EQ(merged_node(off.graph), nullptr);
  EXPECT_EQ(merged_node(other_reader.graph), nullptr);
}

// Grouped Convs of 4, 8 or 16 channels per group run on the depthwise layer: merged as well;
// other group widths, and a 1x1 Conv over a multiple of 1024 channels (rows 4 KB apart, which
// only the plain Conv copies), are not.
TEST(PointwiseDepthwise, LayoutPassMergesGroupsTheDepthwiseLayerRuns) {
  NhwcLayoutOptions on;
  on.fuse_pointwise_depthwise = true;
  for (auto [cin, m, group_width, merged] :
       std::vector<std::tuple<int64_t, int64_t, int64_t, bool>>{{8, 24, 4, true},
                                                                {8, 40, 8, true},
                                                                {8, 48, 16, true},
                                                                {8, 24, 2, false},
                                                                {8, 64, 32, false},
                                                                {1024, 48, 16, false},
                                                                {1024, 48, 1, false}}) {
    Block p{cin, m, 3, 1};
    p.group_width = group_width;
    Model model = block_model(p);
    auto s = apply_nhwc_layout(model.graph, model.opset_imports, on);
    ASSERT_TRUE(s.is_ok()) << s.status().to_string();
    EXPECT_EQ(s->pointwise_depthwise, merged ? 1 : 0) << "cin " << cin << ", groups of " << group_width;
    EXPECT_EQ(merged_node(model.graph) != nullptr, merged);
  }
  // A malformed group (the mutation fuzzer's 2^62 against W [48, 16, 3, 3]) merges nothing,
  // with no overflow on the way (the full sanitizer tier runs the unit tests under UBSan).
  Block huge{8, 48, 3, 1};
  huge.group_width = 16;
  huge.group = int64_t{1} << 62;
  Model model = block_model(huge);
  auto s = apply_nhwc_layout(model.graph, model.opset_imports, on);
  if (s.is_ok()) {
    EXPECT_EQ(s->pointwise_depthwise, 0);
  }
  EXPECT_EQ(merged_node(model.graph), nullptr);
}

// The fused kernel against the reference kernels, and against the unfused own kernels (the
// same model with the 1x1 output also a graph output) bit for bit.
void check_block(const Block& p, const std::vector<Shape>& shapes, int threads, float non_finite = 0) {
  const std::string what = "cin " + std::to_string(p.cin) + " m " + std::to_string(p.m) + " k " + std::to_string(p.k) +
                           " stride " + std::to_string(p.stride) + " dilation " + std::to_string(p.dilation) +
                           " groups of " + std::to_string(p.group_width) + (p.swish ? " SiLU" : "") + ", threads " +
                           std::to_string(threads);
  SCOPED_TRACE(what);
  Block unfused_p = p;
  unfused_p.expose_mid = true;
  auto ref = session(block_model(p), threads, true);
  auto fused = session(block_model(p), threads);
  auto unfused = session(block_model(unfused_p), threads);
  ASSERT_TRUE(ref.is_ok() && fused.is_ok() && unfused.is_ok());
  EXPECT_EQ(merged_node((*fused)->model().graph) != nullptr,
            fast_layout_fusions(OpRegistry::global()).fuse_pointwise_depthwise);
  uint32_t seed = 11;
  for (const Shape& shape : shapes) {  // one session, several input sizes
    Tensor x = rand_tensor(shape, seed++);
    if (non_finite != 0) {
      x.data<float>()[0] = std::numeric_limits<float>::quiet_NaN();
      x.data<float>()[x.numel() - 1] = non_finite;
    }
    const uint64_t before = opt::run_count();
    expect_agree(**ref, **fused, unfused->get(), 1, x, what);
    if (fast_layout_fusions(OpRegistry::global()).fuse_pointwise_depthwise) {
      EXPECT_GT(opt::run_count(), before);
    }
  }
}

TEST(PointwiseDepthwise, OddShapesAgreeWithReferenceAndUnfusedKernels) {
  const std::vector<Shape> shapes = {{1, 0, 1, 1}, {2, 0, 13, 3}, {1, 0, 30, 127}, {1, 0, 7, 7}};
  for (int threads : {1, 2}) {
    for (Block p : {Block{8, 24, 3, 1}, Block{3, 40, 3, 2}, Block{16, 96, 5, 2}, Block{13, 33, 3, 1, true}}) {
      std::vector<Shape> s = shapes;
      for (Shape& shape : s) shape[1] = p.cin;
      check_block(p, s, threads);
    }
  }
}

TEST(PointwiseDepthwise, DilatedBlocksAgreeWithReferenceAndUnfusedKernels) {
  // DeepLabV3's / LR-ASPP's dilated 5x5 blocks: output rows in phase order (fdw_layer.cc).
  for (int threads : {1, 2}) {
    Block d2{16, 48, 5, 1};
    d2.dilation = 2;
    Block d3{8, 32, 3, 2};
    d3.dilation = 3;
    for (const Block& p : {d2, d3}) {
      check_block(p, {{1, p.cin, 20, 20}, {2, p.cin, 9, 13}, {1, p.cin, 3, 30}}, threads);
    }
  }
}

TEST(PointwiseDepthwise, FewRowsSplitPanelsOverThreads) {
  // 7 output rows, 8 32-channel panels: each thread expands its own panels of every row. 200
  // channels end a pixel inside a cache line: the threads split the rows instead.
  for (int64_t m : {256, 200}) check_block(Block{64, m, 3, 1, true}, {{1, 64, 7, 7}, {2, 64, 14, 5}}, 2);
}

TEST(PointwiseDepthwise, SmallMapsExpandWholeUnlessTooLarge) {
  // 14 x 14 fills 14 of 24 tile rows: expanded whole (m = 40), or by rows when the expansion
  // passes 1 MB (m = 1400); a 7 x 7 stride-2 block and two images too.
  for (int threads : {1, 2}) {
    check_block(Block{16, 40, 3, 1, true}, {{1, 16, 14, 14}, {2, 16, 7, 7}}, threads);
    check_block(Block{16, 1400, 3, 1}, {{1, 16, 14, 14}}, threads);
    check_block(Block{24, 72, 5, 2, true}, {{1, 24, 7, 7}, {2, 24, 14, 14}}, threads);
  }
}

TEST(PointwiseDepthwise, SmallMapsExpandByTheLayersRowChunks) {
  // Small maps whose depthwise layer splits its rows over the threads (m = 480: a chunk per
  // thread) are expanded in the same chunks of rows: 14 rows in 7 + 7, images of 8 rows in
  // 12 + 12 (across an image) or 8 + 8 + 8, a stride-2 layer's 16 input rows in 8 + 8. Uneven
  // chunks (14 rows in 5 + 5 + 4) and the channel split (8 rows on 3 threads) keep the panels.
  for (int threads : {2, 3}) {
    check_block(Block{80, 480, 5, 1}, {{1, 80, 14, 14}, {2, 80, 8, 8}, {3, 80, 8, 8}}, threads);
    check_block(Block{40, 480, 3, 2, true}, {{1, 40, 16, 16}}, threads);
  }
}

TEST(PointwiseDepthwise, GroupedBlocksAgreeWithReferenceAndUnfusedKernels) {
  // ResNeXt's and RegNet's 1x1 -> grouped 3x3: rows through the ring (a 58-pixel row, stride
  // 2 as the first block of a stage), small maps expanded whole, channel tails of a block.
  for (int threads : {1, 2}) {
    for (auto [cin, m, group_width, stride] : std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t>>{
             {8, 24, 4, 1}, {12, 20, 4, 2}, {8, 40, 8, 1}, {16, 48, 16, 2}, {24, 64, 16, 1}}) {
      Block p{cin, m, 3, stride};
      p.group_width = group_width;
      check_block(p, {{1, cin, 30, 58}, {2, cin, 14, 14}, {1, cin, 7, 9}}, threads);
    }
  }
}

TEST(PointwiseDepthwise, NonFiniteInputsKeepReferenceSemantics) {
  check_block(Block{8, 24, 3, 1}, {{1, 8, 9, 12}}, 2, std::numeric_limits<float>::infinity());
}

TEST(PointwiseDepthwise, DeclinedFusedKernelRunsTheReferencePair) {
  Block p{8, 24, 3, 2};
  p.inf_weight = true;
  auto ref = session(block_model(p), 2, true);
  auto fast = session(block_model(p), 2);
  ASSERT_TRUE(ref.is_ok() && fast.is_ok());
  expect_agree(**ref, **fast, nullptr, 0, rand_tensor({2, 8, 9, 11}, 3), "inf in the 1x1 weights");
}

TEST(PointwiseDepthwise, BadInputNamesTheNode) {
  auto fast = session(block_model(Block{}), 1);
  ASSERT_TRUE(fast.is_ok());
  auto y = (*fast)->run({Value(rand_tensor({1, 5, 6, 6}, 1))});  // 5 channels where W_pw takes 8
  ASSERT_FALSE(y.is_ok());
  const std::string error = y.status().to_string();
  const char* op = fast_layout_fusions(OpRegistry::global()).fuse_pointwise_depthwise ? "PointwiseDepthwiseConv"
                                                                                      : "Conv";  // merged or not
  EXPECT_NE(error.find(op), std::string::npos) << error;
  EXPECT_NE(error.find("5 channels"), std::string::npos) << error;
}

struct Fire {
  int64_t cin = 8, squeeze = 6, e1 = 8, e3 = 8, out = 5;
  int64_t e3_stride = 1;       // 2: parts of different sizes (the Concat itself fails)
  bool expose_concat = false;  // the Concat is a graph output too: no merge
  bool inf_weight = false;     // an inf in the last Conv's W: the own kernel declines
  bool pool = false;           // a 3x3 / 2 MaxPool (ceil mode) reads the Concat instead of a 1x1 Conv
};

// x -> 1x1 squeeze + Relu -> [1x1 expand + Relu, 3x3 expand + Relu] -> channel Concat -> 1x1
// (or MaxPool) -> "y".
Model fire_model(const Fire& f) {
  testing::GraphBuilder b;
  b.input("x", 4);
  uint32_t seed = 21;
  const auto conv = [&](const std::string& in, int64_t cin, int64_t cout, int64_t k, int64_t stride, bool inf) {
    Tensor w = rand_tensor({cout, cin, k, k}, seed++, -0.5f, 0.5f);
    if (inf) w.data<float>()[2] = std::numeric_limits<float>::infinity();
    const int64_t pad = k / 2;
    return b.node("Conv", {in, b.constant(w), b.constant(rand_tensor({cout}, seed++))},
                  {attr_ints("kernel_shape", {k, k}), attr_ints("pads", {pad, pad, pad, pad}),
                   attr_ints("strides", {stride, stride})});
  };
  const std::string s = b.node("Relu", {conv("x", f.cin, f.squeeze, 1, 1, false)});
  const std::string e1 = b.node("Relu", {conv(s, f.squeeze, f.e1, 1, 1, false)});
  const std::string e3 = b.node("Relu", {conv(s, f.squeeze, f.e3, 3, f.e3_stride, false)});
  const std::string cat = b.node("Concat", {e1, e3}, {attr_int("axis", 1)});
  if (f.expose_concat) b.output(cat);
  if (f.pool) {
    b.node("MaxPool", {cat},
           {attr_ints("kernel_shape", {3, 3}), attr_ints("strides", {2, 2}), attr_int("ceil_mode", 1)}, "y");
    b.output("y");
    return b.model;
  }
  b.node("Conv", {cat, b.constant(rand_tensor({f.out, f.e1 + f.e3, 1, 1}, seed++, -0.5f, 0.5f))}, {}, "y");
  if (f.inf_weight) {  // the last Conv's W: one inf
    Tensor& w = b.model.graph.initializers.back().tensor;
    w.data<float>()[1] = std::numeric_limits<float>::infinity();
  }
  b.output("y");
  return b.model;
}

// The layout pass with the Concat merges on, over m's graph: its stats, after checking that
// each merged Concat left one `op` node and no Concat behind. `merged` is the op's first node.
NhwcLayoutStats merge_concats(Model& m, const std::string& op, const Node** merged = nullptr) {
  NhwcLayoutOptions on;
  on.fuse_concat = true;
  auto s = apply_nhwc_layout(m.graph, m.opset_imports, on);
  EXPECT_TRUE(s.is_ok()) << s.status().to_string();
  if (!s.is_ok()) return NhwcLayoutStats{};
  EXPECT_EQ(count_op(m.graph, op), s->concat);
  if (s->concat > 0) {
    EXPECT_EQ(count_op(m.graph, "Concat"), 0);
  }
  for (const Node& n : m.graph.nodes) {
    if (merged && n.op_type == op) {
      *merged = &n;
      break;
    }
  }
  return *s;
}

TEST(ConcatConv, LayoutPassMergesEqualPartsReadOnlyByA1x1Conv) {
  Model m = fire_model(Fire{});
  const Node* n = nullptr;
  const NhwcLayoutStats s = merge_concats(m, kConcatConvOp, &n);
  EXPECT_EQ(s.concat, 1);
  EXPECT_EQ(s.fused, 3);  // the Relus
  ASSERT_NE(n, nullptr);
  ASSERT_EQ(n->inputs.size(), 4u);  // part 0, W, B (none: ""), part 1
  EXPECT_TRUE(n->inputs[2].empty());
  Fire unequal, exposed;
  unequal.e3 = 6;
  exposed.expose_concat = true;
  for (const Fire& f : {unequal, exposed}) {
    Model other = fire_model(f);
    EXPECT_EQ(merge_concats(other, kConcatConvOp).concat, 0);
  }
}

// A merged Concat's reader `op` against the reference, and bit for bit against the same node
// after a written Concat (`unmerged`: the model with the Concat a graph output too), at 1 and 2
// threads, on inputs of c channels with NaN every 97 values; the own kernel runs the node.
void check_merged_concat(const Model& merged, const Model& unmerged, const char* op, int64_t c,
                         const std::string& what) {
  const NhwcLayoutOptions fusions = fast_layout_fusions(OpRegistry::global());
  const bool on = op == std::string(kBatchNormConvOp) ? fusions.fuse_norm_conv : fusions.fuse_concat;
  for (int threads : {1, 2}) {
    SCOPED_TRACE(std::string(op) + ", " + what + ", threads " + std::to_string(threads));
    auto ref = session(merged, threads, true);
    auto fast = session(merged, threads);
    auto concat = session(unmerged, threads);
    ASSERT_TRUE(ref.is_ok() && fast.is_ok() && concat.is_ok());
    EXPECT_EQ(count_op((*fast)->model().graph, op) == 1, on);
    uint32_t seed = 1;
    for (Shape shape : {Shape{1, c, 3, 3}, Shape{2, c, 13, 7}, Shape{1, c, 30, 31}}) {
      Tensor x = rand_tensor(shape, seed++);
      for (int64_t i = 0; i < x.numel(); i += 97) x.data<float>()[i] = std::numeric_limits<float>::quiet_NaN();
      expect_agree(**ref, **fast, concat->get(), 1, x, op);
    }
    Profiler profiler;
    (*fast)->set_profiler(&profiler);
    ASSERT_TRUE((*fast)->run({Value(rand_tensor({1, c, 6, 5}, 9))}).is_ok());
    (*fast)->set_profiler(nullptr);
    int own = 0;
    for (const Profiler::Entry& e : profiler.entries()) {
      if (e.op_type == std::string(kNhwcDomain) + ":" + op) own += e.backend == Backend::kOptimized;
    }
    EXPECT_EQ(own == 1, on);
  }
}

// A Fire block's Concat reader (1x1 Conv, or MaxPool with f.pool); NaN windows (all NaN in the
// 3x3 expand's part) take the reference rule in the part's channels.
void check_concat_reader(const Fire& f) {
  Fire exposed = f;
  exposed.expose_concat = true;
  check_merged_concat(fire_model(f), fire_model(exposed), f.pool ? kConcatMaxPoolOp : kConcatConvOp, f.cin,
                      "parts of " + std::to_string(f.e1) + " and " + std::to_string(f.e3));
}

TEST(ConcatConv, AgreesWithReferenceAndTheConcatPath) {
  check_concat_reader(Fire{});
  check_concat_reader(Fire{5, 16, 64, 64, 33});
}

TEST(ConcatConv, DeclinedKernelAndBadPartsGoToTheReference) {
  Fire inf;
  inf.inf_weight = true;
  auto ref = session(fire_model(inf), 2, true);
  auto fast = session(fire_model(inf), 2);
  ASSERT_TRUE(ref.is_ok() && fast.is_ok());
  const Tensor x = rand_tensor({1, 8, 9, 10}, 3);
  expect_agree(**ref, **fast, nullptr, 0, x, "inf in the 1x1 weights");

  Fire strided;
  strided.e3_stride = 2;  // 9x10 and 5x5 parts: no Concat of them exists
  auto bad = session(fire_model(strided), 1);
  ASSERT_TRUE(bad.is_ok());
  auto y = (*bad)->run({Value(x)});
  ASSERT_FALSE(y.is_ok());
  const std::string error = y.status().to_string();
  const char* op = fast_layout_fusions(OpRegistry::global()).fuse_concat ? "ConcatConv" : "Concat";
  EXPECT_NE(error.find(op), std::string::npos) << error;
}

TEST(ConcatMaxPool, LayoutPassMergesAConcatOnlyAMaxPoolReads) {
  Fire f;
  f.pool = true;
  f.e3 = 6;  // parts need not be equal for the pool
  Model m = fire_model(f);
  const Node* n = nullptr;
  EXPECT_EQ(merge_concats(m, kConcatMaxPoolOp, &n).concat, 1);
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->inputs.size(), 2u);
}

TEST(ConcatMaxPool, AgreesWithReferenceAndTheConcatPath) {
  for (Fire f : {Fire{}, Fire{5, 16, 64, 40, 1}}) {
    f.pool = true;
    check_concat_reader(f);
  }
}

struct Dense {
  int64_t cin = 5, grow = 16;  // x's channels (a part of 20 bytes a pixel), each Conv's
  bool expose_concat = false;  // the Concat is a graph output too: no merge
  bool relu = true;            // a Relu after the BatchNormalization (fused into it)
  bool odd_mean_size = false;  // mean has one value too many: the fast kernel declines at run time
  int64_t more_parts = 0;      // more 1x1 Convs of the first one's output in the Concat (DenseNet's
                               // late layers read up to 48 parts)
  int64_t reader_k = 3;        // the kernel of the Conv that reads the BatchNorm (1: BatchNormConv)
  int64_t reader_m = 7;        // and its output channels
  bool expose_norm = false;    // the BatchNorm's output is a graph output too: no BatchNormConv
  bool concat = true;          // false: the BatchNorm reads the first Conv's output alone
};

// A DenseNet layer: x -> 1x1 MaxPool (x as a region value) and two Convs -> channel Concat of
// the three -> BatchNormalization (+ Relu) -> k x k Conv -> "y".
Model dense_model(const Dense& d) {
  testing::GraphBuilder b;
  b.input("x", 4);
  uint32_t seed = 31;
  const std::string pooled = b.node("MaxPool", {"x"}, {attr_ints("kernel_shape", {1, 1})});
  const auto conv = [&](const std::string& in, int64_t cin, int64_t k) {
    const int64_t pad = k / 2;
    return b.node("Conv",
                  {in, b.constant(rand_tensor({d.grow, cin, k, k}, seed++, -0.5f, 0.5f)),
                   b.constant(rand_tensor({d.grow}, seed++))},
                  {attr_ints("kernel_shape", {k, k}), attr_ints("pads", {pad, pad, pad, pad})});
  };
  const std::string a = b.node("Relu", {conv(pooled, d.cin, 3)});
  std::vector<std::string> parts{pooled, a, conv(a, d.grow, 1)};
  for (int64_t k = 0; k < d.more_parts; ++k) parts.push_back(conv(a, d.grow, 1));
  const std::string cat = d.concat ? b.node("Concat", parts, {attr_int("axis", 1)}) : a;
  if (d.expose_concat) b.output(cat);
  const int64_t channels = d.concat ? d.cin + static_cast<int64_t>(parts.size() - 1) * d.grow : d.grow;
  Tensor var = rand_tensor({channels}, seed++, 0.5f, 2.0f);
  std::string bn =
      b.node("BatchNormalization",
             {cat, b.constant(rand_tensor({channels}, seed++)), b.constant(rand_tensor({channels}, seed++)),
              b.constant(rand_tensor({channels + (d.odd_mean_size ? 1 : 0)}, seed++)), b.constant(var)},
             {attr_float("epsilon", 1e-5f)});
  if (d.relu) bn = b.node("Relu", {bn});
  if (d.expose_norm) b.output(bn);
  const int64_t pad = d.reader_k / 2;
  b.node("Conv", {bn, b.constant(rand_tensor({d.reader_m, channels, d.reader_k, d.reader_k}, seed++, -0.5f, 0.5f))},
         {attr_ints("pads", {pad, pad, pad, pad})}, "y");
  b.output("y");
  return b.model;
}

TEST(ConcatBatchNorm, LayoutPassMergesAConcatOnlyABatchNormReads) {
  Model m = dense_model(Dense{});
  const Node* n = nullptr;
  EXPECT_EQ(merge_concats(m, kConcatBatchNormOp, &n).concat, 1);
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->inputs.size(), 7u);  // part 0, scale, B, mean, var, parts 1 and 2
  EXPECT_NE(n->find_attr("activation_min"), nullptr) << "the Relu's range";
  Dense many;  // more parts than ConcatConv's kernel holds: no limit for the BatchNorm
  many.more_parts = 17;
  Model wide = dense_model(many);
  EXPECT_EQ(merge_concats(wide, kConcatBatchNormOp, &n).concat, 1);
  EXPECT_EQ(n->inputs.size(), 24u);  // 20 parts and the 4 parameters
  Dense exposed;
  exposed.expose_concat = true;
  Model other = dense_model(exposed);
  EXPECT_EQ(merge_concats(other, kConcatBatchNormOp).concat, 0);
}

// As ConcatConv's; a mean of the wrong size goes to the twin, which reports it.
TEST(ConcatBatchNorm, AgreesWithReferenceAndTheConcatPath) {
  for (const Dense& d : {Dense{}, Dense{16, 32, false, false, false}, Dense{3, 8, false, true, false, 17}}) {
    Dense exposed = d;
    exposed.expose_concat = true;
    check_merged_concat(dense_model(d), dense_model(exposed), kConcatBatchNormOp, d.cin,
                        "x of " + std::to_string(d.cin) + " channels, " + std::to_string(3 + d.more_parts) + " parts");
  }
  Dense odd;
  odd.odd_mean_size = true;
  auto bad = session(dense_model(odd), 1);
  ASSERT_TRUE(bad.is_ok()) << bad.status().to_string();
  auto y = (*bad)->run({Value(rand_tensor({1, 5, 4, 4}, 3))});
  ASSERT_FALSE(y.is_ok());
  const std::string error = y.status().to_string();
  const char* op = fast_layout_fusions(OpRegistry::global()).fuse_concat ? kConcatBatchNormOp : "BatchNormalization";
  EXPECT_NE(error.find(op), std::string::npos) << error;
}

// Hand-built `op` nodes (inputs from `inputs_of(b, variant)`, for `variants` variants) over
// x [1, 2, 2, 3] and x2 [1, 3, 2, 2], which do not concatenate: each fails with an error naming
// the op (at creation, never as an internal error, or at run time), never a crash or a read
// past a part.
void expect_malformed_nodes_fail(
    const char* op, int variants,
    const std::function<std::vector<std::string>(testing::GraphBuilder&, int)>& inputs_of) {
  for (int variant = 0; variant < variants; ++variant) {
    testing::GraphBuilder b;
    b.model.opset_imports[kNhwcDomain] = 1;
    b.input("x", 4);
    b.input("x2", 4);
    b.node(op, inputs_of(b, variant), {}, "y");
    b.model.graph.nodes.back().domain = kNhwcDomain;
    b.output("y");
    auto s = session(b.model, 1);
    if (!s.is_ok()) {
      EXPECT_NE(s.status().code(), StatusCode::kInternal) << s.status().to_string();
      continue;
    }
    auto y = (*s)->run({Value(rand_tensor({1, 2, 2, 3}, 2)), Value(rand_tensor({1, 3, 2, 2}, 3))});
    ASSERT_FALSE(y.is_ok()) << op << " variant " << variant;
    EXPECT_NE(y.status().to_string().find(op), std::string::npos) << y.status().to_string();
  }
}

// Parts that do not concatenate (another height), a missing parameter.
TEST(ConcatBatchNorm, MalformedNodesFailWithAClearError) {
  expect_malformed_nodes_fail(kConcatBatchNormOp, 2, [](testing::GraphBuilder& b, int variant) {
    const std::string p = b.constant(rand_tensor({5}, 1));
    return std::vector<std::string>{"x", p, p, p, variant == 0 ? p : "", "x2"};
  });
}

TEST(BatchNormConv, LayoutPassMergesABatchNormOnlyA1x1ConvReads) {
  NhwcLayoutOptions on;
  on.fuse_concat = true;
  on.fuse_norm_conv = true;
  Dense d;
  d.reader_k = 1;
  Model m = dense_model(d);
  auto s = apply_nhwc_layout(m.graph, m.opset_imports, on);
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  EXPECT_EQ(s->norm_conv, 1);
  EXPECT_EQ(count_op(m.graph, kConcatBatchNormOp), 0);
  ASSERT_EQ(count_op(m.graph, kBatchNormConvOp), 1);
  for (const Node& n : m.graph.nodes) {
    if (n.op_type != kBatchNormConvOp) continue;
    ASSERT_EQ(n.inputs.size(), 9u);  // part 0, scale, B, mean, var, W, B_conv (none: ""), parts 1 and 2
    EXPECT_TRUE(n.inputs[6].empty());
    EXPECT_NE(n.find_attr("norm_activation_min"), nullptr) << "the Relu's range";
    EXPECT_NE(n.find_attr("norm_epsilon"), nullptr);
  }
  Dense one_part = d;  // the BatchNorm of one tensor
  one_part.concat = false;
  Model single = dense_model(one_part);
  s = apply_nhwc_layout(single.graph, single.opset_imports, on);
  ASSERT_TRUE(s.is_ok());
  EXPECT_EQ(s->norm_conv, 1);
  Dense exposed = d, wide_kernel;
  exposed.expose_norm = true;
  for (const Dense& other : {exposed, wide_kernel}) {
    Model kept = dense_model(other);
    s = apply_nhwc_layout(kept.graph, kept.opset_imports, on);
    ASSERT_TRUE(s.is_ok());
    EXPECT_EQ(s->norm_conv, 0);
    EXPECT_EQ(count_op(kept.graph, kBatchNormConvOp), 0);
  }
}

// Against the reference, and bit for bit against ConcatBatchNorm and the own 1x1 Conv (the
// BatchNorm's output a graph output too), at 1 and 2 threads: parts or one tensor, with and
// without the Relu, 64 output channels (two panels: a 3 x 3 map splits them over the threads).
TEST(BatchNormConv, AgreesWithReferenceAndTheUnmergedPath) {
  Dense plain, many, wide_out, one_part;
  plain.relu = false;
  many.more_parts = 17;
  many.cin = 3;
  wide_out.reader_m = 64;
  one_part.concat = false;
  for (Dense d : {Dense{}, plain, many, wide_out, one_part}) {
    d.reader_k = 1;
    Dense exposed = d;
    exposed.expose_norm = true;
    check_merged_concat(dense_model(d), dense_model(exposed), kBatchNormConvOp, d.cin,
                        std::to_string(3 + d.more_parts) + " parts, " + std::to_string(d.reader_m) + " outputs" +
                            (d.relu ? ", Relu" : "") + (d.concat ? "" : ", one part"));
  }
}

// Parts that do not concatenate, a missing parameter, a W of other channels than the parts'.
TEST(BatchNormConv, MalformedNodesFailWithAClearError) {
  expect_malformed_nodes_fail(kBatchNormConvOp, 3, [](testing::GraphBuilder& b, int variant) {
    const std::string p = b.constant(rand_tensor({5}, 1));
    const std::string w = b.constant(rand_tensor({4, variant == 2 ? 6 : 5, 1, 1}, 2));
    return std::vector<std::string>{"x", p, p, p, variant == 0 ? p : "", w, "", "x2"};
  });
}

}  // namespace
}  // namespace xonnx
