// com.microsoft QLinearAdd / QLinearMul: the reference kernels (runtime/ops/ref/qlinear_binary.cc)
// against hand-computed results, the XNNPACK kernels (runtime/ops/xnnpack/qlinear_binary.cc)
// against the reference (within 1 integer step), and bad inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "runtime/exec/session.h"
#include "runtime/ops/xnnpack/xnnpack_util.h"
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

Tensor f32_1d(float v) { return Tensor::from_vector<float>({v}, {1}); }
template <typename T>
Tensor q(std::vector<int> v, Shape s) {
  std::vector<T> t(v.begin(), v.end());
  return Tensor::from_vector<T>(t, std::move(s));
}

using backendtest::cst;
using backendtest::In;
using backendtest::runtime_values;
using backendtest::var;

Result<std::unique_ptr<Session>> make_session(const std::string& op, const std::vector<In>& inputs,
                                              bool disable_xnnpack) {
  SessionOptions options;
  options.disable_xnnpack = disable_xnnpack;
  backendtest::Op node(op.c_str(), kMs, 13);
  node.node = "qbin";  // the errors below name it
  return Session::create_from_model(backendtest::one_node_model(node, inputs, {}), options);
}

// Runs on the reference kernels; all inputs are graph inputs unless marked constant.
Result<Tensor> run_ref(const std::string& op, const std::vector<In>& inputs) {
  XONNX_ASSIGN_OR_RETURN(auto session, make_session(op, inputs, true));
  XONNX_ASSIGN_OR_RETURN(auto out, session->run(runtime_values(inputs)));
  return out[0].tensor();
}

// ---- reference: hand-computed --------------------------------------------------------------

TEST(QLinearBinaryRef, AddRoundsHalfToEven) {
  // (a + b) / 2 with unit input scales: sums 1, 3, 5, 7, -1, -3 are ties.
  auto c = run_ref("QLinearAdd",
                   {var(q<uint8_t>({0, 1, 2, 3, 10, 20}, {6})), var(f32(1)), var(u8(0)),
                    var(q<uint8_t>({1, 2, 3, 4, 9, 17}, {6})), var(f32(1)), var(u8(0)), var(f32(2)), var(u8(100))});
  ASSERT_TRUE(c.is_ok()) << c.status().to_string();
  EXPECT_EQ(c->dtype(), DataType::kUint8);
  // 0.5->0, 1.5->2, 2.5->2, 3.5->4, 9.5->10, 18.5->18; + 100
  EXPECT_EQ(elements(*c), (std::vector<double>{100, 102, 102, 104, 110, 118}));
  auto d =
      run_ref("QLinearAdd", {var(q<int8_t>({-1, -3, -5, 0}, {4})), var(f32(1)), var(i8(0)),
                             var(q<int8_t>({0, 0, 0, -7}, {4})), var(f32(1)), var(i8(0)), var(f32(2)), var(i8(0))});
  ASSERT_TRUE(d.is_ok()) << d.status().to_string();
  EXPECT_EQ(elements(*d), (std::vector<double>{0, -2, -2, -4}));  // -0.5, -1.5, -2.5, -3.5
}

