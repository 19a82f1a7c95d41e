// The optimized kernel tables (runtime/ops/optimized/kernels.h) against scalar definitions,
// for every table this CPU supports (generic, avx2, avx512 here; neon on ARM): exp and erf
// over dense sweeps, GEMM / LayerNorm / Softmax rows / transpose / reductions over odd sizes.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "runtime/ops/optimized/kernels.h"

namespace xonnx {
namespace {

using opt::KernelTable;

std::vector<const KernelTable*> tables() {
  const KernelTable* t[8];
  const int n = opt::supported_tables(t, 8);
  return std::vector<const KernelTable*>(t, t + n);
}

std::vector<float> randv(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& f : v) f = d(gen);
  return v;
}

const int64_t kSizes[] = {1, 3, 13, 127, 128, 129};

TEST(OptimizedMath, TablesIncludeGenericAndBestFirst) {
  auto ts = tables();
  ASSERT_FALSE(ts.empty());
  EXPECT_STREQ(ts.back()->isa, "generic");
  EXPECT_STREQ(opt::kernels().isa, ts.front()->isa);  // XONNX_OPT_ISA unset in tests
}

TEST(OptimizedMath, ErfWithin1e6OfStdErf) {
  std::vector<float> x;
  for (float v = -6.0f; v <= 6.0f; v += 1.0f / 4096) x.push_back(v);
  x.push_back(1e-30f);
  x.push_back(-1e-8f);
  std::vector<float> y(x.size());
  for (const KernelTable* t : tables()) {
    t->erf(x.data(), y.data(), static_cast<int64_t>(x.size()));
    double worst = 0;
    for (size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::fabs(double(y[i]) - std::erf(double(x[i]))));
    EXPECT_LE(worst, 1e-6) << t->isa;
    // From |x| = 3.92 on, huge and infinite |x| included: exactly +-1 on every ISA.
    const float special[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                             -std::numeric_limits<float>::infinity(), 0.0f,
                             std::numeric_limits<float>::max(),       -1e30f};
    float out[6];
    t->erf(special, out, 6);
    EXPECT_TRUE(std::isnan(out[0])) << t->isa;
    EXPECT_EQ(out[1], 1.0f) << t->isa;
    EXPECT_EQ(out[2], -1.0f) << t->isa;
    EXPECT_EQ(out[3], 0.0f) << t->isa;
    EXPECT_EQ(out[4], 1.0f) << t->isa;
    EXPECT_EQ(out[5], -1.0f) << t->isa;
  }
}

// The fused activations of Conv: every table's Swish and HardSwish against the formulas in
// double, and the reference's values at NaN and +-inf.
TEST(OptimizedMath, SwishAndHardSwishMatchTheirFormulas) {
  std::vector<float> x;
  for (float v = -110.0f; v <= 110.0f; v += 1.0f / 64) x.push_back(v);
  std::vector<float> y(x.size());
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (const KernelTable* t : tables()) {
    t->swish(x.data(), y.data(), static_cast<int64_t>(x.size()));
    for (size_t i = 0; i < x.size(); ++i) {
      const double want = double(x[i]) / (1.0 + std::exp(-double(x[i])));
      ASSERT_NEAR(y[i], want, 2e-6 * std::max(1.0, std::fabs(want))) << t->isa << " swish(" << x[i] << ")";
    }
    t->hard_swish(x.data(), y.data(), static_cast<int64_t>(x.size()));
    for (size_t i = 0; i < x.size(); ++i) {
      const double want = double(x[i]) * std::max(0.0, std::min(1.0, double(x[i]) / 6 + 0.5));
      ASSERT_NEAR(y[i], want, 1e-6 * std::max(1.0, std::fabs(want))) << t->isa << " hard_swish(" << x[i] << ")";
    }
    const float special[] = {nan, inf, -inf};
    float out[3];
    t->swish(special, out, 3);
    EXPECT_TRUE(std::isnan(out[0])) << t->isa;
    EXPECT_EQ(out[1], inf) << t->isa;
    EXPECT_TRUE(std::isnan(out[2])) << t->isa << ": -inf * sigmoid(-inf), as the reference";
    t->hard_swish(special, out, 3);
    EXPECT_TRUE(std::isnan(out[0])) << t->isa;
    EXPECT_EQ(out[1], inf) << t->isa;
    EXPECT_TRUE(std::isnan(out[2])) << t->isa << ": -inf * 0, as the reference";
  }
}

TEST(OptimizedMath, ExpWithinFewUlpOfStdExp) {
  std::vector<float> x;
  for (float v = -87.0f; v <= 88.5f; v += 1.0f / 256) x.push_back(v);
  std::vector<float> y(x.size());
  for (const KernelTable* t : tables()) {
    t->exp(x.data(), y.data(), static_cast<int64_t>(x.size()));
    double worst = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double want = std::exp(double(x[i]));
      worst = std::max(worst, std::fabs(double(y[i]) - want) / want);
    }
    EXPECT_LE(worst, 3e-7) << t->isa;  // ~2.5 ulp
    const float special[] = {std::numeric_limits<float>::quiet_NaN(),
                             std::numeric_limits<float>::infinity(),
                             -std::numeric_limits<float>::infinity(),
                             89.0f,
                             -200.0f,
                             0.0f};
    float out[6];
    t->exp(special, out, 6);
    EXPECT_TRUE(std::isnan(out[0])) << t->isa;
    EXPECT_EQ(out[1], std::numeric_limits<float>::infinity()) << t->isa;
    EXPECT_EQ(out[2], 0.0f) << t->isa;
    EXPECT_EQ(out[3], std::numeric_limits<float>::infinity()) << t->isa;
    EXPECT_EQ(out[4], 0.0f) << t->isa;
    EXPECT_EQ(out[5], 1.0f) << t->isa;
  }
}

