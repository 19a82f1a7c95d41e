// The own float32 depthwise convolution (runtime/ops/optimized/fdwconv.h, conv_depthwise.cc):
//  - the AVX-512 row and pack kernels are bit-identical to their scalar twins over odd shapes
//    (channel tails, kernel sizes, strides, dilations, widths, output ranges, NaN/inf), write
//    no lane past `valid`, and the twin matches the definition computed here in double;
//  - through Session, the NHWC depthwise Conv (the layout pass's, with and without a fused
//    Relu6) matches the reference path (disable_xnnpack) within 1e-5 relative, NaN and inf
//    included, and the own kernel ran where the CPU has AVX-512.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "runtime/exec/session.h"
#include "runtime/ops/optimized/fdwconv.h"
#include "runtime/ops/optimized/opt_util.h"
#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace {

using opt::kFdwChannelBlock;
using testing::attr_int;
using testing::attr_ints;
using testing::attr_string;

constexpr float kInfinity = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// ---- row kernels ----------------------------------------------------------------------------

struct RowCase {
  int64_t valid, kh, kw, sw, dw, ow;
  float lo, hi;
  int64_t group = 1;  // channels per group: 1 (depthwise), 4 or 8
};

// One block's kh input rows [wp][16] of random floats, weights and bias for one output row;
// the block sits at channel 5 of 40-channel pixels (out_stride 40).
constexpr int64_t kChannels = 40, kFirst = 5;
constexpr float kSentinel = -777.25f;  // floats of other blocks must keep it

struct RowProblem {
  RowCase rc;
  int64_t wp = 0;
  std::vector<std::vector<float>> rows;  // [kh][wp][16]
  std::vector<const float*> row_ptrs;
  std::vector<float> weights, bias;
  opt::FdwRow p;
};

RowProblem make(const RowCase& rc, uint32_t seed, bool specials = false) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  RowProblem pr;
  pr.rc = rc;
  pr.wp = (rc.ow - 1) * rc.sw + (rc.kw - 1) * rc.dw + 1 + static_cast<int64_t>(seed % 3);  // slack columns
  for (int64_t ky = 0; ky < rc.kh; ++ky) {
    pr.rows.emplace_back(static_cast<size_t>(pr.wp * kFdwChannelBlock));
    for (float& v : pr.rows.back()) v = 4.0f * unit(gen);
    if (specials) {  // a few NaN / +-inf inputs
      for (int i = 0; i < 3; ++i) {
        const float s[3] = {kNaN, kInfinity, -kInfinity};
        pr.rows.back()[gen() % pr.rows.back().size()] = s[gen() % 3];
      }
    }
  }
  for (const auto& r : pr.rows) pr.row_ptrs.push_back(r.data());
  pr.weights.resize(static_cast<size_t>(rc.kh * rc.kw * rc.group * kFdwChannelBlock));
  for (float& v : pr.weights) v = unit(gen) / static_cast<float>(rc.kw);
  pr.bias.resize(kFdwChannelBlock);
  for (float& v : pr.bias) v = unit(gen);
  opt::FdwRow& p = pr.p;
  p.rows = pr.row_ptrs.data();
  p.weights = pr.weights.data();
  p.bias = pr.bias.data();
  p.kh = rc.kh;
  p.kw = rc.kw;
  p.sw = rc.sw;
  p.dw = rc.dw;
  p.valid = rc.valid;
  p.out_stride = kChannels;
  p.ow = rc.ow;
  p.lo = rc.lo;
  p.hi = rc.hi;
  p.group = rc.group;
  return pr;
}

std::vector<float> run(opt::FdwRowFn fn, const RowProblem& pr) {
  std::vector<float> out(static_cast<size_t>(pr.rc.ow * kChannels), kSentinel);
  fn(pr.p, out.data() + kFirst);
  return out;
}

// Bit-identical, except that any NaN equals any NaN (payloads are not specified).
std::string first_difference(const std::vector<float>& got, const std::vector<float>& want) {
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(got[i]) && std::isnan(want[i])) continue;
    if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0)
      return "pixel " + std::to_string(i / kChannels) + " channel " + std::to_string(i % kChannels) + ": got " +
             std::to_string(got[i]) + " want " + std::to_string(want[i]);
  }
  return "";
}

