// QDQ convolutions end to end through Session: QuantizeLinear -> DequantizeLinear -> Conv (DQ of
// int8 per-channel weights, DQ of an int32 bias) [-> Relu] -> QuantizeLinear -> DequantizeLinear,
// run three ways: (a) default (QDQ fusion, NHWC layout, the own VNNI QLinearConv or the own
// AVX-512 depthwise one where the CPU has it), (b) disable_optimized (XNNPACK's qc8 kernel), (c) disable_xnnpack (the float QDQ
// reference). (a) and (b) agree within one quantization step, (a) and (c) within two.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "runtime/exec/session.h"
#include "runtime/ops/optimized/opt_util.h"
#include "runtime/ops/optimized/qdwconv.h"
#include "runtime/ops/optimized/qgemm.h"
#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace {

using testing::attr_int;
using testing::attr_ints;
using testing::attr_string;

struct ConvCase {
  std::string what;
  int64_t n = 1, c = 3, m = 8, h = 9, w = 7, kh = 3, kw = 3, group = 1;
  int64_t stride = 1, dilation = 1, pad = 1;
  std::string auto_pad;  // empty: explicit pads
  bool relu = false;
  int y_zero_point = 128;        // uint8, before the signed pass
  bool pin_input_codes = false;  // the input Q is also a graph output: it stays uint8
  bool expect_own_kernel = true;
  bool depthwise = false;  // the own kernel is the depthwise one (qlinear_depthwise.cc, AVX-512)
};

struct Built {
  Model model;
  float y_scale = 0;
};

Tensor scalar_f(float v) { return Tensor::scalar<float>(v); }

Built build(const ConvCase& k) {
  Built b;
  Model& model = b.model;
  model.ir_version = 8;
  model.opset_imports[""] = 13;
  Graph& g = model.graph;
  int counter = 0;
  auto init = [&](Tensor t) {
    const std::string name = "c" + std::to_string(counter++);
    g.initializers.push_back({name, std::move(t)});
    return name;
  };
  auto node = [&](const std::string& op, std::vector<std::string> in, std::vector<Attribute> attrs = {},
                  std::string out = "") {
    Node n;
    n.op_type = op;
    n.name = op + std::to_string(counter);
    n.outputs = {out.empty() ? "v" + std::to_string(counter) : out};
    ++counter;
    n.inputs = std::move(in);
    n.attributes = std::move(attrs);
    g.nodes.push_back(n);
    return g.nodes.back().outputs[0];
  };
  ValueInfo x;
  x.name = "x";
  x.type.kind = TypeInfo::Kind::kTensor;
  x.type.elem_type = DataType::kFloat;
  x.type.has_shape = true;
  for (int64_t d : {k.n, k.c, k.h, k.w}) x.type.dims.push_back(Dim{d, ""});
  g.inputs.push_back(x);

  std::mt19937 gen(static_cast<uint32_t>(k.c * 131 + k.m * 17 + k.kh));
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  std::uniform_int_distribution<int> code(-127, 127);
  // Input in [-1, 1]: uint8 with zero point 128.
  const float xs = 2.0f / 255.0f;
  const std::string xs_name = init(scalar_f(xs)), xz_name = init(Tensor::scalar<uint8_t>(128));
  const std::string xq = node("QuantizeLinear", {"x", xs_name, xz_name}, {}, "x_codes");
  const std::string xd = node("DequantizeLinear", {xq, xs_name, xz_name});
  // Weights ~ U(-1, 1) / sqrt(fan-in) in int8 codes with a per-channel scale.
  const int64_t cg = k.c / k.group, fan_in = cg * k.kh * k.kw;
  std::vector<int8_t> w(static_cast<size_t>(k.m * fan_in));
  for (int8_t& v : w) v = static_cast<int8_t>(code(gen));
  std::vector<float> ws(static_cast<size_t>(k.m)), bs(static_cast<size_t>(k.m));
  std::vector<int32_t> bias(static_cast<size_t>(k.m));
  for (int64_t o = 0; o < k.m; ++o) {
    const size_t i = static_cast<size_t>(o);
    ws[i] = (0.5f + 0.5f * unit(gen)) / (127.0f * std::sqrt(static_cast<float>(fan_in)));
    bs[i] = xs * ws[i];
    bias[i] = static_cast<int32_t>(std::lround((unit(gen) - 0.5f) * 0.4f / bs[i]));
  }
  const std::string wd =
      node("DequantizeLinear",
           {init(Tensor::from_vector<int8_t>(w, {k.m, cg, k.kh, k.kw})), init(Tensor::from_vector<float>(ws, {k.m})),
            init(Tensor::from_vector<int8_t>(std::vector<int8_t>(static_cast<size_t>(k.m), 0), {k.m}))},
           {attr_int("axis", 0)});
  const std::string bd =
      node("DequantizeLinear",
           {init(Tensor::from_vector<int32_t>(bias, {k.m})), init(Tensor::from_vector<float>(bs, {k.m}))},
           {attr_int("axis", 0)});
  std::vector<Attribute> attrs = {attr_ints("kernel_shape", {k.kh, k.kw}), attr_ints("strides", {k.stride, k.stride}),
                                  attr_ints("dilations", {k.dilation, k.dilation}), attr_int("group", k.group)};
  if (k.auto_pad.empty()) {
    attrs.push_back(attr_ints("pads", {k.pad, k.pad, k.pad, k.pad}));
  } else {
    attrs.push_back(attr_string("auto_pad", k.auto_pad));
  }
  std::string y = node("Conv", {xd, wd, bd}, attrs);
  if (k.relu) y = node("Relu", {y});
  // Output: ~[-1, 1] around zero point 128, or [0, 1] from zero point 0 after a Relu.
  b.y_scale = k.y_zero_point == 0 ? 1.0f / 255.0f : 1.0f / 128.0f;
  const std::string ys_name = init(scalar_f(b.y_scale)),
                    yz_name = init(Tensor::scalar<uint8_t>(static_cast<uint8_t>(k.y_zero_point)));
  node("DequantizeLinear", {node("QuantizeLinear", {y, ys_name, yz_name}), ys_name, yz_name}, {}, "y");
  ValueInfo out;
  out.name = "y";
  g.outputs.push_back(out);
  if (k.pin_input_codes) {
    ValueInfo codes;
    codes.name = "x_codes";
    g.outputs.push_back(codes);
  }
  return b;
}

