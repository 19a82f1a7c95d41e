// Shape family: Shape, Size, Reshape, Flatten, Squeeze, Unsqueeze, Identity, Expand,
// ConstantOfShape, Constant, Range, EyeLike.
#include <gtest/gtest.h>

#include <limits>

#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace {

using testing::attr_float;
using testing::attr_int;
using testing::attr_ints;
using testing::attr_string;
using testing::attr_tensor;
using testing::run_op;
using testing::tensor_of;
using testing::values;

Tensor I64(std::vector<int64_t> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return tensor_of<int64_t>(std::move(v), {n});
}

TEST(ShapeOps, ShapeWithStartEnd) {
  Tensor x = tensor_of<float>(std::vector<float>(24, 0.f), {2, 3, 4});
  auto r = run_op("Shape", {x}, {}, 13);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<int64_t>((*r)[0]), (std::vector<int64_t>{2, 3, 4}));
  r = run_op("Shape", {x}, {attr_int("start", -2)}, 15);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<int64_t>((*r)[0]), (std::vector<int64_t>{3, 4}));
  r = run_op("Shape", {x}, {attr_int("start", 10), attr_int("end", 1)}, 15);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().numel(), 0);
  r = run_op("Shape", {x}, {attr_int("start", -10), attr_int("end", -1)}, 15);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<int64_t>((*r)[0]), (std::vector<int64_t>{2, 3}));
}

TEST(ShapeOps, SizeOfStrings) {
  auto r = run_op("Size", {tensor_of<std::string>({"a", "b", "c"}, {3, 1})}, {}, 13);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<int64_t>((*r)[0]), (std::vector<int64_t>{3}));
  EXPECT_EQ((*r)[0].tensor().rank(), 0u);
}

TEST(ShapeOps, ReshapeZeroAndInfer) {
  Tensor x = tensor_of<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  auto r = run_op("Reshape", {x, I64({0, -1, 1})}, {}, 14);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{2, 3, 1}));
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  // allowzero=1: 0 is a real zero dim
  Tensor e = tensor_of<float>({}, {0, 3});
  r = run_op("Reshape", {e, I64({3, 0})}, {attr_int("allowzero", 1)}, 14);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{3, 0}));
  // opset 1-4: shape attribute
  r = run_op("Reshape", {x}, {attr_ints("shape", {3, 2})}, 1);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{3, 2}));
}

TEST(ShapeOps, ReshapeErrors) {
  Tensor x = tensor_of<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_FALSE(run_op("Reshape", {x, I64({4, -1})}, {}, 14).is_ok());
  EXPECT_FALSE(run_op("Reshape", {x, I64({-1, -1})}, {}, 14).is_ok());
  EXPECT_FALSE(run_op("Reshape", {x, I64({0, 0, 0})}, {}, 14).is_ok());
  EXPECT_FALSE(run_op("Reshape", {x, I64({-2, 3})}, {}, 14).is_ok());
  EXPECT_FALSE(run_op("Reshape", {x, tensor_of<float>({6}, {1})}, {}, 14).is_ok());
}

TEST(ShapeOps, FlattenAxes) {
  Tensor x = tensor_of<int8_t>(std::vector<int8_t>(24, 1), {2, 3, 4});
  auto r = run_op("Flatten", {x}, {attr_int("axis", 0)}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{1, 24}));
  r = run_op("Flatten", {x}, {attr_int("axis", -1)}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{6, 4}));
  r = run_op("Flatten", {x}, {attr_int("axis", 3)}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{24, 1}));
  EXPECT_FALSE(run_op("Flatten", {x}, {attr_int("axis", 4)}, 13).is_ok());
}

TEST(ShapeOps, SqueezeUnsqueeze) {
  Tensor x = tensor_of<bool>({true, false, true}, {1, 3, 1});
  auto r = run_op("Squeeze", {x}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{3}));
  r = run_op("Squeeze", {x, I64({-1})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{1, 3}));
  r = run_op("Squeeze", {x}, {attr_ints("axes", {0})}, 11);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{3, 1}));
  EXPECT_FALSE(run_op("Squeeze", {x, I64({1})}, {}, 13).is_ok());
  EXPECT_FALSE(run_op("Squeeze", {x, I64({3})}, {}, 13).is_ok());

  Tensor y = tensor_of<float>({1, 2, 3}, {3});
  r = run_op("Unsqueeze", {y, I64({2, 0})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{1, 3, 1}));
  r = run_op("Unsqueeze", {y}, {attr_ints("axes", {-1})}, 11);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{3, 1}));
  EXPECT_FALSE(run_op("Unsqueeze", {y, I64({0, 0})}, {}, 13).is_ok());
  EXPECT_FALSE(run_op("Unsqueeze", {y, I64({5})}, {}, 13).is_ok());
}

TEST(ShapeOps, IdentityPassesStringsAndSequences) {
  auto r = run_op("Identity", {tensor_of<std::string>({"x", "y"}, {2})}, {}, 16);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().string_data()[1], "y");
  auto seq = std::make_shared<Sequence>();
  seq->elem_type = DataType::kFloat;
  seq->items.push_back(tensor_of<float>({1}, {1}));
  r = run_op("Identity", {Value::sequence(seq)}, {}, 16);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  ASSERT_TRUE((*r)[0].is_sequence());
  EXPECT_EQ((*r)[0].sequence().items.size(), 1u);
}

