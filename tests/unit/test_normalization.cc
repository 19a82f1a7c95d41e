// BatchNormalization, InstanceNormalization, LayerNormalization, GroupNormalization,
// RMSNormalization, LRN, LpNormalization, MeanVarianceNormalization, Dropout.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace {

using testing::attr_float;
using testing::attr_int;
using testing::attr_ints;
using testing::run_op;
using testing::values;

Tensor vec(const std::vector<float>& v, const Shape& shape) { return Tensor::from_vector<float>(v, shape); }

void expect_norm_near(const std::vector<float>& got, const std::vector<float>& want, float tol = 1e-4f) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i]))) << "at " << i;
}

TEST(NormalizationOp, BatchNormInference) {
  Tensor x = vec({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2});
  Tensor s = vec({1, 2}, {2}), b = vec({0, 1}, {2}), m = vec({1, 2}, {2}), v = vec({4, 0.25f}, {2});
  auto r = run_op("BatchNormalization", {x, s, b, m, v}, {attr_float("epsilon", 0)}, 15);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  // channel 0: (x-1)/2; channel 1: 2*(x-2)/0.5 + 1
  expect_norm_near(values<float>((*r)[0]), {0, 0.5f, 5, 9, 2, 2.5f, 21, 25});
  auto old = run_op("BatchNormalization", {x, s, b, m, v}, {attr_float("epsilon", 0), attr_int("spatial", 1)}, 7);
  ASSERT_TRUE(old.is_ok()) << old.status().to_string();
  expect_norm_near(values<float>((*old)[0]), values<float>((*r)[0]));
}

TEST(NormalizationOp, BatchNormTrainingOutputsRunningStats) {
  Tensor x = vec({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2});
  Tensor s = vec({1, 1}, {2}), b = vec({0, 0}, {2}), m = vec({0, 10}, {2}), v = vec({1, 1}, {2});
  auto r = run_op("BatchNormalization", {x, s, b, m, v},
                  {attr_int("training_mode", 1), attr_float("momentum", 0.5f), attr_float("epsilon", 0)}, 15, 3);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  // channel 0 values {1,2,5,6}: mean 3.5, var 4.25; channel 1 {3,4,7,8}: mean 5.5, var 4.25
  expect_norm_near(values<float>((*r)[1]), {0.5f * 0 + 0.5f * 3.5f, 0.5f * 10 + 0.5f * 5.5f});
  expect_norm_near(values<float>((*r)[2]), {0.5f + 0.5f * 4.25f, 0.5f + 0.5f * 4.25f});
  EXPECT_NEAR(values<float>((*r)[0])[0], (1 - 3.5f) / std::sqrt(4.25f), 1e-5);
}

TEST(NormalizationOp, BatchNormRejectsBadParams) {
  Tensor x = vec({1, 2, 3, 4}, {1, 2, 2});
  Tensor p2 = vec({1, 1}, {2}), p3 = vec({1, 1, 1}, {3});
  EXPECT_FALSE(run_op("BatchNormalization", {x, p3, p2, p2, p2}, {}, 15).is_ok());
  EXPECT_FALSE(run_op("BatchNormalization", {vec({1}, {1}), p2, p2, p2, p2}, {}, 15).is_ok());
}

TEST(NormalizationOp, InstanceNorm) {
  Tensor x = vec({1, 3, 10, 10}, {1, 2, 2});
  auto r = run_op("InstanceNormalization", {x, vec({1, 2}, {2}), vec({0, 1}, {2})}, {attr_float("epsilon", 1e-12f)}, 6);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  expect_norm_near(values<float>((*r)[0]), {-1, 1, 1, 1});  // channel 1 is constant: 0 * 2 + 1
  EXPECT_FALSE(run_op("InstanceNormalization", {x, vec({1}, {1}), vec({0}, {1})}).is_ok());
}