std::vector<RowCase> odd_cases() {
  std::vector<RowCase> cases;
  int i = 0;
  for (int64_t valid : {1, 3, 15, 16})
    for (auto [kh, kw] : {std::pair<int64_t, int64_t>{3, 3}, {5, 5}, {1, 3}, {7, 7}, {1, 5}})
      for (int64_t sw : {1, 2})
        for (int64_t ow : {1, 3, 5, 13, 17}) {
          ++i;
          const bool ranged = i % 3 == 0;  // Relu6-like range, else none
          cases.push_back(
              {valid, kh, kw, sw, 1 + (i % 4 == 0), ow, ranged ? 0.0f : -kInfinity, ranged ? 0.5f : kInfinity});
        }
  return cases;
}

// Groups of 4, 8 and 16: whole groups per block (valid a multiple of the group). Rows of 13
// and 19 pixels take the fast rows' blocks of 8, 4, 2 and 1 (groups of 16: of 4, the last 4 again).
std::vector<RowCase> group_cases() {
  std::vector<RowCase> cases;
  int i = 0;
  for (const auto& [group, valids] :
       {std::pair<int64_t, std::vector<int64_t>>{4, {4, 12, 16}}, {8, {8, 16}}, {16, {16}}})
    for (int64_t valid : valids)
      for (auto [kh, kw] : {std::pair<int64_t, int64_t>{3, 3}, {1, 1}, {5, 3}})
        for (int64_t sw : {1, 2})
          for (int64_t ow : {1, 3, 6, 13, 19}) {
            ++i;
            const bool ranged = i % 3 == 0;
            RowCase rc{valid, kh, kw, sw, 1 + (i % 4 == 0), ow, ranged ? 0.0f : -kInfinity, ranged ? 0.5f : kInfinity};
            rc.group = group;
            cases.push_back(rc);
          }
  return cases;
}

std::string describe(const RowCase& rc) {
  return "group " + std::to_string(rc.group) + " valid " + std::to_string(rc.valid) + " k " + std::to_string(rc.kh) +
         "x" + std::to_string(rc.kw) + " s " + std::to_string(rc.sw) + " d " + std::to_string(rc.dw) + " ow " +
         std::to_string(rc.ow) + " range [" + std::to_string(rc.lo) + ", " + std::to_string(rc.hi) + "]";
}

TEST(FdwConv, ReferenceMatchesTheDefinitionInDouble) {
  uint32_t seed = 1;
  int clamped = 0, checked = 0;
  std::vector<RowCase> cases = odd_cases();
  for (const RowCase& rc : group_cases()) cases.push_back(rc);
  for (const RowCase& rc : cases) {
    const RowProblem pr = make(rc, seed++);
    const std::vector<float> got = run(opt::fdw_row_reference, pr);
    for (int64_t ox = 0; ox < rc.ow; ++ox) {
      for (int64_t j = 0; j < kChannels; ++j) {
        const float g = got[static_cast<size_t>(ox * kChannels + j)];
        if (j < kFirst || j >= kFirst + rc.valid) {
          EXPECT_EQ(g, kSentinel) << describe(rc) << " wrote channel " << j;
          continue;
        }
        const int64_t lane = j - kFirst;
        double acc = pr.bias[static_cast<size_t>(lane)], magnitude = std::fabs(acc);
        const int64_t first = lane - lane % rc.group;  // its group's first channel
        for (int64_t ky = 0; ky < rc.kh; ++ky)
          for (int64_t kx = 0; kx < rc.kw; ++kx)
            for (int64_t i = 0; i < rc.group; ++i) {
              const double t =
                  double(pr.rows[ky][static_cast<size_t>((ox * rc.sw + kx * rc.dw) * kFdwChannelBlock + first + i)]) *
                  pr.weights[static_cast<size_t>(((ky * rc.kw + kx) * rc.group + i) * kFdwChannelBlock + lane)];
              acc += t;
              magnitude += std::fabs(t);
            }
        const double want = std::min<double>(rc.hi, std::max<double>(rc.lo, acc));
        clamped += want != acc;
        ++checked;
        EXPECT_NEAR(g, want, 1e-6 * (magnitude + 1)) << describe(rc) << " pixel " << ox << " lane " << lane;
      }
    }
  }
  EXPECT_GT(clamped, 100) << "the range cases should clamp";
  EXPECT_GT(checked - clamped, 1000);
}

