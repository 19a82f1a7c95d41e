// com.microsoft QGemm, reference kernel (runtime/ops/ref/qgemm.cc): float and quantized outputs
// against a naive computation written here (odd shapes, all 8-bit type pairs, per-tensor and
// per-column B parameters, C shapes, alpha, transposes), hand-computed saturation and rounding
// ties, and every bad input (constant ones fail at session creation, computed ones on run).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "runtime/exec/session.h"
#include "tests/unit/backend_test_util.h"
#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace {

using backendtest::elements;
using backendtest::expect_error;
using backendtest::f32;
using backendtest::i8;
using backendtest::kMs;
using backendtest::u8;

// An input of the one-node model: a graph input, an initializer, or omitted (undefined tensor).
using backendtest::cst;
using backendtest::In;
using backendtest::var;

Tensor i32(std::vector<int32_t> v, Shape s) { return Tensor::from_vector<int32_t>(v, std::move(s)); }
// An 8-bit tensor of `type` from ints.
Tensor q8(DataType type, const std::vector<int>& v, Shape s) {
  if (type == DataType::kInt8) {
    return Tensor::from_vector<int8_t>(std::vector<int8_t>(v.begin(), v.end()), std::move(s));
  }
  return Tensor::from_vector<uint8_t>(std::vector<uint8_t>(v.begin(), v.end()), std::move(s));
}

// reference_only: the reference kernel this file tests; false lets fast kernels (the optimized
// QGemm) take the node when they accept it.
Result<std::unique_ptr<Session>> make_session(const std::vector<In>& inputs, const std::vector<Attribute>& attrs,
                                              bool reference_only = true) {
  backendtest::Op op("QGemm", kMs, 17);
  op.node = "qgemm";
  Model model = backendtest::one_node_model(op, inputs, attrs);
  SessionOptions options;
  options.disable_xnnpack = reference_only;
  options.disable_optimized = reference_only;
  return Session::create_from_model(std::move(model), options);
}

Result<Tensor> run(const std::vector<In>& inputs, const std::vector<Attribute>& attrs = {}) {
  XONNX_ASSIGN_OR_RETURN(auto session, make_session(inputs, attrs));
  std::vector<Value> given;
  for (const In& in : inputs)
    if (in.t.defined() && !in.constant) given.push_back(in.t);
  XONNX_ASSIGN_OR_RETURN(auto out, session->run(given));
  return out[0].tensor();
}

// ---- against a naive computation ---------------------------------------------------------------

enum class Bias { kNone, kVector, kScalar, kMatrix, kColumn, kRow };

struct Case {
  DataType a_type = DataType::kUint8, b_type = DataType::kInt8;
  int64_t m = 1, k = 1, n = 1;
  bool trans_a = false, trans_b = false, per_column = false, constants = false;
  float alpha = 1.0f;
  Bias bias = Bias::kNone;
  // Quantized output: y_scale = typical |real| * y_scale_factor (small factors saturate).
  DataType y_type = DataType::kUndefined;
  double y_scale_factor = 1.0 / 40;
};

std::string describe(const Case& c) {
  return std::string("A ") + dtype_name(c.a_type) + " B " + dtype_name(c.b_type) + " M " + std::to_string(c.m) + " K " +
         std::to_string(c.k) + " N " + std::to_string(c.n) + " transA " + std::to_string(c.trans_a) + " transB " +
         std::to_string(c.trans_b) + " per_column " + std::to_string(c.per_column) + " alpha " +
         std::to_string(c.alpha) + " bias " + std::to_string(static_cast<int>(c.bias)) + " constants " +
         std::to_string(c.constants) +
         (c.y_type == DataType::kUndefined ? "" : std::string(" y ") + dtype_name(c.y_type));
}

int type_min(DataType t) { return t == DataType::kInt8 ? -128 : 0; }
int type_max(DataType t) { return t == DataType::kInt8 ? 127 : 255; }

