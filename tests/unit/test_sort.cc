// Sort family: TopK, Unique, CumSum, CumProd.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
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

Value k1(int64_t k) { return tv<int64_t>({k}, {1}); }

TEST(TopKOp, LargestAlongLastAxis) {
  const Value x = tv<float>({0, 1, 2, 3, 4, 5, 6, 7, 11, 10, 9, 8}, {3, 4});
  auto r = run_op("TopK", {x, k1(3)}, {attr_int("axis", 1)}, 11, 2);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{3, 3}));
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{3, 2, 1, 7, 6, 5, 11, 10, 9}));
  EXPECT_EQ(values<int64_t>((*r)[1]), (std::vector<int64_t>{3, 2, 1, 3, 2, 1, 0, 1, 2}));
}

TEST(TopKOp, SmallestAxis0AndTies) {
  const Value x = tv<int64_t>({3, 1, 1, 3, 2, 1}, {3, 2});
  auto r = run_op("TopK", {x, k1(2)}, {attr_int("axis", 0), attr_int("largest", 0)}, 11, 2);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<int64_t>((*r)[0]), (std::vector<int64_t>{1, 1, 2, 1}));
  EXPECT_EQ(values<int64_t>((*r)[1]), (std::vector<int64_t>{1, 0, 2, 2}));
  // ties keep the lower index first
  r = run_op("TopK", {tv<int32_t>({5, 5, 5, 1}, {4}), k1(3)}, {}, 11, 2);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<int64_t>((*r)[1]), (std::vector<int64_t>{0, 1, 2}));
}

TEST(TopKOp, OpsetOneAttributeKAndNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto r = run_op("TopK", {tv<float>({1, nan, 3}, {3})}, {attr_int("k", 2)}, 1, 2);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<int64_t>((*r)[1]), (std::vector<int64_t>{1, 2}));
  r = run_op("TopK", {tv<float>({1, nan, 3}, {3}), k1(3)}, {attr_int("largest", 0)}, 11, 2);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<int64_t>((*r)[1]), (std::vector<int64_t>{0, 2, 1}));
  r = run_op("TopK", {tv<double>({1, 2}, {2}), k1(0)}, {}, 10, 2);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{0}));
}

TEST(TopKOp, Errors) {
  const Value x = tv<float>({1, 2, 3}, {3});
  EXPECT_FALSE(run_op("TopK", {x, k1(4)}, {}, 11, 2).is_ok());
  EXPECT_FALSE(run_op("TopK", {x, k1(-1)}, {}, 11, 2).is_ok());
  EXPECT_FALSE(run_op("TopK", {x, k1(1)}, {attr_int("axis", 1)}, 11, 2).is_ok());
  EXPECT_FALSE(run_op("TopK", {x, tv<int64_t>({1, 2}, {2})}, {}, 11, 2).is_ok());
  EXPECT_FALSE(run_op("TopK", {tv<float>({1}, {}), k1(1)}, {}, 11, 2).is_ok());
}

TEST(UniqueOp, SortedFlat) {
  auto r = run_op("Unique", {tv<float>({2, 1, 1, 3, 4, 3}, {6})}, {}, 11, 4);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(values<int64_t>((*r)[1]), (std::vector<int64_t>{1, 0, 3, 4}));
  EXPECT_EQ(values<int64_t>((*r)[2]), (std::vector<int64_t>{1, 0, 0, 2, 3, 2}));
  EXPECT_EQ(values<int64_t>((*r)[3]), (std::vector<int64_t>{2, 1, 2, 1}));
}

TEST(UniqueOp, UnsortedFlat) {
  auto r = run_op("Unique", {tv<int32_t>({2, 1, 1, 3, 4, 3}, {2, 3})}, {attr_int("sorted", 0)}, 11, 4);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<int32_t>((*r)[0]), (std::vector<int32_t>{2, 1, 3, 4}));
  EXPECT_EQ(values<int64_t>((*r)[1]), (std::vector<int64_t>{0, 1, 3, 4}));
  EXPECT_EQ(values<int64_t>((*r)[2]), (std::vector<int64_t>{0, 1, 1, 2, 3, 2}));
  EXPECT_EQ(values<int64_t>((*r)[3]), (std::vector<int64_t>{1, 2, 2, 1}));
}

TEST(UniqueOp, WithAxis) {
  // rows: [1,0,0], [1,0,0], [2,3,4] -> unique rows [1,0,0], [2,3,4]
  const Value x = tv<float>({1, 0, 0, 1, 0, 0, 2, 3, 4}, {3, 3});
  auto r = run_op("Unique", {x}, {attr_int("axis", 0)}, 11, 4);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{2, 3}));
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{1, 0, 0, 2, 3, 4}));
  EXPECT_EQ(values<int64_t>((*r)[2]), (std::vector<int64_t>{0, 0, 1}));
  // columns: [1,1,2], [0,0,3], [0,0,4] -> sorted [0,0,3], [0,0,4], [1,1,2]
  r = run_op("Unique", {x}, {attr_int("axis", -1)}, 11, 4);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{3, 3}));
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{0, 0, 1, 0, 0, 1, 3, 4, 2}));
  EXPECT_EQ(values<int64_t>((*r)[1]), (std::vector<int64_t>{1, 2, 0}));
  EXPECT_FALSE(run_op("Unique", {x}, {attr_int("axis", 2)}, 11, 1).is_ok());
}

TEST(UniqueOp, StringsAndSingleOutput) {
  auto r = run_op("Unique", {tv<std::string>({"b", "a", "b"}, {3})}, {}, 11, 1);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  const Tensor& t = (*r)[0].tensor();
  ASSERT_EQ(t.numel(), 2);
  EXPECT_EQ(t.string_data()[0], "a");
  EXPECT_EQ(t.string_data()[1], "b");
}

TEST(CumOps, CumSumVariants) {
  const Value x = tv<double>({1, 2, 3, 4, 5}, {5});
  const Value ax = tv<int32_t>({0}, {});
  auto r = run_op("CumSum", {x, ax}, {}, 14);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<double>((*r)[0]), (std::vector<double>{1, 3, 6, 10, 15}));
  r = run_op("CumSum", {x, ax}, {attr_int("exclusive", 1)}, 14);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<double>((*r)[0]), (std::vector<double>{0, 1, 3, 6, 10}));
  r = run_op("CumSum", {x, ax}, {attr_int("reverse", 1)}, 11);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<double>((*r)[0]), (std::vector<double>{15, 14, 12, 9, 5}));
  r = run_op("CumSum", {x, ax}, {attr_int("reverse", 1), attr_int("exclusive", 1)}, 14);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<double>((*r)[0]), (std::vector<double>{14, 12, 9, 5, 0}));
  r = run_op("CumSum", {tv<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3}), tv<int64_t>({-1}, {1})}, {}, 14);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<int32_t>((*r)[0]), (std::vector<int32_t>{1, 3, 6, 4, 9, 15}));
  r = run_op("CumSum", {tv<float>({1, 2, 3, 4, 5, 6}, {2, 3}), tv<int64_t>({0}, {})}, {}, 14);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{1, 2, 3, 5, 7, 9}));
  EXPECT_FALSE(run_op("CumSum", {x, tv<int32_t>({1}, {})}, {}, 14).is_ok());
  EXPECT_FALSE(run_op("CumSum", {x, tv<float>({0}, {})}, {}, 14).is_ok());
}

}  // namespace
}  // namespace xonnx
