// QDQ Gemm heads and MatMul projections end to end through Session: QuantizeLinear ->
// DequantizeLinear -> Gemm (DQ of int8 per-row weights, DQ of an int32 bias) [-> QuantizeLinear
// -> DequantizeLinear], or a 3-D activation -> MatMul (DQ of int8 [K, N] per-column weights)
// [-> QuantizeLinear -> DequantizeLinear], run with the QDQ pass (com.microsoft QGemm /
// MatMulIntegerToFloat, QLinearMatMul; the own VNNI kernel where the CPU has it) and on the
// reference path (disable_xnnpack keeps the QDQ form in float). Both sum the same integers, so float outputs agree to float rounding and
// quantized ones within one step.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "runtime/exec/session.h"
#include "runtime/ops/optimized/opt_util.h"
#include "runtime/ops/optimized/qgemm.h"
#include "runtime/ops/registry.h"
#include "tests/unit/backend_test_util.h"
#include "tests/unit/graph_builder.h"
#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace {

using testing::attr_int;

struct HeadCase {
  int64_t m = 1, k = 64, n = 17;
  bool trans_b = true, bias = true, quantized_output = false;
  int64_t batch = 0;  // MatMul of a [batch, m, k] activation by [k, n] weights (no bias, quantized output)
};

std::string describe(const HeadCase& c) {
  return (c.batch ? "MatMul batch " + std::to_string(c.batch) + " " : std::string("Gemm ")) + "m " +
         std::to_string(c.m) + " k " + std::to_string(c.k) + " n " + std::to_string(c.n) +
         (c.trans_b ? " transB" : "") + (c.bias ? " bias" : "") + (c.quantized_output ? " quantized" : " float");
}

Model build(const HeadCase& c) {
  testing::GraphBuilder b;
  b.input("x");
  std::mt19937 gen(static_cast<uint32_t>(c.m * 1000 + c.k * 10 + c.n));
  std::uniform_int_distribution<int> code(-127, 127);
  const float x_scale = 2.0f / 255.0f;
  const std::string xs = b.constant(Tensor::scalar<float>(x_scale)), xz = b.constant(Tensor::scalar<uint8_t>(128));
  const std::string xd = b.node("DequantizeLinear", {b.node("QuantizeLinear", {"x", xs, xz}), xs, xz});
  std::vector<int8_t> w(static_cast<size_t>(c.n * c.k));
  for (int8_t& v : w) v = static_cast<int8_t>(code(gen));
  std::vector<float> ws(static_cast<size_t>(c.n)), bs(static_cast<size_t>(c.n));
  std::vector<int32_t> bias(static_cast<size_t>(c.n));
  for (int64_t o = 0; o < c.n; ++o) {
    ws[static_cast<size_t>(o)] = (0.5f + 0.01f * static_cast<float>(o)) / (127.0f * std::sqrt(static_cast<float>(c.k)));
    bs[static_cast<size_t>(o)] = x_scale * ws[static_cast<size_t>(o)];
    bias[static_cast<size_t>(o)] = static_cast<int32_t>(code(gen)) * 40;
  }
  const Shape w_shape = c.trans_b ? Shape{c.n, c.k} : Shape{c.k, c.n};
  if (!c.trans_b) {  // stored [K, N]: the same weights transposed
    std::vector<int8_t> t(w.size());
    for (int64_t o = 0; o < c.n; ++o)
      for (int64_t kk = 0; kk < c.k; ++kk) t[static_cast<size_t>(kk * c.n + o)] = w[static_cast<size_t>(o * c.k + kk)];
    w = t;
  }
  const std::string wd =
      b.node("DequantizeLinear",
             {b.constant(Tensor::from_vector<int8_t>(w, w_shape)), b.constant(Tensor::from_vector<float>(ws, {c.n})),
              b.constant(Tensor::from_vector<int8_t>(std::vector<int8_t>(static_cast<size_t>(c.n), 0), {c.n}))},
             {attr_int("axis", c.trans_b ? 0 : 1)});
  std::vector<std::string> ins = {xd, wd};
  if (c.bias) {
    ins.push_back(b.node(
        "DequantizeLinear",
        {b.constant(Tensor::from_vector<int32_t>(bias, {c.n})), b.constant(Tensor::from_vector<float>(bs, {c.n}))},
        {attr_int("axis", 0)}));
  }
  const std::string y =
      c.batch ? b.node("MatMul", ins, {}, c.quantized_output ? "" : "y")
              : b.node("Gemm", ins, {attr_int("transB", c.trans_b ? 1 : 0)}, c.quantized_output ? "" : "y");
  if (c.quantized_output) {
    const std::string ys = b.constant(Tensor::scalar<float>(1.0f / 64.0f)),
                      yz = b.constant(Tensor::scalar<uint8_t>(128));
    b.node("DequantizeLinear", {b.node("QuantizeLinear", {y, ys, yz}), ys, yz}, {}, "y");
  }
  b.output("y");
  return b.model;
}

