// Conv, ConvTranspose, DeformConv against naive loop references.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace {

using testing::attr_int;
using testing::attr_ints;
using testing::attr_string;
using testing::run_op;
using testing::values;

Tensor rand_tensor(const Shape& shape, uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<float> v(static_cast<size_t>(shape_numel(shape)));
  for (float& f : v) f = static_cast<float>(static_cast<int>(gen() % 2001) - 1000) / 500.0f;
  return Tensor::from_vector<float>(v, shape);
}

// Geometry in 3-D (1-D/2-D padded with leading unit dims).
struct Geo {
  int64_t in[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, d[3] = {1, 1, 1}, pb[3] = {0, 0, 0},
          out[3] = {1, 1, 1};
};

Geo make_geo(const Shape& xs, const Shape& ws, const std::vector<int64_t>& strides, const std::vector<int64_t>& dil,
             const std::vector<int64_t>& pads, const Shape& out) {
  Geo g;
  const size_t nd = xs.size() - 2, o = 3 - nd;
  for (size_t i = 0; i < nd; ++i) {
    g.in[o + i] = xs[2 + i];
    g.k[o + i] = ws[2 + i];
    g.s[o + i] = strides.empty() ? 1 : strides[i];
    g.d[o + i] = dil.empty() ? 1 : dil[i];
    g.pb[o + i] = pads.empty() ? 0 : pads[i];
    g.out[o + i] = out[2 + i];
  }
  return g;
}

// Naive grouped convolution.
std::vector<float> naive_conv(const Tensor& x, const Tensor& w, const std::vector<float>* bias, int64_t group,
                              const Geo& g) {
  const int64_t N = x.dim(0), C = x.dim(1), M = w.dim(0), Cg = C / group, Mg = M / group;
  const int64_t osz = g.out[0] * g.out[1] * g.out[2], isz = g.in[0] * g.in[1] * g.in[2], K = g.k[0] * g.k[1] * g.k[2];
  std::vector<float> y(static_cast<size_t>(N * M * osz), 0.0f);
  const float* xp = x.data<float>();
  const float* wp = w.data<float>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t o0 = 0; o0 < g.out[0]; ++o0)
        for (int64_t o1 = 0; o1 < g.out[1]; ++o1)
          for (int64_t o2 = 0; o2 < g.out[2]; ++o2) {
            double acc = bias ? (*bias)[m] : 0.0;
            const int64_t gi = m / Mg;
            for (int64_t c = 0; c < Cg; ++c)
              for (int64_t k0 = 0; k0 < g.k[0]; ++k0)
                for (int64_t k1 = 0; k1 < g.k[1]; ++k1)
                  for (int64_t k2 = 0; k2 < g.k[2]; ++k2) {
                    const int64_t i0 = o0 * g.s[0] + k0 * g.d[0] - g.pb[0];
                    const int64_t i1 = o1 * g.s[1] + k1 * g.d[1] - g.pb[1];
                    const int64_t i2 = o2 * g.s[2] + k2 * g.d[2] - g.pb[2];
                    if (i0 < 0 || i0 >= g.in[0] || i1 < 0 || i1 >= g.in[1] || i2 < 0 || i2 >= g.in[2]) continue;
                    acc += xp[(n * C + gi * Cg + c) * isz + (i0 * g.in[1] + i1) * g.in[2] + i2] *
                           wp[(m * Cg + c) * K + (k0 * g.k[1] + k1) * g.k[2] + k2];
                  }
            y[static_cast<size_t>((n * M + m) * osz + (o0 * g.out[1] + o1) * g.out[2] + o2)] = static_cast<float>(acc);
          }
  return y;
}

void expect_conv_near(const std::vector<float>& got, const std::vector<float>& want, float tol = 1e-4f) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i]))) << "at " << i;
}

struct ConvCase {
  Shape x, w;
  int64_t group;
  std::vector<int64_t> strides, dil, pads;
  bool bias;
};