void check_case(const Case& c, uint32_t seed) {
  SCOPED_TRACE(describe(c));
  std::mt19937 gen(seed);
  auto uniform = [&gen](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(gen); };
  auto values = [&](DataType t, int64_t count) {
    std::vector<int> v(static_cast<size_t>(count));
    for (int& e : v) e = uniform(type_min(t), type_max(t));
    return v;
  };
  const std::vector<int> a = values(c.a_type, c.m * c.k), b = values(c.b_type, c.k * c.n);
  const int a_zp = uniform(type_min(c.a_type) / 2, type_max(c.a_type) / 2);
  const int64_t params = c.per_column ? c.n : 1;
  std::vector<int> b_zp(static_cast<size_t>(params));
  std::vector<float> b_scale(static_cast<size_t>(params));
  for (int& z : b_zp) z = uniform(type_min(c.b_type) / 2, type_max(c.b_type) / 2);
  for (float& s : b_scale) s = 0.001f * static_cast<float>(uniform(1, 50));
  const float a_scale = 0.0173f;

  Shape c_shape;
  switch (c.bias) {
    case Bias::kNone: break;
    case Bias::kVector: c_shape = {c.n}; break;
    case Bias::kScalar: c_shape = {}; break;
    case Bias::kMatrix: c_shape = {c.m, c.n}; break;
    case Bias::kColumn: c_shape = {c.m, 1}; break;
    case Bias::kRow: c_shape = {1, c.n}; break;
  }
  std::vector<int32_t> bias(static_cast<size_t>(c.bias == Bias::kNone ? 0 : shape_numel(c_shape)));
  for (int32_t& v : bias) v = uniform(-20000, 20000);
  auto bias_at = [&](int64_t m, int64_t n) -> int64_t {
    switch (c.bias) {
      case Bias::kNone: return 0;
      case Bias::kVector:
      case Bias::kRow: return bias[static_cast<size_t>(n)];
      case Bias::kScalar: return bias[0];
      case Bias::kMatrix: return bias[static_cast<size_t>(m * c.n + n)];
      case Bias::kColumn: return bias[static_cast<size_t>(m)];
    }
    return 0;
  };

  // The naive definition, in double.
  std::vector<double> real(static_cast<size_t>(c.m * c.n));
  double typical = 0;
  for (int64_t m = 0; m < c.m; ++m) {
    for (int64_t n = 0; n < c.n; ++n) {
      int64_t acc = 0;
      for (int64_t k = 0; k < c.k; ++k) {
        const int av = c.trans_a ? a[static_cast<size_t>(k * c.m + m)] : a[static_cast<size_t>(m * c.k + k)];
        const int bv = c.trans_b ? b[static_cast<size_t>(n * c.k + k)] : b[static_cast<size_t>(k * c.n + n)];
        acc += static_cast<int64_t>(av - a_zp) * (bv - b_zp[static_cast<size_t>(c.per_column ? n : 0)]);
      }
      const double bs = b_scale[static_cast<size_t>(c.per_column ? n : 0)];
      const double r =
          static_cast<double>(acc + bias_at(m, n)) * static_cast<double>(c.alpha) * static_cast<double>(a_scale) * bs;
      real[static_cast<size_t>(m * c.n + n)] = r;
      typical = std::max(typical, std::fabs(r));
    }
  }

  auto wrap = [&c](Tensor t) { return c.constants ? cst(std::move(t)) : var(std::move(t)); };
  const Shape a_shape = c.trans_a ? Shape{c.k, c.m} : Shape{c.m, c.k};
  const Shape b_shape = c.trans_b ? Shape{c.n, c.k} : Shape{c.k, c.n};
  const Shape param_shape = c.per_column ? Shape{c.n} : Shape{};
  std::vector<In> in = {var(q8(c.a_type, a, a_shape)),
                        wrap(f32(a_scale)),
                        wrap(q8(c.a_type, {a_zp}, {})),
                        wrap(q8(c.b_type, b, b_shape)),
                        wrap(Tensor::from_vector<float>(b_scale, param_shape)),
                        wrap(q8(c.b_type, b_zp, param_shape)),
                        c.bias == Bias::kNone ? In{} : wrap(i32(bias, c_shape))};
  const bool quantized = c.y_type != DataType::kUndefined;
  const double y_scale = static_cast<float>(std::max(typical, 1e-3) * c.y_scale_factor);
  const int y_zp = quantized ? (c.y_type == DataType::kInt8 ? -7 : 131) : 0;
  if (quantized) {
    in.push_back(wrap(f32(static_cast<float>(y_scale))));
    in.push_back(wrap(q8(c.y_type, {y_zp}, {})));
  } else if (c.bias == Bias::kNone) {
    in.pop_back();  // the 6-input form
  }
  std::vector<Attribute> attrs = {testing::attr_int("transA", c.trans_a), testing::attr_int("transB", c.trans_b)};
  if (c.alpha != 1.0f) attrs.push_back(testing::attr_float("alpha", c.alpha));

  auto y = run(in, attrs);
  ASSERT_TRUE(y.is_ok()) << y.status().to_string();
  ASSERT_EQ(y->shape(), (Shape{c.m, c.n}));
  if (!quantized) {
    ASSERT_EQ(y->dtype(), DataType::kFloat);
    for (size_t i = 0; i < real.size(); ++i) {
      ASSERT_FLOAT_EQ(y->data<float>()[i], static_cast<float>(real[i])) << "element " << i;
    }
    return;
  }
  ASSERT_EQ(y->dtype(), c.y_type);
  const std::vector<double> got = elements(*y);
  int saturated = 0;
  for (size_t i = 0; i < real.size(); ++i) {
    double want = std::nearbyint(real[i] / y_scale) + y_zp;
    want = std::min<double>(std::max<double>(want, type_min(c.y_type)), type_max(c.y_type));
    saturated += want == type_min(c.y_type) || want == type_max(c.y_type);
    ASSERT_EQ(got[i], want) << "element " << i << " real " << real[i];
  }
  if (c.y_scale_factor < 0.01 && real.size() >= 20) {
    EXPECT_GT(saturated, 0) << "degenerate: nothing saturates";
  }
}

