// MaxPool, AveragePool, LpPool, Global*Pool, MaxUnpool.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/unit/backend_test_util.h"
#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace {

using testing::attr_int;
using testing::attr_ints;
using testing::attr_string;
using testing::run_op;
using testing::values;

Tensor iota(const Shape& shape, float start = 1.0f) {
  std::vector<float> v(static_cast<size_t>(shape_numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + static_cast<float>(i);
  return Tensor::from_vector<float>(v, shape);
}

void expect_pool_near(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5f * (1 + std::fabs(want[i]))) << "at " << i;
}

TEST(PoolOp, MaxPool2DWithIndices) {
  // 1..16 in a 4x4 grid, 2x2 windows stride 2
  auto r =
      run_op("MaxPool", {iota({1, 1, 4, 4})}, {attr_ints("kernel_shape", {2, 2}), attr_ints("strides", {2, 2})}, 12, 2);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  expect_pool_near(values<float>((*r)[0]), {6, 8, 14, 16});
  const Tensor& idx = (*r)[1].tensor();
  ASSERT_EQ(idx.dtype(), DataType::kInt64);
  EXPECT_EQ(idx.to_int64_vector().value(), (std::vector<int64_t>{5, 7, 13, 15}));
  // column-major indices: (h, w) -> h + w * H
  auto c =
      run_op("MaxPool", {iota({1, 1, 4, 4})},
             {attr_ints("kernel_shape", {2, 2}), attr_ints("strides", {2, 2}), attr_int("storage_order", 1)}, 12, 2);
  ASSERT_TRUE(c.is_ok());
  EXPECT_EQ((*c)[1].tensor().to_int64_vector().value(), (std::vector<int64_t>{5, 13, 7, 15}));
}

TEST(PoolOp, MaxPoolIndicesIncludeBatchAndChannel) {
  auto r = run_op("MaxPool", {iota({2, 2, 1, 3})}, {attr_ints("kernel_shape", {1, 3})}, 12, 2);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[1].tensor().to_int64_vector().value(), (std::vector<int64_t>{2, 5, 8, 11}));
}

TEST(PoolOp, MaxPoolPadsCeilAndDilation) {
  // 1-D: x = 1..5, k=2, stride 2, pads 1/1 -> windows [-1,0] [1,2] [3,4]
  auto r = run_op("MaxPool", {iota({1, 1, 5})},
                  {attr_ints("kernel_shape", {2}), attr_ints("strides", {2}), attr_ints("pads", {1, 1})}, 12);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  expect_pool_near(values<float>((*r)[0]), {1, 3, 5});
  // ceil_mode: length 5, k=2, s=2 -> ceil(3/2)+1 = 3 windows [0,1] [2,3] [4]
  auto c = run_op("MaxPool", {iota({1, 1, 5})},
                  {attr_ints("kernel_shape", {2}), attr_ints("strides", {2}), attr_int("ceil_mode", 1)}, 12);
  ASSERT_TRUE(c.is_ok());
  expect_pool_near(values<float>((*c)[0]), {2, 4, 5});
  // ceil_mode never starts a window in the right padding: length 4, k=2, s=2, pads 0/1 -> 2 windows
  auto e = run_op(
      "MaxPool", {iota({1, 1, 4})},
      {attr_ints("kernel_shape", {2}), attr_ints("strides", {2}), attr_ints("pads", {0, 1}), attr_int("ceil_mode", 1)},
      12);
  ASSERT_TRUE(e.is_ok());
  expect_pool_near(values<float>((*e)[0]), {2, 4});
  // dilation 2: windows {0,2} {1,3} {2,4}
  auto d = run_op("MaxPool", {Tensor::from_vector<float>({5, 1, 2, 9, 0}, {1, 1, 5})},
                  {attr_ints("kernel_shape", {2}), attr_ints("dilations", {2})}, 12);
  ASSERT_TRUE(d.is_ok());
  expect_pool_near(values<float>((*d)[0]), {5, 9, 2});
}

