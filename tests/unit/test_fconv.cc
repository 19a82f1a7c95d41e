// The own fp32 NHWC convolution (runtime/ops/optimized/fconv.h, conv.cc): the AVX-512
// tile is bit-identical to its scalar twin over odd shapes (rows, columns, depth, taps, clamp
// ranges, NaN), and whole convolutions through Session match the reference path.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "runtime/exec/session.h"
#include "runtime/ops/optimized/fconv.h"
#include "runtime/ops/optimized/opt_util.h"
#include "tests/unit/graph_builder.h"
#include "tests/unit/op_test_util.h"
#include "tests/unit/test_optimized_common.h"

namespace xonnx {
namespace {

using opttest::same_bits;

using opt::kFconvCols;
using opt::kFconvRows;
using testing::attr_float;
using testing::attr_int;
using testing::attr_ints;
using testing::attr_string;

constexpr float kInf = std::numeric_limits<float>::infinity();

struct TileProblem {
  std::vector<float> inputs;  // taps * 12 rows of c values
  std::vector<const float*> a;
  std::vector<float> panel, bias;
  opt::FconvTile t;
};

TileProblem make_tile(int64_t rows, int64_t cols, int64_t c, int64_t taps, float lo, float hi, uint32_t seed,
                      bool with_nan) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  TileProblem p;
  p.inputs.resize(static_cast<size_t>(taps * kFconvRows * c));
  for (float& v : p.inputs) v = u(gen);
  if (with_nan) p.inputs[p.inputs.size() / 2] = std::numeric_limits<float>::quiet_NaN();
  for (int64_t i = 0; i < taps * kFconvRows; ++i) p.a.push_back(p.inputs.data() + i * c);
  p.panel.resize(static_cast<size_t>(taps * c * kFconvCols));
  for (float& v : p.panel) v = u(gen);
  p.bias.resize(kFconvCols);
  for (float& v : p.bias) v = u(gen);
  p.t.a = p.a.data();
  p.t.panel = p.panel.data();
  p.t.bias = p.bias.data();
  p.t.taps = taps;
  p.t.c = c;
  p.t.rows = rows;
  p.t.cols = cols;
  p.t.ldo = kFconvCols + 3;
  p.t.lo = lo;
  p.t.hi = hi;
  return p;
}

std::vector<float> run_tile(opt::FconvTileFn fn, TileProblem& p) {
  std::vector<float> out(static_cast<size_t>(kFconvRows * p.t.ldo + p.t.upper + 16), -99.0f);
  p.t.out = out.data();
  fn(p.t);
  return out;
}

TEST(Fconv, ReferenceTileMatchesADoubleSum) {
  TileProblem p = make_tile(5, 20, 7, 3, -kInf, kInf, 1, false);
  std::vector<float> z(static_cast<size_t>(kFconvRows * p.t.ldo));  // a residual, laid out as the output
  for (size_t i = 0; i < z.size(); ++i) z[i] = static_cast<float>(i) * 0.01f;
  p.t.residual = z.data();
  const std::vector<float> out = run_tile(opt::fconv_tile_reference, p);
  for (int64_t r = 0; r < kFconvRows; ++r) {
    for (int64_t j = 0; j < p.t.ldo; ++j) {
      const float got = out[static_cast<size_t>(r * p.t.ldo + j)];
      if (r >= 5 || j >= 20) {
        EXPECT_EQ(got, -99.0f) << "row " << r << " col " << j << " is outside the tile";
        continue;
      }
      double want = p.bias[static_cast<size_t>(j)] + z[static_cast<size_t>(r * p.t.ldo + j)];
      for (int64_t tap = 0; tap < 3; ++tap)
        for (int64_t ci = 0; ci < 7; ++ci)
          want += double(p.a[static_cast<size_t>(tap * kFconvRows + r)][ci]) *
                  p.panel[static_cast<size_t>((tap * 7 + ci) * kFconvCols + j)];
      EXPECT_NEAR(got, want, 1e-5) << "row " << r << " col " << j;
    }
  }
}

TEST(Fconv, FastTileIsBitIdenticalToReference) {
  const opt::FconvTileFn fast = opt::fconv_tile_fast();
  if (!fast) GTEST_SKIP() << "no AVX-512 on this CPU (or XONNX_OPT_ISA below avx512)";
  uint32_t seed = 10;
  int cases = 0;
  for (int64_t rows : {1, 3, 4, 5, 7, 8, 9, 11, 12})    // the 4-, 8- and 12-row tiles
    for (int64_t cols : {1, 8, 9, 16, 17, 24, 25, 32})  // columns 17-24 in 256 bits
      for (int64_t c : {1, 3, 16, 33})
        for (int64_t taps : {1, 9}) {
          const bool relu6 = seed % 3 == 0, nan = seed % 5 == 0, blocked = seed % 2 == 0, with_z = seed % 7 < 3;
          TileProblem p = make_tile(rows, cols, c, taps, relu6 ? 0.0f : -kInf, relu6 ? 6.0f : kInf, seed++, nan);
          if (blocked) {  // 16-channel blocks (the fused depthwise ring): columns 16-31 elsewhere
            p.t.ldo = 16;
            p.t.upper = 16 * kFconvRows + 7;
          }
          std::vector<float> z(static_cast<size_t>(kFconvRows * p.t.ldo + p.t.upper + 16));
          for (size_t i = 0; i < z.size(); ++i) z[i] = static_cast<float>(i % 13) * 0.37f - 2.0f;
          if (nan) z[3] = kInf;
          if (with_z) p.t.residual = z.data();  // a residual Z, laid out as the output
          TileProblem q = p;
          q.t.a = q.a.data();  // q's own copies
          q.t.panel = q.panel.data();
          q.t.bias = q.bias.data();
          for (size_t i = 0; i < q.a.size(); ++i) q.a[i] = q.inputs.data() + (p.a[i] - p.inputs.data());
          EXPECT_TRUE(same_bits(run_tile(fast, p), run_tile(opt::fconv_tile_reference, q)))
              << "rows " << rows << " cols " << cols << " c " << c << " taps " << taps << (nan ? " with NaN" : "")
              << (blocked ? " blocked" : "") << (with_z ? " with a residual" : "");
          ++cases;
        }
  EXPECT_EQ(cases, 9 * 8 * 4 * 2);
}

// restride_rows moves the pointers at rows of `base` to copies kFconvRowPad floats further
// apart, keeps the others (a zeros row), and declines a range longer than the buffer.
TEST(Fconv, RestrideRowsCopiesTheRangeItReads) {
  constexpr int64_t c = 1024, rows = 6, ld = c + opt::kFconvRowPad;
  std::vector<float> base(static_cast<size_t>(rows * c)), zeros(c, 0.0f);
  for (size_t i = 0; i < base.size(); ++i) base[i] = static_cast<float>(i);
  const std::vector<const float*> table{base.data() + 4 * c, zeros.data(), base.data() + 2 * c, base.data() + 3 * c};
  std::vector<float> buf(static_cast<size_t>(3 * ld), -1.0f);
  std::vector<const float*> moved(table.size(), nullptr);
  ASSERT_TRUE(opt::restride_rows(table.data(), 4, base.data(), rows, c, buf.data(), 3, moved.data()));
  EXPECT_EQ(moved[0], buf.data() + 2 * ld);
  EXPECT_EQ(moved[1], zeros.data());
  EXPECT_EQ(moved[2], buf.data());
  EXPECT_EQ(moved[3], buf.data() + ld);
  for (int64_t i = 0; i < c; ++i) ASSERT_EQ(moved[0][i], base[static_cast<size_t>(4 * c + i)]) << i;
  std::vector<const float*> untouched(table.size(), nullptr);
  EXPECT_FALSE(opt::restride_rows(table.data(), 4, base.data(), rows, c, buf.data(), 2, untouched.data()));
  EXPECT_EQ(untouched[0], nullptr);
  // Pointers past the rows of base (or into no row start) are not base's.
  const std::vector<const float*> foreign{base.data() + rows * c, base.data() + 7};
  EXPECT_FALSE(opt::restride_rows(foreign.data(), 2, base.data(), rows, c, buf.data(), 3, untouched.data()));
}

// A deep layer's taps run in chunks (conv.cc): the sums of the first chunk are stored unclamped
// and resumed by the next, which gives the bits of one run over all taps.
TEST(Fconv, TapsInChunksGiveTheBitsOfOneRun) {
  std::vector<std::pair<std::string, opt::FconvTileFn>> tiles{{"reference", opt::fconv_tile_reference}};
  if (opt::fconv_tile_fast()) tiles.emplace_back("avx512", opt::fconv_tile_fast());
  uint32_t seed = 40;
  for (const auto& [name, fn] : tiles)
    for (int64_t rows : {3, 8, 12})
      for (int64_t cols : {9, 16, 32})
        for (bool nan : {false, true}) {
          TileProblem p = make_tile(rows, cols, 7, 9, 0.0f, 6.0f, seed++, nan);
          const std::vector<float> whole = run_tile(fn, p);
          std::vector<float> out(whole.size(), -99.0f);
          opt::FconvTile first = p.t;  // taps 0-3, unclamped
          first.out = out.data();
          first.taps = 4;
          first.lo = -kInf;
          first.hi = kInf;
          fn(first);
          opt::FconvTile rest = p.t;  // taps 4-8 from those sums
          rest.out = out.data();
          rest.taps = 5;
          rest.a += 4 * kFconvRows;
          rest.panel += 4 * 7 * kFconvCols;
          rest.resume = true;
          fn(rest);
          EXPECT_TRUE(same_bits(whole, out)) << name << " rows " << rows << " cols " << cols << (nan ? " NaN" : "");
        }
}

// Taps marked in padding_taps (every row reads the zero row) are skipped by both tiles alike;
// the sums equal those of multiplying the zeros (up to the sign of an exact zero).
TEST(Fconv, PaddingTapsAreSkippedAlike) {
  std::vector<std::pair<std::string, opt::FconvTileFn>> tiles{{"reference", opt::fconv_tile_reference}};
  if (opt::fconv_tile_fast()) tiles.emplace_back("avx512", opt::fconv_tile_fast());
  uint32_t seed = 70;
  const std::vector<float> zeros(33, 0.0f);
  for (int64_t rows : {3, 8, 12})
    for (int64_t cols : {9, 32}) {
      TileProblem p = make_tile(rows, cols, 33, 9, -kInf, kInf, seed++, false);
      for (int64_t tap : {0, 4, 8})
        for (int64_t r = 0; r < kFconvRows; ++r) p.a[static_cast<size_t>(tap * kFconvRows + r)] = zeros.data();
      std::vector<float> multiplied = run_tile(opt::fconv_tile_reference, p);
      p.t.padding_taps = (1u << 0) | (1u << 4) | (1u << 8);
      const std::vector<float> skipped = run_tile(opt::fconv_tile_reference, p);
      for (size_t i = 0; i < skipped.size(); ++i) ASSERT_EQ(skipped[i], multiplied[i]) << "element " << i;
      for (const auto& [name, fn] : tiles)
        EXPECT_TRUE(same_bits(run_tile(fn, p), skipped)) << name << " rows " << rows << " cols " << cols;
    }
}

// ---- whole convolutions through Session --------------------------------------------------

struct ConvCase {
  std::string what;
  int64_t n = 1, c = 8, m = 16, h = 9, w = 7, k = 3, stride = 1, dilation = 1, pad = 1;
  std::string auto_pad;
  bool relu6 = false, bias = true;
  // "Swish": Conv -> Mul(y, Sigmoid(y)); "HardSwish": Conv -> Mul(HardSigmoid(y), y). The layout
  // pass fuses either as the Conv's activation attribute.
  std::string gate;
  int64_t group = 1;
  bool static_shape = false;  // the graph declares x's shape: kernels pick their packing at creation
  float weight_special = 0;   // non-zero: W's first value (inf or NaN)
  float tolerance = 1e-4f;    // relative to max(1, |reference|)
};

// what, batch, channels in and out, height, width, kernel, stride, dilation, pads.
ConvCase conv_case(std::string what, int64_t n, int64_t c, int64_t m, int64_t h, int64_t w, int64_t k, int64_t stride,
                   int64_t dilation, int64_t pad) {
  ConvCase cc;
  cc.what = std::move(what);
  cc.n = n;
  cc.c = c;
  cc.m = m;
  cc.h = h;
  cc.w = w;
  cc.k = k;
  cc.stride = stride;
  cc.dilation = dilation;
  cc.pad = pad;
  return cc;
}

Model build(const ConvCase& cc) {
  testing::GraphBuilder b;
  b.input("x");
  std::mt19937 gen(static_cast<uint32_t>(cc.c * 100 + cc.m));
  std::uniform_real_distribution<float> u(-0.5f, 0.5f);
  std::vector<float> w(static_cast<size_t>(cc.m * cc.c / cc.group * cc.k * cc.k)), bias(static_cast<size_t>(cc.m));
  for (float& v : w) v = u(gen);
  for (float& v : bias) v = u(gen);
  if (cc.weight_special != 0) w[0] = cc.weight_special;
  if (cc.static_shape) {
    TypeInfo& x = b.model.graph.inputs[0].type;
    x.has_shape = true;
    x.dims = {Dim{cc.n, ""}, Dim{cc.c, ""}, Dim{cc.h, ""}, Dim{cc.w, ""}};
  }
  std::vector<std::string> ins = {"x", b.constant(Tensor::from_vector<float>(w, {cc.m, cc.c / cc.group, cc.k, cc.k}))};
  if (cc.bias) ins.push_back(b.constant(Tensor::from_vector<float>(bias, {cc.m})));
  std::vector<Attribute> attrs = {attr_ints("kernel_shape", {cc.k, cc.k}), attr_ints("strides", {cc.stride, cc.stride}),
                                  attr_ints("dilations", {cc.dilation, cc.dilation}), attr_int("group", cc.group)};
  if (cc.auto_pad.empty()) {
    attrs.push_back(attr_ints("pads", {cc.pad, cc.pad, cc.pad, cc.pad}));
  } else {
    attrs.push_back(attr_string("auto_pad", cc.auto_pad));
  }
  std::string y = b.node("Conv", ins, attrs, cc.relu6 || !cc.gate.empty() ? "" : "y");
  if (cc.relu6)
    b.node("Clip", {y, b.constant(Tensor::scalar<float>(0.0f)), b.constant(Tensor::scalar<float>(6.0f))}, {}, "y");
  if (cc.gate == "Swish") b.node("Mul", {y, b.node("Sigmoid", {y})}, {}, "y");
  if (cc.gate == "HardSwish")
    b.node("Mul", {b.node("HardSigmoid", {y}, {attr_float("alpha", 1.0f / 6.0f)}), y}, {}, "y");
  b.output("y");
  return b.model;
}

Tensor input_for(const ConvCase& cc, bool specials) {
  std::mt19937 gen(3);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  std::vector<float> v(static_cast<size_t>(cc.n * cc.c * cc.h * cc.w));
  for (float& f : v) f = u(gen);
  if (specials) {
    v[v.size() / 3] = std::numeric_limits<float>::quiet_NaN();
    v[v.size() / 2] = kInf;
  }
  return Tensor::from_vector<float>(v, {cc.n, cc.c, cc.h, cc.w});
}

Tensor run(const ConvCase& cc, SessionOptions options, bool specials, bool* own_ran) {
  auto s = Session::create_from_model(build(cc), options);
  EXPECT_TRUE(s.is_ok()) << s.status().to_string();
  if (!s.is_ok()) return Tensor();
  Profiler profiler;
  (*s)->set_profiler(&profiler);
  auto out = (*s)->run({Value(input_for(cc, specials))});
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  if (!out.is_ok()) return Tensor();
  for (const Profiler::Entry& e : profiler.entries())
    if ((e.op_type == "com.xonnx.nhwc:Conv" || e.op_type == "com.xonnx.nhwc:ConvNchwInput") &&
        e.backend == Backend::kOptimized)
      *own_ran = true;
  return (*out)[0].tensor();
}

void check(const ConvCase& cc, bool specials = false) {
  SCOPED_TRACE(cc.what + (specials ? " (NaN and inf in the input)" : ""));
  SessionOptions fast, reference;
  reference.disable_xnnpack = true;
  bool own = false, unused = false;
  const Tensor a = run(cc, fast, specials, &own);
  const Tensor b = run(cc, reference, specials, &unused);
  ASSERT_TRUE(a.defined() && b.defined());
  ASSERT_EQ(a.shape(), b.shape());
  if (opt::fconv_tile_fast()) {
    EXPECT_TRUE(own) << "the own fp32 Conv did not run";
  }
  int64_t nan_count = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const float x = a.data<float>()[i], y = b.data<float>()[i];
    ASSERT_EQ(std::isnan(x), std::isnan(y)) << "element " << i << ": " << x << " vs " << y;
    nan_count += std::isnan(x);
    if (std::isnan(x) || std::isinf(y)) {
      if (!std::isnan(x)) {
        EXPECT_EQ(x, y) << "element " << i;
      }
      continue;
    }
    EXPECT_NEAR(x, y, cc.tolerance * std::max(1.0f, std::fabs(y))) << "element " << i;
  }
  if (specials) {
    EXPECT_GT(nan_count, 0) << "the NaN did not reach the output";
  }
}

