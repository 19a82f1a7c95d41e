// The fast kernels of int8 dynamic models (`xonnx convert --quantize int8` without calibration):
// DynamicQuantizeLinear (optimized/quantize.cc), MatMulInteger and MatMulIntegerToFloat
// (optimized/qgemm_op.cc, on the VNNI int8 GEMM) against their reference twins on one-node
// models. Both compute exactly what the reference does (the same float range arithmetic; int32
// sums; the same float roundings), so results must be equal. Then the QDQ pass's fusion of
// MatMulInteger -> Cast -> Mul [-> Add] into MatMulIntegerToFloat, end to end: the same bits.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/exec/session.h"
#include "runtime/ops/internal_ops.h"
#include "runtime/ops/optimized/qgemm.h"
#include "tests/unit/backend_test_util.h"
#include "tests/unit/graph_builder.h"
#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace {

using backendtest::cst;
using backendtest::In;
using backendtest::var;

// Runs the one-node model on the reference kernels or with the fast ones allowed; `backend` gets
// the backend that ran the node.
std::vector<Tensor> run(const char* op, const std::vector<In>& inputs, size_t outputs, bool reference, int threads,
                        Backend* backend, const char* domain = "") {
  backendtest::Op spec(op, domain, 17, outputs);
  SessionOptions options;
  options.disable_xnnpack = true;  // the own kernels are the subject here
  options.disable_optimized = reference;
  options.num_threads = threads;
  auto s = Session::create_from_model(backendtest::one_node_model(spec, inputs, {}), options);
  EXPECT_TRUE(s.is_ok()) << s.status().to_string();
  if (!s.is_ok()) return {};
  Profiler profiler;
  (*s)->set_profiler(&profiler);
  std::vector<Value> given;
  for (const In& in : inputs)
    if (in.t.defined() && !in.constant) given.push_back(in.t);
  auto out = (*s)->run(given);
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  if (!out.is_ok()) return {};
  for (const Profiler::Entry& e : profiler.entries()) *backend = e.backend;
  std::vector<Tensor> tensors;
  for (const Value& v : *out) tensors.push_back(v.tensor());
  return tensors;
}

void expect_equal(const Tensor& a, const Tensor& b, const std::string& what) {
  ASSERT_EQ(a.dtype(), b.dtype()) << what;
  ASSERT_EQ(a.shape(), b.shape()) << what;
  for (int64_t i = 0; i < a.numel(); ++i) ASSERT_EQ(a.get_as_double(i), b.get_as_double(i)) << what << " element " << i;
}

TEST(DynamicQuantizeLinearFast, EqualsTheReference) {
  std::mt19937 gen(3);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  struct Case {
    const char* name;
    int64_t n;
    float shift;  // added to every value: all positive / all negative ranges
    bool zeros;
  };
  for (const Case& c : {Case{"normal", 1000, 0.0f, false}, Case{"positive", 777, 50.0f, false},
                        Case{"negative", 777, -50.0f, false}, Case{"zeros", 64, 0.0f, true},
                        Case{"large, several chunks", 100000, 0.3f, false}, Case{"empty", 0, 0.0f, false}}) {
    std::vector<float> x(static_cast<size_t>(c.n));
    for (float& v : x) v = c.zeros ? 0.0f : normal(gen) + c.shift;
    const std::vector<In> inputs = {var(Tensor::from_vector<float>(x, {c.n}))};
    for (int threads : {1, 2}) {
      Backend fast_backend = Backend::kReference, ref_backend = Backend::kOptimized;
      const std::vector<Tensor> fast = run("DynamicQuantizeLinear", inputs, 3, false, threads, &fast_backend);
      const std::vector<Tensor> ref = run("DynamicQuantizeLinear", inputs, 3, true, threads, &ref_backend);
      const std::string what = std::string(c.name) + ", " + std::to_string(threads) + " thread(s)";
      ASSERT_EQ(fast.size(), 3u) << what;
      ASSERT_EQ(ref.size(), 3u) << what;
      EXPECT_EQ(fast_backend, Backend::kOptimized) << what;
      EXPECT_EQ(ref_backend, Backend::kReference) << what;
      for (size_t o = 0; o < 3; ++o) expect_equal(fast[o], ref[o], what + ", output " + std::to_string(o));
    }
  }
}

