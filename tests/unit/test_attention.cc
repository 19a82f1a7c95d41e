// Attention family: Attention (opset 23/24) and RotaryEmbedding (opset 23).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace {

using testing::attr_float;
using testing::attr_int;
using testing::doubles;
using testing::run_op;
using testing::tv;

TEST(AttentionOps, ZeroQueryAveragesValues) {
  // B=1, H=1, q=1, kv=3, d=2: all scores equal -> mean of V rows.
  auto r = run_op("Attention",
                  {tv<float>({0, 0}, {1, 1, 1, 2}), tv<float>({1, 2, 3, 4, 5, 6}, {1, 1, 3, 2}),
                   tv<float>({1, 10, 2, 20, 3, 30}, {1, 1, 3, 2})},
                  {}, 23);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{1, 1, 1, 2}));
  auto y = doubles((*r)[0]);
  EXPECT_NEAR(y[0], 2.0, 1e-6);
  EXPECT_NEAR(y[1], 20.0, 1e-6);
}

TEST(AttentionOps, SoftmaxWeightsWithScaleAndQkOutput) {
  // q=[1], k=[0],[1] (d=1), scale 2: scores [0, 2]
  auto r = run_op("Attention",
                  {tv<float>({1}, {1, 1, 1, 1}), tv<float>({0, 1}, {1, 1, 2, 1}), tv<float>({0, 1}, {1, 1, 2, 1})},
                  {attr_float("scale", 2.0f)}, 23, 4);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  const double p1 = std::exp(2.0) / (1 + std::exp(2.0));
  EXPECT_NEAR(doubles((*r)[0])[0], p1, 1e-6);
  auto qk = doubles((*r)[3]);
  EXPECT_NEAR(qk[0], 0.0, 1e-6);
  EXPECT_NEAR(qk[1], 2.0, 1e-6);
  // mode 3: softmax output
  r = run_op("Attention",
             {tv<float>({1}, {1, 1, 1, 1}), tv<float>({0, 1}, {1, 1, 2, 1}), tv<float>({0, 1}, {1, 1, 2, 1})},
             {attr_float("scale", 2.0f), attr_int("qk_matmul_output_mode", 3)}, 23, 4);
  ASSERT_TRUE(r.is_ok());
  EXPECT_NEAR(doubles((*r)[3])[1], p1, 1e-6);
  // softcap 1: score 2 -> tanh(2)
  r = run_op("Attention",
             {tv<float>({1}, {1, 1, 1, 1}), tv<float>({0, 1}, {1, 1, 2, 1}), tv<float>({0, 1}, {1, 1, 2, 1})},
             {attr_float("scale", 2.0f), attr_float("softcap", 1.0f), attr_int("qk_matmul_output_mode", 1)}, 23, 4);
  ASSERT_TRUE(r.is_ok());
  EXPECT_NEAR(doubles((*r)[3])[1], std::tanh(2.0), 1e-6);
}

TEST(AttentionOps, CausalMaskAndBoolMask) {
  // q=2, kv=2, Q=0: causal row 0 sees only V0, row 1 averages V0, V1.
  std::vector<float> zeros(4, 0.0f);
  auto r = run_op("Attention",
                  {tv<float>({0, 0}, {1, 1, 2, 1}), tv<float>({0, 0}, {1, 1, 2, 1}), tv<float>({2, 4}, {1, 1, 2, 1})},
                  {attr_int("is_causal", 1)}, 23);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  auto y = doubles((*r)[0]);
  EXPECT_NEAR(y[0], 2.0, 1e-6);
  EXPECT_NEAR(y[1], 3.0, 1e-6);
  // bool mask [q, kv] hiding key 0 for both rows
  r = run_op("Attention",
             {tv<float>({0, 0}, {1, 1, 2, 1}), tv<float>({0, 0}, {1, 1, 2, 1}), tv<float>({2, 4}, {1, 1, 2, 1}),
              tv<bool>({false, true, false, true}, {2, 2})},
             {}, 23);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  y = doubles((*r)[0]);
  EXPECT_NEAR(y[0], 4.0, 1e-6);
  EXPECT_NEAR(y[1], 4.0, 1e-6);
  // a shorter mask is padded with -inf: mask [q, 1] keeps only key 0
  r = run_op("Attention",
             {tv<float>({0, 0}, {1, 1, 2, 1}), tv<float>({0, 0}, {1, 1, 2, 1}), tv<float>({2, 4}, {1, 1, 2, 1}),
              tv<float>({0, 0}, {2, 1})},
             {}, 23);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_NEAR(doubles((*r)[0])[1], 2.0, 1e-6);
}

