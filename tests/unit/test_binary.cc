// Binary ops: arithmetic, Pow, Mod, BitShift, logic, bitwise, comparisons, broadcasting.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "tests/unit/backend_test_util.h"
#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace {

using testing::attr_int;
using testing::attr_string;
using testing::run_op;
using testing::tv;
using testing::values;

Result<std::vector<Value>> run2(const std::string& op, Value a, Value b, std::vector<Attribute> attrs = {},
                                int64_t opset = 17) {
  return run_op(op, {std::move(a), std::move(b)}, attrs, opset);
}

TEST(BinaryOps, AddSameShapeFloat) {
  auto r = run2("Add", tv<float>({1, 2, 3, 4}, {2, 2}), tv<float>({10, 20, 30, 40}, {2, 2}));
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{2, 2}));
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{11, 22, 33, 44}));
}

TEST(BinaryOps, BroadcastPatterns) {
  // [2,3] + [3] (bias), [2,1] + [1,3] (outer), scalar + [2,3], [2,1,3] + [4,1]
  auto r = run2("Sub", tv<float>({1, 2, 3, 4, 5, 6}, {2, 3}), tv<float>({1, 1, 2}, {3}));
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{0, 1, 1, 3, 4, 4}));
  r = run2("Mul", tv<float>({1, 2}, {2, 1}), tv<float>({1, 10, 100}, {1, 3}));
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{2, 3}));
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{1, 10, 100, 2, 20, 200}));
  r = run2("Sub", tv<float>({10}, {}), tv<float>({1, 2, 3, 4, 5, 6}, {2, 3}));
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{9, 8, 7, 6, 5, 4}));
  r = run2("Add", tv<int32_t>({0, 1, 2, 3, 4, 5}, {2, 1, 3}), tv<int32_t>({0, 10, 20, 30}, {4, 1}));
  ASSERT_TRUE(r.is_ok());
  const auto out = values<int32_t>((*r)[0]);
  ASSERT_EQ((*r)[0].tensor().shape(), (Shape{2, 4, 3}));
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 3; ++k) EXPECT_EQ(out[(i * 4 + j) * 3 + k], i * 3 + k + j * 10);
}

TEST(BinaryOps, EmptyAndScalarOutputs) {
  auto r = run2("Add", tv<float>({}, {0, 3}), tv<float>({1, 2, 3}, {3}));
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{0, 3}));
  r = run2("Mul", tv<float>({3}, {}), tv<float>({4}, {}));
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().shape(), Shape{});
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{12}));
}

TEST(BinaryOps, IncompatibleShapesAndTypesFail) {
  EXPECT_FALSE(run2("Add", tv<float>({1, 2, 3}, {3}), tv<float>({1, 2}, {2})).is_ok());
  EXPECT_FALSE(run2("Add", tv<float>({1}, {1}), tv<double>({1}, {1})).is_ok());
  EXPECT_FALSE(run2("Add", tv<bool>({true}, {1}), tv<bool>({true}, {1})).is_ok());
  EXPECT_FALSE(run2("And", tv<float>({1}, {1}), tv<float>({1}, {1})).is_ok());
}

TEST(BinaryOps, IntegerArithmeticWrapsAndTruncates) {
  auto r = run2("Add", tv<int8_t>({127, -128}, {2}), tv<int8_t>({1, -1}, {2}));
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<int8_t>((*r)[0]), (std::vector<int8_t>{-128, 127}));
  r = run2("Mul", tv<uint16_t>({65535}, {1}), tv<uint16_t>({65535}, {1}));
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<uint16_t>((*r)[0]), (std::vector<uint16_t>{1}));
  r = run2("Div", tv<int32_t>({-3, 3, -3, 3, 7, std::numeric_limits<int32_t>::min()}, {6}),
           tv<int32_t>({2, 2, -2, -2, 0, -1}, {6}));
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<int32_t>((*r)[0]), (std::vector<int32_t>{-1, 1, 1, -1, 0, std::numeric_limits<int32_t>::min()}));
}

