// The int8 GEMM of the own QLinearConv (runtime/ops/optimized/qgemm.h): the AVX512-VNNI kernel
// must be bit-identical to qgemm_reference over odd shapes (register-tile and panel edges,
// depth tails), and the reference must match a naive int64 sum with the same float
// requantization computed here from the unpacked weights.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "runtime/ops/optimized/qgemm.h"

namespace xonnx {
namespace {

using opt::QgemmRequant;
using opt::QgemmWeights;

constexpr uint8_t kPaddingSentinel = 0xA5;  // C bytes past n (ldc padding) must keep it

// One random problem: A [m][lda] (zeros past k), W [n][k], per-column offsets and scales.
struct Problem {
  size_t m = 0, lda = 0, ldc = 0;
  int64_t n = 0, k = 0;
  std::vector<uint8_t> a;
  std::vector<int8_t> w;
  std::vector<int32_t> offset;
  std::vector<float> scale;
  QgemmWeights packed;
  QgemmRequant rq;
};

// Scales put the typical sum (~sqrt(k) * 128 * 74) a few dozen steps from the zero point, so
// the outputs span the range and some saturate.
Problem make_problem(size_t m, int64_t k, int64_t n, int32_t zero_point, int32_t lo, int32_t hi, uint32_t seed,
                     size_t lda_pad = 0, size_t ldc_pad = 0, bool a_signed = false) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> u8(0, 255), s8(-128, 127);
  std::uniform_real_distribution<float> spread(0.25f, 2.0f);
  Problem p;
  p.m = m;
  p.n = n;
  p.k = k;
  const int64_t k4 = (k + 3) / 4 * 4;
  p.lda = static_cast<size_t>(k4) + lda_pad;
  p.ldc = static_cast<size_t>(n) + ldc_pad;
  p.a.assign(m * p.lda, 0);
  for (size_t r = 0; r < m; ++r)
    for (int64_t kk = 0; kk < k; ++kk) p.a[r * p.lda + static_cast<size_t>(kk)] = static_cast<uint8_t>(u8(gen));
  // Bytes past k4 inside lda are not part of the problem: garbage there must not matter.
  for (size_t r = 0; r < m; ++r)
    for (size_t kk = static_cast<size_t>(k4); kk < p.lda; ++kk) p.a[r * p.lda + kk] = static_cast<uint8_t>(u8(gen));
  p.w.resize(static_cast<size_t>(n * k));
  for (int8_t& v : p.w) v = static_cast<int8_t>(s8(gen));
  p.packed = opt::pack_qgemm_weights(p.w.data(), n, k);
  const float base = 32.0f / (std::sqrt(static_cast<float>(k)) * 128.0f * 74.0f);
  std::uniform_int_distribution<int32_t> off(-200000, 200000);
  for (int64_t c = 0; c < n; ++c) {
    p.offset.push_back(off(gen));
    p.scale.push_back(base * spread(gen));
  }
  p.rq.offset = p.offset.data();
  p.rq.scale = p.scale.data();
  p.rq.zero_point = zero_point;
  p.rq.lo = lo;
  p.rq.hi = hi;
  p.rq.a_signed = a_signed;
  return p;
}

std::vector<uint8_t> run(opt::QgemmFn fn, const Problem& p) {
  std::vector<uint8_t> c(p.m * p.ldc, kPaddingSentinel);
  fn(p.a.data(), p.lda, p.m, p.packed, p.rq, c.data(), p.ldc);
  return c;
}

// The definition (qgemm.h), from the unpacked weights: int64 sum, float requantization.
std::vector<uint8_t> naive(const Problem& p) {
  std::vector<uint8_t> c(p.m * p.ldc, kPaddingSentinel);
  for (size_t r = 0; r < p.m; ++r) {
    for (int64_t col = 0; col < p.n; ++col) {
      int64_t acc = 0;
      for (int64_t kk = 0; kk < p.k; ++kk)
        acc += int64_t(p.a[r * p.lda + static_cast<size_t>(kk)] ^ (p.rq.a_signed ? 0x80 : 0)) *
               p.w[static_cast<size_t>(col * p.k + kk)];
      acc += p.offset[static_cast<size_t>(col)];
      const float scaled = static_cast<float>(acc) * p.scale[static_cast<size_t>(col)];
      const double q = std::nearbyint(double(scaled)) + p.rq.zero_point;
      const double clamped = std::min<double>(p.rq.hi, std::max<double>(p.rq.lo, q));
      c[r * p.ldc + static_cast<size_t>(col)] = static_cast<uint8_t>(static_cast<int32_t>(clamped));
    }
  }
  return c;
}

// First mismatch as "row r col c: got x want y", or "" when equal.
std::string first_difference(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want, const Problem& p) {
  for (size_t i = 0; i < want.size(); ++i) {
    if (got[i] != want[i]) {
      return "row " + std::to_string(i / p.ldc) + " col " + std::to_string(i % p.ldc) + ": got " +
             std::to_string(got[i]) + " want " + std::to_string(want[i]);
    }
  }
  return "";
}

// Output ranges: int8, uint8, and a narrowed one (a fused Relu / Clip style clamp).
struct Range {
  int32_t zero_point, lo, hi;
};
constexpr Range kRanges[] = {{-3, -128, 127}, {131, 0, 255}, {-128, -128, 127}, {10, 10, 200}};

TEST(Qgemm, PackLayoutAndColumnSums) {
  const int64_t n = 33, k = 5;
  std::vector<int8_t> w(static_cast<size_t>(n * k));
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int8_t>(static_cast<int>(i * 37 % 256) - 128);
  const QgemmWeights p = opt::pack_qgemm_weights(w.data(), n, k);
  EXPECT_EQ(p.n, n);
  EXPECT_EQ(p.k, k);
  EXPECT_EQ(p.k4, 8);
  ASSERT_EQ(p.packed.size(), static_cast<size_t>(2 * 8 * opt::kQgemmNr));  // two panels
  ASSERT_EQ(p.column_sums.size(), static_cast<size_t>(n));
  for (int64_t col = 0; col < n; ++col) {
    int32_t sum = 0;
    for (int64_t kk = 0; kk < k; ++kk) {
      const int8_t v = w[static_cast<size_t>(col * k + kk)];
      sum += v;
      const size_t at = static_cast<size_t>((col / 32) * 8 * 32 + (kk / 4) * 32 * 4 + (col % 32) * 4 + kk % 4);
      EXPECT_EQ(p.packed[at], v) << "col " << col << " k " << kk;
    }
    EXPECT_EQ(p.column_sums[static_cast<size_t>(col)], sum) << "col " << col;
  }
  int nonzero_padding = 0;  // depth 5..7 and columns 33..63 are zero
  for (int64_t col = 0; col < 64; ++col)
    for (int64_t kk = 0; kk < 8; ++kk)
      if (col >= n || kk >= k)
        nonzero_padding +=
            p.packed[static_cast<size_t>((col / 32) * 8 * 32 + (kk / 4) * 128 + (col % 32) * 4 + kk % 4)] != 0;
  EXPECT_EQ(nonzero_padding, 0);
}

TEST(Qgemm, ReferenceMatchesNaiveInt64) {
  struct Shape {
    size_t m;
    int64_t k, n;
  };
  const Shape shapes[] = {{1, 1, 1}, {3, 13, 17}, {9, 576, 33}, {8, 4, 32}, {13, 127, 100}, {2, 64, 64}};
  uint32_t seed = 1;
  for (const Shape& s : shapes) {
    for (const Range& r : kRanges) {
      for (bool a_signed : {false, true}) {
        const Problem p = make_problem(s.m, s.k, s.n, r.zero_point, r.lo, r.hi, seed++, 3, 5, a_signed);
        SCOPED_TRACE("m " + std::to_string(s.m) + " k " + std::to_string(s.k) + " n " + std::to_string(s.n) + " zp " +
                     std::to_string(r.zero_point) + (a_signed ? " int8 A" : " uint8 A"));
        const std::vector<uint8_t> want = naive(p);
        EXPECT_EQ(first_difference(run(opt::qgemm_reference, p), want, p), "");
      }
    }
  }
}

// The fixture is not degenerate: outputs take many values, and some saturate at both ends.
TEST(Qgemm, ProblemsSpanTheOutputRange) {
  const Problem p = make_problem(64, 576, 64, 0, -128, 127, 7);
  const std::vector<uint8_t> c = naive(p);
  int lo = 0, hi = 0;
  std::vector<bool> seen(256, false);
  for (uint8_t v : c) {
    lo += static_cast<int8_t>(v) == -128;
    hi += static_cast<int8_t>(v) == 127;
    seen[v] = true;
  }
  EXPECT_GT(lo, 0);
  EXPECT_GT(hi, 0);
  EXPECT_GT(std::count(seen.begin(), seen.end(), true), 100);
}

TEST(Qgemm, FastIsBitIdenticalToReferenceOverOddShapes) {
  const opt::QgemmFn fast = opt::qgemm_fast();
  if (!fast) GTEST_SKIP() << "no AVX512-VNNI on this CPU (or XONNX_OPT_ISA below avx512)";
  const size_t ms[] = {1, 3, 7, 8, 9, 13, 64, 127};
  const int64_t ks[] = {1, 3, 4, 13, 64, 127, 576};
  const int64_t ns[] = {1, 3, 16, 17, 31, 32, 33, 64, 100};
  uint32_t seed = 100;
  int cases = 0;
  for (size_t m : ms) {
    for (int64_t k : ks) {
      for (int64_t n : ns) {
        const Range& r = kRanges[seed % 4];
        const size_t lda_pad = seed % 3 == 0 ? 0 : 4 * (seed % 3) + 1, ldc_pad = seed % 2 ? 7 : 0;
        const bool a_signed = seed % 5 < 2;  // int8 activations, read as A + 128
        const Problem p = make_problem(m, k, n, r.zero_point, r.lo, r.hi, seed++, lda_pad, ldc_pad, a_signed);
        const std::string diff = first_difference(run(fast, p), run(opt::qgemm_reference, p), p);
        EXPECT_EQ(diff, "") << "m " << m << " k " << k << " n " << n << " lda " << p.lda << " ldc " << p.ldc << " zp "
                            << r.zero_point << " [" << r.lo << ", " << r.hi << "] a_signed " << a_signed;
        ++cases;
      }
    }
  }
  EXPECT_EQ(cases, 8 * 7 * 9);
}

// Every range, including uint8 and narrowed clamps, on shapes with all tile remainders.
TEST(Qgemm, FastIsBitIdenticalForEveryOutputRange) {
  const opt::QgemmFn fast = opt::qgemm_fast();
  if (!fast) GTEST_SKIP() << "no AVX512-VNNI on this CPU";
  uint32_t seed = 5000;
  for (const Range& r : kRanges) {
    for (size_t m : {1u, 5u, 15u, 16u, 23u}) {
      const Problem p = make_problem(m, 27, 48, r.zero_point, r.lo, r.hi, seed++);
      EXPECT_EQ(first_difference(run(fast, p), run(opt::qgemm_reference, p), p), "")
          << "m " << m << " zp " << r.zero_point << " [" << r.lo << ", " << r.hi << "]";
    }
  }
}

// float_out: C = float(sum + offset) * scale, bit-identical in both kernels, equal to the
// int64 sum scaled in float.
TEST(Qgemm, FloatOutputIsBitIdenticalAndExact) {
  uint32_t seed = 9000;
  for (size_t m : {1u, 4u, 12u, 13u}) {
    for (int64_t k : {5, 64, 1280}) {
      for (int64_t n : {1, 17, 40}) {
        const bool a_signed = seed % 2 == 0;
        Problem p = make_problem(m, k, n, 0, -128, 127, seed++, 4, 3, a_signed);
        p.rq.float_out = true;
        auto run_float = [&](opt::QgemmFn fn) {
          std::vector<float> c(p.m * p.ldc, -7.0f);
          fn(p.a.data(), p.lda, p.m, p.packed, p.rq, reinterpret_cast<uint8_t*>(c.data()), p.ldc);
          return c;
        };
        const std::vector<float> ref = run_float(opt::qgemm_reference);
        for (size_t r = 0; r < m; ++r) {
          for (int64_t col = 0; col < static_cast<int64_t>(p.ldc); ++col) {
            const float got = ref[r * p.ldc + static_cast<size_t>(col)];
            if (col >= n) {
              EXPECT_EQ(got, -7.0f) << "wrote past n";
              continue;
            }
            int64_t acc = p.offset[static_cast<size_t>(col)];
            for (int64_t kk = 0; kk < k; ++kk)
              acc += int64_t(p.a[r * p.lda + static_cast<size_t>(kk)] ^ (p.rq.a_signed ? 0x80 : 0)) *
                     p.w[static_cast<size_t>(col * k + kk)];
            EXPECT_EQ(got, static_cast<float>(acc) * p.scale[static_cast<size_t>(col)]) << "m " << m << " k " << k;
          }
        }
        if (const opt::QgemmFn fast = opt::qgemm_fast()) {
          EXPECT_EQ(run_float(fast), ref) << "m " << m << " k " << k << " n " << n;
        }
      }
    }
  }
}

// Requantization ties (x.5 after scaling) round half to even in both kernels.
TEST(Qgemm, RoundingTiesAreHalfToEvenInBothKernels) {
  Problem p = make_problem(9, 8, 20, 0, -128, 127, 77);
  for (float& s : p.scale) s = 0.5f;  // odd sums land exactly on .5
  for (int32_t& o : p.offset) o = 0;
  // Small A and W keep |sum| * 0.5 inside the range.
  for (uint8_t& v : p.a) v = static_cast<uint8_t>(v % 5);
  for (int8_t& v : p.w) v = static_cast<int8_t>(v % 4);
  p.packed = opt::pack_qgemm_weights(p.w.data(), p.n, p.k);
  const std::vector<uint8_t> want = naive(p);
  EXPECT_EQ(first_difference(run(opt::qgemm_reference, p), want, p), "");
  int ties = 0;
  for (size_t r = 0; r < p.m; ++r)
    for (int64_t col = 0; col < p.n; ++col) {
      int32_t acc = 0;
      for (int64_t kk = 0; kk < p.k; ++kk) acc += p.a[r * p.lda + kk] * p.w[static_cast<size_t>(col * p.k + kk)];
      ties += acc % 2 != 0;
    }
  EXPECT_GT(ties, 10) << "degenerate: few ties";
  if (const opt::QgemmFn fast = opt::qgemm_fast()) {
    EXPECT_EQ(first_difference(run(fast, p), want, p), "");
  }
}

// Extreme depth and values: all-255 activations against all -128 / +127 weights (the largest
// int32 sums the 8-bit operands can make at this depth) saturate at the right end.
TEST(Qgemm, ExtremeOperandsSaturateCorrectly) {
  for (int8_t wv : {int8_t(-128), int8_t(127)}) {
    Problem p = make_problem(9, 576, 33, 0, -128, 127, 9);
    std::fill(p.a.begin(), p.a.end(), 0);
    for (size_t r = 0; r < p.m; ++r)
      for (int64_t kk = 0; kk < p.k; ++kk) p.a[r * p.lda + static_cast<size_t>(kk)] = 255;
    std::fill(p.w.begin(), p.w.end(), wv);
    p.packed = opt::pack_qgemm_weights(p.w.data(), p.n, p.k);
    for (float& s : p.scale) s = 1e-3f;
    for (int32_t& o : p.offset) o = 0;
    const std::vector<uint8_t> want = naive(p);
    EXPECT_EQ(want[0], wv < 0 ? 0x80 : 0x7f);
    EXPECT_EQ(first_difference(run(opt::qgemm_reference, p), want, p), "");
    if (const opt::QgemmFn fast = opt::qgemm_fast()) {
      EXPECT_EQ(first_difference(run(fast, p), want, p), "");
    }
  }
}

// A requantization scale so large that sum * scale leaves int32 (a degenerate y_scale): the
// definition saturates at hi for a positive sum and at lo for a negative one.
TEST(Qgemm, HugeScaleSaturatesTowardsTheSignOfTheSum) {
  Problem p = make_problem(8, 16, 32, 0, -128, 127, 11);
  for (float& s : p.scale) s = 1e30f;
  const std::vector<uint8_t> want = naive(p);
  EXPECT_EQ(first_difference(run(opt::qgemm_reference, p), want, p), "");
  if (const opt::QgemmFn fast = opt::qgemm_fast()) {
    EXPECT_EQ(first_difference(run(fast, p), want, p), "");
  }
}

}  // namespace
}  // namespace xonnx
