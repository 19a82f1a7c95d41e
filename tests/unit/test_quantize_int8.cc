// int8 dynamic quantization: MatMul / Gemm -> DynamicQuantizeLinear + MatMulInteger + Cast + Mul,
// run in the runtime against the float model.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "converter/quantize/bias_correction.h"
#include "converter/quantize/quant_verify.h"
#include "converter/quantize/quantize.h"
#include "converter/writer.h"
#include "onnx.pb.h"
#include "runtime/ir/graph_edit.h"
#include "tests/unit/graph_builder.h"
#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace convert {
namespace {

using testing::attr_int;
using testing::normal_floats;
using testing::tensor_of;
using testing::tv;

// y1 = MatMul(x, w1 [64, 16]); y2 = Gemm(x2d, w2 [16, 64], bias, transB=1) on the same x.
Model two_matmul_model(int64_t opset = 17) {
  Model m;
  m.ir_version = 8;
  m.opset_imports[""] = opset;
  m.graph.initializers.push_back({"w1", tensor_of<float>(normal_floats(64 * 16, 1), {64, 16})});
  m.graph.initializers.push_back({"w2", tensor_of<float>(normal_floats(16 * 64, 2), {16, 64})});
  m.graph.initializers.push_back({"bias", tensor_of<float>(normal_floats(16, 3), {16})});
  Node mm;
  mm.name = "mm";
  mm.op_type = "MatMul";
  mm.inputs = {"x", "w1"};
  mm.outputs = {"y1"};
  Node gemm;
  gemm.name = "gemm";
  gemm.op_type = "Gemm";
  gemm.inputs = {"x", "w2", "bias"};
  gemm.outputs = {"y2"};
  gemm.attributes = {attr_int("transB", 1)};
  m.graph.nodes = {mm, gemm};
  m.graph.inputs.push_back(ValueInfo{"x", {}});
  m.graph.outputs = {ValueInfo{"y1", {}}, ValueInfo{"y2", {}}};
  return m;
}

std::vector<Value> run_model(Model m, const Value& x) {
  auto s = Session::create_from_model(std::move(m));
  EXPECT_TRUE(s.is_ok()) << s.status().to_string();
  if (!s.is_ok()) return {};
  auto out = (*s)->run({x});
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  return out.is_ok() ? *out : std::vector<Value>{};
}

int count_ops(const Model& m, const std::string& op) {
  int c = 0;
  for (const Node& n : m.graph.nodes) c += n.op_type == op ? 1 : 0;
  return c;
}

TEST(QuantizeInt8Dynamic, MatMulAndGemmRunCloseToFloat) {
  for (bool per_channel : {true, false}) {
    Model model = two_matmul_model();
    QuantizeOptions opt;
    opt.mode = QuantizeMode::kInt8;
    opt.per_channel = per_channel;
    auto r = quantize_model(model, opt);
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    ASSERT_EQ(r->quantized.size(), 2u);
    EXPECT_EQ(count_ops(model, "DynamicQuantizeLinear"), 1);  // x is quantized once
    EXPECT_EQ(count_ops(model, "MatMulInteger"), 2);
    EXPECT_EQ(count_ops(model, "MatMul") + count_ops(model, "Gemm"), 0);
    EXPECT_EQ(count_ops(model, "Add"), 1);  // Gemm's bias
    EXPECT_EQ(model.graph.find_initializer("w1"), nullptr);
    const NamedTensor* w1q = model.graph.find_initializer("w1_quantized");
    ASSERT_NE(w1q, nullptr);
    EXPECT_EQ(w1q->tensor.dtype(), DataType::kInt8);
    EXPECT_EQ(w1q->tensor.shape(), (Shape{64, 16}));
    EXPECT_EQ(model.graph.find_initializer("w2_quantized")->tensor.shape(), (Shape{64, 16}));  // transposed
    EXPECT_EQ(model.graph.find_initializer("w1_scale")->tensor.numel(), per_channel ? 16 : 1);
    EXPECT_TRUE(model.graph.value_info.empty());

    const Value x = tv<float>(normal_floats(4 * 64, 4), {4, 64});
    const std::vector<Value> a = run_model(two_matmul_model(), x);
    const std::vector<Value> b = run_model(std::move(model), x);
    ASSERT_EQ(a.size(), 2u);
    ASSERT_EQ(b.size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
      const OutputAgreement d = compare_outputs("y", a[i], b[i], 0.98);
      EXPECT_TRUE(d.error.empty()) << d.error;
      EXPECT_GT(d.cosine, 0.999) << i << " per_channel " << per_channel;
    }
  }
}

TEST(QuantizeInt8Dynamic, RefusesAnEmptyCalibrationAndOldOpsets) {
  QuantizeOptions opt;
  opt.mode = QuantizeMode::kInt8;
  opt.calibration_dir = "/tmp/samples";
  Model model = two_matmul_model();
  auto r = quantize_model(model, opt);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().to_string().find("calibration"), std::string::npos);

