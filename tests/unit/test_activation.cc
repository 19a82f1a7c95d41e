// Activation ops: Relu LeakyRelu Elu Selu Celu Sigmoid HardSigmoid HardSwish Softplus
// Softsign Tanh ThresholdedRelu Mish Gelu Swish Shrink Clip.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace {

using testing::attr_float;
using testing::attr_string;
using testing::run_op;
using testing::tv;
using testing::values;

const std::vector<float> kX = {-3.0f, -1.0f, -0.25f, 0.0f, 0.5f, 2.0f};

std::vector<float> run_float(const std::string& op, const std::vector<Attribute>& attrs = {}, int64_t opset = 22) {
  auto r = run_op(op, {tv<float>(kX, {2, 3})}, attrs, opset);
  EXPECT_TRUE(r.is_ok()) << op << ": " << r.status().to_string();
  if (!r.is_ok()) return {};
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{2, 3}));
  return values<float>((*r)[0]);
}

void expect_map(const std::string& op, const std::vector<Attribute>& attrs, int64_t opset,
                double (*ref)(double, const std::vector<double>&), std::vector<double> p = {}) {
  const auto y = run_float(op, attrs, opset);
  ASSERT_EQ(y.size(), kX.size()) << op;
  for (size_t i = 0; i < kX.size(); ++i) {
    const double e = ref(kX[i], p);
    EXPECT_NEAR(y[i], e, 1e-5 * (1 + std::fabs(e))) << op << " x=" << kX[i];
  }
}

TEST(ActivationOps, ElementwiseFormulas) {
  using P = std::vector<double>;
  expect_map("Relu", {}, 14, [](double x, const P&) { return x > 0 ? x : 0; });
  expect_map("LeakyRelu", {attr_float("alpha", 0.1f)}, 16, [](double x, const P&) { return x >= 0 ? x : 0.1 * x; });
  expect_map("LeakyRelu", {}, 16, [](double x, const P&) { return x >= 0 ? x : 0.01 * x; });
  expect_map("Elu", {attr_float("alpha", 2.0f)}, 22,
             [](double x, const P&) { return x >= 0 ? x : 2.0 * (std::exp(x) - 1); });
  expect_map("Selu", {}, 22, [](double x, const P&) {
    const double a = 1.67326319217681884765625, g = 1.05070102214813232421875;
    return x > 0 ? g * x : g * (a * std::exp(x) - a);
  });
  expect_map("Celu", {attr_float("alpha", 2.0f)}, 12,
             [](double x, const P&) { return std::max(0.0, x) + std::min(0.0, 2.0 * (std::exp(x / 2.0) - 1)); });
  expect_map("Sigmoid", {}, 13, [](double x, const P&) { return 1 / (1 + std::exp(-x)); });
  expect_map("HardSigmoid", {attr_float("alpha", 0.5f), attr_float("beta", 0.6f)}, 22,
             [](double x, const P&) { return std::max(0.0, std::min(1.0, 0.5 * x + 0.6)); });
  expect_map("HardSwish", {}, 22, [](double x, const P&) { return x * std::max(0.0, std::min(1.0, x / 6 + 0.5)); });
  expect_map("Softplus", {}, 22, [](double x, const P&) { return std::log(std::exp(x) + 1); });
  expect_map("Softsign", {}, 22, [](double x, const P&) { return x / (1 + std::fabs(x)); });
  expect_map("Tanh", {}, 13, [](double x, const P&) { return std::tanh(x); });
  expect_map("ThresholdedRelu", {attr_float("alpha", 0.4f)}, 22, [](double x, const P&) { return x > 0.4 ? x : 0; });
  expect_map("Mish", {}, 22, [](double x, const P&) { return x * std::tanh(std::log1p(std::exp(x))); });
  expect_map("Gelu", {}, 20, [](double x, const P&) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); });
  expect_map("Gelu", {attr_string("approximate", "tanh")}, 20, [](double x, const P&) {
    return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  });
  expect_map("Swish", {attr_float("alpha", 2.0f)}, 24, [](double x, const P&) { return x / (1 + std::exp(-2.0 * x)); });
  expect_map("Shrink", {attr_float("lambd", 0.5f), attr_float("bias", 0.25f)}, 9,
             [](double x, const P&) { return x < -0.5 ? x + 0.25 : (x > 0.5 ? x - 0.25 : 0.0); });
}

TEST(ActivationOps, LargeInputsStayFinite) {
  auto r = run_op("Softplus", {tv<float>({100.0f, -100.0f}, {2})}, {}, 22);
  ASSERT_TRUE(r.is_ok());
  EXPECT_FLOAT_EQ(values<float>((*r)[0])[0], 100.0f);
  EXPECT_NEAR(values<float>((*r)[0])[1], 0.0f, 1e-30);
  r = run_op("Sigmoid", {tv<float>({-200.0f, 200.0f}, {2})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{0.0f, 1.0f}));
}