TEST(ShapeOps, ExpandBroadcasts) {
  Tensor x = tensor_of<float>({1, 2, 3}, {3, 1});
  auto r = run_op("Expand", {x, I64({2, 1, 2})}, {}, 13);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
  // bidirectional: smaller target keeps input dims
  r = run_op("Expand", {x, I64({1})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{3, 1}));
  // strings
  r = run_op("Expand", {tensor_of<std::string>({"a"}, {1}), I64({3})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().string_data()[2], "a");
  EXPECT_FALSE(run_op("Expand", {x, I64({2, 2})}, {}, 13).is_ok());
}

TEST(ShapeOps, ConstantOfShape) {
  auto r = run_op("ConstantOfShape", {I64({2, 2})}, {attr_tensor("value", tensor_of<int32_t>({7}, {1}))}, 20);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<int32_t>((*r)[0]), (std::vector<int32_t>{7, 7, 7, 7}));
  r = run_op("ConstantOfShape", {I64({0})}, {}, 20);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().dtype(), DataType::kFloat);
  EXPECT_EQ((*r)[0].tensor().numel(), 0);
  EXPECT_FALSE(run_op("ConstantOfShape", {I64({-1})}, {}, 20).is_ok());
}

TEST(ShapeOps, ConstantVariants) {
  auto r = run_op("Constant", {}, {attr_ints("value_ints", {1, 2})}, 13);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<int64_t>((*r)[0]), (std::vector<int64_t>{1, 2}));
  r = run_op("Constant", {}, {attr_float("value_float", 2.5f)}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{2.5f}));
  r = run_op("Constant", {}, {attr_string("value_string", "hi")}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().string_data()[0], "hi");
  EXPECT_FALSE(run_op("Constant", {}, {}, 13).is_ok());
}

TEST(ShapeOps, Range) {
  auto r =
      run_op("Range", {Tensor::scalar<int32_t>(10), Tensor::scalar<int32_t>(4), Tensor::scalar<int32_t>(-3)}, {}, 11);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<int32_t>((*r)[0]), (std::vector<int32_t>{10, 7}));
  r = run_op("Range", {Tensor::scalar<float>(1), Tensor::scalar<float>(2), Tensor::scalar<float>(0.3f)}, {}, 11);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().numel(), 4);
  r = run_op("Range", {Tensor::scalar<int64_t>(5), Tensor::scalar<int64_t>(1), Tensor::scalar<int64_t>(1)}, {}, 11);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().numel(), 0);
  EXPECT_FALSE(
      run_op("Range", {Tensor::scalar<int64_t>(0), Tensor::scalar<int64_t>(1), Tensor::scalar<int64_t>(0)}, {}, 11)
          .is_ok());
}

TEST(ShapeOps, EyeLike) {
  Tensor x = tensor_of<float>(std::vector<float>(6, 5.f), {2, 3});
  auto r = run_op("EyeLike", {x}, {attr_int("k", 1), attr_int("dtype", 7)}, 9);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<int64_t>((*r)[0]), (std::vector<int64_t>{0, 1, 0, 0, 0, 1}));
  EXPECT_FALSE(run_op("EyeLike", {tensor_of<float>({1}, {1})}, {}, 9).is_ok());
}

TEST(ShapeOps, RangeExtremesAndHalf) {
  const int64_t mn = std::numeric_limits<int64_t>::min(), mx = std::numeric_limits<int64_t>::max();
  auto r =
      run_op("Range", {Tensor::scalar<int64_t>(mn), Tensor::scalar<int64_t>(mx), Tensor::scalar<int64_t>(mx)}, {}, 11);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<int64_t>((*r)[0]), (std::vector<int64_t>{mn, -1, mx - 1}));
  EXPECT_FALSE(
      run_op("Range", {Tensor::scalar<int64_t>(0), Tensor::scalar<int64_t>(mx), Tensor::scalar<int64_t>(1)}, {}, 11)
          .is_ok());
  r = run_op(
      "Range",
      {Tensor::scalar<Float16>(Float16{float_to_half(0.f)}), Tensor::scalar<Float16>(Float16{float_to_half(2.f)}),
       Tensor::scalar<Float16>(Float16{float_to_half(0.5f)})},
      {}, 11);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().numel(), 4);
  EXPECT_EQ(half_to_float((*r)[0].tensor().data<Float16>()[3].bits), 1.5f);
  EXPECT_FALSE(
      run_op("Range", {Tensor::scalar<int64_t>(0), Tensor::scalar<int32_t>(3), Tensor::scalar<int64_t>(1)}, {}, 11)
          .is_ok());
}

TEST(ShapeOps, SubByteReshapeAndExpand) {
  auto a = Tensor::allocate(DataType::kInt4, {2});
  ASSERT_TRUE(a.is_ok());
  subbyte_set(a->raw_data(), DataType::kInt4, 0, 0x3);
  subbyte_set(a->raw_data(), DataType::kInt4, 1, 0xf);
  auto r = run_op("Expand", {*a, I64({2, 2})}, {}, 13);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  std::vector<int64_t> got;
  for (int i = 0; i < 4; ++i) got.push_back((*r)[0].tensor().get_as_int64(i));
  EXPECT_EQ(got, (std::vector<int64_t>{3, -1, 3, -1}));
  r = run_op("Reshape", {*a, I64({2, 1})}, {}, 21);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{2, 1}));
  EXPECT_EQ((*r)[0].tensor().get_as_int64(1), -1);
}

}  // namespace
}  // namespace xonnx
