// Quantize family: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, QLinearMatMul,
// MatMulInteger, ConvInteger, QLinearConv.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace {

using testing::attr_int;
using testing::attr_ints;
using testing::run_op;
using testing::values;

Tensor ft(std::vector<float> v, Shape s) { return Tensor::from_vector<float>(v, std::move(s)); }
Tensor fscalar(float v) { return Tensor::scalar<float>(v); }

// A packed sub-byte tensor from integer values (two's complement codes).
Tensor packed(DataType t, const std::vector<int>& v, Shape s) {
  auto storage = Storage::allocate(static_cast<size_t>(dtype_storage_bytes(t, static_cast<int64_t>(v.size()))));
  Tensor out(t, std::move(s), storage);
  for (size_t i = 0; i < v.size(); ++i)
    subbyte_set(out.raw_data(), t, static_cast<int64_t>(i), static_cast<uint8_t>(v[i] & 0xf));
  return out;
}

std::vector<int64_t> as_ints(const Value& v) {
  std::vector<int64_t> r;
  for (int64_t i = 0; i < v.tensor().numel(); ++i) r.push_back(v.tensor().get_as_int64(i));
  return r;
}

// ---- QuantizeLinear --------------------------------------------------------------------------

TEST(QuantizeLinearOp, PerTensorRoundsHalfToEvenAndSaturates) {
  auto r = run_op("QuantizeLinear",
                  {ft({0.5f, 1.5f, 2.5f, -3.0f, 1000.0f}, {5}), fscalar(1.0f), Tensor::scalar<uint8_t>(1)}, {}, 13);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<uint8_t>((*r)[0]), (std::vector<uint8_t>{1, 3, 3, 0, 255}));
  // no zero point: uint8 with zp 0
  auto d = run_op("QuantizeLinear", {ft({-1.0f, 3.0f}, {2}), fscalar(2.0f)}, {}, 10);
  ASSERT_TRUE(d.is_ok()) << d.status().to_string();
  EXPECT_EQ((*d)[0].tensor().dtype(), DataType::kUint8);
  EXPECT_EQ(values<uint8_t>((*d)[0]), (std::vector<uint8_t>{0, 2}));
  auto i8 =
      run_op("QuantizeLinear", {ft({-1000.0f, -2.5f, 127.4f}, {3}), fscalar(1.0f), Tensor::scalar<int8_t>(0)}, {}, 19);
  ASSERT_TRUE(i8.is_ok()) << i8.status().to_string();
  EXPECT_EQ(values<int8_t>((*i8)[0]), (std::vector<int8_t>{-128, -2, 127}));
}

TEST(QuantizeLinearOp, PerAxisAndBlocked) {
  const Tensor x = ft({1, 2, 3, 4, 5, 6}, {2, 3});
  auto pa = run_op("QuantizeLinear", {x, ft({1, 2}, {2}), Tensor::from_vector<uint8_t>({0, 10}, {2})},
                   {attr_int("axis", 0)}, 13);
  ASSERT_TRUE(pa.is_ok()) << pa.status().to_string();
  EXPECT_EQ(values<uint8_t>((*pa)[0]), (std::vector<uint8_t>{1, 2, 3, 12, 12, 13}));
  // blocked along axis 1 with block 2: scale shape (2, 2), last block is partial
  auto bl = run_op("QuantizeLinear", {x, ft({1, 3, 2, 6}, {2, 2})},
                   {attr_int("axis", 1), attr_int("block_size", 2), attr_int("output_dtype", 3)}, 21);
  ASSERT_TRUE(bl.is_ok()) << bl.status().to_string();
  EXPECT_EQ((*bl)[0].tensor().dtype(), DataType::kInt8);
  EXPECT_EQ(values<int8_t>((*bl)[0]), (std::vector<int8_t>{1, 2, 1, 2, 2, 1}));
}