TEST(PoolOp, MaxPoolSameUpperLowerAndInt8) {
  auto u =
      run_op("MaxPool", {iota({1, 1, 4})}, {attr_ints("kernel_shape", {2}), attr_string("auto_pad", "SAME_UPPER")}, 12);
  ASSERT_TRUE(u.is_ok());
  expect_pool_near(values<float>((*u)[0]), {2, 3, 4, 4});
  auto l =
      run_op("MaxPool", {iota({1, 1, 4})}, {attr_ints("kernel_shape", {2}), attr_string("auto_pad", "SAME_LOWER")}, 12);
  ASSERT_TRUE(l.is_ok());
  expect_pool_near(values<float>((*l)[0]), {1, 2, 3, 4});
  auto i = run_op("MaxPool", {Tensor::from_vector<int8_t>({-5, -3, -8, 7}, {1, 1, 4})},
                  {attr_ints("kernel_shape", {2})}, 12);
  ASSERT_TRUE(i.is_ok()) << i.status().to_string();
  EXPECT_EQ((*i)[0].tensor().to_int64_vector().value(), (std::vector<int64_t>{-3, -3, 7}));
}

TEST(PoolOp, MaxPool3D) {
  auto r = run_op("MaxPool", {iota({1, 1, 2, 2, 2})}, {attr_ints("kernel_shape", {2, 2, 2})}, 12);
  ASSERT_TRUE(r.is_ok());
  expect_pool_near(values<float>((*r)[0]), {8});
}

TEST(PoolOp, AveragePoolCountIncludePad) {
  // 3x3 of 1..9, k=2 s=1 pads 1 all around -> 4x4 output
  std::vector<Attribute> a = {attr_ints("kernel_shape", {2, 2}), attr_ints("pads", {1, 1, 1, 1})};
  auto ex = run_op("AveragePool", {iota({1, 1, 3, 3})}, a, 11);
  ASSERT_TRUE(ex.is_ok()) << ex.status().to_string();
  std::vector<float> y = values<float>((*ex)[0]);
  ASSERT_EQ(y.size(), 16u);
  EXPECT_FLOAT_EQ(y[0], 1.0f);  // only x[0,0] counts
  EXPECT_FLOAT_EQ(y[5], (1 + 2 + 4 + 5) / 4.0f);
  a.push_back(attr_int("count_include_pad", 1));
  auto in = run_op("AveragePool", {iota({1, 1, 3, 3})}, a, 11);
  ASSERT_TRUE(in.is_ok());
  EXPECT_FLOAT_EQ(values<float>((*in)[0])[0], 0.25f);
  EXPECT_FLOAT_EQ(values<float>((*in)[0])[1], (1 + 2) / 4.0f);
}

TEST(PoolOp, AveragePoolDilationsAndDouble) {
  auto r = run_op("AveragePool", {Tensor::from_vector<double>({1, 2, 3, 4, 5}, {1, 1, 5})},
                  {attr_ints("kernel_shape", {2}), attr_ints("dilations", {2})}, 19);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  const Tensor& y = (*r)[0].tensor();
  ASSERT_EQ(y.numel(), 3);
  EXPECT_DOUBLE_EQ(y.data<double>()[0], 2.0);
  EXPECT_DOUBLE_EQ(y.data<double>()[2], 4.0);
}

TEST(PoolOp, LpPool) {
  auto r = run_op("LpPool", {Tensor::from_vector<float>({3, 4, -6, 8}, {1, 1, 4})},
                  {attr_ints("kernel_shape", {2}), attr_ints("strides", {2})}, 18);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  expect_pool_near(values<float>((*r)[0]), {5, 10});
  auto p1 = run_op("LpPool", {Tensor::from_vector<float>({3, -4, 6, 8}, {1, 1, 4})},
                   {attr_ints("kernel_shape", {2}), attr_ints("strides", {2}), attr_int("p", 1)}, 18);
  ASSERT_TRUE(p1.is_ok());
  expect_pool_near(values<float>((*p1)[0]), {7, 14});
  auto p3 = run_op("LpPool", {Tensor::from_vector<float>({1, 2}, {1, 1, 2})},
                   {attr_ints("kernel_shape", {2}), attr_int("p", 3)}, 18);
  ASSERT_TRUE(p3.is_ok());
  expect_pool_near(values<float>((*p3)[0]), {std::cbrt(9.0f)});
}

