// Layout family: Transpose, Concat, Split, Slice, Pad, Tile, CenterCropPad, DepthToSpace,
// SpaceToDepth, ReverseSequence, Trilu.
#include <gtest/gtest.h>

#include <limits>

#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace {

using testing::attr_float;
using testing::attr_int;
using testing::attr_ints;
using testing::attr_string;
using testing::iota;
using testing::run_op;
using testing::tensor_of;
using testing::values;

Tensor I64(std::vector<int64_t> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return tensor_of<int64_t>(std::move(v), {n});
}

TEST(LayoutOps, TransposeDefaultAndPerm) {
  Tensor x = tensor_of<float>(iota(6), {2, 3});
  auto r = run_op("Transpose", {x}, {}, 13);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{3, 2}));
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  Tensor y = tensor_of<float>(iota(24), {2, 3, 4});
  r = run_op("Transpose", {y}, {attr_ints("perm", {1, 2, 0})}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{3, 4, 2}));
  EXPECT_EQ(values<float>((*r)[0])[1], 12.f);
  EXPECT_FALSE(run_op("Transpose", {y}, {attr_ints("perm", {0, 0, 1})}, 13).is_ok());
  EXPECT_FALSE(run_op("Transpose", {y}, {attr_ints("perm", {0, 1})}, 13).is_ok());
}

TEST(LayoutOps, TransposeInt4) {
  auto t = Tensor::allocate(DataType::kInt4, {2, 3});
  ASSERT_TRUE(t.is_ok());
  for (int i = 0; i < 6; ++i) subbyte_set(t->raw_data(), DataType::kInt4, i, static_cast<uint8_t>(i));
  auto r = run_op("Transpose", {*t}, {}, 21);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  const Tensor& o = (*r)[0].tensor();
  std::vector<int64_t> got;
  for (int i = 0; i < 6; ++i) got.push_back(o.get_as_int64(i));
  EXPECT_EQ(got, (std::vector<int64_t>{0, 3, 1, 4, 2, 5}));
}

TEST(LayoutOps, ConcatStringsAndErrors) {
  auto r = run_op("Concat",
                  {tensor_of<std::string>({"a", "b"}, {1, 2}), tensor_of<std::string>({"c", "d", "e", "f"}, {2, 2})},
                  {attr_int("axis", 0)}, 13);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{3, 2}));
  EXPECT_EQ((*r)[0].tensor().string_data()[5], "f");
  r = run_op("Concat", {tensor_of<float>({1, 2}, {2, 1}), tensor_of<float>({3, 4, 5, 6}, {2, 2})},
             {attr_int("axis", -1)}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{1, 3, 4, 2, 5, 6}));
  EXPECT_FALSE(run_op("Concat", {tensor_of<float>({1, 2}, {2, 1}), tensor_of<float>({3, 4, 5}, {3, 1})},
                      {attr_int("axis", 1)}, 13)
                   .is_ok());
  EXPECT_FALSE(
      run_op("Concat", {tensor_of<float>({1}, {1}), tensor_of<int32_t>({3}, {1})}, {attr_int("axis", 0)}, 13).is_ok());
  EXPECT_FALSE(run_op("Concat", {tensor_of<float>({1}, {1})}, {attr_int("axis", 1)}, 13).is_ok());
}

TEST(LayoutOps, SplitVariants) {
  Tensor x = tensor_of<float>(iota(5), {5});
  auto r = run_op("Split", {x}, {attr_int("num_outputs", 3)}, 18, 3);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{0, 1}));
  EXPECT_EQ(values<float>((*r)[2]), (std::vector<float>{4}));
  r = run_op("Split", {x, I64({1, 4})}, {}, 13, 2);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[1]), (std::vector<float>{1, 2, 3, 4}));
  r = run_op("Split", {x}, {attr_ints("split", {2, 3})}, 11, 2);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[1]), (std::vector<float>{2, 3, 4}));
  Tensor m = tensor_of<float>(iota(6), {2, 3});
  r = run_op("Split", {m}, {attr_int("axis", 1)}, 13, 3);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[1]), (std::vector<float>{1, 4}));
  EXPECT_FALSE(run_op("Split", {x}, {}, 13, 2).is_ok());  // uneven before 18
  EXPECT_FALSE(run_op("Split", {x, I64({1, 1})}, {}, 13, 2).is_ok());
}

TEST(LayoutOps, SliceNegativeStepsAndClamping) {
  Tensor x = tensor_of<float>(iota(10), {10});
  const int64_t big = std::numeric_limits<int64_t>::max();
  auto r = run_op("Slice", {x, I64({-1}), I64({-big}), I64({0}), I64({-3})}, {}, 13);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{9, 6, 3, 0}));
  r = run_op("Slice", {x, I64({2}), I64({big})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().numel(), 8);
  r = run_op("Slice", {x, I64({20}), I64({30})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().numel(), 0);
  Tensor m = tensor_of<float>(iota(12), {3, 4});
  r = run_op("Slice", {m}, {attr_ints("starts", {1}), attr_ints("ends", {3}), attr_ints("axes", {1})}, 1);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{1, 2, 5, 6, 9, 10}));
  EXPECT_FALSE(run_op("Slice", {x, I64({0}), I64({5}), I64({0}), I64({0})}, {}, 13).is_ok());
  EXPECT_FALSE(run_op("Slice", {x, I64({0}), I64({5}), I64({1})}, {}, 13).is_ok());
}

