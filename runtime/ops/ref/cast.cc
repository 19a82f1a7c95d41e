// Reference kernels: Cast and CastLike between every non-complex ONNX element type.
//
// Semantics (ONNX reference evaluator / numpy / ml_dtypes):
//  - float -> narrower float: round to nearest even, computed in one rounding step (doubles
//    and wide integers are first reduced to float with round-to-odd, which makes the second
//    rounding exact).
//  - float8 e4m3fn/e4m3fnuz/e5m2/e5m2fnuz: `saturate` (default 1) clamps out-of-range values
//    and +-Inf to +-max; without it they become NaN (fn/fnuz) or Inf (e5m2).
//  - float4e2m1 has no Inf/NaN: out of range saturates, NaN becomes 0x8 (as ml_dtypes).
//  - float8e8m0: rounding by `round_mode` ("up" default, "down", "nearest") on the float32
//    exponent, sign ignored; NaN/Inf -> 0xFF.
//    (The float8/float4/e8m0 encoders are the core codecs of runtime/core/dtype.h.)
//  - float -> integer: truncation toward zero. NaN -> 0. Values outside the target range wrap
//    (two's complement) when they fit in int64 and saturate otherwise (the spec leaves this
//    undefined; this is what numpy does on x86 for the narrow types). int4/uint4/int2/uint2
//    keep the low bits (wrap), as the ONNX reference does.
//  - bool: any non-zero (or NaN) is true.
//  - strings: numbers print like numpy's str() (shortest round-trip digits, e.g. "0.1",
//    "1e-05", "inf"); strings parse as decimal numbers ("NaN", "INF", "-inf" accepted).
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "runtime/ops/ref/cast_internal.h"
#include "runtime/ops/ref/common.h"
#include "runtime/ops/registry.h"

