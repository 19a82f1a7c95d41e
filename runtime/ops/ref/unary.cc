// Reference kernels: element-wise unary math and logic.
//   Abs Neg Sqrt Exp Log Reciprocal Floor Ceil Round Sign, trigonometric and hyperbolic
//   functions, Erf, IsNaN, IsInf, Not, BitwiseNot.
// Float kernels compute float16/bfloat16 in float and double in double; the output has
// the input's type and shape.
#include <cmath>
#include <limits>
#include <type_traits>

#include "runtime/ops/ref/common.h"
#include "runtime/ops/ref/elementwise.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace {

using KernelResult = Result<std::unique_ptr<Kernel>>;

using ref::check_unary_input;
using ref::input_type_error;
using ref::IntTypes;
using ref::map_float;
using ref::map_numeric;

#define XONNX_FLOAT_UNARY(NAME, EXPR)                                           \
  KernelResult create_##NAME(const KernelInit&) {                               \
    return make_kernel([](KernelContext& ctx) -> Status {                       \
      return map_float(ctx, #NAME, [](auto x) -> decltype(x) { return EXPR; }); \
    });                                                                         \
  }

XONNX_FLOAT_UNARY(Sqrt, std::sqrt(x))
XONNX_FLOAT_UNARY(Exp, std::exp(x))
XONNX_FLOAT_UNARY(Log, std::log(x))
XONNX_FLOAT_UNARY(Reciprocal, decltype(x)(1) / x)
XONNX_FLOAT_UNARY(Floor, std::floor(x))
XONNX_FLOAT_UNARY(Ceil, std::ceil(x))
XONNX_FLOAT_UNARY(Round, std::nearbyint(x))  // default rounding mode: half to even
XONNX_FLOAT_UNARY(Sin, std::sin(x))
XONNX_FLOAT_UNARY(Cos, std::cos(x))
XONNX_FLOAT_UNARY(Tan, std::tan(x))
XONNX_FLOAT_UNARY(Asin, std::asin(x))
XONNX_FLOAT_UNARY(Acos, std::acos(x))
XONNX_FLOAT_UNARY(Atan, std::atan(x))
XONNX_FLOAT_UNARY(Sinh, std::sinh(x))
XONNX_FLOAT_UNARY(Cosh, std::cosh(x))
XONNX_FLOAT_UNARY(Asinh, std::asinh(x))
XONNX_FLOAT_UNARY(Acosh, std::acosh(x))
XONNX_FLOAT_UNARY(Atanh, std::atanh(x))
#undef XONNX_FLOAT_UNARY

KernelResult create_Abs(const KernelInit&) {
  return make_kernel([](KernelContext& ctx) -> Status {
    return map_numeric(ctx, "Abs", IntTypes::kAll, [](auto x) -> decltype(x) {
      using V = decltype(x);
      if constexpr (std::is_floating_point_v<V>) {
        return std::fabs(x);
      } else if constexpr (std::is_unsigned_v<V>) {
        return x;
      } else {
        // Two's complement wrap: abs(INT_MIN) == INT_MIN, as numpy does.
        using U = std::make_unsigned_t<V>;
        return x < 0 ? static_cast<V>(U(0) - static_cast<U>(x)) : x;
      }
    });
  });
}

KernelResult create_Neg(const KernelInit&) {
  return make_kernel([](KernelContext& ctx) -> Status {
    return map_numeric(ctx, "Neg", IntTypes::kSignedOnly, [](auto x) -> decltype(x) {
      using V = decltype(x);
      if constexpr (std::is_floating_point_v<V>) {
        return -x;
      } else {
        using U = std::make_unsigned_t<V>;
        return static_cast<V>(U(0) - static_cast<U>(x));  // wraps for the minimum value
      }
    });
  });
}

KernelResult create_Sign(const KernelInit&) {
  return make_kernel([](KernelContext& ctx) -> Status {
    return map_numeric(ctx, "Sign", IntTypes::kAll, [](auto x) -> decltype(x) {
      using V = decltype(x);
      if constexpr (std::is_floating_point_v<V>) {
        if (std::isnan(x)) return x;
      }
      if (x > V(0)) return V(1);
      if constexpr (std::is_signed_v<V> || std::is_floating_point_v<V>) {
        if (x < V(0)) return V(-1);
      }
      return V(0);
    });
  });
}

// Erf-9/13 accepts every numeric type; integers are computed in double and truncated.
KernelResult create_Erf(const KernelInit&) {
  return make_kernel([](KernelContext& ctx) -> Status {
    return map_numeric(ctx, "Erf", IntTypes::kAll, [](auto x) -> decltype(x) {
      using V = decltype(x);
      if constexpr (std::is_floating_point_v<V>) {
        return std::erf(x);
      } else {
        return static_cast<V>(std::erf(static_cast<double>(x)));
      }
    });
  });
}

// Reads element i of a float tensor of any float format (incl. float8) as double.
bool is_float_for_checks(DataType t) {
  switch (t) {
    case DataType::kFloat:
    case DataType::kDouble:
    case DataType::kFloat16:
    case DataType::kBFloat16:
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ: return true;
    default: return false;
  }
}

template <typename Pred>
Status map_float_to_bool(KernelContext& ctx, const char* op, Pred pred) {
  XONNX_RETURN_IF_ERROR(check_unary_input(ctx, op));
  const Tensor& x = ctx.input(0);
  const DataType dt = x.dtype();
  if (!is_float_for_checks(dt)) {
    return input_type_error(op, dt, "float, double, float16, bfloat16 or a float8 type");
  }
  XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kBool, x.shape()));
  const int64_t n = x.numel();
  bool* out = y->data<bool>();
  switch (dt) {
    case DataType::kFloat: {
      const float* in = x.data<float>();
      for (int64_t i = 0; i < n; ++i) out[i] = pred(static_cast<double>(in[i]));
      break;
    }
    case DataType::kDouble: {
      const double* in = x.data<double>();
      for (int64_t i = 0; i < n; ++i) out[i] = pred(in[i]);
      break;
    }
    default:
      for (int64_t i = 0; i < n; ++i) out[i] = pred(x.get_as_double(i));
      break;
  }
  return Status::ok();
}

