// Models of the NHWC layout pass's tests (runtime/passes/layout_nhwc.h): small CNN pieces that
// both the rewrite tests (test_layout_nhwc.cc) and the differential runs
// (test_layout_nhwc_runs.cc) build. Names are distinct from other tests' helpers: the unit
// tests are a unity build, where test files share one translation unit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/ir/graph.h"
#include "tests/unit/graph_builder.h"
#include "tests/unit/test_xnnpack_common.h"

namespace xonnx {
namespace nhwc_models {

using namespace xnntest;

// The shared graph builder, plus random float convolutions; inputs are 4-D (rank certain).
struct ConvNetBuilder : testing::GraphBuilder {
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

inline int count_domain_ops(const Graph& g, const std::string& domain, const std::string& op) {
  int n = 0;
  for (const Node& node : g.nodes) n += node.domain == domain && node.op_type == op;
  return n;
}

// A U-Net level: x -> Conv + Relu ("skip") -> MaxPool -> Conv -> ConvTranspose (k x k, stride
// 2, U-Net's upsampling when k = 2; pads 1 and output_padding 1 when k = 3) + Relu -> Concat
// with the skip -> Conv -> "y".
inline Model unet_level(int64_t c, int64_t k) {
  ConvNetBuilder b;
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

// A decoder level that resizes to its skip's size (torch's F.interpolate(x, size=skip.shape[-2:])):
// x -> Conv + Relu ("skip") -> MaxPool -> Conv -> Resize(sizes = Shape(skip)) -> Concat with the
// skip -> Conv -> "y"; and the skip's H, W as "dims" (Shape with start 2, opset 15).
inline Model resize_to_skip(bool dims_output) {
  ConvNetBuilder b(17);
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

// x -> Conv + Relu -> `op` over NCHW `axes` (an attribute, or input 1 at opset 18) -> "y".
struct Reduction {
  const char* op;
  std::vector<int64_t> axes;
  int64_t keepdims;
  int64_t opset;
  bool reads_twin;  // the result has the same memory in both layouts
};
inline Model reduce_after_conv(const Reduction& r) {
  ConvNetBuilder b(r.opset);
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
inline const std::vector<Reduction>& reductions() {
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

// DenseNet's dense layer: BN -> ReLU -> Conv on the concatenation of the earlier features. The
// BatchNormalization (constant parameters) joins the region with the ReLU fused into it, so
// the concatenations never leave NHWC.
inline Model dense_block(int64_t c, int64_t growth, int layers) {
  ConvNetBuilder b;
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

}  // namespace nhwc_models
}  // namespace xonnx