  opt.calibration_dir.clear();
  Model old = two_matmul_model(10);
  auto r10 = quantize_model(old, opt);
  ASSERT_TRUE(r10.is_ok());
  EXPECT_TRUE(r10->quantized.empty());
  ASSERT_EQ(r10->skipped.size(), 2u);
  EXPECT_NE(r10->skipped[0].why.find("opset"), std::string::npos);
}

// x [1, 3, 8, 8] -> Conv(w [4, 3, 3, 3], b [4], pads 1) -> Relu -> Flatten -> MatMul(w2 [256, 10]).
Model conv_model() {
  Model m;
  m.ir_version = 8;
  m.opset_imports[""] = 17;
  m.graph.initializers.push_back({"w", tensor_of<float>(normal_floats(4 * 3 * 3 * 3, 5), {4, 3, 3, 3})});
  m.graph.initializers.push_back({"b", tensor_of<float>(normal_floats(4, 6), {4})});
  m.graph.initializers.push_back({"w2", tensor_of<float>(normal_floats(256 * 10, 7), {256, 10})});
  Node conv;
  conv.name = "conv";
  conv.op_type = "Conv";
  conv.inputs = {"x", "w", "b"};
  conv.outputs = {"c"};
  conv.attributes = {testing::attr_ints("pads", {1, 1, 1, 1})};
  Node relu;
  relu.op_type = "Relu";
  relu.inputs = {"c"};
  relu.outputs = {"r"};
  Node flat;
  flat.op_type = "Flatten";
  flat.inputs = {"r"};
  flat.outputs = {"f"};
  Node fc;
  fc.name = "fc";
  fc.op_type = "MatMul";
  fc.inputs = {"f", "w2"};
  fc.outputs = {"y"};
  m.graph.nodes = {conv, relu, flat, fc};
  m.graph.inputs.push_back(ValueInfo{"x", {}});
  m.graph.outputs.push_back(ValueInfo{"y", {}});
  return m;
}

// int8 static options calibrated on 4 random x [1, 3, 8, 8] (seeds first_seed..first_seed + 3).
QuantizeOptions static_int8(uint32_t first_seed = 100) {
  QuantizeOptions opt;
  opt.mode = QuantizeMode::kInt8;
  for (uint32_t s = 0; s < 4; ++s)
    opt.calibration.push_back({{"x", tv<float>(normal_floats(3 * 64, first_seed + s), {1, 3, 8, 8})}});
  return opt;
}