namespace xonnx {

namespace {

using KernelResult = Result<std::unique_ptr<Kernel>>;

struct CastOptions {
  bool saturate = true;
  E8M0RoundMode round_mode = E8M0RoundMode::kUp;
};

bool is_native(DataType t) {
  switch (t) {
    case DataType::kFloat:
    case DataType::kDouble:
    case DataType::kInt8:
    case DataType::kUint8:
    case DataType::kInt16:
    case DataType::kUint16:
    case DataType::kInt32:
    case DataType::kUint32:
    case DataType::kInt64:
    case DataType::kUint64:
    case DataType::kBool: return true;
    default: return false;
  }
}

bool is_castable(DataType t) {
  return dtype_is_known(static_cast<int32_t>(t)) && t != DataType::kUndefined && t != DataType::kComplex64 &&
         t != DataType::kComplex128;
}

// ---------------------------------------------------------------------------------------
// Scalar conversions.

// Float-to-integer: trunc; NaN -> 0; wrap within int64 range, saturate beyond.
template <typename D, typename S>
D float_to_int(S v) {
  if (std::isnan(v)) return D(0);
  const S t = std::trunc(v);
  constexpr int bits = std::numeric_limits<D>::digits + (std::is_signed_v<D> ? 1 : 0);
  const S lo = std::is_signed_v<D> ? -std::ldexp(S(1), bits - 1) : S(0);
  const S hi = std::ldexp(S(1), std::is_signed_v<D> ? bits - 1 : bits);  // exclusive
  if (t >= lo && t < hi) return static_cast<D>(t);
  const S two63 = std::ldexp(S(1), 63);
  if (t > -two63 && t < two63) return static_cast<D>(static_cast<int64_t>(t));  // wraps
  return t > 0 ? std::numeric_limits<D>::max() : std::numeric_limits<D>::lowest();
}

template <typename D, typename S>
D cast_native(S v) {
  if constexpr (std::is_same_v<D, bool>) {
    return v != S(0);
  } else if constexpr (std::is_floating_point_v<S> && std::is_integral_v<D>) {
    return float_to_int<D>(v);
  } else {
    return static_cast<D>(v);
  }
}

// Any native value -> float such that a later round-to-nearest-even to a format with at
// most 22 significant bits equals a single direct rounding (round-to-odd on the float).
template <typename S>
float narrow_float(S v) {
  if constexpr (std::is_same_v<S, float>) {
    return v;
  } else if constexpr (std::is_same_v<S, bool>) {
    return v ? 1.0f : 0.0f;
  } else if constexpr (std::is_same_v<S, double>) {
    float f = static_cast<float>(v);
    if (std::isnan(v) || std::isinf(v) || static_cast<double>(f) == v) return f;
    if (std::fabs(static_cast<double>(f)) > std::fabs(v)) f = std::nextafter(f, 0.0f);
    uint32_t u;  // round to odd: set the lowest bit of the truncated value
    std::memcpy(&u, &f, sizeof(u));
    u |= 1u;
    std::memcpy(&f, &u, sizeof(f));
    return f;
  } else {
    const bool neg = std::is_signed_v<S> && v < 0;
    uint64_t m = neg ? uint64_t(0) - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
    float r;
    if (m < (uint64_t(1) << 24)) {
      r = static_cast<float>(m);
    } else {
      int width = 64;
      while (!(m >> (width - 1))) --width;
      const int shift = width - 24;
      uint64_t top = m >> shift;
      if (m & ((uint64_t(1) << shift) - 1)) top |= 1;
      r = std::ldexp(static_cast<float>(top), shift);
    }
    return neg ? -r : r;
  }
}

// Any native value -> int64 for the sub-byte integer types (low bits kept by the caller).
template <typename S>
int64_t to_int64_wrapping(S v) {
  if constexpr (std::is_same_v<S, bool>) {
    return v ? 1 : 0;
  } else if constexpr (std::is_floating_point_v<S>) {
    return float_to_int<int64_t>(v);
  } else {
    return static_cast<int64_t>(v);
  }
}

// ---------------------------------------------------------------------------------------
// Whole-tensor conversion from a native source array into any destination type.

template <typename S>
Status convert_from(const S* src, int64_t n, Tensor* y, const CastOptions& o) {
  const DataType to = y->dtype();
  if (is_native(to)) {
    XONNX_DISPATCH_NATIVE(to, return internal_error("Cast: bad native type"), {
      T* out = y->data<T>();
      for (int64_t i = 0; i < n; ++i) out[i] = cast_native<T>(src[i]);
    });
    return Status::ok();
  }
  switch (to) {
    case DataType::kFloat16: {
      uint16_t* out = y->data<uint16_t>();
      for (int64_t i = 0; i < n; ++i) out[i] = float_to_half(narrow_float(src[i]));
      return Status::ok();
    }
    case DataType::kBFloat16: {
      uint16_t* out = y->data<uint16_t>();
      for (int64_t i = 0; i < n; ++i) out[i] = float_to_bfloat16(narrow_float(src[i]));
      return Status::ok();
    }
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ: {
      uint8_t* out = y->data<uint8_t>();
      for (int64_t i = 0; i < n; ++i) out[i] = float_to_float8(to, narrow_float(src[i]), o.saturate);
      return Status::ok();
    }
    case DataType::kFloat8E8M0: {
      // The reference first converts to float32 (round to nearest), then rounds the exponent.
      uint8_t* out = y->data<uint8_t>();
      for (int64_t i = 0; i < n; ++i)
        out[i] = float_to_float8(to, static_cast<float>(src[i]), o.saturate, o.round_mode);
      return Status::ok();
    }
    case DataType::kFloat4E2M1: {
      void* out = y->raw_data();
      for (int64_t i = 0; i < n; ++i) subbyte_set(out, to, i, float_to_float4e2m1(narrow_float(src[i])));
      return Status::ok();
    }
    case DataType::kInt4:
    case DataType::kUint4:
    case DataType::kInt2:
    case DataType::kUint2: {
      void* out = y->raw_data();
      const uint64_t mask = (uint64_t(1) << dtype_bits(to)) - 1;
      for (int64_t i = 0; i < n; ++i) {
        const uint64_t v = static_cast<uint64_t>(to_int64_wrapping(src[i]));
        subbyte_set(out, to, i, static_cast<uint8_t>(v & mask));
      }
      return Status::ok();
    }
    default: return unsupported("Cast: target type ", dtype_name(to), " is not supported");
  }
}

// Strings -> any type: parse each element, then convert as a double / int64 / uint64 scalar.
Status convert_from_strings(const Tensor& x, Tensor* y, const CastOptions& o) {
  const int64_t n = x.numel();
  const DataType to = y->dtype();
  if (to == DataType::kString) {
    for (int64_t i = 0; i < n; ++i) y->string_data()[i] = x.string_data()[i];
    return Status::ok();
  }
  for (int64_t i = 0; i < n; ++i) {
    int kind = 0;
    float f = 0;
    double d = 0;
    int64_t si = 0;
    uint64_t ui = 0;
    XONNX_RETURN_IF_ERROR(cast_detail::parse_string(x.string_data()[i], to, &kind, &f, &d, &si, &ui));
    // Convert one element through a 1-element tensor of the destination type.
    XONNX_ASSIGN_OR_RETURN(Tensor one, Tensor::allocate(to, {1}));
    switch (kind) {
      case 0: XONNX_RETURN_IF_ERROR(convert_from(&f, 1, &one, o)); break;
      case 1: XONNX_RETURN_IF_ERROR(convert_from(&d, 1, &one, o)); break;
      case 2: XONNX_RETURN_IF_ERROR(convert_from(&si, 1, &one, o)); break;
      default: XONNX_RETURN_IF_ERROR(convert_from(&ui, 1, &one, o)); break;
    }
    if (dtype_is_subbyte(to)) {
      subbyte_set(y->raw_data(), to, i, subbyte_get(one.raw_data(), to, 0));
    } else {
      const size_t bytes = static_cast<size_t>(dtype_bits(to) / 8);
      std::memcpy(static_cast<char*>(y->raw_data()) + i * bytes, one.raw_data(), bytes);
    }
  }
  return Status::ok();
}

Status cast_tensor(const Tensor& x, Tensor* y, const CastOptions& o) {
  const DataType from = x.dtype();
  const int64_t n = x.numel();
  if (y->dtype() == DataType::kString && from != DataType::kString) {
    std::string* out = y->string_data();
    for (int64_t i = 0; i < n; ++i) out[i] = cast_detail::format_number(x, i);
    return Status::ok();
  }
  if (is_native(from)) {
    XONNX_DISPATCH_NATIVE(from, return internal_error("Cast: bad native type"),
                          return convert_from(x.data<T>(), n, y, o));
  }
  switch (from) {
    case DataType::kString: return convert_from_strings(x, y, o);
    case DataType::kInt4:
    case DataType::kInt2: {
      std::vector<int8_t> tmp(static_cast<size_t>(n));
      const int bits = dtype_bits(from);
      for (int64_t i = 0; i < n; ++i) {
        const int v = subbyte_get(x.raw_data(), from, i);
        tmp[i] = static_cast<int8_t>(v >= (1 << (bits - 1)) ? v - (1 << bits) : v);
      }
      return convert_from(tmp.data(), n, y, o);
    }
    case DataType::kUint4:
    case DataType::kUint2: {
      std::vector<uint8_t> tmp(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) tmp[i] = subbyte_get(x.raw_data(), from, i);
      return convert_from(tmp.data(), n, y, o);
    }
    case DataType::kFloat16:
      if (y->dtype() == DataType::kFloat) {  // float16 weights: without a type switch per element
        const Float16* h = x.data<Float16>();
        float* out = y->data<float>();
        for (int64_t i = 0; i < n; ++i) out[i] = half_to_float(h[i].bits);
        return Status::ok();
      }
      [[fallthrough]];
    case DataType::kBFloat16:
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ:
    case DataType::kFloat8E8M0:
    case DataType::kFloat4E2M1: {
      // Every narrow float is exactly representable in float.
      std::vector<float> tmp(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) tmp[i] = static_cast<float>(x.get_as_double(i));
      return convert_from(tmp.data(), n, y, o);
    }
    default: return unsupported("Cast: input type ", dtype_name(from), " is not supported");
  }
}

Status run_cast(KernelContext& ctx, DataType to, const CastOptions& o, const char* op) {
  if (!ctx.has_input(0) || !ctx.input(0).defined()) {
    return invalid_argument(op, ": input 0 must be a tensor");
  }
  const Tensor& x = ctx.input(0);
  if (!is_castable(x.dtype())) {
    return unsupported(op, ": input type ", dtype_name(x.dtype()), " is not supported");
  }
  if (x.numel() < 0) return invalid_argument(op, ": input 0 has an invalid shape");
  if (x.dtype() == to) {
    ctx.set_output(0, x);  // identity: share the input's storage
    return Status::ok();
  }
  XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, to, x.shape()));
  return cast_tensor(x, y, o);
}