TEST(FdwConv, FastRowIsBitIdenticalToReference) {
  const opt::FdwRowFn fast = opt::fdw_row_fast();
  if (!fast) GTEST_SKIP() << "no AVX-512 on this CPU (or XONNX_OPT_ISA below avx512)";
  uint32_t seed = 500;
  int cases = 0;
  for (const RowCase& rc : odd_cases()) {
    const RowProblem pr = make(rc, seed++);
    EXPECT_EQ(first_difference(run(fast, pr), run(opt::fdw_row_reference, pr)), "") << describe(rc);
    ++cases;
  }
  EXPECT_EQ(cases, 4 * 5 * 2 * 5);
  for (const RowCase& rc : group_cases()) {
    for (bool specials : {false, true}) {
      const RowProblem pr = make(rc, seed++, specials);
      EXPECT_EQ(first_difference(run(fast, pr), run(opt::fdw_row_reference, pr)), "") << describe(rc);
    }
  }
}

// NaN and inf inputs: the clamp lets NaN through in both, and the sums agree.
TEST(FdwConv, FastRowMatchesReferenceOnNanAndInf) {
  const opt::FdwRowFn fast = opt::fdw_row_fast();
  if (!fast) GTEST_SKIP() << "no AVX-512 on this CPU";
  uint32_t seed = 900;
  int nans = 0, infs = 0;
  for (const RowCase& rc : odd_cases()) {
    const RowProblem pr = make(rc, seed++, /*specials=*/true);
    const std::vector<float> want = run(opt::fdw_row_reference, pr);
    EXPECT_EQ(first_difference(run(fast, pr), want), "") << describe(rc);
    for (float v : want) {
      nans += std::isnan(v);
      infs += std::isinf(v);
    }
  }
  EXPECT_GT(nans, 50);
  EXPECT_GT(infs, 50);
}

TEST(FdwConv, FastPackIsBitIdenticalToReference) {
  const opt::FdwPackFn fast = opt::fdw_pack_fast();
  if (!fast) GTEST_SKIP() << "no AVX-512 on this CPU";
  std::mt19937 gen(9);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  // Blocks of a pixel are read together; the last block holds `channels - 16 (blocks - 1)`
  // real channels (or all 16 when the range ends before the tensor's last channel).
  struct Case {
    int64_t blocks, channels;
  };
  for (const Case& k : {Case{1, 1}, Case{1, 3}, Case{1, 15}, Case{1, 16}, Case{1, 35}, Case{2, 17}, Case{2, 32},
                        Case{2, 35}, Case{3, 35}}) {
    for (int64_t w : {1, 2, 7, 33}) {
      std::vector<float> src(static_cast<size_t>(w * kChannels));
      for (float& v : src) v = unit(gen);
      const int64_t block_floats = (w + 1) * kFdwChannelBlock;  // one pixel of room past each block
      std::vector<float> a(static_cast<size_t>(k.blocks * block_floats), -7.0f), b = a;
      // `ahead` is only a prefetch hint: any readable row.
      fast(src.data() + kFirst, w, kChannels, k.channels, k.blocks, a.data(), block_floats,
           w % 2 ? src.data() : nullptr);
      opt::fdw_pack_reference(src.data() + kFirst, w, kChannels, k.channels, k.blocks, b.data(), block_floats);
      const std::string what =
          "blocks " + std::to_string(k.blocks) + " channels " + std::to_string(k.channels) + " w " + std::to_string(w);
      EXPECT_EQ(a, b) << what;
      for (int64_t blk = 0; blk < k.blocks; ++blk) {
        const int64_t real = std::min<int64_t>(kFdwChannelBlock, k.channels - blk * kFdwChannelBlock);
        const float* block = a.data() + blk * block_floats;
        EXPECT_EQ(block[w * kFdwChannelBlock], -7.0f) << what << ": wrote past block " << blk;
        EXPECT_EQ(block[real - 1], src[static_cast<size_t>(kFirst + blk * kFdwChannelBlock + real - 1)]) << what;
        if (real < kFdwChannelBlock) {
          EXPECT_EQ(block[real], 0.0f) << what << ": lane past the channels";
        }
      }
    }
  }
}