Tensor input_for(const ConvCase& k) {
  std::mt19937 gen(static_cast<uint32_t>(k.h * 1000 + k.w));
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(k.n * k.c * k.h * k.w));
  for (float& f : v) f = dist(gen);
  return Tensor::from_vector<float>(v, {k.n, k.c, k.h, k.w});
}

struct Ran {
  Tensor y;
  std::vector<Profiler::Entry> conv_entries;  // the QLinearConv nodes that ran
};

Ran run(const ConvCase& k, SessionOptions options) {
  Ran r;
  auto s = Session::create_from_model(build(k).model, options);
  EXPECT_TRUE(s.is_ok()) << s.status().to_string();
  if (!s.is_ok()) return r;
  Profiler profiler;
  (*s)->set_profiler(&profiler);
  auto out = (*s)->run({Value(input_for(k))});
  (*s)->set_profiler(nullptr);
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  if (!out.is_ok()) return r;
  r.y = (*out)[0].tensor();
  for (const Profiler::Entry& e : profiler.entries()) {
    const std::string& op = e.op_type;
    if (op.size() >= 11 && op.compare(op.size() - 11, 11, "QLinearConv") == 0) r.conv_entries.push_back(e);
  }
  return r;
}

// Largest difference in quantization steps; also counts the elements that differ.
double max_steps(const Tensor& a, const Tensor& b, float y_scale, int64_t* differing) {
  double worst = 0;
  *differing = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double d = std::fabs(double(a.data<float>()[i]) - double(b.data<float>()[i])) / y_scale;
    worst = std::max(worst, d);
    *differing += d > 1e-3;
  }
  return worst;
}

int distinct_levels(const Tensor& y) {
  std::vector<float> v(y.data<float>(), y.data<float>() + y.numel());
  std::sort(v.begin(), v.end());
  return static_cast<int>(std::unique(v.begin(), v.end()) - v.begin());
}