TEST(QuantizeLinearOp, SubByteAndFloat8Outputs) {
  auto i4 =
      run_op("QuantizeLinear", {ft({-20, -3, 2, 30}, {4}), fscalar(2.0f), packed(DataType::kInt4, {1}, {1})}, {}, 21);
  ASSERT_TRUE(i4.is_ok()) << i4.status().to_string();
  EXPECT_EQ((*i4)[0].tensor().dtype(), DataType::kInt4);
  EXPECT_EQ(as_ints((*i4)[0]), (std::vector<int64_t>{-8, -1, 2, 7}));
  auto u2 = run_op("QuantizeLinear", {ft({-1, 1, 2, 9}, {4}), fscalar(1.0f)}, {attr_int("output_dtype", 25)}, 25);
  ASSERT_TRUE(u2.is_ok()) << u2.status().to_string();
  EXPECT_EQ(as_ints((*u2)[0]), (std::vector<int64_t>{0, 1, 2, 3}));
  auto f8 = run_op("QuantizeLinear", {ft({1.0f, 1000.0f}, {2}), fscalar(1.0f)}, {attr_int("output_dtype", 17)}, 21);
  ASSERT_TRUE(f8.is_ok()) << f8.status().to_string();
  EXPECT_EQ((*f8)[0].tensor().get_as_double(0), 1.0);
  EXPECT_EQ((*f8)[0].tensor().get_as_double(1), 448.0);
  auto f8ns = run_op("QuantizeLinear", {ft({1000.0f}, {1}), fscalar(1.0f)},
                     {attr_int("output_dtype", 17), attr_int("saturate", 0)}, 21);
  ASSERT_TRUE(f8ns.is_ok()) << f8ns.status().to_string();
  EXPECT_TRUE(std::isnan((*f8ns)[0].tensor().get_as_double(0)));
}

TEST(QuantizeLinearOp, Errors) {
  const Tensor x = ft({1, 2, 3, 4, 5, 6}, {2, 3});
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(run_op("QuantizeLinear", {x, fscalar(0.0f)}, {}, 13).is_ok());
  EXPECT_FALSE(run_op("QuantizeLinear", {x, fscalar(-1.0f)}, {}, 13).is_ok());
  EXPECT_FALSE(run_op("QuantizeLinear", {x, fscalar(nan)}, {}, 13).is_ok());
  // per-axis length mismatch (axis 1 has 3 elements)
  auto r = run_op("QuantizeLinear", {x, ft({1, 2}, {2})}, {}, 13);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("y_scale"), std::string::npos) << r.status().message();
  // zero point shape differs from scale
  EXPECT_FALSE(
      run_op("QuantizeLinear", {x, ft({1, 2, 3}, {3}), Tensor::from_vector<uint8_t>({0, 0}, {2})}, {}, 13).is_ok());
  // per-axis before opset 13
  EXPECT_FALSE(run_op("QuantizeLinear", {x, ft({1, 2, 3}, {3})}, {}, 10).is_ok());
  // output_dtype disagrees with the zero point
  EXPECT_FALSE(
      run_op("QuantizeLinear", {x, fscalar(1.0f), Tensor::scalar<uint8_t>(0)}, {attr_int("output_dtype", 3)}, 21)
          .is_ok());
  EXPECT_FALSE(run_op("QuantizeLinear", {x, fscalar(1.0f)}, {attr_int("output_dtype", 1)}, 21).is_ok());
  // blocked scale with the wrong number of blocks
  EXPECT_FALSE(run_op("QuantizeLinear", {x, ft({1, 1, 1, 1, 1, 1}, {2, 3})},
                      {attr_int("axis", 1), attr_int("block_size", 2)}, 21)
                   .is_ok());
  // bad axis
  EXPECT_FALSE(run_op("QuantizeLinear", {x, ft({1, 2, 3}, {3})}, {attr_int("axis", 4)}, 13).is_ok());
}

// ---- DequantizeLinear ------------------------------------------------------------------------