// The kernel on 2 threads gives the bits it gives on 1.
void expect_same_bits_on_two_threads(const ConvCase& cc) {
  SessionOptions one, two;
  two.num_threads = 2;
  bool own = false;
  const Tensor a = run(cc, one, false, &own);
  const Tensor b = run(cc, two, false, &own);
  ASSERT_TRUE(a.defined() && b.defined());
  ASSERT_EQ(a.shape(), b.shape());
  for (int64_t i = 0; i < a.numel(); ++i) ASSERT_EQ(a.data<float>()[i], b.data<float>()[i]) << "element " << i;
}

TEST(ConvF32Nhwc, Shapes) {
  check(conv_case("3x3 pads 1, 8 -> 16", 1, 8, 16, 9, 7, 3, 1, 1, 1));
  check(conv_case("3x3 stride 2, 13 -> 33", 1, 13, 33, 11, 10, 3, 2, 1, 1));
  check(conv_case("3x3 dilation 2 pads 2, 8 -> 17", 1, 8, 17, 12, 9, 3, 1, 2, 2));
  check(conv_case("1x1, 64 -> 40", 1, 64, 40, 9, 11, 1, 1, 1, 0));
  check(conv_case("7x7 stride 2 pads 3, 3 -> 64 (stem)", 1, 3, 64, 32, 32, 7, 2, 1, 3));
  check(conv_case("batch 2, 5 -> 12", 2, 5, 12, 10, 13, 3, 1, 1, 1));
  check(conv_case("1 channel in and out", 1, 1, 1, 6, 5, 3, 1, 1, 1));
  // Up to 31 channels the kw taps of a kernel row run as one (a zero-padded copy); 32 do not.
  check(conv_case("3x3 pads 1, 31 -> 20 (merged rows)", 1, 31, 20, 8, 9, 3, 1, 1, 1));
  check(conv_case("3x3 pads 1, 32 -> 20 (a tap per kernel column)", 1, 32, 20, 8, 9, 3, 1, 1, 1));
  // 3x3 stride 1 from 16 channels in and out: Winograd F(2x2, 3x3) (test_fwinograd.cc).
  check(conv_case("3x3 pads 1, 16 -> 40 (Winograd)", 2, 16, 40, 11, 8, 3, 1, 1, 1));
  check(conv_case("3x3 no pads, 24 -> 16 (Winograd)", 1, 24, 16, 7, 10, 3, 1, 1, 0));
  // Dilated: Winograd over the grid's dh x dw phases (test_fwinograd.cc), 4 phases of unequal
  // sizes, and 9 of them on a map where many tiles stick out.
  check(conv_case("3x3 dilation 2 pads 2 on 13x11, 16 -> 40 (Winograd, 4 phases)", 1, 16, 40, 13, 11, 3, 1, 2, 2));
  check(conv_case("3x3 dilation 3 pads 3 on 17x16, 32 -> 24 (Winograd, 9 phases)", 2, 32, 24, 17, 16, 3, 1, 3, 3));
  // 9 taps of 256 channels: 288 KB panels, run as taps 0-7 and then tap 8 (kPanelChunkBytes).
  check(conv_case("3x3 stride 2 pads 1, 256 -> 272 (taps in two chunks)", 1, 256, 272, 11, 9, 3, 2, 1, 1));
  // Taps reaching far past the border read only padding for whole tiles, which skip them:
  // DeepLabV3's ASPP (dilation 12 over 20 x 20), also with its taps in chunks, and a 5x5 kernel.
  check(conv_case("3x3 dilation 12 pads 12 on 20x20, 40 -> 24 (padding taps)", 1, 40, 24, 20, 20, 3, 1, 12, 12));
  check(conv_case("3x3 dilation 6 pads 6 on 9x13, 256 -> 40 (padding taps in chunks)", 1, 256, 40, 9, 13, 3, 1, 6, 6));
  check(conv_case("5x5 pads 2 on 5x6, 48 -> 33 (padding taps)", 1, 48, 33, 5, 6, 5, 1, 1, 2));
  // Pixels 4 KB apart run from a copy with a wider pixel stride (fconv_rows_alias).
  check(conv_case("1x1, 1024 -> 40 (re-strided input)", 2, 1024, 40, 5, 3, 1, 1, 1, 0));
  check(conv_case("3x3 stride 2 pads 1, 1024 -> 33 (re-strided input, border taps)", 1, 1024, 33, 7, 6, 3, 2, 1, 1));
}

