// Reduce family: Reduce* (axes attribute / input, keepdims, noop_with_empty_axes, empty sets),
// ArgMax / ArgMin.
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
using testing::attr_ints;
using testing::run_op;
using testing::tv;
using testing::values;

Value axes(std::vector<int64_t> a) {
  const int64_t n = static_cast<int64_t>(a.size());
  return tv<int64_t>(std::move(a), {n});
}
std::vector<float> fvalues(const Value& v) {
  std::vector<float> out;
  for (int64_t i = 0; i < v.tensor().numel(); ++i) out.push_back(static_cast<float>(v.tensor().get_as_double(i)));
  return out;
}
void expect_reduce_near(const std::vector<float>& got, const std::vector<float>& want, float tol = 1e-5f) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << i;
    } else if (std::isinf(want[i])) {
      EXPECT_EQ(got[i], want[i]) << i;
    } else {
      EXPECT_NEAR(got[i], want[i], tol * std::max(1.0f, std::fabs(want[i]))) << i;
    }
  }
}

// x = [[1, 2, 3], [4, 5, 6]]
Value x23() { return tv<float>({1, 2, 3, 4, 5, 6}, {2, 3}); }

TEST(ReduceOps, SumAxesInputKeepdims) {
  auto r = run_op("ReduceSum", {x23(), axes({1})}, {}, 13);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{2, 1}));
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{6, 15}));
  r = run_op("ReduceSum", {x23(), axes({-2})}, {attr_int("keepdims", 0)}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{3}));
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{5, 7, 9}));
}

TEST(ReduceOps, SumAllWhenAxesOmittedOrEmpty) {
  auto r = run_op("ReduceSum", {x23()}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{1, 1}));
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{21}));
  r = run_op("ReduceSum", {x23(), axes({})}, {attr_int("keepdims", 0)}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{}));
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{21}));
}

TEST(ReduceOps, NoopWithEmptyAxes) {
  auto r = run_op("ReduceSum", {x23(), axes({})}, {attr_int("noop_with_empty_axes", 1)}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{2, 3}));
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  r = run_op("ReduceSumSquare", {x23()}, {attr_int("noop_with_empty_axes", 1)}, 18);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{1, 4, 9, 16, 25, 36}));
}

TEST(ReduceOps, AxesAttributeInOldOpsets) {
  auto r = run_op("ReduceMean", {x23()}, {attr_ints("axes", {0})}, 11);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{2.5f, 3.5f, 4.5f}));
  r = run_op("ReduceMax", {x23()}, {attr_ints("axes", {1}), attr_int("keepdims", 0)}, 1);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{3, 6}));
  r = run_op("ReduceSum", {x23()}, {attr_ints("axes", {0, 1}), attr_int("keepdims", 0)}, 11);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{21}));
}

TEST(ReduceOps, AllKindsFloat) {
  const Value x = tv<float>({1, -2, 3, -4, 0.5f, 2}, {2, 3});
  struct Case {
    const char* op;
    std::vector<float> want;
  };
  const std::vector<Case> cases = {
      {"ReduceSum", {2, -1.5f}},
      {"ReduceMean", {2.0f / 3, -0.5f}},
      {"ReduceMax", {3, 2}},
      {"ReduceMin", {-2, -4}},
      {"ReduceProd", {-6, -4}},
      {"ReduceL1", {6, 6.5f}},
      {"ReduceL2", {std::sqrt(14.0f), std::sqrt(20.25f)}},
      {"ReduceSumSquare", {14, 20.25f}},
      {"ReduceLogSumExp",
       {std::log(std::exp(1.0f) + std::exp(-2.0f) + std::exp(3.0f)),
        std::log(std::exp(-4.0f) + std::exp(0.5f) + std::exp(2.0f))}},
  };
  for (const Case& c : cases) {
    auto r = run_op(c.op, {x, axes({1})}, {attr_int("keepdims", 0)}, 18);
    ASSERT_TRUE(r.is_ok()) << c.op << ": " << r.status().to_string();
    expect_reduce_near(values<float>((*r)[0]), c.want);
  }
  auto r = run_op("ReduceLogSum", {tv<float>({1, 2, 3, 4}, {2, 2}), axes({0})}, {}, 18);
  ASSERT_TRUE(r.is_ok());
  expect_reduce_near(values<float>((*r)[0]), {std::log(4.0f), std::log(6.0f)});
}