// A of rank 2 and 3, uint8 with a zero point given per run (as DynamicQuantizeLinear makes it)
// or int8 with a constant one or none; B's zero point omitted, a zero scalar or zeros per column.
TEST(MatMulIntegerFast, EqualsTheReference) {
  std::mt19937 gen(5);
  std::uniform_int_distribution<int> byte(0, 255), code(-127, 127);
  const int64_t k = 37, n = 45;
  std::vector<int8_t> w(static_cast<size_t>(k * n));
  for (int8_t& v : w) v = static_cast<int8_t>(code(gen));
  const Tensor b = Tensor::from_vector<int8_t>(w, {k, n});
  enum class Zp { kNone, kScalar, kPerColumn };
  for (const Shape& a_shape : {Shape{5, k}, Shape{2, 13, k}})
    for (const DataType a_type : {DataType::kUint8, DataType::kInt8})
      for (const Zp b_zp : {Zp::kNone, Zp::kScalar, Zp::kPerColumn}) {
        int64_t rows = 1;
        for (size_t d = 0; d + 1 < a_shape.size(); ++d) rows *= a_shape[d];
        std::vector<int> a(static_cast<size_t>(rows * k));
        for (int& v : a) v = byte(gen) - (a_type == DataType::kInt8 ? 128 : 0);
        auto q8 = [&](const std::vector<int>& v, Shape s) {
          if (a_type == DataType::kInt8) return Tensor::from_vector<int8_t>(std::vector<int8_t>(v.begin(), v.end()), s);
          return Tensor::from_vector<uint8_t>(std::vector<uint8_t>(v.begin(), v.end()), s);
        };
        std::vector<In> inputs = {var(q8(a, a_shape)), cst(b)};
        if (a_type == DataType::kUint8) {
          inputs.push_back(var(q8({117}, {})));  // computed per run
        } else {
          inputs.push_back(cst(q8({-9}, {})));
        }
        if (b_zp == Zp::kScalar) inputs.push_back(cst(Tensor::scalar<int8_t>(0)));
        if (b_zp == Zp::kPerColumn) inputs.push_back(cst(Tensor::from_vector<int8_t>(std::vector<int8_t>(n, 0), {n})));
        const std::string what = shape_to_string(a_shape) + " " + dtype_name(a_type) + " b_zero_point " +
                                 std::to_string(static_cast<int>(b_zp));
        Backend fast_backend = Backend::kReference, ref_backend = Backend::kOptimized;
        const std::vector<Tensor> fast = run("MatMulInteger", inputs, 1, false, 2, &fast_backend);
        const std::vector<Tensor> ref = run("MatMulInteger", inputs, 1, true, 1, &ref_backend);
        ASSERT_EQ(fast.size(), 1u) << what;
        ASSERT_EQ(ref.size(), 1u) << what;
        EXPECT_EQ(fast_backend, opt::qgemm_fast() ? Backend::kOptimized : Backend::kReference) << what;
        expect_equal(fast[0], ref[0], what);
      }
}