Result<DataType> dtype_from_name(const std::string& name) {
  static const struct {
    const char* name;
    DataType t;
  } kNames[] = {
      {"FLOAT", DataType::kFloat},     {"UINT8", DataType::kUint8},       {"INT8", DataType::kInt8},
      {"UINT16", DataType::kUint16},   {"INT16", DataType::kInt16},       {"INT32", DataType::kInt32},
      {"INT64", DataType::kInt64},     {"STRING", DataType::kString},     {"BOOL", DataType::kBool},
      {"FLOAT16", DataType::kFloat16}, {"DOUBLE", DataType::kDouble},     {"UINT32", DataType::kUint32},
      {"UINT64", DataType::kUint64},   {"BFLOAT16", DataType::kBFloat16},
  };
  std::string upper;
  for (char c : name) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (upper.rfind("TENSOR(", 0) == 0 && upper.back() == ')') upper = upper.substr(7, upper.size() - 8);
  for (const auto& e : kNames) {
    if (upper == e.name) return e.t;
  }
  return invalid_argument("Cast: attribute 'to' names unknown type '", name, "'");
}

Result<CastOptions> parse_options(const KernelInit& init, const char* op) {
  CastOptions o;
  XONNX_ASSIGN_OR_RETURN(const int64_t saturate, init.get_int("saturate", 1));
  o.saturate = saturate != 0;
  XONNX_ASSIGN_OR_RETURN(const std::string mode, init.get_string("round_mode", "up"));
  if (mode == "up") {
    o.round_mode = E8M0RoundMode::kUp;
  } else if (mode == "down") {
    o.round_mode = E8M0RoundMode::kDown;
  } else if (mode == "nearest") {
    o.round_mode = E8M0RoundMode::kNearest;
  } else {
    return invalid_argument(op, ": attribute round_mode must be 'up', 'down' or 'nearest', got '", mode, "'");
  }
  return o;
}

