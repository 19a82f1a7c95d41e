// Softmax family: Softmax, LogSoftmax, Hardmax, NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss.
#include <gtest/gtest.h>

#include <cmath>
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

// numpy-style softmax of a row.
std::vector<double> ref_softmax(std::vector<double> x) {
  double m = -INFINITY, s = 0;
  for (double v : x) m = std::max(m, v);
  for (double& v : x) s += (v = std::exp(v - m));
  for (double& v : x) v /= s;
  return x;
}

TEST(SoftmaxOps, SoftmaxLastAxisAndAxis0) {
  auto r = run_op("Softmax", {tv<float>({1, 2, 3, 1000, 1001, 1002}, {2, 3})}, {}, 13);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  auto out = values<float>((*r)[0]);
  auto e = ref_softmax({1, 2, 3});
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(out[i], e[i], 1e-6);
    EXPECT_NEAR(out[3 + i], e[i], 1e-6);  // large numbers stay finite
  }
  r = run_op("Softmax", {tv<float>({0, 0, std::log(3.0f), 0}, {2, 2})}, {attr_int("axis", 0)}, 13);
  ASSERT_TRUE(r.is_ok());
  out = values<float>((*r)[0]);
  EXPECT_NEAR(out[0], 0.25, 1e-6);
  EXPECT_NEAR(out[2], 0.75, 1e-6);
  EXPECT_NEAR(out[1], 0.5, 1e-6);
  EXPECT_NEAR(out[3], 0.5, 1e-6);
}

// A softmax over axis 1 of [2, 5, 3, 37] (111 values a row: whole vectors and a tail) and of
// [1, 4, 600] (columns in several blocks, split over 2 threads) against numpy's in double.
TEST(SoftmaxOps, SoftmaxOverAnInnerAxis) {
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{2, 5, 3, 37}, std::vector<int64_t>{1, 4, 600}}) {
    int64_t total = 1;
    for (int64_t d : shape) total *= d;
    const int64_t n = shape[1], inner = total / shape[0] / n;
    std::vector<float> x(static_cast<size_t>(total));
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(0.71f * static_cast<float>(i)) * 8.0f;
    for (int threads : {1, 2}) {
      auto r = run_op("Softmax", {tv<float>(x, shape)}, {attr_int("axis", 1)}, 13, 1, "", threads);
      ASSERT_TRUE(r.is_ok()) << r.status().to_string();
      const auto out = values<float>((*r)[0]);
      for (int64_t o = 0; o < shape[0]; ++o)
        for (int64_t c = 0; c < inner; ++c) {
          std::vector<double> col;
          for (int64_t k = 0; k < n; ++k) col.push_back(x[static_cast<size_t>((o * n + k) * inner + c)]);
          const std::vector<double> want = ref_softmax(col);
          for (int64_t k = 0; k < n; ++k)
            ASSERT_NEAR(out[static_cast<size_t>((o * n + k) * inner + c)], want[static_cast<size_t>(k)], 1e-6)
                << threads << " threads, outer " << o << " column " << c << " row " << k;
        }
    }
  }
}

TEST(SoftmaxOps, LegacyCoercesTo2D) {
  // opset 11, axis=1 on [1,2,2]: normalise over all 4 values.
  auto r = run_op("Softmax", {tv<float>({0, 0, 0, 0}, {1, 2, 2})}, {}, 11);
  ASSERT_TRUE(r.is_ok());
  for (float v : values<float>((*r)[0])) EXPECT_NEAR(v, 0.25, 1e-6);
  // opset 13 default axis -1: over the last 2 values.
  r = run_op("Softmax", {tv<float>({0, 0, 0, 0}, {1, 2, 2})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  for (float v : values<float>((*r)[0])) EXPECT_NEAR(v, 0.5, 1e-6);
  r = run_op("Hardmax", {tv<float>({1, 5, 3, 2}, {1, 2, 2})}, {}, 11);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{0, 1, 0, 0}));
}