TEST(QuantizeInt8Static, QdqAroundConvAndMatMulCalibratedOnSamples) {
  QuantizeOptions opt = static_int8();
  Model model = conv_model();
  auto r = quantize_model(model, opt);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  ASSERT_EQ(r->quantized.size(), 2u);
  EXPECT_NE(r->quantized[0].as.find("int32 bias"), std::string::npos) << r->quantized[0].as;
  // The Relu goes (as in ORT): the Q of its output (zero point 0) saturates the same way.
  EXPECT_NE(r->quantized[0].as.find("Relu folded"), std::string::npos) << r->quantized[0].as;
  EXPECT_EQ(count_ops(model, "Relu"), 0);
  // x, r (conv in/out), f (matmul in): 3 Q/DQ pairs (y has no reader); w, b, w2: 3 weight DQs.
  EXPECT_EQ(count_ops(model, "QuantizeLinear"), 3);
  EXPECT_EQ(count_ops(model, "DequantizeLinear"), 6);
  EXPECT_EQ(model.graph.find_initializer("w_quantized")->tensor.dtype(), DataType::kInt8);
  EXPECT_EQ(model.graph.find_initializer("w_scale")->tensor.numel(), 4);    // per output channel
  EXPECT_EQ(model.graph.find_initializer("w2_scale")->tensor.numel(), 10);  // per column (axis 1)
  EXPECT_EQ(model.graph.find_initializer("b_quantized")->tensor.dtype(), DataType::kInt32);
  EXPECT_EQ(model.graph.find_initializer("w"), nullptr);
  EXPECT_TRUE(model.graph.value_info.empty());
  for (const Node& n : model.graph.nodes) {
    if (n.op_type == "Conv") {
      EXPECT_EQ(n.inputs[0], "x_DequantizeLinear_Output");
    }
  }
  const Value x = tv<float>(normal_floats(3 * 64, 200), {1, 3, 8, 8});
  const std::vector<Value> a = run_model(conv_model(), x);
  const std::vector<Value> b = run_model(std::move(model), x);
  ASSERT_EQ(b.size(), 1u);
  const OutputAgreement d = compare_outputs("y", a[0], b[0], 0.98);
  EXPECT_TRUE(d.error.empty()) << d.error;
  EXPECT_GT(d.cosine, 0.99);
}

// The weights-alone variant replaces each activation's Q/DQ pair by the clamp its codes cover:
// the Relu folded into the Conv's output quantization still clamps, and only weight rounding
// is left, so it is closer to the float model than the quantized one.
TEST(QuantizeInt8Static, WeightsAloneVariantKeepsFoldedActivations) {
  QuantizeOptions opt = static_int8();
  Model quantized = conv_model();
  ASSERT_TRUE(quantize_model(quantized, opt).is_ok());
  ASSERT_EQ(count_ops(quantized, "Relu"), 0);  // folded into the Q of the Conv's output
  int pairs = 0;
  Model weights_alone = without_activation_rounding(clone_model(quantized), &pairs);
  EXPECT_EQ(pairs, 3);  // x, the Relu's output, the Flatten's output
  EXPECT_EQ(count_ops(weights_alone, "QuantizeLinear"), 0);
  EXPECT_EQ(count_ops(weights_alone, "DequantizeLinear"), 3);  // w, b, w2
  const Value x = tv<float>(normal_floats(3 * 64, 200), {1, 3, 8, 8});
  const std::vector<Value> want = run_model(conv_model(), x);
  const double both = compare_outputs("y", want[0], run_model(std::move(quantized), x)[0], 0.98).cosine;
  const double weights = compare_outputs("y", want[0], run_model(std::move(weights_alone), x)[0], 0.98).cosine;
  EXPECT_GT(weights, 0.999);  // without the Relu's clamp it would be far off
  EXPECT_GT(weights, both);
}