TEST(BinaryOps, Float16AndBFloat16) {
  auto a = Tensor::from_vector<Float16>({Float16{float_to_half(1.5f)}, Float16{float_to_half(-2.0f)}}, {2});
  auto b = Tensor::from_vector<Float16>({Float16{float_to_half(0.25f)}, Float16{float_to_half(4.0f)}}, {2});
  auto r = run2("Mul", Value(a), Value(b));
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(half_to_float((*r)[0].tensor().data<Float16>()[0].bits), 0.375f);
  EXPECT_EQ(half_to_float((*r)[0].tensor().data<Float16>()[1].bits), -8.0f);
  auto c = Tensor::from_vector<BFloat16>({BFloat16{float_to_bfloat16(3.0f)}}, {1});
  r = run2("Div", Value(c), Value(c));
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(bfloat16_to_float((*r)[0].tensor().data<BFloat16>()[0].bits), 1.0f);
}

TEST(BinaryOps, LegacyBroadcastOpset6) {
  // axis=0: B [2] aligns with A's first dim.
  auto r = run2("Add", tv<float>({1, 2, 3, 4, 5, 6}, {2, 3}), tv<float>({10, 20}, {2}),
                {attr_int("broadcast", 1), attr_int("axis", 0)}, 6);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{11, 12, 13, 24, 25, 26}));
  // no axis: trailing alignment; size-1 dims broadcast
  r = run2("Mul", tv<float>({1, 2, 3, 4, 5, 6}, {2, 3}), tv<float>({2}, {1}), {attr_int("broadcast", 1)}, 6);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{2, 4, 6, 8, 10, 12}));
  r = run2("Add", tv<float>({1, 2, 3, 4, 5, 6}, {2, 3}), tv<float>({1, 2}, {2, 1}),
           {attr_int("broadcast", 1), attr_int("axis", 0)}, 6);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{2, 3, 4, 6, 7, 8}));
  // without broadcast=1 shapes must match; bad axis fails
  EXPECT_FALSE(run2("Add", tv<float>({1, 2, 3, 4, 5, 6}, {2, 3}), tv<float>({1, 2, 3}, {3}), {}, 6).is_ok());
  EXPECT_FALSE(run2("Add", tv<float>({1, 2, 3, 4, 5, 6}, {2, 3}), tv<float>({1, 2, 3}, {3}),
                    {attr_int("broadcast", 1), attr_int("axis", 0)}, 6)
                   .is_ok());
}

TEST(BinaryOps, PowMixedTypes) {
  auto r = run2("Pow", tv<int32_t>({1, 2, 3}, {3}), tv<float>({4, 5, 6}, {3}), {}, 15);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().dtype(), DataType::kInt32);
  EXPECT_EQ(values<int32_t>((*r)[0]), (std::vector<int32_t>{1, 32, 729}));
  r = run2("Pow", tv<float>({2, 3, -2}, {3}), tv<int64_t>({3, -1, 2}, {3}), {}, 15);
  ASSERT_TRUE(r.is_ok());
  const auto f = values<float>((*r)[0]);
  EXPECT_FLOAT_EQ(f[0], 8);
  EXPECT_FLOAT_EQ(f[1], 1.0f / 3);
  EXPECT_FLOAT_EQ(f[2], 4);
  r = run2("Pow", tv<int64_t>({2, -1, 5, 1}, {4}), tv<int64_t>({10, 3, -1, -7}, {4}), {}, 15);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<int64_t>((*r)[0]), (std::vector<int64_t>{1024, -1, 0, 1}));
  r = run2("Pow", tv<float>({-3, 0.5f}, {2}), tv<float>({2}, {}), {}, 15);  // x*x fast path
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{9, 0.25f}));
  // before opset 12 the types must match
  EXPECT_FALSE(run2("Pow", tv<float>({2}, {1}), tv<int64_t>({2}, {1}), {}, 7).is_ok());
}

