// com.microsoft contrib ops: MatMulNBits against a float MatMul on weights dequantized here
// independently (tail block, default/packed/float zero points, bias), FusedMatMul, and the GELU
// variants.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace {

using testing::attr_int;
using testing::run_op;

struct Quantized {
  std::vector<uint8_t> b;          // [N, blocks, blob]
  std::vector<float> scales;       // [N, blocks]
  std::vector<uint8_t> zp_packed;  // [N, ceil(blocks*bits/8)]
  std::vector<float> dequant;      // [N, K]
};

// 4-bit block quantization of a random [N, K] matrix with random zero points.
Quantized quantize4(int64_t n, int64_t k, int64_t block, std::mt19937& rng) {
  const int64_t blocks = (k + block - 1) / block, blob = block / 2, zp_row = (blocks * 4 + 7) / 8;
  Quantized q;
  q.b.assign(n * blocks * blob, 0);
  q.scales.resize(n * blocks);
  q.zp_packed.assign(n * zp_row, 0);
  q.dequant.assign(n * k, 0.0f);
  std::uniform_int_distribution<int> code(0, 15);
  std::uniform_real_distribution<float> scale(0.01f, 0.1f);
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t bl = 0; bl < blocks; ++bl) {
      const float s = scale(rng);
      const int z = code(rng);
      q.scales[r * blocks + bl] = s;
      q.zp_packed[r * zp_row + bl / 2] |= static_cast<uint8_t>(z << ((bl % 2) * 4));
      for (int64_t i = 0; i < block; ++i) {
        const int c = code(rng);
        q.b[(r * blocks + bl) * blob + i / 2] |= static_cast<uint8_t>(c << ((i % 2) * 4));
        if (bl * block + i < k) q.dequant[r * k + bl * block + i] = (c - z) * s;
      }
    }
  }
  return q;
}

TEST(ContribOps, MatMulNBitsMatchesDequantizedMatMul) {
  std::mt19937 rng(7);
  const int64_t m = 3, k = 40, n = 5, block = 16, blocks = 3;
  Quantized q = quantize4(n, k, block, rng);
  std::vector<float> a(m * k), bias(n);
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  for (float& v : a) v = uni(rng);
  for (float& v : bias) v = uni(rng);
  std::vector<Value> inputs = {Value(Tensor::from_vector<float>(a, {1, m, k})),
                               Value(Tensor::from_vector<uint8_t>(q.b, {n, blocks, block / 2})),
                               Value(Tensor::from_vector<float>(q.scales, {n * blocks})),
                               Value(Tensor::from_vector<uint8_t>(q.zp_packed, {n * ((blocks * 4 + 7) / 8)})),
                               Value(),
                               Value(Tensor::from_vector<float>(bias, {n}))};
  auto out = run_op("MatMulNBits", inputs,
                    {attr_int("K", k), attr_int("N", n), attr_int("block_size", block), attr_int("bits", 4)}, 17, 1,
                    "com.microsoft");
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  const Tensor& y = (*out)[0].tensor();
  ASSERT_EQ(y.shape(), (Shape{1, m, n}));
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t c = 0; c < n; ++c) {
      float want = bias[c];
      for (int64_t i = 0; i < k; ++i) want += a[r * k + i] * q.dequant[c * k + i];
      EXPECT_NEAR(y.data<float>()[r * n + c], want, 1e-4f) << r << "," << c;
    }
  }
}

TEST(ContribOps, MatMulNBitsDefaultZeroPointAndErrors) {
  const int64_t k = 16, n = 1;
  std::vector<uint8_t> b(8, 0x99);  // every code 9 -> (9 - 8) * scale
  auto out =
      run_op("MatMulNBits",
             {Value(Tensor::from_vector<float>(std::vector<float>(k, 1.0f), {1, k})),
              Value(Tensor::from_vector<uint8_t>(b, {n, 1, 8})), Value(Tensor::from_vector<float>({0.5f}, {n, 1}))},
             {attr_int("K", k), attr_int("N", n), attr_int("block_size", 16)}, 17, 1, "com.microsoft");
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_FLOAT_EQ((*out)[0].tensor().data<float>()[0], 16 * 0.5f);

  auto bad_k =
      run_op("MatMulNBits",
             {Value(Tensor::from_vector<float>(std::vector<float>(8, 1.0f), {1, 8})),
              Value(Tensor::from_vector<uint8_t>(b, {n, 1, 8})), Value(Tensor::from_vector<float>({0.5f}, {n, 1}))},
             {attr_int("K", k), attr_int("N", n), attr_int("block_size", 16)}, 17, 1, "com.microsoft");
  ASSERT_FALSE(bad_k.is_ok());
  EXPECT_NE(bad_k.status().message().find("K=16"), std::string::npos) << bad_k.status().to_string();

  auto bad_block =
      run_op("MatMulNBits",
             {Value(Tensor::scalar<float>(1)), Value(Tensor::scalar<uint8_t>(1)), Value(Tensor::scalar<float>(1))},
             {attr_int("K", k), attr_int("N", n), attr_int("block_size", 24)}, 17, 1, "com.microsoft");
  ASSERT_FALSE(bad_block.is_ok());
  EXPECT_NE(bad_block.status().message().find("power of two"), std::string::npos);
}

