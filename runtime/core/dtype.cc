#include "runtime/core/dtype.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace xonnx {

bool dtype_is_known(int32_t value) { return value >= 1 && value <= kMaxDataTypeValue; }

const char* dtype_name(DataType t) {
  switch (t) {
    case DataType::kUndefined: return "undefined";
    case DataType::kFloat: return "float32";
    case DataType::kUint8: return "uint8";
    case DataType::kInt8: return "int8";
    case DataType::kUint16: return "uint16";
    case DataType::kInt16: return "int16";
    case DataType::kInt32: return "int32";
    case DataType::kInt64: return "int64";
    case DataType::kString: return "string";
    case DataType::kBool: return "bool";
    case DataType::kFloat16: return "float16";
    case DataType::kDouble: return "float64";
    case DataType::kUint32: return "uint32";
    case DataType::kUint64: return "uint64";
    case DataType::kComplex64: return "complex64";
    case DataType::kComplex128: return "complex128";
    case DataType::kBFloat16: return "bfloat16";
    case DataType::kFloat8E4M3FN: return "float8e4m3fn";
    case DataType::kFloat8E4M3FNUZ: return "float8e4m3fnuz";
    case DataType::kFloat8E5M2: return "float8e5m2";
    case DataType::kFloat8E5M2FNUZ: return "float8e5m2fnuz";
    case DataType::kUint4: return "uint4";
    case DataType::kInt4: return "int4";
    case DataType::kFloat4E2M1: return "float4e2m1";
    case DataType::kFloat8E8M0: return "float8e8m0";
    case DataType::kUint2: return "uint2";
    case DataType::kInt2: return "int2";
  }
  return "unknown";
}

int dtype_bits(DataType t) {
  switch (t) {
    case DataType::kBool:
    case DataType::kUint8:
    case DataType::kInt8:
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ:
    case DataType::kFloat8E8M0: return 8;
    case DataType::kUint16:
    case DataType::kInt16:
    case DataType::kFloat16:
    case DataType::kBFloat16: return 16;
    case DataType::kFloat:
    case DataType::kInt32:
    case DataType::kUint32: return 32;
    case DataType::kDouble:
    case DataType::kInt64:
    case DataType::kUint64:
    case DataType::kComplex64: return 64;
    case DataType::kComplex128: return 128;
    case DataType::kUint4:
    case DataType::kInt4:
    case DataType::kFloat4E2M1: return 4;
    case DataType::kUint2:
    case DataType::kInt2: return 2;
    case DataType::kString:
    case DataType::kUndefined: return 0;
  }
  return 0;
}

int64_t dtype_storage_bytes(DataType t, int64_t count) {
  const int bits = dtype_bits(t);
  if (count < 0) return -1;
  if (bits == 0) return 0;
  if (bits < 8) {
    const int per_byte = 8 / bits;
    return count / per_byte + (count % per_byte != 0);  // no overflow near INT64_MAX
  }
  const int64_t bytes = bits / 8;
  if (count > std::numeric_limits<int64_t>::max() / bytes) return -1;
  return count * bytes;
}

bool dtype_is_float(DataType t) {
  switch (t) {
    case DataType::kFloat:
    case DataType::kDouble:
    case DataType::kFloat16:
    case DataType::kBFloat16:
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ:
    case DataType::kFloat4E2M1:
    case DataType::kFloat8E8M0: return true;
    default: return false;
  }
}

bool dtype_is_integer(DataType t) {
  switch (t) {
    case DataType::kUint8:
    case DataType::kInt8:
    case DataType::kUint16:
    case DataType::kInt16:
    case DataType::kInt32:
    case DataType::kInt64:
    case DataType::kUint32:
    case DataType::kUint64:
    case DataType::kUint4:
    case DataType::kInt4:
    case DataType::kUint2:
    case DataType::kInt2: return true;
    default: return false;
  }
}

bool dtype_is_signed(DataType t) {
  switch (t) {
    case DataType::kInt8:
    case DataType::kInt16:
    case DataType::kInt32:
    case DataType::kInt64:
    case DataType::kInt4:
    case DataType::kInt2: return true;
    default: return dtype_is_float(t);
  }
}

bool dtype_is_subbyte(DataType t) {
  const int bits = dtype_bits(t);
  return bits > 0 && bits < 8;
}