TEST(ReduceOps, MiddleAxisAndMultipleAxes) {
  std::vector<float> v(24);
  for (int i = 0; i < 24; ++i) v[i] = static_cast<float>(i);
  auto r = run_op("ReduceSum", {tv<float>(v, {2, 3, 4}), axes({1})}, {attr_int("keepdims", 0)}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{12, 15, 18, 21, 48, 51, 54, 57}));
  r = run_op("ReduceMax", {tv<float>(v, {2, 3, 4}), axes({0, 2})}, {}, 18);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{1, 3, 1}));
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{15, 19, 23}));
}

TEST(ReduceOps, EmptySetIdentities) {
  const Value e = Value(Tensor::allocate(DataType::kFloat, {2, 0, 3}).value());
  struct Case {
    const char* op;
    float want;
  };
  const float inf = std::numeric_limits<float>::infinity();
  for (const Case& c : std::vector<Case>{{"ReduceSum", 0},
                                         {"ReduceProd", 1},
                                         {"ReduceMax", -inf},
                                         {"ReduceMin", inf},
                                         {"ReduceL1", 0},
                                         {"ReduceL2", 0},
                                         {"ReduceSumSquare", 0},
                                         {"ReduceLogSum", -inf},
                                         {"ReduceLogSumExp", -inf}}) {
    auto r = run_op(c.op, {e, axes({1})}, {}, 18);
    ASSERT_TRUE(r.is_ok()) << c.op << ": " << r.status().to_string();
    EXPECT_EQ((*r)[0].tensor().shape(), (Shape{2, 1, 3})) << c.op;
    expect_reduce_near(values<float>((*r)[0]), std::vector<float>(6, c.want));
  }
  auto r = run_op("ReduceMean", {e, axes({1})}, {}, 18);
  ASSERT_TRUE(r.is_ok());
  EXPECT_TRUE(std::isnan(values<float>((*r)[0])[0]));
  // A zero-size kept dim gives an empty output.
  r = run_op("ReduceSum", {e, axes({2})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{2, 0, 1}));
  // Integer max over nothing is the type's lowest value.
  r = run_op("ReduceMax", {Value(Tensor::allocate(DataType::kInt32, {0}).value())}, {}, 18);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<int32_t>((*r)[0]), (std::vector<int32_t>{std::numeric_limits<int32_t>::min()}));
}

TEST(ReduceOps, IntegerTypes) {
  auto r = run_op("ReduceSum", {tv<int32_t>({1, 2, 3, 4}, {2, 2}), axes({1})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<int32_t>((*r)[0]), (std::vector<int32_t>{3, 7}));
  r = run_op("ReduceMean", {tv<int64_t>({1, 2, 4, -7}, {2, 2}), axes({1})}, {}, 18);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<int64_t>((*r)[0]), (std::vector<int64_t>{1, -1}));
  r = run_op("ReduceMin", {tv<uint8_t>({9, 200, 3, 7}, {4}), axes({0})}, {attr_int("keepdims", 0)}, 18);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<uint8_t>((*r)[0]), (std::vector<uint8_t>{3}));
  r = run_op("ReduceProd", {tv<int8_t>({-2, 3, 4}, {3})}, {}, 18);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<int8_t>((*r)[0]), (std::vector<int8_t>{-24}));
  r = run_op("ReduceL1", {tv<int32_t>({-2, 3, -4}, {3})}, {}, 18);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<int32_t>((*r)[0]), (std::vector<int32_t>{9}));
}

TEST(ReduceOps, BoolMaxMin) {
  const Value b = tv<bool>({true, false, false, false}, {2, 2});
  auto r = run_op("ReduceMax", {b, axes({1})}, {}, 20);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<bool>((*r)[0]), (std::vector<bool>{true, false}));
  r = run_op("ReduceMin", {b, axes({0})}, {}, 20);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<bool>((*r)[0]), (std::vector<bool>{false, false}));
  r = run_op("ReduceSum", {b}, {}, 13);
  EXPECT_FALSE(r.is_ok());
}