TEST(NormalizationOp, LayerNormWithStats) {
  Tensor x = vec({1, 2, 3, 4, 2, 2, 2, 2}, {2, 4});
  auto r = run_op("LayerNormalization", {x, vec({1, 1, 1, 2}, {4}), vec({0, 0, 0, 1}, {4})},
                  {attr_float("epsilon", 1e-12f)}, 17, 3);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  const float sd = std::sqrt(1.25f);
  expect_norm_near(values<float>((*r)[0]), {-1.5f / sd, -0.5f / sd, 0.5f / sd, 2 * 1.5f / sd + 1, 0, 0, 0, 1});
  EXPECT_EQ((*r)[1].tensor().shape(), (Shape{2, 1}));
  expect_norm_near(values<float>((*r)[1]), {2.5f, 2});
  EXPECT_NEAR(values<float>((*r)[2])[0], 1 / sd, 1e-5);
  // axis 0 normalizes everything; scale may be a full-rank broadcast
  auto a0 = run_op("LayerNormalization", {x, vec({1}, {1})}, {attr_int("axis", 0), attr_float("epsilon", 0)}, 17);
  ASSERT_TRUE(a0.is_ok()) << a0.status().to_string();
  EXPECT_FALSE(run_op("LayerNormalization", {x, vec({1, 1, 1}, {3})}, {}, 17).is_ok());
  EXPECT_FALSE(run_op("LayerNormalization", {x, vec({1}, {1})}, {attr_int("axis", 2)}, 17).is_ok());
}

TEST(NormalizationOp, RmsNorm) {
  auto r = run_op("RMSNormalization", {vec({3, 4, 0, 0}, {2, 2}), vec({1, 2}, {2})}, {attr_float("epsilon", 0)}, 23);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  const float rms = std::sqrt(12.5f);
  std::vector<float> y = values<float>((*r)[0]);
  EXPECT_NEAR(y[0], 3 / rms, 1e-5);
  EXPECT_NEAR(y[1], 8 / rms, 1e-5);
  EXPECT_TRUE(std::isnan(y[2]));  // 0 / sqrt(0 + 0)
}

TEST(NormalizationOp, GroupNormPerChannelAndPerGroup) {
  Tensor x = vec({1, 3, 5, 7, 0, 0, 2, 2}, {1, 4, 2});
  // groups {c0,c1} = {1,3,5,7} mean 4 var 5; {c2,c3} = {0,0,2,2} mean 1 var 1
  auto r21 = run_op("GroupNormalization", {x, vec({1, 1, 2, 2}, {4}), vec({0, 0, 0, 1}, {4})},
                    {attr_int("num_groups", 2), attr_float("epsilon", 0)}, 21);
  ASSERT_TRUE(r21.is_ok()) << r21.status().to_string();
  const float s5 = std::sqrt(5.0f);
  expect_norm_near(values<float>((*r21)[0]), {-3 / s5, -1 / s5, 1 / s5, 3 / s5, -2, -2, 3, 3});
  auto r18 = run_op("GroupNormalization", {x, vec({1, 2}, {2}), vec({0, 1}, {2})},
                    {attr_int("num_groups", 2), attr_float("epsilon", 0)}, 18);
  ASSERT_TRUE(r18.is_ok()) << r18.status().to_string();
  expect_norm_near(values<float>((*r18)[0]), {-3 / s5, -1 / s5, 1 / s5, 3 / s5, -1, -1, 3, 3});
  EXPECT_FALSE(
      run_op("GroupNormalization", {x, vec({1, 2}, {2}), vec({0, 1}, {2})}, {attr_int("num_groups", 3)}, 21).is_ok());
  EXPECT_FALSE(
      run_op("GroupNormalization", {x, vec({1, 2}, {2}), vec({0, 1}, {2})}, {attr_int("num_groups", 2)}, 21).is_ok());
}

TEST(NormalizationOp, Lrn) {
  Tensor x = vec({1, 2, 3}, {1, 3, 1});
  auto r = run_op("LRN", {x},
                  {attr_int("size", 3), attr_float("alpha", 3), attr_float("beta", 1), attr_float("bias", 1)}, 13);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  // c0 window {0,1}: 1 / (1 + 1*(1+4)); c1 {0,1,2}: 2/(1+14); c2 {1,2}: 3/(1+13)
  expect_norm_near(values<float>((*r)[0]), {1 / 6.0f, 2 / 15.0f, 3 / 14.0f});
  EXPECT_FALSE(run_op("LRN", {x}, {}, 13).is_ok());  // size is required
}