constexpr DataType kTypePairs[4][2] = {{DataType::kUint8, DataType::kInt8},
                                       {DataType::kUint8, DataType::kUint8},
                                       {DataType::kInt8, DataType::kInt8},
                                       {DataType::kInt8, DataType::kUint8}};
constexpr Bias kBiases[6] = {Bias::kNone, Bias::kVector, Bias::kScalar, Bias::kMatrix, Bias::kColumn, Bias::kRow};
constexpr float kAlphas[3] = {1.0f, 0.5f, -1.75f};

// Every odd shape with every A/B type pair; the other options cycle so each meets each shape class.
TEST(QGemmRef, FloatOutputMatchesNaive) {
  int i = 0;
  for (int64_t m : {1, 3, 5}) {
    for (int64_t k : {1, 7, 33}) {
      for (int64_t n : {1, 5, 17}) {
        for (const auto& types : kTypePairs) {
          Case c;
          c.a_type = types[0];
          c.b_type = types[1];
          c.m = m;
          c.k = k;
          c.n = n;
          c.per_column = i % 2 == 1;
          c.bias = kBiases[i % 6];
          c.alpha = kAlphas[i % 3];
          c.trans_a = (i / 2) % 2 == 1;
          c.trans_b = (i / 4) % 2 == 1;
          c.constants = (i / 3) % 2 == 1;
          check_case(c, static_cast<uint32_t>(100 + i));
          ++i;
        }
      }
    }
  }
}