// A of rank 2 and 3 (uint8 with scale and zero point given per run, as DynamicQuantizeLinear
// makes them, or int8 with constant ones), B's scale per tensor or per column, with and without
// a float bias.
TEST(MatMulIntegerToFloatFast, EqualsTheReference) {
  std::mt19937 gen(11);
  std::uniform_int_distribution<int> byte(0, 255), code(-127, 127);
  std::uniform_real_distribution<float> unit(0.5f, 1.5f);
  const int64_t k = 29, n = 50;
  std::vector<int8_t> w(static_cast<size_t>(k * n));
  for (int8_t& v : w) v = static_cast<int8_t>(code(gen));
  std::vector<float> b_scale(static_cast<size_t>(n)), bias(static_cast<size_t>(n));
  for (float& v : b_scale) v = unit(gen) / 127.0f;
  for (float& v : bias) v = unit(gen) - 1.0f;
  for (const Shape& a_shape : {Shape{7, k}, Shape{2, 13, k}})
    for (const bool per_run : {true, false})
      for (const bool per_column : {true, false})
        for (const bool with_bias : {true, false}) {
          int64_t rows = 1;
          for (size_t d = 0; d + 1 < a_shape.size(); ++d) rows *= a_shape[d];
          std::vector<int> a(static_cast<size_t>(rows * k));
          for (int& v : a) v = byte(gen) - (per_run ? 0 : 128);
          std::vector<In> inputs;
          if (per_run) {  // DynamicQuantizeLinear's outputs
            inputs = {var(Tensor::from_vector<uint8_t>(std::vector<uint8_t>(a.begin(), a.end()), a_shape)),
                      cst(Tensor::from_vector<int8_t>(w, {k, n})), var(Tensor::scalar<float>(0.0173f)),
                      cst(per_column ? Tensor::from_vector<float>(b_scale, {n}) : Tensor::scalar<float>(b_scale[0])),
                      var(Tensor::scalar<uint8_t>(131))};
          } else {
            inputs = {var(Tensor::from_vector<int8_t>(std::vector<int8_t>(a.begin(), a.end()), a_shape)),
                      cst(Tensor::from_vector<int8_t>(w, {k, n})), cst(Tensor::scalar<float>(0.0311f)),
                      cst(per_column ? Tensor::from_vector<float>(b_scale, {n}) : Tensor::scalar<float>(b_scale[0])),
                      cst(Tensor::scalar<int8_t>(-5))};
          }
          if (with_bias) {
            inputs.push_back(In{});  // no b_zero_point
            inputs.push_back(cst(Tensor::from_vector<float>(bias, {n})));
          }
          const std::string what = shape_to_string(a_shape) + (per_run ? " per-run A" : " constant A") +
                                   (per_column ? " per-column B" : " per-tensor B") + (with_bias ? " bias" : "");
          Backend fast_backend = Backend::kReference, ref_backend = Backend::kOptimized;
          const std::vector<Tensor> fast =
              run("MatMulIntegerToFloat", inputs, 1, false, 2, &fast_backend, "com.microsoft");
          const std::vector<Tensor> ref =
              run("MatMulIntegerToFloat", inputs, 1, true, 1, &ref_backend, "com.microsoft");
          ASSERT_EQ(fast.size(), 1u) << what;
          ASSERT_EQ(ref.size(), 1u) << what;
          EXPECT_EQ(fast_backend, opt::qgemm_fast() ? Backend::kOptimized : Backend::kReference) << what;
          EXPECT_EQ(ref_backend, Backend::kReference) << what;
          expect_equal(fast[0], ref[0], what);
        }
}

// ---- the QDQ pass: MatMulInteger -> Cast -> Mul [-> Add] as MatMulIntegerToFloat ----------------

struct DynamicCase {
  bool bias = true, per_column = true;
  bool cast_read_twice = false;  // the Cast's output is also a graph output: nothing to fuse
  // A constant a_scale of 0: the session folds the scales' Mul into a constant, so nothing is
  // fused, and the output is the unfused graph's.
  bool zero_a_scale = false;
};

// x [2, 5, K] -> DynamicQuantizeLinear -> MatMulInteger(W int8 [K, N]) -> Cast -> Mul(Mul(x_scale,
// w_scale)) [-> Add(bias)] -> y, as `xonnx convert --quantize int8` writes a projection.
Model dynamic_model(const DynamicCase& c, int64_t k, int64_t n) {
  testing::GraphBuilder b(17);
  b.input("x");
  std::mt19937 gen(13);
  std::uniform_int_distribution<int> code(-127, 127);
  std::uniform_real_distribution<float> unit(0.5f, 1.5f);
  std::vector<int8_t> w(static_cast<size_t>(k * n));
  for (int8_t& v : w) v = static_cast<int8_t>(code(gen));
  std::vector<float> ws(static_cast<size_t>(c.per_column ? n : 1)), bias(static_cast<size_t>(n));
  for (float& v : ws) v = unit(gen) / 127.0f;
  for (float& v : bias) v = unit(gen) - 1.0f;
  b.node("DynamicQuantizeLinear", {"x"}, {}, "xq");
  b.g().nodes.back().outputs = {"xq", "x_scale", "x_zero_point"};
  const std::string wq = b.constant(Tensor::from_vector<int8_t>(w, {k, n}));
  const std::string wz = b.constant(c.per_column ? Tensor::from_vector<int8_t>(std::vector<int8_t>(n, 0), {n})
                                                 : Tensor::scalar<int8_t>(0));
  const std::string sums = b.node("MatMulInteger", {"xq", wq, "x_zero_point", wz});
  const std::string sums_float = b.node("Cast", {sums}, {testing::attr_int("to", 1)}, "sums_float");
  const std::string a_scale = c.zero_a_scale ? b.constant(Tensor::scalar<float>(0.0f)) : "x_scale";
  const std::string scales = b.node(
      "Mul", {a_scale, b.constant(c.per_column ? Tensor::from_vector<float>(ws, {n}) : Tensor::scalar<float>(ws[0]))});
  const std::string scaled = b.node("Mul", {sums_float, scales}, {}, c.bias ? "" : "y");
  if (c.bias) b.node("Add", {scaled, b.constant(Tensor::from_vector<float>(bias, {n}))}, {}, "y");
  b.output("y");
  if (c.cast_read_twice) b.output(sums_float);
  return b.model;
}

