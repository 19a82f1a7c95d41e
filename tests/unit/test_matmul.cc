// Matmul family: MatMul, Gemm, Einsum, Det.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace {

using testing::attr_float;
using testing::attr_int;
using testing::attr_string;
using testing::run_op;
using testing::tv;
using testing::values;

std::vector<float> iota_f(int n, float start = 0) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = start + static_cast<float>(i);
  return v;
}
// Naive reference for [M,K] x [K,N].
std::vector<float> naive_mm(const std::vector<float>& a, const std::vector<float>& b, int M, int K, int N) {
  std::vector<float> c(M * N, 0);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double s = 0;
      for (int k = 0; k < K; ++k) s += a[i * K + k] * b[k * N + j];
      c[i * N + j] = static_cast<float>(s);
    }
  return c;
}

TEST(MatMulOp, TwoD) {
  auto r = run_op("MatMul", {tv<float>({1, 2, 3, 4, 5, 6}, {2, 3}), tv<float>({1, 0, 0, 1, 1, 1}, {3, 2})}, {}, 13);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{2, 2}));
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{4, 5, 10, 11}));
}

TEST(MatMulOp, LargeMatchesNaive) {
  const int M = 33, K = 300, N = 530;  // crosses the k and j block sizes
  std::vector<float> a(M * K), b(K * N);
  for (int i = 0; i < M * K; ++i) a[i] = static_cast<float>((i * 7) % 13) - 6;
  for (int i = 0; i < K * N; ++i) b[i] = static_cast<float>((i * 5) % 11) - 5;
  auto r = run_op("MatMul", {tv<float>(a, {M, K}), tv<float>(b, {K, N})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[0]), naive_mm(a, b, M, K, N));
}

TEST(MatMulOp, VectorsAndBroadcast) {
  auto r = run_op("MatMul", {tv<float>({1, 2, 3}, {3}), tv<float>({4, 5, 6}, {3})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{}));
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{32}));
  // [3] x [2,3,2] -> [2,2]
  r = run_op("MatMul", {tv<float>({1, 1, 1}, {3}), tv<float>(iota_f(12), {2, 3, 2})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{2, 2}));
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{6, 9, 24, 27}));
  // [2,1,2,3] x [3] -> [2,1,2]
  r = run_op("MatMul", {tv<float>(iota_f(12), {2, 1, 2, 3}), tv<float>({1, 0, 1}, {3})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{2, 1, 2}));
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{2, 8, 14, 20}));
  // [2,1,2,2] x [3,2,2] -> [2,3,2,2]; check one block: A[1] x B[2]
  std::vector<float> a = iota_f(8), b = iota_f(12);
  r = run_op("MatMul", {tv<float>(a, {2, 1, 2, 2}), tv<float>(b, {3, 2, 2})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{2, 3, 2, 2}));
  std::vector<float> got = values<float>((*r)[0]);
  std::vector<float> blk(got.begin() + 20, got.begin() + 24);
  EXPECT_EQ(blk, naive_mm({4, 5, 6, 7}, {8, 9, 10, 11}, 2, 2, 2));
}

