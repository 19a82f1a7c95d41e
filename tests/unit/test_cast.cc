// Cast and CastLike: native numbers, float16/bfloat16, float8 (saturating or not), float4,
// float8e8m0, packed int4/int2, strings.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace {

using testing::attr_int;
using testing::attr_string;
using testing::run_op;
using testing::tv;
using testing::values;

std::vector<uint8_t> bytes(const Value& v) {
  const Tensor& t = v.tensor();
  const auto* p = static_cast<const uint8_t*>(t.raw_data());
  return std::vector<uint8_t>(p, p + t.nbytes());
}

Result<std::vector<Value>> cast(const Value& x, DataType to, std::vector<Attribute> attrs = {}, int64_t opset = 25) {
  attrs.push_back(attr_int("to", static_cast<int64_t>(to)));
  return run_op("Cast", {x}, attrs, opset);
}

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

TEST(CastOps, NativeNumbers) {
  auto r = cast(tv<float>({1.9f, -1.9f, 0.0f, 300.0f}, {2, 2}), DataType::kInt32);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{2, 2}));
  EXPECT_EQ(values<int32_t>((*r)[0]), (std::vector<int32_t>{1, -1, 0, 300}));
  r = cast(tv<float>({300.0f, -1.0f, kNaN}, {3}), DataType::kUint8);  // wraps; NaN -> 0
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<uint8_t>((*r)[0]), (std::vector<uint8_t>{44, 255, 0}));
  r = cast(tv<float>({kInf, -kInf}, {2}), DataType::kInt64);  // saturates past int64
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<int64_t>((*r)[0]), (std::vector<int64_t>{INT64_MAX, std::numeric_limits<int64_t>::min()}));
  r = cast(tv<int64_t>({-1, 2, 0}, {3}), DataType::kBool);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<bool>((*r)[0]), (std::vector<bool>{true, true, false}));
  r = cast(tv<bool>({true, false}, {2}), DataType::kDouble);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<double>((*r)[0]), (std::vector<double>{1.0, 0.0}));
  r = cast(tv<int32_t>({-1, 70000}, {2}), DataType::kInt16);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<int16_t>((*r)[0]), (std::vector<int16_t>{-1, 4464}));
  r = cast(tv<double>({0.1}, {1}), DataType::kFloat);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[0])[0], 0.1f);
  r = cast(tv<float>({1.5f}, {1}), DataType::kFloat);  // identity
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[0])[0], 1.5f);
}

TEST(CastOps, HalfAndBFloat16) {
  auto r = cast(tv<float>({1.0f, 65504.0f, 70000.0f, kNaN}, {4}), DataType::kFloat16);
  ASSERT_TRUE(r.is_ok());
  const auto h = values<Float16>((*r)[0]);
  EXPECT_EQ(half_to_float(h[0].bits), 1.0f);
  EXPECT_EQ(half_to_float(h[1].bits), 65504.0f);
  EXPECT_TRUE(std::isinf(half_to_float(h[2].bits)));
  EXPECT_TRUE(std::isnan(half_to_float(h[3].bits)));
  // Double -> half rounds once: 1 + 2^-11 + 2^-40 is just above the halfway point.
  r = cast(tv<double>({1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)}, {1}), DataType::kFloat16);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(half_to_float(values<Float16>((*r)[0])[0].bits), 1.0f + std::ldexp(1.0f, -10));
  r = cast(tv<float>({3.140625f, -2.0f}, {2}), DataType::kBFloat16);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(bfloat16_to_float(values<BFloat16>((*r)[0])[0].bits), 3.140625f);
  r = cast((*r)[0], DataType::kInt32);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<int32_t>((*r)[0]), (std::vector<int32_t>{3, -2}));
}