// x [1, 8, 6, 6] with channel means far from 0 -> Conv(w [4, 8, 3, 3], pads 1) -> y: rounding
// w shifts each output channel's mean by sum (W_q - W) * E[x] over the taps that reach the input
// (the border taps reach 5 of 6 rows or columns); the corrected bias takes that shift back.
TEST(QuantizeInt8Static, BiasCorrectionTakesBackTheWeightsMeanShift) {
  auto model = [] {
    testing::GraphBuilder b(17);
    b.input("x");
    const std::string w = b.constant(tensor_of<float>(normal_floats(4 * 8 * 9, 21), {4, 8, 3, 3}));
    const std::string bias = b.constant(tensor_of<float>(normal_floats(4, 22), {4}));
    b.node("Conv", {"x", w, bias}, {testing::attr_ints("pads", {1, 1, 1, 1})}, "y");
    b.output("y");
    return b.model;
  };
  auto input = [](uint32_t seed) {
    std::vector<float> x = normal_floats(8 * 36, seed);
    for (size_t i = 0; i < x.size(); ++i) x[i] = 0.25f * x[i] + 1.0f + static_cast<float>(i / 36);  // mean c + 1
    return tv<float>(x, {1, 8, 6, 6});
  };
  // Per output channel, the mean of y_quantized - y_float over positions and 8 inputs.
  auto mean_error = [&](bool correct) {
    QuantizeOptions opt;
    opt.mode = QuantizeMode::kInt8;
    opt.reduce_range = true;  // 7-bit weights: a shift large enough to see
    opt.bias_correction = correct;
    for (uint32_t s = 0; s < 4; ++s) opt.calibration.push_back({{"x", input(600 + s)}});
    Model q = model();
    auto r = quantize_model(q, opt);
    EXPECT_TRUE(r.is_ok()) << r.status().to_string();
    EXPECT_EQ(r->quantized[0].as.find("corrected") != std::string::npos, correct) << r->quantized[0].as;
    std::vector<double> err(4, 0.0);
    for (uint32_t k = 0; k < 8; ++k) {
      const Value x = input(700 + k);
      const Tensor a = run_model(model(), x)[0].tensor(), b = run_model(clone_model(q), x)[0].tensor();
      for (int64_t i = 0; i < a.numel(); ++i)
        err[static_cast<size_t>(i / 36)] += (b.data<float>()[i] - a.data<float>()[i]) / (36.0 * 8);
    }
    double worst = 0;
    for (double e : err) worst = std::max(worst, std::fabs(e));
    return worst;
  };
  const double before = mean_error(false), after = mean_error(true);
  EXPECT_GT(before, 0.02);
  EXPECT_LT(after, before / 10) << "before " << before << ", after " << after;
}

// Per tap, the fraction of a Conv's outputs that read the input rather than padding.
TEST(BiasCorrection, TapCoverageFollowsPadsStridesAndAutoPad) {
  auto coverage = [](std::vector<Attribute> attrs) {
    Node conv;
    conv.op_type = "Conv";
    conv.attributes = std::move(attrs);
    return tap_coverage(conv, Shape{1, 2, 6}, Shape{4, 2, 3});
  };
  using V = std::vector<double>;
  EXPECT_EQ(coverage({testing::attr_ints("pads", {1, 1})}), (V{5.0 / 6, 1, 5.0 / 6}));
  EXPECT_EQ(coverage({}), (V{1, 1, 1}));  // no padding: every tap always reads the input
  // Stride 2, pads 1: outputs read x[-1, 1, 3], x[0, 2, 4], x[1, 3, 5] through the three taps.
  EXPECT_EQ(coverage({testing::attr_ints("pads", {1, 1}), testing::attr_ints("strides", {2})}), (V{2.0 / 3, 1, 1}));
  // SAME_UPPER, stride 2: one padding column, at the end.
  Attribute same;
  same.name = "auto_pad";
  same.type = AttrType::kString;
  same.s = "SAME_UPPER";
  EXPECT_EQ(coverage({same, testing::attr_ints("strides", {2})}), (V{1, 1, 2.0 / 3}));
  // 2-D: the product of the per-dimension fractions, row-major over the kernel.
  Node conv;
  conv.attributes = {testing::attr_ints("pads", {1, 0, 1, 0})};
  const V c = tap_coverage(conv, Shape{1, 1, 6, 6}, Shape{1, 1, 3, 2});
  ASSERT_EQ(c.size(), 6u);
  EXPECT_DOUBLE_EQ(c[0], 5.0 / 6);
  EXPECT_DOUBLE_EQ(c[2], 1.0);
  EXPECT_TRUE(tap_coverage(conv, Shape{1, 1, 6}, Shape{1, 1, 3, 3}).empty());  // ranks disagree
}