TEST(DequantizeLinearOp, TypesAndGranularities) {
  auto u8 =
      run_op("DequantizeLinear",
             {Tensor::from_vector<uint8_t>({0, 10, 255}, {3}), fscalar(0.5f), Tensor::scalar<uint8_t>(10)}, {}, 13);
  ASSERT_TRUE(u8.is_ok()) << u8.status().to_string();
  EXPECT_EQ(values<float>((*u8)[0]), (std::vector<float>{-5.0f, 0.0f, 122.5f}));
  auto i32 = run_op("DequantizeLinear", {Tensor::from_vector<int32_t>({-7, 100000}, {2}), fscalar(2.0f)}, {}, 13);
  ASSERT_TRUE(i32.is_ok()) << i32.status().to_string();
  EXPECT_EQ(values<float>((*i32)[0]), (std::vector<float>{-14.0f, 200000.0f}));
  auto pa = run_op(
      "DequantizeLinear",
      {Tensor::from_vector<int8_t>({1, 2, 3, 4}, {2, 2}), ft({1, 10}, {2}), Tensor::from_vector<int8_t>({0, 1}, {2})},
      {attr_int("axis", -1)}, 13);
  ASSERT_TRUE(pa.is_ok()) << pa.status().to_string();
  EXPECT_EQ(values<float>((*pa)[0]), (std::vector<float>{1, 10, 3, 30}));
  auto i4 = run_op("DequantizeLinear", {packed(DataType::kInt4, {-8, 7, 1}, {3}), fscalar(1.0f)}, {}, 21);
  ASSERT_TRUE(i4.is_ok()) << i4.status().to_string();
  EXPECT_EQ(values<float>((*i4)[0]), (std::vector<float>{-8, 7, 1}));
  // blocked, float16 scale -> float16 output; output_dtype float
  std::vector<Float16> hs{Float16{float_to_half(1.0f)}, Float16{float_to_half(2.0f)}};
  auto bl = run_op("DequantizeLinear",
                   {Tensor::from_vector<uint8_t>({1, 2, 3, 4}, {4}), Tensor::from_vector<Float16>(hs, {2})},
                   {attr_int("axis", 0), attr_int("block_size", 2)}, 21);
  ASSERT_TRUE(bl.is_ok()) << bl.status().to_string();
  EXPECT_EQ((*bl)[0].tensor().dtype(), DataType::kFloat16);
  EXPECT_EQ((*bl)[0].tensor().get_as_double(3), 8.0);
  auto od =
      run_op("DequantizeLinear", {Tensor::from_vector<uint8_t>({3}, {1}), Tensor::from_vector<Float16>({hs[1]}, {})},
             {attr_int("output_dtype", 1)}, 23);
  ASSERT_TRUE(od.is_ok()) << od.status().to_string();
  EXPECT_EQ((*od)[0].tensor().dtype(), DataType::kFloat);
  EXPECT_EQ(values<float>((*od)[0]), (std::vector<float>{6.0f}));
}

TEST(DequantizeLinearOp, Errors) {
  const Tensor x = Tensor::from_vector<uint8_t>({1, 2, 3, 4}, {2, 2});
  EXPECT_FALSE(run_op("DequantizeLinear", {x, fscalar(1.0f), Tensor::scalar<int8_t>(0)}, {}, 13).is_ok());
  EXPECT_FALSE(run_op("DequantizeLinear", {x, fscalar(std::numeric_limits<float>::quiet_NaN())}, {}, 13).is_ok());
  EXPECT_FALSE(run_op("DequantizeLinear", {x, fscalar(-1.0f)}, {}, 13).is_ok());
  EXPECT_FALSE(run_op("DequantizeLinear", {x, ft({1, 2, 3}, {3})}, {}, 13).is_ok());
  EXPECT_FALSE(run_op("DequantizeLinear", {ft({1}, {1}), fscalar(1.0f)}, {}, 13).is_ok());
  EXPECT_FALSE(run_op("DequantizeLinear", {x, fscalar(1.0f)}, {attr_int("output_dtype", 7)}, 23).is_ok());
}

// ---- DynamicQuantizeLinear -------------------------------------------------------------------