TEST(QLinearBinaryRef, AddSaturates) {
  auto c =
      run_ref("QLinearAdd", {var(q<uint8_t>({250, 0, 128}, {3})), var(f32(1)), var(u8(0)),
                             var(q<uint8_t>({250, 0, 128}, {3})), var(f32(1)), var(u8(128)), var(f32(1)), var(u8(0))});
  ASSERT_TRUE(c.is_ok()) << c.status().to_string();
  EXPECT_EQ(elements(*c), (std::vector<double>{255, 0, 128}));  // 372, -128, 128
  auto d =
      run_ref("QLinearAdd", {var(q<int8_t>({-128, 127, 100}, {3})), var(f32(1)), var(i8(0)),
                             var(q<int8_t>({-128, 127, -50}, {3})), var(f32(1)), var(i8(0)), var(f32(1)), var(i8(0))});
  ASSERT_TRUE(d.is_ok()) << d.status().to_string();
  EXPECT_EQ(elements(*d), (std::vector<double>{-128, 127, 50}));
  // Beyond the int32 range (an ORT x86 bug returns the minimum): still saturates to the maximum.
  auto e = run_ref("QLinearAdd", {var(q<uint8_t>({229}, {1})), var(f32(3000)), var(u8(0)), var(q<uint8_t>({1}, {1})),
                                  var(f32(1)), var(u8(0)), var(f32(1e-4f)), var(u8(0))});
  ASSERT_TRUE(e.is_ok()) << e.status().to_string();
  EXPECT_EQ(elements(*e), (std::vector<double>{255}));
}

// [1,4,3,3] + [1,4,1,1] (a per-channel bias): power-of-two scales keep every step exact.
template <typename T>
void check_channel_broadcast(int azp, int bzp, int czp) {
  std::vector<int> av(36), bv{-3, 0, 5, 9};
  for (int i = 0; i < 36; ++i) av[i] = (i * 7) % 40 - 20 + (std::is_signed<T>::value ? 0 : 40);
  if (!std::is_signed<T>::value)
    for (int& v : bv) v += 10;
  auto c = run_ref("QLinearAdd", {var(q<T>(av, {1, 4, 3, 3})), var(f32(0.5f)), var(Tensor::scalar<T>(T(azp))),
                                  var(q<T>(bv, {1, 4, 1, 1})), var(f32(0.25f)), var(Tensor::scalar<T>(T(bzp))),
                                  var(f32(0.5f)), var(Tensor::scalar<T>(T(czp)))});
  ASSERT_TRUE(c.is_ok()) << c.status().to_string();
  ASSERT_EQ(c->shape(), (Shape{1, 4, 3, 3}));
  std::vector<double> want(36);
  for (int ch = 0; ch < 4; ++ch) {
    for (int p = 0; p < 9; ++p) {
      const int i = ch * 9 + p;
      const double real = 0.5 * (av[i] - azp) + 0.25 * (bv[ch] - bzp);
      double v = std::nearbyint(real / 0.5) + czp;
      v = std::min<double>(std::max<double>(v, std::numeric_limits<T>::min()), std::numeric_limits<T>::max());
      want[i] = v;
    }
  }
  EXPECT_EQ(elements(*c), want);
}

TEST(QLinearBinaryRef, AddBroadcastsPerChannelInt8) { check_channel_broadcast<int8_t>(3, -2, 5); }
TEST(QLinearBinaryRef, AddBroadcastsPerChannelUint8) { check_channel_broadcast<uint8_t>(30, 12, 128); }

TEST(QLinearBinaryRef, ScalarOperandAndOmittedZeroPoints) {
  // B is a 0-D scalar on the left side of the broadcast; every zero point omitted (default 0),
  // C_zero_point left off entirely (7 inputs).
  auto c = run_ref("QLinearAdd", {var(q<uint8_t>({0, 1, 2, 3, 4, 5}, {2, 3})), var(f32(1)), In{},
                                  var(Tensor::scalar<uint8_t>(10)), var(f32(0.5f)), In{}, var(f32(1))});
  ASSERT_TRUE(c.is_ok()) << c.status().to_string();
  EXPECT_EQ(c->shape(), (Shape{2, 3}));
  EXPECT_EQ(elements(*c), (std::vector<double>{5, 6, 7, 8, 9, 10}));
  // The scalar as A, B with shape [3]; 1-element 1-D scales are accepted too.
  auto d = run_ref("QLinearAdd", {var(Tensor::scalar<int8_t>(-4)), var(f32_1d(2.0f)), var(i8(0)),
                                  var(q<int8_t>({1, 2, 3}, {3})), var(f32(1)), var(i8(0)), var(f32(1)), var(i8(1))});
  ASSERT_TRUE(d.is_ok()) << d.status().to_string();
  EXPECT_EQ(d->shape(), (Shape{3}));
  EXPECT_EQ(elements(*d), (std::vector<double>{-6, -5, -4}));
}

