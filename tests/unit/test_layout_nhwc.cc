// The NHWC layout pass (runtime/passes/layout_nhwc.h): graph rewrites (which nodes become NHWC,
// where the boundaries go, what is fused). Differential runs of whole small CNNs with the pass
// are in test_layout_nhwc_runs.cc.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/ops/internal_ops.h"
#include "runtime/passes/layout_nhwc.h"
#include "tests/unit/layout_nhwc_models.h"

namespace xonnx {
namespace nhwc_models {
namespace {

NhwcLayoutStats rewrite(ConvNetBuilder& b) {
  auto stats = apply_nhwc_layout(b.model.graph, b.model.opset_imports);
  EXPECT_TRUE(stats.is_ok()) << stats.status().to_string();
  return stats.is_ok() ? *stats : NhwcLayoutStats{};
}

TEST(LayoutNhwc, ConvReluChainIsOneRegionWithFusedActivations) {
  ConvNetBuilder b;
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
  EXPECT_EQ(count_domain_ops(g, kNhwcDomain, "Conv"), 2);
  EXPECT_EQ(count_domain_ops(g, "", "Relu") + count_domain_ops(g, "", "Clip") + count_domain_ops(g, "", "Conv"), 0);
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
  ConvNetBuilder b;
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
  ASSERT_EQ(count_domain_ops(g, kNhwcDomain, "Conv"), 2);
  // The first Conv reads the input's twin, the second the first's output twin.
  const Node* convs[2] = {nullptr, nullptr};
  for (const Node& n : g.nodes)
    if (n.domain == kNhwcDomain && n.op_type == "Conv") convs[convs[0] ? 1 : 0] = &n;
  EXPECT_EQ(dims_of(convs[0]->inputs[0]), (std::vector<std::string>{"2", "height", "7", "3"}));
  EXPECT_EQ(dims_of(convs[1]->inputs[0]), (std::vector<std::string>{"2", "height", "7", "8"}));
  EXPECT_TRUE(dims_of(convs[1]->outputs[0]).empty()) << "no declared type, no twin type";
}

TEST(LayoutNhwc, ResidualAddStaysInTheRegion) {
  ConvNetBuilder b;
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
  EXPECT_EQ(count_domain_ops(b.model.graph, "", "Add"), 1);
}

TEST(LayoutNhwc, SqueezeExciteBlockAndFlattenAfterGlobalPool) {
  ConvNetBuilder b;
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
  ConvNetBuilder b;
  b.input("x");
  const std::string a = b.node("Relu", {b.conv("x", 3, 5, 3)});
  const std::string sm = b.node("Softmax", {a}, {attr_int("axis", 1)});  // not layout-agnostic
  b.node("Relu", {b.conv(sm, 5, 5, 1)}, {}, "y");
  b.output("y");
  const NhwcLayoutStats s = rewrite(b);
  EXPECT_EQ(s.to_nhwc, 2);
  EXPECT_EQ(s.to_nchw, 2);
  EXPECT_EQ(count_domain_ops(b.model.graph, "", "Softmax"), 1);
}

TEST(LayoutNhwc, GraphOutputInsideARegionIsNotFusedAndGetsItsOwnExit) {
  ConvNetBuilder b;
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
  EXPECT_EQ(count_domain_ops(b.model.graph, kNhwcDomain, "MaxPool"), 1);
}

TEST(LayoutNhwc, ComputedWeightsAndUnknownRanksStayNchw) {
  ConvNetBuilder b;
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

TEST(LayoutNhwc, ConvTransposeJoinsTheRegion) {
  NhwcLayoutOptions on;
  on.nhwc_conv_transpose = true;
  Model m = unet_level(8, 2);
  auto s = apply_nhwc_layout(m.graph, m.opset_imports, on);
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  EXPECT_EQ(count_domain_ops(m.graph, kNhwcDomain, "ConvTranspose"), 1);
  EXPECT_EQ(s->to_nhwc, 1);  // x
  EXPECT_EQ(s->to_nchw, 1);  // y
  // Without an NHWC kernel for it, it stays NCHW, with boundaries around it.
  Model off = unet_level(8, 2);
  s = apply_nhwc_layout(off.graph, off.opset_imports, NhwcLayoutOptions{});
  ASSERT_TRUE(s.is_ok());
  EXPECT_EQ(count_domain_ops(off.graph, "", "ConvTranspose"), 1);
  EXPECT_GE(s->to_nchw, 2);
}

TEST(LayoutNhwc, ConvTransposeOnlyLeavingTheRegionStaysNchw) {
  // Its output (4 times its input's pixels) leaves the region: the boundary stays before it.
  NhwcLayoutOptions on;
  on.nhwc_conv_transpose = true;
  ConvNetBuilder b;
  b.input("x");
  b.node("ConvTranspose",
         {b.node("Relu", {b.conv("x", 3, 8, 3)}), b.constant(rand_tensor({8, 4, 2, 2}, 5)),
          b.constant(rand_tensor({4}, 6))},
         {attr_ints("strides", {2, 2})}, "y");
  b.output("y");
  auto s = apply_nhwc_layout(b.model.graph, b.model.opset_imports, on);
  ASSERT_TRUE(s.is_ok());
  EXPECT_EQ(count_domain_ops(b.model.graph, "", "ConvTranspose"), 1);
  EXPECT_EQ(count_domain_ops(b.model.graph, kNhwcDomain, "ConvTranspose"), 0);
}

TEST(LayoutNhwc, ShapeOfARegionValueReadsItsTwin) {
  for (bool dims_output : {false, true}) {
    Model m = resize_to_skip(dims_output);
    auto s = apply_nhwc_layout(m.graph, m.opset_imports);
    ASSERT_TRUE(s.is_ok()) << s.status().to_string();
    EXPECT_EQ(s->shapes, dims_output ? 2 : 1);
    EXPECT_EQ(s->to_nchw, 1);  // y only: the skip never leaves the region
    EXPECT_EQ(count_domain_ops(m.graph, "", "Gather"), s->shapes);
  }
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
  ConvNetBuilder b;
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
  ConvNetBuilder b;
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
  EXPECT_EQ(count_domain_ops(g, "", "Swish"), 0);
  EXPECT_EQ(count_domain_ops(g, "", "HardSwish"), 1);
  EXPECT_EQ(count_domain_ops(g, "", "Sigmoid"), 1);
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
  ConvNetBuilder b;
  b.input("x");
  const std::string c = b.conv("x", 3, 4, 3);
  b.node("Mul", {b.node("HardSigmoid", {c}, {attr_float("alpha", 1.0f / 6.0f)}), c}, {}, "y");
  b.output("y");
  rewrite(b);
  const Graph& g = b.model.graph;
  EXPECT_EQ(count_domain_ops(g, "", "HardSwish"), 0);
  int fused = 0;
  for (const Node& n : g.nodes) {
    const Attribute* act = n.find_attr("activation");
    if (n.op_type == "Conv" && act && act->s == "HardSwish") ++fused;
  }
  EXPECT_EQ(fused, 1);
}

TEST(LayoutNhwc, SwishNotAfterAConvStaysAnOp) {
  ConvNetBuilder b;
  b.input("x");
  const std::string c = b.conv("x", 3, 4, 3);
  const std::string a = b.node("Add", {c, c});
  b.node("Mul", {a, b.node("Sigmoid", {a})}, {}, "y");
  b.output("y");
  const NhwcLayoutStats s = rewrite(b);
  EXPECT_EQ(s.gated, 1);
  const Graph& g = b.model.graph;
  EXPECT_EQ(count_domain_ops(g, "", "Swish"), 1);
  for (const Node& n : g.nodes) {
    if (n.op_type == "Swish") {
      EXPECT_EQ(n.opset, 24);
    }
    EXPECT_EQ(n.find_attr("activation"), nullptr) << n.op_type;
  }
}

TEST(LayoutNhwc, BatchNormAfterAConcatStaysInTheRegion) {
  Model m = dense_block(4, 3, 3);
  auto s = apply_nhwc_layout(m.graph, m.opset_imports);
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  EXPECT_EQ(s->to_nhwc, 1);
  EXPECT_EQ(s->to_nchw, 1);  // the pooled output only
  EXPECT_EQ(count_domain_ops(m.graph, kNhwcDomain, "BatchNormalization"), 3);
  EXPECT_EQ(count_domain_ops(m.graph, "", "BatchNormalization") + count_domain_ops(m.graph, "", "Relu"), 0);
  for (const Node& n : m.graph.nodes) {
    if (n.op_type == "BatchNormalization") {
      EXPECT_NE(n.find_attr("activation_min"), nullptr);
    }
  }
}

}  // namespace
}  // namespace nhwc_models
}  // namespace xonnx