// Softmax's exp of x - max <= 0: within a few ulp of std::exp down to ln FLT_MIN, and 0 below
// it on every table: never a denormal, which slows every FMA that reads it (swin_t's -100
// window masks: 80 -> 108 ms when the AVX-512 exp let scalef underflow into them).
TEST(OptimizedMath, SoftmaxExpWithinFewUlpOfStdExpAndNoDenormals) {
  std::vector<float> x;
  for (float v = 0.0f; v >= -110.0f; v -= 1.0f / 64) x.push_back(v);  // max 0: y = exp(x)
  std::vector<float> y(x.size());
  for (const KernelTable* t : tables()) {
    const float sum = t->exp_shifted_row(x.data(), y.data(), static_cast<int64_t>(x.size()));
    double worst = 0, want_sum = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double want = std::exp(double(x[i]));
      want_sum += want;
      if (x[i] >= -87.0f) worst = std::max(worst, std::fabs(double(y[i]) - want) / want);
      if (x[i] < -87.34f) {
        ASSERT_EQ(y[i], 0.0f) << t->isa << " x=" << x[i];
      }
      ASSERT_TRUE(y[i] == 0.0f || y[i] >= std::numeric_limits<float>::min()) << t->isa << " x=" << x[i];
    }
    EXPECT_LE(worst, 3e-7) << t->isa;
    EXPECT_NEAR(sum, want_sum, 1e-6 * want_sum) << t->isa;
  }
}

