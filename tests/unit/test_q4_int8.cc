// The int8 dot-product path of MatMulNBits (runtime/ops/optimized/q4_int8.h): A's per-block
// quantization; the AVX512-VNNI kernel against its scalar twin over odd shapes; the twin against
// the plain definition; and through a MatMulNBits node: accuracy_level 4 close to the float
// reference, equal to the twin, and every other case (level 0, many rows, NaN, runtime weights)
// on the float path bit for bit.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "runtime/ops/optimized/kernels.h"
#include "runtime/ops/optimized/q4_int8.h"
#include "tests/unit/test_optimized_common.h"

namespace xonnx {
namespace {

using namespace opttest;

// Random 4-bit weights in ORT's layout: B [N, blocks, bs / 2], scales [N * blocks] and zero
// points [N * zp_row] (codes past K random too: the kernels must ignore them).
struct Q4 {
  int64_t n, blocks, bs, zp_row;
  Tensor b, scales, zp;  // zp undefined: symmetric
};

Q4 random_q4(int64_t K, int64_t N, int64_t bs, bool asymmetric, uint32_t seed) {
  Q4 q;
  q.n = N;
  q.bs = bs;
  q.blocks = (K + bs - 1) / bs;
  q.zp_row = (q.blocks + 1) / 2;
  std::mt19937 gen(seed);
  std::vector<uint8_t> b(static_cast<size_t>(N * q.blocks * bs / 2)), zp(static_cast<size_t>(N * q.zp_row));
  for (uint8_t& v : b) v = static_cast<uint8_t>(gen() & 0xFF);
  for (uint8_t& v : zp) v = static_cast<uint8_t>(gen() & 0xFF);
  q.b = Tensor::from_vector<uint8_t>(b, {N, q.blocks, bs / 2});
  q.scales = rand_tensor({N * q.blocks}, seed + 1, 0.01f, 0.2f);
  if (asymmetric) q.zp = Tensor::from_vector<uint8_t>(zp, {N * q.zp_row});
  return q;
}

const uint8_t* zp_data(const Q4& q) { return q.zp.defined() ? q.zp.data<uint8_t>() : nullptr; }

// The twin's results for A [M, K].
std::vector<float> twin(const Tensor& a, const Q4& q) {
  const int64_t K = a.dim(a.rank() - 1), M = a.numel() / K;
  opt::Q4Int8A qa;
  EXPECT_TRUE(opt::quantize_a_int8(a.data<float>(), M, K, q.blocks, q.bs, qa));
  std::vector<float> c(static_cast<size_t>(M * q.n));
  opt::q4_int8_reference(qa, q.b.data<uint8_t>(), q.scales.data<float>(), zp_data(q), q.zp_row, q.n, c.data(), q.n);
  return c;
}

TEST(Q4Int8, QuantizeARoundsHalfToEvenPerBlock) {
  // Block 0: max 127 -> scale 1; block 1: all zero; block 2 (partial, 3 of 16 values): max 2.54.
  std::vector<float> a(35, 0.0f);
  const float first[] = {127.0f, 0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, -127.0f, 3.49f, -3.51f};
  std::copy(std::begin(first), std::end(first), a.begin());
  a[32] = 2.54f;
  a[33] = -1.27f;
  a[34] = 0.01f;
  opt::Q4Int8A q;
  ASSERT_TRUE(opt::quantize_a_int8(a.data(), 1, 35, 3, 16, q));
  const int8_t want0[] = {127, 0, 2, 2, 0, -2, -2, -127, 3, -4};
  for (int i = 0; i < 10; ++i) EXPECT_EQ(q.codes[static_cast<size_t>(i)], want0[i]) << i;
  EXPECT_EQ(q.scales[0], 1.0f);
  EXPECT_EQ(q.sums[0], 127 + 2 + 2 - 2 - 2 - 127 + 3 - 4);
  EXPECT_EQ(q.scales[1], 0.0f);
  EXPECT_EQ(q.sums[1], 0);
  EXPECT_FLOAT_EQ(q.scales[2], 2.54f / 127.0f);
  EXPECT_EQ(q.codes[32], 127);
  EXPECT_EQ(q.codes[33], -64);  // -1.27 / 0.02 = -63.5 -> -64 (even)
  EXPECT_EQ(q.codes[34], 0);    // 0.5 -> 0 (even)
  for (int i = 35; i < 48; ++i) EXPECT_EQ(q.codes[static_cast<size_t>(i)], 0) << "padding " << i;
  EXPECT_EQ(q.sums[2], 127 - 64);
}

TEST(Q4Int8, QuantizeARefusesNaNAndInfinity) {
  opt::Q4Int8A q;
  for (float special : {kNaN, kInf, -kInf}) {
    std::vector<float> a(40, 0.25f);
    a[37] = special;
    EXPECT_FALSE(opt::quantize_a_int8(a.data(), 2, 20, 2, 16, q)) << special;
  }
}

// The twin against the definition written out in doubles (exact here: integer sums times scales).
TEST(Q4Int8, TwinMatchesDefinition) {
  const int64_t M = 3, K = 100, N = 7, bs = 32;
  for (bool asym : {false, true}) {
    const Q4 q = random_q4(K, N, bs, asym, 10 + asym);
    const Tensor a = rand_tensor({M, K}, 11);
    opt::Q4Int8A qa;
    ASSERT_TRUE(opt::quantize_a_int8(a.data<float>(), M, K, q.blocks, bs, qa));
    const std::vector<float> got = twin(a, q);
    const uint8_t* b = q.b.data<uint8_t>();
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double want = 0;
        for (int64_t k = 0; k < K; ++k) {
          const int64_t blk = k / bs, i = k % bs;
          const int code = (b[(n * q.blocks + blk) * bs / 2 + i / 2] >> ((i & 1) * 4)) & 15;
          const int z = asym ? (q.zp.data<uint8_t>()[n * q.zp_row + blk / 2] >> ((blk & 1) * 4)) & 15 : 8;
          want += double(qa.codes[static_cast<size_t>(m * q.blocks * bs + k)]) * (code - z) *
                  qa.scales[static_cast<size_t>(m * q.blocks + blk)] * q.scales.data<float>()[n * q.blocks + blk];
        }
        EXPECT_NEAR(got[static_cast<size_t>(m * N + n)], want, 1e-5 * (1 + std::fabs(want))) << m << " " << n;
      }
  }
}

TEST(Q4Int8, VnniKernelMatchesTwin) {
  const opt::Q4Int8Fn fast = opt::q4_int8_fast();
  if (!fast) GTEST_SKIP() << "no AVX512-VNNI on this CPU";
  uint32_t seed = 100;
  int cases = 0;
  for (int64_t K : {32, 64, 96, 384, 1536})
    for (int64_t bs : {16, 32, 64, 128})
      for (int64_t N : {1, 3, 15, 16, 17, 100})
        for (bool asym : {false, true}) {
          const int64_t M = 1 + seed % 4;
          ++seed;
          SCOPED_TRACE("M" + std::to_string(M) + " K" + std::to_string(K) + " bs" + std::to_string(bs) + " N" +
                       std::to_string(N) + (asym ? " zp" : ""));
          const Q4 q = random_q4(K, N, bs, asym, seed);
          const Tensor a = rand_tensor({M, K}, seed + 7, -3.0f, 2.0f);
          const std::vector<float> want = twin(a, q);
          opt::Q4Int8A qa;
          ASSERT_TRUE(opt::quantize_a_int8(a.data<float>(), M, K, q.blocks, bs, qa));
          const opt::Q4Int8Weights w = opt::pack_q4_int8_weights(q.b.data<uint8_t>(), q.scales.data<float>(),
                                                                 zp_data(q), q.zp_row, N, q.blocks, bs);
          // Written in two column ranges (as parallel chunks do), into a wider C (ldc > N).
          const int64_t ldc = N + 5;
          std::vector<float> c(static_cast<size_t>(M * ldc), -7.0f);
          const int64_t split = w.groups / 2;
          fast(qa, w, 0, split, c.data(), ldc);
          fast(qa, w, split, w.groups, c.data(), ldc);
          for (int64_t m = 0; m < M; ++m) {
            for (int64_t n = 0; n < N; ++n) {
              const float g = c[static_cast<size_t>(m * ldc + n)], e = want[static_cast<size_t>(m * N + n)];
              ASSERT_LE(std::fabs(g - e), 1e-5 * std::fabs(e) + 1e-6)
                  << "m " << m << " n " << n << ": " << g << " vs " << e;
            }
            for (int64_t n = N; n < ldc; ++n) ASSERT_EQ(c[static_cast<size_t>(m * ldc + n)], -7.0f) << "wrote past N";
          }
          ++cases;
        }
  EXPECT_EQ(cases, 5 * 4 * 6 * 2);
}

// ---- through a MatMulNBits node ----------------------------------------------------------

const Op kNBits{"MatMulNBits", "com.microsoft"};

std::vector<Attribute> attrs(int64_t K, int64_t N, int64_t bs, int64_t level) {
  std::vector<Attribute> a = {attr_int("K", K), attr_int("N", N), attr_int("block_size", bs), attr_int("bits", 4)};
  if (level >= 0) a.push_back(attr_int("accuracy_level", level));
  return a;
}

// The node's output (optimized kernels on unless `optimized` is false).
Tensor run_node(const std::vector<In>& ins, const std::vector<Attribute>& at, bool optimized, int threads) {
  auto s = make_session(kNBits, ins, at, optimized, threads);
  EXPECT_TRUE(s.is_ok()) << s.status().to_string();
  if (!s.is_ok()) return Tensor();
  std::vector<Value> given;
  for (const In& in : ins)
    if (in.t.defined() && !in.constant) given.push_back(in.t);
  auto out = (*s)->run(given);
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  if (!out.is_ok()) return Tensor();
  return (*out)[0].tensor();
}

std::vector<In> node_inputs(const Tensor& a, const Q4& q, const Tensor& bias, bool constant_weights = true) {
  auto w = [&](const Tensor& t) { return constant_weights ? cst(t) : var(t); };
  std::vector<In> ins = {var(a), w(q.b), w(q.scales)};
  if (q.zp.defined() || bias.defined()) ins.push_back(q.zp.defined() ? w(q.zp) : In{});
  if (bias.defined()) {
    ins.push_back(In{});  // g_idx
    ins.push_back(cst(bias));
  }
  return ins;
}

bool same_bits(const Tensor& x, const Tensor& y) {
  return x.numel() == y.numel() &&
         std::memcmp(x.data<float>(), y.data<float>(), static_cast<size_t>(x.numel()) * sizeof(float)) == 0;
}

TEST(Q4Int8, Level4NodeIsCloseToFloatReferenceAndEqualsTwin) {
  struct Case {
    int64_t M, K, N, bs;
    bool zp, bias;
  };
  const Case cases[] = {{1, 384, 100, 32, false, true},
                        {4, 96, 17, 64, true, false},
                        {2, 1536, 33, 128, true, true},
                        {3, 48, 5, 16, false, false},
                        // Prefill: more rows than the decode step, past the kernels' row blocks.
                        {9, 200, 21, 32, true, false},
                        {37, 64, 40, 32, false, true}};
  uint32_t seed = 500;
  for (const Case& t : cases) {
    SCOPED_TRACE("M" + std::to_string(t.M) + " K" + std::to_string(t.K) + " N" + std::to_string(t.N));
    const Q4 q = random_q4(t.K, t.N, t.bs, t.zp, seed++);
    const Tensor a = rand_tensor({t.M, t.K}, seed++);
    const Tensor bias = t.bias ? rand_tensor({t.N}, seed++) : Tensor();
    const auto ins = node_inputs(a, q, bias);
    const Tensor ref = run_node(ins, attrs(t.K, t.N, t.bs, 4), false, 1);
    ASSERT_TRUE(ref.defined());
    float range = 0;
    for (int64_t i = 0; i < ref.numel(); ++i) range = std::max(range, std::fabs(ref.data<float>()[i]));
    // Rounding A to codes moves each value by at most half its block's scale, so element (m, n)
    // is off by at most bound[m][n] = sum_k a_scale / 2 * |w[n][k]| (plus float rounding).
    opt::Q4Int8A qa;
    ASSERT_TRUE(opt::quantize_a_int8(a.data<float>(), t.M, t.K, q.blocks, t.bs, qa));
    std::vector<double> bound(static_cast<size_t>(t.M * t.N), 0.0);
    const uint8_t* b = q.b.data<uint8_t>();
    for (int64_t m = 0; m < t.M; ++m)
      for (int64_t n = 0; n < t.N; ++n)
        for (int64_t k = 0; k < t.K; ++k) {
          const int64_t blk = k / t.bs, i = k % t.bs;
          const int code = (b[(n * q.blocks + blk) * t.bs / 2 + i / 2] >> ((i & 1) * 4)) & 15;
          const int z = t.zp ? (q.zp.data<uint8_t>()[n * q.zp_row + blk / 2] >> ((blk & 1) * 4)) & 15 : 8;
          bound[static_cast<size_t>(m * t.N + n)] += 0.5 * qa.scales[static_cast<size_t>(m * q.blocks + blk)] *
                                                     std::abs(code - z) * q.scales.data<float>()[n * q.blocks + blk];
        }
    std::vector<float> want = twin(a, q);
    for (int64_t i = 0; i < t.M * t.N; ++i) want[static_cast<size_t>(i)] += t.bias ? bias.data<float>()[i % t.N] : 0.0f;
    for (int threads : {1, 2}) {
      const Tensor got = run_node(ins, attrs(t.K, t.N, t.bs, 4), true, threads);
      ASSERT_TRUE(got.defined());
      double sq = 0;
      for (int64_t i = 0; i < got.numel(); ++i) {
        const float g = got.data<float>()[i];
        const double err = std::fabs(double(g) - ref.data<float>()[i]);
        sq += err * err;
        EXPECT_LE(err, bound[static_cast<size_t>(i)] * 1.001 + 1e-5 * range) << i;
        if (opt::q4_int8_fast()) {
          EXPECT_EQ(g, want[static_cast<size_t>(i)]) << "not the int8 path, element " << i;
        }
      }
      // Typical errors are far below the bound: the rms error is < 1% of the output range.
      EXPECT_LT(std::sqrt(sq / double(got.numel())), 1e-2 * range);
    }
  }
}

// The float path's panels dequantized from the packed weights are the bits of the columns
// dequantized from B (so the kernel need not keep B): whole and split groups, a partial last
// block, columns past n within and past the last group.
TEST(Q4Int8, PanelFromPackedWeightsEqualsColumnsFromB) {
  const opt::Q4Int8PanelFn panel = opt::q4_int8_panel_fast();
  if (!panel) GTEST_SKIP() << "no int8 path on this CPU";
  const opt::KernelTable& t = opt::kernels();
  struct Case {
    int64_t K, N, bs;
    bool zp;
    int64_t j0, width;
  };
  const Case cases[] = {{200, 21, 32, true, 0, 32},
                        {200, 21, 32, false, 16, 16},
                        {96, 21, 64, true, 8, 8},
                        {64, 13, 16, false, 0, 32},
                        {384, 40, 128, true, 32, 16}};
  uint32_t seed = 950;
  for (const Case& c : cases) {
    SCOPED_TRACE("K" + std::to_string(c.K) + " N" + std::to_string(c.N) + " j0 " + std::to_string(c.j0) + " width " +
                 std::to_string(c.width));
    const Q4 q = random_q4(c.K, c.N, c.bs, c.zp, seed++);
    const uint8_t* zp = c.zp ? q.zp.data<uint8_t>() : nullptr;
    const opt::Q4Int8Weights w =
        opt::pack_q4_int8_weights(q.b.data<uint8_t>(), q.scales.data<float>(), zp, q.zp_row, c.N, q.blocks, c.bs);
    const int64_t kp = q.blocks * c.bs, col_bytes = kp / 2, nc = std::min(c.width, c.N - c.j0);
    std::vector<float> want(static_cast<size_t>(c.K * c.width), 0.0f), col(static_cast<size_t>(kp));
    for (int64_t j = 0; j < nc; ++j) {
      const int64_t n = c.j0 + j;
      t.q4_dequant_col(q.b.data<uint8_t>() + n * col_bytes, q.scales.data<float>() + n * q.blocks,
                       zp ? zp + n * q.zp_row : nullptr, q.blocks, c.bs, col.data());
      for (int64_t k = 0; k < c.K; ++k) want[static_cast<size_t>(k * c.width + j)] = col[static_cast<size_t>(k)];
    }
    std::vector<float> got(want.size(), -1.0f);
    panel(w, c.j0, nc, c.width, c.K, got.data());
    ASSERT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0);
  }
}