Tensor input_for(const HeadCase& c) {
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(std::max<int64_t>(c.batch, 1) * c.m * c.k));
  for (float& f : v) f = dist(gen);
  return Tensor::from_vector<float>(v, c.batch ? Shape{c.batch, c.m, c.k} : Shape{c.m, c.k});
}

Tensor run(const HeadCase& c, SessionOptions options, Backend* qgemm_backend) {
  auto s = Session::create_from_model(build(c), options);
  EXPECT_TRUE(s.is_ok()) << s.status().to_string();
  if (!s.is_ok()) return Tensor();
  Profiler profiler;
  (*s)->set_profiler(&profiler);
  auto out = (*s)->run({Value(input_for(c))});
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  if (!out.is_ok()) return Tensor();
  for (const Profiler::Entry& e : profiler.entries())
    if (e.op_type == "com.microsoft:QGemm" || e.op_type == "QLinearMatMul" ||
        e.op_type == "com.microsoft:MatMulIntegerToFloat")
      *qgemm_backend = e.backend;
  return (*out)[0].tensor();
}

void check(const HeadCase& c) {
  SCOPED_TRACE(describe(c));
  SessionOptions fused, reference;
  reference.disable_xnnpack = true;
  const Backend none = static_cast<Backend>(-1);  // no QGemm ran
  Backend fused_backend = none, reference_backend = none;
  const Tensor a = run(c, fused, &fused_backend);
  const Tensor b = run(c, reference, &reference_backend);
  ASSERT_TRUE(a.defined() && b.defined());
  ASSERT_EQ(a.shape(), (c.batch ? Shape{c.batch, c.m, c.n} : Shape{c.m, c.n}));
  ASSERT_EQ(b.shape(), a.shape());
  EXPECT_EQ(reference_backend, none) << "the reference path keeps the QDQ form";
  if (opt::qgemm_fast()) {
    EXPECT_EQ(fused_backend, Backend::kOptimized) << "the Gemm / MatMul was not fused";
  } else {
    EXPECT_EQ(fused_backend, none) << "without AVX512-VNNI the float Gemm / MatMul stays";
  }
  double worst = 0, largest = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double x = a.data<float>()[i], y = b.data<float>()[i];
    worst = std::max(worst, std::fabs(x - y));
    largest = std::max(largest, std::fabs(y));
  }
  // Quantized: one step. Float: exact integer sums vs the reference's float sums of dequantized
  // products, which round (relative to the output's magnitude, ~K ulps at worst).
  if (c.quantized_output) {
    EXPECT_LE(worst * 64.0, 1.001);
  } else {
    EXPECT_LE(worst, 1e-5 * largest) << "largest output " << largest;
  }
}

TEST(QdqGemm, FloatHeadsMatchTheQdqReference) {
  for (int64_t m : {1, 3, 13})
    for (int64_t k : {5, 64, 1280})
      for (int64_t n : {1, 17, 40}) {
        HeadCase c;
        c.m = m;
        c.k = k;
        c.n = n;
        c.trans_b = (m + n) % 2 == 0;
        c.bias = k != 5;
        check(c);
      }
}

TEST(QdqGemm, QuantizedOutputWithinOneStep) {
  for (int64_t m : {1, 13}) {
    HeadCase c;
    c.m = m;
    c.k = 96;
    c.n = 33;
    c.quantized_output = true;
    check(c);
  }
}

// A MatMul of a [2, 13, k] activation by [k, n] int8 weights, without a bias.
HeadCase matmul_case(int64_t k, int64_t n, bool quantized_output) {
  HeadCase c;
  c.batch = 2;
  c.m = 13;
  c.k = k;
  c.n = n;
  c.trans_b = false;
  c.bias = false;
  c.quantized_output = quantized_output;
  return c;
}

// A transformer's projection: [batch, tokens, K] x [K, N] -> Q, as QLinearMatMul over all rows
// (K 5 and 1280 exercise the kernel's padding of rows to 4 bytes and long sums).
TEST(QdqGemm, MatMulProjectionBecomesQLinearMatMulWithinOneStep) {
  for (int64_t k : {5, 96, 1280}) check(matmul_case(k, 33, true));
}