TEST(SoftmaxOps, LogSoftmaxAndDoubles) {
  auto r = run_op("LogSoftmax", {tv<double>({1, 2, 3}, {1, 3})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  auto out = values<double>((*r)[0]);
  auto e = ref_softmax({1, 2, 3});
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(out[i], std::log(e[i]), 1e-12);
  // middle axis on [2,3,2]
  std::vector<float> x(12);
  for (int i = 0; i < 12; ++i) x[i] = static_cast<float>(i % 5);
  r = run_op("LogSoftmax", {tv<float>(x, {2, 3, 2})}, {attr_int("axis", -2)}, 13);
  ASSERT_TRUE(r.is_ok());
  auto o = values<float>((*r)[0]);
  for (int b = 0; b < 2; ++b)
    for (int j = 0; j < 2; ++j) {
      auto ref = ref_softmax({x[b * 6 + j], x[b * 6 + 2 + j], x[b * 6 + 4 + j]});
      for (int k = 0; k < 3; ++k) EXPECT_NEAR(o[b * 6 + k * 2 + j], std::log(ref[k]), 1e-5);
    }
}

TEST(SoftmaxOps, HardmaxTiesAndFloat16) {
  auto r = run_op("Hardmax", {tv<float>({3, 3, 1, 0, 2, 2}, {2, 3})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{1, 0, 0, 0, 1, 0}));
  r = run_op("Hardmax", {tv<float>({1, 4, 3, 2}, {2, 2})}, {attr_int("axis", 0)}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{0, 1, 1, 0}));
  std::vector<Float16> h = {Float16{float_to_half(0)}, Float16{float_to_half(0)}};
  r = run_op("Softmax", {Value(Tensor::from_vector<Float16>(h, {2}))}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(half_to_float((*r)[0].tensor().data<Float16>()[0].bits), 0.5f);
}

TEST(SoftmaxOps, BadAxisAndTypeFail) {
  EXPECT_FALSE(run_op("Softmax", {tv<float>({1, 2}, {2})}, {attr_int("axis", 1)}, 13).is_ok());
  EXPECT_FALSE(run_op("Softmax", {tv<float>({1, 2}, {1, 2})}, {attr_int("axis", -3)}, 11).is_ok());
  EXPECT_FALSE(run_op("Softmax", {tv<int32_t>({1, 2}, {2})}, {}, 13).is_ok());
  auto r = run_op("Softmax", {tv<float>({}, {0, 3})}, {}, 13);  // empty input
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{0, 3}));
}

TEST(SoftmaxOps, NllLossReductionsWeightsIgnoreIndex) {
  // input [2,3] log-probs, targets {1, 2}
  auto x = tv<float>({-1, -2, -3, -4, -5, -6}, {2, 3});
  auto t = tv<int64_t>({1, 2}, {2});
  auto r = run_op("NegativeLogLikelihoodLoss", {x, t}, {attr_string("reduction", "none")}, 13);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{2, 6}));
  r = run_op("NegativeLogLikelihoodLoss", {x, t}, {}, 13);  // mean
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().shape(), Shape{});
  EXPECT_FLOAT_EQ(values<float>((*r)[0])[0], 4);
  auto w = tv<float>({1, 2, 0.5f}, {3});
  r = run_op("NegativeLogLikelihoodLoss", {x, t, w}, {}, 13);  // (2*2 + 6*0.5) / 2.5
  ASSERT_TRUE(r.is_ok());
  EXPECT_FLOAT_EQ(values<float>((*r)[0])[0], 7.0f / 2.5f);
  r = run_op("NegativeLogLikelihoodLoss", {x, tv<int32_t>({1, -1}, {2}), w},
             {attr_string("reduction", "sum"), attr_int("ignore_index", -1)}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_FLOAT_EQ(values<float>((*r)[0])[0], 4);
  // NCd: input [1,2,2], target [1,2]
  r = run_op("NegativeLogLikelihoodLoss", {tv<float>({-1, -2, -3, -4}, {1, 2, 2}), tv<int64_t>({1, 0}, {1, 2})},
             {attr_string("reduction", "none")}, 22);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{3, 2}));
}

TEST(SoftmaxOps, NllLossErrors) {
  auto x = tv<float>({-1, -2, -3, -4, -5, -6}, {2, 3});
  EXPECT_FALSE(run_op("NegativeLogLikelihoodLoss", {x, tv<int64_t>({1, 3}, {2})}, {}, 13).is_ok());
  EXPECT_FALSE(run_op("NegativeLogLikelihoodLoss", {x, tv<int64_t>({1, 2, 0}, {3})}, {}, 13).is_ok());
  EXPECT_FALSE(run_op("NegativeLogLikelihoodLoss", {x, tv<float>({1, 2}, {2})}, {}, 13).is_ok());
  EXPECT_FALSE(
      run_op("NegativeLogLikelihoodLoss", {x, tv<int64_t>({1, 2}, {2}), tv<float>({1, 2}, {2})}, {}, 13).is_ok());
  EXPECT_FALSE(run_op("NegativeLogLikelihoodLoss", {x, tv<int64_t>({1, 2}, {2})}, {attr_string("reduction", "avg")}, 13)
                   .is_ok());
  EXPECT_FALSE(run_op("NegativeLogLikelihoodLoss", {tv<float>({1}, {1}), tv<int64_t>({0}, {1})}, {}, 13).is_ok());
}