// A Winograd layer runs maps too small for its tiles on the direct tiles, whose weights it
// packs at the first such run, and switches to F(4x4) at the first map large enough; one
// session takes all kinds of map in turn. 288 -> 48 (Winograd weights over 1 MB) also takes
// the direct tiles on maps of fewer than 24 tiles, drops its Winograd weights when its first
// run is such a map and packs them again for a larger one.
TEST(ConvF32Nhwc, WinogradLayerRunsSmallMapsDirect) {
  using Maps = std::vector<std::pair<int64_t, int64_t>>;
  const std::vector<std::pair<int64_t, Maps>> layers{
      {64, {{9, 8}, {2, 2}, {9, 8}, {16, 17}, {9, 8}, {3, 3}, {1, 5}, {30, 14}, {2, 2}}},
      {288, {{7, 7}, {9, 8}, {12, 10}, {7, 7}, {16, 17}, {7, 7}}}};
  for (const auto& [c, maps] : layers) {
    const ConvCase cc = conv_case("3x3 pads 1", 1, c, 48, 0, 0, 3, 1, 1, 1);
    SessionOptions reference;
    reference.disable_xnnpack = true;
    auto fast = Session::create_from_model(build(cc), SessionOptions());
    auto ref = Session::create_from_model(build(cc), reference);
    ASSERT_TRUE(fast.is_ok() && ref.is_ok());
    std::mt19937 gen(9);
    std::uniform_real_distribution<float> u(-2.0f, 2.0f);
    for (const auto& [h, w] : maps) {
      SCOPED_TRACE(::testing::Message() << c << " -> 48 on " << h << "x" << w);
      std::vector<float> v(static_cast<size_t>(c * h * w));
      for (float& f : v) f = u(gen);
      const Tensor x = Tensor::from_vector<float>(v, {1, c, h, w});
      auto a = (*fast)->run({Value(x)});
      auto b = (*ref)->run({Value(x)});
      ASSERT_TRUE(a.is_ok() && b.is_ok());
      const Tensor& ta = (*a)[0].tensor();
      const Tensor& tb = (*b)[0].tensor();
      ASSERT_EQ(ta.shape(), tb.shape());
      // F(4x4) rounds to ~1e-6 of an output's sum of |terms| (test_fwinograd.cc), here up to
      // 2592: a loose bound; the transforms' own tests bound it tightly.
      for (int64_t i = 0; i < ta.numel(); ++i)
        ASSERT_NEAR(ta.data<float>()[i], tb.data<float>()[i], 1e-3f * std::max(1.0f, std::fabs(tb.data<float>()[i])))
            << "element " << i;
    }
  }
}