namespace {
uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
}  // namespace

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  const uint32_t mant = h & 0x3ff;
  if (exp == 0) {
    // zero or subnormal: mant * 2^-24
    const float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  if (exp == 31) return bits_float(sign | 0x7f800000u | (mant << 13));
  return bits_float(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t float_to_half(float f) {
  const uint32_t u = float_bits(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000);
  const uint32_t abs = u & 0x7fffffff;
  if (abs >= 0x7f800000u) {  // Inf or NaN
    return sign | 0x7c00 | (abs > 0x7f800000u ? 0x200 : 0);
  }
  if (abs >= 0x477ff000u) return sign | 0x7c00;  // rounds to >= 65520: overflow to Inf
  if (abs < 0x38800000u) {                       // below smallest normal (2^-14): subnormal or zero
    const float v = bits_float(abs);
    // Scale so that one unit == 2^-24 and round to nearest even.
    const float scaled = v * 16777216.0f;  // 2^24
    return sign | static_cast<uint16_t>(std::nearbyint(scaled));
  }
  const uint32_t mant_odd = (abs >> 13) & 1;
  const uint32_t rounded = abs + 0xfff + mant_odd;
  return sign | static_cast<uint16_t>((rounded - 0x38000000u) >> 13);
}

float bfloat16_to_float(uint16_t b) { return bits_float(static_cast<uint32_t>(b) << 16); }

uint16_t float_to_bfloat16(float f) {
  const uint32_t u = float_bits(f);
  if ((u & 0x7fffffff) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);
  const uint32_t lsb = (u >> 16) & 1;
  return static_cast<uint16_t>((u + 0x7fff + lsb) >> 16);
}

namespace {
// Layout of the 8-bit (and 4-bit) minifloats: mantissa bits, exponent bias, the largest
// finite magnitude code, and the codes used for NaN and for overflow without saturation.
struct MiniFloat {
  int mant_bits;
  int bias;
  uint8_t max_code;       // magnitude code of the largest finite value
  uint8_t nan_code;       // NaN, given the input's sign bit (fnuz: 0x80 either way)
  uint8_t overflow_code;  // out of range without saturation: Inf (e5m2) or NaN
  bool unsigned_zero;     // fnuz: 0x80 is the only NaN, there is no -0
};

MiniFloat minifloat(DataType t) {
  switch (t) {
    case DataType::kFloat8E4M3FNUZ: return {3, 8, 0x7f, 0x80, 0x80, true};
    case DataType::kFloat8E5M2: return {2, 15, 0x7b, 0x7e, 0x7c, false};
    case DataType::kFloat8E5M2FNUZ: return {2, 16, 0x7f, 0x80, 0x80, true};
    case DataType::kFloat4E2M1: return {1, 1, 0x7, 0x7, 0x7, false};  // no NaN/Inf: unused
    default: return {3, 7, 0x7e, 0x7f, 0x7f, false};                  // kFloat8E4M3FN
  }
}

// Value of magnitude code `c` (no sign bit, not NaN/Inf) as float bits.
uint32_t minifloat_magnitude_bits(const MiniFloat& f, uint32_t c) {
  const uint32_t e = c >> f.mant_bits;
  const uint32_t m = c & ((1u << f.mant_bits) - 1);
  if (e != 0) {
    return ((e - f.bias + 127) << 23) | (m << (23 - f.mant_bits));
  }
  // Subnormal: m * 2^(1 - bias - mant_bits), exact in float.
  const float unit = bits_float(static_cast<uint32_t>(1 - f.bias - f.mant_bits + 127) << 23);
  return float_bits(static_cast<float>(m) * unit);
}

// Rounds the finite non-negative float with bits `u` to a magnitude code, half to even.
// The result may exceed max_code (the caller decides between saturation and overflow).
uint32_t round_to_minifloat(const MiniFloat& f, uint32_t u) {
  const int exp = static_cast<int>(u >> 23) - 127;
  // Float zero and subnormals (< 2^-126) are far below half the smallest subnormal of
  // every format here, so they round to zero.
  if (exp == -127) return 0;
  const int emin = 1 - f.bias;
  const uint32_t mant = (u & 0x7fffff) | 0x800000;  // 24 significant bits
  const int shift = 23 - f.mant_bits + (exp < emin ? emin - exp : 0);
  if (shift > 24) return 0;  // below half the smallest subnormal
  uint32_t r = mant >> shift;
  const uint32_t rem = mant & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  if (rem > half || (rem == half && (r & 1))) ++r;
  // Normal: r has the implicit bit (2^mant_bits), so adding it carries into the exponent
  // field; a mantissa that rounds up to 2^(mant_bits+1) carries into the next binade.
  return exp < emin ? r : (static_cast<uint32_t>(exp - emin) << f.mant_bits) + r;
}

uint8_t float_to_e8m0(uint32_t u, bool saturate, E8M0RoundMode mode) {
  uint32_t exponent = (u >> 23) & 0xff;  // the sign is ignored
  if (exponent == 0xff) return 0xff;     // NaN and Inf
  bool round_up = false;
  switch (mode) {
    case E8M0RoundMode::kUp: round_up = (u & 0x7fffff) != 0; break;
    case E8M0RoundMode::kDown: break;
    case E8M0RoundMode::kNearest: {
      const bool guard = (u & 0x400000) != 0;
      const bool round = (u & 0x200000) != 0;
      const bool sticky = (u & 0x1fffff) != 0;
      round_up = guard && (round || sticky || exponent > 0);
      break;
    }
  }
  if (round_up && !(saturate && exponent == 0xfe)) ++exponent;  // 0xfe + 1 = 0xff: NaN
  return static_cast<uint8_t>(exponent);
}
}  // namespace

float float8_to_float(DataType t, uint8_t v) {
  if (t == DataType::kFloat8E8M0) {
    if (v == 0xff) return std::numeric_limits<float>::quiet_NaN();
    return bits_float(v == 0 ? 0x00400000u : static_cast<uint32_t>(v) << 23);  // 2^(v - 127)
  }
  const MiniFloat f = minifloat(t);
  const uint32_t sign = static_cast<uint32_t>(v & 0x80) << 24;
  const uint32_t c = v & 0x7f;
  if (f.unsigned_zero) {
    // 0x80 is NaN; it decodes with the sign bit set, as ml_dtypes does.
    if (v == 0x80) return -std::numeric_limits<float>::quiet_NaN();
  } else if (c > f.max_code) {
    if (c == f.overflow_code && f.overflow_code != f.nan_code) return bits_float(sign | 0x7f800000u);
    return bits_float(sign | 0x7fc00000u);
  }
  return bits_float(sign | minifloat_magnitude_bits(f, c));
}

uint8_t float_to_float8(DataType t, float x, bool saturate, E8M0RoundMode e8m0_round) {
  const uint32_t u = float_bits(x);
  if (t == DataType::kFloat8E8M0) return float_to_e8m0(u, saturate, e8m0_round);
  const MiniFloat f = minifloat(t);
  const uint8_t sign = static_cast<uint8_t>((u >> 24) & 0x80);
  const uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return sign | f.nan_code;  // fnuz: 0x80 either way
  const uint32_t code = abs == 0x7f800000u ? 0xffu : round_to_minifloat(f, abs);
  if (code > f.max_code) return sign | (saturate ? f.max_code : f.overflow_code);
  if (code == 0 && f.unsigned_zero) return 0;  // no -0
  return static_cast<uint8_t>(sign | code);
}

float float4e2m1_to_float(uint8_t nibble) {
  const MiniFloat f = minifloat(DataType::kFloat4E2M1);
  const uint32_t sign = static_cast<uint32_t>(nibble & 0x8) << 28;
  return bits_float(sign | minifloat_magnitude_bits(f, nibble & 0x7));
}

uint8_t float_to_float4e2m1(float x) {
  const uint32_t u = float_bits(x);
  const uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return 0x8;  // NaN, as ml_dtypes
  const MiniFloat f = minifloat(DataType::kFloat4E2M1);
  const uint8_t sign = static_cast<uint8_t>((u >> 28) & 0x8);
  const uint32_t code = abs == 0x7f800000u ? 0xffu : round_to_minifloat(f, abs);
  return static_cast<uint8_t>(sign | (code > f.max_code ? f.max_code : code));
}

}  // namespace xonnx