TEST(CastOps, Float8SaturateAndNot) {
  const std::vector<float> x = {0.5f, 1000000.0f, -kInf, kNaN, -1e-7f, 464.0f};
  auto r = cast(tv<float>(x, {6}), DataType::kFloat8E4M3FN);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(bytes((*r)[0]), (std::vector<uint8_t>{0x30, 0x7e, 0xfe, 0x7f, 0x80, 0x7e}));
  r = cast(tv<float>(x, {6}), DataType::kFloat8E4M3FN, {attr_int("saturate", 0)});
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(bytes((*r)[0]), (std::vector<uint8_t>{0x30, 0x7f, 0xff, 0x7f, 0x80, 0x7e}));
  r = cast(tv<float>(x, {6}), DataType::kFloat8E5M2, {attr_int("saturate", 0)});
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(bytes((*r)[0]), (std::vector<uint8_t>{0x38, 0x7c, 0xfc, 0x7e, 0x80, 0x5f}));
  r = cast(tv<float>(x, {6}), DataType::kFloat8E4M3FNUZ);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(bytes((*r)[0]), (std::vector<uint8_t>{0x38, 0x7f, 0xff, 0x80, 0x00, 0x7f}));
  r = cast(tv<float>(x, {6}), DataType::kFloat8E5M2FNUZ, {attr_int("saturate", 0)});
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(bytes((*r)[0]), (std::vector<uint8_t>{0x3c, 0x80, 0x80, 0x80, 0x00, 0x63}));
  // And back.
  r = cast((*r)[0], DataType::kFloat);
  ASSERT_TRUE(r.is_ok());
  const auto back = values<float>((*r)[0]);
  EXPECT_EQ(back[0], 0.5f);
  EXPECT_TRUE(std::isnan(back[1]));
  EXPECT_EQ(back[4], 0.0f);
  EXPECT_EQ(back[5], 448.0f);
}

TEST(CastOps, Float4AndE8M0) {
  auto r = cast(tv<float>({0.48f, 0.25f, -3.5f, 9.0f, kNaN, -kInf, -0.0f}, {7}), DataType::kFloat4E2M1);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(bytes((*r)[0]), (std::vector<uint8_t>{0x01, 0x7e, 0xf8, 0x08}));
  r = cast((*r)[0], DataType::kFloat);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[0])[3], 6.0f);
  const std::vector<float> e = {0.0f, 0.124f, 1.1f, 8.0f, -2.0f, kInf};
  r = cast(tv<float>(e, {6}), DataType::kFloat8E8M0, {attr_string("round_mode", "up")});
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(bytes((*r)[0]), (std::vector<uint8_t>{0x00, 0x7c, 0x80, 0x82, 0x80, 0xff}));
  r = cast(tv<float>(e, {6}), DataType::kFloat8E8M0, {attr_string("round_mode", "down")});
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(bytes((*r)[0]), (std::vector<uint8_t>{0x00, 0x7b, 0x7f, 0x82, 0x80, 0xff}));
  r = cast(tv<float>({1.4f, 1.6f}, {2}), DataType::kFloat8E8M0, {attr_string("round_mode", "nearest")});
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(bytes((*r)[0]), (std::vector<uint8_t>{0x7f, 0x80}));
  EXPECT_FALSE(cast(tv<float>({1.0f}, {1}), DataType::kFloat8E8M0, {attr_string("round_mode", "sideways")}).is_ok());
}

TEST(CastOps, PackedIntegersWrap) {
  auto r = cast(tv<float>({-9, -8, 7, 8, 15}, {5}), DataType::kInt4);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(bytes((*r)[0]), (std::vector<uint8_t>{0x87, 0x87, 0x0f}));
  r = cast((*r)[0], DataType::kInt8);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<int8_t>((*r)[0]), (std::vector<int8_t>{7, -8, 7, -8, -1}));
  r = cast(tv<float>({-3, -2, -1, 0, 1, 2, 3}, {7, 1}), DataType::kUint2);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(bytes((*r)[0]), (std::vector<uint8_t>{0x39, 0x39}));
  r = cast((*r)[0], DataType::kUint8);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<uint8_t>((*r)[0]), (std::vector<uint8_t>{1, 2, 3, 0, 1, 2, 3}));
  r = cast(tv<int64_t>({-2, 1}, {2}), DataType::kInt2);
  ASSERT_TRUE(r.is_ok());
  r = cast((*r)[0], DataType::kFloat16);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(half_to_float(values<Float16>((*r)[0])[0].bits), -2.0f);
}