void check(const ConvCase& k) {
  SCOPED_TRACE(k.what);
  const float ys = build(k).y_scale;
  SessionOptions fused, xnnpack_qc8, reference;
  xnnpack_qc8.disable_optimized = true;
  reference.disable_xnnpack = true;
  const uint64_t runs_before = opt::run_count();
  const Ran a = run(k, fused);
  const uint64_t own_runs = opt::run_count() - runs_before;
  const Ran b = run(k, xnnpack_qc8);
  const Ran c = run(k, reference);
  ASSERT_TRUE(a.y.defined() && b.y.defined() && c.y.defined());
  ASSERT_EQ(a.y.shape(), c.y.shape());
  ASSERT_EQ(b.y.shape(), c.y.shape());
  EXPECT_GE(distinct_levels(c.y), std::min<int64_t>(16, c.y.numel() / 4))
      << "degenerate case: the output barely varies";

  int64_t diff_ab = 0, diff_ac = 0;
  EXPECT_LE(max_steps(a.y, b.y, ys, &diff_ab), 1.001) << "fused vs XNNPACK qc8";
  EXPECT_LE(max_steps(a.y, c.y, ys, &diff_ac), 2.001) << "fused vs float QDQ reference";
  // Off-by-one results come from rounding ties and float accumulation: a small minority.
  EXPECT_LE(diff_ab * 10, a.y.numel()) << diff_ab << " of " << a.y.numel() << " differ (fused vs qc8)";
  EXPECT_LE(diff_ac * 5, a.y.numel()) << diff_ac << " of " << a.y.numel() << " differ (fused vs reference)";

  // Which QLinearConv kernel ran.
  EXPECT_TRUE(c.conv_entries.empty()) << "the reference path keeps the QDQ form";
  if (!k.expect_own_kernel) {
    for (const Profiler::Entry& e : a.conv_entries) EXPECT_NE(e.backend, Backend::kOptimized) << e.op_type;
    return;
  }
  ASSERT_EQ(a.conv_entries.size(), 1u) << "the QDQ group was not fused";
  ASSERT_EQ(b.conv_entries.size(), 1u);
  if (!k.pin_input_codes) {  // uint8 activations with per-channel weights are not XNNPACK's (qu8 is per tensor)
    EXPECT_EQ(b.conv_entries[0].backend, Backend::kXnnpack) << "disable_optimized should run XNNPACK's qc8 kernel";
  }
  if (k.depthwise ? opt::qdw_row_fast() == nullptr : opt::qgemm_fast() == nullptr) {
    EXPECT_NE(a.conv_entries[0].backend, Backend::kOptimized);
    return;  // no AVX-512 (depthwise) or AVX512-VNNI: XNNPACK's kernel stands in
  }
  EXPECT_EQ(a.conv_entries[0].backend, Backend::kOptimized) << a.conv_entries[0].op_type;
  EXPECT_GT(own_runs, 0u);
}

TEST(QLinearConvNhwc, Kernel3x3Pads1) {
  ConvCase k;
  k.what = "3x3 pads 1, 3 -> 8";
  check(k);
}

TEST(QLinearConvNhwc, Stride2) {
  ConvCase k;
  k.what = "3x3 stride 2, 13 -> 17";
  k.c = 13;
  k.m = 17;
  k.h = 11;
  k.w = 10;
  k.stride = 2;
  check(k);
}

TEST(QLinearConvNhwc, Dilation2) {
  ConvCase k;
  k.what = "3x3 dilation 2 pads 2, 8 -> 16";
  k.c = 8;
  k.m = 16;
  k.h = 12;
  k.w = 9;
  k.dilation = 2;
  k.pad = 2;
  check(k);
}

TEST(QLinearConvNhwc, PointwiseGatherPath) {
  ConvCase k;
  k.what = "1x1 int8 activations, 13 -> 33";
  k.c = 13;
  k.m = 33;
  k.h = k.w = 10;
  k.kh = k.kw = 1;
  k.pad = 0;
  check(k);
}

// uint8 activations (the input Q is a graph output, so the signed pass leaves it) and a depth
// that is a multiple of 4: the 1x1 kernel reads the input rows in place.
TEST(QLinearConvNhwc, PointwiseInPlacePath) {
  ConvCase k;
  k.what = "1x1 uint8 in place, 64 -> 32";
  k.c = 64;
  k.m = 32;
  k.h = 9;
  k.w = 11;
  k.kh = k.kw = 1;
  k.pad = 0;
  k.pin_input_codes = true;
  check(k);
}

TEST(QLinearConvNhwc, Stem7x7ThreeChannels) {
  ConvCase k;
  k.what = "7x7 stride 2 pads 3, 3 -> 16";
  k.m = 16;
  k.h = k.w = 32;
  k.kh = k.kw = 7;
  k.stride = 2;
  k.pad = 3;
  check(k);
}

TEST(QLinearConvNhwc, GroupedConvolutionIsNotTheOwnKernelsButRight) {
  ConvCase k;
  k.what = "group 2, 8 -> 8";
  k.c = 8;
  k.m = 8;
  k.group = 2;
  k.expect_own_kernel = false;
  check(k);
}