TEST(ReduceOps, HalfAndDouble) {
  std::vector<Float16> h;
  for (float f : {1.0f, 2.0f, 3.0f, 4.0f}) h.push_back(Float16{float_to_half(f)});
  auto r = run_op("ReduceMean", {tv<Float16>(h, {2, 2}), axes({0})}, {}, 18);
  ASSERT_TRUE(r.is_ok());
  expect_reduce_near(fvalues((*r)[0]), {2, 3});
  std::vector<BFloat16> bf;
  for (float f : {1.0f, 2.0f, 3.0f, 4.0f}) bf.push_back(BFloat16{float_to_bfloat16(f)});
  r = run_op("ReduceSum", {tv<BFloat16>(bf, {4})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  expect_reduce_near(fvalues((*r)[0]), {10});
  r = run_op("ReduceLogSumExp", {tv<double>({1000, 1000}, {2})}, {}, 18);
  ASSERT_TRUE(r.is_ok());
  EXPECT_NEAR(values<double>((*r)[0])[0], 1000 + std::log(2.0), 1e-9);
}

TEST(ReduceOps, NaNPropagatesThroughMax) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto r = run_op("ReduceMax", {tv<float>({1, nan, 3}, {3})}, {}, 18);
  ASSERT_TRUE(r.is_ok());
  EXPECT_TRUE(std::isnan(values<float>((*r)[0])[0]));
}

TEST(ReduceOps, Errors) {
  EXPECT_FALSE(run_op("ReduceSum", {x23(), axes({2})}, {}, 13).is_ok());
  EXPECT_FALSE(run_op("ReduceSum", {x23(), axes({-3})}, {}, 13).is_ok());
  EXPECT_FALSE(run_op("ReduceSum", {x23(), axes({1, -1})}, {}, 13).is_ok());
  EXPECT_FALSE(run_op("ReduceMean", {x23()}, {attr_ints("axes", {5})}, 11).is_ok());
  EXPECT_FALSE(run_op("ReduceSum", {x23(), tv<float>({1}, {1})}, {}, 13).is_ok());
}

TEST(ArgOps, ArgMaxArgMin) {
  const Value x = tv<float>({2, 1, 3, 10, 3, 3}, {2, 3});
  auto r = run_op("ArgMax", {x}, {attr_int("axis", 1)}, 13);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{2, 1}));
  EXPECT_EQ(values<int64_t>((*r)[0]), (std::vector<int64_t>{2, 0}));
  r = run_op("ArgMin", {x}, {attr_int("axis", 1), attr_int("keepdims", 0)}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<int64_t>((*r)[0]), (std::vector<int64_t>{1, 1}));
  r = run_op("ArgMin", {x}, {attr_int("axis", -1), attr_int("keepdims", 0), attr_int("select_last_index", 1)}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<int64_t>((*r)[0]), (std::vector<int64_t>{1, 2}));
  r = run_op("ArgMax", {x}, {}, 11);  // default axis 0
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{1, 3}));
  EXPECT_EQ(values<int64_t>((*r)[0]), (std::vector<int64_t>{1, 1, 0}));
  r = run_op("ArgMax", {tv<int32_t>({5, 7, 7}, {3})}, {attr_int("select_last_index", 1)}, 12);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<int64_t>((*r)[0]), (std::vector<int64_t>{2}));
}

TEST(ArgOps, NaNAndErrors) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto r = run_op("ArgMax", {tv<float>({1, nan, 5, nan}, {4})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<int64_t>((*r)[0]), (std::vector<int64_t>{1}));
  EXPECT_FALSE(run_op("ArgMax", {x23()}, {attr_int("axis", 2)}, 13).is_ok());
  EXPECT_FALSE(run_op("ArgMin", {Value(Tensor::allocate(DataType::kFloat, {0, 2}).value())}, {}, 13).is_ok());
  EXPECT_FALSE(run_op("ArgMin", {tv<float>({1}, {})}, {}, 13).is_ok());
}

}  // namespace
}  // namespace xonnx