TEST(LayoutOps, PadModes) {
  Tensor x = tensor_of<float>({1, 2, 3}, {3});
  auto r = run_op("Pad", {x, I64({2, 2}), Tensor::scalar<float>(9.f)}, {}, 13);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{9, 9, 1, 2, 3, 9, 9}));
  r = run_op("Pad", {x, I64({2, 2})}, {attr_string("mode", "reflect")}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{3, 2, 1, 2, 3, 2, 1}));
  r = run_op("Pad", {x, I64({2, 2})}, {attr_string("mode", "edge")}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{1, 1, 1, 2, 3, 3, 3}));
  r = run_op("Pad", {x, I64({2, 2})}, {attr_string("mode", "wrap")}, 19);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{2, 3, 1, 2, 3, 1, 2}));
  r = run_op("Pad", {x, I64({-1, 1})}, {}, 13);  // negative pads crop
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{2, 3, 0}));
  r = run_op("Pad", {x}, {attr_ints("pads", {1, 0}), attr_float("value", 5.f)}, 2);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{5, 1, 2, 3}));
  Tensor m = tensor_of<float>(iota(4), {2, 2});
  r = run_op("Pad", {m, I64({1, 1}), Tensor(), I64({-1})}, {}, 18);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{0, 0, 1, 0, 0, 2, 3, 0}));
  EXPECT_FALSE(run_op("Pad", {x, I64({1})}, {}, 13).is_ok());
  EXPECT_FALSE(run_op("Pad", {x, I64({-2, -2})}, {}, 13).is_ok());
  EXPECT_FALSE(run_op("Pad", {tensor_of<float>({}, {0}), I64({1, 1})}, {attr_string("mode", "edge")}, 13).is_ok());
}

TEST(LayoutOps, PadStrings) {
  auto r = run_op("Pad", {tensor_of<std::string>({"a"}, {1}), I64({1, 0}), Tensor::scalar<std::string>("z")}, {}, 13);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().string_data()[0], "z");
  EXPECT_EQ((*r)[0].tensor().string_data()[1], "a");
}

TEST(LayoutOps, Tile) {
  auto r = run_op("Tile", {tensor_of<int32_t>({1, 2}, {1, 2}), I64({2, 2})}, {}, 13);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<int32_t>((*r)[0]), (std::vector<int32_t>{1, 2, 1, 2, 1, 2, 1, 2}));
  EXPECT_FALSE(run_op("Tile", {tensor_of<int32_t>({1, 2}, {1, 2}), I64({2})}, {}, 13).is_ok());
  EXPECT_FALSE(run_op("Tile", {tensor_of<int32_t>({1, 2}, {1, 2}), I64({1, -1})}, {}, 13).is_ok());
}

TEST(LayoutOps, CenterCropPad) {
  Tensor x = tensor_of<float>(iota(5), {5});
  auto r = run_op("CenterCropPad", {x, I64({3})}, {}, 18);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{1, 2, 3}));
  r = run_op("CenterCropPad", {x, I64({8})}, {}, 18);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{0, 0, 1, 2, 3, 4, 0, 0}));
}

TEST(LayoutOps, DepthToSpaceRoundTrip) {
  Tensor x = tensor_of<float>(iota(16), {1, 4, 2, 2});
  for (const char* mode : {"DCR", "CRD"}) {
    auto r = run_op("DepthToSpace", {x}, {attr_int("blocksize", 2), attr_string("mode", mode)}, 13);
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    EXPECT_EQ((*r)[0].tensor().shape(), (Shape{1, 1, 4, 4}));
  }
  auto d = run_op("DepthToSpace", {x}, {attr_int("blocksize", 2)}, 13);
  ASSERT_TRUE(d.is_ok());
  EXPECT_EQ(values<float>((*d)[0]), (std::vector<float>{0, 4, 1, 5, 8, 12, 9, 13, 2, 6, 3, 7, 10, 14, 11, 15}));
  auto s = run_op("SpaceToDepth", {(*d)[0]}, {attr_int("blocksize", 2)}, 13);
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  EXPECT_EQ(values<float>((*s)[0]), iota(16));
  EXPECT_FALSE(
      run_op("DepthToSpace", {tensor_of<float>(iota(6), {1, 6, 1, 1})}, {attr_int("blocksize", 2)}, 13).is_ok());
  EXPECT_FALSE(
      run_op("SpaceToDepth", {tensor_of<float>(iota(3), {1, 1, 3, 1})}, {attr_int("blocksize", 2)}, 13).is_ok());
}