TEST(NormalizationOp, LpNormalization) {
  auto r = run_op("LpNormalization", {vec({3, 4, 0, 0}, {2, 2})}, {}, 22);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  expect_norm_near(values<float>((*r)[0]), {0.6f, 0.8f, 0, 0});
  auto p1 = run_op("LpNormalization", {vec({1, -3, 2, 2}, {2, 2})}, {attr_int("axis", 0), attr_int("p", 1)}, 22);
  ASSERT_TRUE(p1.is_ok());
  expect_norm_near(values<float>((*p1)[0]), {1 / 3.0f, -3 / 5.0f, 2 / 3.0f, 2 / 5.0f});
  EXPECT_FALSE(run_op("LpNormalization", {vec({1}, {1})}, {attr_int("p", 3)}, 22).is_ok());
  EXPECT_FALSE(run_op("LpNormalization", {vec({1}, {1})}, {attr_int("axis", 1)}, 22).is_ok());
}

TEST(NormalizationOp, MeanVarianceNormalization) {
  auto r = run_op("MeanVarianceNormalization", {vec({1, 3, 10, 30}, {1, 2, 2, 1})}, {}, 13);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  expect_norm_near(values<float>((*r)[0]), {-1, 1, -1, 1});
  auto all = run_op("MeanVarianceNormalization", {vec({1, 3}, {2})}, {attr_ints("axes", {0})}, 13);
  ASSERT_TRUE(all.is_ok());
  expect_norm_near(values<float>((*all)[0]), {-1, 1});
  EXPECT_FALSE(run_op("MeanVarianceNormalization", {vec({1, 3}, {2})}, {}, 13).is_ok());  // default axes need rank 4
}

TEST(NormalizationOp, DropoutInferenceIsIdentity) {
  Tensor x = vec({1, 2, 3}, {3});
  auto r = run_op("Dropout", {x, vec({0.5f}, {})}, {}, 13, 2);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  expect_norm_near(values<float>((*r)[0]), {1, 2, 3});
  const Tensor& m = (*r)[1].tensor();
  ASSERT_EQ(m.dtype(), DataType::kBool);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(m.data<bool>()[i]);
  auto old = run_op("Dropout", {x}, {attr_float("ratio", 0.3f)}, 7, 2);
  ASSERT_TRUE(old.is_ok());
  EXPECT_EQ((*old)[1].tensor().dtype(), DataType::kFloat);  // mask is T before opset 10
}

TEST(NormalizationOp, DropoutTrainingIsSeededAndScaled) {
  std::vector<float> xv(200, 2.0f);
  Tensor x = vec(xv, {200});
  Tensor ratio = vec({0.75f}, {});
  Tensor train = Tensor::from_vector<bool>({true}, {});
  auto a = run_op("Dropout", {x, ratio, train}, {attr_int("seed", 0)}, 22, 2);
  auto b = run_op("Dropout", {x, ratio, train}, {attr_int("seed", 0)}, 22, 2);
  ASSERT_TRUE(a.is_ok()) << a.status().to_string();
  ASSERT_TRUE(b.is_ok());
  const std::vector<float> ya = values<float>((*a)[0]);
  EXPECT_EQ(ya, values<float>((*b)[0]));
  int kept = 0;
  for (size_t i = 0; i < ya.size(); ++i) {
    const bool keep = (*a)[1].tensor().data<bool>()[i];
    EXPECT_EQ(ya[i], keep ? 8.0f : 0.0f);
    kept += keep;
  }
  EXPECT_GT(kept, 20);
  EXPECT_LT(kept, 80);
  // numpy: RandomState(0).uniform(size=3) = 0.5488135, 0.71518937, 0.60276338 -> all < 0.75 dropped
  EXPECT_EQ(ya[0], 0.0f);
  EXPECT_FALSE(run_op("Dropout", {x, vec({1.5f}, {}), train}, {}, 22).is_ok());
  EXPECT_FALSE(run_op("Dropout", {x, ratio, vec({1}, {})}, {}, 22).is_ok());  // training_mode must be bool
}

}  // namespace
}  // namespace xonnx