// Softmax's exp takes x - max <= 0 only: masked (-inf) entries give exact zeros, a row of -inf
// or with a NaN gives NaN (as the reference does), and +inf rows too.
TEST(OptimizedMath, SoftmaxRowSpecials) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (const KernelTable* t : tables()) {
    for (int64_t n : {3, 17, 40, 216}) {  // 216: AVX-512's four maximum chains, one more vector, a tail
      std::vector<float> x(static_cast<size_t>(n)), y(x.size());
      for (int64_t i = 0; i < n; ++i) x[static_cast<size_t>(i)] = i % 3 == 0 ? -inf : -100.0f + static_cast<float>(i);
      t->softmax_row(x.data(), y.data(), n);
      double sum = 0;
      for (int64_t i = 0; i < n; ++i) {
        if (i % 3 == 0) {
          ASSERT_EQ(y[static_cast<size_t>(i)], 0.0f) << t->isa << " n=" << n << " i=" << i;
        }
        sum += y[static_cast<size_t>(i)];
      }
      EXPECT_NEAR(sum, 1.0, 1e-6) << t->isa;
      for (float special : {nan, inf}) {
        x[1] = special;
        t->softmax_row(x.data(), y.data(), n);
        for (float v : y) ASSERT_TRUE(std::isnan(v) || special == inf) << t->isa << " n=" << n;
        if (special == inf) {
          EXPECT_TRUE(std::isnan(y[1])) << t->isa << ": inf - inf";
        }
      }
      std::fill(x.begin(), x.end(), -inf);
      t->softmax_row(x.data(), y.data(), n);
      for (float v : y) ASSERT_TRUE(std::isnan(v)) << t->isa << " n=" << n << ": a row of -inf";
    }
  }
}

// Softmax down columns (a non-last axis) equals softmax_row over each column gathered, within
// 1e-6, on every table: whole vectors, tails, rows `stride` apart; a NaN or +inf makes its
// column NaN and leaves the others alone.
TEST(OptimizedMath, SoftmaxColumnsMatchRowsOfTheTransposedValues) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (const KernelTable* t : tables()) {
    for (int64_t n : {1, 3, 16}) {
      for (int64_t cols : {1, 5, 16, 17, 40}) {
        const int64_t stride = cols + 3;
        std::vector<float> x(static_cast<size_t>(n * stride)), y(x.size(), -7.0f);
        for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * static_cast<float>(i)) * 30.0f;
        if (cols > 2 && n > 1) {
          x[static_cast<size_t>(stride + 1)] = nan;  // row 1 of column 1
          x[2] = inf;                                // row 0 of column 2
        }
        t->softmax_columns(x.data(), y.data(), n, stride, cols);
        for (int64_t c = 0; c < cols; ++c) {
          std::vector<float> col(static_cast<size_t>(n)), want(col.size());
          for (int64_t r = 0; r < n; ++r) col[static_cast<size_t>(r)] = x[static_cast<size_t>(r * stride + c)];
          t->softmax_row(col.data(), want.data(), n);
          for (int64_t r = 0; r < n; ++r) {
            const float got = y[static_cast<size_t>(r * stride + c)], w = want[static_cast<size_t>(r)];
            if (std::isnan(w)) {
              EXPECT_TRUE(std::isnan(got)) << t->isa << " n=" << n << " cols=" << cols << " c=" << c;
            } else {
              EXPECT_NEAR(got, w, 1e-6) << t->isa << " n=" << n << " cols=" << cols << " c=" << c << " r=" << r;
            }
          }
        }
        for (int64_t r = 0; r < n; ++r)  // the gaps between the rows' columns are not written
          for (int64_t c = cols; c < stride; ++c) ASSERT_EQ(y[static_cast<size_t>(r * stride + c)], -7.0f);
      }
    }
  }
}

