// Element types (values equal ONNX TensorProto.DataType) and conversions for the
// narrow float formats that have no C++ type (float16, bfloat16, float8, float4).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace xonnx {

enum class DataType : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUint32 = 12,
  kUint64 = 13,
  kComplex64 = 14,
  kComplex128 = 15,
  kBFloat16 = 16,
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  kUint4 = 21,       // two per byte, low nibble first
  kInt4 = 22,        // two per byte, low nibble first
  kFloat4E2M1 = 23,  // two per byte, low nibble first
  kFloat8E8M0 = 24,
  kUint2 = 25,  // four per byte
  kInt2 = 26,   // four per byte
};

constexpr int kMaxDataTypeValue = 26;

bool dtype_is_known(int32_t value);
const char* dtype_name(DataType t);
// Bits per element (4 for int4/uint4/float4, 2 for int2/uint2, 0 for string/undefined).
int dtype_bits(DataType t);
// Bytes needed to store `count` elements, packed for sub-byte types. -1 on overflow.
int64_t dtype_storage_bytes(DataType t, int64_t count);
bool dtype_is_float(DataType t);    // any IEEE-like float incl. fp16/bf16/fp8/fp4
bool dtype_is_integer(DataType t);  // signed or unsigned ints incl. int4/int2 (not bool)
bool dtype_is_signed(DataType t);
bool dtype_is_subbyte(DataType t);
inline bool dtype_is_8bit_int(DataType t) { return t == DataType::kInt8 || t == DataType::kUint8; }

// Storage types for the formats C++ lacks. Arithmetic happens in float.
struct Float16 {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

float half_to_float(uint16_t h);
uint16_t float_to_half(float f);  // round to nearest even
float bfloat16_to_float(uint16_t b);
uint16_t float_to_bfloat16(float f);  // round to nearest even, NaN preserved

// float8 / float4 codecs, bit-exact with ml_dtypes and the ONNX reference.
//
// float8 e4m3fn / e4m3fnuz / e5m2 / e5m2fnuz: round to nearest, ties to even. `saturate`
// (the ONNX Cast/QuantizeLinear default) clamps out-of-range values and +-Inf to +-max;
// without it they become NaN (e4m3fn: 0x7f/0xff, fnuz: 0x80) or +-Inf (e5m2). NaN encodes as
// 0x7f (e4m3fn) / 0x7e (e5m2) with its sign, or 0x80 (fnuz, which have no -0). Decoding the
// fnuz NaN 0x80 gives a NaN with the sign bit set, as ml_dtypes does.
//
// float8e8m0 (a power of two 2^(v-127), 0xff = NaN): the sign is ignored, NaN and +-Inf
// encode as 0xff, and the exponent is rounded by `e8m0_round` (ONNX Cast `round_mode`);
// `saturate` keeps rounding from overflowing 2^127 into NaN.
enum class E8M0RoundMode { kUp, kDown, kNearest };  // ONNX "up" (default), "down", "nearest"
float float8_to_float(DataType t, uint8_t v);
uint8_t float_to_float8(DataType t, float f, bool saturate, E8M0RoundMode e8m0_round = E8M0RoundMode::kUp);
// float4e2m1 (one nibble; no Inf/NaN): ties to even, out of range and +-Inf saturate to +-6,
// NaN encodes as 0x8 (as ml_dtypes).
float float4e2m1_to_float(uint8_t nibble);
uint8_t float_to_float4e2m1(float f);

// Type traits mapping C++ storage types to DataType.
template <typename T>
struct DataTypeOf;
#define XONNX_DTYPE_OF(T, E)                       \
  template <>                                      \
  struct DataTypeOf<T> {                           \
    static constexpr DataType value = DataType::E; \
  };
XONNX_DTYPE_OF(float, kFloat)
XONNX_DTYPE_OF(double, kDouble)
XONNX_DTYPE_OF(uint8_t, kUint8)
XONNX_DTYPE_OF(int8_t, kInt8)
XONNX_DTYPE_OF(uint16_t, kUint16)
XONNX_DTYPE_OF(int16_t, kInt16)
XONNX_DTYPE_OF(uint32_t, kUint32)
XONNX_DTYPE_OF(int32_t, kInt32)
XONNX_DTYPE_OF(uint64_t, kUint64)
XONNX_DTYPE_OF(int64_t, kInt64)
XONNX_DTYPE_OF(bool, kBool)
XONNX_DTYPE_OF(Float16, kFloat16)
XONNX_DTYPE_OF(BFloat16, kBFloat16)
XONNX_DTYPE_OF(std::string, kString)
#undef XONNX_DTYPE_OF

// Widening conversions used by reference kernels: every storage type to/from a compute type.
template <typename T>
inline float to_float(T v) {
  return static_cast<float>(v);
}
template <>
inline float to_float(Float16 v) {
  return half_to_float(v.bits);
}
template <>
inline float to_float(BFloat16 v) {
  return bfloat16_to_float(v.bits);
}
template <typename T>
inline T from_float(float f) {
  return static_cast<T>(f);
}
template <>
inline Float16 from_float<Float16>(float f) {
  return Float16{float_to_half(f)};
}
template <>
inline BFloat16 from_float<BFloat16>(float f) {
  return BFloat16{float_to_bfloat16(f)};
}

// Compute type for arithmetic on T: float for fp16/bf16, T otherwise.
template <typename T>
struct ComputeType {
  using type = T;
};
template <>
struct ComputeType<Float16> {
  using type = float;
};
template <>
struct ComputeType<BFloat16> {
  using type = float;
};
template <typename T>
using compute_t = typename ComputeType<T>::type;

template <typename T>
inline compute_t<T> to_compute(T v) {
  return v;
}
template <>
inline float to_compute(Float16 v) {
  return half_to_float(v.bits);
}
template <>
inline float to_compute(BFloat16 v) {
  return bfloat16_to_float(v.bits);
}
template <typename T>
inline T from_compute(compute_t<T> v) {
  return static_cast<T>(v);
}
template <>
inline Float16 from_compute<Float16>(float v) {
  return Float16{float_to_half(v)};
}
template <>
inline BFloat16 from_compute<BFloat16>(float v) {
  return BFloat16{float_to_bfloat16(v)};
}

}  // namespace xonnx