// Level 0 (and other cases the int8 path leaves alone) give the float path's exact result.
TEST(Q4Int8, OtherCasesTakeTheFloatPath) {
  const int64_t K = 200, N = 21, bs = 32;
  const Q4 q = random_q4(K, N, bs, true, 900);
  const Tensor a = rand_tensor({2, K}, 901);
  const Tensor level0 = run_node(node_inputs(a, q, Tensor()), attrs(K, N, bs, 0), true, 1);
  ASSERT_TRUE(level0.defined());
  // The float path written out: the table's direct kernel.
  const opt::KernelTable& t = opt::kernels();
  const int64_t kp = q.blocks * bs;
  std::vector<float> ap(static_cast<size_t>(2 * kp)), c(static_cast<size_t>(2 * N));
  t.q4_pack_a(2, a.data<float>(), K, K, kp, bs, ap.data());
  t.q4_gemm_direct(2, ap.data(), kp, q.b.data<uint8_t>(), q.scales.data<float>(), q.zp.data<uint8_t>(), q.zp_row,
                   q.blocks, bs, N, c.data(), N);
  ASSERT_EQ(std::memcmp(level0.data<float>(), c.data(), c.size() * sizeof(float)), 0);
  for (int64_t level : {-1, 1, 2, 3}) {  // -1: no attribute
    EXPECT_TRUE(same_bits(run_node(node_inputs(a, q, Tensor()), attrs(K, N, bs, level), true, 1), level0)) << level;
  }
  if (opt::q4_int8_fast()) {
    EXPECT_FALSE(same_bits(run_node(node_inputs(a, q, Tensor()), attrs(K, N, bs, 4), true, 1), level0))
        << "level 4 should have taken the int8 path";
  }
  // Level 4 with runtime weights, and with NaN in A.
  EXPECT_TRUE(same_bits(run_node(node_inputs(a, q, Tensor(), false), attrs(K, N, bs, 4), true, 1), level0));
  auto cloned = a.clone();
  ASSERT_TRUE(cloned.is_ok());
  Tensor nan_a = std::move(cloned).value();
  nan_a.data<float>()[5] = kNaN;
  const Tensor nan0 = run_node(node_inputs(nan_a, q, Tensor()), attrs(K, N, bs, 0), true, 1);
  const Tensor nan4 = run_node(node_inputs(nan_a, q, Tensor()), attrs(K, N, bs, 4), true, 1);
  EXPECT_TRUE(same_bits(nan4, nan0));
  EXPECT_TRUE(std::isnan(nan4.data<float>()[0]));
  // Many rows holding NaN take the panels, from the packed copy at level 4 and from B at level
  // 0: the same bits.
  auto tall_or_error = rand_tensor({9, K}, 902).clone();
  ASSERT_TRUE(tall_or_error.is_ok());
  Tensor tall = std::move(tall_or_error).value();
  tall.data<float>()[K + 3] = kNaN;
  EXPECT_TRUE(same_bits(run_node(node_inputs(tall, q, Tensor()), attrs(K, N, bs, 4), true, 2),
                        run_node(node_inputs(tall, q, Tensor()), attrs(K, N, bs, 0), true, 2)));
  const Q4 sym = random_q4(K, N, bs, false, 903);
  EXPECT_TRUE(same_bits(run_node(node_inputs(tall, sym, Tensor()), attrs(K, N, bs, 4), true, 1),
                        run_node(node_inputs(tall, sym, Tensor()), attrs(K, N, bs, 0), true, 1)));
}

}  // namespace
}  // namespace xonnx