TEST(QGemmRef, QuantizedOutputMatchesNaive) {
  int i = 0;
  for (DataType y_type : {DataType::kUint8, DataType::kInt8}) {
    for (int64_t m : {1, 3, 5}) {
      for (int64_t k : {1, 7, 33}) {
        for (int64_t n : {5, 17}) {
          Case c;
          c.a_type = kTypePairs[i % 4][0];
          c.b_type = kTypePairs[i % 4][1];
          c.m = m;
          c.k = k;
          c.n = n;
          c.y_type = y_type;
          c.y_scale_factor = i % 2 == 0 ? 1.0 / 200 : 1.0 / 300;  // both ends saturate in some elements
          c.per_column = (i / 2) % 2 == 1;
          c.bias = kBiases[i % 6];
          c.alpha = kAlphas[i % 3];
          c.trans_a = (i / 3) % 2 == 1;
          c.trans_b = (i / 5) % 2 == 1;
          c.constants = i % 3 == 0;
          check_case(c, static_cast<uint32_t>(500 + i));
          ++i;
        }
      }
    }
  }
}

// M = 6, K = 1, N = 1 with unit scales: Y = round_half_even(A * B / y_scale) + y_zp, saturated.
std::vector<In> column_inputs(DataType t, const std::vector<int>& a, int b, float y_scale, DataType y_type, int y_zp) {
  const int64_t m = static_cast<int64_t>(a.size());
  return {var(q8(t, a, {m, 1})), cst(f32(1)), cst(q8(t, {0}, {})), cst(q8(t, {b}, {1, 1})),    cst(f32(1)),
          cst(q8(t, {0}, {})),   In{},        cst(f32(y_scale)),   cst(q8(y_type, {y_zp}, {}))};
}

TEST(QGemmRef, RoundsHalfToEvenBeforeAddingZeroPoint) {
  // real / 2 = 0.5, 1.5, 2.5, -0.5, -1.5, -2.5 -> 0, 2, 2, 0, -2, -2; + 11 (odd: rounding after
  // adding it would give 12, 12, 14, 10, 10, 8).
  auto y = run(column_inputs(DataType::kInt8, {1, 3, 5, -1, -3, -5}, 1, 2.0f, DataType::kUint8, 11));
  ASSERT_TRUE(y.is_ok()) << y.status().to_string();
  EXPECT_EQ(y->dtype(), DataType::kUint8);
  EXPECT_EQ(elements(*y), (std::vector<double>{11, 13, 13, 11, 9, 9}));
  auto z = run(column_inputs(DataType::kUint8, {1, 3, 5, 7, 9, 0}, 1, 2.0f, DataType::kInt8, -3));
  ASSERT_TRUE(z.is_ok()) << z.status().to_string();
  EXPECT_EQ(z->dtype(), DataType::kInt8);
  EXPECT_EQ(elements(*z), (std::vector<double>{-3, -1, -1, 1, 1, -3}));  // 0, 2, 2, 4, 4, 0
}

TEST(QGemmRef, SaturatesAtBothEnds) {
  // int8 output: A * B = 127 * 127, -128 * 127, ... with y_zp -10.
  auto y = run(column_inputs(DataType::kInt8, {127, -128, 100, -100, 0, 1}, 127, 1.0f, DataType::kInt8, -10));
  ASSERT_TRUE(y.is_ok()) << y.status().to_string();
  EXPECT_EQ(elements(*y), (std::vector<double>{127, -128, 127, -128, -10, 117}));
  // uint8 output: 255 * 255 / 64 = 1016 -> 255.
  auto z = run(column_inputs(DataType::kUint8, {255, 0, 64, 128, 1, 2}, 255, 64.0f, DataType::kUint8, 0));
  ASSERT_TRUE(z.is_ok()) << z.status().to_string();
  EXPECT_EQ(elements(*z), (std::vector<double>{255, 0, 255, 255, 4, 8}));  // 3.98 -> 4, 7.97 -> 8
  // Negative results to uint8: below zero saturates at 0; C pushes values past the top.
  std::vector<In> in = column_inputs(DataType::kInt8, {-100, -1, 1, 2, 0, 50}, 1, 1.0f, DataType::kUint8, 5);
  in[6] = cst(i32({250}, {}));
  auto w = run(in);
  ASSERT_TRUE(w.is_ok()) << w.status().to_string();
  EXPECT_EQ(elements(*w), (std::vector<double>{155, 254, 255, 255, 255, 255}));
  in[6] = cst(i32({-100}, {1}));
  w = run(in);
  ASSERT_TRUE(w.is_ok()) << w.status().to_string();
  EXPECT_EQ(elements(*w), (std::vector<double>{0, 0, 0, 0, 0, 0}));
}