TEST(PoolOp, GlobalPools) {
  Tensor x = iota({2, 3, 2, 2});
  auto avg = run_op("GlobalAveragePool", {x});
  ASSERT_TRUE(avg.is_ok());
  EXPECT_EQ((*avg)[0].tensor().shape(), (Shape{2, 3, 1, 1}));
  expect_pool_near(values<float>((*avg)[0]), {2.5, 6.5, 10.5, 14.5, 18.5, 22.5});
  auto mx = run_op("GlobalMaxPool", {x});
  ASSERT_TRUE(mx.is_ok());
  expect_pool_near(values<float>((*mx)[0]), {4, 8, 12, 16, 20, 24});
  auto lp = run_op("GlobalLpPool", {Tensor::from_vector<float>({3, 4}, {1, 1, 2})});
  ASSERT_TRUE(lp.is_ok());
  expect_pool_near(values<float>((*lp)[0]), {5});
  auto x16 = run_op("GlobalAveragePool",
                    {Tensor::from_vector<Float16>({Float16{float_to_half(1)}, Float16{float_to_half(2)}}, {1, 1, 2})});
  ASSERT_TRUE(x16.is_ok());
  EXPECT_EQ((*x16)[0].tensor().get_as_double(0), 1.5);
}

TEST(PoolOp, MaxUnpool) {
  Tensor x = Tensor::from_vector<float>({1, 2, 3, 4}, {1, 1, 2, 2});
  Tensor i = Tensor::from_vector<int64_t>({5, 7, 13, 15}, {1, 1, 2, 2});
  auto r = run_op("MaxUnpool", {x, i}, {attr_ints("kernel_shape", {2, 2}), attr_ints("strides", {2, 2})}, 11);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  ASSERT_EQ((*r)[0].tensor().shape(), (Shape{1, 1, 4, 4}));
  std::vector<float> y = values<float>((*r)[0]);
  EXPECT_EQ(y[5], 1);
  EXPECT_EQ(y[15], 4);
  EXPECT_EQ(y[0], 0);
  auto s = run_op("MaxUnpool", {x, i, Tensor::from_vector<int64_t>({1, 1, 5, 5}, {4})},
                  {attr_ints("kernel_shape", {2, 2}), attr_ints("strides", {2, 2})}, 11);
  ASSERT_TRUE(s.is_ok());
  EXPECT_EQ((*s)[0].tensor().shape(), (Shape{1, 1, 5, 5}));
  std::vector<float> ys = values<float>((*s)[0]);  // indices address the inferred 4x4 block at the origin
  EXPECT_EQ(ys[1 * 5 + 1], 1);
  EXPECT_EQ(ys[3 * 5 + 3], 4);
  EXPECT_FALSE(run_op("MaxUnpool", {x, i, Tensor::from_vector<int64_t>({1, 1, 3, 3}, {4})},
                      {attr_ints("kernel_shape", {2, 2}), attr_ints("strides", {2, 2})}, 11)
                   .is_ok());
  EXPECT_FALSE(run_op("MaxUnpool", {x, Tensor::from_vector<int64_t>({0, 1, 2, 99}, {1, 1, 2, 2})},
                      {attr_ints("kernel_shape", {2, 2}), attr_ints("strides", {2, 2})}, 11)
                   .is_ok());
}

TEST(PoolOp, HugeWindowsAreProcessedInChunks) {
  // 65 x 65 outputs of 64 x 64 windows: 17M window entries, more than one CSR chunk
  Tensor x = iota({1, 1, 128, 128}, 0.0f);
  auto r = run_op("MaxPool", {x}, {attr_ints("kernel_shape", {64, 64})}, 12);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  const std::vector<float> y = values<float>((*r)[0]);
  ASSERT_EQ(y.size(), 65u * 65u);
  for (int64_t i = 0; i < 65; ++i)
    for (int64_t j = 0; j < 65; ++j) ASSERT_EQ(y[i * 65 + j], static_cast<float>((i + 63) * 128 + j + 63));
}