TEST(QLinearConvNhwc, ChannelCounts) {
  for (int64_t c : {1, 3, 13, 64}) {
    for (int64_t m : {1, 3, 13, 64}) {
      ConvCase k;
      k.what = "3x3 " + std::to_string(c) + " -> " + std::to_string(m);
      k.c = c;
      k.m = m;
      k.h = 6;
      k.w = 5;
      check(k);
    }
  }
}

TEST(QLinearConvNhwc, Batch2) {
  ConvCase k;
  k.what = "batch 2, 5 -> 12";
  k.n = 2;
  k.c = 5;
  k.m = 12;
  k.h = 10;
  k.w = 13;  // 130 pixels per image: blocks of 64 rows straddle the images
  check(k);
}

TEST(QLinearConvNhwc, AutoPadSameUpper) {
  ConvCase k;
  k.what = "SAME_UPPER stride 2, 4 -> 8";
  k.c = 4;
  k.h = 8;
  k.w = 9;
  k.stride = 2;
  k.auto_pad = "SAME_UPPER";
  check(k);
}

TEST(QLinearConvNhwc, ReluFoldedIntoTheOutputRange) {
  ConvCase k;
  k.what = "Relu, y zero point 0";
  k.c = 6;
  k.m = 10;
  k.relu = true;
  k.y_zero_point = 0;
  check(k);
}

// A Relu that the Q's saturation does not imply keeps the float Conv (no QLinearConv at all).
TEST(QLinearConvNhwc, ReluNotFoldedKeepsTheFloatConv) {
  ConvCase k;
  k.what = "Relu, y zero point 128";
  k.c = 6;
  k.m = 10;
  k.relu = true;
  k.expect_own_kernel = false;
  check(k);
  SessionOptions fused;
  EXPECT_TRUE(run(k, fused).conv_entries.empty());
}

// Two threads split the output rows into blocks: the result is the same bytes.
TEST(QLinearConvNhwc, ThreadsGiveTheSameResult) {
  ConvCase k;
  k.what = "threads";
  k.c = 16;
  k.m = 24;
  k.h = 40;
  k.w = 30;
  SessionOptions one, two;
  two.num_threads = 2;
  const Ran a = run(k, one), b = run(k, two);
  ASSERT_TRUE(a.y.defined() && b.y.defined());
  for (int64_t i = 0; i < a.y.numel(); ++i) ASSERT_EQ(a.y.data<float>()[i], b.y.data<float>()[i]) << "element " << i;
}

// Depthwise (group = channels): the own AVX-512 kernel of qlinear_depthwise.cc.
ConvCase depthwise_case(const std::string& what, int64_t c, int64_t k, int64_t stride, int64_t dilation, int64_t pad) {
  ConvCase cs;
  cs.what = what;
  cs.c = cs.m = cs.group = c;
  cs.kh = cs.kw = k;
  cs.stride = stride;
  cs.dilation = dilation;
  cs.pad = pad;
  cs.h = 11;
  cs.w = 9;
  cs.depthwise = true;
  return cs;
}

TEST(QLinearConvNhwc, DepthwiseShapes) {
  check(depthwise_case("dw 3x3, 32 channels", 32, 3, 1, 1, 1));
  check(depthwise_case("dw 3x3 stride 2, 17 channels", 17, 3, 2, 1, 1));
  check(depthwise_case("dw 3x3 dilation 2, 3 channels", 3, 3, 1, 2, 2));
  check(depthwise_case("dw 5x5 stride 2, 40 channels", 40, 5, 2, 1, 2));
  check(depthwise_case("dw 3x3 no pads, 1 channel", 1, 3, 1, 1, 0));
  check(depthwise_case("dw 7x7 pads 3, 16 channels", 16, 7, 1, 1, 3));
}

TEST(QLinearConvNhwc, DepthwiseReluSamePaddingBatch2) {
  ConvCase k = depthwise_case("dw 3x3 SAME_UPPER stride 2 + Relu, batch 2", 24, 3, 2, 1, 0);
  k.auto_pad = "SAME_UPPER";
  k.relu = true;
  k.y_zero_point = 0;
  k.n = 2;
  check(k);
}

// uint8 activations reach the depthwise kernel when the input codes are also a graph output.
TEST(QLinearConvNhwc, DepthwiseUint8Input) {
  ConvCase k = depthwise_case("dw 3x3 uint8 input, 20 channels", 20, 3, 1, 1, 1);
  k.pin_input_codes = true;
  check(k);
}

}  // namespace
}  // namespace xonnx