// Runs the model; `fused` tells whether a MatMulIntegerToFloat ran.
Tensor run_dynamic(const DynamicCase& c, int64_t k, int64_t n, bool qdq_pass, bool* fused) {
  SessionOptions options;
  options.disable_xnnpack = !qdq_pass;  // the pass runs with XNNPACK enabled
  auto s = Session::create_from_model(dynamic_model(c, k, n), options);
  EXPECT_TRUE(s.is_ok()) << s.status().to_string();
  if (!s.is_ok()) return Tensor();
  Profiler profiler;
  (*s)->set_profiler(&profiler);
  std::mt19937 gen(17);
  std::normal_distribution<float> normal(0.2f, 1.0f);
  std::vector<float> x(static_cast<size_t>(2 * 5 * k));
  for (float& v : x) v = normal(gen);
  auto out = (*s)->run({Value(Tensor::from_vector<float>(x, {2, 5, k}))});
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  if (!out.is_ok()) return Tensor();
  *fused = false;
  for (const Profiler::Entry& e : profiler.entries())
    if (e.op_type == "com.microsoft:MatMulIntegerToFloat") *fused = true;
  return (*out)[0].tensor();
}

TEST(Int8DynamicFusion, MatMulIntegerChainBecomesMatMulIntegerToFloatWithTheSameBits) {
  for (const DynamicCase& c :
       {DynamicCase{true, true, false}, DynamicCase{false, true, false}, DynamicCase{true, false, false},
        DynamicCase{true, true, true}, DynamicCase{true, true, false, true}}) {
    for (const int64_t k : {16, 77}) {
      const std::string what = std::string(c.bias ? "bias" : "no bias") +
                               (c.per_column ? ", per-column" : ", per-tensor") +
                               (c.cast_read_twice ? ", Cast read twice" : "") + (c.zero_a_scale ? ", a_scale 0" : "") +
                               ", K " + std::to_string(k);
      bool fused = false, unfused = true;
      const Tensor y = run_dynamic(c, k, 40, true, &fused);
      const Tensor want = run_dynamic(c, k, 40, false, &unfused);
      EXPECT_FALSE(unfused) << what;
      EXPECT_EQ(fused, opt::qgemm_fast() != nullptr && !c.cast_read_twice && !c.zero_a_scale) << what;
      expect_equal(y, want, what);
    }
  }
}

// ---- the QDQ pass: ConvInteger -> Cast -> Mul [-> Add] as a float Conv -------------------------

struct ConvIntegerCase {
  bool bias = true, per_channel = false;  // per-channel W scale and zero point
  DataType w_type = DataType::kUint8;     // ORT's quantize_dynamic writes uint8 Conv weights
  int64_t group = 1, stride = 1;
  bool cast_read_twice = false;         // the Cast's output is also a graph output: nothing to rewrite
  bool zero_point_per_channel = false;  // with a single W scale
};