TEST(BinaryOps, ModSignRules) {
  auto r = run2("Mod", tv<int32_t>({-4, 7, 5, 4, -7, 8, 3}, {7}), tv<int32_t>({2, -3, 8, -2, 3, 5, 0}, {7}));
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<int32_t>((*r)[0]), (std::vector<int32_t>{0, -2, 5, 0, 2, 3, 0}));
  r = run2("Mod", tv<int64_t>({-4, 7, 5, 4, -7, 8, INT64_MIN}, {7}), tv<int64_t>({2, -3, 8, -2, 3, 5, -1}, {7}),
           {attr_int("fmod", 1)});
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<int64_t>((*r)[0]), (std::vector<int64_t>{0, 1, 5, 0, -1, 3, 0}));
  r = run2("Mod", tv<float>({-4.5f, 7.5f}, {2}), tv<float>({2, -2}, {2}), {attr_int("fmod", 1)});
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{-0.5f, 1.5f}));
  EXPECT_FALSE(run2("Mod", tv<int32_t>({1}, {1}), tv<int32_t>({1}, {1}), {attr_int("fmod", 2)}).is_ok());
}

TEST(BinaryOps, BitShift) {
  auto r = run2("BitShift", tv<uint8_t>({16, 4, 1, 1}, {4}), tv<uint8_t>({1, 2, 3, 8}, {4}),
                {attr_string("direction", "LEFT")});
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<uint8_t>((*r)[0]), (std::vector<uint8_t>{32, 16, 8, 0}));
  r = run2("BitShift", tv<uint64_t>({16, 4, 1}, {3}), tv<uint64_t>({1, 2, 64}, {3}),
           {attr_string("direction", "RIGHT")});
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<uint64_t>((*r)[0]), (std::vector<uint64_t>{8, 1, 0}));
  EXPECT_FALSE(
      run2("BitShift", tv<uint8_t>({1}, {1}), tv<uint8_t>({1}, {1}), {attr_string("direction", "UP")}).is_ok());
  EXPECT_FALSE(run2("BitShift", tv<uint8_t>({1}, {1}), tv<uint8_t>({1}, {1})).is_ok());
  EXPECT_FALSE(
      run2("BitShift", tv<int32_t>({1}, {1}), tv<int32_t>({1}, {1}), {attr_string("direction", "LEFT")}).is_ok());
}

TEST(BinaryOps, LogicAndBitwise) {
  auto r = run2("Xor", tv<bool>({true, true, false, false}, {2, 2}), tv<bool>({true, false}, {2}));
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<bool>((*r)[0]), (std::vector<bool>{false, true, true, false}));
  r = run2("Or", tv<bool>({true, false}, {2}), tv<bool>({false}, {}), {}, 7);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<bool>((*r)[0]), (std::vector<bool>{true, false}));
  r = run2("BitwiseAnd", tv<int16_t>({0x0f0f, -1}, {2}), tv<int16_t>({0x00ff, 0x1234}, {2}), {}, 18);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<int16_t>((*r)[0]), (std::vector<int16_t>{0x000f, 0x1234}));
  r = run2("BitwiseXor", tv<uint8_t>({0xff, 0x0f}, {2}), tv<uint8_t>({0x0f}, {1}), {}, 18);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<uint8_t>((*r)[0]), (std::vector<uint8_t>{0xf0, 0x00}));
  EXPECT_FALSE(run2("BitwiseOr", tv<float>({1}, {1}), tv<float>({1}, {1}), {}, 18).is_ok());
}