TEST(ConvOp, MatchesNaiveReference) {
  const std::vector<ConvCase> cases = {
      {{1, 1, 5, 5}, {1, 1, 3, 3}, 1, {}, {}, {}, false},
      {{2, 3, 7, 6}, {4, 3, 3, 2}, 1, {2, 1}, {1, 2}, {1, 0, 2, 1}, true},
      {{1, 4, 6, 6}, {6, 2, 3, 3}, 2, {1, 1}, {1, 1}, {1, 1, 1, 1}, true},                    // grouped
      {{2, 4, 9, 8}, {4, 1, 3, 3}, 4, {2, 2}, {1, 1}, {1, 1, 1, 1}, true},                    // depthwise
      {{1, 3, 8, 8}, {6, 1, 5, 5}, 3, {1, 3}, {2, 1}, {4, 2, 3, 0}, false},                   // depthwise, multiplier 2
      {{1, 8, 5, 4}, {5, 8, 1, 1}, 1, {}, {}, {}, true},                                      // pointwise
      {{1, 2, 5, 5}, {3, 2, 1, 1}, 1, {2, 2}, {}, {1, 1, 1, 1}, false},                       // 1x1 strided+padded
      {{2, 3, 11}, {4, 3, 3}, 1, {2}, {2}, {1, 2}, true},                                     // 1-D
      {{1, 4, 10}, {4, 1, 4}, 4, {3}, {1}, {2, 2}, false},                                    // 1-D depthwise
      {{1, 2, 4, 5, 6}, {3, 2, 2, 3, 2}, 1, {1, 2, 1}, {2, 1, 1}, {1, 0, 1, 0, 1, 1}, true},  // 3-D
      {{1, 4, 3, 4, 5}, {4, 1, 3, 3, 3}, 4, {}, {}, {1, 1, 1, 1, 1, 1}, false},               // 3-D depthwise
  };
  uint32_t seed = 1;
  for (const ConvCase& c : cases) {
    SCOPED_TRACE(shape_to_string(c.x) + " * " + shape_to_string(c.w));
    Tensor x = rand_tensor(c.x, seed++), w = rand_tensor(c.w, seed++);
    Tensor b = rand_tensor({c.w[0]}, seed++);
    std::vector<Attribute> attrs = {attr_int("group", c.group)};
    if (!c.strides.empty()) attrs.push_back(attr_ints("strides", c.strides));
    if (!c.dil.empty()) attrs.push_back(attr_ints("dilations", c.dil));
    if (!c.pads.empty()) attrs.push_back(attr_ints("pads", c.pads));
    std::vector<Value> in = {x, w};
    if (c.bias) in.push_back(b);
    auto r = run_op("Conv", in, attrs, 17);
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    const Shape& ys = (*r)[0].tensor().shape();
    const size_t nd = c.x.size() - 2;
    for (size_t i = 0; i < nd; ++i) {
      const int64_t ek = ((c.w[2 + i] - 1) * (c.dil.empty() ? 1 : c.dil[i])) + 1;
      const int64_t p = c.pads.empty() ? 0 : c.pads[i] + c.pads[i + nd];
      EXPECT_EQ(ys[2 + i], (c.x[2 + i] + p - ek) / (c.strides.empty() ? 1 : c.strides[i]) + 1);
    }
    std::vector<float> bv = values<float>(Value(b));
    Geo g = make_geo(c.x, c.w, c.strides, c.dil, c.pads, ys);
    expect_conv_near(values<float>((*r)[0]), naive_conv(x, w, c.bias ? &bv : nullptr, c.group, g));
  }
}

TEST(ConvOp, AutoPadSameUpperAndLower) {
  Tensor x = rand_tensor({1, 2, 7, 5}, 11), w = rand_tensor({3, 2, 4, 3}, 12);
  for (const char* mode : {"SAME_UPPER", "SAME_LOWER"}) {
    auto r = run_op("Conv", {x, w}, {attr_string("auto_pad", mode), attr_ints("strides", {2, 2})}, 11);
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    EXPECT_EQ((*r)[0].tensor().shape(), (Shape{1, 3, 4, 3}));
    // total pad: dim0 (4-1)*2+4-7 = 3, dim1 (3-1)*2+3-5 = 2
    const bool upper = std::string(mode) == "SAME_UPPER";
    Geo g = make_geo({1, 2, 7, 5}, {3, 2, 4, 3}, {2, 2}, {}, {upper ? 1 : 2, 1}, {1, 3, 4, 3});
    expect_conv_near(values<float>((*r)[0]), naive_conv(x, w, nullptr, 1, g));
  }
  auto valid = run_op("Conv", {x, w}, {attr_string("auto_pad", "VALID")}, 11);
  ASSERT_TRUE(valid.is_ok());
  EXPECT_EQ((*valid)[0].tensor().shape(), (Shape{1, 3, 4, 3}));
}

