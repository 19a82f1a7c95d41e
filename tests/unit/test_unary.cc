// Unary ops: Abs Neg Sqrt Exp Log Reciprocal Floor Ceil Round Sign, trig, Erf, IsNaN, IsInf,
// Not, BitwiseNot.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace {

using testing::attr_int;
using testing::run_op;
using testing::tv;
using testing::values;

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

TEST(UnaryOps, FloatMathMatchesLibm) {
  const std::vector<float> x = {0.25f, 0.5f, 0.9f};
  struct Case {
    const char* op;
    double (*fn)(double);
  };
  const Case cases[] = {{"Sqrt", std::sqrt},   {"Exp", std::exp},   {"Log", std::log},   {"Sin", std::sin},
                        {"Cos", std::cos},     {"Tan", std::tan},   {"Asin", std::asin}, {"Acos", std::acos},
                        {"Atan", std::atan},   {"Sinh", std::sinh}, {"Cosh", std::cosh}, {"Asinh", std::asinh},
                        {"Atanh", std::atanh}, {"Erf", std::erf}};
  for (const Case& c : cases) {
    auto r = run_op(c.op, {tv<float>(x, {3})}, {}, 22);
    ASSERT_TRUE(r.is_ok()) << c.op << ": " << r.status().to_string();
    const auto y = values<float>((*r)[0]);
    for (size_t i = 0; i < x.size(); ++i) {
      EXPECT_NEAR(y[i], c.fn(x[i]), 1e-6 * (1 + std::fabs(c.fn(x[i])))) << c.op << " " << x[i];
    }
  }
  auto r = run_op("Acosh", {tv<double>({1.0, 2.0}, {2})}, {}, 22);
  ASSERT_TRUE(r.is_ok());
  EXPECT_DOUBLE_EQ(values<double>((*r)[0])[1], std::acosh(2.0));
  r = run_op("Reciprocal", {tv<double>({4.0, -0.5}, {1, 2})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{1, 2}));
  EXPECT_EQ(values<double>((*r)[0]), (std::vector<double>{0.25, -2.0}));
}

TEST(UnaryOps, RoundIsHalfToEven) {
  auto r = run_op("Round", {tv<float>({0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.4f, -2.6f, kNaN}, {8})}, {}, 22);
  ASSERT_TRUE(r.is_ok());
  const auto y = values<float>((*r)[0]);
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_EQ(y[1], 2.0f);
  EXPECT_EQ(y[2], 2.0f);
  EXPECT_EQ(y[3], -0.0f);
  EXPECT_EQ(y[4], -2.0f);
  EXPECT_EQ(y[5], 2.0f);
  EXPECT_EQ(y[6], -3.0f);
  EXPECT_TRUE(std::isnan(y[7]));
  r = run_op("Floor", {tv<float>({-1.5f, 1.5f}, {2})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{-2.0f, 1.0f}));
  r = run_op("Ceil", {tv<float>({-1.5f, 1.5f}, {2})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{-1.0f, 2.0f}));
}