TEST(QGemmRef, OmittedZeroPointsAndPerColumnParameters) {
  // A [2, 3] uint8 with a_zp omitted (0); B [3, 2] int8, b_zp omitted; per-column b_scale.
  auto y = run({var(q8(DataType::kUint8, {1, 2, 3, 4, 5, 6}, {2, 3})), var(f32(0.5f)), In{},
                var(q8(DataType::kInt8, {1, -1, 2, 0, -3, 4}, {3, 2})),
                var(Tensor::from_vector<float>({1.0f, 0.25f}, {2})), In{}});
  ASSERT_TRUE(y.is_ok()) << y.status().to_string();
  // acc = [[1+4-9, -1+0+12], [4+10-18, -4+0+24]] = [[-4, 11], [-4, 20]]
  EXPECT_EQ(elements(*y), (std::vector<double>{-4 * 0.5, 11 * 0.125, -4 * 0.5, 20 * 0.125}));
  // Per-column zero points with a per-tensor scale (and the reverse) are accepted.
  auto z = run({var(q8(DataType::kUint8, {1, 2, 3, 4, 5, 6}, {2, 3})), var(f32(1)), var(u8(1)),
                var(q8(DataType::kInt8, {1, -1, 2, 0, -3, 4}, {3, 2})), var(f32(1)),
                var(q8(DataType::kInt8, {1, -1}, {2}))});
  ASSERT_TRUE(z.is_ok()) << z.status().to_string();
  // A - 1 = [[0,1,2],[3,4,5]]; B - zp = [[0,0],[1,1],[-4,5]]
  EXPECT_EQ(elements(*z), (std::vector<double>{-7, 11, -16, 29}));
}

TEST(QGemmRef, EmptyInnerDimensionGivesScaledBias) {
  auto y = run({var(q8(DataType::kUint8, {}, {2, 0})), var(f32(0.5f)), var(u8(3)), var(q8(DataType::kInt8, {}, {0, 3})),
                var(f32(2)), var(i8(0)), var(i32({1, -2, 3}, {3}))});
  ASSERT_TRUE(y.is_ok()) << y.status().to_string();
  EXPECT_EQ(elements(*y), (std::vector<double>{1, -2, 3, 1, -2, 3}));
}

// ---- bad input ---------------------------------------------------------------------------------

// A valid QGemm: A [2, 3] uint8, B [3, 4] int8, per-column b_scale / b_zero_point, C [4],
// uint8 output; parameters (and B) constant or computed.
std::vector<In> valid_inputs(bool constant) {
  auto wrap = [constant](Tensor t) { return constant ? cst(std::move(t)) : var(std::move(t)); };
  return {var(q8(DataType::kUint8, {1, 2, 3, 4, 5, 6}, {2, 3})),
          wrap(f32(0.1f)),
          wrap(u8(2)),
          wrap(q8(DataType::kInt8, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {3, 4})),
          wrap(Tensor::from_vector<float>({0.1f, 0.2f, 0.3f, 0.4f}, {4})),
          wrap(q8(DataType::kInt8, {0, 1, -1, 2}, {4})),
          wrap(i32({1, 2, 3, 4}, {4})),
          wrap(f32(0.05f)),
          wrap(u8(128))};
}

// Replaces input `i` in both variants and expects: creation to fail with constant parameters
// (with and without fast kernels: they must not hide the error), run to fail with computed ones.
// One input always stays a graph input (A, or B when A is the bad one), so nothing is folded.
void expect_bad(size_t i, const Tensor& bad, const std::vector<std::string>& parts,
                const std::vector<Attribute>& attrs = {}) {
  SCOPED_TRACE("input " + std::to_string(i));
  std::vector<In> constant = valid_inputs(true), computed = valid_inputs(false);
  if (i == 0) constant[3].constant = false;
  constant[i] = bad.defined() ? cst(bad) : In{};
  computed[i] = bad.defined() ? var(bad) : In{};
  std::vector<std::string> with_node = parts;
  with_node.push_back("qgemm");
  with_node.push_back("QGemm");
  for (bool reference_only : {true, false}) {
    expect_error(make_session(constant, attrs, reference_only).status(), with_node);
  }
  expect_error(run(computed, attrs).status(), with_node);
}