// x [1, 8, 9, 11] -> DynamicQuantizeLinear -> ConvInteger(3x3 W, x_zero_point, w_zero_point) ->
// Cast -> Mul(Mul(x_scale, w_scale)) [-> Add(bias [1, 16, 1, 1])] -> y, as ORT's quantize_dynamic
// writes a Conv.
Model conv_integer_model(const ConvIntegerCase& c) {
  constexpr int64_t kIn = 8, kOut = 16;
  testing::GraphBuilder b(17);
  b.input("x");
  std::mt19937 gen(23);
  std::uniform_int_distribution<int> code(0, 255);
  std::uniform_real_distribution<float> unit(0.5f, 1.5f);
  const int64_t cin = kIn / c.group;
  std::vector<uint8_t> w(static_cast<size_t>(kOut * cin * 9));
  for (uint8_t& v : w) v = static_cast<uint8_t>(code(gen));
  std::vector<float> ws(static_cast<size_t>(c.per_channel ? kOut : 1)), bias(static_cast<size_t>(kOut));
  for (float& v : ws) v = unit(gen) / 255.0f;
  for (float& v : bias) v = unit(gen) - 1.0f;
  b.node("DynamicQuantizeLinear", {"x"}, {}, "xq");
  b.g().nodes.back().outputs = {"xq", "x_scale", "x_zero_point"};
  Tensor wt = Tensor::allocate(c.w_type, {kOut, cin, 3, 3}).value();
  std::memcpy(wt.raw_data(), w.data(), w.size());
  const std::string wq = b.constant(wt);
  Tensor wz = Tensor::allocate(c.w_type, c.per_channel || c.zero_point_per_channel ? Shape{kOut} : Shape{}).value();
  for (int64_t k = 0; k < wz.numel(); ++k) static_cast<uint8_t*>(wz.raw_data())[k] = static_cast<uint8_t>(100 + k);
  const std::string sums =
      b.node("ConvInteger", {"xq", wq, "x_zero_point", b.constant(wz)},
             {testing::attr_ints("kernel_shape", {3, 3}), testing::attr_ints("pads", {1, 1, 1, 1}),
              testing::attr_ints("strides", {c.stride, c.stride}), testing::attr_int("group", c.group)});
  const std::string sums_float = b.node("Cast", {sums}, {testing::attr_int("to", 1)}, "sums_float");
  const std::string scales = b.node(
      "Mul", {"x_scale",
              b.constant(c.per_channel ? Tensor::from_vector<float>(ws, {kOut, 1, 1}) : Tensor::scalar<float>(ws[0]))});
  const std::string scaled = b.node("Mul", {sums_float, scales}, {}, c.bias ? "" : "y");
  if (c.bias) b.node("Add", {scaled, b.constant(Tensor::from_vector<float>(bias, {1, kOut, 1, 1}))}, {}, "y");
  b.output("y");
  if (c.cast_read_twice) b.output(sums_float);
  return b.model;
}

TEST(Int8DynamicFusion, ConvIntegerChainBecomesAFloatConvOnTheSameValues) {
  const ConvIntegerCase cases[] = {{},
                                   {false},
                                   {true, true},
                                   {true, false, DataType::kInt8},
                                   {true, true, DataType::kUint8, 2, 2},
                                   {true, false, DataType::kUint8, 1, 1, true},
                                   {true, false, DataType::kUint8, 1, 1, false, true}};
  std::mt19937 gen(29);
  std::normal_distribution<float> normal(0.2f, 1.0f);
  std::vector<float> x(static_cast<size_t>(8 * 9 * 11));
  for (float& v : x) v = normal(gen);
  const std::vector<Value> in = {Value(Tensor::from_vector<float>(x, {1, 8, 9, 11}))};
  for (const ConvIntegerCase& c : cases) {
    const std::string what = std::string(c.bias ? "bias" : "no bias") + (c.per_channel ? ", per-channel" : "") +
                             (c.w_type == DataType::kInt8 ? ", int8 W" : ", uint8 W") + ", group " +
                             std::to_string(c.group) + ", stride " + std::to_string(c.stride) +
                             (c.cast_read_twice ? ", Cast read twice" : "") +
                             (c.zero_point_per_channel ? ", W zero point per channel" : "");
    std::vector<Tensor> outputs;
    bool ran_conv_integer[2] = {false, false};
    for (bool qdq_pass : {false, true}) {
      SessionOptions options;
      options.disable_xnnpack = !qdq_pass;  // the pass runs with XNNPACK enabled
      auto s = Session::create_from_model(conv_integer_model(c), options);
      ASSERT_TRUE(s.is_ok()) << s.status().to_string();
      Profiler profiler;
      (*s)->set_profiler(&profiler);
      auto out = (*s)->run(in);
      ASSERT_TRUE(out.is_ok()) << out.status().to_string();
      outputs.push_back((*out)[0].tensor());
      for (const Profiler::Entry& e : profiler.entries()) ran_conv_integer[qdq_pass] |= e.op_type == "ConvInteger";
    }
    EXPECT_TRUE(ran_conv_integer[0]) << what;
    EXPECT_EQ(ran_conv_integer[1], c.cast_read_twice) << what;
    // Float sums of the same integer products, scaled once by x_scale * w_scale: float rounding apart.
    backendtest::expect_close(outputs[1], outputs[0], {1e-5, 1e-5}, what);
  }
}

