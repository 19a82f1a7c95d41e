// Core types: dtype codecs, tensor allocation and limits, status plumbing.
#include <gtest/gtest.h>

#include <cmath>

#include "runtime/core/dtype.h"
#include "runtime/core/tensor.h"

namespace xonnx {
namespace {

TEST(DType, HalfRoundTripsExactValues) {
  for (float v : {0.0f, 1.0f, -2.5f, 65504.0f, 6.103515625e-05f, 5.9604645e-08f}) {
    EXPECT_EQ(half_to_float(float_to_half(v)), v) << v;
  }
  EXPECT_TRUE(std::isinf(half_to_float(float_to_half(70000.0f))));
  EXPECT_TRUE(std::isnan(half_to_float(float_to_half(NAN))));
  // Round to nearest even: 1 + 2^-11 lies halfway between 1 and 1 + 2^-10.
  EXPECT_EQ(half_to_float(float_to_half(1.0f + std::ldexp(1.0f, -11))), 1.0f);
}

TEST(DType, BFloat16RoundsToNearestEven) {
  EXPECT_EQ(bfloat16_to_float(float_to_bfloat16(1.0f)), 1.0f);
  EXPECT_EQ(bfloat16_to_float(float_to_bfloat16(3.140625f)), 3.140625f);
  EXPECT_TRUE(std::isnan(bfloat16_to_float(float_to_bfloat16(NAN))));
}

TEST(DType, Float8E4M3FNSaturates) {
  const DataType t = DataType::kFloat8E4M3FN;
  EXPECT_EQ(float8_to_float(t, float_to_float8(t, 448.0f, true)), 448.0f);
  EXPECT_EQ(float8_to_float(t, float_to_float8(t, 1000.0f, true)), 448.0f);
  EXPECT_TRUE(std::isnan(float8_to_float(t, float_to_float8(t, 1000.0f, false))));
  EXPECT_EQ(float8_to_float(t, float_to_float8(t, 0.5f, true)), 0.5f);
}

TEST(DType, StorageBytesPacksSubByteTypes) {
  EXPECT_EQ(dtype_storage_bytes(DataType::kInt4, 5), 3);
  EXPECT_EQ(dtype_storage_bytes(DataType::kFloat, 5), 20);
  EXPECT_EQ(dtype_storage_bytes(DataType::kInt64, INT64_MAX / 4), -1);
}

TEST(Tensor, AllocateRejectsNegativeAndOverflowingShapes) {
  EXPECT_FALSE(Tensor::allocate(DataType::kFloat, {2, -1}).is_ok());
  EXPECT_FALSE(Tensor::allocate(DataType::kFloat, {INT64_MAX, 4}).is_ok());
  auto t = Tensor::allocate(DataType::kFloat, {2, 3});
  ASSERT_TRUE(t.is_ok());
  EXPECT_EQ(t->numel(), 6);
  EXPECT_EQ(t->data<float>()[5], 0.0f);  // zero-filled
}

TEST(Tensor, SubByteAccess) {
  auto t = Tensor::allocate(DataType::kInt4, {3});
  ASSERT_TRUE(t.is_ok());
  subbyte_set(t->raw_data(), DataType::kInt4, 0, 0x7);
  subbyte_set(t->raw_data(), DataType::kInt4, 1, 0x8);
  subbyte_set(t->raw_data(), DataType::kInt4, 2, 0xf);
  EXPECT_EQ(t->get_as_int64(0), 7);
  EXPECT_EQ(t->get_as_int64(1), -8);
  EXPECT_EQ(t->get_as_int64(2), -1);
}

TEST(Status, ContextIsPrefixedOnErrorsOnly) {
  EXPECT_TRUE(Status::ok().with_context("x: ").is_ok());
  Status s = invalid_model("bad ", 3).with_context("node 'a': ");
  EXPECT_EQ(s.message(), "node 'a': bad 3");
  EXPECT_EQ(s.code(), StatusCode::kInvalidModel);
}

}  // namespace
}  // namespace xonnx