// ---- through Session ------------------------------------------------------------------------

struct DwCase {
  std::string what;
  int64_t n = 1, c = 16, h = 11, w = 9, k = 3, stride = 1, dilation = 1, pad = 1;
  int64_t multiplier = 1;  // output channels per input channel
  std::string auto_pad;    // empty: explicit pads
  bool relu6 = false;      // Conv -> Clip(0, 6), fused by the layout pass
  bool bias = true;
  int specials = 0;  // NaN / +-inf values in the input
};

Model build(const DwCase& k) {
  Model model;
  model.ir_version = 8;
  model.opset_imports[""] = 13;
  Graph& g = model.graph;
  ValueInfo x;
  x.name = "x";
  x.type.kind = TypeInfo::Kind::kTensor;
  x.type.elem_type = DataType::kFloat;
  x.type.has_shape = true;
  for (int64_t d : {k.n, k.c, k.h, k.w}) x.type.dims.push_back(Dim{d, ""});
  g.inputs.push_back(x);

  const int64_t m = k.c * k.multiplier;
  std::mt19937 gen(static_cast<uint32_t>(k.c * 131 + k.k * 7 + k.stride));
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::vector<float> w(static_cast<size_t>(m * k.k * k.k)), b(static_cast<size_t>(m));
  for (float& v : w) v = 2.0f * unit(gen) / static_cast<float>(k.k);
  for (float& v : b) v = unit(gen);
  g.initializers.push_back({"w", Tensor::from_vector<float>(w, {m, 1, k.k, k.k})});
  g.initializers.push_back({"b", Tensor::from_vector<float>(b, {m})});
  Node conv;
  conv.op_type = "Conv";
  conv.name = "conv";
  conv.inputs = {"x", "w"};
  if (k.bias) conv.inputs.push_back("b");
  conv.outputs = {k.relu6 ? "conv_out" : "y"};
  conv.attributes = {attr_ints("kernel_shape", {k.k, k.k}), attr_ints("strides", {k.stride, k.stride}),
                     attr_ints("dilations", {k.dilation, k.dilation}), attr_int("group", k.c)};
  if (k.auto_pad.empty()) {
    conv.attributes.push_back(attr_ints("pads", {k.pad, k.pad, k.pad, k.pad}));
  } else {
    conv.attributes.push_back(attr_string("auto_pad", k.auto_pad));
  }
  g.nodes.push_back(conv);
  if (k.relu6) {
    g.initializers.push_back({"lo", Tensor::scalar<float>(0.0f)});
    g.initializers.push_back({"hi", Tensor::scalar<float>(6.0f)});
    Node clip;
    clip.op_type = "Clip";
    clip.name = "clip";
    clip.inputs = {"conv_out", "lo", "hi"};
    clip.outputs = {"y"};
    g.nodes.push_back(clip);
  }
  ValueInfo out;
  out.name = "y";
  g.outputs.push_back(out);
  return model;
}

Tensor input_for(const DwCase& k) {
  std::mt19937 gen(static_cast<uint32_t>(k.h * 1000 + k.w));
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);  // Relu6 clamps a good share at 6
  std::vector<float> v(static_cast<size_t>(k.n * k.c * k.h * k.w));
  for (float& f : v) f = dist(gen);
  const float s[3] = {kNaN, kInfinity, -kInfinity};
  for (int i = 0; i < k.specials; ++i) v[gen() % v.size()] = s[i % 3];
  return Tensor::from_vector<float>(v, {k.n, k.c, k.h, k.w});
}

struct Ran {
  Tensor y;
  std::vector<Profiler::Entry> conv_entries;  // the Conv nodes that ran
};

