// The rows of the own int8 depthwise convolution (runtime/ops/optimized/qdwconv.h): the AVX-512
// row and conversion kernels must be bit-identical to their scalar twins over odd shapes
// (channel tails, kernel sizes, strides, dilations, widths), and the twin must match the
// definition computed here in int64 from the 8-bit codes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "runtime/ops/optimized/qdwconv.h"

namespace xonnx {
namespace {

using opt::kQdwChannelBlock;

struct RowCase {
  int64_t valid, kh, kw, sw, dw, ow;
  bool x_signed, y_signed;
};

// One block's kh converted input rows of random codes, weights, bias and scales for one
// output row; the block sits at channel 5 of 40-channel pixels (out_stride 40).
constexpr int64_t kChannels = 40, kFirst = 5;

struct RowProblem {
  RowCase rc;
  int64_t wp = 0;
  std::vector<uint8_t> codes;            // [kh][wp][kChannels]
  std::vector<std::vector<float>> rows;  // [kh][wp][16], converted by the reference twin
  std::vector<const float*> row_ptrs;
  std::vector<float> weights, bias, scale;
  opt::QdwRow p;
};

RowProblem make(const RowCase& rc, uint32_t seed) {
  std::mt19937 gen(seed);
  RowProblem pr;
  pr.rc = rc;
  pr.wp = (rc.ow - 1) * rc.sw + (rc.kw - 1) * rc.dw + 1 + static_cast<int64_t>(seed % 3);  // slack columns
  pr.codes.resize(static_cast<size_t>(rc.kh * pr.wp * kChannels));
  for (uint8_t& v : pr.codes) v = static_cast<uint8_t>(gen());
  for (int64_t ky = 0; ky < rc.kh; ++ky) {
    pr.rows.emplace_back(static_cast<size_t>(pr.wp * kQdwChannelBlock), -1.0f);
    opt::qdw_convert_reference(pr.codes.data() + ky * pr.wp * kChannels + kFirst, pr.wp, kChannels, rc.valid,
                               rc.x_signed, pr.rows.back().data());
  }
  for (const auto& r : pr.rows) pr.row_ptrs.push_back(r.data());
  std::uniform_int_distribution<int> w8(-127, 127), b(-40000, 40000);
  pr.weights.assign(static_cast<size_t>(rc.kh * rc.kw * kQdwChannelBlock), 0.0f);
  pr.bias.assign(kQdwChannelBlock, 0.0f);
  pr.scale.assign(kQdwChannelBlock, 0.0f);
  const float base = 24.0f / (std::sqrt(static_cast<float>(rc.kh * rc.kw)) * 128.0f * 74.0f);
  for (int64_t j = 0; j < rc.valid; ++j) {
    for (int64_t t = 0; t < rc.kh * rc.kw; ++t)
      pr.weights[static_cast<size_t>(t * kQdwChannelBlock + j)] = static_cast<float>(w8(gen));
    pr.bias[static_cast<size_t>(j)] = static_cast<float>(b(gen));
    pr.scale[static_cast<size_t>(j)] = base * (0.5f + static_cast<float>(gen() % 100) / 50.0f);
  }
  opt::QdwRow& p = pr.p;
  p.rows = pr.row_ptrs.data();
  p.weights = pr.weights.data();
  p.bias = pr.bias.data();
  p.scale = pr.scale.data();
  p.kh = rc.kh;
  p.kw = rc.kw;
  p.sw = rc.sw;
  p.dw = rc.dw;
  p.valid = rc.valid;
  p.out_stride = kChannels;
  p.ow = rc.ow;
  p.zero_point = rc.y_signed ? -5 : 120;
  p.lo = rc.y_signed ? -128 : 0;
  p.hi = rc.y_signed ? 127 : 255;
  return pr;
}

constexpr uint8_t kSentinel = 0x5A;  // bytes of other blocks must keep it

std::vector<uint8_t> run(opt::QdwRowFn fn, const RowProblem& pr) {
  std::vector<uint8_t> out(static_cast<size_t>(pr.rc.ow * kChannels), kSentinel);
  fn(pr.p, out.data() + kFirst);
  return out;
}

// The definition from the codes: int64 sums, then qgemm.h's float requantization.
std::vector<uint8_t> naive(const RowProblem& pr) {
  const RowCase& rc = pr.rc;
  std::vector<uint8_t> out(static_cast<size_t>(rc.ow * kChannels), kSentinel);
  for (int64_t ox = 0; ox < rc.ow; ++ox) {
    for (int64_t j = 0; j < rc.valid; ++j) {
      int64_t acc = static_cast<int64_t>(pr.bias[static_cast<size_t>(j)]);
      for (int64_t ky = 0; ky < rc.kh; ++ky) {
        for (int64_t kx = 0; kx < rc.kw; ++kx) {
          const uint8_t code =
              pr.codes[static_cast<size_t>((ky * pr.wp + ox * rc.sw + kx * rc.dw) * kChannels + kFirst + j)];
          const int64_t x = rc.x_signed ? static_cast<int8_t>(code) : code;
          acc += x * static_cast<int64_t>(pr.weights[static_cast<size_t>((ky * rc.kw + kx) * kQdwChannelBlock + j)]);
        }
      }
      const float scaled = static_cast<float>(acc) * pr.scale[static_cast<size_t>(j)];
      const double q = std::nearbyint(double(scaled)) + pr.p.zero_point;
      out[static_cast<size_t>(ox * kChannels + kFirst + j)] =
          static_cast<uint8_t>(static_cast<int32_t>(std::min<double>(pr.p.hi, std::max<double>(pr.p.lo, q))));
    }
  }
  return out;
}

std::string first_difference(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want) {
  for (size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i])
      return "pixel " + std::to_string(i / kChannels) + " channel " + std::to_string(i % kChannels) + ": got " +
             std::to_string(got[i]) + " want " + std::to_string(want[i]);
  return "";
}

std::vector<RowCase> odd_cases() {
  std::vector<RowCase> cases;
  int i = 0;
  for (int64_t valid : {1, 3, 15, 16})
    for (auto [kh, kw] : {std::pair<int64_t, int64_t>{3, 3}, {5, 5}, {1, 3}, {7, 7}})
      for (int64_t sw : {1, 2})
        for (int64_t ow : {1, 3, 5, 13}) {
          ++i;
          cases.push_back({valid, kh, kw, sw, 1 + (i % 4 == 0), ow, i % 3 != 0, i % 2 == 0});
        }
  return cases;
}

std::string describe(const RowCase& rc) {
  return "valid " + std::to_string(rc.valid) + " k " + std::to_string(rc.kh) + "x" + std::to_string(rc.kw) + " s " +
         std::to_string(rc.sw) + " d " + std::to_string(rc.dw) + " ow " + std::to_string(rc.ow);
}

TEST(QdwConv, ReferenceMatchesNaiveInt64) {
  uint32_t seed = 1;
  int distinct = 0;
  for (const RowCase& rc : odd_cases()) {
    const RowProblem pr = make(rc, seed++);
    const std::vector<uint8_t> want = naive(pr);
    EXPECT_EQ(first_difference(run(opt::qdw_row_reference, pr), want), "") << describe(rc);
    for (size_t i = 1; i < want.size(); ++i) distinct += want[i] != want[i - 1] && want[i] != kSentinel;
  }
  EXPECT_GT(distinct, 1000) << "degenerate fixture: outputs barely vary";
}

TEST(QdwConv, FastRowIsBitIdenticalToReference) {
  const opt::QdwRowFn fast = opt::qdw_row_fast();
  if (!fast) GTEST_SKIP() << "no AVX-512 on this CPU (or XONNX_OPT_ISA below avx512)";
  uint32_t seed = 500;
  int cases = 0;
  for (const RowCase& rc : odd_cases()) {
    const RowProblem pr = make(rc, seed++);
    EXPECT_EQ(first_difference(run(fast, pr), run(opt::qdw_row_reference, pr)), "") << describe(rc);
    ++cases;
  }
  EXPECT_EQ(cases, 4 * 4 * 2 * 4);
}

TEST(QdwConv, FastConvertIsBitIdenticalToReference) {
  const opt::QdwConvertFn fast = opt::qdw_convert_fast();
  if (!fast) GTEST_SKIP() << "no AVX-512 on this CPU";
  std::mt19937 gen(9);
  for (int64_t valid : {1, 3, 15, 16}) {
    for (int64_t w : {1, 2, 7, 33}) {
      for (bool is_signed : {false, true}) {
        std::vector<uint8_t> src(static_cast<size_t>(w * kChannels));
        for (uint8_t& v : src) v = static_cast<uint8_t>(gen());
        std::vector<float> a(static_cast<size_t>((w + 1) * kQdwChannelBlock), -7.0f), b = a;
        fast(src.data() + kFirst, w, kChannels, valid, is_signed, a.data());
        opt::qdw_convert_reference(src.data() + kFirst, w, kChannels, valid, is_signed, b.data());
        EXPECT_EQ(a, b) << "valid " << valid << " w " << w << (is_signed ? " int8" : " uint8");
        EXPECT_EQ(a[static_cast<size_t>(w * kQdwChannelBlock)], -7.0f) << "wrote past the row";
      }
    }
  }
}

}  // namespace
}  // namespace xonnx