// Two Convs sharing one bias initializer (dedup-weights merges equal biases, such as the zero
// biases BatchNorm folding leaves in a freshly initialized torch model): each Conv gets its own
// bias DequantizeLinear named after the bias, and the file written still has unique node names,
// which ONNX Runtime requires.
TEST(QuantizeInt8Static, SharedBiasStillWritesUniqueNodeNames) {
  Model m;
  m.ir_version = 8;
  m.opset_imports[""] = 17;
  m.graph.initializers.push_back({"w", tensor_of<float>(normal_floats(4 * 3 * 3 * 3, 5), {4, 3, 3, 3})});
  m.graph.initializers.push_back({"w3", tensor_of<float>(normal_floats(4 * 4 * 3 * 3, 8), {4, 4, 3, 3})});
  m.graph.initializers.push_back({"b", tensor_of<float>(normal_floats(4, 6), {4})});
  Node c1;
  c1.name = "conv1";
  c1.op_type = "Conv";
  c1.inputs = {"x", "w", "b"};
  c1.outputs = {"c1"};
  c1.attributes = {testing::attr_ints("pads", {1, 1, 1, 1})};
  Node c2 = c1;
  c2.name = "conv2";
  c2.inputs = {"c1", "w3", "b"};
  c2.outputs = {"y"};
  m.graph.nodes = {c1, c2};
  m.graph.inputs.push_back(ValueInfo{"x", {}});
  m.graph.outputs.push_back(ValueInfo{"y", {}});
  QuantizeOptions opt;
  opt.mode = QuantizeMode::kInt8;
  for (uint32_t s = 0; s < 2; ++s)
    opt.calibration.push_back({{"x", tv<float>(normal_floats(3 * 64, 300 + s), {1, 3, 8, 8})}});
  auto r = quantize_model(m, opt);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  ASSERT_EQ(r->quantized.size(), 2u);
  auto bytes = serialize_model(m);
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  onnxpb::ModelProto proto;
  ASSERT_TRUE(proto.ParseFromString(*bytes));
  std::set<std::string> names;
  int bias_dq = 0;
  for (const auto& n : proto.graph().node()) {
    EXPECT_TRUE(n.name().empty() || names.insert(n.name()).second) << "repeated node name " << n.name();
    bias_dq += n.op_type() == "DequantizeLinear" && n.input(0) == "b_quantized";
  }
  EXPECT_GE(bias_dq, 1);
}

// The largest |code| of an int8 initializer.
int max_abs_code(const Model& m, const std::string& name) {
  const NamedTensor* t = m.graph.find_initializer(name);
  EXPECT_NE(t, nullptr) << name;
  if (!t) return -1;
  int v = 0;
  for (int64_t i = 0; i < t->tensor.numel(); ++i)
    v = std::max(v, std::abs(static_cast<int>(t->tensor.data<int8_t>()[i])));
  return v;
}