KernelResult create_Cast(const KernelInit& init) {
  const Attribute* to_attr = init.attr("to");
  if (!to_attr) return invalid_model("Cast: required attribute 'to' is missing");
  DataType to;
  if (to_attr->type == AttrType::kString) {  // Cast-1 names the type
    XONNX_ASSIGN_OR_RETURN(to, dtype_from_name(to_attr->s));
  } else {
    XONNX_ASSIGN_OR_RETURN(const int64_t v, init.require_int("to"));
    if (v < 0 || v > kMaxDataTypeValue || !is_castable(static_cast<DataType>(v))) {
      return unsupported("Cast: attribute 'to' = ", v, " is not a supported element type");
    }
    to = static_cast<DataType>(v);
  }
  XONNX_ASSIGN_OR_RETURN(const CastOptions o, parse_options(init, "Cast"));
  return make_kernel([to, o](KernelContext& ctx) -> Status { return run_cast(ctx, to, o, "Cast"); });
}

KernelResult create_CastLike(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(const CastOptions o, parse_options(init, "CastLike"));
  return make_kernel([o](KernelContext& ctx) -> Status {
    if (!ctx.has_input(1) || !ctx.input(1).defined()) {
      return invalid_argument("CastLike: input 1 (target_type) must be a tensor");
    }
    const DataType to = ctx.input(1).dtype();
    if (!is_castable(to)) {
      return unsupported("CastLike: target type ", dtype_name(to), " is not supported");
    }
    return run_cast(ctx, to, o, "CastLike");
  });
}

}  // namespace

void register_cast_ops(OpRegistry& registry) {
  // Cast 1 (string `to`), 6, 9, 13, 19 (saturate), 21 (int4), 23, 24/25 (e8m0, round_mode,
  // int2): one kernel reads whichever attributes are present.
  XONNX_REGISTER(registry, "", "Cast", 1, kLatestVersion, create_Cast);
  XONNX_REGISTER(registry, "", "CastLike", 15, kLatestVersion, create_CastLike);
}

}  // namespace xonnx