TEST(DynamicQuantizeLinearOp, ComputesScaleAndZeroPoint) {
  auto r = run_op("DynamicQuantizeLinear", {ft({0, 2, -3, -2.5f, 1.34f, 0.5f}, {6})}, {}, 11, 3);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<uint8_t>((*r)[0]), (std::vector<uint8_t>{153, 255, 0, 26, 221, 179}));
  EXPECT_NEAR(values<float>((*r)[1])[0], 5.0f / 255.0f, 1e-7f);
  EXPECT_EQ(values<uint8_t>((*r)[2])[0], 153);
  auto z = run_op("DynamicQuantizeLinear", {ft({0, 0}, {2})}, {}, 11, 3);
  ASSERT_TRUE(z.is_ok()) << z.status().to_string();
  EXPECT_EQ(values<float>((*z)[1])[0], 1.0f);
  EXPECT_EQ(values<uint8_t>((*z)[0]), (std::vector<uint8_t>{0, 0}));
  EXPECT_FALSE(run_op("DynamicQuantizeLinear", {Tensor::from_vector<double>({1.0}, {1})}, {}, 11, 3).is_ok());
}

// ---- integer matmul / conv -------------------------------------------------------------------

TEST(MatMulIntegerOp, ZeroPointsAndBatching) {
  auto r =
      run_op("MatMulInteger",
             {Tensor::from_vector<uint8_t>({1, 2, 3, 4}, {2, 2}), Tensor::from_vector<uint8_t>({5, 6, 7, 8}, {2, 2}),
              Tensor::scalar<uint8_t>(1), Tensor::from_vector<uint8_t>({5, 0}, {2})},
             {}, 10);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  // A-1 = [[0,1],[2,3]], B-bzp = [[0,6],[2,8]]
  EXPECT_EQ(values<int32_t>((*r)[0]), (std::vector<int32_t>{2, 8, 6, 36}));
  auto b =
      run_op("MatMulInteger",
             {Tensor::from_vector<int8_t>({1, -1, 2, 3}, {2, 1, 2}), Tensor::from_vector<int8_t>({1, 1}, {2})}, {}, 10);
  ASSERT_TRUE(b.is_ok()) << b.status().to_string();
  EXPECT_EQ((*b)[0].tensor().shape(), (Shape{2, 1}));
  EXPECT_EQ(values<int32_t>((*b)[0]), (std::vector<int32_t>{0, 5}));
  EXPECT_FALSE(run_op("MatMulInteger",
                      {Tensor::from_vector<uint8_t>({1, 2}, {1, 2}), Tensor::from_vector<uint8_t>({1, 2, 3}, {3, 1})},
                      {}, 10)
                   .is_ok());
  EXPECT_FALSE(run_op("MatMulInteger", {ft({1}, {1, 1}), Tensor::from_vector<uint8_t>({1}, {1, 1})}, {}, 10).is_ok());
}

TEST(QLinearMatMulOp, Requantizes) {
  // a = [2, 4] (zp 0, scale 0.5) -> [1, 2]; b = [[2],[2]] (scale 1) -> 6 real; y scale 2 -> 3 (+ zp 1)
  auto r = run_op("QLinearMatMul",
                  {Tensor::from_vector<uint8_t>({2, 4}, {1, 2}), fscalar(0.5f), Tensor::scalar<uint8_t>(0),
                   Tensor::from_vector<uint8_t>({2, 2}, {2, 1}), fscalar(1.0f), Tensor::scalar<uint8_t>(0),
                   fscalar(2.0f), Tensor::scalar<uint8_t>(1)},
                  {}, 10);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<uint8_t>((*r)[0]), (std::vector<uint8_t>{4}));
  EXPECT_FALSE(run_op("QLinearMatMul",
                      {Tensor::from_vector<uint8_t>({2, 4}, {1, 2}), fscalar(0.0f), Tensor::scalar<uint8_t>(0),
                       Tensor::from_vector<uint8_t>({2, 2}, {2, 1}), fscalar(1.0f), Tensor::scalar<uint8_t>(0),
                       fscalar(2.0f), Tensor::scalar<uint8_t>(1)},
                      {}, 10)
                   .is_ok());
  EXPECT_FALSE(run_op("QLinearMatMul",
                      {Tensor::from_vector<uint8_t>({2, 4}, {1, 2}), fscalar(1.0f), Tensor::scalar<int8_t>(0),
                       Tensor::from_vector<uint8_t>({2, 2}, {2, 1}), fscalar(1.0f), Tensor::scalar<uint8_t>(0),
                       fscalar(2.0f), Tensor::scalar<uint8_t>(1)},
                      {}, 10)
                   .is_ok());
}