Ran run(const DwCase& k, SessionOptions options) {
  Ran r;
  auto s = Session::create_from_model(build(k), options);
  EXPECT_TRUE(s.is_ok()) << s.status().to_string();
  if (!s.is_ok()) return r;
  Profiler profiler;
  (*s)->set_profiler(&profiler);
  auto out = (*s)->run({Value(input_for(k))});
  (*s)->set_profiler(nullptr);
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  if (!out.is_ok()) return r;
  r.y = (*out)[0].tensor();
  for (const Profiler::Entry& e : profiler.entries()) {
    const std::string& op = e.op_type;
    if (op.find("Conv") != std::string::npos) r.conv_entries.push_back(e);  // (also ConvNchwInput: C 1)
  }
  return r;
}

// Own kernel (default options) vs the ONNX reference (disable_xnnpack): 1e-5 relative, NaN
// where the reference has NaN, the same infinities.
void check(const DwCase& k, bool expect_own = true) {
  SCOPED_TRACE(k.what);
  SessionOptions fast, reference;
  reference.disable_xnnpack = true;
  const Ran a = run(k, fast), c = run(k, reference);
  ASSERT_TRUE(a.y.defined() && c.y.defined());
  ASSERT_EQ(a.y.shape(), c.y.shape());
  int64_t bad = 0, specials = 0, clamped = 0;
  for (int64_t i = 0; i < a.y.numel(); ++i) {
    const float got = a.y.data<float>()[i], want = c.y.data<float>()[i];
    if (std::isnan(want) || std::isinf(want)) {
      ++specials;
      const bool same = std::isnan(want) ? std::isnan(got) : got == want;
      if (!same && bad++ < 5) {
        ADD_FAILURE() << "element " << i << ": got " << got << " want " << want;
      }
      continue;
    }
    clamped += k.relu6 && (want == 0.0f || want == 6.0f);
    if (!(std::fabs(got - want) <= 1e-5f * std::max(1.0f, std::fabs(want))) && bad++ < 5) {
      ADD_FAILURE() << "element " << i << ": got " << got << " want " << want;
    }
  }
  EXPECT_EQ(bad, 0);
  if (k.specials > 0) {
    EXPECT_GT(specials, 0) << "the NaN/inf inputs should reach the output";
  }
  if (k.relu6) {
    EXPECT_GT(clamped, 0) << "degenerate case: Relu6 clamps nothing";
    EXPECT_LT(clamped, a.y.numel()) << "degenerate case: Relu6 clamps everything";
  }
  EXPECT_TRUE(c.conv_entries.size() == 1 && c.conv_entries[0].backend == Backend::kReference);
  ASSERT_EQ(a.conv_entries.size(), 1u) << "the Clip should fuse into the Conv";
  if (!expect_own) return;
  if (opt::fdw_row_fast() == nullptr) {
    EXPECT_NE(a.conv_entries[0].backend, Backend::kOptimized);
    return;  // no AVX-512: XNNPACK's kernel stands in
  }
  // One channel (group 1) is also an image the layout pass lets the own Conv read in NCHW.
  const std::string op = a.conv_entries[0].op_type;
  EXPECT_TRUE(op == "com.xonnx.nhwc:Conv" || (k.c == 1 && op == "com.xonnx.nhwc:ConvNchwInput")) << op;
  EXPECT_EQ(a.conv_entries[0].backend, Backend::kOptimized);
}

DwCase dw(const std::string& what, int64_t c, int64_t k, int64_t stride, int64_t dilation, int64_t pad) {
  DwCase d;
  d.what = what;
  d.c = c;
  d.k = k;
  d.stride = stride;
  d.dilation = dilation;
  d.pad = pad;
  return d;
}

