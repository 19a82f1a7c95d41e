// The optimized 4-bit MatMulNBits (runtime/ops/optimized/matmul_nbits.cc) against its reference
// twin (ref/contrib.cc): weights quantized here from random floats in ORT's contrib-op layout,
// over K (whole and partial last blocks), block sizes, N, M (direct and panel paths), with and
// without zero points and bias; every ISA table's 4-bit kernels against a scalar definition;
// and the inputs the optimized kernel leaves to the reference kernel.
#include <algorithm>

#include "runtime/ops/optimized/kernels.h"
#include "tests/unit/test_optimized_common.h"

namespace xonnx {
namespace {

using namespace opttest;

// A [K, N] float weight quantized to MatMulNBits' B [N, blocks, bs/2], scales [N * blocks] and,
// when asymmetric, zero points [N * ceil(blocks / 2)]. Nibbles past K hold random codes: the
// kernels must ignore them.
struct Q4 {
  Tensor b, scales, zp;
};

Q4 quantize(int64_t K, int64_t N, int64_t bs, bool asymmetric, uint32_t seed) {
  const int64_t blocks = (K + bs - 1) / bs, zp_row = (blocks + 1) / 2;
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<uint8_t> b(static_cast<size_t>(N * blocks * bs / 2), 0);
  std::vector<float> scales(static_cast<size_t>(N * blocks));
  std::vector<uint8_t> zp(static_cast<size_t>(N * zp_row), 0);
  std::vector<float> w(static_cast<size_t>(bs));
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t blk = 0; blk < blocks; ++blk) {
      float lo = 0.0f, hi = 0.0f;
      for (float& v : w) {
        v = dist(gen);
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
      float scale;
      int z;
      if (asymmetric) {
        scale = (hi - lo) / 15.0f;
        z = std::clamp(static_cast<int>(std::lround(-lo / scale)), 0, 15);
      } else {
        scale = std::max(hi, -lo) / 7.0f;
        z = 8;
      }
      scales[static_cast<size_t>(n * blocks + blk)] = scale;
      if (asymmetric) zp[static_cast<size_t>(n * zp_row + blk / 2)] |= static_cast<uint8_t>(z << ((blk & 1) * 4));
      for (int64_t i = 0; i < bs; ++i) {
        int q = std::clamp(static_cast<int>(std::lround(w[static_cast<size_t>(i)] / scale)) + z, 0, 15);
        if (blk * bs + i >= K) q = static_cast<int>(gen() & 15);  // padding of a partial block
        b[static_cast<size_t>((n * blocks + blk) * bs / 2 + i / 2)] |= static_cast<uint8_t>(q << ((i & 1) * 4));
      }
    }
  }
  Q4 r;
  r.b = Tensor::from_vector<uint8_t>(b, {N, blocks, bs / 2});
  r.scales = Tensor::from_vector<float>(scales, {N * blocks});
  if (asymmetric) r.zp = Tensor::from_vector<uint8_t>(zp, {N * zp_row});
  return r;
}

std::vector<Attribute> nbits_attrs(int64_t K, int64_t N, int64_t bs, int64_t bits = 4) {
  return {attr_int("K", K), attr_int("N", N), attr_int("block_size", bs), attr_int("bits", bits)};
}

const Op kNBits{"MatMulNBits", "com.microsoft"};

void check(int64_t M, int64_t K, int64_t N, int64_t bs, bool zp, bool bias, uint32_t seed) {
  const Q4 q = quantize(K, N, bs, zp, seed);
  std::vector<In> ins = {var(rand_tensor({M, K}, seed + 1)), cst(q.b), cst(q.scales)};
  if (zp || bias) ins.push_back(zp ? cst(q.zp) : In{});
  if (bias) {
    ins.push_back(In{});  // g_idx
    ins.push_back(cst(rand_tensor({N}, seed + 2)));
  }
  const double atol = K >= 1024 ? 1e-3 : 1e-4;
  diff_test(kNBits, ins, nbits_attrs(K, N, bs), true,
            "M" + std::to_string(M) + " K" + std::to_string(K) + " N" + std::to_string(N) + " bs" + std::to_string(bs) +
                (zp ? " zp" : "") + (bias ? " bias" : ""),
            1e-4, atol);
}

TEST(OptimizedMatMulNBits, SmallShapesEveryBlockSize) {
  uint32_t seed = 1;
  for (int64_t K : {32, 64, 96, 384})
    for (int64_t bs : {32, 64, 128})
      for (int64_t N : {1, 3, 13})
        for (int64_t M : {1, 3, 17}) {
          check(M, K, N, bs, seed % 2 == 0, seed % 3 == 0, seed);
          ++seed;
        }
}

TEST(OptimizedMatMulNBits, WideAndDeep) {
  for (int64_t M : {1, 3, 17}) {
    check(M, 384, 384, 32, true, true, 100 + static_cast<uint32_t>(M));
    check(M, 384, 384, 64, false, false, 200 + static_cast<uint32_t>(M));
  }
  uint32_t seed = 300;
  for (int64_t bs : {32, 64, 128})
    for (int64_t M : {1, 17}) check(M, 4096, 13, bs, bs == 64, bs != 32, seed++);
  check(1, 4096, 384, 32, false, true, 400);
}

TEST(OptimizedMatMulNBits, PartialLastBlockAndBlock16) {
  check(1, 100, 7, 32, true, false, 500);   // 4 blocks, the last 4 of 32 values
  check(5, 200, 9, 64, false, true, 501);   // panel path, partial block
  check(2, 48, 5, 16, true, true, 502);     // 16-value blocks
  check(6, 40, 33, 16, false, false, 503);  // 16-value blocks, partial, panel path
  check(3, 1, 3, 16, true, false, 504);     // K = 1
}

TEST(OptimizedMatMulNBits, BatchedARuntimeWeightsAndAccuracyLevel) {
  const Q4 q = quantize(64, 24, 32, true, 600);
  diff_test(kNBits, {var(rand_tensor({2, 5, 64}, 601)), cst(q.b), cst(q.scales), cst(q.zp)}, nbits_attrs(64, 24, 32),
            true, "3-D A", 1e-4, 1e-4);
  diff_test(kNBits, {var(rand_tensor({3, 64}, 602)), var(q.b), var(q.scales), var(q.zp)}, nbits_attrs(64, 24, 32), true,
            "runtime B", 1e-4, 1e-4);
  auto attrs = nbits_attrs(64, 24, 32);
  attrs.push_back(attr_int("accuracy_level", 4));
  // Level 4 quantizes A to int8 per block where the CPU has the int8 path (test_q4_int8.cc
  // bounds it exactly); here it only has to stay within that rounding of the float result.
  diff_test(kNBits, {var(rand_tensor({1, 64}, 603)), cst(q.b), cst(q.scales), cst(q.zp)}, attrs, true,
            "accuracy_level 4", 2e-2, 5e-2);
}

TEST(OptimizedMatMulNBits, NaNInAPropagates) {
  const Q4 q = quantize(64, 8, 32, false, 700);
  diff_test(kNBits, {var(with_specials(rand_tensor({3, 64}, 701))), cst(q.b), cst(q.scales)}, nbits_attrs(64, 8, 32),
            true, "NaN/inf", 1e-4, 1e-4);
}

TEST(OptimizedMatMulNBits, BadInputsGoToTheReferenceKernel) {
  const Q4 q = quantize(64, 8, 32, true, 800);
  const Tensor a = rand_tensor({2, 64}, 801);
  // Wrong B size: the reference kernel reports it.
  diff_test(kNBits, {var(a), var(rand_tensor({8, 2, 16}, 1)), cst(q.scales)}, nbits_attrs(64, 8, 32), false, "float B");
  diff_test(kNBits, {var(a), var(Tensor::from_vector<uint8_t>(std::vector<uint8_t>(100, 0), {100})), cst(q.scales)},
            nbits_attrs(64, 8, 32), false, "B size");
  diff_test(kNBits, {var(a), cst(q.b), var(rand_tensor({15}, 2))}, nbits_attrs(64, 8, 32), false, "scales length");
  diff_test(kNBits, {var(rand_tensor({2, 63}, 3)), cst(q.b), cst(q.scales)}, nbits_attrs(64, 8, 32), false,
            "A's last dimension");
  diff_test(kNBits, {var(a), cst(q.b), cst(q.scales), var(Tensor::from_vector<uint8_t>({1, 2, 3}, {3}))},
            nbits_attrs(64, 8, 32), false, "zero points length");
  diff_test(kNBits, {var(a), cst(q.b), cst(q.scales), In{}, In{}, var(rand_tensor({7}, 4))}, nbits_attrs(64, 8, 32),
            false, "bias length");
  // Covered by the reference only: float zero points, other bit widths.
  diff_test(kNBits, {var(a), cst(q.b), cst(q.scales), cst(rand_tensor({16}, 5, 7.0f, 9.0f))}, nbits_attrs(64, 8, 32),
            false, "float zero points", 1e-4, 1e-4);
  const Q4 q8 = quantize(128, 8, 64, false, 802);  // [8, 2, 32] bytes: the size of 8-bit blocks of 32
  diff_test(kNBits, {var(a), cst(q8.b), cst(rand_tensor({16}, 6, 0.01f, 0.02f))}, nbits_attrs(64, 8, 32, 8), false,
            "bits 8", 1e-4, 1e-4);
}

// Each table's 4-bit kernels against the plain definition (diff_test above only reaches the best table).
TEST(OptimizedMatMulNBits, EveryTableMatchesScalarDefinition) {
  const opt::KernelTable* t[8];
  const int nt = opt::supported_tables(t, 8);
  for (int64_t bs : {16, 32, 128}) {
    const int64_t K = 2 * bs + 16 * (bs == 128), blocks = (K + bs - 1) / bs, N = 5, M = 5, kp = blocks * bs;
    const Q4 q = quantize(K, N, bs, true, 900 + static_cast<uint32_t>(bs));
    const uint8_t* b = q.b.data<uint8_t>();
    const float* s = q.scales.data<float>();
    const uint8_t* zp = q.zp.data<uint8_t>();
    const int64_t zp_row = (blocks + 1) / 2;
    std::vector<float> w(static_cast<size_t>(N * kp));  // scalar dequantized columns
    for (int64_t n = 0; n < N; ++n)
      for (int64_t k = 0; k < kp; ++k) {
        const int64_t blk = k / bs, byte = (n * blocks + blk) * bs / 2 + (k % bs) / 2;
        const int code = (b[byte] >> ((k & 1) * 4)) & 15;
        const int z = (zp[n * zp_row + blk / 2] >> ((blk & 1) * 4)) & 15;
        w[static_cast<size_t>(n * kp + k)] = static_cast<float>(code - z) * s[n * blocks + blk];
      }
    const Tensor a = rand_tensor({M, K}, 901);
    for (int i = 0; i < nt; ++i) {
      SCOPED_TRACE(std::string(t[i]->isa) + " bs " + std::to_string(bs));
      std::vector<float> col(static_cast<size_t>(kp));
      for (int64_t n = 0; n < N; ++n) {
        t[i]->q4_dequant_col(b + n * blocks * bs / 2, s + n * blocks, zp + n * zp_row, blocks, bs, col.data());
        for (int64_t k = 0; k < kp; ++k)
          ASSERT_EQ(col[static_cast<size_t>(k)], w[static_cast<size_t>(n * kp + k)]) << k;
      }
      std::vector<float> ap(static_cast<size_t>(M * kp), kNaN), c(static_cast<size_t>(M * N), -1.0f);
      t[i]->q4_pack_a(M, a.data<float>(), K, K, kp, bs, ap.data());
      t[i]->q4_gemm_direct(M, ap.data(), kp, b, s, zp, zp_row, blocks, bs, N, c.data(), N);
      for (int64_t m = 0; m < M; ++m)
        for (int64_t n = 0; n < N; ++n) {
          double want = 0;
          for (int64_t k = 0; k < K; ++k)
            want += double(a.data<float>()[m * K + k]) * w[static_cast<size_t>(n * kp + k)];
          EXPECT_NEAR(c[static_cast<size_t>(m * N + n)], want, 1e-4) << "m " << m << " n " << n;
        }
    }
  }
}

}  // namespace
}  // namespace xonnx