TEST(LayoutOps, ReverseSequence) {
  Tensor x = tensor_of<float>(iota(8), {4, 2});  // [time, batch]
  auto r = run_op("ReverseSequence", {x, I64({4, 2})}, {}, 10);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{6, 3, 4, 1, 2, 5, 0, 7}));
  EXPECT_FALSE(run_op("ReverseSequence", {x, I64({5, 1})}, {}, 10).is_ok());
  EXPECT_FALSE(run_op("ReverseSequence", {x, I64({1})}, {}, 10).is_ok());
}

TEST(LayoutOps, Trilu) {
  Tensor x = tensor_of<int64_t>({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3});
  auto r = run_op("Trilu", {x}, {}, 14);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<int64_t>((*r)[0]), (std::vector<int64_t>{1, 2, 3, 0, 5, 6, 0, 0, 9}));
  r = run_op("Trilu", {x, Tensor::scalar<int64_t>(-1)}, {attr_int("upper", 0)}, 14);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<int64_t>((*r)[0]), (std::vector<int64_t>{0, 0, 0, 4, 0, 0, 7, 8, 0}));
  EXPECT_FALSE(run_op("Trilu", {tensor_of<int64_t>({1}, {1})}, {}, 14).is_ok());
}

TEST(LayoutOps, DtypeFamilies) {
  // fp16 slice with step, bool concat, string tile, int4 concat (packed), uint8 pad
  std::vector<Float16> h;
  for (float f : {1.f, 2.f, 3.f, 4.f}) h.push_back(Float16{float_to_half(f)});
  auto r = run_op("Slice", {tensor_of<Float16>(h, {4}), I64({0}), I64({4}), I64({0}), I64({2})}, {}, 13);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(half_to_float((*r)[0].tensor().data<Float16>()[1].bits), 3.f);
  r = run_op("Concat", {tensor_of<bool>({true}, {1}), tensor_of<bool>({false, true}, {2})}, {attr_int("axis", 0)}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<bool>((*r)[0]), (std::vector<bool>{true, false, true}));
  r = run_op("Tile", {tensor_of<std::string>({"a", "b"}, {2}), I64({2})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().string_data()[3], "b");
  auto a = Tensor::allocate(DataType::kUint4, {3});
  ASSERT_TRUE(a.is_ok());
  for (int i = 0; i < 3; ++i) subbyte_set(a->raw_data(), DataType::kUint4, i, static_cast<uint8_t>(i + 1));
  r = run_op("Concat", {*a, *a}, {attr_int("axis", 0)}, 21);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  std::vector<int64_t> got;
  for (int i = 0; i < 6; ++i) got.push_back((*r)[0].tensor().get_as_int64(i));
  EXPECT_EQ(got, (std::vector<int64_t>{1, 2, 3, 1, 2, 3}));
  r = run_op("Pad", {tensor_of<uint8_t>({7}, {1}), I64({1, 1}), Tensor::scalar<uint8_t>(3)}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<uint8_t>((*r)[0]), (std::vector<uint8_t>{3, 7, 3}));
}

TEST(LayoutOps, EdgeShapes) {
  // scalar through Pad and Transpose; zero-size splits; reflect after a crop; huge Trilu k
  auto r = run_op("Pad", {Tensor::scalar<float>(4.f), tensor_of<int64_t>({}, {0})}, {}, 13);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{4.f}));
  r = run_op("Transpose", {Tensor::scalar<float>(4.f)}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().rank(), 0u);
  r = run_op("Split", {tensor_of<float>({1, 2}, {2}), I64({0, 2, 0})}, {}, 13, 3);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().numel(), 0);
  EXPECT_EQ(values<float>((*r)[1]), (std::vector<float>{1, 2}));
  r = run_op("Pad", {tensor_of<float>({1, 2, 3, 4}, {4}), I64({-1, 2})}, {attr_string("mode", "reflect")}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{2, 3, 4, 3, 2}));
  r = run_op("Trilu",
             {tensor_of<float>({1, 2, 3, 4}, {2, 2}), Tensor::scalar<int64_t>(std::numeric_limits<int64_t>::max())},
             {attr_int("upper", 0)}, 14);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{1, 2, 3, 4}));
  r = run_op(
      "Slice",
      {tensor_of<float>({1, 2, 3}, {3}), I64({5}), I64({-10}), I64({0}), I64({std::numeric_limits<int64_t>::min()})},
      {}, 13);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{3}));
  EXPECT_FALSE(
      run_op("Pad", {tensor_of<float>({1, 2}, {2}), I64({std::numeric_limits<int64_t>::min(), 0})}, {}, 13).is_ok());
  EXPECT_FALSE(
      run_op("Tile", {tensor_of<float>({1, 2}, {2}), I64({std::numeric_limits<int64_t>::max()})}, {}, 13).is_ok());
}

}  // namespace
}  // namespace xonnx