TEST(SoftmaxOps, SoftmaxCrossEntropyWithLogProb) {
  auto x = tv<float>({1, 2, 3, 0, 0, 0}, {2, 3});
  auto t = tv<int64_t>({2, 0}, {2});
  auto r = run_op("SoftmaxCrossEntropyLoss", {x, t}, {attr_string("reduction", "none")}, 13, 2);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  auto e = ref_softmax({1, 2, 3});
  auto loss = values<float>((*r)[0]);
  EXPECT_NEAR(loss[0], -std::log(e[2]), 1e-6);
  EXPECT_NEAR(loss[1], std::log(3.0), 1e-6);
  auto lp = values<float>((*r)[1]);
  ASSERT_EQ((*r)[1].tensor().shape(), (Shape{2, 3}));
  EXPECT_NEAR(lp[0], std::log(e[0]), 1e-6);
  r = run_op("SoftmaxCrossEntropyLoss", {x, t}, {attr_int("ignore_index", 0)}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_NEAR(values<float>((*r)[0])[0], -std::log(e[2]), 1e-6);  // mean over 1 kept element
}

}  // namespace
}  // namespace xonnx

// Every backend of Softmax (tests/unit/backend_test_util.h): the own kernel (each ISA table, 1
// and 2 threads) over odd sizes, inner axes, the opset-11 coercion and NaN/inf rows; XNNPACK's
// over the last axis (and the 2-D coercion of opset < 13), declining the other axes.
namespace xonnx {
namespace {

using namespace backendtest;

constexpr Tolerance kOwnTol{1e-5, 1e-6};
constexpr Tolerance kXnnpackTol{1e-4, 1e-5};

TEST(SoftmaxBackends, OwnKernelOverOddSizesAxesAndSpecials) {
  const Check own = with_xnnpack_tol(own_must(Runs::kMay, kOwnTol), kXnnpackTol);
  for (int64_t n : kSizes) {
    diff_all({"Softmax", "", 13}, {var(rand_tensor({3, n}, 1, -10, 10))}, {}, own, "last n" + std::to_string(n));
    diff_all({"Softmax", "", 13}, {var(rand_tensor({2, n, 5}, 2, -10, 10))}, {attr_int("axis", 1)}, own,
             "inner axis n" + std::to_string(n));
  }
  diff_all({"Softmax", "", 11}, {var(rand_tensor({2, 3, 7}, 3))}, {attr_int("axis", 1)}, own, "opset 11 coerced");
  diff_all({"Softmax", "", 13}, {var(rand_tensor({2, 3, 7}, 3))}, {attr_int("axis", -3)}, own, "negative axis");
  auto t = rand_tensor({4, 9}, 4);
  t.data<float>()[2] = kNaN;
  t.data<float>()[12] = kInf;
  t.data<float>()[20] = -kInf;
  for (int i = 27; i < 36; ++i) t.data<float>()[i] = -kInf;
  diff_all({"Softmax", "", 13}, {var(t)}, {}, own, "NaN/inf rows");
  diff_all({"Softmax", "", 13}, {var(rand_tensor({2, 3}, 5))}, {attr_int("axis", 2)}, neither(), "bad axis");
}

// Big enough that the own kernel splits the rows over the pool's threads.
TEST(SoftmaxBackends, LargeShapesSplitOverThreads) {
  const Check own = with_xnnpack_tol(own_must(Runs::kMay, kOwnTol), kXnnpackTol);
  diff_all({"Softmax", "", 13}, {var(rand_tensor({1000, 129}, 5, -5, 5))}, {}, own, "rows");
  diff_all({"Softmax", "", 13}, {var(rand_tensor({70, 129, 13}, 6, -5, 5))}, {attr_int("axis", 1)}, own, "inner");
}

TEST(SoftmaxBackends, XnnpackOverTheLastAxis) {
  auto xnn = [](Runs runs, Tolerance tol = kXnnpackTol) { return Check{Runs::kMay, runs, tol}; };
  for (int64_t c : {1, 3, 13, 127, 128}) {
    diff_all({"Softmax", "", 13}, {var(rand_tensor({2, 3, c}, 8, -5.0f, 5.0f))}, {}, xnn(Runs::kMust, {1e-5, 1e-7}),
             "last axis c " + std::to_string(c));
  }
  diff_all({"Softmax", "", 13}, {var(rand_tensor({4, 13}, 8))}, {attr_int("axis", 1)}, xnn(Runs::kMust),
           "axis 1 of 2-D");
  diff_all({"Softmax", "", 13}, {var(rand_tensor({4, 13}, 8))}, {attr_int("axis", 0)}, xnn(Runs::kNot), "axis 0");
  diff_all({"Softmax", "", 11}, {var(rand_tensor({2, 3, 5}, 8))}, {}, xnn(Runs::kMust), "opset 11 coerced at axis 1");
  diff_all({"Softmax", "", 11}, {var(rand_tensor({2, 3, 5}, 8))}, {attr_int("axis", -1)}, xnn(Runs::kMust),
           "opset 11 axis -1");
  diff_all({"Softmax", "", 1}, {var(rand_tensor({2, 3, 5}, 8))}, {attr_int("axis", 0)}, xnn(Runs::kMust),
           "opset 1 axis 0");
  diff_all({"Softmax", "", 13}, {var(Tensor::from_vector<float>({1000.0f, 0.0f, -1000.0f}, {1, 3}))}, {},
           xnn(Runs::kMust), "large");
}

}  // namespace
}  // namespace xonnx
