// Core types: dtype codecs, tensor allocation and limits, status plumbing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "runtime/core/aligned_vector.h"
#include "runtime/core/dtype.h"
#include "runtime/core/tensor.h"

namespace xonnx {
namespace {

TEST(DType, HalfRoundTripsExactValues) {
  for (float v : {0.0f, 1.0f, -2.5f, 65504.0f, 6.103515625e-05f, 5.9604645e-08f}) {
    EXPECT_EQ(half_to_float(float_to_half(v)), v) << v;
  }
  EXPECT_TRUE(std::isinf(half_to_float(float_to_half(70000.0f))));
  EXPECT_TRUE(std::isnan(half_to_float(float_to_half(NAN))));
  // Round to nearest even: 1 + 2^-11 lies halfway between 1 and 1 + 2^-10.
  EXPECT_EQ(half_to_float(float_to_half(1.0f + std::ldexp(1.0f, -11))), 1.0f);
}

TEST(DType, BFloat16RoundsToNearestEven) {
  EXPECT_EQ(bfloat16_to_float(float_to_bfloat16(1.0f)), 1.0f);
  EXPECT_EQ(bfloat16_to_float(float_to_bfloat16(3.140625f)), 3.140625f);
  EXPECT_TRUE(std::isnan(bfloat16_to_float(float_to_bfloat16(NAN))));
}

TEST(DType, Float8E4M3FNSaturates) {
  const DataType t = DataType::kFloat8E4M3FN;
  EXPECT_EQ(float8_to_float(t, float_to_float8(t, 448.0f, true)), 448.0f);
  EXPECT_EQ(float8_to_float(t, float_to_float8(t, 1000.0f, true)), 448.0f);
  EXPECT_TRUE(std::isnan(float8_to_float(t, float_to_float8(t, 1000.0f, false))));
  EXPECT_EQ(float8_to_float(t, float_to_float8(t, 0.5f, true)), 0.5f);
}

// ---- float8 / float4 codecs: bit-exact (ml_dtypes / ONNX reference semantics) -----------

const DataType kFloat8Types[] = {DataType::kFloat8E4M3FN, DataType::kFloat8E4M3FNUZ, DataType::kFloat8E5M2,
                                 DataType::kFloat8E5M2FNUZ};

bool is_fnuz(DataType t) { return t == DataType::kFloat8E4M3FNUZ || t == DataType::kFloat8E5M2FNUZ; }

uint8_t max_code(DataType t) {
  switch (t) {
    case DataType::kFloat8E4M3FN: return 0x7e;
    case DataType::kFloat8E5M2: return 0x7b;
    default: return 0x7f;  // fnuz
  }
}

TEST(DType, Float8EveryCodeRoundTrips) {
  for (DataType t : kFloat8Types) {
    for (int v = 0; v < 256; ++v) {
      const uint8_t code = static_cast<uint8_t>(v);
      const float f = float8_to_float(t, code);
      if (std::isnan(f)) continue;
      if (std::isinf(f)) {  // e5m2 only: Inf survives without saturation, else clamps to max
        EXPECT_EQ(float_to_float8(t, f, false), code) << dtype_name(t) << " " << v;
        EXPECT_EQ(float_to_float8(t, f, true), (code & 0x80) | max_code(t)) << dtype_name(t);
        continue;
      }
      EXPECT_EQ(float_to_float8(t, f, true), code) << dtype_name(t) << " code " << v << " = " << f;
      EXPECT_EQ(float_to_float8(t, f, false), code) << dtype_name(t) << " code " << v << " = " << f;
    }
  }
  for (int v = 0; v < 16; ++v) {
    EXPECT_EQ(float_to_float4e2m1(float4e2m1_to_float(static_cast<uint8_t>(v))), v) << v;
  }
  // e8m0 codes are exact powers of two; 2^-127 (code 0) is a float32 subnormal, which the
  // ONNX "up" rounding (on the float32 exponent field) moves to 2^-126.
  const DataType e8 = DataType::kFloat8E8M0;
  for (int v = 0; v < 255; ++v) {
    const float f = float8_to_float(e8, static_cast<uint8_t>(v));
    EXPECT_EQ(f, std::ldexp(1.0f, v - 127)) << v;
    EXPECT_EQ(float_to_float8(e8, f, true, E8M0RoundMode::kDown), v) << v;
    EXPECT_EQ(float_to_float8(e8, f, true, E8M0RoundMode::kNearest), v) << v;
    EXPECT_EQ(float_to_float8(e8, f, true, E8M0RoundMode::kUp), v == 0 ? 1 : v) << v;
  }
}

TEST(DType, Float8KnownCodes) {
  EXPECT_EQ(float8_to_float(DataType::kFloat8E4M3FN, 0x7e), 448.0f);
  EXPECT_EQ(float8_to_float(DataType::kFloat8E4M3FN, 0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(float8_to_float(DataType::kFloat8E4M3FN, 0x38), 1.0f);
  EXPECT_EQ(float8_to_float(DataType::kFloat8E4M3FNUZ, 0x7f), 240.0f);
  EXPECT_EQ(float8_to_float(DataType::kFloat8E4M3FNUZ, 0x40), 1.0f);
  EXPECT_EQ(float8_to_float(DataType::kFloat8E5M2, 0x7b), 57344.0f);
  EXPECT_EQ(float8_to_float(DataType::kFloat8E5M2, 0x01), std::ldexp(1.0f, -16));
  EXPECT_EQ(float8_to_float(DataType::kFloat8E5M2FNUZ, 0x7f), 57344.0f);
  EXPECT_EQ(float8_to_float(DataType::kFloat8E5M2FNUZ, 0x01), std::ldexp(1.0f, -17));
  EXPECT_EQ(float8_to_float(DataType::kFloat8E5M2, 0xc0), -2.0f);
  EXPECT_EQ(float4e2m1_to_float(0x7), 6.0f);
  EXPECT_EQ(float4e2m1_to_float(0x1), 0.5f);
  EXPECT_EQ(float4e2m1_to_float(0xd), -3.0f);
  // Positive codes decode in increasing order.
  for (DataType t : kFloat8Types) {
    for (int v = 1; v <= max_code(t); ++v) {
      EXPECT_LT(float8_to_float(t, static_cast<uint8_t>(v - 1)), float8_to_float(t, static_cast<uint8_t>(v)));
    }
  }
}

TEST(DType, Float8RoundsToNearestTiesToEven) {
  const DataType fn = DataType::kFloat8E4M3FN, e5 = DataType::kFloat8E5M2;
  EXPECT_EQ(float_to_float8(fn, 464.0f, false), 0x7e);  // 448 | 480(odd): ties to 448, no overflow
  EXPECT_EQ(float_to_float8(fn, 464.0f, true), 0x7e);
  EXPECT_EQ(float_to_float8(fn, 1.0625f, true), 0x38);                    // 1 | 1.125 -> 1
  EXPECT_EQ(float_to_float8(fn, 1.1875f, true), 0x3a);                    // 1.125 | 1.25 -> 1.25
  EXPECT_EQ(float_to_float8(fn, std::ldexp(1.0f, -10), true), 0x00);      // 0 | min subnormal
  EXPECT_EQ(float_to_float8(fn, 3 * std::ldexp(1.0f, -10), true), 0x02);  // subnormals 1 | 2
  EXPECT_EQ(float_to_float8(fn, -1.0625f, true), 0xb8);
  EXPECT_EQ(float_to_float8(e5, 1.125f, true), 0x3c);     // 1 | 1.25 -> 1
  EXPECT_EQ(float_to_float8(e5, 1.375f, true), 0x3e);     // 1.25 | 1.5 -> 1.5
  EXPECT_EQ(float_to_float8(e5, 61440.0f, false), 0x7c);  // 57344 | 65536 -> even: Inf
  EXPECT_EQ(float_to_float8(e5, 61440.0f, true), 0x7b);
  EXPECT_EQ(float_to_float8(e5, 61439.0f, false), 0x7b);
  // Carry from the largest subnormal into the smallest normal (e4m3fn: 7/512 | 8/512).
  EXPECT_EQ(float_to_float8(fn, 7.5f / 512, true), 0x08);
  // float4e2m1: 0 .5 1 1.5 2 3 4 6
  EXPECT_EQ(float_to_float4e2m1(0.25f), 0x0);
  EXPECT_EQ(float_to_float4e2m1(0.75f), 0x2);
  EXPECT_EQ(float_to_float4e2m1(1.25f), 0x2);
  EXPECT_EQ(float_to_float4e2m1(1.75f), 0x4);
  EXPECT_EQ(float_to_float4e2m1(2.5f), 0x4);
  EXPECT_EQ(float_to_float4e2m1(3.5f), 0x6);
  EXPECT_EQ(float_to_float4e2m1(5.0f), 0x6);
  EXPECT_EQ(float_to_float4e2m1(5.01f), 0x7);
  EXPECT_EQ(float_to_float4e2m1(-2.9f), 0xd);
  EXPECT_EQ(float_to_float4e2m1(-0.0f), 0x8);
}

// Every finite float in range encodes to the nearest code, ties to the even code.
TEST(DType, Float8MatchesNearestCodeSearch) {
  for (DataType t : kFloat8Types) {
    float table[128];
    for (int c = 0; c < 128; ++c) table[c] = float8_to_float(t, static_cast<uint8_t>(c));
    const float maxv = table[max_code(t)];
    for (uint32_t bits = 0; bits < 0x7f800000u; bits += 0x3f1b) {  // ~ 130k samples per format
      float x;
      std::memcpy(&x, &bits, sizeof(x));
      if (x > maxv) break;
      int best = 0;
      for (int c = 1; c <= max_code(t); ++c) {
        const double d = std::fabs(static_cast<double>(table[c]) - x);
        const double db = std::fabs(static_cast<double>(table[best]) - x);
        if (d < db || (d == db && (c & 1) == 0)) best = c;
      }
      const uint8_t got = float_to_float8(t, x, true);
      ASSERT_EQ(got, best) << dtype_name(t) << " x=" << x;
      const uint8_t neg = float_to_float8(t, -x, true);
      ASSERT_EQ(neg, (best == 0 && is_fnuz(t)) ? 0 : (best | 0x80)) << dtype_name(t) << " x=-" << x;
    }
  }
}

TEST(DType, Float8SaturationAndOverflow) {
  const float kInf = std::numeric_limits<float>::infinity();
  for (DataType t : kFloat8Types) {
    const uint8_t mx = max_code(t);
    for (float x : {1e9f, kInf}) {
      EXPECT_EQ(float_to_float8(t, x, true), mx) << dtype_name(t);
      EXPECT_EQ(float_to_float8(t, -x, true), 0x80 | mx) << dtype_name(t);
    }
  }
  // Without saturation: NaN for the finite-only formats, Inf for e5m2.
  EXPECT_EQ(float_to_float8(DataType::kFloat8E4M3FN, 480.0f, false), 0x7f);
  EXPECT_EQ(float_to_float8(DataType::kFloat8E4M3FN, -kInf, false), 0xff);
  EXPECT_EQ(float_to_float8(DataType::kFloat8E4M3FNUZ, 1e9f, false), 0x80);
  EXPECT_EQ(float_to_float8(DataType::kFloat8E4M3FNUZ, -kInf, false), 0x80);
  EXPECT_EQ(float_to_float8(DataType::kFloat8E5M2, 1e9f, false), 0x7c);
  EXPECT_EQ(float_to_float8(DataType::kFloat8E5M2, -kInf, false), 0xfc);
  EXPECT_EQ(float_to_float8(DataType::kFloat8E5M2FNUZ, -1e9f, false), 0x80);
  // float4 has no Inf/NaN: always saturates.
  EXPECT_EQ(float_to_float4e2m1(100.0f), 0x7);
  EXPECT_EQ(float_to_float4e2m1(-kInf), 0xf);
}

TEST(DType, Float8NaNInfAndZeroPerFormat) {
  const float kNaN = std::numeric_limits<float>::quiet_NaN();
  const DataType fn = DataType::kFloat8E4M3FN, fnuz = DataType::kFloat8E4M3FNUZ;
  const DataType e5 = DataType::kFloat8E5M2, e5uz = DataType::kFloat8E5M2FNUZ;
  EXPECT_EQ(float_to_float8(fn, kNaN, true), 0x7f);
  EXPECT_EQ(float_to_float8(fn, -kNaN, true), 0xff);
  EXPECT_EQ(float_to_float8(e5, kNaN, true), 0x7e);
  EXPECT_EQ(float_to_float8(e5, -kNaN, false), 0xfe);
  EXPECT_EQ(float_to_float8(fnuz, -kNaN, true), 0x80);
  EXPECT_EQ(float_to_float8(e5uz, kNaN, false), 0x80);
  EXPECT_EQ(float_to_float4e2m1(kNaN), 0x8);
  // Decoding: NaN and Inf codes.
  EXPECT_TRUE(std::isnan(float8_to_float(fn, 0x7f)));
  EXPECT_TRUE(std::isnan(float8_to_float(fn, 0xff)));
  EXPECT_EQ(float8_to_float(fn, 0xfe), -448.0f);
  for (int v : {0x7d, 0x7e, 0x7f, 0xfd, 0xfe, 0xff}) EXPECT_TRUE(std::isnan(float8_to_float(e5, v))) << v;
  EXPECT_EQ(float8_to_float(e5, 0x7c), std::numeric_limits<float>::infinity());
  EXPECT_EQ(float8_to_float(e5, 0xfc), -std::numeric_limits<float>::infinity());
  for (DataType t : {fnuz, e5uz}) {
    const float nan = float8_to_float(t, 0x80);
    EXPECT_TRUE(std::isnan(nan));
    EXPECT_TRUE(std::signbit(nan));  // as ml_dtypes
    EXPECT_EQ(float8_to_float(t, 0xff), -float8_to_float(t, 0x7f));
  }
  // Zeros: signed except in fnuz; float32 subnormals round to zero.
  EXPECT_EQ(float_to_float8(fn, -0.0f, true), 0x80);
  EXPECT_EQ(float_to_float8(e5, -1e-45f, true), 0x80);
  EXPECT_EQ(float_to_float8(fnuz, -0.0f, true), 0x00);
  EXPECT_EQ(float_to_float8(e5uz, -1e-30f, true), 0x00);
}

TEST(DType, Float8E8M0RoundModes) {
  const DataType t = DataType::kFloat8E8M0;
  const auto up = E8M0RoundMode::kUp, down = E8M0RoundMode::kDown, nearest = E8M0RoundMode::kNearest;
  EXPECT_EQ(float_to_float8(t, 1.1f, true), 0x80);  // default "up": 1.1 -> 2.0
  EXPECT_EQ(float_to_float8(t, 1.1f, true, up), 0x80);
  EXPECT_EQ(float_to_float8(t, 1.1f, true, down), 0x7f);
  EXPECT_EQ(float_to_float8(t, 1.1f, true, nearest), 0x7f);
  EXPECT_EQ(float_to_float8(t, 1.5f, true, nearest), 0x80);
  EXPECT_EQ(float_to_float8(t, 1.0f, true, up), 0x7f);
  EXPECT_EQ(float_to_float8(t, -1.1f, true, up), 0x80);  // sign ignored
  EXPECT_EQ(float_to_float8(t, 0.0f, true, up), 0x00);
  for (bool sat : {true, false}) {
    EXPECT_EQ(float_to_float8(t, std::numeric_limits<float>::infinity(), sat), 0xff);
    EXPECT_EQ(float_to_float8(t, std::numeric_limits<float>::quiet_NaN(), sat), 0xff);
  }
  const float big = std::numeric_limits<float>::max();  // 2^127 * (2 - 2^-23)
  EXPECT_EQ(float_to_float8(t, big, true, up), 0xfe);
  EXPECT_EQ(float_to_float8(t, big, false, up), 0xff);
  EXPECT_EQ(float_to_float8(t, big, true, nearest), 0xfe);
  EXPECT_EQ(float_to_float8(t, big, false, down), 0xfe);
  EXPECT_TRUE(std::isnan(float8_to_float(t, 0xff)));
  EXPECT_EQ(float8_to_float(t, 0x7f), 1.0f);
  EXPECT_EQ(float8_to_float(t, 0x00), std::ldexp(1.0f, -127));
}

TEST(DType, StorageBytesPacksSubByteTypes) {
  EXPECT_EQ(dtype_storage_bytes(DataType::kInt4, 5), 3);
  EXPECT_EQ(dtype_storage_bytes(DataType::kFloat, 5), 20);
  EXPECT_EQ(dtype_storage_bytes(DataType::kInt64, INT64_MAX / 4), -1);
}

TEST(Tensor, AllocateRejectsNegativeAndOverflowingShapes) {
  EXPECT_FALSE(Tensor::allocate(DataType::kFloat, {2, -1}).is_ok());
  EXPECT_FALSE(Tensor::allocate(DataType::kFloat, {INT64_MAX, 4}).is_ok());
  auto t = Tensor::allocate(DataType::kFloat, {2, 3});
  ASSERT_TRUE(t.is_ok());
  EXPECT_EQ(t->numel(), 6);
  EXPECT_EQ(t->data<float>()[5], 0.0f);  // zero-filled
}

TEST(Tensor, SubByteAccess) {
  auto t = Tensor::allocate(DataType::kInt4, {3});
  ASSERT_TRUE(t.is_ok());
  subbyte_set(t->raw_data(), DataType::kInt4, 0, 0x7);
  subbyte_set(t->raw_data(), DataType::kInt4, 1, 0x8);
  subbyte_set(t->raw_data(), DataType::kInt4, 2, 0xf);
  EXPECT_EQ(t->get_as_int64(0), 7);
  EXPECT_EQ(t->get_as_int64(1), -8);
  EXPECT_EQ(t->get_as_int64(2), -1);
}

TEST(Status, ContextIsPrefixedOnErrorsOnly) {
  EXPECT_TRUE(Status::ok().with_context("x: ").is_ok());
  Status s = invalid_model("bad ", 3).with_context("node 'a': ");
  EXPECT_EQ(s.message(), "node 'a': bad 3");
  EXPECT_EQ(s.code(), StatusCode::kInvalidModel);
}

// The kernels load whole 64-byte vectors from these (core/aligned_vector.h).
TEST(AlignedVector, DataStartsOnA64ByteBoundaryAtEverySize) {
  AlignedVector<float> v;
  for (size_t n : {size_t{1}, size_t{3}, size_t{17}, size_t{1000}, size_t{70000}, size_t{5}}) {
    v.resize(n, 1.0f);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(v.data()) % 64, 0u) << n;
    EXPECT_EQ(v.back(), 1.0f);
  }
  std::vector<AlignedVector<float>> many(8, AlignedVector<float>(33));
  for (const auto& m : many) EXPECT_EQ(reinterpret_cast<uintptr_t>(m.data()) % 64, 0u);
  const AlignedVector<float> copy = many[3];
  EXPECT_EQ(reinterpret_cast<uintptr_t>(copy.data()) % 64, 0u);
}

// Packed weights: aligned like AlignedVector, resize(n) without a fill, growth keeps the values
// written, resize(n, v) and assign still fill; a block over 1 MiB (prefaulted) is writable.
TEST(UninitAlignedVector, AlignedKeepsValuesAndFillsOnlyWhenAsked) {
  UninitAlignedVector<float> v;
  for (size_t n : {size_t{1}, size_t{17}, size_t{70000}, size_t{1} << 19}) {
    const size_t old = v.size();
    v.resize(n);
    ASSERT_EQ(reinterpret_cast<uintptr_t>(v.data()) % 64, 0u) << n;
    for (size_t i = 0; i < old && i < n; ++i) ASSERT_EQ(v[i], static_cast<float>(i)) << n << " " << i;
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i);
  }
  v.resize(v.size() + 3, 2.5f);
  EXPECT_EQ(v.back(), 2.5f);
  v.assign(100, 0.0f);
  EXPECT_TRUE(std::all_of(v.begin(), v.end(), [](float x) { return x == 0.0f; }));
  UninitAlignedVector<int8_t> bytes(3u << 20);  // 3 MiB: prefaulted at allocation
  std::fill(bytes.begin(), bytes.end(), int8_t{7});
  EXPECT_EQ(bytes[(3u << 20) - 1], 7);
}

// The messages are built without streams (status.h) but read as std::ostream printed them.
TEST(Status, MessagePiecesPrintAsStreamsDid) {
  const std::string text = "t";
  const std::string_view view = "v";
  const int64_t big = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(unsupported("a", 'b', text, view, -3, 7u, big, uint64_t{1} << 40, true).message(),
            "abtv-37-922337203685477580810995116277761");
  EXPECT_EQ(unsupported(0.5f, " ", 1e-7, " ", 1234567.0, " ", -0.0f, " ", 3.0).message(), "0.5 1e-07 1.23457e+06 -0 3");
  EXPECT_EQ(unsupported(std::numeric_limits<float>::infinity(), std::nanf("")).message(), "infnan");
  EXPECT_EQ(unsupported(static_cast<const char*>(nullptr)).message(), "(null)");
  EXPECT_EQ(shape_to_string({2, -1, 0}), "[2, -1, 0]");
  EXPECT_EQ(shape_to_string({}), "[]");
}

}  // namespace
}  // namespace xonnx