TEST(QLinearBinaryRef, Mul) {
  // (a - 2) * 0.5 * (b - 1) * 0.25 / 0.125 + 3 = (a - 2) * (b - 1) + 3
  auto c = run_ref("QLinearMul", {var(q<uint8_t>({2, 3, 4, 12, 200}, {5})), var(f32(0.5f)), var(u8(2)),
                                  var(q<uint8_t>({7, 5, 0, 30, 200}, {5})), var(f32(0.25f)), var(u8(1)),
                                  var(f32(0.125f)), var(u8(3))});
  ASSERT_TRUE(c.is_ok()) << c.status().to_string();
  EXPECT_EQ(elements(*c), (std::vector<double>{3, 7, 1, 255, 255}));  // 0, 4, -2, 290, big
  // int8 ties: 0.5*(a)*(b) with c_scale 1: 1*1*0.5 = 0.5 -> 0; 1*3*0.5 = 1.5 -> 2; -5*1*0.5 = -2.5 -> -2
  auto d =
      run_ref("QLinearMul", {var(q<int8_t>({1, 1, -5, -128}, {4})), var(f32(0.5f)), var(i8(0)),
                             var(q<int8_t>({1, 3, 1, 127}, {4})), var(f32(1)), var(i8(0)), var(f32(1)), var(i8(0))});
  ASSERT_TRUE(d.is_ok()) << d.status().to_string();
  EXPECT_EQ(elements(*d), (std::vector<double>{0, 2, -2, -128}));
}