TEST(AttentionOps, GroupedQueryAnd3DLayout) {
  // 3-D: B=1, q_seq=1, q heads 2 (d=1), kv heads 1, kv_seq 1 -> both heads output V.
  auto r = run_op("Attention", {tv<float>({1, -1}, {1, 1, 2}), tv<float>({3}, {1, 1, 1}), tv<float>({7}, {1, 1, 1})},
                  {attr_int("q_num_heads", 2), attr_int("kv_num_heads", 1)}, 23);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{1, 1, 2}));
  auto y = doubles((*r)[0]);
  EXPECT_NEAR(y[0], 7.0, 1e-6);
  EXPECT_NEAR(y[1], 7.0, 1e-6);
  // 3-D without head counts is an error
  r = run_op("Attention", {tv<float>({1, -1}, {1, 1, 2}), tv<float>({3}, {1, 1, 1}), tv<float>({7}, {1, 1, 1})}, {},
             23);
  EXPECT_FALSE(r.is_ok());
}

TEST(AttentionOps, PastAndPresentConcatenate) {
  auto r = run_op("Attention",
                  {tv<float>({0}, {1, 1, 1, 1}), tv<float>({5}, {1, 1, 1, 1}), tv<float>({6}, {1, 1, 1, 1}), Value(),
                   tv<float>({1, 2}, {1, 1, 2, 1}), tv<float>({3, 0}, {1, 1, 2, 1})},
                  {}, 23, 3);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[1].tensor().shape(), (Shape{1, 1, 3, 1}));
  auto pk = doubles((*r)[1]);
  EXPECT_EQ(pk, (std::vector<double>{1, 2, 5}));
  auto pv = doubles((*r)[2]);
  EXPECT_EQ(pv, (std::vector<double>{3, 0, 6}));
  EXPECT_NEAR(doubles((*r)[0])[0], 3.0, 1e-6);
}

TEST(AttentionOps, NonpadKvSeqlenMasksTail) {
  auto r = run_op("Attention",
                  {tv<float>({0}, {1, 1, 1, 1}), tv<float>({0, 0, 0}, {1, 1, 3, 1}), tv<float>({1, 2, 9}, {1, 1, 3, 1}),
                   Value(), Value(), Value(), tv<int64_t>({2}, {1})},
                  {}, 24);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_NEAR(doubles((*r)[0])[0], 1.5, 1e-6);
}

TEST(AttentionOps, HalfPrecision) {
  auto h = [](float f) { return Float16{float_to_half(f)}; };
  auto r = run_op("Attention",
                  {tv<Float16>({h(0)}, {1, 1, 1, 1}), tv<Float16>({h(1), h(2)}, {1, 1, 2, 1}),
                   tv<Float16>({h(1), h(3)}, {1, 1, 2, 1})},
                  {}, 23);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().dtype(), DataType::kFloat16);
  EXPECT_NEAR(doubles((*r)[0])[0], 2.0, 1e-3);
}