TEST(QGemmErrors, ValidInputsRun) {
  for (bool constant : {true, false}) {
    auto y = run(valid_inputs(constant));
    ASSERT_TRUE(y.is_ok()) << y.status().to_string();
    EXPECT_EQ(y->dtype(), DataType::kUint8);
    EXPECT_EQ(y->shape(), (Shape{2, 4}));
  }
}

TEST(QGemmErrors, DataTypes) {
  expect_bad(0, Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3}), {"input A", "int8 or uint8", "float32"});
  expect_bad(3, Tensor::from_vector<int32_t>(std::vector<int32_t>(12, 1), {3, 4}),
             {"input B", "int8 or uint8", "int32"});
  expect_bad(1, Tensor::scalar<double>(0.1), {"input a_scale", "float32", "float64"});
  expect_bad(4, Tensor::from_vector<int32_t>({1, 1, 1, 1}, {4}), {"input b_scale", "float32", "int32"});
  expect_bad(7, Tensor::scalar<double>(0.1), {"input y_scale", "float32"});
  expect_bad(6, Tensor::from_vector<float>({1, 2, 3, 4}, {4}), {"input C", "int32", "float32"});
  expect_bad(6, Tensor::from_vector<int64_t>({1, 2, 3, 4}, {4}), {"input C", "int32", "int64"});
  expect_bad(8, f32(1), {"input y_zero_point", "int8 or uint8", "float32"});
}

// valid_inputs(true) with A constant too (y_scale computed, so nothing is folded): what needs M or
// A's type is then known at session creation.
std::vector<In> constant_a_inputs() {
  std::vector<In> in = valid_inputs(true);
  in[0].constant = true;
  in[7].constant = false;
  return in;
}

TEST(QGemmErrors, ZeroPointTypeDoesNotMatchData) {
  // A is a graph input: its type is known on run only.
  std::vector<In> in = valid_inputs(true);
  in[2] = cst(i8(2));
  expect_error(run(in).status(), {"qgemm", "input a_zero_point", "int8", "uint8", "A"});
  in = constant_a_inputs();
  in[2] = cst(i8(2));
  expect_error(make_session(in, {}).status(), {"qgemm", "input a_zero_point", "int8", "uint8", "A"});
  expect_bad(5, q8(DataType::kUint8, {0, 1, 1, 2}, {4}), {"input b_zero_point", "uint8", "int8", "B"});
  expect_bad(2, Tensor::scalar<int32_t>(2), {"input a_zero_point", "int8 or uint8", "int32"});
}

TEST(QGemmErrors, Ranks) {
  expect_bad(3, q8(DataType::kInt8, std::vector<int>(12, 1), {12}), {"input B", "2-D", "[12]"});
  expect_bad(3, q8(DataType::kInt8, std::vector<int>(12, 1), {1, 3, 4}), {"input B", "2-D", "[1, 3, 4]"});
  // A is a graph input: checked on run only.
  std::vector<In> in = valid_inputs(true);
  in[0] = var(q8(DataType::kUint8, {1, 2, 3, 4, 5, 6}, {1, 2, 3}));
  expect_error(run(in).status(), {"qgemm", "input A", "2-D", "[1, 2, 3]"});
}