TEST(ConvIntegerOp, PaddingUsesZeroPoint) {
  // 1x1x2x2 input all 3 with zp 3 except one pixel; 1x1 kernel = 2 with zp 0, pads 1 -> 4x4 output
  auto r = run_op("ConvInteger",
                  {Tensor::from_vector<uint8_t>({3, 3, 3, 5}, {1, 1, 2, 2}),
                   Tensor::from_vector<uint8_t>({2}, {1, 1, 1, 1}), Tensor::scalar<uint8_t>(3)},
                  {attr_ints("pads", {1, 1, 1, 1})}, 10);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{1, 1, 4, 4}));
  std::vector<int32_t> want(16, 0);
  want[10] = 4;
  EXPECT_EQ(values<int32_t>((*r)[0]), want);
  // grouped, strided 1-D conv
  auto g = run_op("ConvInteger",
                  {Tensor::from_vector<int8_t>({1, 2, 3, 4, 5, 6, 7, 8}, {1, 2, 4}),
                   Tensor::from_vector<int8_t>({1, 1, -1, 1}, {2, 1, 2})},
                  {attr_int("group", 2), attr_ints("strides", {2})}, 10);
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();
  EXPECT_EQ(values<int32_t>((*g)[0]), (std::vector<int32_t>{3, 7, 1, 1}));
  EXPECT_FALSE(run_op("ConvInteger",
                      {Tensor::from_vector<uint8_t>({1, 2}, {1, 2, 1}), Tensor::from_vector<uint8_t>({1}, {1, 1, 1})},
                      {}, 10)
                   .is_ok());
}

TEST(QLinearConvOp, BiasAndPerChannelScales) {
  // x = [1, 2] (scale 1, zp 0), two 1x1 filters w = [1], [2] with scales [1, 0.5]; bias [1, 0]
  auto r = run_op(
      "QLinearConv",
      {Tensor::from_vector<uint8_t>({1, 2}, {1, 1, 2}), fscalar(1.0f), Tensor::scalar<uint8_t>(0),
       Tensor::from_vector<int8_t>({1, 2}, {2, 1, 1}), ft({1.0f, 0.5f}, {2}), Tensor::from_vector<int8_t>({0, 0}, {2}),
       fscalar(1.0f), Tensor::scalar<int8_t>(-1), Tensor::from_vector<int32_t>({1, 0}, {2})},
      {}, 10);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().dtype(), DataType::kInt8);
  // channel 0: (x + 1) * 1 - 1 = [1, 2]; channel 1: 2x * 0.5 - 1 = [0, 1]
  EXPECT_EQ(values<int8_t>((*r)[0]), (std::vector<int8_t>{1, 2, 0, 1}));
  EXPECT_FALSE(run_op("QLinearConv",
                      {Tensor::from_vector<uint8_t>({1, 2}, {1, 1, 2}), fscalar(1.0f), Tensor::scalar<uint8_t>(0),
                       Tensor::from_vector<int8_t>({1, 2}, {2, 1, 1}), ft({1.0f, 0.5f, 1.0f}, {3}),
                       Tensor::from_vector<int8_t>({0, 0}, {2}), fscalar(1.0f), Tensor::scalar<int8_t>(-1)},
                      {}, 10)
                   .is_ok());
}

}  // namespace
}  // namespace xonnx
