// XNNPACK QLinearConv / QLinearMatMul (runtime/ops/xnnpack/qlinear.cc) vs the reference kernels.
// XNNPACK requantizes with an fp32 multiplier and the reference with a double one, so an output
// may differ by 1 in the last integer step; anything more is a failure.
#include <algorithm>
#include <cmath>

#include "runtime/ops/optimized/opt_util.h"
#include "tests/unit/test_xnnpack_common.h"

namespace xonnx {
namespace {

using namespace xnntest;

template <typename T>
Tensor rand_q(const Shape& shape, uint32_t seed, int lo = std::numeric_limits<T>::min(),
              int hi = std::numeric_limits<T>::max()) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> dist(lo, hi);
  std::vector<T> v(static_cast<size_t>(shape_numel(shape)));
  for (T& e : v) e = static_cast<T>(dist(gen));
  return Tensor::from_vector<T>(v, shape);
}
Tensor f32(float v) { return Tensor::scalar<float>(v); }
Tensor u8(int v) { return Tensor::scalar<uint8_t>(static_cast<uint8_t>(v)); }
Tensor i8(int v) { return Tensor::scalar<int8_t>(static_cast<int8_t>(v)); }
Tensor floats(std::vector<float> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::from_vector<float>(v, {n});
}

// Runs with and without XNNPACK; integer outputs must agree within 1 (see the top comment).
void qdiff(const std::string& op, const std::vector<In>& inputs, const std::vector<Attribute>& attrs, bool expect_fast,
           const std::string& what) {
  SCOPED_TRACE(op + " " + what);
  auto ref = make_session(op, inputs, attrs, 13, true);
  ASSERT_TRUE(ref.is_ok()) << ref.status().to_string();
  opt::set_enabled(false);  // XNNPACK's kernels, not the own int8 ones (test_qlinear_conv_nhwc.cc)
  auto fast = make_session(op, inputs, attrs, 13, false);
  opt::set_enabled(true);
  ASSERT_TRUE(fast.is_ok()) << fast.status().to_string();
  const std::vector<Value> given = runtime_values(inputs);
  auto want = (*ref)->run(given);
  const uint64_t before = xnn::run_count();
  auto got = (*fast)->run(given);
  const uint64_t runs = xnn::run_count() - before;
  ASSERT_EQ(want.is_ok(), got.is_ok()) << (want.is_ok() ? got.status() : want.status()).to_string();
  EXPECT_EQ(runs > 0, expect_fast) << "XNNPACK operator runs: " << runs;
  if (!want.is_ok()) return;
  const Tensor& g = (*got)[0].tensor();
  const Tensor& w = (*want)[0].tensor();
  ASSERT_EQ(g.dtype(), w.dtype());
  ASSERT_EQ(g.shape(), w.shape()) << shape_to_string(g.shape()) << " vs " << shape_to_string(w.shape());
  int64_t off_by_one = 0;
  double lo = 1e9, hi = -1e9;
  for (int64_t i = 0; i < g.numel(); ++i) {
    const double d = std::fabs(g.get_as_double(i) - w.get_as_double(i));
    lo = std::min(lo, w.get_as_double(i));
    hi = std::max(hi, w.get_as_double(i));
    if (d > 1) {
      ADD_FAILURE() << "element " << i << " xnnpack " << g.get_as_double(i) << " reference " << w.get_as_double(i);
      return;
    }
    off_by_one += d == 1;
  }
  const int64_t distinct = static_cast<int64_t>(hi - lo);
  EXPECT_LE(off_by_one * 20, g.numel()) << "too many results off by one";  // rounding ties only
  EXPECT_GE(distinct, 8) << "degenerate test: outputs barely vary (saturated scales?)";
  auto again = (*fast)->run(given);
  ASSERT_TRUE(again.is_ok());
  const Tensor& a = (*again)[0].tensor();
  for (int64_t i = 0; i < a.numel(); ++i) ASSERT_EQ(a.get_as_double(i), g.get_as_double(i)) << "second run";
}

// One QLinearConv case: activations of type X (zero point xzp), weights of type W, output Y.
struct QConvCase {
  int64_t n = 1, c = 3, m = 5, h = 9, w = 7, kh = 3, kw = 3, group = 1;
  std::vector<Attribute> attrs;
  bool per_channel = false, bias = true;
  int wzp = 0;
  bool const_w = true;
};

template <typename X, typename W, typename Y>
void conv_case(const QConvCase& cc, bool expect_fast, const std::string& what, int xzp, int yzp,
               float y_scale_mult = 1.0f) {
  const int64_t cg = cc.c / cc.group;
  const Tensor x = rand_q<X>({cc.n, cc.c, cc.h, cc.w}, 1);
  const Tensor w = rand_q<W>({cc.m, cg, cc.kh, cc.kw}, 2);
  const float xs = 0.02f;
  std::vector<float> ws(static_cast<size_t>(cc.per_channel ? cc.m : 1));
  for (size_t i = 0; i < ws.size(); ++i) ws[i] = 0.01f * (1.0f + 0.37f * float(i % 5));
  // Spread the outputs over ~100 steps: |acc| ~ sqrt(K) * 74 * 74 for uniform 8-bit data.
  const float ys = xs * ws[0] * std::sqrt(float(cg * cc.kh * cc.kw)) * 5400.0f / 40.0f * y_scale_mult;
  const Tensor wzp = std::is_same<W, uint8_t>::value ? u8(cc.wzp) : i8(cc.wzp);
  std::vector<In> in = {var(x),
                        cst(f32(xs)),
                        cst(std::is_same<X, uint8_t>::value ? u8(xzp) : i8(xzp)),
                        cc.const_w ? cst(w) : var(w),
                        cst(cc.per_channel ? floats(ws) : f32(ws[0])),
                        cst(wzp),
                        cst(f32(ys)),
                        cst(std::is_same<Y, uint8_t>::value ? u8(yzp) : i8(yzp))};
  if (cc.bias) in.push_back(cst(rand_q<int32_t>({cc.m}, 3, -20000, 20000)));
  std::vector<Attribute> attrs = cc.attrs;
  if (cc.group != 1) attrs.push_back(attr_int("group", cc.group));
  qdiff("QLinearConv", in, attrs, expect_fast, what);
}

TEST(XnnpackQLinearConv, SignednessCombinations) {
  QConvCase cc;
  cc.attrs = {attr_ints("pads", {1, 1, 1, 1})};
  conv_case<uint8_t, uint8_t, uint8_t>(
      [&] {
        QConvCase c = cc;
        c.wzp = 119;
        return c;
      }(),
      true, "qu8", 131, 120);
  conv_case<int8_t, int8_t, int8_t>(cc, true, "qs8", -3, 5);
  conv_case<uint8_t, int8_t, uint8_t>(cc, true, "u8 x, s8 w (flipped to qs8)", 128, 128);
  conv_case<int8_t, uint8_t, int8_t>(
      [&] {
        QConvCase c = cc;
        c.wzp = 200;
        return c;
      }(),
      true, "s8 x, u8 w with zp (flipped to qu8)", 0, -10);
  conv_case<uint8_t, int8_t, int8_t>(cc, true, "u8 x, s8 y", 100, 0);
  QConvCase pc = cc;
  pc.per_channel = true;
  conv_case<int8_t, int8_t, int8_t>(pc, true, "qc8 per-channel", 1, -1);
  conv_case<uint8_t, int8_t, uint8_t>(pc, true, "qc8 per-channel, uint8 activations", 120, 128);
  QConvCase pu = pc;
  pu.wzp = 128;
  conv_case<uint8_t, uint8_t, uint8_t>(pu, true, "uint8 weights zp 128 per-channel (to qc8)", 128, 128);
}

TEST(XnnpackQLinearConv, Geometry) {
  QConvCase base;
  base.per_channel = true;
  {
    QConvCase c = base;
    c.n = 2;
    c.attrs = {attr_ints("strides", {2, 2}), attr_ints("pads", {1, 0, 2, 1})};
    conv_case<uint8_t, int8_t, uint8_t>(c, true, "batch 2, strides 2, asymmetric pads", 128, 128);
  }
  {
    QConvCase c = base;
    c.c = 6, c.m = 4, c.group = 2, c.bias = false;
    c.attrs = {attr_ints("dilations", {2, 1})};
    conv_case<int8_t, int8_t, int8_t>(c, true, "group 2, dilation, no bias", 0, 0);
  }
  {
    QConvCase c = base;
    c.c = 7, c.m = 7, c.group = 7, c.h = 11, c.w = 5;
    c.attrs = {attr_ints("pads", {1, 1, 1, 1})};
    conv_case<uint8_t, int8_t, uint8_t>(c, true, "depthwise 7", 128, 128);
    c.m = 14;
    conv_case<uint8_t, int8_t, uint8_t>(c, true, "depthwise multiplier 2", 128, 128);
  }
  {
    QConvCase c = base;
    c.kh = c.kw = 1, c.c = 17, c.m = 9;
    conv_case<uint8_t, int8_t, uint8_t>(c, true, "1x1, odd channels", 128, 128);
  }
  {
    QConvCase c = base;
    c.attrs = {attr_string("auto_pad", "SAME_UPPER"), attr_ints("strides", {2, 2})};
    conv_case<uint8_t, int8_t, uint8_t>(c, true, "SAME_UPPER strides 2", 128, 128);
    c.attrs = {attr_string("auto_pad", "SAME_LOWER")};
    conv_case<uint8_t, int8_t, uint8_t>(c, true, "SAME_LOWER", 128, 128);
    c.attrs = {attr_string("auto_pad", "VALID")};
    conv_case<uint8_t, int8_t, uint8_t>(c, true, "VALID", 128, 128);
  }
}

TEST(XnnpackQLinearConv, Declines) {
  QConvCase c;
  c.per_channel = true;
  c.wzp = 3;  // asymmetric per-channel int8 weights: no XNNPACK form
  conv_case<uint8_t, int8_t, uint8_t>(c, false, "asymmetric per-channel", 128, 128);
  c.wzp = 0;
  c.const_w = false;
  conv_case<uint8_t, int8_t, uint8_t>(c, false, "runtime weights", 128, 128);
  c.const_w = true;
  c.kh = c.kw = 1;
  // A requantization scale >= 256 (y_scale tiny): XNNPACK refuses it; the outputs saturate.
  const Tensor x = rand_q<uint8_t>({1, 3, 4, 4}, 1);
  const Tensor w = rand_q<int8_t>({2, 3, 1, 1}, 2);
  qdiff("QLinearConv",
        {var(x), cst(f32(1.0f)), cst(u8(128)), cst(w), cst(f32(1.0f)), cst(i8(0)), cst(f32(1e-3f)), cst(u8(128))}, {},
        false, "requantization scale 1000");
}

TEST(XnnpackQLinearConv, RunTimeFallbacks) {
  const Tensor w = rand_q<int8_t>({4, 3, 3, 3}, 2);
  const std::vector<Attribute> attrs = {attr_ints("pads", {1, 1, 1, 1})};
  auto session = make_session("QLinearConv",
                              {var(rand_q<uint8_t>({1, 3, 5, 5}, 1)), cst(f32(0.02f)), cst(u8(128)), cst(w),
                               cst(f32(0.01f)), cst(i8(0)), cst(f32(0.1f)), cst(u8(128))},
                              attrs, 13, false);
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  // An input of the wrong channel count is handed to the reference kernel, which reports it.
  auto bad = (*session)->run({Value(rand_q<uint8_t>({1, 4, 5, 5}, 1))});
  EXPECT_FALSE(bad.is_ok());
  // A different spatial size re-binds the operator.
  auto small = (*session)->run({Value(rand_q<uint8_t>({1, 3, 2, 3}, 1))});
  ASSERT_TRUE(small.is_ok()) << small.status().to_string();
  EXPECT_EQ((*small)[0].tensor().shape(), (Shape{1, 4, 2, 3}));
}

// ---- QLinearMatMul ----------------------------------------------------------------------------
template <typename A, typename B, typename Y>
void matmul_case(const Shape& a_shape, int64_t n, bool expect_fast, const std::string& what, int azp, int bzp, int yzp,
                 bool per_column = false) {
  const int64_t k = a_shape.back();
  const float as = 0.03f, bs = 0.02f;
  const float ys = as * bs * std::sqrt(float(k)) * 5400.0f / 40.0f;
  std::vector<float> cols(static_cast<size_t>(n));
  for (size_t i = 0; i < cols.size(); ++i) cols[i] = bs * (1.0f + float(i % 3));
  qdiff("QLinearMatMul",
        {var(rand_q<A>(a_shape, 1)), cst(f32(as)), cst(std::is_same<A, uint8_t>::value ? u8(azp) : i8(azp)),
         cst(rand_q<B>({k, n}, 2)), cst(per_column ? floats(cols) : f32(bs)),
         cst(std::is_same<B, uint8_t>::value ? u8(bzp) : i8(bzp)), cst(f32(ys)),
         cst(std::is_same<Y, uint8_t>::value ? u8(yzp) : i8(yzp))},
        {}, expect_fast, what);
}

TEST(XnnpackQLinearMatMul, TypesAndRanks) {
  matmul_case<uint8_t, uint8_t, uint8_t>({5, 33}, 17, true, "qu8", 120, 131, 128);
  matmul_case<int8_t, int8_t, int8_t>({5, 33}, 17, true, "qs8", -2, 0, 3);
  matmul_case<uint8_t, int8_t, uint8_t>({2, 3, 64}, 31, true, "u8 a, s8 b, 3-D a", 128, 0, 128);
  matmul_case<int8_t, uint8_t, uint8_t>({7, 20}, 9, true, "s8 a, u8 b with zp", 0, 100, 128);
  matmul_case<uint8_t, int8_t, int8_t>({40}, 13, true, "1-D a", 128, 0, 0);
  matmul_case<uint8_t, int8_t, uint8_t>({5, 33}, 17, false, "per-column b scales", 128, 0, 128, true);
}

}  // namespace
}  // namespace xonnx
