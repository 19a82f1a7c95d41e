// QDQ Gemm heads end to end through Session: QuantizeLinear -> DequantizeLinear -> Gemm (DQ of
// int8 per-row weights, DQ of an int32 bias) [-> QuantizeLinear -> DequantizeLinear], run with
// the QDQ pass (com.microsoft QGemm; the own VNNI kernel where the CPU has it) and on the
// reference path (disable_xnnpack keeps the QDQ form in float). Both sum the same integers, so
// float outputs agree to float rounding and quantized ones within one step.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "runtime/exec/session.h"
#include "runtime/ops/optimized/opt_util.h"
#include "runtime/ops/optimized/qgemm.h"
#include "tests/unit/graph_builder.h"
#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace {

using testing::attr_int;

struct HeadCase {
  int64_t m = 1, k = 64, n = 17;
  bool trans_b = true, bias = true, quantized_output = false;
};

std::string describe(const HeadCase& c) {
  return "m " + std::to_string(c.m) + " k " + std::to_string(c.k) + " n " + std::to_string(c.n) +
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
  const std::string y = b.node("Gemm", ins, {attr_int("transB", c.trans_b ? 1 : 0)}, c.quantized_output ? "" : "y");
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
  std::vector<float> v(static_cast<size_t>(c.m * c.k));
  for (float& f : v) f = dist(gen);
  return Tensor::from_vector<float>(v, {c.m, c.k});
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
    if (e.op_type == "com.microsoft:QGemm" || e.op_type == "QGemm") *qgemm_backend = e.backend;
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
  ASSERT_EQ(a.shape(), (Shape{c.m, c.n}));
  ASSERT_EQ(b.shape(), a.shape());
  EXPECT_EQ(reference_backend, none) << "the reference path keeps the QDQ form";
  if (opt::qgemm_fast()) {
    EXPECT_EQ(fused_backend, Backend::kOptimized) << "the Gemm was not fused into QGemm";
  } else {
    EXPECT_EQ(fused_backend, none) << "without AVX512-VNNI the float Gemm stays";
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

}  // namespace
}  // namespace xonnx