TEST(MatMulOp, TypesAndErrors) {
  auto r = run_op("MatMul", {tv<int32_t>({1, 2, 3, 4}, {2, 2}), tv<int32_t>({5, 6, 7, 8}, {2, 2})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<int32_t>((*r)[0]), (std::vector<int32_t>{19, 22, 43, 50}));
  r = run_op("MatMul", {tv<uint64_t>({2}, {1, 1}), tv<uint64_t>({3, 4}, {1, 2})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<uint64_t>((*r)[0]), (std::vector<uint64_t>{6, 8}));
  std::vector<Float16> h;
  for (float f : {1.0f, 2.0f, 3.0f, 4.0f}) h.push_back(Float16{float_to_half(f)});
  r = run_op("MatMul", {tv<Float16>(h, {2, 2}), tv<Float16>(h, {2, 2})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(half_to_float((*r)[0].tensor().data<Float16>()[3].bits), 22.0f);
  r = run_op("MatMul", {tv<double>({1, 2}, {1, 2}), tv<double>({3, 4}, {2, 1})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<double>((*r)[0]), (std::vector<double>{11}));
  EXPECT_FALSE(run_op("MatMul", {tv<float>(iota_f(6), {2, 3}), tv<float>(iota_f(6), {2, 3})}, {}, 13).is_ok());
  EXPECT_FALSE(run_op("MatMul", {tv<float>(iota_f(12), {2, 2, 3}), tv<float>(iota_f(18), {3, 3, 2})}, {}, 13).is_ok());
  EXPECT_FALSE(run_op("MatMul", {tv<float>({1}, {}), tv<float>({1}, {1})}, {}, 13).is_ok());
  EXPECT_FALSE(run_op("MatMul", {tv<float>({1}, {1}), tv<double>({1}, {1})}, {}, 13).is_ok());
}

TEST(GemmOp, AttributesAndBias) {
  const std::vector<float> a = iota_f(6, 1), b = iota_f(12, 1);  // A [2,3], B [3,4]
  const std::vector<float> ab = naive_mm(a, b, 2, 3, 4);
  auto r = run_op("Gemm", {tv<float>(a, {2, 3}), tv<float>(b, {3, 4}), tv<float>({1, 2, 3, 4}, {4})},
                  {attr_float("alpha", 0.5f), attr_float("beta", 2.0f)}, 13);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  std::vector<float> want(8);
  for (int i = 0; i < 8; ++i) want[i] = 0.5f * ab[i] + 2.0f * (i % 4 + 1);
  EXPECT_EQ(values<float>((*r)[0]), want);
  // transA / transB with a [2,1] bias and no-bias form
  std::vector<float> at = {1, 4, 2, 5, 3, 6};  // A^T [3,2]
  std::vector<float> bt(12);
  for (int k = 0; k < 3; ++k)
    for (int j = 0; j < 4; ++j) bt[j * 3 + k] = b[k * 4 + j];
  r = run_op("Gemm", {tv<float>(at, {3, 2}), tv<float>(bt, {4, 3}), tv<float>({10, 20}, {2, 1})},
             {attr_int("transA", 1), attr_int("transB", 1)}, 13);
  ASSERT_TRUE(r.is_ok());
  for (int i = 0; i < 8; ++i) want[i] = ab[i] + (i < 4 ? 10 : 20);
  EXPECT_EQ(values<float>((*r)[0]), want);
  r = run_op("Gemm", {tv<float>(a, {2, 3}), tv<float>(b, {3, 4})}, {}, 11);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[0]), ab);
  r = run_op("Gemm", {tv<float>(a, {2, 3}), tv<float>(b, {3, 4}), tv<float>({1}, {})}, {}, 7);
  ASSERT_TRUE(r.is_ok());
  for (int i = 0; i < 8; ++i) want[i] = ab[i] + 1;
  EXPECT_EQ(values<float>((*r)[0]), want);
}

TEST(GemmOp, LargeTransBAndInts) {
  const int M = 16, K = 70, N = 9;
  std::vector<float> a(M * K), b(K * N), bt(N * K);
  for (int i = 0; i < M * K; ++i) a[i] = static_cast<float>(i % 7) - 3;
  for (int i = 0; i < K * N; ++i) b[i] = static_cast<float>(i % 5) - 2;
  for (int k = 0; k < K; ++k)
    for (int j = 0; j < N; ++j) bt[j * K + k] = b[k * N + j];
  auto r = run_op("Gemm", {tv<float>(a, {M, K}), tv<float>(bt, {N, K})}, {attr_int("transB", 1)}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[0]), naive_mm(a, b, M, K, N));
  r = run_op("Gemm", {tv<int64_t>({1, 2}, {1, 2}), tv<int64_t>({3, 4}, {2, 1}), tv<int64_t>({5}, {1})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<int64_t>((*r)[0]), (std::vector<int64_t>{16}));
}

TEST(GemmOp, Errors) {
  const Value a = tv<float>(iota_f(6), {2, 3});
  EXPECT_FALSE(run_op("Gemm", {a, a}, {}, 13).is_ok());  // K mismatch
  EXPECT_FALSE(run_op("Gemm", {tv<float>(iota_f(6), {6}), a}, {}, 13).is_ok());
  EXPECT_FALSE(run_op("Gemm", {a, tv<float>(iota_f(6), {3, 2}), tv<float>({1, 2, 3}, {3})}, {}, 13).is_ok());
  EXPECT_TRUE(run_op("Gemm", {a, a}, {attr_int("transB", 1)}, 13).is_ok());
}

TEST(EinsumOp, CommonEquations) {
  const Value m = tv<double>({1, 2, 3, 4, 5, 6}, {2, 3});
  auto r = run_op("Einsum", {m}, {attr_string("equation", "ij->ji")}, 12);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{3, 2}));
  EXPECT_EQ(values<double>((*r)[0]), (std::vector<double>{1, 4, 2, 5, 3, 6}));
  r = run_op("Einsum", {m}, {attr_string("equation", "ij->i")}, 12);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<double>((*r)[0]), (std::vector<double>{6, 15}));
  r = run_op("Einsum", {m}, {attr_string("equation", "ij")}, 12);  // implicit: identity
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<double>((*r)[0]), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  r = run_op("Einsum", {m}, {attr_string("equation", "ji")}, 12);  // implicit: sorted -> transpose
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{3, 2}));
  r = run_op("Einsum", {m, tv<double>({1, 0, 1}, {3})}, {attr_string("equation", "ij,j")}, 12);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<double>((*r)[0]), (std::vector<double>{4, 10}));
  r = run_op("Einsum", {tv<double>({1, 2, 3}, {3}), tv<double>({4, 5, 6}, {3})}, {attr_string("equation", "i,i")}, 12);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{}));
  EXPECT_EQ(values<double>((*r)[0]), (std::vector<double>{32}));
  r = run_op("Einsum", {tv<double>({1, 2}, {2}), tv<double>({3, 4}, {2})}, {attr_string("equation", "i,j->ij")}, 12);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<double>((*r)[0]), (std::vector<double>{3, 4, 6, 8}));
}

