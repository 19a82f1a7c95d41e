// Differential tests of the own NHWC MaxPool and AveragePool (runtime/ops/optimized/pool.cc) and
// GlobalAveragePool (reduce.cc) against the reference kernel: channel counts around the vector
// widths, strides, pads, auto_pad, ceil mode and dilations, NaN / inf windows (bit-identical
// results), 1 and 2 threads, and the cases MaxPool leaves to others (the Indices output).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "runtime/exec/session.h"
#include "runtime/ops/internal_ops.h"
#include "tests/unit/graph_builder.h"
#include "tests/unit/op_test_util.h"
#include "tests/unit/test_optimized_common.h"

namespace xonnx {
namespace {

using namespace testing;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

Tensor random_input(const Shape& shape, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(-3.0f, 3.0f);
  std::vector<float> v(static_cast<size_t>(shape_numel(shape)));
  for (float& f : v) f = u(gen);
  return Tensor::from_vector<float>(v, shape);
}

// `op` "GlobalAveragePool": behind a 1x1 MaxPool (an identity), which puts it in an NHWC region.
Model pool_model(std::vector<Attribute> attrs, bool indices = false, const std::string& op = "MaxPool") {
  testing::GraphBuilder b;
  b.input("x");
  if (op == "GlobalAveragePool") {
    b.node("GlobalAveragePool", {b.node("MaxPool", {"x"}, {attr_ints("kernel_shape", {1, 1})})}, {}, "y");
    b.output("y");
    return b.model;
  }
  Node n;
  n.op_type = op;
  n.name = "pool";
  n.inputs = {"x"};
  n.outputs = {"y"};
  if (indices) n.outputs.push_back("i");
  n.attributes = std::move(attrs);
  b.g().nodes.push_back(n);
  b.output("y");
  if (indices) b.output("i");
  return b.model;
}

// Runs the model; `own_ran` tells whether the own kernel of `op` (NHWC) computed the node.
std::vector<Value> run(const Model& model, const Tensor& x, bool reference, int threads, bool* own_ran,
                       const std::string& op = "MaxPool") {
  SessionOptions options;
  options.disable_xnnpack = reference;
  options.num_threads = threads;
  auto s = Session::create_from_model(model, options);
  EXPECT_TRUE(s.is_ok()) << s.status().to_string();
  if (!s.is_ok()) return {};
  Profiler profiler;
  (*s)->set_profiler(&profiler);
  auto out = (*s)->run({Value(x)});
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  if (!out.is_ok()) return {};
  for (const Profiler::Entry& e : profiler.entries())
    if (e.op_type == "com.xonnx.nhwc:" + op && e.backend == Backend::kOptimized) *own_ran = true;
  return std::move(out).value();
}

// The own kernel at 1 and 2 threads gives the reference's bits (NaN payloads aside).
void check(const std::string& what, const std::vector<Attribute>& attrs, const Tensor& x, bool expect_own = true,
           const std::string& op = "MaxPool") {
  SCOPED_TRACE(what);
  const Model model = pool_model(attrs, false, op);
  bool unused = false;
  const std::vector<Value> want = run(model, x, true, 1, &unused, op);
  ASSERT_EQ(want.size(), 1u);
  const Tensor& b = want[0].tensor();
  for (int threads : {1, 2}) {
    bool own = false;
    const std::vector<Value> got = run(model, x, false, threads, &own, op);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(own, expect_own) << "threads " << threads;
    const Tensor& a = got[0].tensor();
    ASSERT_EQ(a.shape(), b.shape()) << shape_to_string(a.shape()) << " vs " << shape_to_string(b.shape());
    for (int64_t i = 0; i < a.numel(); ++i) {
      const float p = a.data<float>()[i], q = b.data<float>()[i];
      if (std::isnan(p) || std::isnan(q)) {
        ASSERT_TRUE(std::isnan(p) && std::isnan(q)) << "element " << i << ": " << p << " vs " << q;
        continue;
      }
      ASSERT_EQ(std::memcmp(&p, &q, sizeof(float)), 0)
          << "element " << i << ": " << p << " vs " << q << " (threads " << threads << ")";
    }
  }
}

TEST(OptimizedMaxPool, ChannelCountsAroundTheVectorWidths) {
  for (int64_t c : {1, 3, 13, 16, 17, 64, 127, 128}) {
    check("3x3 stride 2, C = " + std::to_string(c), {attr_ints("kernel_shape", {3, 3}), attr_ints("strides", {2, 2})},
          random_input({1, c, 11, 9}, 1));
  }
}

TEST(OptimizedMaxPool, PadsCeilModeAutoPadAndDilations) {
  const Tensor x = random_input({2, 19, 13, 12}, 2);
  check("ResNet's 3x3 stride 2 pads 1",
        {attr_ints("kernel_shape", {3, 3}), attr_ints("strides", {2, 2}), attr_ints("pads", {1, 1, 1, 1})}, x);
  check("SqueezeNet's 3x3 stride 2 ceil_mode",
        {attr_ints("kernel_shape", {3, 3}), attr_ints("strides", {2, 2}), attr_int("ceil_mode", 1)}, x);
  check("2x2 stride 2", {attr_ints("kernel_shape", {2, 2}), attr_ints("strides", {2, 2})}, x);
  check("asymmetric pads, 2x3 kernel, strides 1 and 3",
        {attr_ints("kernel_shape", {2, 3}), attr_ints("strides", {1, 3}), attr_ints("pads", {0, 2, 1, 1})}, x);
  check("SAME_UPPER", {attr_ints("kernel_shape", {3, 3}), attr_string("auto_pad", "SAME_UPPER")}, x);
  check("SAME_LOWER stride 2",
        {attr_ints("kernel_shape", {2, 2}), attr_ints("strides", {2, 2}), attr_string("auto_pad", "SAME_LOWER")}, x);
  check("dilations 2 with pads",
        {attr_ints("kernel_shape", {3, 3}), attr_ints("dilations", {2, 2}), attr_ints("pads", {2, 2, 2, 2})}, x);
  check("a window wider than the input", {attr_ints("kernel_shape", {13, 12}), attr_ints("pads", {1, 1, 1, 1})}, x);
}

TEST(OptimizedMaxPool, NanAndInfinityWindowsMatchTheReference) {
  // 2x2 windows of stride 2 do not overlap: window (0, 0) is all NaN, window (0, 1) all -inf,
  // window (1, 0) mixes NaN, -inf and one value, window (1, 1) holds +inf.
  const int64_t c = 20;
  Tensor x = random_input({1, c, 4, 4}, 3);
  float* p = x.data<float>();
  const auto at = [&](int64_t ch, int64_t y, int64_t xx) -> float& { return p[(ch * 4 + y) * 4 + xx]; };
  for (int64_t ch = 0; ch < c; ++ch) {
    at(ch, 0, 0) = at(ch, 0, 1) = at(ch, 1, 0) = at(ch, 1, 1) = kNaN;
    at(ch, 0, 2) = at(ch, 0, 3) = at(ch, 1, 2) = at(ch, 1, 3) = -kInf;
    at(ch, 2, 0) = kNaN;
    at(ch, 2, 1) = -kInf;
    at(ch, 3, 0) = -0.0f;
    at(ch, 3, 1) = kNaN;
    at(ch, 3, 3) = kInf;
  }
  check("special windows", {attr_ints("kernel_shape", {2, 2}), attr_ints("strides", {2, 2})}, x);
  // Signed zeros: the first of equal values stays (-0 before +0, and +0 before -0).
  Tensor z = Tensor::from_vector<float>(std::vector<float>(16 * 4, 0.0f), {1, 16, 2, 2});
  for (int64_t i = 0; i < 16 * 4; i += 3) z.data<float>()[i] = -0.0f;
  check("signed zeros", {attr_ints("kernel_shape", {2, 2})}, z);
}

TEST(OptimizedMaxPool, WindowsInsideThePaddingGiveTheLowestFloat) {
  // Pads of 2 around a 2-wide kernel: the corner windows hold padding only.
  check("windows of padding only", {attr_ints("kernel_shape", {2, 2}), attr_ints("pads", {2, 2, 2, 2})},
        random_input({1, 5, 3, 3}, 4));
}

// The integer MaxPool of QDQ models (passes/qdq_fusion.h), as the NHWC node the layout pass
// makes: an exact max over int8 / uint8 windows, padding never winning.
template <typename T>
Tensor integer_nhwc(const Shape& shape, uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<T> v(static_cast<size_t>(shape_numel(shape)));
  for (T& x : v) x = static_cast<T>(gen());
  return Tensor::from_vector<T>(v, shape);
}

TEST(OptimizedMaxPool, Int8AndUint8Windows) {
  const opttest::Op op("MaxPool", kNhwcDomain, 13);
  const std::vector<Attribute> resnet = {attr_ints("kernel_shape", {3, 3}), attr_ints("strides", {2, 2}),
                                         attr_ints("pads", {1, 1, 1, 1})};
  for (int64_t c : {1, 13, 64, 65}) {
    const std::string what = "C = " + std::to_string(c);
    opttest::diff_test(op, {opttest::var(integer_nhwc<int8_t>({2, 11, 9, c}, 1))}, resnet, true, "int8 " + what, 0, 0);
    opttest::diff_test(op, {opttest::var(integer_nhwc<uint8_t>({2, 11, 9, c}, 2))}, resnet, true, "uint8 " + what, 0,
                       0);
  }
  opttest::diff_test(
      op, {opttest::var(integer_nhwc<int8_t>({1, 7, 7, 8}, 3))},
      {attr_ints("kernel_shape", {2, 2}), attr_string("auto_pad", "SAME_UPPER"), attr_int("ceil_mode", 0)}, true,
      "int8 SAME_UPPER", 0, 0);
  // Windows of padding only: the reference's value for them, from the reference kernel.
  opttest::diff_test(op, {opttest::var(integer_nhwc<int8_t>({1, 3, 3, 5}, 4))},
                     {attr_ints("kernel_shape", {2, 2}), attr_ints("pads", {2, 2, 2, 2})}, false,
                     "int8 windows of padding only", 0, 0);
}

TEST(OptimizedMaxPool, IndicesOutputStaysWithTheReference) {
  const Model model = pool_model({attr_ints("kernel_shape", {2, 2})}, true);
  bool own = false;
  const std::vector<Value> got = run(model, random_input({1, 4, 6, 6}, 5), false, 1, &own);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_FALSE(own);
}

// The own NHWC AveragePool: the reference's sums times 1 / count (the reference divides: within
// an ulp), the divisor counting the padding with count_include_pad (Inception's pools after a
// folded Pad) or not, windows in the padding only, NaN and inf, 1 and 2 threads.
TEST(OptimizedAveragePool, PadsCountsCeilModeAutoPadAndDilations) {
  const opttest::Op op("AveragePool", kNhwcDomain, 19);
  const auto x = [](const Shape& shape, uint32_t seed) { return opttest::var(random_input(shape, seed)); };
  for (int64_t c : {1, 13, 16, 17, 64, 130}) {
    for (int64_t include_pad : {0, 1}) {
      opttest::diff_test(op, {x({2, 9, 8, c}, 6)},
                         {attr_ints("kernel_shape", {3, 3}), attr_ints("pads", {1, 1, 1, 1}),
                          attr_int("count_include_pad", include_pad)},
                         true, "Inception's 3x3 pads 1, C = " + std::to_string(c), 1e-6, 1e-7);
    }
  }
  const std::vector<std::pair<std::string, std::vector<Attribute>>> cases = {
      {"2x2 stride 2", {attr_ints("kernel_shape", {2, 2}), attr_ints("strides", {2, 2})}},
      {"3x3 stride 2 ceil_mode, pads counted",
       {attr_ints("kernel_shape", {3, 3}), attr_ints("strides", {2, 2}), attr_int("ceil_mode", 1),
        attr_ints("pads", {1, 0, 1, 0}), attr_int("count_include_pad", 1)}},
      {"asymmetric pads, 2x3 kernel",
       {attr_ints("kernel_shape", {2, 3}), attr_ints("strides", {1, 3}), attr_ints("pads", {0, 2, 1, 1})}},
      {"SAME_UPPER, pads counted",
       {attr_ints("kernel_shape", {3, 3}), attr_string("auto_pad", "SAME_UPPER"), attr_int("count_include_pad", 1)}},
      {"SAME_LOWER stride 2",
       {attr_ints("kernel_shape", {2, 2}), attr_ints("strides", {2, 2}), attr_string("auto_pad", "SAME_LOWER")}},
      {"dilations 2",
       {attr_ints("kernel_shape", {3, 3}), attr_ints("dilations", {2, 2}), attr_ints("pads", {2, 2, 2, 2})}},
      {"windows of padding only",
       {attr_ints("kernel_shape", {2, 2}), attr_ints("pads", {2, 2, 2, 2}), attr_int("count_include_pad", 0)}},
      {"windows of padding only, counted",
       {attr_ints("kernel_shape", {2, 2}), attr_ints("pads", {2, 2, 2, 2}), attr_int("count_include_pad", 1)}},
  };
  for (const auto& [what, attrs] : cases) {
    opttest::diff_test(op, {x({1, 7, 6, 19}, 7)}, attrs, true, what, 1e-6, 1e-7);
    opttest::diff_test(op, {opttest::var(opttest::with_specials(random_input({1, 7, 6, 19}, 8)))}, attrs, true,
                       what + ", NaN and inf", 1e-6, 1e-7);
  }
}

// The own NHWC GlobalAveragePool (optimized/reduce.cc) sums in float, then divides: within float rounding of the reference's double sums, NaN and inf where it has
// them, and the same bits at 1 and 2 threads (the channels are split, or, on large maps of one
// image, the pixels in blocks that do not depend on the thread count).
void check_global_average(const std::string& what, const Tensor& x) {
  SCOPED_TRACE(what);
  const Model model = pool_model({}, false, "GlobalAveragePool");
  bool unused = false, own1 = false, own2 = false;
  const std::vector<Value> want = run(model, x, true, 1, &unused, "GlobalAveragePool");
  const std::vector<Value> one = run(model, x, false, 1, &own1, "GlobalAveragePool");
  const std::vector<Value> two = run(model, x, false, 2, &own2, "GlobalAveragePool");
  ASSERT_TRUE(want.size() == 1 && one.size() == 1 && two.size() == 1);
  EXPECT_TRUE(own1 && own2);
  const Tensor &a = one[0].tensor(), &b = two[0].tensor(), &r = want[0].tensor();
  ASSERT_EQ(a.shape(), r.shape());
  ASSERT_EQ(b.shape(), r.shape());
  for (int64_t i = 0; i < a.numel(); ++i) {
    const float p = a.data<float>()[i], q = b.data<float>()[i], ref = r.data<float>()[i];
    ASSERT_EQ(std::memcmp(&p, &q, sizeof(float)), 0) << "element " << i << ": 2 threads " << q << " vs 1 " << p;
    if (std::isnan(ref) || std::isinf(ref)) {
      ASSERT_TRUE(std::isnan(ref) ? std::isnan(p) : p == ref) << "element " << i << ": " << p << " vs " << ref;
      continue;
    }
    ASSERT_NEAR(p, ref, 1e-6f) << "element " << i;  // inputs in [-3, 3]: sums of up to 81 values
  }
}

TEST(OptimizedGlobalAveragePool, MatchesTheReference) {
  for (int64_t c : {1, 13, 16, 17, 64, 130}) {
    check_global_average("C = " + std::to_string(c), random_input({2, c, 7, 5}, 3));
    check_global_average("batch 1, C = " + std::to_string(c), random_input({1, c, 9, 9}, 4));
  }
  // Large maps of one image: sums of pixel blocks, added in block order.
  check_global_average("14 x 14 x 960 (EfficientNetV2-S)", random_input({1, 960, 14, 14}, 6));
  check_global_average("7 x 5 x 470, 35 pixels in 8 uneven blocks", random_input({1, 470, 7, 5}, 7));
  check_global_average("2 x 2 x 4096, fewer pixels than blocks", random_input({1, 4096, 2, 2}, 8));
  Tensor big = random_input({1, 130, 16, 9}, 9);
  big.data<float>()[144 * 5 + 100] = kNaN;
  big.data<float>()[144 * 9 + 3] = kInf;
  big.data<float>()[144 * 9 + 140] = -kInf;
  check_global_average("large map, NaN and inf", big);
  Tensor x = random_input({1, 40, 6, 6}, 5);
  x.data<float>()[7] = kNaN;
  x.data<float>()[6 * 6 * 3] = kInf;
  x.data<float>()[6 * 6 * 3 + 1] = -kInf;  // channel 3: inf - inf
  x.data<float>()[6 * 6 * 20] = kInf;
  check_global_average("NaN and inf", x);
}

}  // namespace
}  // namespace xonnx