TEST(QGemmErrors, InnerDimensionMismatchNamesBothShapes) {
  std::vector<In> in = valid_inputs(false);
  in[3] = var(q8(DataType::kInt8, std::vector<int>(16, 1), {4, 4}));
  expect_error(run(in).status(), {"qgemm", "inner dimensions", "A", "[2, 3]", "B", "[4, 4]"});
  // transB makes B [N, K]: [4, 3] fits, [3, 4] does not.
  in[3] = var(q8(DataType::kInt8, std::vector<int>(12, 1), {3, 4}));
  expect_error(run(in, {testing::attr_int("transB", 1)}).status(),
               {"inner dimensions", "[2, 3]", "[3, 4]", "transB=1"});
  // Both constant: at session creation.
  in = constant_a_inputs();
  in[0] = cst(q8(DataType::kUint8, {1, 2, 3, 4, 5, 6}, {3, 2}));
  expect_error(make_session(in, {}).status(), {"qgemm", "inner dimensions", "[3, 2]", "[3, 4]"});
}

TEST(QGemmErrors, PerColumnLengths) {
  expect_bad(4, Tensor::from_vector<float>({0.1f, 0.2f, 0.3f}, {3}), {"input b_scale", "3 elements", "N = 4"});
  expect_bad(5, q8(DataType::kInt8, {0, 1, 2}, {3}), {"input b_zero_point", "3 elements", "N = 4"});
  expect_bad(5, q8(DataType::kInt8, {0, 1, 2, 3}, {1, 4}), {"input b_zero_point", "1-D", "[1, 4]"});
  expect_bad(1, Tensor::from_vector<float>({0.1f, 0.2f}, {2}), {"input a_scale", "scalar", "[2]"});
  expect_bad(2, q8(DataType::kUint8, {1, 2}, {2}), {"input a_zero_point", "scalar", "[2]"});
  expect_bad(7, Tensor::from_vector<float>({0.1f, 0.2f}, {2}), {"input y_scale", "scalar", "[2]"});
  expect_bad(8, q8(DataType::kUint8, {1, 2}, {2}), {"input y_zero_point", "scalar", "[2]"});
}

TEST(QGemmErrors, InvalidScales) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (float bad : {0.0f, -0.5f, nan, inf, -inf}) {
    SCOPED_TRACE(bad);
    expect_bad(1, f32(bad), {"input a_scale", "positive and finite"});
    expect_bad(7, f32(bad), {"input y_scale", "positive and finite"});
    expect_bad(4, Tensor::from_vector<float>({0.1f, 0.2f, bad, 0.4f}, {4}),
               {"input b_scale[2]", "positive and finite"});
  }
}

TEST(QGemmErrors, BiasNotBroadcastable) {
  expect_bad(6, i32({1, 2, 3}, {3}), {"input C", "[3]", "does not broadcast"});
  expect_bad(6, i32(std::vector<int32_t>(8, 1), {2, 2, 2}), {"input C", "[2, 2, 2]"});
  // M is known only on run (A is a graph input): [3, 4] against [2, 4] fails there, or at session
  // creation when A is constant.
  std::vector<In> in = valid_inputs(true);
  in[6] = cst(i32(std::vector<int32_t>(12, 1), {3, 4}));
  expect_error(run(in).status(), {"qgemm", "input C", "[3, 4]", "[2, 4]"});
  in = constant_a_inputs();
  in[6] = cst(i32(std::vector<int32_t>(12, 1), {3, 4}));
  expect_error(make_session(in, {}).status(), {"qgemm", "input C", "[3, 4]", "[2, 4]"});
}

TEST(QGemmErrors, OutputParametersMustBePaired) {
  expect_bad(8, Tensor(), {"y_scale and y_zero_point", "only y_scale"});
  expect_bad(7, Tensor(), {"y_scale and y_zero_point", "only y_zero_point"});
}

TEST(QGemmErrors, MissingInputAndBadAlpha) {
  std::vector<In> in = valid_inputs(false);
  in[1] = In{};
  expect_error(run(in).status(), {"qgemm", "a_scale"});
  in = valid_inputs(true);
  expect_error(make_session(in, {testing::attr_float("alpha", std::numeric_limits<float>::quiet_NaN())}).status(),
               {"qgemm", "alpha", "finite"});
}