TEST(ConvOp, Float16ComputesInFloat) {
  std::vector<Float16> xv, wv;
  for (int i = 0; i < 16; ++i) xv.push_back(Float16{float_to_half(static_cast<float>(i))});
  for (int i = 0; i < 4; ++i) wv.push_back(Float16{float_to_half(1.0f)});
  auto r = run_op("Conv", {Tensor::from_vector(xv, {1, 1, 4, 4}), Tensor::from_vector(wv, {1, 1, 2, 2})}, {}, 11);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  const Tensor& y = (*r)[0].tensor();
  ASSERT_EQ(y.shape(), (Shape{1, 1, 3, 3}));
  EXPECT_EQ(y.get_as_double(0), 0 + 1 + 4 + 5);
  EXPECT_EQ(y.get_as_double(8), 10 + 11 + 14 + 15);
}

TEST(ConvOp, DoubleWorks) {
  auto r = run_op("Conv", {Tensor::from_vector<double>({1, 2, 3, 4}, {1, 1, 4}),
                           Tensor::from_vector<double>({1, -1}, {1, 1, 2}), Tensor::from_vector<double>({0.5}, {1})});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  const Tensor& y = (*r)[0].tensor();
  ASSERT_EQ(y.numel(), 3);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(y.data<double>()[i], -0.5);
}

TEST(ConvOp, RejectsBadShapes) {
  Tensor x = rand_tensor({1, 3, 5, 5}, 1);
  EXPECT_FALSE(run_op("Conv", {x, rand_tensor({2, 2, 3, 3}, 2)}).is_ok());  // channel mismatch
  EXPECT_FALSE(run_op("Conv", {x, rand_tensor({2, 3, 3}, 2)}).is_ok());     // rank mismatch
  EXPECT_FALSE(run_op("Conv", {x, rand_tensor({2, 3, 7, 7}, 2)}).is_ok());  // kernel larger than input
  EXPECT_FALSE(run_op("Conv", {x, rand_tensor({2, 3, 3, 3}, 2), rand_tensor({3}, 3)}).is_ok());  // bias size
  EXPECT_FALSE(run_op("Conv", {x, rand_tensor({2, 3, 3, 3}, 2)}, {attr_ints("kernel_shape", {2, 2})}).is_ok());
  EXPECT_FALSE(run_op("Conv", {x, rand_tensor({2, 3, 3, 3}, 2)}, {attr_ints("strides", {1})}).is_ok());
  EXPECT_FALSE(run_op("Conv", {x, rand_tensor({2, 3, 3, 3}, 2)}, {attr_ints("strides", {0, 1})}).is_ok());
  EXPECT_FALSE(run_op("Conv", {x, rand_tensor({3, 1, 3, 3}, 2)}, {attr_int("group", 2)}).is_ok());
  EXPECT_FALSE(run_op("Conv", {rand_tensor({3, 5}, 1), rand_tensor({2, 3}, 2)}).is_ok());
  EXPECT_FALSE(run_op("Conv", {x, rand_tensor({2, 3, 3, 3}, 2)}, {attr_string("auto_pad", "FOO")}).is_ok());
}

// ---- ConvTranspose ---------------------------------------------------------------------------

std::vector<float> naive_conv_transpose(const Tensor& x, const Tensor& w, int64_t group, const Geo& g) {
  // g.in = X spatial, g.out = Y spatial, pb = pad begin
  const int64_t N = x.dim(0), C = x.dim(1), Mg = w.dim(1), M = Mg * group, Cg = C / group;
  const int64_t osz = g.out[0] * g.out[1] * g.out[2], isz = g.in[0] * g.in[1] * g.in[2], K = g.k[0] * g.k[1] * g.k[2];
  std::vector<double> y(static_cast<size_t>(N * M * osz), 0.0);
  const float* xp = x.data<float>();
  const float* wp = w.data<float>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t ml = 0; ml < Mg; ++ml)
        for (int64_t i0 = 0; i0 < g.in[0]; ++i0)
          for (int64_t i1 = 0; i1 < g.in[1]; ++i1)
            for (int64_t i2 = 0; i2 < g.in[2]; ++i2)
              for (int64_t k0 = 0; k0 < g.k[0]; ++k0)
                for (int64_t k1 = 0; k1 < g.k[1]; ++k1)
                  for (int64_t k2 = 0; k2 < g.k[2]; ++k2) {
                    const int64_t o0 = i0 * g.s[0] + k0 * g.d[0] - g.pb[0];
                    const int64_t o1 = i1 * g.s[1] + k1 * g.d[1] - g.pb[1];
                    const int64_t o2 = i2 * g.s[2] + k2 * g.d[2] - g.pb[2];
                    if (o0 < 0 || o0 >= g.out[0] || o1 < 0 || o1 >= g.out[1] || o2 < 0 || o2 >= g.out[2]) continue;
                    const int64_t m = (c / Cg) * Mg + ml;
                    y[static_cast<size_t>((n * M + m) * osz + (o0 * g.out[1] + o1) * g.out[2] + o2)] +=
                        xp[(n * C + c) * isz + (i0 * g.in[1] + i1) * g.in[2] + i2] *
                        wp[(c * Mg + ml) * K + (k0 * g.k[1] + k1) * g.k[2] + k2];
                  }
  return std::vector<float>(y.begin(), y.end());
}