TEST(EinsumOp, DiagonalEllipsisAndThreeOperands) {
  const Value sq = tv<float>(iota_f(9), {3, 3});
  auto r = run_op("Einsum", {sq}, {attr_string("equation", "ii->i")}, 12);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{0, 4, 8}));
  r = run_op("Einsum", {sq}, {attr_string("equation", "ii")}, 12);  // trace
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{12}));
  r = run_op("Einsum", {tv<float>(iota_f(8), {2, 2, 2})}, {attr_string("equation", "...ii ->...i")}, 12);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{2, 2}));
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{0, 3, 4, 7}));
  // batched matmul with broadcast ellipsis: [2,2,3] x [3,1] (no batch) via "...ij,jk->...ik"
  r = run_op("Einsum", {tv<float>(iota_f(12), {2, 2, 3}), tv<float>({1, 1, 1}, {3, 1})},
             {attr_string("equation", "...ij,jk->...ik")}, 12);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{2, 2, 1}));
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{3, 12, 21, 30}));
  // three operands: a_i b_ij c_j
  r = run_op("Einsum", {tv<float>({1, 2}, {2}), tv<float>({1, 2, 3, 4}, {2, 2}), tv<float>({1, 1}, {2})},
             {attr_string("equation", "i,ij,j->")}, 12);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{17}));
  r = run_op("Einsum", {tv<int32_t>({1, 2, 3, 4}, {2, 2}), tv<int32_t>({1, 2, 3, 4}, {2, 2})},
             {attr_string("equation", "bij,bjk->bik")}, 12);
  EXPECT_FALSE(r.is_ok());  // rank mismatch with the term
}