// The recurrent cells' gates: within a few 1e-7 of the definitions in double, and exact at the
// ends (the AVX-512 table takes reciprocals by an estimate and a Newton step).
TEST(OptimizedMath, SigmoidAndTanhMatchDefinitions) {
  std::vector<float> x;
  for (float v = -30.0f; v <= 30.0f; v += 1.0f / 512) x.push_back(v);
  for (float v : {1e-30f, -1e-8f, 100.0f, -100.0f, 1e30f, -1e30f}) x.push_back(v);
  std::vector<float> ys(x.size()), yt(x.size());
  for (const KernelTable* t : tables()) {
    t->sigmoid(x.data(), ys.data(), static_cast<int64_t>(x.size()));
    t->tanh(x.data(), yt.data(), static_cast<int64_t>(x.size()));
    double worst_s = 0, worst_t = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      worst_s = std::max(worst_s, std::fabs(double(ys[i]) - 1.0 / (1.0 + std::exp(-double(x[i])))));
      worst_t = std::max(worst_t, std::fabs(double(yt[i]) - std::tanh(double(x[i]))));
    }
    EXPECT_LE(worst_s, 2e-7) << t->isa;
    EXPECT_LE(worst_t, 3e-7) << t->isa;
    const float inf = std::numeric_limits<float>::infinity();
    const float special[] = {std::numeric_limits<float>::quiet_NaN(), inf, -inf, 0.0f};
    float s[4], th[4];
    t->sigmoid(special, s, 4);
    t->tanh(special, th, 4);
    EXPECT_TRUE(std::isnan(s[0]) && std::isnan(th[0])) << t->isa;
    EXPECT_EQ(s[1], 1.0f) << t->isa;
    EXPECT_EQ(s[2], 0.0f) << t->isa;
    EXPECT_EQ(s[3], 0.5f) << t->isa;
    EXPECT_EQ(th[1], 1.0f) << t->isa;
    EXPECT_EQ(th[2], -1.0f) << t->isa;
    EXPECT_EQ(th[3], 0.0f) << t->isa;
  }
}

TEST(OptimizedMath, GeluMatchesDefinitions) {
  std::vector<float> x = randv(1000, 7, -8.0f, 8.0f);
  std::vector<float> y(x.size()), z(x.size());
  for (const KernelTable* t : tables()) {
    t->gelu_erf(x.data(), y.data(), 1000);
    t->gelu_tanh(x.data(), z.data(), 1000);
    for (size_t i = 0; i < x.size(); ++i) {
      const double v = x[i];
      const double ge = 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
      const double gt = 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
      ASSERT_NEAR(y[i], ge, 1e-6 + 1e-6 * std::fabs(ge)) << t->isa << " x=" << v;
      ASSERT_NEAR(z[i], gt, 1e-6 + 1e-6 * std::fabs(gt)) << t->isa << " x=" << v;
    }
  }
}

TEST(OptimizedMath, GemmPackedAndDirectMatchNaive) {
  for (const KernelTable* t : tables()) {
    for (int64_t M : {1, 3, 13, 128}) {
      for (int64_t N : {1, 3, 13, 127, 129}) {
        for (int64_t K : {1, 13, 64}) {
          auto a = randv(static_cast<size_t>(M * K), 1), b = randv(static_cast<size_t>(K * N), 2);
          std::vector<float> want(static_cast<size_t>(M * N), 0.0f), c1(want.size(), -7.0f), c2(want.size(), -7.0f);
          for (int64_t i = 0; i < M; ++i)
            for (int64_t j = 0; j < N; ++j) {
              double s = 0;
              for (int64_t k = 0; k < K; ++k) s += double(a[i * K + k]) * b[k * N + j];
              want[i * N + j] = static_cast<float>(s);
            }
          std::vector<float> packed(static_cast<size_t>(K * t->nr));
          for (int64_t j0 = 0; j0 < N; j0 += t->nr) {
            const int64_t nc = std::min<int64_t>(t->nr, N - j0);
            t->pack_b(b.data() + j0, N, K, nc, packed.data());
            t->gemm_panel(M, K, a.data(), K, packed.data(), nc, c1.data() + j0, N);
          }
          t->gemm_direct(M, N, K, a.data(), K, b.data(), N, c2.data(), N);
          for (size_t i = 0; i < want.size(); ++i) {
            ASSERT_NEAR(c1[i], want[i], 1e-5 * (1 + K)) << t->isa << " packed M=" << M << " N=" << N << " K=" << K;
            ASSERT_NEAR(c2[i], want[i], 1e-5 * (1 + K)) << t->isa << " direct M=" << M << " N=" << N << " K=" << K;
          }
        }
      }
    }
  }
}

