// ai.onnx.preview.training optimizers: Adagrad, Adam, Momentum (standard and Nesterov),
// single and multiple tensors, float and double, and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace {

using testing::attr_float;
using testing::attr_string;
using testing::run_op;

const char* kTraining = "ai.onnx.preview.training";

Result<std::vector<Value>> train(const std::string& op, const std::vector<Value>& in,
                                 const std::vector<Attribute>& attrs, size_t outs) {
  return run_op(op, in, attrs, 17, outs, kTraining);
}

Tensor f1(std::vector<float> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::from_vector<float>(v, {n});
}

void expect_values(const Value& v, const std::vector<double>& want) {
  const Tensor& t = v.tensor();
  ASSERT_EQ(t.numel(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(t.get_as_double(static_cast<int64_t>(i)), want[i], 1e-6 + 1e-5 * std::fabs(want[i])) << i;
  }
}

TEST(TrainingOps, Adagrad) {
  const float norm = 0.001f, eps = 1e-5f, decay = 0.1f;
  const double r = 0.1, t = 0;
  std::vector<float> x = {1.0f}, g = {-1.0f}, h = {2.0f};
  auto res =
      train("Adagrad", {Tensor::scalar<float>(0.1f), Tensor::scalar<int64_t>(0), f1(x), f1(g), f1(h)},
            {attr_float("decay_factor", decay), attr_float("epsilon", eps), attr_float("norm_coefficient", norm)}, 2);
  ASSERT_TRUE(res.is_ok()) << res.status().to_string();
  const double lr = r / (1 + t * decay);
  const double gr = norm * x[0] + g[0];
  const double hn = h[0] + gr * gr;
  expect_values((*res)[0], {x[0] - lr * gr / (std::sqrt(hn) + eps)});
  expect_values((*res)[1], {hn});
}

TEST(TrainingOps, AdagradMultipleAndDefaults) {
  // Defaults: decay_factor 0, epsilon 1e-6, norm_coefficient 0. T = 3.
  std::vector<float> x1 = {1.0f}, x2 = {1.0f, 2.0f}, g1 = {-1.0f}, g2 = {1.0f, -3.0f}, h1 = {2.0f}, h2 = {4.0f, 1.0f};
  auto res = train(
      "Adagrad",
      {Tensor::scalar<float>(0.5f), Tensor::scalar<int64_t>(3), f1(x1), f1(x2), f1(g1), f1(g2), f1(h1), f1(h2)}, {}, 4);
  ASSERT_TRUE(res.is_ok()) << res.status().to_string();
  auto upd = [](double x, double g, double h) { return x - 0.5 * g / (std::sqrt(h + g * g) + 1e-6); };
  expect_values((*res)[0], {upd(1, -1, 2)});
  expect_values((*res)[1], {upd(1, 1, 4), upd(2, -3, 1)});
  expect_values((*res)[2], {3});
  expect_values((*res)[3], {5, 10});
}

TEST(TrainingOps, Adam) {
  const double alpha = 0.95f, beta = 0.1f, eps = 1e-7f, norm = 0.001f;
  std::vector<float> x = {1.2f, 2.8f}, g = {-0.94f, -2.5f}, v = {1.7f, 3.6f}, h = {0.1f, 0.1f};
  for (int64_t t : {0, 10}) {
    auto res = train("Adam", {Tensor::scalar<float>(0.1f), Tensor::scalar<int64_t>(t), f1(x), f1(g), f1(v), f1(h)},
                     {attr_float("alpha", 0.95f), attr_float("beta", 0.1f), attr_float("epsilon", 1e-7f),
                      attr_float("norm_coefficient", 0.001f)},
                     3);
    ASSERT_TRUE(res.is_ok()) << res.status().to_string();
    std::vector<double> xn, vn, hn;
    const double r = 0.1f;
    const double lr = t > 0 ? r * std::sqrt(1 - std::pow(beta, t)) / (1 - std::pow(alpha, t)) : r;
    for (size_t i = 0; i < x.size(); ++i) {
      const double gr = norm * x[i] + g[i];
      vn.push_back(alpha * v[i] + (1 - alpha) * gr);
      hn.push_back(beta * h[i] + (1 - beta) * gr * gr);
      xn.push_back(x[i] - lr * vn.back() / (std::sqrt(hn.back()) + eps));
    }
    expect_values((*res)[0], xn);
    expect_values((*res)[1], vn);
    expect_values((*res)[2], hn);
  }
}

TEST(TrainingOps, AdamNormPostAndDouble) {
  auto d1 = [](std::vector<double> v) {
    const int64_t n = static_cast<int64_t>(v.size());
    return Tensor::from_vector<double>(v, {n});
  };
  auto res = train(
      "Adam", {Tensor::scalar<double>(0.01), Tensor::scalar<int64_t>(0), d1({2.0}), d1({0.5}), d1({0.0}), d1({0.0})},
      {attr_float("norm_coefficient_post", 0.5f)}, 3);
  ASSERT_TRUE(res.is_ok()) << res.status().to_string();
  EXPECT_EQ((*res)[0].tensor().dtype(), DataType::kDouble);
  // Defaults alpha 0.9, beta 0.999, epsilon 1e-6.
  const double vn = 0.1 * 0.5, hn = (1 - 0.999f) * 0.25;
  expect_values((*res)[1], {vn});
  expect_values((*res)[2], {hn});
  expect_values((*res)[0], {0.5 * (2.0 - 0.01 * vn / (std::sqrt(hn) + 1e-6f))});
}

TEST(TrainingOps, MomentumStandardAndNesterov) {
  const double alpha = 0.95f, beta = 0.1f, norm = 0.001f, r = 0.01f;
  std::vector<float> x = {1.2f, 2.8f}, g = {-0.94f, -2.5f}, v = {1.7f, 3.6f};
  for (const char* mode : {"standard", "nesterov"}) {
    for (int64_t t : {0, 5}) {
      auto res = train("Momentum", {Tensor::scalar<float>(0.01f), Tensor::scalar<int64_t>(t), f1(x), f1(g), f1(v)},
                       {attr_float("alpha", 0.95f), attr_float("beta", 0.1f), attr_float("norm_coefficient", 0.001f),
                        attr_string("mode", mode)},
                       2);
      ASSERT_TRUE(res.is_ok()) << res.status().to_string();
      std::vector<double> xn, vn;
      const double b = t > 0 ? beta : 1.0;
      for (size_t i = 0; i < x.size(); ++i) {
        const double gr = norm * x[i] + g[i];
        vn.push_back(alpha * v[i] + b * gr);
        xn.push_back(std::string(mode) == "standard" ? x[i] - r * vn.back() : x[i] - r * (gr + alpha * vn.back()));
      }
      expect_values((*res)[0], xn);
      expect_values((*res)[1], vn);
    }
  }
}

TEST(TrainingOps, Errors) {
  const std::vector<Attribute> mom = {attr_float("alpha", 0.9f), attr_float("beta", 0.1f),
                                      attr_float("norm_coefficient", 0.0f), attr_string("mode", "standard")};
  Tensor r = Tensor::scalar<float>(0.1f), t = Tensor::scalar<int64_t>(1), x = f1({1, 2});
  // Momentum requires its attributes; mode must be known.
  EXPECT_FALSE(train("Momentum", {r, t, x, x, x}, {attr_float("alpha", 0.9f)}, 2).is_ok());
  std::vector<Attribute> bad_mode = mom;
  bad_mode[3] = attr_string("mode", "heavy");
  EXPECT_FALSE(train("Momentum", {r, t, x, x, x}, bad_mode, 2).is_ok());
  // Tensor count not a multiple of the group size.
  EXPECT_FALSE(train("Momentum", {r, t, x, x}, mom, 1).is_ok());
  EXPECT_FALSE(train("Adam", {r, t, x, x, x}, {}, 2).is_ok());
  // T must be int64; R must be a float scalar.
  EXPECT_FALSE(train("Adagrad", {r, Tensor::scalar<int32_t>(1), x, x, x}, {}, 2).is_ok());
  EXPECT_FALSE(train("Adagrad", {x, t, x, x, x}, {}, 2).is_ok());
  // Shapes of a group must agree.
  EXPECT_FALSE(train("Adagrad", {r, t, x, f1({1, 2, 3}), x}, {}, 2).is_ok());
  // Integer tensors are not optimizable.
  Tensor xi = Tensor::from_vector<int64_t>({1, 2}, {2});
  EXPECT_FALSE(train("Adagrad", {r, t, xi, xi, xi}, {}, 2).is_ok());
  // Too many outputs.
  EXPECT_FALSE(train("Adagrad", {r, t, x, x, x}, {}, 3).is_ok());
}

}  // namespace
}  // namespace xonnx