// Dispatch helpers: run BODY with `T` bound to the C++ storage type of DTYPE.
// Each expands to a switch; the default branch runs ON_ERROR (a statement, e.g. a return).
#define XONNX_TYPE_CASE(E, CT, ...) \
  case ::xonnx::DataType::E: {      \
    using T = CT;                   \
    __VA_ARGS__;                    \
    break;                          \
  }

#define XONNX_DISPATCH_FLOAT(DTYPE, ON_ERROR, ...)             \
  switch (DTYPE) {                                             \
    XONNX_TYPE_CASE(kFloat, float, __VA_ARGS__)                \
    XONNX_TYPE_CASE(kDouble, double, __VA_ARGS__)              \
    XONNX_TYPE_CASE(kFloat16, ::xonnx::Float16, __VA_ARGS__)   \
    XONNX_TYPE_CASE(kBFloat16, ::xonnx::BFloat16, __VA_ARGS__) \
    default: ON_ERROR;                                         \
  }

#define XONNX_DISPATCH_INT(DTYPE, ON_ERROR, ...)    \
  switch (DTYPE) {                                  \
    XONNX_TYPE_CASE(kInt8, int8_t, __VA_ARGS__)     \
    XONNX_TYPE_CASE(kUint8, uint8_t, __VA_ARGS__)   \
    XONNX_TYPE_CASE(kInt16, int16_t, __VA_ARGS__)   \
    XONNX_TYPE_CASE(kUint16, uint16_t, __VA_ARGS__) \
    XONNX_TYPE_CASE(kInt32, int32_t, __VA_ARGS__)   \
    XONNX_TYPE_CASE(kUint32, uint32_t, __VA_ARGS__) \
    XONNX_TYPE_CASE(kInt64, int64_t, __VA_ARGS__)   \
    XONNX_TYPE_CASE(kUint64, uint64_t, __VA_ARGS__) \
    default: ON_ERROR;                              \
  }