TEST(ActivationOps, IntegerRelu) {
  auto r = run_op("Relu", {tv<int8_t>({-5, 0, 7}, {3})}, {}, 14);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<int8_t>((*r)[0]), (std::vector<int8_t>{0, 0, 7}));
  EXPECT_FALSE(run_op("Relu", {tv<uint8_t>({1}, {1})}, {}, 14).is_ok());
  EXPECT_FALSE(run_op("Sigmoid", {tv<int32_t>({1}, {1})}, {}, 13).is_ok());
}

TEST(ActivationOps, DoubleAndHalf) {
  auto r = run_op("Tanh", {tv<double>({0.5}, {1})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_DOUBLE_EQ(values<double>((*r)[0])[0], std::tanh(0.5));
  std::vector<Float16> h = {Float16{float_to_half(-2.0f)}, Float16{float_to_half(3.0f)}};
  r = run_op("Relu", {Value(Tensor::from_vector<Float16>(h, {2}))}, {}, 14);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(half_to_float((*r)[0].tensor().data<Float16>()[0].bits), 0.0f);
  EXPECT_EQ(half_to_float((*r)[0].tensor().data<Float16>()[1].bits), 3.0f);
}

TEST(ActivationOps, ShrinkIntegers) {
  auto r =
      run_op("Shrink", {tv<int32_t>({-5, -1, 0, 1, 5}, {5})}, {attr_float("lambd", 1.5f), attr_float("bias", 1.5f)}, 9);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<int32_t>((*r)[0]), (std::vector<int32_t>{-3, 0, 0, 0, 3}));
  r = run_op("Shrink", {tv<uint8_t>({0, 1, 200}, {3})}, {attr_float("lambd", 0.5f), attr_float("bias", 2.0f)}, 9);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<uint8_t>((*r)[0]), (std::vector<uint8_t>{0, 255, 198}));  // 1 - 2 wraps
}

TEST(ActivationOps, BadAttributes) {
  EXPECT_FALSE(run_op("Gelu", {tv<float>({1}, {1})}, {attr_string("approximate", "fast")}, 20).is_ok());
  EXPECT_FALSE(run_op("Celu", {tv<float>({1}, {1})}, {attr_float("alpha", 0.0f)}, 12).is_ok());
}

TEST(ActivationOps, ClipInputsAndAttributes) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto x = tv<float>({-2.0f, 0.0f, 3.0f, nan}, {4});
  auto r = run_op("Clip", {x, tv<float>({-1.0f}, {}), tv<float>({1.0f}, {})}, {}, 13);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  auto y = values<float>((*r)[0]);
  EXPECT_EQ(y[0], -1.0f);
  EXPECT_EQ(y[1], 0.0f);
  EXPECT_EQ(y[2], 1.0f);
  EXPECT_TRUE(std::isnan(y[3]));
  // Only max given.
  r = run_op("Clip", {x, Value(), tv<float>({0.5f}, {})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  y = values<float>((*r)[0]);
  EXPECT_EQ(y[0], -2.0f);
  EXPECT_EQ(y[2], 0.5f);
  // min > max: everything becomes max.
  r = run_op("Clip", {x, tv<float>({2.0f}, {}), tv<float>({1.0f}, {})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  y = values<float>((*r)[0]);
  EXPECT_EQ(y[0], 1.0f);
  EXPECT_EQ(y[1], 1.0f);
  // No bounds: identity.
  r = run_op("Clip", {x}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[0])[2], 3.0f);
  // Integers (opset 12+).
  r = run_op("Clip", {tv<int8_t>({-128, 5, 127}, {3}), tv<int8_t>({-10}, {})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<int8_t>((*r)[0]), (std::vector<int8_t>{-10, 5, 127}));
  // Attributes before opset 11.
  r = run_op("Clip", {x}, {attr_float("min", -0.5f), attr_float("max", 0.5f)}, 6);
  ASSERT_TRUE(r.is_ok());
  y = values<float>((*r)[0]);
  EXPECT_EQ(y[0], -0.5f);
  EXPECT_EQ(y[2], 0.5f);
  // Errors: non-scalar bound, mismatched type.
  EXPECT_FALSE(run_op("Clip", {x, tv<float>({0, 1}, {2})}, {}, 13).is_ok());
  EXPECT_FALSE(run_op("Clip", {x, tv<double>({0}, {})}, {}, 13).is_ok());
}

}  // namespace
}  // namespace xonnx