// The QDQ fusion pass replaces DequantizeLinear x2 -> Add/Mul -> QuantizeLinear by these ops:
// the reference must give exactly what that float32 graph gives, ties and saturation included.
template <typename T>
void check_matches_qdq_graph(const std::string& op, const std::string& float_op, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> dist(std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
  const Shape as{2, 5, 3, 3}, bs{1, 5, 1, 3};
  std::vector<T> av(static_cast<size_t>(shape_numel(as))), bv(static_cast<size_t>(shape_numel(bs)));
  for (T& v : av) v = static_cast<T>(dist(gen));
  for (T& v : bv) v = static_cast<T>(dist(gen));
  const Tensor a = Tensor::from_vector<T>(av, as), b = Tensor::from_vector<T>(bv, bs);
  const float sa = 0.0173f, sb = 0.031f, sc = op == "QLinearAdd" ? 0.047f : 0.29f;
  const T za = static_cast<T>(dist(gen) / 8), zb = static_cast<T>(dist(gen) / 8), zc = static_cast<T>(dist(gen) / 8);
  auto fused = run_ref(op, {var(a), var(f32(sa)), var(Tensor::scalar<T>(za)), var(b), var(f32(sb)),
                            var(Tensor::scalar<T>(zb)), var(f32(sc)), var(Tensor::scalar<T>(zc))});
  ASSERT_TRUE(fused.is_ok()) << fused.status().to_string();

  Model model;
  model.ir_version = 8;
  model.opset_imports[""] = 13;
  auto node = [](const std::string& type, std::vector<std::string> in, const std::string& out) {
    Node n;
    n.op_type = type;
    n.name = out;
    n.inputs = std::move(in);
    n.outputs = {out};
    return n;
  };
  model.graph.nodes = {node("DequantizeLinear", {"a", "sa", "za"}, "fa"),
                       node("DequantizeLinear", {"b", "sb", "zb"}, "fb"), node(float_op, {"fa", "fb"}, "fc"),
                       node("QuantizeLinear", {"fc", "sc", "zc"}, "c")};
  model.graph.initializers = {{"sa", f32(sa)}, {"za", Tensor::scalar<T>(za)},
                              {"sb", f32(sb)}, {"zb", Tensor::scalar<T>(zb)},
                              {"sc", f32(sc)}, {"zc", Tensor::scalar<T>(zc)}};
  for (const char* name : {"a", "b"}) {
    ValueInfo vi;
    vi.name = name;
    model.graph.inputs.push_back(vi);
  }
  ValueInfo out;
  out.name = "c";
  model.graph.outputs.push_back(out);
  SessionOptions options;
  options.disable_xnnpack = true;
  auto session = Session::create_from_model(std::move(model), options);
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  auto want = (*session)->run({Value(a), Value(b)});
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  EXPECT_EQ(elements(*fused), elements((*want)[0].tensor()));
}

TEST(QLinearBinaryRef, ComputesInFloat32) {
  // Cases where the float32 DQ -> Add -> Q composition rounds differently from exact (double)
  // arithmetic (-61, -40, -105) or from a double division by C_scale (-60, -41, -105).
  auto c = run_ref("QLinearAdd", {var(q<int8_t>({65, 105, -85}, {3})), var(f32(0.0173f)), var(i8(0)),
                                  var(q<int8_t>({-128, -120, -111}, {3})), var(f32(0.031f)), var(i8(0)),
                                  var(f32(0.047f)), var(i8(0))});
  ASSERT_TRUE(c.is_ok()) << c.status().to_string();
  EXPECT_EQ(elements(*c), (std::vector<double>{-60, -40, -104}));
}

TEST(QLinearBinaryRef, MatchesUnfusedQdqGraph) {
  check_matches_qdq_graph<int8_t>("QLinearAdd", "Add", 1);
  check_matches_qdq_graph<uint8_t>("QLinearAdd", "Add", 2);
  check_matches_qdq_graph<int8_t>("QLinearMul", "Mul", 3);
  check_matches_qdq_graph<uint8_t>("QLinearMul", "Mul", 4);
}

// ---- XNNPACK vs reference ----------------------------------------------------------------------

template <typename T>
Tensor rand_q(const Shape& shape, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> dist(std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
  std::vector<T> v(static_cast<size_t>(shape_numel(shape)));
  for (T& e : v) e = static_cast<T>(dist(gen));
  return Tensor::from_vector<T>(v, shape);
}

// Runs with and without XNNPACK: integer outputs agree within 1, and `expect_fast` says
// whether an XNNPACK operator must have run. Each fast session runs twice.
void qdiff(const std::string& op, const std::vector<In>& inputs, bool expect_fast, const std::string& what,
           bool check_spread = true) {
  SCOPED_TRACE(op + " " + what);
  auto ref = make_session(op, inputs, true);
  ASSERT_TRUE(ref.is_ok()) << ref.status().to_string();
  auto fast = make_session(op, inputs, false);
  ASSERT_TRUE(fast.is_ok()) << fast.status().to_string();
  const std::vector<Value> given = runtime_values(inputs);
  auto want = (*ref)->run(given);
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  const uint64_t before = xnn::run_count();
  auto got = (*fast)->run(given);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  EXPECT_EQ(xnn::run_count() > before, expect_fast);
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
  EXPECT_LE(off_by_one * 10, g.numel() + 10) << "too many results off by one";  // rounding ties only
  if (check_spread && g.numel() >= 32) {
    EXPECT_GE(hi - lo, 16) << "degenerate test: outputs barely vary";
  }
  auto again = (*fast)->run(given);
  ASSERT_TRUE(again.is_ok());
  for (int64_t i = 0; i < g.numel(); ++i)
    ASSERT_EQ((*again)[0].tensor().get_as_double(i), g.get_as_double(i)) << "second run";
}

// Scales within XNNPACK's ranges: add needs A/C and B/C in [2^-10, 2^8), mul A*B/C in [2^-16, 2^8).
struct Scales {
  float a, b, c;
};
constexpr Scales kAddScales{0.05f, 0.03f, 0.07f};
constexpr Scales kMulScales{0.05f, 0.04f, 0.09f};

template <typename T>
void diff_shapes(const std::string& op, const Scales& s, int azp, int bzp, int czp) {
  auto zp = [](int v) { return Tensor::scalar<T>(static_cast<T>(v)); };
  uint32_t seed = 1;
  for (int64_t ch : {1, 3, 13, 127, 128}) {
    const Shape full{1, ch, 5, 7};
    for (const Shape& bshape : {full, Shape{1, ch, 1, 1}, Shape{}, Shape{7}}) {
      const std::vector<In> in = {var(rand_q<T>(full, seed++)),
                                  cst(f32(s.a)),
                                  cst(zp(azp)),
                                  var(rand_q<T>(bshape, seed++)),
                                  cst(f32(s.b)),
                                  cst(zp(bzp)),
                                  cst(f32(s.c)),
                                  cst(zp(czp))};
      // A scalar B may sit at its zero point (Mul then gives a constant).
      qdiff(op, in, true, "C=" + std::to_string(ch) + " B" + shape_to_string(bshape), !bshape.empty());
    }
  }
  // The broadcast operand first, and both operands broadcast ([3,1] x [1,13]).
  qdiff(op,
        {var(rand_q<T>({1, 13, 1, 1}, 90)), cst(f32(s.a)), cst(zp(azp)), var(rand_q<T>({1, 13, 4, 4}, 91)),
         cst(f32(s.b)), cst(zp(bzp)), cst(f32(s.c)), cst(zp(czp))},
        true, "A broadcast");
  qdiff(op,
        {var(rand_q<T>({3, 1}, 92)), cst(f32(s.a)), cst(zp(azp)), var(rand_q<T>({1, 13}, 93)), cst(f32(s.b)),
         cst(zp(bzp)), cst(f32(s.c)), cst(zp(czp))},
        true, "outer product");
}

TEST(QLinearBinaryXnnpack, AddInt8) { diff_shapes<int8_t>("QLinearAdd", kAddScales, -3, 7, -10); }
TEST(QLinearBinaryXnnpack, AddUint8) { diff_shapes<uint8_t>("QLinearAdd", kAddScales, 128, 120, 131); }
TEST(QLinearBinaryXnnpack, MulInt8) { diff_shapes<int8_t>("QLinearMul", kMulScales, 2, -5, 0); }
TEST(QLinearBinaryXnnpack, MulUint8) { diff_shapes<uint8_t>("QLinearMul", kMulScales, 128, 130, 127); }

TEST(QLinearBinaryXnnpack, OmittedZeroPointsRunBothTypes) {
  for (bool sgn : {true, false}) {
    const Shape s{1, 24, 6, 6};
    Tensor a = sgn ? rand_q<int8_t>(s, 5) : rand_q<uint8_t>(s, 5);
    Tensor b = sgn ? rand_q<int8_t>(s, 6) : rand_q<uint8_t>(s, 6);
    qdiff("QLinearAdd", {var(a), cst(f32(0.05f)), In{}, var(b), cst(f32(0.03f)), In{}, cst(f32(0.07f))}, true,
          sgn ? "int8" : "uint8");
  }
}

TEST(QLinearBinaryXnnpack, DeclinesWhatItDoesNotCover) {
  const Shape s{1, 8, 4, 4};
  // Scales computed at run time: the reference runs.
  qdiff("QLinearAdd",
        {var(rand_q<int8_t>(s, 7)), var(f32(0.05f)), cst(i8(0)), var(rand_q<int8_t>(s, 8)), cst(f32(0.03f)), cst(i8(0)),
         cst(f32(0.07f)), cst(i8(0))},
        false, "computed scale");
  // A / C = 2^-12: outside XNNPACK's add range.
  qdiff("QLinearAdd",
        {var(rand_q<int8_t>(s, 9)), cst(f32(1.0f / 4096)), cst(i8(0)), var(rand_q<int8_t>(s, 10)), cst(f32(0.5f)),
         cst(i8(0)), cst(f32(1.0f)), cst(i8(0))},
        false, "scale ratio");
  // Rank 7: more than XNNPACK's 6 dims, the reference handles it at run time.
  qdiff("QLinearMul",
        {var(rand_q<uint8_t>({1, 2, 1, 2, 1, 2, 3}, 11)), cst(f32(0.05f)), cst(u8(128)), var(rand_q<uint8_t>({3}, 12)),
         cst(f32(0.04f)), cst(u8(128)), cst(f32(0.09f)), cst(u8(128))},
        false, "rank 7");
}

// ---- bad input --------------------------------------------------------------------------------

std::vector<In> add_inputs(Tensor a_scale, Tensor b_zp, bool constant) {
  auto wrap = [constant](Tensor t) { return constant ? cst(std::move(t)) : var(std::move(t)); };
  return {var(q<uint8_t>({1, 2, 3}, {3})),
          wrap(std::move(a_scale)),
          wrap(u8(0)),
          var(q<uint8_t>({4, 5, 6}, {3})),
          wrap(f32(1)),
          wrap(std::move(b_zp)),
          wrap(f32(1)),
          wrap(u8(0))};
}

// Constant parameters fail at session creation (with and without XNNPACK), computed ones on run.
void expect_bad(const std::vector<In>& constant, const std::vector<In>& computed,
                const std::vector<std::string>& parts) {
  for (bool disable : {true, false}) {
    auto s = make_session("QLinearAdd", constant, disable);
    expect_error(s.status(), parts);
  }
  auto c = run_ref("QLinearAdd", computed);
  expect_error(c.status(), parts);
}

TEST(QLinearBinaryErrors, ZeroScale) {
  expect_bad(add_inputs(f32(0), u8(0), true), add_inputs(f32(0), u8(0), false),
             {"qbin", "QLinearAdd", "A_scale", "positive"});
}

TEST(QLinearBinaryErrors, NanAndInfScale) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  expect_bad(add_inputs(f32(nan), u8(0), true), add_inputs(f32(nan), u8(0), false), {"qbin", "A_scale", "nan"});
  expect_bad(add_inputs(f32(inf), u8(0), true), add_inputs(f32(inf), u8(0), false), {"qbin", "A_scale", "finite"});
}

TEST(QLinearBinaryErrors, ZeroPointTypeMismatch) {
  expect_bad(add_inputs(f32(1), i8(0), true), add_inputs(f32(1), i8(0), false),
             {"qbin", "B_zero_point", "int8", "uint8"});
}

TEST(QLinearBinaryErrors, NonScalarScaleAndDataTypes) {
  Tensor two = Tensor::from_vector<float>({1, 2}, {2});
  expect_bad(add_inputs(two, u8(0), true), add_inputs(two, u8(0), false), {"qbin", "A_scale", "scalar", "[2]"});
  // B of another type than A.
  std::vector<In> in = add_inputs(f32(1), u8(0), false);
  in[3] = var(q<int8_t>({4, 5, 6}, {3}));
  in[5] = var(i8(0));
  expect_error(run_ref("QLinearAdd", in).status(), {"qbin", "input B", "int8", "uint8"});
  // float data.
  in = add_inputs(f32(1), u8(0), false);
  in[0] = var(Tensor::from_vector<float>({1, 2, 3}, {3}));
  expect_error(run_ref("QLinearAdd", in).status(), {"qbin", "input A", "int8 or uint8"});
  // Shapes that do not broadcast.
  in = add_inputs(f32(1), u8(0), false);
  in[3] = var(q<uint8_t>({4, 5}, {2}));
  expect_error(run_ref("QLinearAdd", in).status(), {"qbin", "[3]", "[2]"});
}

}  // namespace
}  // namespace xonnx