// The types C++ has natively: float, double, the ints and bool (no float16/bfloat16).
#define XONNX_DISPATCH_NATIVE(DTYPE, ON_ERROR, ...) \
  switch (DTYPE) {                                  \
    XONNX_TYPE_CASE(kFloat, float, __VA_ARGS__)     \
    XONNX_TYPE_CASE(kDouble, double, __VA_ARGS__)   \
    XONNX_TYPE_CASE(kInt8, int8_t, __VA_ARGS__)     \
    XONNX_TYPE_CASE(kUint8, uint8_t, __VA_ARGS__)   \
    XONNX_TYPE_CASE(kInt16, int16_t, __VA_ARGS__)   \
    XONNX_TYPE_CASE(kUint16, uint16_t, __VA_ARGS__) \
    XONNX_TYPE_CASE(kInt32, int32_t, __VA_ARGS__)   \
    XONNX_TYPE_CASE(kUint32, uint32_t, __VA_ARGS__) \
    XONNX_TYPE_CASE(kInt64, int64_t, __VA_ARGS__)   \
    XONNX_TYPE_CASE(kUint64, uint64_t, __VA_ARGS__) \
    XONNX_TYPE_CASE(kBool, bool, __VA_ARGS__)       \
    default: ON_ERROR;                              \
  }

// Floats and ints (not bool, not string).
#define XONNX_DISPATCH_NUMERIC(DTYPE, ON_ERROR, ...)           \
  switch (DTYPE) {                                             \
    XONNX_TYPE_CASE(kFloat, float, __VA_ARGS__)                \
    XONNX_TYPE_CASE(kDouble, double, __VA_ARGS__)              \
    XONNX_TYPE_CASE(kFloat16, ::xonnx::Float16, __VA_ARGS__)   \
    XONNX_TYPE_CASE(kBFloat16, ::xonnx::BFloat16, __VA_ARGS__) \
    XONNX_TYPE_CASE(kInt8, int8_t, __VA_ARGS__)                \
    XONNX_TYPE_CASE(kUint8, uint8_t, __VA_ARGS__)              \
    XONNX_TYPE_CASE(kInt16, int16_t, __VA_ARGS__)              \
    XONNX_TYPE_CASE(kUint16, uint16_t, __VA_ARGS__)            \
    XONNX_TYPE_CASE(kInt32, int32_t, __VA_ARGS__)              \
    XONNX_TYPE_CASE(kUint32, uint32_t, __VA_ARGS__)            \
    XONNX_TYPE_CASE(kInt64, int64_t, __VA_ARGS__)              \
    XONNX_TYPE_CASE(kUint64, uint64_t, __VA_ARGS__)            \
    default: ON_ERROR;                                         \
  }

// Every fixed-size type that is one or more whole bytes, including bool (not string,
// not sub-byte types). Useful for data-movement ops (Gather, Transpose, Concat ...),
// which can also just copy dtype-sized bytes.
#define XONNX_DISPATCH_ALL_BYTES(DTYPE, ON_ERROR, ...)         \
  switch (DTYPE) {                                             \
    XONNX_TYPE_CASE(kFloat, float, __VA_ARGS__)                \
    XONNX_TYPE_CASE(kDouble, double, __VA_ARGS__)              \
    XONNX_TYPE_CASE(kFloat16, ::xonnx::Float16, __VA_ARGS__)   \
    XONNX_TYPE_CASE(kBFloat16, ::xonnx::BFloat16, __VA_ARGS__) \
    XONNX_TYPE_CASE(kInt8, int8_t, __VA_ARGS__)                \
    XONNX_TYPE_CASE(kUint8, uint8_t, __VA_ARGS__)              \
    XONNX_TYPE_CASE(kInt16, int16_t, __VA_ARGS__)              \
    XONNX_TYPE_CASE(kUint16, uint16_t, __VA_ARGS__)            \
    XONNX_TYPE_CASE(kInt32, int32_t, __VA_ARGS__)              \
    XONNX_TYPE_CASE(kUint32, uint32_t, __VA_ARGS__)            \
    XONNX_TYPE_CASE(kInt64, int64_t, __VA_ARGS__)              \
    XONNX_TYPE_CASE(kUint64, uint64_t, __VA_ARGS__)            \
    XONNX_TYPE_CASE(kBool, bool, __VA_ARGS__)                  \
    default: ON_ERROR;                                         \
  }