// With x's shape declared, a Winograd layer packs at session creation the weights its map
// takes (WinogradConvF32::tile_for: F(4x4), F(2x2) or the direct tiles) instead of F(2x2)
// until a run shows the map; without, nothing until the first run. Both give the reference's
// results, and a non-finite weight still sends the layer to the reference kernel.
TEST(ConvF32Nhwc, StaticShapesPickTheWinogradTilesAtCreation) {
  for (bool declared : {true, false}) {
    for (const auto& [h, w] : std::vector<std::pair<int64_t, int64_t>>{{30, 28}, {9, 8}, {2, 2}}) {
      ConvCase cc = conv_case(
          std::string(declared ? "static " : "dynamic ") + std::to_string(h) + "x" + std::to_string(w) + ", 64 -> 48",
          1, 64, 48, h, w, 3, 1, 1, 1);
      cc.static_shape = declared;
      // F(4x4) rounds to ~1e-6 of an output's sum of |terms| (test_fwinograd.cc), here up to 576.
      cc.tolerance = 1e-3f;
      check(cc);
    }
  }
  for (bool declared : {true, false}) {
    ConvCase cc = conv_case(declared ? "inf in W, static" : "inf in W, dynamic", 1, 64, 48, 9, 8, 3, 1, 1, 1);
    cc.static_shape = declared;
    cc.weight_special = kInf;
    bool own = false;
    const Tensor a = run(cc, SessionOptions(), false, &own);
    EXPECT_TRUE(a.defined());
    EXPECT_FALSE(own) << cc.what << ": the own Conv should decline a non-finite W";
  }
}