TEST(BinaryOps, Comparisons) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto r = run2("Equal", tv<float>({1, 2, nan}, {3}), tv<float>({1, 3, nan}, {3}), {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().dtype(), DataType::kBool);
  EXPECT_EQ(values<bool>((*r)[0]), (std::vector<bool>{true, false, false}));
  r = run2("Greater", tv<int64_t>({1, 2, 3}, {3}), tv<int64_t>({2}, {1}), {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<bool>((*r)[0]), (std::vector<bool>{false, false, true}));
  r = run2("LessOrEqual", tv<uint32_t>({1, 2, 3}, {3}), tv<uint32_t>({2}, {1}), {}, 16);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<bool>((*r)[0]), (std::vector<bool>{true, true, false}));
  r = run2("GreaterOrEqual", tv<double>({1, 2, 3}, {3}), tv<double>({2}, {1}), {}, 16);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<bool>((*r)[0]), (std::vector<bool>{false, true, true}));
  r = run2("Less", tv<float>({1, 2}, {2}), tv<float>({2, 2}, {2}), {attr_int("broadcast", 0)}, 1);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<bool>((*r)[0]), (std::vector<bool>{true, false}));
  r = run2("Equal", tv<std::string>({"a", "b"}, {2}), tv<std::string>({"b"}, {1}), {}, 19);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<bool>((*r)[0]), (std::vector<bool>{false, true}));
  r = run2("Equal", tv<bool>({true, false}, {2}), tv<bool>({true}, {1}), {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<bool>((*r)[0]), (std::vector<bool>{true, false}));
  EXPECT_FALSE(run2("Greater", tv<std::string>({"a"}, {1}), tv<std::string>({"b"}, {1}), {}, 13).is_ok());
}

}  // namespace
}  // namespace xonnx