KernelResult create_IsNaN(const KernelInit&) {
  return make_kernel([](KernelContext& ctx) -> Status {
    return map_float_to_bool(ctx, "IsNaN", [](double v) { return std::isnan(v); });
  });
}

KernelResult create_IsInf(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(const int64_t detect_positive, init.get_int("detect_positive", 1));
  XONNX_ASSIGN_OR_RETURN(const int64_t detect_negative, init.get_int("detect_negative", 1));
  const bool pos = detect_positive != 0;
  const bool neg = detect_negative != 0;
  return make_kernel([pos, neg](KernelContext& ctx) -> Status {
    return map_float_to_bool(ctx, "IsInf",
                             [pos, neg](double v) { return std::isinf(v) && ((v > 0 && pos) || (v < 0 && neg)); });
  });
}

KernelResult create_Not(const KernelInit&) {
  return make_kernel([](KernelContext& ctx) -> Status {
    XONNX_RETURN_IF_ERROR(check_unary_input(ctx, "Not"));
    const Tensor& x = ctx.input(0);
    if (x.dtype() != DataType::kBool) return input_type_error("Not", x.dtype(), "bool");
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kBool, x.shape()));
    const int64_t n = x.numel();
    const bool* in = x.data<bool>();
    bool* out = y->data<bool>();
    for (int64_t i = 0; i < n; ++i) out[i] = !in[i];
    return Status::ok();
  });
}

KernelResult create_BitwiseNot(const KernelInit&) {
  return make_kernel([](KernelContext& ctx) -> Status {
    XONNX_RETURN_IF_ERROR(check_unary_input(ctx, "BitwiseNot"));
    const Tensor& x = ctx.input(0);
    const DataType dt = x.dtype();
    bool ok = true;
    XONNX_DISPATCH_INT(dt, ok = false, (void)sizeof(T));
    if (!ok) return input_type_error("BitwiseNot", dt, "an integer type");
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dt, x.shape()));
    const int64_t n = x.numel();
    XONNX_DISPATCH_INT(dt, return input_type_error("BitwiseNot", dt, "an integer type"), {
      const T* in = x.data<T>();
      T* out = y->data<T>();
      for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(~in[i]);
    });
    return Status::ok();
  });
}

}  // namespace

void register_unary_ops(OpRegistry& registry) {
  // Version ranges: schema since_versions from onnx_op_versions.inc. Older versions differ
  // only in type lists or the legacy `consumed_inputs` attribute, which is ignored.
  XONNX_REGISTER(registry, "", "Abs", 1, kLatestVersion, create_Abs);
  XONNX_REGISTER(registry, "", "Neg", 1, kLatestVersion, create_Neg);
  XONNX_REGISTER(registry, "", "Sqrt", 1, kLatestVersion, create_Sqrt);
  XONNX_REGISTER(registry, "", "Exp", 1, kLatestVersion, create_Exp);
  XONNX_REGISTER(registry, "", "Log", 1, kLatestVersion, create_Log);
  XONNX_REGISTER(registry, "", "Reciprocal", 1, kLatestVersion, create_Reciprocal);
  XONNX_REGISTER(registry, "", "Floor", 1, kLatestVersion, create_Floor);
  XONNX_REGISTER(registry, "", "Ceil", 1, kLatestVersion, create_Ceil);
  XONNX_REGISTER(registry, "", "Round", 11, kLatestVersion, create_Round);
  XONNX_REGISTER(registry, "", "Sign", 9, kLatestVersion, create_Sign);
  XONNX_REGISTER(registry, "", "Sin", 7, kLatestVersion, create_Sin);
  XONNX_REGISTER(registry, "", "Cos", 7, kLatestVersion, create_Cos);
  XONNX_REGISTER(registry, "", "Tan", 7, kLatestVersion, create_Tan);
  XONNX_REGISTER(registry, "", "Asin", 7, kLatestVersion, create_Asin);
  XONNX_REGISTER(registry, "", "Acos", 7, kLatestVersion, create_Acos);
  XONNX_REGISTER(registry, "", "Atan", 7, kLatestVersion, create_Atan);
  XONNX_REGISTER(registry, "", "Sinh", 9, kLatestVersion, create_Sinh);
  XONNX_REGISTER(registry, "", "Cosh", 9, kLatestVersion, create_Cosh);
  XONNX_REGISTER(registry, "", "Asinh", 9, kLatestVersion, create_Asinh);
  XONNX_REGISTER(registry, "", "Acosh", 9, kLatestVersion, create_Acosh);
  XONNX_REGISTER(registry, "", "Atanh", 9, kLatestVersion, create_Atanh);
  XONNX_REGISTER(registry, "", "Erf", 9, kLatestVersion, create_Erf);
  XONNX_REGISTER(registry, "", "IsNaN", 9, kLatestVersion, create_IsNaN);
  XONNX_REGISTER(registry, "", "IsInf", 10, kLatestVersion, create_IsInf);
  XONNX_REGISTER(registry, "", "Not", 1, kLatestVersion, create_Not);
  XONNX_REGISTER(registry, "", "BitwiseNot", 18, kLatestVersion, create_BitwiseNot);
}

}  // namespace xonnx