TEST(ConvF32Nhwc, FusedRelu6NoBiasAndSamePadding) {
  ConvCase cc = conv_case("SAME_UPPER stride 2 + Relu6, no bias", 1, 16, 24, 15, 14, 3, 2, 1, 0);
  cc.auto_pad = "SAME_UPPER";
  cc.relu6 = true;
  cc.bias = false;
  check(cc);
}

TEST(ConvF32Nhwc, NanAndInfPropagateAsInTheReference) {
  // 16 -> 24 takes the Winograd path, which hands inputs with inf / NaN to the reference.
  for (ConvCase cc : {conv_case("3x3, 8 -> 16", 1, 8, 16, 9, 7, 3, 1, 1, 1),
                      conv_case("3x3, 16 -> 24 (Winograd)", 1, 16, 24, 9, 7, 3, 1, 1, 1)}) {
    check(cc, true);
    cc.relu6 = true;
    cc.what += " + Relu6";
    check(cc, true);
  }
}

// Each output comes from one tile in one order, however the blocks and panels are split: two
// threads give the same bits as one (few pixels: the panels are split across threads too).
// The depthwise kernel with few output rows splits the channel blocks over the threads and
// applies the fused gate to each thread's channels of a row.
TEST(ConvF32Nhwc, TwoThreadsGiveTheSameBits) {
  ConvCase depthwise = conv_case("depthwise 5x5 + Swish, 400 channels, 7 rows", 1, 400, 400, 7, 14, 5, 1, 1, 2);
  depthwise.group = 400;
  depthwise.gate = "Swish";
  for (const ConvCase& cc :
       {depthwise, conv_case("7x7 pixels, 64 -> 96", 1, 64, 96, 7, 7, 3, 1, 1, 1),
        conv_case("7x7 pixels, panels split evenly, 32 -> 64", 1, 32, 64, 7, 7, 3, 1, 1, 1),
        conv_case("14x14: 17 tiles in 4 blocks, 16 -> 64", 1, 16, 64, 14, 14, 3, 1, 1, 1),
        conv_case("14x14 1x1, the map outweighs W: pixels split, 576 -> 96", 1, 576, 96, 14, 14, 1, 1, 1, 0),
        conv_case("one pixel, 16 -> 64", 1, 16, 64, 1, 1, 1, 1, 1, 0),
        conv_case("many blocks, 8 -> 40", 2, 8, 40, 30, 30, 3, 1, 1, 1)}) {
    SCOPED_TRACE(cc.what);
    check(cc);
    expect_same_bits_on_two_threads(cc);
  }
}

