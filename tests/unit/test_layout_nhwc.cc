// The NHWC layout pass (runtime/passes/layout_nhwc.h): graph rewrites (which nodes become NHWC,
// where the boundaries go, what is fused) and differential runs of whole small CNNs with the
// pass (XNNPACK on) against the reference kernels (XNNPACK off).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "runtime/passes/layout_nhwc.h"
#include "runtime/passes/shape_inference.h"
#include "runtime/exec/session.h"
#include "runtime/ops/internal_ops.h"
#include "runtime/ops/optimized/opt_util.h"
#include "runtime/ops/xnnpack/xnnpack_util.h"
#include "tests/unit/graph_builder.h"
#include "tests/unit/test_xnnpack_common.h"

namespace xonnx {
namespace {

using namespace xnntest;

// The shared builder, plus random float convolutions; inputs are 4-D (rank certain).
struct Builder : testing::GraphBuilder {
  using GraphBuilder::GraphBuilder;
  void input(const std::string& name, int rank = 4) { GraphBuilder::input(name, rank); }
  // Conv with random weights [cout, cin / group, k, k] and a bias, "same" padding.
  std::string conv(const std::string& x, int64_t cin, int64_t cout, int64_t k, int64_t group = 1, int64_t stride = 1) {
    const uint32_t seed = static_cast<uint32_t>(counter * 7 + 1);
    const std::string w = constant(rand_tensor({cout, cin / group, k, k}, seed, -0.5f, 0.5f));
    const std::string b = constant(rand_tensor({cout}, seed + 1));
    const int64_t p = k / 2;
    return node("Conv", {x, w, b},
                {attr_ints("kernel_shape", {k, k}), attr_ints("pads", {p, p, p, p}), attr_int("group", group),
                 attr_ints("strides", {stride, stride})});
  }
};

int count_ops(const Graph& g, const std::string& domain, const std::string& op) {
  int n = 0;
  for (const Node& node : g.nodes) n += node.domain == domain && node.op_type == op;
  return n;
}

NhwcLayoutStats rewrite(Builder& b) {
  auto stats = apply_nhwc_layout(b.model.graph, b.model.opset_imports);
  EXPECT_TRUE(stats.is_ok()) << stats.status().to_string();
  return stats.is_ok() ? *stats : NhwcLayoutStats{};
}

TEST(LayoutNhwc, ConvReluChainIsOneRegionWithFusedActivations) {
  Builder b;
  b.input("x");
  std::string v = b.node("Relu", {b.conv("x", 3, 8, 3)});
  v = b.conv(v, 8, 8, 3);
  const std::string lo = b.constant(Tensor::scalar<float>(0.0f));
  const std::string hi = b.constant(Tensor::scalar<float>(6.0f));
  b.node("Clip", {v, lo, hi}, {}, "y");
  b.output("y");
  const NhwcLayoutStats s = rewrite(b);
  const Graph& g = b.model.graph;
  EXPECT_EQ(s.nhwc_ops, 2);
  EXPECT_EQ(s.fused, 2);
  EXPECT_EQ(s.to_nhwc, 1);
  EXPECT_EQ(s.to_nchw, 1);
  EXPECT_EQ(count_ops(g, kNhwcDomain, "Conv"), 2);
  EXPECT_EQ(count_ops(g, "", "Relu") + count_ops(g, "", "Clip") + count_ops(g, "", "Conv"), 0);
  ASSERT_EQ(g.nodes.size(), 4u);
  EXPECT_EQ(g.nodes.back().op_type, "ToNCHW");
  EXPECT_EQ(g.nodes.back().outputs[0], "y");  // the graph output keeps its name
  const Attribute* hi_attr = g.nodes[2].find_attr("activation_max");
  ASSERT_NE(hi_attr, nullptr);
  EXPECT_EQ(hi_attr->f, 6.0f);
}

// Region values get value_info for their NHWC twins, dims permuted from the NCHW ones the graph
// declares (kernels read the static ones at creation: KernelInit::static_input_shape).
TEST(LayoutNhwc, TwinsGetTheirValuesShapesInNhwcOrder) {
  Builder b;
  b.model.graph.inputs.clear();
  ValueInfo x;
  x.name = "x";
  x.type.kind = TypeInfo::Kind::kTensor;
  x.type.elem_type = DataType::kFloat;
  x.type.has_shape = true;
  x.type.dims = {Dim{2, ""}, Dim{3, ""}, Dim{-1, "height"}, Dim{7, ""}};
  b.model.graph.inputs.push_back(x);
  const std::string c = b.node("Relu", {b.conv("x", 3, 8, 3)});
  b.node("Relu", {b.conv(c, 8, 5, 3)}, {}, "y");
  b.output("y");
  ValueInfo mid = x;  // what shape inference gives the first block's output
  mid.name = c;
  mid.type.dims[1] = Dim{8, ""};
  b.model.graph.value_info.push_back(mid);
  rewrite(b);
  const Graph& g = b.model.graph;
  const auto dims_of = [&](const std::string& name) {
    std::vector<std::string> out;
    for (const ValueInfo& v : g.value_info)
      if (v.name == name)
        for (const Dim& d : v.type.dims) out.push_back(d.known() ? std::to_string(d.value) : d.param);
    return out;
  };
  ASSERT_EQ(count_ops(g, kNhwcDomain, "Conv"), 2);
  // The first Conv reads the input's twin, the second the first's output twin.
  const Node* convs[2] = {nullptr, nullptr};
  for (const Node& n : g.nodes)
    if (n.domain == kNhwcDomain && n.op_type == "Conv") convs[convs[0] ? 1 : 0] = &n;
  EXPECT_EQ(dims_of(convs[0]->inputs[0]), (std::vector<std::string>{"2", "height", "7", "3"}));
  EXPECT_EQ(dims_of(convs[1]->inputs[0]), (std::vector<std::string>{"2", "height", "7", "8"}));
  EXPECT_TRUE(dims_of(convs[1]->outputs[0]).empty()) << "no declared type, no twin type";
}

TEST(LayoutNhwc, ResidualAddStaysInTheRegion) {
  Builder b;
  b.input("x");
  const std::string a = b.node("Relu", {b.conv("x", 4, 4, 3)});
  const std::string c = b.conv(b.node("Relu", {b.conv(a, 4, 4, 3)}), 4, 4, 3);
  b.node("Relu", {b.node("Add", {a, c})}, {}, "y");
  b.output("y");
  const NhwcLayoutStats s = rewrite(b);
  EXPECT_EQ(s.nhwc_ops, 3);
  EXPECT_EQ(s.fused, 2);  // the Relu after Add is not a Conv's
  EXPECT_EQ(s.agnostic_ops, 2);
  EXPECT_EQ(s.to_nhwc + s.to_nchw, 2);
  EXPECT_EQ(count_ops(b.model.graph, "", "Add"), 1);
}

TEST(LayoutNhwc, SqueezeExciteBlockAndFlattenAfterGlobalPool) {
  Builder b;
  b.input("x");
  const std::string t = b.conv("x", 3, 16, 3);
  const std::string g = b.node("GlobalAveragePool", {t});
  const std::string r = b.node("Relu", {b.conv(g, 16, 4, 1)});
  const std::string gate = b.node("HardSigmoid", {b.conv(r, 4, 16, 1)});
  const std::string se = b.node("Mul", {t, gate});
  const std::string bias = b.constant(rand_tensor({1, 16, 1, 1}, 5));  // per-channel constant
  const std::string pooled = b.node("GlobalAveragePool", {b.node("Add", {se, bias})});
  b.node("Flatten", {pooled}, {}, "y");
  b.output("y");
  const NhwcLayoutStats s = rewrite(b);
  EXPECT_EQ(s.to_nhwc, 1);
  EXPECT_EQ(s.to_nchw, 1);
  EXPECT_EQ(s.free_boundaries, 1);  // [N,C,1,1] -> Flatten: no transpose
  EXPECT_EQ(s.nhwc_ops, 5);         // 3 Conv, 2 GlobalAveragePool
  bool relabelled = false;
  for (const NamedTensor& it : b.model.graph.initializers) {
    if (it.name == bias + "__nhwc") {
      relabelled = true;
      EXPECT_EQ(it.tensor.shape(), (Shape{1, 1, 1, 16}));
    }
  }
  EXPECT_TRUE(relabelled);
}

TEST(LayoutNhwc, NonRegionOpSplitsTheGraphIntoTwoRegions) {
  Builder b;
  b.input("x");
  const std::string a = b.node("Relu", {b.conv("x", 3, 5, 3)});
  const std::string sm = b.node("Softmax", {a}, {attr_int("axis", 1)});  // not layout-agnostic
  b.node("Relu", {b.conv(sm, 5, 5, 1)}, {}, "y");
  b.output("y");
  const NhwcLayoutStats s = rewrite(b);
  EXPECT_EQ(s.to_nhwc, 2);
  EXPECT_EQ(s.to_nchw, 2);
  EXPECT_EQ(count_ops(b.model.graph, "", "Softmax"), 1);
}

TEST(LayoutNhwc, GraphOutputInsideARegionIsNotFusedAndGetsItsOwnExit) {
  Builder b;
  b.input("x");
  const std::string c = b.conv("x", 3, 4, 3);
  b.node("Relu", {c}, {}, "mid");
  b.output("mid");
  b.output(c);  // the Conv output itself is a graph output: no fusion
  b.node("MaxPool", {"mid"}, {attr_ints("kernel_shape", {2, 2})}, "y");
  b.output("y");
  const NhwcLayoutStats s = rewrite(b);
  EXPECT_EQ(s.fused, 0);
  EXPECT_EQ(s.to_nchw, 3);
  EXPECT_EQ(count_ops(b.model.graph, kNhwcDomain, "MaxPool"), 1);
}

TEST(LayoutNhwc, ComputedWeightsAndUnknownRanksStayNchw) {
  Builder b;
  b.input("x");
  b.input("w");
  b.input("z", 3);
  b.node("Conv", {"x", "w"}, {}, "y");  // weights are not constant
  b.node("Relu", {"z"}, {}, "r");       // rank not proven to be 4
  b.output("y");
  b.output("r");
  const NhwcLayoutStats s = rewrite(b);
  EXPECT_EQ(s.nhwc_ops + s.agnostic_ops + s.to_nhwc + s.to_nchw, 0);
  EXPECT_EQ(b.model.graph.nodes.size(), 2u);
}

// A U-Net level: x -> Conv + Relu ("skip") -> MaxPool -> Conv -> ConvTranspose (k x k, stride
// 2, U-Net's upsampling when k = 2; pads 1 and output_padding 1 when k = 3) + Relu -> Concat
// with the skip -> Conv -> "y".
Model unet_level(int64_t c, int64_t k) {
  Builder b;
  b.input("x");
  const std::string skip = b.node("Relu", {b.conv("x", 3, c, 3)});
  const std::string down = b.node("MaxPool", {skip}, {attr_ints("kernel_shape", {2, 2}), attr_ints("strides", {2, 2})});
  const std::string w = b.constant(rand_tensor({2 * c, c, k, k}, 31, -0.5f, 0.5f));
  std::vector<Attribute> attrs = {attr_ints("strides", {2, 2})};
  if (k == 3) {
    attrs.push_back(attr_ints("pads", {1, 1, 1, 1}));
    attrs.push_back(attr_ints("output_padding", {1, 1}));
  }
  const std::string up =
      b.node("ConvTranspose", {b.conv(down, c, 2 * c, 3), w, b.constant(rand_tensor({c}, 32))}, attrs);
  const std::string cat = b.node("Concat", {b.node("Relu", {up}), skip}, {attr_int("axis", 1)});
  b.node("Relu", {b.conv(cat, 2 * c, c, 3)}, {}, "y");
  b.output("y");
  return b.model;
}

TEST(LayoutNhwc, ConvTransposeJoinsTheRegion) {
  NhwcLayoutOptions on;
  on.nhwc_conv_transpose = true;
  Model m = unet_level(8, 2);
  auto s = apply_nhwc_layout(m.graph, m.opset_imports, on);
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  EXPECT_EQ(count_ops(m.graph, kNhwcDomain, "ConvTranspose"), 1);
  EXPECT_EQ(s->to_nhwc, 1);  // x
  EXPECT_EQ(s->to_nchw, 1);  // y
  // Without an NHWC kernel for it, it stays NCHW, with boundaries around it.
  Model off = unet_level(8, 2);
  s = apply_nhwc_layout(off.graph, off.opset_imports, NhwcLayoutOptions{});
  ASSERT_TRUE(s.is_ok());
  EXPECT_EQ(count_ops(off.graph, "", "ConvTranspose"), 1);
  EXPECT_GE(s->to_nchw, 2);
}

TEST(LayoutNhwc, ConvTransposeOnlyLeavingTheRegionStaysNchw) {
  // Its output (4 times its input's pixels) leaves the region: the boundary stays before it.
  NhwcLayoutOptions on;
  on.nhwc_conv_transpose = true;
  Builder b;
  b.input("x");
  b.node("ConvTranspose",
         {b.node("Relu", {b.conv("x", 3, 8, 3)}), b.constant(rand_tensor({8, 4, 2, 2}, 5)),
          b.constant(rand_tensor({4}, 6))},
         {attr_ints("strides", {2, 2})}, "y");
  b.output("y");
  auto s = apply_nhwc_layout(b.model.graph, b.model.opset_imports, on);
  ASSERT_TRUE(s.is_ok());
  EXPECT_EQ(count_ops(b.model.graph, "", "ConvTranspose"), 1);
  EXPECT_EQ(count_ops(b.model.graph, kNhwcDomain, "ConvTranspose"), 0);
}

// A decoder level that resizes to its skip's size (torch's F.interpolate(x, size=skip.shape[-2:])):
// x -> Conv + Relu ("skip") -> MaxPool -> Conv -> Resize(sizes = Shape(skip)) -> Concat with the
// skip -> Conv -> "y"; and the skip's H, W as "dims" (Shape with start 2, opset 15).
Model resize_to_skip(bool dims_output) {
  Builder b(17);
  b.input("x");
  const std::string skip = b.node("Relu", {b.conv("x", 3, 8, 3)});
  const std::string down = b.node("MaxPool", {skip}, {attr_ints("kernel_shape", {2, 2}), attr_ints("strides", {2, 2})});
  const std::string up = b.node("Resize", {b.conv(down, 8, 8, 3), "", "", b.node("Shape", {skip})},
                                {testing::attr_string("mode", "linear")});
  b.node("Relu", {b.conv(b.node("Concat", {up, skip}, {attr_int("axis", 1)}), 16, 4, 3)}, {}, "y");
  b.output("y");
  if (dims_output) {
    b.node("Shape", {skip}, {attr_int("start", 2)}, "dims");
    b.output("dims");
  }
  return b.model;
}

TEST(LayoutNhwc, ShapeOfARegionValueReadsItsTwin) {
  for (bool dims_output : {false, true}) {
    Model m = resize_to_skip(dims_output);
    auto s = apply_nhwc_layout(m.graph, m.opset_imports);
    ASSERT_TRUE(s.is_ok()) << s.status().to_string();
    EXPECT_EQ(s->shapes, dims_output ? 2 : 1);
    EXPECT_EQ(s->to_nchw, 1);  // y only: the skip never leaves the region
    EXPECT_EQ(count_ops(m.graph, "", "Gather"), s->shapes);
  }
}

// x -> Conv + Relu -> `op` over NCHW `axes` (an attribute, or input 1 at opset 18) -> "y".
struct Reduction {
  const char* op;
  std::vector<int64_t> axes;
  int64_t keepdims;
  int64_t opset;
  bool reads_twin;  // the result has the same memory in both layouts
};
Model reduce_after_conv(const Reduction& r) {
  Builder b(r.opset);
  b.input("x");
  const std::string v = b.node("Relu", {b.conv("x", 3, 13, 3)});
  const bool axes_input = r.opset >= (std::string(r.op) == "ReduceSum" ? 13 : 18);
  std::vector<std::string> inputs = {v};
  std::vector<Attribute> attrs = {attr_int("keepdims", r.keepdims)};
  if (axes_input) {
    inputs.push_back(b.constant(Tensor::from_vector<int64_t>(r.axes, {static_cast<int64_t>(r.axes.size())})));
  } else {
    attrs.push_back(attr_ints("axes", r.axes));
  }
  b.node(r.op, inputs, attrs, "y");
  b.output("y");
  return b.model;
}
const std::vector<Reduction>& reductions() {
  static const std::vector<Reduction> all = {
      {"ReduceMean", {2, 3}, 0, 17, true},       // torch's x.mean([2, 3])
      {"ReduceMean", {-1, -2}, 0, 18, true},     // axes as an input
      {"ReduceSum", {2, 3}, 0, 13, true},        // ReduceSum's input from opset 13
      {"ReduceMax", {1}, 0, 17, true},           // C reduced: [N, H, W] either way
      {"ReduceL2", {1, 2, 3}, 1, 17, true},      // [N, 1, 1, 1] either way
      {"ReduceMean", {2, 3}, 1, 17, false},      // [N, C, 1, 1]: the shape would change
      {"ReduceMean", {3}, 0, 17, false},         // [N, C, H]: C would move
      {"ReduceSumSquare", {0, 2}, 0, 17, false}  // [C, W]
  };
  return all;
}

TEST(LayoutNhwc, ReductionOfARegionValueReadsItsTwin) {
  for (const Reduction& r : reductions()) {
    SCOPED_TRACE(std::string(r.op) + " keepdims " + std::to_string(r.keepdims) + " opset " + std::to_string(r.opset));
    Model m = reduce_after_conv(r);
    auto s = apply_nhwc_layout(m.graph, m.opset_imports);
    ASSERT_TRUE(s.is_ok()) << s.status().to_string();
    EXPECT_EQ(s->reductions, r.reads_twin ? 1 : 0);
    EXPECT_EQ(s->to_nchw, r.reads_twin ? 0 : 1);
  }
}

TEST(LayoutNhwc, ChannelConcatMovesToTheLastAxis) {
  Builder b;
  b.input("x");
  const std::string a = b.conv("x", 3, 4, 1);
  const std::string c = b.conv("x", 3, 5, 3);
  b.node("Concat", {a, c}, {attr_int("axis", 1)}, "y");
  b.output("y");
  const NhwcLayoutStats s = rewrite(b);
  EXPECT_EQ(s.to_nhwc, 1);  // one conversion shared by both Convs
  EXPECT_EQ(s.to_nchw, 1);
  for (const Node& n : b.model.graph.nodes) {
    if (n.op_type == "Concat") {
      EXPECT_EQ(n.find_attr("axis")->i, 3);
    }
  }
}

TEST(LayoutNhwc, GatedActivationsBecomeSwishAndHardSwish) {
  Builder b;
  b.input("x");
  const std::string c = b.conv("x", 3, 4, 3);
  const std::string silu = b.node("Mul", {c, b.node("Sigmoid", {c})});
  const std::string hs = b.node("Mul", {b.node("HardSigmoid", {silu}, {attr_float("alpha", 1.0f / 6.0f)}), silu});
  const std::string other = b.node("HardSigmoid", {hs});  // default alpha 0.2: not hard-swish
  const std::string kept = b.node("Sigmoid", {b.node("Mul", {hs, other})});
  b.node("Mul", {kept, kept}, {}, "y");
  b.output("y");
  b.output(kept);  // a gate with another reader stays
  const NhwcLayoutStats s = rewrite(b);
  EXPECT_EQ(s.gated, 2);
  const Graph& g = b.model.graph;
  // The Swish follows the Conv, which takes it as its fused activation.
  EXPECT_EQ(count_ops(g, "", "Swish"), 0);
  EXPECT_EQ(count_ops(g, "", "HardSwish"), 1);
  EXPECT_EQ(count_ops(g, "", "Sigmoid"), 1);
  int fused = 0;
  for (const Node& n : g.nodes) {
    if (n.op_type == "HardSwish") {
      EXPECT_EQ(n.opset, 14);
    }
    const Attribute* act = n.find_attr("activation");
    if (n.op_type == "Conv" && act && act->s == "Swish") ++fused;
  }
  EXPECT_EQ(fused, 1);
}

TEST(LayoutNhwc, HardSwishAfterAConvIsItsActivation) {
  Builder b;
  b.input("x");
  const std::string c = b.conv("x", 3, 4, 3);
  b.node("Mul", {b.node("HardSigmoid", {c}, {attr_float("alpha", 1.0f / 6.0f)}), c}, {}, "y");
  b.output("y");
  rewrite(b);
  const Graph& g = b.model.graph;
  EXPECT_EQ(count_ops(g, "", "HardSwish"), 0);
  int fused = 0;
  for (const Node& n : g.nodes) {
    const Attribute* act = n.find_attr("activation");
    if (n.op_type == "Conv" && act && act->s == "HardSwish") ++fused;
  }
  EXPECT_EQ(fused, 1);
}

TEST(LayoutNhwc, SwishNotAfterAConvStaysAnOp) {
  Builder b;
  b.input("x");
  const std::string c = b.conv("x", 3, 4, 3);
  const std::string a = b.node("Add", {c, c});
  b.node("Mul", {a, b.node("Sigmoid", {a})}, {}, "y");
  b.output("y");
  const NhwcLayoutStats s = rewrite(b);
  EXPECT_EQ(s.gated, 1);
  const Graph& g = b.model.graph;
  EXPECT_EQ(count_ops(g, "", "Swish"), 1);
  for (const Node& n : g.nodes) {
    if (n.op_type == "Swish") {
      EXPECT_EQ(n.opset, 24);
    }
    EXPECT_EQ(n.find_attr("activation"), nullptr) << n.op_type;
  }
}

// DenseNet's dense layer: BN -> ReLU -> Conv on the concatenation of the earlier features. The
// BatchNormalization (constant parameters) joins the region with the ReLU fused into it, so
// the concatenations never leave NHWC.
Model dense_block(int64_t c, int64_t growth, int layers) {
  Builder b;
  b.input("x");
  std::string features = b.conv("x", 3, c, 3);
  int64_t channels = c;
  for (int l = 0; l < layers; ++l) {
    const std::string bn = b.node(
        "BatchNormalization",
        {features, b.constant(rand_tensor({channels}, 20 + l, 0.5f, 1.5f)), b.constant(rand_tensor({channels}, 30 + l)),
         b.constant(rand_tensor({channels}, 40 + l)), b.constant(rand_tensor({channels}, 50 + l, 0.1f, 2.0f))});
    const std::string grown = b.conv(b.node("Relu", {bn}), channels, growth, 3);
    features = b.node("Concat", {features, grown}, {attr_int("axis", 1)});
    channels += growth;
  }
  b.node("GlobalAveragePool", {features}, {}, "y");
  b.output("y");
  return b.model;
}

TEST(LayoutNhwc, BatchNormAfterAConcatStaysInTheRegion) {
  Model m = dense_block(4, 3, 3);
  auto s = apply_nhwc_layout(m.graph, m.opset_imports);
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  EXPECT_EQ(s->to_nhwc, 1);
  EXPECT_EQ(s->to_nchw, 1);  // the pooled output only
  EXPECT_EQ(count_ops(m.graph, kNhwcDomain, "BatchNormalization"), 3);
  EXPECT_EQ(count_ops(m.graph, "", "BatchNormalization") + count_ops(m.graph, "", "Relu"), 0);
  for (const Node& n : m.graph.nodes) {
    if (n.op_type == "BatchNormalization") {
      EXPECT_NE(n.find_attr("activation_min"), nullptr);
    }
  }
}

// ---- differential runs -----------------------------------------------------------------------

// A mobilenet/resnet/efficientnet-like net over every construct the pass handles.
Model mini_net(int64_t cin, int64_t c) {
  Builder b;
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
    Builder b(13);
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
    Builder b(21);
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
    Builder b(31);
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
    EXPECT_EQ(count_ops(rewritten.graph, "com.xonnx.nhwc", "DepthToSpace"), 2) << mode;
    EXPECT_EQ(count_ops(rewritten.graph, "com.xonnx.nhwc", "SpaceToDepth"), 1) << mode;
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
  Builder b(41);
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
      EXPECT_EQ(count_ops(rewritten.graph, "", "InstanceNormalization"), 0) << what;
      EXPECT_EQ(count_ops(rewritten.graph, kNhwcDomain, kGroupNormOp), 1) << what;
      EXPECT_EQ(count_ops(rewritten.graph, "", "Shape"), 0) << what;  // Shape(x) went with the view
      EXPECT_EQ(count_ops(rewritten.graph, "", "Mul") + count_ops(rewritten.graph, "", "Add"), 0) << what;
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
    EXPECT_EQ(count_ops(m.graph, "", "InstanceNormalization"), 1) << what;
  }
  Model scalar_gamma = group_norm_net(4, 1.0f, false, {}, {1});
  Model rewritten = scalar_gamma;
  passes::write_value_info(rewritten.graph, passes::infer_shapes(rewritten));
  auto stats = apply_nhwc_layout(rewritten.graph, rewritten.opset_imports);
  ASSERT_TRUE(stats.is_ok());
  EXPECT_EQ(stats->group_norms, 1);
  EXPECT_EQ(count_ops(rewritten.graph, "", "Mul"), 1);
  EXPECT_EQ(count_ops(rewritten.graph, "", "Add"), 1);
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
  Builder b(11);
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
}  // namespace xonnx
