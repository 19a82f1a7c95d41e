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
    return (count + per_byte - 1) / per_byte;
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
  if (abs < 0x38800000u) {  // below smallest normal (2^-14): subnormal or zero
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
struct Fp8Format {
  int exp_bits, mant_bits, bias;
  bool fn;  // finite only: no Inf; NaN is all-ones mantissa+exponent (e4m3fn)
  bool uz;  // unsigned zero: 0x80 is the only NaN, no negative zero
};

Fp8Format fp8_format(DataType t) {
  switch (t) {
    case DataType::kFloat8E4M3FN: return {4, 3, 7, true, false};
    case DataType::kFloat8E4M3FNUZ: return {4, 3, 8, true, true};
    case DataType::kFloat8E5M2: return {5, 2, 15, false, false};
    case DataType::kFloat8E5M2FNUZ: return {5, 2, 16, true, true};
    default: return {4, 3, 7, true, false};
  }
}

float fp8_max(const Fp8Format& f, DataType t) {
  switch (t) {
    case DataType::kFloat8E4M3FN: return 448.0f;
    case DataType::kFloat8E4M3FNUZ: return 240.0f;
    case DataType::kFloat8E5M2: return 57344.0f;
    case DataType::kFloat8E5M2FNUZ: return 57344.0f;
    default: (void)f; return 448.0f;
  }
}
}  // namespace

float float8_to_float(DataType t, uint8_t v) {
  if (t == DataType::kFloat8E8M0) {
    if (v == 0xff) return std::numeric_limits<float>::quiet_NaN();
    return std::ldexp(1.0f, static_cast<int>(v) - 127);
  }
  const Fp8Format f = fp8_format(t);
  if (f.uz) {
    if (v == 0x80) return std::numeric_limits<float>::quiet_NaN();
  }
  const bool neg = (v & 0x80) != 0;
  const int exp = (v >> f.mant_bits) & ((1 << f.exp_bits) - 1);
  const int mant = v & ((1 << f.mant_bits) - 1);
  const int exp_max = (1 << f.exp_bits) - 1;
  float r;
  if (!f.fn && exp == exp_max) {  // e5m2: IEEE-like Inf/NaN
    r = mant == 0 ? std::numeric_limits<float>::infinity() : std::numeric_limits<float>::quiet_NaN();
  } else if (t == DataType::kFloat8E4M3FN && exp == exp_max && mant == (1 << f.mant_bits) - 1) {
    r = std::numeric_limits<float>::quiet_NaN();
  } else if (exp == 0) {
    r = std::ldexp(static_cast<float>(mant), 1 - f.bias - f.mant_bits);
  } else {
    r = std::ldexp(static_cast<float>(mant + (1 << f.mant_bits)), exp - f.bias - f.mant_bits);
  }
  return neg ? -r : r;
}

uint8_t float_to_float8(DataType t, float x, bool saturate) {
  if (t == DataType::kFloat8E8M0) {
    // Round to nearest power of two (ties up), as ONNX's default "up" rounding for e8m0.
    if (std::isnan(x) || x <= 0.0f) return std::isnan(x) ? 0xff : 0x00;
    if (std::isinf(x)) return saturate ? 0xfe : 0xff;
    const uint32_t u = float_bits(x);
    int exp = static_cast<int>((u >> 23) & 0xff);
    if ((u & 0x7fffff) != 0 && exp < 254) exp += ((u & 0x400000) != 0) ? 1 : 0;
    if (exp > 254) exp = saturate ? 254 : 255;
    return static_cast<uint8_t>(exp);
  }
  const Fp8Format f = fp8_format(t);
  const float maxv = fp8_max(f, t);
  const bool neg = std::signbit(x);
  uint8_t sign = neg ? 0x80 : 0;
  if (std::isnan(x)) {
    if (f.uz) return 0x80;
    return t == DataType::kFloat8E4M3FN ? 0x7f : 0x7f;  // e5m2 NaN 0x7f too
  }
  float a = std::fabs(x);
  if (std::isinf(x)) {
    if (saturate) a = maxv;
    else if (f.uz) return 0x80;
    else if (f.fn) return sign | 0x7f;  // e4m3fn: no Inf -> NaN
    else return sign | 0x7c;            // e5m2 Inf
  }
  // Enumerate: find the nearest representable magnitude (round half to even) by decoding.
  // 128 candidates is cheap and exact; this is a reference codec, not a hot path.
  int best = 0;
  float best_diff = std::numeric_limits<float>::infinity();
  for (int code = 0; code < 128; ++code) {
    const float v = float8_to_float(t, static_cast<uint8_t>(code));
    if (std::isnan(v) || std::isinf(v)) continue;
    const float d = std::fabs(v - a);
    if (d < best_diff || (d == best_diff && (code & 1) == 0)) {
      best_diff = d;
      best = code;
    }
  }
  if (a > maxv) {
    if (saturate) {
      best = 0;
      for (int code = 0; code < 128; ++code) {
        const float v = float8_to_float(t, static_cast<uint8_t>(code));
        if (v == maxv) best = code;
      }
    } else {
      // Values beyond max round to Inf (e5m2) or NaN (fn types) unless they round down to max.
      const float v_best = float8_to_float(t, static_cast<uint8_t>(best));
      if (v_best != maxv || a >= maxv + (maxv - float8_to_float(t, static_cast<uint8_t>(best - 1))) / 2) {
        if (f.uz) return 0x80;
        if (f.fn) return sign | 0x7f;
        return sign | 0x7c;
      }
    }
  }
  if (f.uz && best == 0) sign = 0;  // no negative zero
  return static_cast<uint8_t>(sign | best);
}

float float4e2m1_to_float(uint8_t nibble) {
  static const float kValues[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  const float v = kValues[nibble & 7];
  return (nibble & 8) ? -v : v;
}

uint8_t float_to_float4e2m1(float x, bool saturate) {
  (void)saturate;  // float4e2m1 has no Inf/NaN: out of range always saturates
  static const float kValues[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  if (std::isnan(x)) return 0x7;  // ONNX maps NaN to +max (0b0111)
  const uint8_t sign = std::signbit(x) ? 8 : 0;
  const float a = std::fabs(x);
  int best = 0;
  float best_diff = std::numeric_limits<float>::infinity();
  for (int i = 0; i < 8; ++i) {
    const float d = std::fabs(kValues[i] - a);
    if (d < best_diff || (d == best_diff && (i & 1) == 0)) {
      best_diff = d;
      best = i;
    }
  }
  return static_cast<uint8_t>(sign | best);
}

}  // namespace xonnx