TEST(PoolOp, RejectsBadInput) {
  Tensor x = iota({1, 1, 4, 4});
  EXPECT_FALSE(run_op("MaxPool", {x}, {}, 12).is_ok());                                   // no kernel_shape
  EXPECT_FALSE(run_op("MaxPool", {x}, {attr_ints("kernel_shape", {2})}, 12).is_ok());     // rank mismatch
  EXPECT_FALSE(run_op("MaxPool", {x}, {attr_ints("kernel_shape", {5, 5})}, 12).is_ok());  // kernel > input
  EXPECT_FALSE(run_op("MaxPool", {x}, {attr_ints("kernel_shape", {2, 2}), attr_ints("pads", {1, 1})}, 12).is_ok());
  EXPECT_FALSE(
      run_op("AveragePool", {x}, {attr_ints("kernel_shape", {2, 2}), attr_ints("strides", {0, 1})}, 11).is_ok());
  EXPECT_FALSE(
      run_op("AveragePool", {Tensor::from_vector<int32_t>({1, 2}, {1, 1, 2})}, {attr_ints("kernel_shape", {2})}, 11)
          .is_ok());
  EXPECT_FALSE(run_op("GlobalAveragePool", {Tensor::from_vector<float>({1}, {1})}).is_ok());
}

}  // namespace
}  // namespace xonnx