TEST(ConvTransposeOp, MatchesNaiveReference) {
  struct Case {
    Shape x, w;
    int64_t group;
    std::vector<int64_t> strides, dil, pads, out_pad;
  };
  const std::vector<Case> cases = {
      {{1, 1, 3, 3}, {1, 2, 3, 3}, 1, {}, {}, {}, {}},
      {{2, 4, 3, 4}, {4, 3, 3, 2}, 2, {2, 3}, {1, 2}, {1, 0, 0, 1}, {1, 0}},
      {{1, 2, 5}, {2, 3, 4}, 1, {3}, {2}, {2, 1}, {2}},
      {{1, 2, 2, 3, 2}, {2, 2, 2, 2, 3}, 1, {2, 1, 2}, {}, {0, 1, 0, 0, 0, 1}, {}},
  };
  uint32_t seed = 40;
  for (const Case& c : cases) {
    SCOPED_TRACE(shape_to_string(c.x) + " * " + shape_to_string(c.w));
    Tensor x = rand_tensor(c.x, seed++), w = rand_tensor(c.w, seed++);
    std::vector<Attribute> attrs = {attr_int("group", c.group)};
    if (!c.strides.empty()) attrs.push_back(attr_ints("strides", c.strides));
    if (!c.dil.empty()) attrs.push_back(attr_ints("dilations", c.dil));
    if (!c.pads.empty()) attrs.push_back(attr_ints("pads", c.pads));
    if (!c.out_pad.empty()) attrs.push_back(attr_ints("output_padding", c.out_pad));
    auto r = run_op("ConvTranspose", {x, w}, attrs, 11);
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    const Shape& ys = (*r)[0].tensor().shape();
    const size_t nd = c.x.size() - 2;
    for (size_t i = 0; i < nd; ++i) {
      const int64_t s = c.strides.empty() ? 1 : c.strides[i], d = c.dil.empty() ? 1 : c.dil[i];
      const int64_t p = c.pads.empty() ? 0 : c.pads[i] + c.pads[i + nd];
      EXPECT_EQ(ys[2 + i],
                s * (c.x[2 + i] - 1) + (c.out_pad.empty() ? 0 : c.out_pad[i]) + (c.w[2 + i] - 1) * d + 1 - p);
    }
    // naive: "in" = X spatial, "out" = Y spatial
    Geo g = make_geo(c.x, c.w, c.strides, c.dil, c.pads, ys);
    Geo gt = g;
    for (int i = 0; i < 3; ++i) std::swap(gt.in[i], gt.out[i]);
    const size_t o = 3 - nd;
    for (size_t i = 0; i < nd; ++i) {
      gt.in[o + i] = c.x[2 + i];
      gt.out[o + i] = ys[2 + i];
    }
    expect_conv_near(values<float>((*r)[0]), naive_conv_transpose(x, w, c.group, gt));
  }
}

TEST(ConvTransposeOp, OutputShapeAndAutoPad) {
  Tensor x = rand_tensor({1, 1, 3, 3}, 7), w = rand_tensor({1, 2, 3, 3}, 8);
  Tensor b = Tensor::from_vector<float>({1.0f, -1.0f}, {2});
  // natural size: 3*2+3 = 9 rows, 2*2+3 = 7 cols; asking 10 x 8 extends at the end (pads -1)
  auto r = run_op("ConvTranspose", {x, w, b}, {attr_ints("strides", {3, 2}), attr_ints("output_shape", {10, 8})}, 11);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  const Tensor& y = (*r)[0].tensor();
  ASSERT_EQ(y.shape(), (Shape{1, 2, 10, 8}));
  EXPECT_EQ(y.data<float>()[9 * 8 + 3], 1.0f);        // last row of channel 0 is bias only
  EXPECT_EQ(y.data<float>()[80 + 9 * 8 + 7], -1.0f);  // channel 1
  auto same =
      run_op("ConvTranspose", {x, w}, {attr_ints("strides", {2, 2}), attr_string("auto_pad", "SAME_UPPER")}, 11);
  ASSERT_TRUE(same.is_ok()) << same.status().to_string();
  EXPECT_EQ((*same)[0].tensor().shape(), (Shape{1, 2, 6, 6}));
}