TEST(EinsumOp, TwoOperandContractionsMatchLoops) {
  // bhqd,bhkd->bhqk (attention scores) against explicit loops
  const int B = 2, H = 3, Q = 4, Kk = 5, D = 6;
  std::vector<float> q(B * H * Q * D), k(B * H * Kk * D);
  for (size_t i = 0; i < q.size(); ++i) q[i] = static_cast<float>(i % 7) - 3;
  for (size_t i = 0; i < k.size(); ++i) k[i] = static_cast<float>(i % 5) - 2;
  auto r = run_op("Einsum", {tv<float>(q, {B, H, Q, D}), tv<float>(k, {B, H, Kk, D})},
                  {attr_string("equation", "bhqd,bhkd->bhqk")}, 12);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{B, H, Q, Kk}));
  std::vector<float> want(B * H * Q * Kk, 0);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      for (int i = 0; i < Q; ++i)
        for (int j = 0; j < Kk; ++j)
          for (int d = 0; d < D; ++d)
            want[((b * H + h) * Q + i) * Kk + j] +=
                q[((b * H + h) * Q + i) * D + d] * k[((b * H + h) * Kk + j) * D + d];
  EXPECT_EQ(values<float>((*r)[0]), want);
  // output permutation: ij,jk->ki
  const std::vector<float> a = iota_f(6, 1), bm = iota_f(12, 1);
  r = run_op("Einsum", {tv<float>(a, {2, 3}), tv<float>(bm, {3, 4})}, {attr_string("equation", "ij,jk->ki")}, 12);
  ASSERT_TRUE(r.is_ok());
  const std::vector<float> ab = naive_mm(a, bm, 2, 3, 4);
  std::vector<float> abt(8);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j) abt[j * 2 + i] = ab[i * 4 + j];
  EXPECT_EQ(values<float>((*r)[0]), abt);
  // elementwise product and int64
  r = run_op("Einsum", {tv<int64_t>({1, 2, 3, 4}, {2, 2}), tv<int64_t>({5, 6, 7, 8}, {2, 2})},
             {attr_string("equation", "ij,ij->ij")}, 12);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<int64_t>((*r)[0]), (std::vector<int64_t>{5, 12, 21, 32}));
  // one-sided summed label falls back to the generic path: sum_j a_ij * b_k
  r = run_op("Einsum", {tv<float>(a, {2, 3}), tv<float>({1, 2}, {2})}, {attr_string("equation", "ij,k->ik")}, 12);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{6, 12, 15, 30}));
}

TEST(EinsumOp, Errors) {
  const Value m = tv<float>(iota_f(6), {2, 3});
  EXPECT_FALSE(run_op("Einsum", {m, m}, {attr_string("equation", "ij,ij->k")}, 12).is_ok());
  EXPECT_FALSE(run_op("Einsum", {m, m}, {attr_string("equation", "ij,jk")}, 12).is_ok());
  EXPECT_FALSE(run_op("Einsum", {m}, {attr_string("equation", "ij,jk")}, 12).is_ok());
  EXPECT_FALSE(run_op("Einsum", {m}, {attr_string("equation", "i1")}, 12).is_ok());
  EXPECT_FALSE(run_op("Einsum", {m}, {attr_string("equation", "..i.j")}, 12).is_ok());
}

TEST(DetOp, TwoDAndBatched) {
  auto r = run_op("Det", {tv<float>({1, 2, 3, 4}, {2, 2})}, {}, 11);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{}));
  EXPECT_NEAR(values<float>((*r)[0])[0], -2.0f, 1e-5);
  r = run_op("Det", {tv<double>({2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 1, 0, 1, 0, 0, 0, 0, 1}, {2, 3, 3})}, {}, 22);
  ASSERT_TRUE(r.is_ok());
  EXPECT_NEAR(values<double>((*r)[0])[0], 24.0, 1e-12);
  EXPECT_NEAR(values<double>((*r)[0])[1], -1.0, 1e-12);
  r = run_op("Det", {tv<float>({1, 2, 2, 4}, {2, 2})}, {}, 22);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[0])[0], 0.0f);
  EXPECT_FALSE(run_op("Det", {tv<float>(iota_f(6), {2, 3})}, {}, 22).is_ok());
  EXPECT_FALSE(run_op("Det", {tv<float>({1, 2}, {2})}, {}, 22).is_ok());
  EXPECT_FALSE(run_op("Det", {tv<int32_t>({1, 2, 3, 4}, {2, 2})}, {}, 22).is_ok());
}

}  // namespace
}  // namespace xonnx