// ---- com.microsoft MatMulIntegerToFloat ----------------------------------------------------------

Result<Tensor> run_to_float(const std::vector<In>& inputs) {
  backendtest::Op op("MatMulIntegerToFloat", kMs, 17);
  SessionOptions options;
  options.disable_xnnpack = true;
  options.disable_optimized = true;  // the reference kernel
  XONNX_ASSIGN_OR_RETURN(auto session,
                         Session::create_from_model(backendtest::one_node_model(op, inputs, {}), options));
  std::vector<Value> given;
  for (const In& in : inputs)
    if (in.t.defined() && !in.constant) given.push_back(in.t);
  XONNX_ASSIGN_OR_RETURN(auto out, session->run(given));
  return out[0].tensor();
}

// A [2, 3, K] uint8 with a zero point, B [K, N] int8 with per-column scales and zero points, a
// float bias: against the sums written out here.
TEST(MatMulIntegerToFloatRef, MatchesNaive) {
  const int64_t k = 5, n = 4;
  std::mt19937 gen(9);
  std::uniform_int_distribution<int> byte(0, 255), code(-128, 127);
  std::vector<int> a(2 * 3 * k), b(k * n);
  for (int& v : a) v = byte(gen);
  for (int& v : b) v = code(gen);
  const std::vector<float> b_scale = {0.5f, 0.25f, 2.0f, 1.0f}, bias = {1.0f, -2.0f, 0.5f, 0.0f};
  const std::vector<int> b_zp = {0, 3, -2, 1};
  const float a_scale = 0.125f;
  const int a_zp = 100;
  auto y = run_to_float({var(q8(DataType::kUint8, a, {2, 3, k})), cst(q8(DataType::kInt8, b, {k, n})),
                         cst(f32(a_scale)), cst(Tensor::from_vector<float>(b_scale, {n})), cst(u8(a_zp)),
                         cst(q8(DataType::kInt8, b_zp, {n})), cst(Tensor::from_vector<float>(bias, {n}))});
  ASSERT_TRUE(y.is_ok()) << y.status().to_string();
  ASSERT_EQ(y->shape(), (Shape{2, 3, n}));
  for (int64_t r = 0; r < 6; ++r) {
    for (int64_t c = 0; c < n; ++c) {
      int64_t acc = 0;
      for (int64_t kk = 0; kk < k; ++kk) acc += (a[r * k + kk] - a_zp) * (b[kk * n + c] - b_zp[c]);
      const double want = static_cast<double>(acc) * a_scale * b_scale[c] + bias[c];
      EXPECT_FLOAT_EQ(y->data<float>()[r * n + c], static_cast<float>(want)) << "row " << r << " column " << c;
    }
  }
}

TEST(MatMulIntegerToFloatErrors, NameTheInput) {
  const Tensor a = q8(DataType::kUint8, std::vector<int>(6, 1), {2, 3});
  const Tensor b = q8(DataType::kInt8, std::vector<int>(12, 1), {3, 4});
  auto expect_error = [](const Result<Tensor>& r, const std::string& words) {
    ASSERT_FALSE(r.is_ok());
    EXPECT_NE(r.status().message().find(words), std::string::npos) << r.status().message();
  };
  expect_error(
      run_to_float({var(a), cst(q8(DataType::kInt8, std::vector<int>(24, 1), {2, 3, 4})), cst(f32(1)), cst(f32(1))}),
      "input B must be 2-D");
  expect_error(
      run_to_float({var(a), cst(q8(DataType::kInt8, std::vector<int>(8, 1), {2, 4})), cst(f32(1)), cst(f32(1))}),
      "do not multiply");
  expect_error(run_to_float({var(a), cst(b), cst(f32(1)), cst(f32(1)), In{}, In{},
                             cst(Tensor::from_vector<float>({1, 2}, {2}))}),
               "input bias must be a float32 vector of N = 4");
  expect_error(run_to_float({var(a), cst(b), cst(f32(-1)), cst(f32(1))}), "a_scale");
}

}  // namespace
}  // namespace xonnx