TEST(ConvTransposeOp, RejectsBadShapes) {
  Tensor x = rand_tensor({1, 2, 3, 3}, 1);
  EXPECT_FALSE(run_op("ConvTranspose", {x, rand_tensor({3, 2, 3, 3}, 2)}).is_ok());
  EXPECT_FALSE(run_op("ConvTranspose", {x, rand_tensor({2, 2, 3, 3}, 2), rand_tensor({3}, 3)}).is_ok());
  EXPECT_FALSE(run_op("ConvTranspose", {x, rand_tensor({2, 2, 3, 3}, 2)}, {attr_ints("pads", {5, 5, 5, 5})}).is_ok());
  EXPECT_FALSE(run_op("ConvTranspose", {x, rand_tensor({2, 2, 3, 3}, 2)}, {attr_ints("output_padding", {1})}).is_ok());
}

// ---- DeformConv ------------------------------------------------------------------------------

TEST(DeformConvOp, ZeroOffsetEqualsConv) {
  Tensor x = rand_tensor({2, 4, 5, 6}, 21), w = rand_tensor({6, 2, 3, 2}, 22), b = rand_tensor({6}, 23);
  auto offset = Tensor::allocate(DataType::kFloat, {2, 2 * 6 * 2, 4, 3});
  ASSERT_TRUE(offset.is_ok());
  std::vector<Attribute> attrs = {attr_int("group", 2), attr_int("offset_group", 2), attr_ints("pads", {1, 0, 0, 1}),
                                  attr_ints("strides", {1, 2})};
  auto d = run_op("DeformConv", {x, w, *offset, b}, attrs, 19);
  ASSERT_TRUE(d.is_ok()) << d.status().to_string();
  attrs.pop_back();
  attrs.erase(attrs.begin() + 1);
  attrs.push_back(attr_ints("strides", {1, 2}));
  auto c = run_op("Conv", {x, w, b}, attrs, 11);
  ASSERT_TRUE(c.is_ok()) << c.status().to_string();
  expect_conv_near(values<float>((*d)[0]), values<float>((*c)[0]));
}

TEST(DeformConvOp, OffsetsInterpolateAndMaskScales) {
  // 1x1 kernel: output = mask * bilinear sample of x at (h + dy, w + dx)
  Tensor x = Tensor::from_vector<float>({0, 1, 2, 3}, {1, 1, 2, 2});
  Tensor w = Tensor::from_vector<float>({1}, {1, 1, 1, 1});
  Tensor off = Tensor::from_vector<float>({0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0, 0.5f, 0}, {1, 2, 2, 2});
  Tensor mask = Tensor::from_vector<float>({1, 1, 1, 2}, {1, 1, 2, 2});
  auto r = run_op("DeformConv", {x, w, off, Tensor(), mask}, {}, 19);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  // sample points: (0.5,0.5) -> 1.5; (0.5,1) -> (1+3)/2 = 2; (1.5,0.5) -> row 2 is outside:
  // 0.25*2 + 0.25*3 = 1.25; (1.5,1) -> 0.5*3 = 1.5, times mask 2 = 3
  expect_conv_near(values<float>((*r)[0]), {1.5f, 2.0f, 1.25f, 3.0f});
}

TEST(DeformConvOp, RejectsBadOffsetShape) {
  Tensor x = rand_tensor({1, 1, 4, 4}, 1), w = rand_tensor({1, 1, 2, 2}, 2);
  EXPECT_FALSE(run_op("DeformConv", {x, w, rand_tensor({1, 8, 2, 2}, 3)}, {}, 19).is_ok());
  EXPECT_FALSE(run_op("DeformConv", {x, w, rand_tensor({1, 8, 3, 3}, 3)}, {attr_int("offset_group", 2)}, 19).is_ok());
}

}  // namespace
}  // namespace xonnx