// reduce_range: weights use [-64, 64] (so ORT's int16 pair sums of u8 x s8 products cannot
// saturate on x86 without VNNI), still per channel, and the model stays close to float.
TEST(QuantizeInt8, ReduceRangeKeepsWeightCodesWithin64) {
  for (bool dynamic : {true, false}) {
    for (bool reduce : {false, true}) {
      Model model = dynamic ? two_matmul_model() : conv_model();
      QuantizeOptions opt;
      opt.mode = QuantizeMode::kInt8;
      opt.reduce_range = reduce;
      if (!dynamic) opt.calibration = static_int8().calibration;
      auto r = quantize_model(model, opt);
      ASSERT_TRUE(r.is_ok()) << r.status().to_string();
      // Each channel's largest |w| maps to the largest code.
      EXPECT_EQ(max_abs_code(model, dynamic ? "w1_quantized" : "w_quantized"), reduce ? 64 : 127);
      EXPECT_EQ(max_abs_code(model, dynamic ? "w2_quantized" : "w2_quantized"), reduce ? 64 : 127);
      EXPECT_EQ(r->quantized[0].as.find("7-bit") != std::string::npos, reduce) << r->quantized[0].as;
      const Value x =
          dynamic ? tv<float>(normal_floats(4 * 64, 4), {4, 64}) : tv<float>(normal_floats(3 * 64, 200), {1, 3, 8, 8});
      const std::vector<Value> a = run_model(dynamic ? two_matmul_model() : conv_model(), x);
      const std::vector<Value> b = run_model(std::move(model), x);
      ASSERT_FALSE(b.empty());
      const OutputAgreement d = compare_outputs("y", a[0], b[0], 0.98);
      EXPECT_GT(d.cosine, 0.99) << "dynamic " << dynamic << " reduce " << reduce;
    }
  }
}

// Clip(lo, hi) after a Conv goes only when the Q of its output saturates at the same bounds.
TEST(QuantizeInt8Static, FoldsClipOnlyWhenQuantizationSaturatesTheSame) {
  for (float lo : {0.0f, 0.5f}) {
    Model model = conv_model();
    model.graph.initializers.push_back({"lo", tensor_of<float>({lo}, {})});
    model.graph.initializers.push_back({"hi", tensor_of<float>({0.75f}, {})});
    model.graph.nodes[1].op_type = "Clip";
    model.graph.nodes[1].inputs = {"c", "lo", "hi"};
    Model original = model;
    QuantizeOptions opt = static_int8();
    auto r = quantize_model(model, opt);
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    // [0, 0.75] is exactly the calibrated range of the output (it always holds 0); with lo 0.5
    // the range still holds 0, so values in [0, 0.5) would survive the Q: the Clip stays.
    EXPECT_EQ(count_ops(model, "Clip"), lo == 0.0f ? 0 : 1) << "lo " << lo;
    const Value x = tv<float>(normal_floats(3 * 64, 201), {1, 3, 8, 8});
    const std::vector<Value> a = run_model(std::move(original), x);
    const std::vector<Value> b = run_model(std::move(model), x);
    ASSERT_EQ(b.size(), 1u);
    const OutputAgreement d = compare_outputs("y", a[0], b[0], 0.98);
    EXPECT_GT(d.cosine, 0.99) << "lo " << lo;
  }
}

// x [1, 3, 8, 8] -> two Conv -> Relu branches, one on about 4x the other's scale -> Concat ->
// MaxPool -> Conv -> y.
Model concat_pool_model() {
  testing::GraphBuilder b(17);
  b.input("x");
  auto conv = [&](const std::string& in, int64_t cout, int64_t cin, int64_t k, float gain, uint32_t seed,
                  const std::string& out = "") {
    std::vector<float> w = normal_floats(static_cast<size_t>(cout * cin * k * k), seed);
    for (float& v : w) v *= gain;
    const int64_t p = k / 2;
    return b.node("Conv", {in, b.constant(tensor_of<float>(w, {cout, cin, k, k}))},
                  {testing::attr_ints("pads", {p, p, p, p})}, out);
  };
  const std::string a = b.node("Relu", {conv("x", 4, 3, 3, 1.0f, 11)}, {}, "a");
  const std::string c = b.node("Relu", {conv("x", 6, 3, 1, 4.0f, 12)}, {}, "c");
  const std::string cat = b.node("Concat", {a, c}, {attr_int("axis", 1)}, "cat");
  const std::string pool = b.node(
      "MaxPool", {cat}, {testing::attr_ints("kernel_shape", {2, 2}), testing::attr_ints("strides", {2, 2})}, "pool");
  conv(pool, 5, 10, 3, 1.0f, 13, "y");
  b.output("y");
  return b.model;
}