// Every backend of the pools (tests/unit/backend_test_util.h): XNNPACK's MaxPool, AveragePool
// and GlobalAveragePool must take the geometries it supports and leave the others, and the own
// kernels (each ISA table) and XNNPACK must agree with the reference.
namespace xonnx {
namespace {

using namespace backendtest;

// `xnnpack`: whether XNNPACK's kernel must run (the own kernels may or may not take a plain
// NCHW node).
void pool(const char* op, const Shape& x, std::vector<Attribute> attrs, const std::string& what, bool xnnpack = true,
          int64_t opset = 19) {
  diff_all({op, "", opset}, {var(rand_tensor(x, 11))}, attrs,
           {Runs::kMay, xnnpack ? Runs::kMust : Runs::kNot, {1e-4, 1e-5}}, what);
}

TEST(PoolBackends, MaxPoolGeometries) {
  for (int64_t c : {1, 3, 13, 127, 128}) {
    const std::string cs = " c " + std::to_string(c);
    pool("MaxPool", {1, c, 8, 8}, {attr_ints("kernel_shape", {2, 2}), attr_ints("strides", {2, 2})}, "2x2 s2" + cs);
    pool("MaxPool", {2, c, 13, 11},
         {attr_ints("kernel_shape", {3, 3}), attr_ints("strides", {2, 2}), attr_ints("pads", {1, 1, 1, 1})},
         "3x3 s2 p1" + cs);
  }
  pool("MaxPool", {1, 3, 13, 13},
       {attr_ints("kernel_shape", {3, 3}), attr_ints("strides", {2, 2}), attr_int("ceil_mode", 1)}, "ceil_mode");
  pool("MaxPool", {1, 3, 12, 13},
       {attr_ints("kernel_shape", {3, 2}), attr_ints("strides", {2, 3}), attr_ints("pads", {1, 0, 0, 1}),
        attr_int("ceil_mode", 1)},
       "ceil_mode pads");
  pool("MaxPool", {1, 3, 13, 13}, {attr_ints("kernel_shape", {3, 3}), attr_ints("dilations", {2, 2})}, "dilated");
  pool("MaxPool", {1, 3, 13, 13},
       {attr_ints("kernel_shape", {3, 3}), attr_ints("dilations", {2, 2}), attr_ints("pads", {1, 1, 1, 1})},
       "dilated + pads (reference)", false);
  for (const char* ap : {"SAME_UPPER", "SAME_LOWER", "VALID"}) {
    for (int64_t s : {1, 2, 3}) {
      pool("MaxPool", {1, 5, 7, 8},
           {attr_ints("kernel_shape", {3, 2}), attr_ints("strides", {s, s}), attr_string("auto_pad", ap)},
           std::string(ap) + " s" + std::to_string(s));
    }
  }
  pool("MaxPool", {1, 3, 13, 13}, {attr_ints("kernel_shape", {1, 1}), attr_ints("strides", {2, 2})}, "1x1", false);
  pool("MaxPool", {1, 3, 13}, {attr_ints("kernel_shape", {3})}, "1-D (lifted to 2-D by the layout pass)");
  pool("MaxPool", {1, 3, 13, 13}, {attr_ints("kernel_shape", {3, 3})}, "opset 8", true, 8);
}

TEST(PoolBackends, MaxPoolIndicesStayWithTheReference) {
  diff_all({"MaxPool", "", 12, 2}, {var(rand_tensor({1, 3, 6, 6}, 1))}, {attr_ints("kernel_shape", {2, 2})},
           {Runs::kMay, Runs::kNot}, "Indices output");
}

TEST(PoolBackends, AveragePool) {
  for (int64_t cip : {0, 1}) {
    const std::string cs = " cip " + std::to_string(cip);
    for (int64_t c : {1, 3, 13, 127, 128}) {
      pool("AveragePool", {2, c, 9, 10},
           {attr_ints("kernel_shape", {3, 3}), attr_ints("strides", {2, 2}), attr_ints("pads", {1, 1, 1, 1}),
            attr_int("count_include_pad", cip)},
           "3x3 s2 p1 c " + std::to_string(c) + cs);
    }
    pool("AveragePool", {1, 3, 13, 13},
         {attr_ints("kernel_shape", {3, 3}), attr_ints("strides", {2, 2}), attr_int("ceil_mode", 1),
          attr_int("count_include_pad", cip)},
         "ceil" + cs);
    pool("AveragePool", {1, 3, 12, 11},
         {attr_ints("kernel_shape", {3, 2}), attr_ints("strides", {2, 2}), attr_ints("pads", {1, 0, 2, 1}),
          attr_int("ceil_mode", 1), attr_int("count_include_pad", cip)},
         "ceil asymmetric pads" + cs);
    for (const char* ap : {"SAME_UPPER", "SAME_LOWER"}) {
      pool("AveragePool", {1, 4, 7, 8},
           {attr_ints("kernel_shape", {3, 3}), attr_ints("strides", {2, 2}), attr_string("auto_pad", ap),
            attr_int("count_include_pad", cip)},
           std::string(ap) + cs);
    }
  }
  pool("AveragePool", {1, 3, 8, 8}, {attr_ints("kernel_shape", {2, 2}), attr_ints("strides", {2, 2})}, "2x2 s2");
  pool("AveragePool", {1, 3, 8, 8}, {attr_ints("kernel_shape", {3, 3}), attr_ints("dilations", {2, 2})}, "dilated",
       false);
  pool("AveragePool", {1, 3, 8, 8}, {attr_ints("kernel_shape", {1, 1})}, "1x1", false);
  pool("AveragePool", {1, 3, 8, 8}, {attr_ints("kernel_shape", {3, 3}), attr_ints("pads", {1, 1, 1, 1})}, "opset 7",
       true, 7);
}

TEST(PoolBackends, GlobalAveragePool) {
  for (int64_t c : {1, 3, 13, 127, 128}) {
    pool("GlobalAveragePool", {2, c, 7, 5}, {}, "4-D c " + std::to_string(c));
  }
  pool("GlobalAveragePool", {2, 3, 1, 1}, {}, "1x1");
  pool("GlobalAveragePool", {2, 3, 9}, {}, "3-D");
  pool("GlobalAveragePool", {1, 3, 2, 3, 4}, {}, "5-D");
  pool("GlobalAveragePool", {1, 64, 56, 56}, {}, "large");
}

}  // namespace
}  // namespace xonnx
