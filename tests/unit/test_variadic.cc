// Variadic ops: Sum Mean Max Min, Where, PRelu.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace {

using testing::run_op;
using testing::tv;
using testing::values;

TEST(VariadicOps, SumMeanBroadcast) {
  auto r = run_op(
      "Sum", {tv<float>({1, 2, 3}, {3}), tv<float>({10, 20, 30, 40, 50, 60}, {2, 3}), tv<float>({100}, {1})}, {}, 13);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{2, 3}));
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{111, 122, 133, 141, 152, 163}));
  r = run_op("Mean", {tv<double>({1, 2}, {2}), tv<double>({3, 6}, {2})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<double>((*r)[0]), (std::vector<double>{2, 4}));
  r = run_op("Sum", {tv<float>({1, 2}, {2})}, {}, 13);  // one input: copy
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{1, 2}));
}

TEST(VariadicOps, MaxMinIntsAndNaN) {
  auto r = run_op("Max", {tv<int8_t>({-5, 3, 0}, {3}), tv<int8_t>({2, -1, 0}, {3}), tv<int8_t>({-7}, {1})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<int8_t>((*r)[0]), (std::vector<int8_t>{2, 3, 0}));
  r = run_op("Min", {tv<uint64_t>({5, 3}, {2}), tv<uint64_t>({4, 9}, {2})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<uint64_t>((*r)[0]), (std::vector<uint64_t>{4, 3}));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  r = run_op("Max", {tv<float>({nan, 1}, {2}), tv<float>({1, nan}, {2})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_TRUE(std::isnan(values<float>((*r)[0])[0]));
  EXPECT_TRUE(std::isnan(values<float>((*r)[0])[1]));
}

TEST(VariadicOps, Float16Accumulates) {
  std::vector<Float16> a = {Float16{float_to_half(1.0f)}, Float16{float_to_half(2.0f)}};
  auto r = run_op("Mean",
                  {Value(Tensor::from_vector<Float16>(a, {2})), Value(Tensor::from_vector<Float16>(a, {2})),
                   Value(Tensor::from_vector<Float16>(a, {2}))},
                  {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(half_to_float((*r)[0].tensor().data<Float16>()[1].bits), 2.0f);
}

TEST(VariadicOps, ErrorsAndLegacyShapes) {
  EXPECT_FALSE(run_op("Sum", {tv<float>({1, 2}, {2}), tv<float>({1, 2, 3}, {3})}, {}, 13).is_ok());
  EXPECT_FALSE(run_op("Sum", {tv<float>({1, 2}, {2}), tv<double>({1, 2}, {2})}, {}, 13).is_ok());
  // opset 6: no broadcasting
  EXPECT_FALSE(run_op("Max", {tv<float>({1, 2}, {2}), tv<float>({1}, {1})}, {}, 6).is_ok());
  auto r = run_op("Max", {tv<float>({1, 5}, {2}), tv<float>({3, 2}, {2})}, {}, 6);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{3, 5}));
  r = run_op("Min", {tv<float>({}, {2, 0}), tv<float>({1}, {1})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{2, 0}));
  EXPECT_FALSE(run_op("Mean", {tv<int32_t>({1}, {1}), tv<int32_t>({1}, {1})}, {}, 13).is_ok());
}

TEST(VariadicOps, WhereBroadcastAndTypes) {
  auto r = run_op("Where", {tv<bool>({true, false}, {2, 1}), tv<float>({1, 2, 3}, {3}), tv<float>({-1}, {})}, {}, 16);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{2, 3}));
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{1, 2, 3, -1, -1, -1}));
  r = run_op("Where", {tv<bool>({true, false, true}, {3}), tv<int64_t>({1, 2, 3}, {3}), tv<int64_t>({7, 8, 9}, {3})},
             {}, 16);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<int64_t>((*r)[0]), (std::vector<int64_t>{1, 8, 3}));
  r = run_op("Where", {tv<bool>({false, true}, {2}), tv<std::string>({"x"}, {1}), tv<std::string>({"a", "b"}, {2})}, {},
             16);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().string_data()[0], "a");
  EXPECT_EQ((*r)[0].tensor().string_data()[1], "x");
  r = run_op("Where", {tv<bool>({true, false, true, false}, {2, 2}), tv<uint8_t>({1}, {1}), tv<uint8_t>({5, 6}, {2})},
             {}, 16);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<uint8_t>((*r)[0]), (std::vector<uint8_t>{1, 6, 1, 6}));
  EXPECT_FALSE(run_op("Where", {tv<float>({1}, {1}), tv<float>({1}, {1}), tv<float>({1}, {1})}, {}, 16).is_ok());
  EXPECT_FALSE(run_op("Where", {tv<bool>({true}, {1}), tv<float>({1}, {1}), tv<double>({1}, {1})}, {}, 16).is_ok());
  EXPECT_FALSE(
      run_op("Where", {tv<bool>({true, true}, {2}), tv<float>({1, 2, 3}, {3}), tv<float>({1}, {1})}, {}, 16).is_ok());
}

TEST(VariadicOps, PRelu) {
  auto r = run_op("PRelu", {tv<float>({-2, 3, -4, 5, -6, 7}, {2, 3}), tv<float>({0.5f, 1, 2}, {3})}, {}, 16);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{-1, 3, -8, 5, -6, 7}));
  r = run_op("PRelu", {tv<int32_t>({-2, 3}, {2}), tv<int32_t>({3}, {1})}, {}, 16);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<int32_t>((*r)[0]), (std::vector<int32_t>{-6, 3}));
  // slope must broadcast to X (unidirectional)
  EXPECT_FALSE(run_op("PRelu", {tv<float>({1, 2}, {2}), tv<float>({1, 2, 3, 4}, {2, 2})}, {}, 16).is_ok());
  // opset 6: a slope of C values applies along axis 1
  r = run_op("PRelu", {tv<float>({-1, -1, -1, -1, -1, -1, -1, -1}, {1, 2, 2, 2}), tv<float>({0.5f, 2}, {2})}, {}, 6);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{-0.5f, -0.5f, -0.5f, -0.5f, -2, -2, -2, -2}));
}

}  // namespace
}  // namespace xonnx