// Grouped: a panel of one group (32 or 64 channels per group), each panel's table shifted to
// its channels, padding rows included; groups of 4, 8 or 16 in and as many out on the
// depthwise rows (fdw_layer.h). Groups of 2 channels stay with XNNPACK or the reference.
TEST(ConvF32Nhwc, GroupedPanels) {
  std::vector<ConvCase> cases;
  for (auto [what, c, m, group, stride, dilation] :
       std::vector<std::tuple<const char*, int64_t, int64_t, int64_t, int64_t, int64_t>>{
           {"2 groups of 32", 64, 64, 2, 1, 1},
           {"2 groups of 64 -> 64 (two panels each)", 128, 128, 2, 2, 1},
           {"16 groups of 4, stride 2", 64, 64, 16, 2, 1},
           {"8 groups of 4, dilation 2", 32, 32, 8, 1, 2},
           {"3 groups of 4 in, 32 out (a panel per group)", 12, 96, 3, 1, 1},
           {"12 groups of 4 (three blocks of 16 channels)", 48, 48, 12, 1, 1},
           {"5 groups of 4 (a channel tail of 4)", 20, 20, 5, 1, 1},
           {"6 groups of 8 (RegNet's group width)", 48, 48, 6, 2, 1},
           {"13 groups of 8 (a channel tail of 8)", 104, 104, 13, 1, 1},
           {"4 groups of 8, dilation 2", 32, 32, 4, 1, 2},
           {"4 groups of 16, stride 2 (RegNet's group width)", 64, 64, 4, 2, 1},
           {"3 groups of 16, dilation 2", 48, 48, 3, 1, 2}}) {
    ConvCase cc = conv_case(what, 1, c, m, 11, 9, 3, stride, dilation, dilation);
    cc.group = group;
    cases.push_back(cc);
  }
  cases[3].relu6 = true;
  for (const ConvCase& cc : cases) {
    SCOPED_TRACE(cc.what);
    check(cc);
    check(cc, true);
    expect_same_bits_on_two_threads(cc);
  }
  if (!opt::fconv_tile_fast()) return;
  for (int64_t per_group : {2}) {
    ConvCase cc = conv_case("groups of " + std::to_string(per_group), 1, 64, 64, 9, 7, 3, 1, 1, 1);
    cc.group = 64 / per_group;
    SessionOptions options;
    options.disable_xnnpack = true;  // the own Conv declines: the reference runs it
    bool own = false;
    run(cc, options, false, &own);
    EXPECT_FALSE(own) << cc.what;
  }
}