TEST(AttentionOps, RejectsBadShapes) {
  // head size mismatch between Q and K
  auto r =
      run_op("Attention", {tv<float>({0, 0}, {1, 1, 1, 2}), tv<float>({0}, {1, 1, 1, 1}), tv<float>({0}, {1, 1, 1, 1})},
             {}, 23);
  EXPECT_FALSE(r.is_ok());
  // q heads not a multiple of kv heads
  r = run_op("Attention",
             {tv<float>(std::vector<float>(3, 0), {1, 3, 1, 1}), tv<float>({0, 0}, {1, 2, 1, 1}),
              tv<float>({0, 0}, {1, 2, 1, 1})},
             {}, 23);
  EXPECT_FALSE(r.is_ok());
  // mask that does not broadcast
  r = run_op("Attention",
             {tv<float>({0}, {1, 1, 1, 1}), tv<float>({0}, {1, 1, 1, 1}), tv<float>({0}, {1, 1, 1, 1}),
              tv<float>({0, 0, 0}, {3, 1})},
             {}, 23);
  EXPECT_FALSE(r.is_ok());
  // rank mismatch
  r = run_op("Attention", {tv<float>({0}, {1, 1, 1}), tv<float>({0}, {1, 1, 1, 1}), tv<float>({0}, {1, 1, 1, 1})}, {},
             23);
  EXPECT_FALSE(r.is_ok());
}

TEST(RotaryEmbeddingOps, RotatesHalvesAndInterleaved) {
  // 4-D [B=1, H=1, S=1, D=4], cos = 0, sin = 1: x1' = -x2, x2' = x1
  std::vector<float> x = {1, 2, 3, 4};
  auto r = run_op("RotaryEmbedding",
                  {tv<float>(x, {1, 1, 1, 4}), tv<float>({0, 0}, {1, 1, 2}), tv<float>({1, 1}, {1, 1, 2})}, {}, 23);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(doubles((*r)[0]), (std::vector<double>{-3, -4, 1, 2}));
  r = run_op("RotaryEmbedding",
             {tv<float>(x, {1, 1, 1, 4}), tv<float>({0, 0}, {1, 1, 2}), tv<float>({1, 1}, {1, 1, 2})},
             {attr_int("interleaved", 1)}, 23);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(doubles((*r)[0]), (std::vector<double>{-2, 1, -4, 3}));
  // partial rotation: rotary_embedding_dim 2 leaves the tail untouched
  r = run_op("RotaryEmbedding", {tv<float>(x, {1, 1, 1, 4}), tv<float>({0}, {1, 1, 1}), tv<float>({1}, {1, 1, 1})},
             {attr_int("rotary_embedding_dim", 2)}, 23);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(doubles((*r)[0]), (std::vector<double>{-2, 1, 3, 4}));
}

TEST(RotaryEmbeddingOps, PositionIdsAnd3DInput) {
  // cache rows: pos 0 identity, pos 1 rotate by 90 degrees
  auto r = run_op("RotaryEmbedding",
                  {tv<float>({1, 2, 1, 2}, {1, 2, 2}), tv<float>({1, 0}, {2, 1}), tv<float>({0, 1}, {2, 1}),
                   tv<int64_t>({0, 1}, {1, 2})},
                  {attr_int("num_heads", 1)}, 23);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(doubles((*r)[0]), (std::vector<double>{1, 2, -2, 1}));
  // position id out of range
  r = run_op("RotaryEmbedding",
             {tv<float>({1, 2, 1, 2}, {1, 2, 2}), tv<float>({1, 0}, {2, 1}), tv<float>({0, 1}, {2, 1}),
              tv<int64_t>({0, 5}, {1, 2})},
             {attr_int("num_heads", 1)}, 23);
  EXPECT_FALSE(r.is_ok());
  // 3-D without num_heads
  r = run_op("RotaryEmbedding",
             {tv<float>({1, 2, 1, 2}, {1, 2, 2}), tv<float>({1, 0}, {2, 1}), tv<float>({0, 1}, {2, 1}),
              tv<int64_t>({0, 1}, {1, 2})},
             {}, 23);
  EXPECT_FALSE(r.is_ok());
}

}  // namespace
}  // namespace xonnx