TEST(UnaryOps, AbsNegSignIntegersWrap) {
  auto r = run_op("Abs", {tv<int8_t>({-128, -3, 0, 5}, {4})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<int8_t>((*r)[0]), (std::vector<int8_t>{-128, 3, 0, 5}));
  r = run_op("Abs", {tv<uint16_t>({7, 65535}, {2})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<uint16_t>((*r)[0]), (std::vector<uint16_t>{7, 65535}));
  r = run_op("Neg", {tv<int32_t>({INT32_MIN, -2, 3}, {3})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<int32_t>((*r)[0]), (std::vector<int32_t>{INT32_MIN, 2, -3}));
  r = run_op("Neg", {tv<uint32_t>({1}, {1})}, {}, 13);
  EXPECT_FALSE(r.is_ok());
  r = run_op("Sign", {tv<float>({-2.0f, 0.0f, 3.0f, kNaN}, {4})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  auto s = values<float>((*r)[0]);
  EXPECT_EQ(s[0], -1.0f);
  EXPECT_EQ(s[1], 0.0f);
  EXPECT_EQ(s[2], 1.0f);
  EXPECT_TRUE(std::isnan(s[3]));
  r = run_op("Sign", {tv<int64_t>({-9, 0, 4}, {3})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<int64_t>((*r)[0]), (std::vector<int64_t>{-1, 0, 1}));
  r = run_op("Sign", {tv<uint8_t>({0, 200}, {2})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<uint8_t>((*r)[0]), (std::vector<uint8_t>{0, 1}));
}

TEST(UnaryOps, HalfTypesComputeInFloat) {
  std::vector<Float16> h = {Float16{float_to_half(4.0f)}, Float16{float_to_half(-2.5f)}};
  auto r = run_op("Abs", {Value(Tensor::from_vector<Float16>(h, {2}))}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  ASSERT_EQ((*r)[0].tensor().dtype(), DataType::kFloat16);
  EXPECT_EQ(half_to_float((*r)[0].tensor().data<Float16>()[1].bits), 2.5f);
  std::vector<BFloat16> b = {BFloat16{float_to_bfloat16(16.0f)}};
  r = run_op("Sqrt", {Value(Tensor::from_vector<BFloat16>(b, {1}))}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(bfloat16_to_float((*r)[0].tensor().data<BFloat16>()[0].bits), 4.0f);
}

TEST(UnaryOps, EmptyAndScalarShapes) {
  auto r = run_op("Exp", {tv<float>({}, {0, 3})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{0, 3}));
  r = run_op("Neg", {tv<float>({2.0f}, {})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().shape(), Shape{});
  EXPECT_EQ(values<float>((*r)[0])[0], -2.0f);
}

TEST(UnaryOps, IsNaNIsInf) {
  auto x = tv<float>({-1.2f, kNaN, kInf, 2.8f, -kInf, kInf}, {6});
  auto r = run_op("IsNaN", {x}, {}, 20);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<bool>((*r)[0]), (std::vector<bool>{false, true, false, false, false, false}));
  r = run_op("IsInf", {x}, {}, 20);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<bool>((*r)[0]), (std::vector<bool>{false, false, true, false, true, true}));
  r = run_op("IsInf", {x}, {attr_int("detect_negative", 0)}, 20);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<bool>((*r)[0]), (std::vector<bool>{false, false, true, false, false, true}));
  r = run_op("IsInf", {x}, {attr_int("detect_positive", 0)}, 20);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<bool>((*r)[0]), (std::vector<bool>{false, false, false, false, true, false}));
  r = run_op("IsNaN", {tv<int32_t>({1}, {1})}, {}, 20);
  EXPECT_FALSE(r.is_ok());
}

TEST(UnaryOps, NotAndBitwiseNot) {
  auto r = run_op("Not", {tv<bool>({true, false}, {2})}, {}, 1);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<bool>((*r)[0]), (std::vector<bool>{false, true}));
  r = run_op("Not", {tv<int32_t>({1}, {1})}, {}, 1);
  EXPECT_FALSE(r.is_ok());
  r = run_op("BitwiseNot", {tv<uint8_t>({0, 255, 0x0f}, {3})}, {}, 18);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<uint8_t>((*r)[0]), (std::vector<uint8_t>{255, 0, 0xf0}));
  r = run_op("BitwiseNot", {tv<int32_t>({0, -1, 5}, {3})}, {}, 18);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<int32_t>((*r)[0]), (std::vector<int32_t>{-1, 0, -6}));
  r = run_op("BitwiseNot", {tv<float>({1.0f}, {1})}, {}, 18);
  EXPECT_FALSE(r.is_ok());
}

TEST(UnaryOps, RejectsWrongTypes) {
  EXPECT_FALSE(run_op("Sqrt", {tv<int32_t>({4}, {1})}, {}, 13).is_ok());
  EXPECT_FALSE(run_op("Sin", {tv<bool>({true}, {1})}, {}, 7).is_ok());
  EXPECT_FALSE(run_op("Abs", {tv<std::string>({"a"}, {1})}, {}, 13).is_ok());
}

}  // namespace
}  // namespace xonnx