TEST(OptimizedMath, RowsAndTranspose) {
  for (const KernelTable* t : tables()) {
    for (int64_t n : kSizes) {
      auto x = randv(static_cast<size_t>(n), 3, -4.0f, 4.0f), s = randv(static_cast<size_t>(n), 4),
           b = randv(static_cast<size_t>(n), 5);
      std::vector<float> y(static_cast<size_t>(n));
      float mean = 0, inv = 0;
      t->layer_norm_row(x.data(), y.data(), n, s.data(), b.data(), 1e-5f, &mean, &inv);
      double m = 0, q = 0;
      for (float v : x) m += v;
      m /= n;
      for (float v : x) q += (v - m) * (v - m);
      const double iv = 1 / std::sqrt(q / n + 1e-5);
      EXPECT_NEAR(mean, m, 1e-5) << t->isa << " n=" << n;
      EXPECT_NEAR(inv, iv, 1e-4 * iv) << t->isa << " n=" << n;
      for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(y[i], (x[i] - m) * iv * s[i] + b[i], 1e-4) << t->isa;

      t->softmax_row(x.data(), y.data(), n);
      double mx = x[0], sum = 0;
      for (float v : x) mx = std::max<double>(mx, v);
      for (float v : x) sum += std::exp(v - mx);
      for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(y[i], std::exp(x[i] - mx) / sum, 1e-6) << t->isa;

      EXPECT_NEAR(t->row_sum(x.data(), n), m * n, 1e-4 * n) << t->isa;
      EXPECT_EQ(t->row_max(x.data(), n), static_cast<float>(mx)) << t->isa;
      x[static_cast<size_t>(n / 2)] = std::numeric_limits<float>::quiet_NaN();
      EXPECT_TRUE(std::isnan(t->row_max(x.data(), n))) << t->isa << " n=" << n;

      for (int64_t cols : kSizes) {
        auto src = randv(static_cast<size_t>(n * cols), 6);
        std::vector<float> dst(src.size(), 0.0f);
        t->transpose_2d(src.data(), cols, dst.data(), n, n, cols);
        for (int64_t r = 0; r < n; ++r)
          for (int64_t c = 0; c < cols; ++c) ASSERT_EQ(dst[c * n + r], src[r * cols + c]) << t->isa;
      }
    }
  }
}

// row_range (DynamicQuantizeLinear's range): the exact minimum and maximum folded into the given
// ones, and false for a NaN or an infinity anywhere (the vector body or the tail).
// BatchNorm's channels: the product rounded, then the sum (no FMA on any ISA), then the range;
// NaN stays NaN, -0 stays -0 at lo = 0, bit for bit against the scalar formula.
TEST(OptimizedMath, ScaleShiftClampRoundsTheProductThenTheSum) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float ranges[][2] = {{-inf, inf}, {0.0f, 6.0f}, {0.0f, inf}};
  for (const KernelTable* t : tables()) {
    for (int64_t n : kSizes) {
      std::vector<float> x = randv(static_cast<size_t>(n), 41, -3.0f, 3.0f), mul = randv(static_cast<size_t>(n), 42),
                         add = randv(static_cast<size_t>(n), 43), y(static_cast<size_t>(n));
      x[0] = nan;
      if (n > 2) {
        x[1] = -inf;
        x[2] = -0.0f;
        add[2] = -0.0f;
      }
      for (const auto& r : ranges) {
        t->scale_shift_clamp(x.data(), mul.data(), add.data(), r[0], r[1], y.data(), n);
        for (int64_t i = 0; i < n; ++i) {
          const volatile float product = x[i] * mul[i];  // rounded on its own
          float want = product + add[i];
          want = want < r[0] ? r[0] : want;
          want = want > r[1] ? r[1] : want;
          const float got = y[static_cast<size_t>(i)];
          if (std::isnan(want)) {
            EXPECT_TRUE(std::isnan(got)) << t->isa << " n " << n << " at " << i;
          } else {
            EXPECT_EQ(std::signbit(got), std::signbit(want)) << t->isa << " n " << n << " at " << i;
            EXPECT_EQ(got, want) << t->isa << " n " << n << " at " << i;
          }
        }
      }
    }
  }
}

