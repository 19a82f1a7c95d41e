// The optimized per-tensor QuantizeLinear / DequantizeLinear (runtime/ops/optimized/quantize.cc)
// against the reference kernels: outputs must be bit-identical, including round-half-to-even
// ties, saturation, +-inf, huge values and NaN (-> the zero point, through the reference).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "tests/unit/test_optimized_common.h"

namespace xonnx {
namespace {

using namespace opttest;

constexpr int64_t kQSizes[] = {1, 3, 13, 127, 128};
constexpr int64_t kLarge = 100000;  // several parallel chunks; run for fewer combinations (time)

// Ties at scale 1 (and at the saturation edges of both types), signed zeros, huge and
// infinite values, denormals; then random values over a range a few times the codes'.
std::vector<float> special_values() {
  const float big = std::numeric_limits<float>::max();
  return {0.5f,   1.5f,   2.5f,    -0.5f,   -1.5f,   -2.5f,  3.5f,   -3.5f,      0.0f,        -0.0f,     126.5f,
          127.5f, 128.5f, -127.5f, -128.5f, -129.5f, 254.5f, 255.5f, 256.5f,     1e30f,       -1e30f,    big,
          -big,   kInf,   -kInf,   1e-40f,  -1e-40f, 1e9f,   -1e9f,  2.4999998f, 0.49999997f, 8388609.0f};
}

Tensor input_of(int64_t n, uint32_t seed, float range, bool with_nan) {
  std::vector<float> v(static_cast<size_t>(n));
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-range, range);
  const std::vector<float> specials = special_values();
  for (size_t i = 0; i < v.size(); ++i) {
    // Specials first (all of them when they fit), then every 7th element; rounded halves of
    // random values give ties at other magnitudes.
    if (i < specials.size()) {
      v[i] = specials[i];
    } else if (i % 7 == 0) {
      v[i] = specials[i % specials.size()];
    } else if (i % 5 == 0) {
      v[i] = std::round(dist(gen)) + 0.5f;
    } else {
      v[i] = dist(gen);
    }
  }
  if (with_nan) v[v.size() / 2] = std::numeric_limits<float>::quiet_NaN();
  return Tensor::from_vector<float>(v, {n});
}

template <typename T>
Tensor codes_of(int64_t n, uint32_t seed) {
  std::vector<T> v(static_cast<size_t>(n));
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> dist(std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
  for (size_t i = 0; i < v.size(); ++i) {
    // Every code in order first, then random ones.
    v[i] = i < 256 ? static_cast<T>(std::numeric_limits<T>::min() + static_cast<int>(i)) : static_cast<T>(dist(gen));
  }
  return Tensor::from_vector<T>(v, {n});
}

Tensor zero_point(DataType t, int v) {
  return t == DataType::kInt8 ? Tensor::scalar<int8_t>(static_cast<int8_t>(v))
                              : Tensor::scalar<uint8_t>(static_cast<uint8_t>(v));
}

// Runs the op with the optimized kernels off and on (1 and, for large inputs, 2 threads): same dtype, shape and
// bytes. `expect_fast`: whether the optimized kernel must have computed the output.
void bit_identical(const char* op, int64_t opset, const std::vector<In>& inputs, bool expect_fast,
                   const std::string& what) {
  SCOPED_TRACE(std::string(op) + " opset " + std::to_string(opset) + " " + what);
  std::vector<Value> given;
  for (const In& in : inputs)
    if (in.t.defined() && !in.constant) given.push_back(in.t);
  auto ref = make_session(Op(op, "", opset), inputs, {}, false, 1);
  ASSERT_TRUE(ref.is_ok()) << ref.status().to_string();
  auto want = (*ref)->run(given);
  // A second thread only matters past one parallel chunk (16384 elements).
  const std::vector<int> thread_counts = inputs[0].t.numel() > 16384 ? std::vector<int>{1, 2} : std::vector<int>{1};
  for (int threads : thread_counts) {
    auto fast = make_session(Op(op, "", opset), inputs, {}, true, threads);
    ASSERT_TRUE(fast.is_ok()) << fast.status().to_string();
    const uint64_t before = opt::run_count();
    auto got = (*fast)->run(given);
    EXPECT_EQ(opt::run_count() > before, expect_fast) << "threads " << threads;
    ASSERT_EQ(got.is_ok(), want.is_ok()) << (want.is_ok() ? got.status() : want.status()).to_string();
    if (!want.is_ok()) continue;
    const Tensor& g = (*got)[0].tensor();
    const Tensor& w = (*want)[0].tensor();
    ASSERT_EQ(g.dtype(), w.dtype());
    ASSERT_EQ(g.shape(), w.shape());
    const size_t elem = static_cast<size_t>(dtype_storage_bytes(w.dtype(), 1));
    if (std::memcmp(g.raw_data(), w.raw_data(), elem * static_cast<size_t>(w.numel())) == 0) continue;
    for (int64_t i = 0; i < w.numel(); ++i) {
      const size_t at = elem * static_cast<size_t>(i);
      if (std::memcmp(static_cast<const char*>(g.raw_data()) + at, static_cast<const char*>(w.raw_data()) + at, elem) !=
          0) {
        const Tensor& x = inputs[0].t;
        ADD_FAILURE() << "element " << i << " (x = " << x.get_as_double(i) << "): optimized " << g.get_as_double(i)
                      << " reference " << w.get_as_double(i) << ", threads " << threads;
        break;
      }
    }
  }
}

struct ZeroPointCase {
  DataType type;
  int zp;
};
const ZeroPointCase kZeroPoints[] = {{DataType::kUint8, 0},   {DataType::kUint8, 128}, {DataType::kUint8, 255},
                                     {DataType::kInt8, -128}, {DataType::kInt8, 0},    {DataType::kInt8, 127}};

TEST(OptQuantizeLinear, BitIdenticalOverSizesZeroPointsAndScales) {
  uint32_t seed = 1;
  for (float scale : {1.0f, 0.5f, 0.1f, 3.0f, 0.0078125f, 1e-30f}) {
    for (const ZeroPointCase& z : kZeroPoints) {
      for (int64_t n : kQSizes) {
        const std::string what = "scale " + std::to_string(scale) + " zp " + std::to_string(z.zp) + " " +
                                 dtype_name(z.type) + " n " + std::to_string(n);
        bit_identical("QuantizeLinear", 13,
                      {var(input_of(n, seed++, 300.0f * scale, false)), cst(Tensor::scalar<float>(scale)),
                       cst(zero_point(z.type, z.zp))},
                      true, what);
      }
      if (scale == 1.0f || scale == 0.1f) {
        bit_identical("QuantizeLinear", 13,
                      {var(input_of(kLarge, seed++, 300.0f * scale, false)), cst(Tensor::scalar<float>(scale)),
                       cst(zero_point(z.type, z.zp))},
                      true, "large, scale " + std::to_string(scale) + " zp " + std::to_string(z.zp));
      }
    }
  }
}

// The exact ties of the brief, value by value, against the spec's expected codes.
TEST(OptQuantizeLinear, TiesRoundHalfToEven) {
  const std::vector<float> x = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 3.5f, 126.5f, 127.5f, -128.5f};
  const std::vector<int> want_int8 = {0, 2, 2, 0, -2, -2, 4, 126, 127, -128};
  const Tensor xt = Tensor::from_vector<float>(x, {static_cast<int64_t>(x.size())});
  for (bool optimized : {false, true}) {
    auto s = make_session(Op("QuantizeLinear", "", 13),
                          {var(xt), cst(Tensor::scalar<float>(1.0f)), cst(zero_point(DataType::kInt8, 0))}, {},
                          optimized, 1);
    ASSERT_TRUE(s.is_ok()) << s.status().to_string();
    auto out = (*s)->run({Value(xt)});
    ASSERT_TRUE(out.is_ok()) << out.status().to_string();
    for (size_t i = 0; i < x.size(); ++i)
      EXPECT_EQ((*out)[0].tensor().data<int8_t>()[i], want_int8[i]) << "x " << x[i] << " optimized " << optimized;
  }
}

// NaN quantizes to the zero point; the optimized kernel leaves such inputs to the reference.
TEST(OptQuantizeLinear, NaNGivesTheZeroPoint) {
  for (const ZeroPointCase& z : kZeroPoints) {
    for (int64_t n : {int64_t(1), int64_t(13), z.zp == 0 ? kLarge : int64_t(128)}) {
      bit_identical(
          "QuantizeLinear", 13,
          {var(input_of(n, 7, 100.0f, true)), cst(Tensor::scalar<float>(0.5f)), cst(zero_point(z.type, z.zp))}, false,
          "NaN zp " + std::to_string(z.zp) + " n " + std::to_string(n));
    }
    const std::vector<float> nan = {std::numeric_limits<float>::quiet_NaN()};
    auto s = make_session(
        Op("QuantizeLinear", "", 13),
        {var(Tensor::from_vector<float>(nan, {1})), cst(Tensor::scalar<float>(1.0f)), cst(zero_point(z.type, z.zp))},
        {}, true, 1);
    ASSERT_TRUE(s.is_ok());
    auto out = (*s)->run({Value(Tensor::from_vector<float>(nan, {1}))});
    ASSERT_TRUE(out.is_ok());
    EXPECT_EQ((*out)[0].tensor().get_as_int64(0), z.zp);
  }
}

// No zero point: uint8 output (ONNX's default); also opset 10 and 19 forms.
TEST(OptQuantizeLinear, DefaultZeroPointAndOtherOpsets) {
  for (int64_t opset : {int64_t(10), int64_t(13), int64_t(19)}) {
    for (int64_t n : {int64_t(13), int64_t(128)}) {
      bit_identical("QuantizeLinear", opset, {var(input_of(n, 3, 400.0f, false)), cst(Tensor::scalar<float>(2.0f))},
                    true, "no zero point n " + std::to_string(n));
    }
  }
}

// What the optimized kernel declines stays correct (the reference runs): per-axis scales.
TEST(OptQuantizeLinear, PerAxisScalesStayWithTheReference) {
  const std::vector<float> scales = {0.5f, 1.0f, 2.0f};
  std::vector<float> x(12);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.75f - 4.0f;
  const std::vector<int8_t> zps = {0, -1, 3};
  bit_identical("QuantizeLinear", 13,
                {var(Tensor::from_vector<float>(x, {4, 3})), cst(Tensor::from_vector<float>(scales, {3})),
                 cst(Tensor::from_vector<int8_t>(zps, {3}))},
                false, "per axis");
}

TEST(OptDequantizeLinear, BitIdenticalOverSizesZeroPointsAndScales) {
  uint32_t seed = 50;
  for (float scale : {1.0f, 0.1f, 0.0078125f, 3e-5f, 1e37f}) {
    for (const ZeroPointCase& z : kZeroPoints) {
      for (int64_t n : kQSizes) {
        const Tensor x = z.type == DataType::kInt8 ? codes_of<int8_t>(n, seed++) : codes_of<uint8_t>(n, seed++);
        const std::string what = "scale " + std::to_string(scale) + " zp " + std::to_string(z.zp) + " " +
                                 dtype_name(z.type) + " n " + std::to_string(n);
        bit_identical("DequantizeLinear", 13,
                      {var(x), cst(Tensor::scalar<float>(scale)), cst(zero_point(z.type, z.zp))}, true, what);
      }
    }
  }
  for (const ZeroPointCase& z : kZeroPoints) {
    const Tensor x = z.type == DataType::kInt8 ? codes_of<int8_t>(kLarge, seed++) : codes_of<uint8_t>(kLarge, seed++);
    bit_identical("DequantizeLinear", 13, {var(x), cst(Tensor::scalar<float>(0.1f)), cst(zero_point(z.type, z.zp))},
                  true, "large, zp " + std::to_string(z.zp));
  }
}

TEST(OptDequantizeLinear, NoZeroPointAnyEightBitType) {
  for (int64_t n : {int64_t(1), int64_t(127), kLarge}) {
    bit_identical("DequantizeLinear", 13, {var(codes_of<int8_t>(n, 1)), cst(Tensor::scalar<float>(0.25f))}, true,
                  "int8 n " + std::to_string(n));
    bit_identical("DequantizeLinear", 13, {var(codes_of<uint8_t>(n, 2)), cst(Tensor::scalar<float>(0.3f))}, true,
                  "uint8 n " + std::to_string(n));
  }
}

// int32 codes (biases) and per-axis scales are the reference's.
TEST(OptDequantizeLinear, Int32AndPerAxisStayWithTheReference) {
  const std::vector<int32_t> codes = {-2147483647 - 1, -5, 0, 7, 2147483647, 123456789};
  bit_identical("DequantizeLinear", 13,
                {var(Tensor::from_vector<int32_t>(codes, {6})), cst(Tensor::scalar<float>(0.001f)),
                 cst(Tensor::scalar<int32_t>(0))},
                false, "int32");
  const std::vector<float> scales = {0.5f, 2.0f};
  bit_identical("DequantizeLinear", 13,
                {var(codes_of<uint8_t>(6, 3).reshaped({3, 2})), cst(Tensor::from_vector<float>(scales, {2})),
                 cst(Tensor::from_vector<uint8_t>({1, 200}, {2}))},
                false, "per axis");
}

// Quantize then dequantize: the round trip of the optimized pair reproduces the reference's.
TEST(OptQuantizeLinear, RoundTripThroughBothKernels) {
  const Tensor x = input_of(1000, 21, 2.0f, false);
  for (bool optimized : {false, true}) {
    auto q = make_session(Op("QuantizeLinear", "", 13),
                          {var(x), cst(Tensor::scalar<float>(0.02f)), cst(zero_point(DataType::kUint8, 100))}, {},
                          optimized, 1);
    ASSERT_TRUE(q.is_ok());
    auto codes = (*q)->run({Value(x)});
    ASSERT_TRUE(codes.is_ok());
    const Tensor& c = (*codes)[0].tensor();
    for (int64_t i = 40; i < c.numel(); ++i) {  // random values past the specials: no saturation
      if (i % 7 == 0) continue;
      const double back = (c.get_as_double(i) - 100) * 0.02;
      EXPECT_LE(std::fabs(back - x.get_as_double(i)), 0.0100001) << "element " << i << " optimized " << optimized;
    }
  }
}

}  // namespace
}  // namespace xonnx
