// The layout pass's residual Conv (fuse_residual_add): a Conv whose output only an Add reads
// takes the Add's other input as Z, and the Relu / Clip after the sum as its output range
// (runtime/ops/common/residual.h).
//  - the kernels: com.xonnx.nhwc Conv with Z on every backend (own AVX-512, XNNPACK) against
//    its reference twin, NaN and inf included, and a Z that broadcasts (the twin's);
//  - the rewrite: ResNet blocks (identity and projection shortcut, the shortcut's Conv after
//    the block's) lose their Add and Relu, agree with the reference kernels, and give the same
//    bits as the same graph without the rewrite (an extra graph output prevents it).
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "runtime/exec/session.h"
#include "runtime/ops/internal_ops.h"
#include "runtime/ops/registry.h"
#include "runtime/passes/layout_nhwc.h"
#include "tests/unit/backend_test_util.h"
#include "tests/unit/graph_builder.h"
#include "tests/unit/test_optimized_common.h"

namespace xonnx {
namespace {

using backendtest::Check;
using backendtest::cst;
using backendtest::diff_all;
using backendtest::In;
using backendtest::rand_tensor;
using backendtest::Runs;
using backendtest::var;
using testing::attr_float;
using testing::attr_int;
using testing::attr_ints;

struct ConvCase {
  int64_t n, h, w, c, m, k, stride;
};

// X [N, H, W, C], W [M, C, k, k] (constant), B [M], Z [N, OH, OW, M] unless `z_shape` is given.
std::vector<In> residual_inputs(const ConvCase& p, uint32_t seed, Shape z_shape = {}) {
  const int64_t pad = p.k / 2;
  const int64_t oh = (p.h + 2 * pad - p.k) / p.stride + 1, ow = (p.w + 2 * pad - p.k) / p.stride + 1;
  if (z_shape.empty()) z_shape = {p.n, oh, ow, p.m};
  return {var(rand_tensor({p.n, p.h, p.w, p.c}, seed)), cst(rand_tensor({p.m, p.c, p.k, p.k}, seed + 1, -0.5f, 0.5f)),
          cst(rand_tensor({p.m}, seed + 2)), var(rand_tensor(z_shape, seed + 3))};
}

std::vector<Attribute> conv_attrs(const ConvCase& p, bool relu) {
  const int64_t pad = p.k / 2;
  std::vector<Attribute> a = {attr_ints("kernel_shape", {p.k, p.k}), attr_ints("pads", {pad, pad, pad, pad}),
                              attr_ints("strides", {p.stride, p.stride})};
  if (relu) a.push_back(attr_float("activation_min", 0.0f));
  return a;
}

const backendtest::Op kNhwcConv("Conv", kNhwcDomain, 11);
const backendtest::Tolerance kTol{1e-4, 1e-5};  // the twin runs the ONNX reference Conv's sum order

TEST(ResidualConv, EveryBackendAgreesWithTheTwin) {
  uint32_t seed = 1;
  // 1x1, 3x3 (Winograd on the own path), strided, a tail of channels past a 32-wide panel.
  for (const ConvCase& p : {ConvCase{1, 7, 9, 16, 32, 1, 1}, ConvCase{2, 8, 8, 24, 40, 3, 1},
                            ConvCase{1, 13, 11, 8, 36, 3, 2}, ConvCase{1, 5, 5, 64, 128, 3, 1}}) {
    for (bool relu : {false, true}) {
      const std::string at = "k " + std::to_string(p.k) + " stride " + std::to_string(p.stride) + " m " +
                             std::to_string(p.m) + (relu ? " relu" : "");
      diff_all(kNhwcConv, residual_inputs(p, seed), conv_attrs(p, relu), Check(Runs::kMay, Runs::kMust, kTol), at);
      std::vector<In> specials = residual_inputs(p, seed + 10);
      specials[3].t = backendtest::with_specials(specials[3].t);  // NaN / inf in Z: kept, clamped as Relu
      diff_all(kNhwcConv, specials, conv_attrs(p, relu), Check(Runs::kMay, Runs::kMay, kTol), "NaN / inf in Z, " + at);
      seed += 20;
    }
  }
}

TEST(ResidualConv, WithoutBias) {  // inputs X, W, "", Z
  for (const ConvCase& p : {ConvCase{1, 6, 7, 16, 48, 1, 1}, ConvCase{1, 9, 8, 8, 32, 3, 1}}) {
    std::vector<In> in = residual_inputs(p, 60);
    in[2] = In{};
    diff_all(kNhwcConv, in, conv_attrs(p, true), Check(Runs::kMay, Runs::kMust, kTol),
             "no bias, k " + std::to_string(p.k));
  }
}

TEST(ResidualConv, ABroadcastingZIsTheTwinsAsTheAddWas) {
  const ConvCase p{1, 6, 5, 8, 16, 3, 1};
  // Z per image and channel: the output keeps the Conv's shape.
  diff_all(kNhwcConv, residual_inputs(p, 3, {1, 1, 1, 16}), conv_attrs(p, true), Check(Runs::kNot, Runs::kNot, kTol),
           "Z [1, 1, 1, M]");
  // A 1x1 map plus a larger Z: the output takes Z's shape.
  const ConvCase unit{1, 1, 1, 8, 16, 1, 1};
  diff_all(kNhwcConv, residual_inputs(unit, 4, {1, 4, 3, 16}), conv_attrs(unit, false),
           Check(Runs::kNot, Runs::kNot, kTol), "Conv [1, 1, 1, M] + Z [1, 4, 3, M]");
  // Shapes that do not broadcast: every backend reports the reference's error.
  diff_all(kNhwcConv, residual_inputs(p, 5, {1, 6, 5, 15}), conv_attrs(p, false), Check(Runs::kNot, Runs::kNot, kTol),
           "Z of 15 channels for 16");
}

struct ResBlock {
  bool projection = false;  // the shortcut is a strided 1x1 Conv, computed after the block's Convs
  bool expose_sum = false;  // the block's last Conv output is a graph output too: no rewrite
  int64_t c = 16, m = 16;
};

// x -> stem Conv + Relu -> 3x3 Conv + Relu -> 3x3 Conv -> Add(shortcut) -> Relu -> "y" (a ResNet
// basic block after a stem).
// A Conv of `in` with random weights [cout, cin, k, k] and bias (seeds `seed` on, moved past
// them), "same" padding and stride s.
std::string random_conv(testing::GraphBuilder& b, uint32_t& seed, const std::string& in, int64_t cin, int64_t cout,
                        int64_t k, int64_t s = 1) {
  const int64_t pad = k / 2;
  return b.node(
      "Conv",
      {in, b.constant(rand_tensor({cout, cin, k, k}, seed++, -0.3f, 0.3f)), b.constant(rand_tensor({cout}, seed++))},
      {attr_ints("kernel_shape", {k, k}), attr_ints("pads", {pad, pad, pad, pad}), attr_ints("strides", {s, s})});
}

Model res_block(const ResBlock& r) {
  testing::GraphBuilder b;
  b.input("x", 4);
  uint32_t seed = 40;
  const int64_t stride = r.projection ? 2 : 1;
  const auto conv = [&](const std::string& in, int64_t cin, int64_t cout, int64_t k, int64_t s) {
    return random_conv(b, seed, in, cin, cout, k, s);
  };
  const std::string in = b.node("Relu", {conv("x", r.c, r.c, 3, 1)});  // the stem: the block's input in NHWC
  const std::string a = b.node("Relu", {conv(in, r.c, r.m, 3, stride)});
  const std::string main = conv(a, r.m, r.m, 3, 1);
  if (r.expose_sum) b.output(main);
  const std::string shortcut = r.projection ? conv(in, r.c, r.m, 1, stride) : in;
  b.node("Relu", {b.node("Add", {shortcut, main})}, {}, "y");
  b.output("y");
  return b.model;
}

Result<std::unique_ptr<Session>> res_session(const Model& m, int threads, bool reference) {
  SessionOptions o;
  o.num_threads = threads;
  o.disable_xnnpack = reference;  // no layout pass: the ONNX reference kernels
  return Session::create_from_model(Model(m), o);
}

int count(const Graph& g, const std::string& domain, const std::string& op) {
  int n = 0;
  for (const Node& node : g.nodes) n += node.domain == domain && node.op_type == op;
  return n;
}

TEST(ResidualConv, LayoutPassMergesTheAddAndItsRelu) {
  NhwcLayoutOptions on;
  on.fuse_residual_add = true;
  for (bool projection : {false, true}) {
    ResBlock r;
    r.projection = projection;
    r.m = projection ? 32 : 16;
    Model m = res_block(r);
    auto s = apply_nhwc_layout(m.graph, m.opset_imports, on);
    ASSERT_TRUE(s.is_ok()) << s.status().to_string();
    EXPECT_EQ(s->residual, 1);
    EXPECT_EQ(count(m.graph, "", "Add"), 0);
    EXPECT_EQ(count(m.graph, "", "Relu"), 0);
    int with_z = 0;
    for (const Node& n : m.graph.nodes) {
      if (n.domain != kNhwcDomain || n.op_type != "Conv" || n.inputs.size() != 4) continue;
      ++with_z;
      ASSERT_NE(n.find_attr("activation_min"), nullptr);
      EXPECT_EQ(n.find_attr("activation_min")->f, 0.0f);
      EXPECT_EQ(n.outputs[0].rfind("y", 0), 0u) << n.outputs[0];  // writes y's NHWC twin
    }
    EXPECT_EQ(with_z, 1);
  }
  ResBlock exposed;
  exposed.expose_sum = true;
  Model m = res_block(exposed);
  auto s = apply_nhwc_layout(m.graph, m.opset_imports, on);
  ASSERT_TRUE(s.is_ok());
  EXPECT_EQ(s->residual, 0);
  EXPECT_EQ(count(m.graph, "", "Add"), 1);
}

TEST(ResidualConv, BlocksAgreeWithTheReferenceAndTheUnmergedGraph) {
  for (bool projection : {false, true}) {
    for (int threads : {1, 2}) {
      ResBlock r, exposed;
      r.projection = exposed.projection = projection;
      r.m = exposed.m = projection ? 32 : 16;
      exposed.expose_sum = true;
      SCOPED_TRACE(std::string(projection ? "projection" : "identity") + " threads " + std::to_string(threads));
      auto ref = res_session(res_block(r), threads, true);
      auto fast = res_session(res_block(r), threads, false);
      auto unmerged = res_session(res_block(exposed), threads, false);
      ASSERT_TRUE(ref.is_ok() && fast.is_ok() && unmerged.is_ok());
      EXPECT_EQ(count((*fast)->model().graph, "", "Add"),
                fast_layout_fusions(OpRegistry::global()).fuse_residual_add ? 0 : 1);
      uint32_t seed = 7;
      for (Shape shape : {Shape{1, 16, 8, 8}, Shape{2, 16, 13, 7}, Shape{1, 16, 30, 31}}) {
        Tensor x = rand_tensor(shape, seed++);
        x.data<float>()[5] = std::numeric_limits<float>::quiet_NaN();
        auto want = (*ref)->run({Value(x)});
        auto got = (*fast)->run({Value(x)});
        auto same = (*unmerged)->run({Value(x)});
        ASSERT_TRUE(want.is_ok() && got.is_ok() && same.is_ok());
        const Tensor& g = (*got)[0].tensor();
        backendtest::expect_close(g, (*want)[0].tensor(), {1e-4, 1e-5}, "vs reference");
        const Tensor& u = (*same)[1].tensor();  // y: after the exposed sum
        ASSERT_EQ(g.shape(), u.shape());
        EXPECT_TRUE(opttest::same_bits(std::vector<float>(g.data<float>(), g.data<float>() + g.numel()),
                                       std::vector<float>(u.data<float>(), u.data<float>() + u.numel())))
            << "vs the unmerged graph at " << shape_to_string(shape);
      }
    }
  }
}

// How a bottleneck's shortcut Z is used besides the residual 1x1 Conv that adds it.
enum class ZUse { kDead, kGraphOutput, kReadAfter, kGraphInput };

// x -> 1x1 Conv + Relu -> "a" -> 3x3 Conv + Relu -> 1x1 Conv -> Add(a) -> Relu -> "y": the 1x1
// Conv takes Z = a, which nothing reads after it (kDead) and which it may write Y over; or a is
// also a graph output, read again after the block, or the caller's input "z".
Model bottleneck(ZUse use, int64_t c) {
  testing::GraphBuilder b;
  b.input("x", 4);
  uint32_t seed = 60;
  const auto conv = [&](const std::string& in, int64_t k) { return random_conv(b, seed, in, c, c, k); };
  std::string a = "z";
  if (use == ZUse::kGraphInput) {
    b.input("z", 4);
  } else {
    a = b.node("Relu", {conv("x", 1)}, {}, "a");
  }
  const std::string mid = b.node("Relu", {conv(use == ZUse::kGraphInput ? "x" : a, 3)});
  b.node("Relu", {b.node("Add", {conv(mid, 1), a})}, {}, "y");
  b.output("y");
  if (use == ZUse::kGraphOutput) b.output(a);
  if (use == ZUse::kReadAfter) {
    b.node("Mul", {a, "y"}, {}, "ay");
    b.output("ay");
  }
  return b.model;
}

TEST(ResidualConv, WritesOverADeadZOnlyAndKeepsEveryOtherValue) {
  const struct {
    ZUse use;
    const char* what;
  } cases[] = {{ZUse::kDead, "Z dead after the Conv"},
               {ZUse::kGraphOutput, "Z a graph output"},
               {ZUse::kReadAfter, "Z read after the Conv"},
               {ZUse::kGraphInput, "Z the caller's input"}};
  for (const auto& k : cases) {
    for (int64_t c : {16, 40}) {
      for (int threads : {1, 2}) {
        SCOPED_TRACE(std::string(k.what) + ", " + std::to_string(c) + " channels, threads " + std::to_string(threads));
        auto ref = res_session(bottleneck(k.use, c), threads, true);
        auto fast = res_session(bottleneck(k.use, c), threads, false);
        ASSERT_TRUE(ref.is_ok() && fast.is_ok());
        uint32_t seed = 90;
        for (Shape shape : {Shape{1, c, 9, 11}, Shape{2, c, 16, 16}}) {
          std::vector<Value> inputs = {Value(rand_tensor(shape, seed++))};
          if (k.use == ZUse::kGraphInput) inputs.push_back(Value(rand_tensor(shape, seed++)));
          opttest::expect_runs_agree_and_keep_inputs(**ref, **fast, inputs, kTol);
        }
      }
    }
  }
}

// `blocks` bottlenecks on the graph input itself: x -> 1x1 Conv + Relu -> 1x1 Conv -> Add(x) ->
// Relu -> ..., the first shortcut the caller's x, which the first Conv reads as well (a model
// cut out of a larger one, a 1x1 Conv stack with no stem).
Model residual_chain_on_input(int blocks, int64_t c, int64_t m) {
  testing::GraphBuilder b;
  b.input("x", 4);
  uint32_t seed = 120;
  std::string in = "x";
  for (int k = 0; k < blocks; ++k) {
    const std::string mid = b.node("Relu", {random_conv(b, seed, in, c, m, 1)});
    const std::string sum = b.node("Add", {random_conv(b, seed, mid, m, c, 1), in});
    in = b.node("Relu", {sum}, {}, k + 1 == blocks ? "y" : "");
  }
  b.output("y");
  return b.model;
}

TEST(ResidualConv, AShortcutFromTheGraphInputKeepsTheChainInTheRegion) {
  // Before: x's Add stayed NCHW (x was no region value), so every block's sum left the region and
  // came back: a ToNCHW and a ToNHWC per block. Now the Add reads x's twin, which the first Conv
  // reads anyway: one conversion in, one out.
  NhwcLayoutOptions on;
  on.fuse_residual_add = true;
  Model m = residual_chain_on_input(3, 16, 32);
  auto s = apply_nhwc_layout(m.graph, m.opset_imports, on);
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  EXPECT_EQ(s->to_nhwc, 1);
  EXPECT_EQ(s->to_nchw, 1);
  EXPECT_EQ(s->residual, 3);
  EXPECT_EQ(count(m.graph, "", "Add"), 0);
  EXPECT_EQ(count(m.graph, "", "Relu"), 0);
  for (const Node& n : m.graph.nodes) {
    if (n.op_type == "Conv" && n.inputs.size() > kConvResidualInput) {
      EXPECT_NE(n.inputs[kConvResidualInput], "x") << n.name << " reads x in NCHW";
    }
  }
  // Without the residual fusion the Adds still join the region, reading x's twin.
  Model plain = residual_chain_on_input(2, 16, 32);
  auto p = apply_nhwc_layout(plain.graph, plain.opset_imports, NhwcLayoutOptions{});
  ASSERT_TRUE(p.is_ok());
  EXPECT_EQ(p->to_nhwc, 1);
  EXPECT_EQ(p->to_nchw, 1);
  EXPECT_EQ(count(plain.graph, "", "Add"), 2);
  for (int threads : {1, 2}) {
    for (int64_t c : {16, 40}) {
      SCOPED_TRACE(std::to_string(c) + " channels, threads " + std::to_string(threads));
      auto ref = res_session(residual_chain_on_input(3, c, 24), threads, true);
      auto fast = res_session(residual_chain_on_input(3, c, 24), threads, false);
      ASSERT_TRUE(ref.is_ok() && fast.is_ok());
      uint32_t seed = 130;
      for (Shape shape : {Shape{1, c, 9, 11}, Shape{2, c, 16, 16}}) {  // x must come back unchanged
        opttest::expect_runs_agree_and_keep_inputs(**ref, **fast, {Value(rand_tensor(shape, seed++))}, kTol);
      }
    }
  }
}

TEST(ResidualConv, AGlobalPoolPlusTheInputIsNoUnitMap) {
  // y = GlobalAveragePool(Conv(x)) + x: the pooled operand is [N, C, 1, 1], but the sum is x's
  // full map, so its exit must transpose (a unit map's exit is a free reshape).
  testing::GraphBuilder b;
  b.input("x", 4);
  uint32_t seed = 150;
  b.node("Add", {b.node("GlobalAveragePool", {random_conv(b, seed, "x", 16, 16, 3)}), "x"}, {}, "y");
  b.output("y");
  Model m = b.model;
  auto s = apply_nhwc_layout(m.graph, m.opset_imports, NhwcLayoutOptions{});
  ASSERT_TRUE(s.is_ok());
  EXPECT_EQ(s->to_nchw, 1);
  EXPECT_EQ(s->free_boundaries, 0);
  for (int threads : {1, 2}) {
    auto ref = res_session(b.model, threads, true);
    auto fast = res_session(b.model, threads, false);
    ASSERT_TRUE(ref.is_ok() && fast.is_ok());
    opttest::expect_runs_agree_and_keep_inputs(**ref, **fast, {Value(rand_tensor({2, 16, 5, 7}, 151))}, kTol);
  }
}

}  // namespace
}  // namespace xonnx