// x -> Conv -> Relu -> DynamicQuantizeLinear -> ConvInteger ... -> Add(bias) -> y: after the
// rewrite, the quantization runs on the first Conv's NHWC output and the second Conv reads its
// dequantized NHWC values (no layout conversion between the Convs). Integer inputs, weights and
// biases keep every float sum exact, so both paths quantize the same values.
TEST(Int8DynamicFusion, DynamicQuantizationStaysInTheNhwcRegion) {
  Model m = conv_integer_model({});
  Graph& g = m.graph;
  std::vector<float> w1(8 * 8), b1(8);
  for (size_t k = 0; k < w1.size(); ++k) w1[k] = static_cast<float>(static_cast<int>(k * 7 % 5) - 2);
  for (size_t k = 0; k < b1.size(); ++k) b1[k] = static_cast<float>(k % 3);
  g.initializers.push_back({"w1", Tensor::from_vector<float>(w1, {8, 8, 1, 1})});
  g.initializers.push_back({"b1", Tensor::from_vector<float>(b1, {8})});
  Node conv;
  conv.op_type = "Conv";
  conv.name = "first";
  conv.inputs = {"x", "w1", "b1"};
  conv.outputs = {"first_out"};
  Node relu;
  relu.op_type = "Relu";
  relu.name = "first_relu";
  relu.inputs = {"first_out"};
  relu.outputs = {"first_relu_out"};
  g.nodes.front().inputs[0] = "first_relu_out";  // the DynamicQuantizeLinear
  g.nodes.insert(g.nodes.begin(), {conv, relu});
  std::vector<float> x(static_cast<size_t>(8 * 9 * 11));
  for (size_t k = 0; k < x.size(); ++k) x[k] = static_cast<float>(static_cast<int>(k * 13 % 17) - 8);
  const std::vector<Value> in = {Value(Tensor::from_vector<float>(x, {1, 8, 9, 11}))};
  std::vector<Tensor> outputs;
  for (bool qdq_pass : {false, true}) {
    SessionOptions options;
    options.disable_xnnpack = !qdq_pass;
    auto s = Session::create_from_model(m, options);
    ASSERT_TRUE(s.is_ok()) << s.status().to_string();
    auto out = (*s)->run(in);
    ASSERT_TRUE(out.is_ok()) << out.status().to_string();
    outputs.push_back((*out)[0].tensor());
    if (!qdq_pass) continue;
    const Graph& run = (*s)->model().graph;
    std::unordered_map<std::string, const Node*> producer;
    for (const Node& n : run.nodes)
      for (const std::string& o : n.outputs) producer[o] = &n;
    int dynamic = 0;
    for (const Node& n : run.nodes) {
      if (n.op_type != "DynamicQuantizeLinear") continue;
      ++dynamic;
      ASSERT_TRUE(producer.count(n.inputs[0]));
      EXPECT_EQ(producer[n.inputs[0]]->domain + ":" + producer[n.inputs[0]]->op_type, std::string(kNhwcDomain) + ":Conv");
    }
    EXPECT_EQ(dynamic, 1);
    for (const Node& n : run.nodes) {
      if (n.op_type != "Conv" || n.domain != kNhwcDomain || n.name == "first") continue;
      ASSERT_TRUE(producer.count(n.inputs[0]));
      EXPECT_EQ(producer[n.inputs[0]]->op_type, "DequantizeLinear");
    }
  }
  backendtest::expect_close(outputs[1], outputs[0], {1e-5, 1e-5}, "Conv -> dynamic int8 Conv");
}
}  // namespace
}  // namespace xonnx