TEST(OptimizedMath, RowRangeFindsTheExtremesAndReportsNonFiniteValues) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (const KernelTable* t : tables()) {
    for (int64_t n : kSizes) {
      auto x = randv(static_cast<size_t>(n), 8);
      float want_lo = 0.0f, want_hi = 0.0f;  // folded into 0, as DynamicQuantizeLinear's range
      for (float v : x) {
        want_lo = std::min(want_lo, v);
        want_hi = std::max(want_hi, v);
      }
      float lo = 0.0f, hi = 0.0f;
      EXPECT_TRUE(t->row_range(x.data(), n, &lo, &hi)) << t->isa << " n=" << n;
      EXPECT_EQ(lo, want_lo) << t->isa << " n=" << n;
      EXPECT_EQ(hi, want_hi) << t->isa << " n=" << n;
      for (float bad : {nan, inf, -inf})
        for (int64_t at : {int64_t{0}, n / 2, n - 1}) {
          std::vector<float> y = x;
          y[static_cast<size_t>(at)] = bad;
          float l = 0.0f, h = 0.0f;
          EXPECT_FALSE(t->row_range(y.data(), n, &l, &h)) << t->isa << " n=" << n << " " << bad << " at " << at;
        }
    }
  }
}

// max_pool_pixels: the strictly-greater rule (first of equal values, NaN never wins), and its
// report of -inf outputs, for every table over channel counts around the vector widths.
TEST(OptimizedMath, MaxPoolPixelsKeepsTheFirstGreatestAndSkipsNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (const KernelTable* t : tables()) {
    for (int64_t c : kSizes) {
      const int64_t ntaps = 5, pixels = 3;
      std::vector<std::vector<float>> rows;
      for (int64_t r = 0; r < ntaps * pixels; ++r)
        rows.push_back(randv(static_cast<size_t>(c), 7 + static_cast<uint32_t>(r)));
      rows[1][0] = nan;                             // skipped
      rows[2][static_cast<size_t>(c - 1)] = 5.0f;   // wins its lane
      rows[3][static_cast<size_t>(c / 2)] = -0.0f;  // signed zeros: the first stays
      rows[4][static_cast<size_t>(c / 2)] = 0.0f;
      std::vector<const float*> taps;
      for (const auto& r : rows) taps.push_back(r.data());
      std::vector<float> out(static_cast<size_t>(pixels * c));
      EXPECT_FALSE(t->max_pool_pixels(taps.data(), ntaps, pixels, c, out.data(), c)) << t->isa << " c=" << c;
      for (int64_t p = 0; p < pixels; ++p) {
        for (int64_t j = 0; j < c; ++j) {
          float m = -inf;
          for (int64_t k = 0; k < ntaps; ++k) {
            const float v = rows[static_cast<size_t>(p * ntaps + k)][static_cast<size_t>(j)];
            if (v > m) m = v;
          }
          const float got = out[static_cast<size_t>(p * c + j)];
          ASSERT_EQ(std::signbit(got), std::signbit(m)) << t->isa << " c=" << c << " lane " << j;
          ASSERT_EQ(got, m) << t->isa << " c=" << c << " lane " << j;
        }
      }
      // One lane of NaN and -inf only: reported, so that the caller redoes it.
      for (int64_t k = 0; k < ntaps; ++k)
        rows[static_cast<size_t>(ntaps + k)][static_cast<size_t>(c - 1)] = k % 2 ? nan : -inf;
      EXPECT_TRUE(t->max_pool_pixels(taps.data(), ntaps, pixels, c, out.data(), c)) << t->isa << " c=" << c;
    }
  }
}

}  // namespace
}  // namespace xonnx