// An LM head: [batch, tokens, K] x [K, N] with no Q after it, as MatMulIntegerToFloat (float
// output, to float rounding of the reference's float sums).
TEST(QdqGemm, MatMulWithFloatOutputBecomesMatMulIntegerToFloat) {
  for (int64_t k : {5, 96}) check(matmul_case(k, 40, false));
}

// The fast QLinearMatMul kernels (the own one for constant symmetric int8 B, XNNPACK's for
// per-tensor B) against the reference kernel on the ONNX op itself, as a model quantized to the
// QOperator format holds it: uint8 and int8 A of rank 2 and 3, per-tensor and per-column B
// scales, both output types; within one step.
TEST(QLinearMatMulFast, MatchesTheReferenceKernel) {
  std::mt19937 gen(11);
  std::uniform_int_distribution<int> code(-127, 127), byte(0, 255);
  for (const DataType a_type : {DataType::kUint8, DataType::kInt8})
    for (const bool per_column : {false, true})
      for (const Shape& a_shape : {Shape{7, 40}, Shape{2, 9, 40}}) {
        const int64_t k = 40, n = 21, rows = a_shape.size() == 2 ? 7 : 18;
        const DataType y_type = per_column ? DataType::kInt8 : DataType::kUint8;
        std::vector<int> a(static_cast<size_t>(rows * k)), w(static_cast<size_t>(k * n));
        for (int& v : a) v = a_type == DataType::kUint8 ? byte(gen) : byte(gen) - 128;
        for (int& v : w) v = code(gen);
        auto q8 = [](DataType t, const std::vector<int>& v, Shape s) {
          if (t == DataType::kInt8) return Tensor::from_vector<int8_t>(std::vector<int8_t>(v.begin(), v.end()), s);
          return Tensor::from_vector<uint8_t>(std::vector<uint8_t>(v.begin(), v.end()), s);
        };
        std::vector<float> b_scale(per_column ? static_cast<size_t>(n) : 1);
        for (size_t i = 0; i < b_scale.size(); ++i) b_scale[i] = 0.002f + 0.0001f * static_cast<float>(i);
        const Shape bs_shape = per_column ? Shape{n} : Shape{};
        const std::vector<backendtest::In> inputs = {
            backendtest::var(q8(a_type, a, a_shape)),
            backendtest::cst(Tensor::scalar<float>(0.02f)),
            backendtest::cst(q8(a_type, {a_type == DataType::kUint8 ? 131 : 3}, {})),
            backendtest::cst(q8(DataType::kInt8, w, {k, n})),
            backendtest::cst(Tensor::from_vector<float>(b_scale, bs_shape)),
            backendtest::cst(q8(DataType::kInt8, std::vector<int>(b_scale.size(), 0), bs_shape)),
            backendtest::cst(Tensor::scalar<float>(0.05f)),
            backendtest::cst(q8(y_type, {y_type == DataType::kUint8 ? 120 : -5}, {}))};
        SCOPED_TRACE(std::string(dtype_name(a_type)) + (per_column ? " per column " : " per tensor ") +
                     shape_to_string(a_shape));
        auto run_with = [&](bool reference) {
          SessionOptions options;
          options.disable_xnnpack = reference;
          options.disable_optimized = reference;
          auto s = Session::create_from_model(
              backendtest::one_node_model(backendtest::Op("QLinearMatMul", "", 17), inputs, {}), options);
          EXPECT_TRUE(s.is_ok()) << s.status().to_string();
          Profiler profiler;
          (*s)->set_profiler(&profiler);
          auto out = (*s)->run({Value(inputs[0].t)});
          EXPECT_TRUE(out.is_ok()) << out.status().to_string();
          // XNNPACK's kernel takes per-tensor B (where XNNPACK is built), the own one (VNNI) both.
          const bool fast =
              !reference && OpRegistry::global().has_fast_kernel(
                                "", "QLinearMatMul", per_column ? Backend::kOptimized : Backend::kReference);
          for (const Profiler::Entry& e : profiler.entries()) {
            if (fast) {
              EXPECT_NE(e.backend, Backend::kReference) << e.declined;
            } else {
              EXPECT_EQ(e.backend, Backend::kReference);
            }
          }
          return (*out)[0].tensor();
        };
        const Tensor fast = run_with(false), ref = run_with(true);
        Shape y_shape = a_shape;
        y_shape.back() = n;
        ASSERT_EQ(fast.shape(), y_shape);
        ASSERT_EQ(ref.shape(), y_shape);
        ASSERT_EQ(fast.dtype(), y_type);
        for (int64_t i = 0; i < ref.numel(); ++i)
          ASSERT_LE(std::fabs(fast.get_as_double(i) - ref.get_as_double(i)), 1.0) << "element " << i;
      }
}

}  // namespace
}  // namespace xonnx