// Every backend of Add / Sub / Mul / Div (tests/unit/backend_test_util.h): the own kernels
// (runtime/ops/optimized/binary.cc, each ISA table, 1 and 2 threads) give the reference's exact
// results over odd sizes, the broadcast forms they take, NaN/inf and division by zero, and leave
// the other shapes and types to the reference; XNNPACK takes every numpy broadcast up to 6-D.
namespace xonnx {
namespace {

using namespace backendtest;

constexpr const char* kArithmetic[] = {"Add", "Sub", "Mul", "Div"};
constexpr Tolerance kXnnpackTol{1e-4, 1e-5};

// Both orders of the operands: the broadcast one first (swapped) and second. `own`: whether
// the own kernel must take the node.
void diff_both_orders(const char* op, const Shape& full, const Shape& other, Runs own, const std::string& what) {
  const Tensor x = with_specials(rand_tensor(full, 1, -3, 3));
  Tensor y = rand_tensor(other, 2, -3, 3);
  if (y.numel() > 1) y.data<float>()[1] = 0.0f;  // x / 0
  const Check check = with_xnnpack_tol({own, Runs::kMay}, kXnnpackTol);
  diff_all({op}, {var(x), var(y)}, {}, check, what);
  diff_all({op}, {var(y), var(x)}, {}, check, what + " (swapped)");
}

TEST(BinaryBackends, EqualShapesOfOddSizes) {
  for (const char* op : kArithmetic) {
    for (int64_t n : kSizes) diff_both_orders(op, {2, n}, {2, n}, Runs::kMust, "n " + std::to_string(n));
    diff_both_orders(op, {3, 40000}, {3, 40000}, Runs::kMust, "several parallel items");
    diff_both_orders(op, {2, 3, 5}, {1, 2, 3, 5}, Runs::kMust, "extra leading 1");
  }
}

TEST(BinaryBackends, ScalarsRowsAndGates) {
  for (const char* op : kArithmetic) {
    diff_both_orders(op, {5, 7, 13}, {}, Runs::kMust, "scalar");
    diff_both_orders(op, {5, 7, 13}, {1}, Runs::kMust, "one-element tensor");
    diff_both_orders(op, {5, 7, 129}, {129}, Runs::kMust, "bias row");
    diff_both_orders(op, {128, 1, 768}, {768}, Runs::kMust, "projection bias");
    diff_both_orders(op, {2, 5, 6, 24}, {2, 1, 1, 24}, Runs::kMust, "NHWC gate per image and channel");
    // 96-value rows across 8192-value work items: part rows at item edges, whole-row runs
    // between, and the image (the gate row) changing inside an item (37,536 values an image);
    // over 8 items, so that 2 threads split them (kMinItems 4). Sizes kept small: armv7 runs
    // this under qemu, where the earlier 1.3 M values took 400 s.
    diff_both_orders(op, {2, 23, 17, 96}, {2, 1, 1, 96}, Runs::kMust, "NHWC gate over several items");
    diff_both_orders(op, {2, 24, 5, 6}, {2, 24, 1, 1}, Runs::kMust, "NCHW gate: a scalar per image and channel");
    diff_both_orders(op, {3, 3, 1, 9000}, {3, 1, 1, 1}, Runs::kMust, "a scalar per image over several items");
  }
}

TEST(BinaryBackends, OtherShapesAndTypesGoToTheReference) {
  const Check own_not = with_xnnpack_tol({Runs::kNot, Runs::kMay}, kXnnpackTol);
  for (const char* op : kArithmetic) {
    diff_all({op}, {var(rand_tensor({4, 1}, 1)), var(rand_tensor({1, 5}, 2))}, {}, own_not, "both broadcast");
    diff_all({op}, {var(rand_tensor({3, 50, 2}, 1)), var(rand_tensor({3, 1, 2}, 2))}, {}, own_not,
             "rows of 2 repeated");
    diff_all({op}, {var(rand_tensor({2, 3, 4}, 1)), var(rand_tensor({2, 1, 4, 1}, 2))}, {}, own_not,
             "broadcast on two runs of dims");
    diff_all({op}, {var(rand_tensor({3}, 1)), var(rand_tensor({4}, 2))}, {}, neither(),
             "not broadcastable: same error");
    diff_all({op}, {var(Tensor::from_vector<int64_t>({7, 8, 9}, {3})), cst(Tensor::from_vector<int64_t>({2}, {1}))}, {},
             neither(), "int64 (shape arithmetic)");
  }
}

TEST(BinaryBackends, XnnpackTakesEveryBroadcastUpTo6D) {
  const std::vector<std::pair<Shape, Shape>> shapes = {{{13}, {13}},
                                                       {{3, 13}, {}},
                                                       {{}, {3, 13}},
                                                       {{2, 3, 4, 5}, {3, 1, 1}},
                                                       {{2, 1, 4, 1}, {3, 1, 5}},
                                                       {{1}, {127}},
                                                       {{128, 1}, {1, 128}},
                                                       {{1, 2, 1, 3, 1, 2}, {2, 1, 3, 1, 2, 1}},
                                                       {{127}, {1}},
                                                       {{2, 3, 4, 5}, {2, 3, 4, 5}}};
  const Check check{Runs::kMay, Runs::kMust, kXnnpackTol};
  for (const char* op : kArithmetic) {
    for (const auto& [a, b] : shapes) {
      const std::string what = shape_to_string(a) + " " + shape_to_string(b);
      diff_all({op, "", 14}, {var(rand_tensor(a, 1)), var(rand_tensor(b, 2, 0.5f, 2.0f))}, {}, check, what);
      diff_all({op, "", 14}, {var(rand_tensor(a, 1)), cst(rand_tensor(b, 2, 0.5f, 2.0f))}, {}, check, what + " const");
    }
  }
}

TEST(BinaryBackends, XnnpackDeclines) {
  const Check xnn_not{Runs::kMay, Runs::kNot, kXnnpackTol};
  diff_all({"Add", "", 14}, {var(rand_tensor({2, 3}, 1)), var(rand_tensor({3, 2}, 2))}, {}, xnn_not, "incompatible");
  diff_all({"Add", "", 14}, {var(rand_tensor({1, 1, 1, 1, 1, 1, 2}, 1)), var(rand_tensor({2}, 2))}, {}, xnn_not, "7-D");
  diff_all({"Add", "", 14}, {var(rand_tensor({0, 3}, 1)), var(rand_tensor({3}, 2))}, {}, xnn_not, "empty");
  diff_all({"Add", "", 14},
           {var(Tensor::from_vector<int32_t>({1, 2}, {2})), var(Tensor::from_vector<int32_t>({3, 4}, {2}))}, {},
           xnn_not, "int32");
  diff_all({"Mul", "", 6}, {var(rand_tensor({2, 3}, 1)), var(rand_tensor({3}, 2))}, {attr_int("broadcast", 1)},
           neither(), "opset 6");
}

}  // namespace
}  // namespace xonnx