TEST(CastOps, Strings) {
  auto r = cast(tv<float>({0.47892547f, 1.0f, 1e-5f, 1e16f, -0.0f, kNaN, -kInf, 123456.5f}, {8}), DataType::kString);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  const std::string* s = (*r)[0].tensor().string_data();
  EXPECT_EQ(s[0], "0.47892547");
  EXPECT_EQ(s[1], "1.0");
  EXPECT_EQ(s[2], "1e-05");
  EXPECT_EQ(s[3], "1e+16");
  EXPECT_EQ(s[4], "-0.0");
  EXPECT_EQ(s[5], "nan");
  EXPECT_EQ(s[6], "-inf");
  EXPECT_EQ(s[7], "123456.5");
  r = cast(tv<double>({0.1}, {1}), DataType::kString);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().string_data()[0], "0.1");
  r = cast(tv<int32_t>({-42}, {1}), DataType::kString);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().string_data()[0], "-42");
  r = cast(tv<bool>({true}, {1}), DataType::kString);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().string_data()[0], "True");

  auto in = tv<std::string>({"0.47892547", "NaN", "INF", "+INF", "-INF", " 2.5 "}, {2, 3});
  r = cast(in, DataType::kFloat);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  const auto f = values<float>((*r)[0]);
  EXPECT_EQ(f[0], 0.47892547f);
  EXPECT_TRUE(std::isnan(f[1]));
  EXPECT_EQ(f[2], kInf);
  EXPECT_EQ(f[3], kInf);
  EXPECT_EQ(f[4], -kInf);
  EXPECT_EQ(f[5], 2.5f);
  r = cast(tv<std::string>({"-7", "18446744073709551615"}, {2}), DataType::kUint64);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<uint64_t>((*r)[0]), (std::vector<uint64_t>{uint64_t(0) - 7, 18446744073709551615ull}));
  r = cast(tv<std::string>({"true", "False", "0", "2"}, {4}), DataType::kBool);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<bool>((*r)[0]), (std::vector<bool>{true, false, false, true}));
  EXPECT_FALSE(cast(tv<std::string>({"abc"}, {1}), DataType::kFloat).is_ok());
  EXPECT_FALSE(cast(tv<std::string>({"1x"}, {1}), DataType::kInt32).is_ok());
}

TEST(CastOps, LegacyStringToAttribute) {
  auto r = run_op("Cast", {tv<float>({2.7f}, {1})}, {attr_string("to", "INT32")}, 1);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<int32_t>((*r)[0])[0], 2);
}

TEST(CastOps, CastLikeAndErrors) {
  auto r = run_op("CastLike", {tv<float>({1.5f, -2.0f}, {2}), tv<double>({}, {0})}, {}, 21);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().dtype(), DataType::kDouble);
  EXPECT_EQ(values<double>((*r)[0]), (std::vector<double>{1.5, -2.0}));
  r = run_op("CastLike", {tv<float>({1000.0f}, {1}), Value(Tensor::allocate(DataType::kFloat8E4M3FN, {0}).value())},
             {attr_int("saturate", 0)}, 21);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(bytes((*r)[0]), (std::vector<uint8_t>{0x7f}));
  EXPECT_FALSE(run_op("Cast", {tv<float>({1.0f}, {1})}, {}, 13).is_ok());  // missing 'to'
  EXPECT_FALSE(cast(tv<float>({1.0f}, {1}), static_cast<DataType>(99)).is_ok());
  EXPECT_FALSE(cast(tv<float>({1.0f}, {1}), DataType::kComplex64).is_ok());
}

}  // namespace
}  // namespace xonnx