// The {scale, zero point} of the Q that quantizes `value`.
std::pair<float, int> q_params(const Model& m, const std::string& value) {
  for (const Node& n : m.graph.nodes) {
    if (n.op_type != "QuantizeLinear" || n.inputs[0] != value) continue;
    return {m.graph.find_initializer(n.inputs[1])->tensor.data<float>()[0],
            m.graph.find_initializer(n.inputs[2])->tensor.data<uint8_t>()[0]};
  }
  ADD_FAILURE() << "no QuantizeLinear reads " << value;
  return {0.0f, -1};
}

// Values are rounded once between two quantized nodes: the branches' outputs, the Concat's and
// the MaxPool's share one scale and zero point (a Q after the Concat or the MaxPool gives back
// the codes), and the runtime then concatenates and pools the integers.
TEST(QuantizeInt8Static, ConcatAndMaxPoolShareTheirInputsParameters) {
  QuantizeOptions opt = static_int8(400);
  Model model = concat_pool_model();
  auto r = quantize_model(model, opt);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  ASSERT_EQ(r->quantized.size(), 3u);
  const auto shared = q_params(model, "cat");
  EXPECT_GT(shared.first, 0.0f);
  EXPECT_EQ(shared.second, 0);  // every member is a Relu output: the range starts at 0
  for (const char* v : {"a", "c", "pool"}) EXPECT_EQ(q_params(model, v), shared) << v;
  EXPECT_NE(q_params(model, "x"), shared);  // not linked to them by a value-moving op

  const Value x = tv<float>(normal_floats(3 * 64, 500), {1, 3, 8, 8});
  const std::vector<Value> want = run_model(concat_pool_model(), x);
  SessionOptions reference;
  reference.optimization = passes::OptLevel::kNone;  // the QDQ form, node for node
  auto rs = Session::create_from_model(clone_model(model), reference);
  ASSERT_TRUE(rs.is_ok()) << rs.status().to_string();
  auto qdq = (*rs)->run({x});
  ASSERT_TRUE(qdq.is_ok()) << qdq.status().to_string();
  const std::vector<Value> fused = run_model(std::move(model), x);
  ASSERT_EQ(fused.size(), 1u);
  const OutputAgreement to_float = compare_outputs("y", want[0], fused[0], 0.98);
  EXPECT_GT(to_float.cosine, 0.99);
  const OutputAgreement to_qdq = compare_outputs("y", (*qdq)[0], fused[0], 0.98);
  EXPECT_GT(to_qdq.cosine, 0.999);
}

TEST(QuantizeInt8Static, PercentileCalibrationClipsOutliers) {
  auto x_scale = [](bool percentile) {
    QuantizeOptions opt;
    opt.mode = QuantizeMode::kInt8;
    opt.percentile_calibration = percentile;
    opt.percentile = 99.0;  // 0.5 % of 768 values per side: the outlier goes
    for (uint32_t s = 0; s < 4; ++s) {
      std::vector<float> x = normal_floats(3 * 64, 300 + s);
      if (s == 2) x[17] = 1000.0f;  // one outlier in 768 values
      opt.calibration.push_back({{"x", tv<float>(x, {1, 3, 8, 8})}});
    }
    Model model = conv_model();
    auto r = quantize_model(model, opt);
    EXPECT_TRUE(r.is_ok()) << r.status().to_string();
    const NamedTensor* s = model.graph.find_initializer("x_scale");
    return s ? s->tensor.data<float>()[0] : 0.0f;
  };
  const float minmax = x_scale(false);
  const float clipped = x_scale(true);
  EXPECT_GT(minmax, 1000.0f / 255.0f);
  EXPECT_GT(clipped, 0.0f);
  EXPECT_LT(clipped * 20, minmax);
  QuantizeOptions bad;
  bad.percentile = 40;
  EXPECT_EQ(check_quantize_options(bad).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace convert
}  // namespace xonnx