TEST(FdwConvSession, Shapes) {
  check(dw("3x3 s1, 96 channels", 96, 3, 1, 1, 1));
  check(dw("3x3 s2, 17 channels", 17, 3, 2, 1, 1));
  check(dw("5x5 s1 pads 2, 40 channels", 40, 5, 1, 1, 2));
  check(dw("5x5 s2 pads 2, 17 channels", 17, 5, 2, 1, 2));
  check(dw("3x3 dilation 2 pads 2, 1 channel", 1, 3, 1, 2, 2));
  // Dilations the stride does not cover: the rows go in phase order (fdw_layer.cc).
  check(dw("5x5 dilation 2 pads 4, 40 channels", 40, 5, 1, 2, 4));
  check(dw("3x3 dilation 3 pads 3 s2, 17 channels", 17, 3, 2, 3, 3));
  check(dw("3x3 dilation 4 s2 pads 1, 16 channels", 16, 3, 2, 4, 1));
  check(dw("3x3 no pads, 40 channels", 40, 3, 1, 1, 0));
  check(dw("7x7 pads 3, 16 channels", 16, 7, 1, 1, 3));
  // Rows of more than 16 KB are copied block by block, smaller ones all blocks at once
  // (fdw_layer.cc): 72 channels (5 blocks, the last half full) over 60 pixels take 19.8 KB.
  DwCase wide = dw("3x3 s1, 72 channels over 60 columns", 72, 3, 1, 1, 1);
  wide.w = 60;
  check(wide);
  DwCase wide_s2 = dw("3x3 s2, 72 channels over 60 columns", 72, 3, 2, 1, 1);
  wide_s2.w = 60;
  check(wide_s2);
  DwCase no_bias = dw("3x3 no bias, 17 channels", 17, 3, 1, 1, 1);
  no_bias.bias = false;
  check(no_bias);
}

TEST(FdwConvSession, Relu6FusedSamePaddingBatch2) {
  for (int64_t c : {1, 17, 40, 96}) {
    DwCase k = dw("3x3 SAME_UPPER s2 + Relu6, batch 2, C " + std::to_string(c), c, 3, 2, 1, 0);
    k.auto_pad = "SAME_UPPER";
    k.relu6 = true;
    k.n = 2;
    check(k);
  }
  DwCase k = dw("5x5 SAME_LOWER s1 + Relu6, 40 channels", 40, 5, 1, 1, 0);
  k.auto_pad = "SAME_LOWER";
  k.relu6 = true;
  check(k);
}

TEST(FdwConvSession, NanAndInfPropagateAsInTheReference) {
  for (bool relu6 : {false, true}) {
    DwCase k = dw(relu6 ? "NaN/inf + Relu6, 17 channels" : "NaN/inf, 17 channels", 17, 3, 1, 1, 1);
    k.relu6 = relu6;
    k.specials = 6;
    check(k);
  }
}

// A channel multiplier of 2 is not depthwise in the own kernel's sense: still right.
TEST(FdwConvSession, ChannelMultiplierTwoIsRight) {
  DwCase k = dw("3x3, 8 channels x 2", 8, 3, 1, 1, 1);
  k.multiplier = 2;
  check(k, /*expect_own=*/false);
}

// Two threads split the output rows, or with fewer rows than kernel rows per thread the channel
// blocks: the same bits as one.
TEST(FdwConvSession, ThreadsGiveTheSameResult) {
  DwCase rows = dw("48 rows split over the threads", 40, 3, 1, 1, 1);
  rows.h = 48;
  rows.w = 40;
  DwCase blocks = dw("7 rows, 25 channel blocks split over the threads", 400, 5, 1, 1, 2);
  blocks.h = 7;
  blocks.w = 14;
  blocks.relu6 = true;
  DwCase few_rows = dw("14 rows of a 3x3 kernel, 7 per thread", 208, 3, 1, 1, 1);
  few_rows.h = 14;
  few_rows.w = 14;
  for (const DwCase& k : {rows, blocks, few_rows}) {
    SCOPED_TRACE(k.what);
    check(k);
    SessionOptions one, two;
    two.num_threads = 2;
    const Ran a = run(k, one), b = run(k, two);
    ASSERT_TRUE(a.y.defined() && b.y.defined());
    ASSERT_EQ(a.y.numel(), b.y.numel());
    EXPECT_EQ(std::memcmp(a.y.data<float>(), b.y.data<float>(), static_cast<size_t>(a.y.numel()) * sizeof(float)), 0);
  }
}

}  // namespace
}  // namespace xonnx