// Swish and HardSwish after a Conv run inside it (own group-1 and depthwise kernels, and
// XNNPACK's Conv with a pass after it): all three match the reference, NaN and inf included.
TEST(ConvF32Nhwc, FusedSwishAndHardSwishMatchTheReference) {
  ConvCase pointwise = conv_case("1x1, 16 -> 24", 1, 16, 24, 9, 7, 1, 1, 1, 0);
  ConvCase full = conv_case("3x3, 8 -> 40", 1, 8, 40, 9, 7, 3, 1, 1, 1);
  // EfficientNetV2's Fused-MBConv: the gate after the Winograd path's output transform.
  ConvCase winograd = conv_case("3x3, 24 -> 40 (Winograd)", 1, 24, 40, 9, 7, 3, 1, 1, 1);
  ConvCase depthwise = conv_case("depthwise 3x3 stride 2, 32", 1, 32, 32, 12, 11, 3, 2, 1, 1);
  depthwise.group = 32;
  for (const char* gate : {"Swish", "HardSwish"}) {
    for (ConvCase cc : {pointwise, full, winograd, depthwise}) {
      cc.gate = gate;
      SCOPED_TRACE(cc.gate);
      check(cc);
      check(cc, true);
      SCOPED_TRACE("XNNPACK's Conv");
      SessionOptions xnnpack, reference;
      xnnpack.disable_optimized = true;
      reference.disable_xnnpack = true;
      bool unused = false;
      const Tensor a = run(cc, xnnpack, false, &unused);
      const Tensor b = run(cc, reference, false, &unused);
      ASSERT_TRUE(a.defined() && b.defined());
      ASSERT_EQ(a.shape(), b.shape());
      for (int64_t i = 0; i < a.numel(); ++i)
        EXPECT_NEAR(a.data<float>()[i], b.data<float>()[i], 1e-4f * std::max(1.0f, std::fabs(b.data<float>()[i]))) << i;
    }
  }
}

}  // namespace
}  // namespace xonnx