// FusedMatMul: alpha * op(A) x op(B), op swapping the last two dims, against loops here; the
// batch dims broadcast; transBatchA is refused by name.
TEST(ContribOps, FusedMatMulAlphaAndTransposes) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  const int64_t batch = 3, m = 4, k = 5, n = 6;
  for (int64_t trans_a : {0, 1})
    for (int64_t trans_b : {0, 1}) {
      std::vector<float> a(batch * m * k), b(k * n);
      for (float& v : a) v = uni(rng);
      for (float& v : b) v = uni(rng);
      const Shape a_shape = trans_a ? Shape{batch, k, m} : Shape{batch, m, k};
      const Shape b_shape = trans_b ? Shape{1, n, k} : Shape{1, k, n};  // broadcast over the batch
      auto out = run_op("FusedMatMul",
                        {Value(Tensor::from_vector<float>(a, a_shape)), Value(Tensor::from_vector<float>(b, b_shape))},
                        {testing::attr_float("alpha", 0.25f), attr_int("transA", trans_a), attr_int("transB", trans_b)},
                        17, 1, "com.microsoft");
      ASSERT_TRUE(out.is_ok()) << out.status().to_string();
      const Tensor& y = (*out)[0].tensor();
      ASSERT_EQ(y.shape(), (Shape{batch, m, n}));
      for (int64_t bi = 0; bi < batch; ++bi)
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            float want = 0;
            for (int64_t t = 0; t < k; ++t) {
              const float av = trans_a ? a[(bi * k + t) * m + i] : a[(bi * m + i) * k + t];
              const float bv = trans_b ? b[j * k + t] : b[t * n + j];
              want += av * bv;
            }
            EXPECT_NEAR(y.data<float>()[(bi * m + i) * n + j], 0.25f * want, 1e-5f)
                << "transA " << trans_a << " transB " << trans_b;
          }
    }
  auto batch_transposed = run_op("FusedMatMul",
                                 {Value(Tensor::from_vector<float>(std::vector<float>(6, 1.0f), {1, 2, 3})),
                                  Value(Tensor::from_vector<float>(std::vector<float>(6, 1.0f), {1, 3, 2}))},
                                 {attr_int("transBatchA", 1)}, 17, 1, "com.microsoft");
  ASSERT_FALSE(batch_transposed.is_ok());
  EXPECT_NE(batch_transposed.status().message().find("transBatchA"), std::string::npos)
      << batch_transposed.status().to_string();
  auto integers =
      run_op("FusedMatMul",
             {Value(Tensor::from_vector<int32_t>({1, 2}, {1, 2})), Value(Tensor::from_vector<int32_t>({3, 4}, {2, 1}))},
             {}, 17, 1, "com.microsoft");
  ASSERT_FALSE(integers.is_ok());
  EXPECT_NE(integers.status().message().find("floating-point"), std::string::npos) << integers.status().to_string();
}

TEST(ContribOps, GeluVariants) {
  const std::vector<float> x = {-2.0f, -0.5f, 0.0f, 0.5f, 2.0f};
  auto exact = run_op("Gelu", {Value(Tensor::from_vector<float>(x, {5}))}, {}, 17, 1, "com.microsoft");
  auto fast = run_op("FastGelu", {Value(Tensor::from_vector<float>(x, {5}))}, {}, 17, 1, "com.microsoft");
  auto quick = run_op("QuickGelu", {Value(Tensor::from_vector<float>(x, {5}))}, {}, 17, 1, "com.microsoft");
  ASSERT_TRUE(exact.is_ok() && fast.is_ok() && quick.is_ok());
  for (size_t i = 0; i < x.size(); ++i) {
    const float want = 0.5f * x[i] * (1.0f + std::erf(x[i] / std::sqrt(2.0f)));
    EXPECT_NEAR((*exact)[0].tensor().data<float>()[i], want, 1e-6f);
    EXPECT_NEAR((*fast)[0].tensor().data<float>()[i], want, 2e-3f);  // tanh approximation
    EXPECT_NEAR((*quick)[0].tensor().data<float>()[i], x[i] / (1.0f + std::exp(-1.702f * x[i])), 1e-6f);
  }
  auto bias_gelu =
      run_op("BiasGelu",
             {Value(Tensor::from_vector<float>(x, {1, 5})), Value(Tensor::from_vector<float>({1, 1, 1, 1, 1}, {5}))},
             {}, 17, 1, "com.microsoft");
  ASSERT_TRUE(bias_gelu.is_ok());
  EXPECT_NEAR((*bias_gelu)[0].tensor().data<float>()[2], 0.5f * (1.0f + std::erf(1.0f / std::sqrt(2.0f))), 1e-6f);
}

}  // namespace
}  // namespace xonnx
