// Reference kernels: element-wise activations.
//   Relu LeakyRelu Elu Selu Celu Sigmoid HardSigmoid HardSwish Softplus Softsign Tanh
//   ThresholdedRelu Mish Gelu Swish Shrink Clip.
// Attributes are parsed and validated at prepare time. float16/bfloat16 compute in float,
// double in double; integer types (Relu, Shrink, Clip) compute in their own type.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
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
using ref::is_float_type;
using ref::is_numeric_type;
using ref::map_float;
using ref::map_numeric;

template <typename V>
V stable_sigmoid(V x) {
  if (x >= V(0)) return V(1) / (V(1) + std::exp(-x));
  const V e = std::exp(x);
  return e / (V(1) + e);
}

// log(1 + exp(x)) without overflow for large x.
template <typename V>
V stable_softplus(V x) {
  if (x > V(0)) return x + std::log1p(std::exp(-x));
  return std::log1p(std::exp(x));
}

KernelResult create_Relu(const KernelInit&) {
  return make_kernel([](KernelContext& ctx) -> Status {
    return map_numeric(ctx, "Relu", IntTypes::kSignedOnly, [](auto x) -> decltype(x) {
      using V = decltype(x);
      if constexpr (std::is_floating_point_v<V>) {
        if (std::isnan(x)) return x;
      }
      return x > V(0) ? x : V(0);
    });
  });
}

KernelResult create_LeakyRelu(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(const float alpha, init.get_float("alpha", 0.01f));
  return make_kernel([alpha](KernelContext& ctx) -> Status {
    return map_float(ctx, "LeakyRelu", [alpha](auto x) -> decltype(x) {
      using V = decltype(x);
      return x >= V(0) ? x : V(alpha) * x;
    });
  });
}

KernelResult create_Elu(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(const float alpha, init.get_float("alpha", 1.0f));
  return make_kernel([alpha](KernelContext& ctx) -> Status {
    return map_float(ctx, "Elu", [alpha](auto x) -> decltype(x) {
      using V = decltype(x);
      return x >= V(0) ? x : V(alpha) * std::expm1(x);
    });
  });
}

KernelResult create_Selu(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(const float alpha, init.get_float("alpha", 1.67326319217681884765625f));
  XONNX_ASSIGN_OR_RETURN(const float gamma, init.get_float("gamma", 1.05070102214813232421875f));
  return make_kernel([alpha, gamma](KernelContext& ctx) -> Status {
    return map_float(ctx, "Selu", [alpha, gamma](auto x) -> decltype(x) {
      using V = decltype(x);
      return x > V(0) ? V(gamma) * x : V(gamma) * (V(alpha) * std::exp(x) - V(alpha));
    });
  });
}

KernelResult create_Celu(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(const float alpha, init.get_float("alpha", 1.0f));
  if (alpha == 0.0f || std::isnan(alpha)) {
    return invalid_argument("Celu: attribute alpha must be non-zero, got ", alpha);
  }
  return make_kernel([alpha](KernelContext& ctx) -> Status {
    return map_float(ctx, "Celu", [alpha](auto x) -> decltype(x) {
      using V = decltype(x);
      const V a = V(alpha);
      return std::max(V(0), x) + std::min(V(0), a * std::expm1(x / a));
    });
  });
}

KernelResult create_Sigmoid(const KernelInit&) {
  return make_kernel([](KernelContext& ctx) -> Status {
    return map_float(ctx, "Sigmoid", [](auto x) -> decltype(x) { return stable_sigmoid(x); });
  });
}

KernelResult create_HardSigmoid(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(const float alpha, init.get_float("alpha", 0.2f));
  XONNX_ASSIGN_OR_RETURN(const float beta, init.get_float("beta", 0.5f));
  return make_kernel([alpha, beta](KernelContext& ctx) -> Status {
    return map_float(ctx, "HardSigmoid", [alpha, beta](auto x) -> decltype(x) {
      using V = decltype(x);
      const V v = V(alpha) * x + V(beta);
      if (std::isnan(v)) return v;
      return std::max(V(0), std::min(V(1), v));
    });
  });
}

KernelResult create_HardSwish(const KernelInit&) {
  return make_kernel([](KernelContext& ctx) -> Status {
    return map_float(ctx, "HardSwish", [](auto x) -> decltype(x) {
      using V = decltype(x);
      const V v = std::fma(x, V(1) / V(6), V(0.5));  // alpha x + beta, alpha = 1/6, rounded once
      if (std::isnan(v)) return v;
      return x * std::max(V(0), std::min(V(1), v));
    });
  });
}

KernelResult create_Softplus(const KernelInit&) {
  return make_kernel([](KernelContext& ctx) -> Status {
    return map_float(ctx, "Softplus", [](auto x) -> decltype(x) { return stable_softplus(x); });
  });
}

KernelResult create_Softsign(const KernelInit&) {
  return make_kernel([](KernelContext& ctx) -> Status {
    return map_float(ctx, "Softsign", [](auto x) -> decltype(x) {
      using V = decltype(x);
      return x / (V(1) + std::fabs(x));
    });
  });
}

KernelResult create_Tanh(const KernelInit&) {
  return make_kernel([](KernelContext& ctx) -> Status {
    return map_float(ctx, "Tanh", [](auto x) -> decltype(x) { return std::tanh(x); });
  });
}

KernelResult create_ThresholdedRelu(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(const float alpha, init.get_float("alpha", 1.0f));
  return make_kernel([alpha](KernelContext& ctx) -> Status {
    return map_float(ctx, "ThresholdedRelu", [alpha](auto x) -> decltype(x) {
      using V = decltype(x);
      if (std::isnan(x)) return x;
      return x > V(alpha) ? x : V(0);
    });
  });
}

KernelResult create_Mish(const KernelInit&) {
  return make_kernel([](KernelContext& ctx) -> Status {
    return map_float(ctx, "Mish", [](auto x) -> decltype(x) { return x * std::tanh(stable_softplus(x)); });
  });
}

KernelResult create_Gelu(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(const std::string approximate, init.get_string("approximate", "none"));
  if (approximate != "none" && approximate != "tanh") {
    return invalid_argument("Gelu: attribute approximate must be 'none' or 'tanh', got '", approximate, "'");
  }
  if (approximate == "tanh") {
    return make_kernel([](KernelContext& ctx) -> Status {
      return map_float(ctx, "Gelu", [](auto x) -> decltype(x) {
        using V = decltype(x);
        const V k = static_cast<V>(0.79788456080286535587989211986876);  // sqrt(2/pi)
        return V(0.5) * x * (V(1) + std::tanh(k * (x + V(0.044715) * x * x * x)));
      });
    });
  }
  return make_kernel([](KernelContext& ctx) -> Status {
    return map_float(ctx, "Gelu", [](auto x) -> decltype(x) {
      using V = decltype(x);
      const V inv_sqrt2 = static_cast<V>(0.70710678118654752440084436210485);
      return V(0.5) * x * (V(1) + std::erf(x * inv_sqrt2));
    });
  });
}

KernelResult create_Swish(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(const float alpha, init.get_float("alpha", 1.0f));
  return make_kernel([alpha](KernelContext& ctx) -> Status {
    return map_float(ctx, "Swish", [alpha](auto x) -> decltype(x) {
      using V = decltype(x);
      return x * stable_sigmoid(V(alpha) * x);
    });
  });
}

// Shrink-9: numeric types.
KernelResult create_Shrink(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(const float lambd, init.get_float("lambd", 0.5f));
  XONNX_ASSIGN_OR_RETURN(const float bias, init.get_float("bias", 0.0f));
  return make_kernel([lambd, bias](KernelContext& ctx) -> Status {
    return map_numeric(ctx, "Shrink", IntTypes::kAll, [lambd, bias](auto x) -> decltype(x) {
      using V = decltype(x);
      if constexpr (std::is_floating_point_v<V>) {
        if (x < V(-lambd)) return x + V(bias);
        if (x > V(lambd)) return x - V(bias);
        return std::isnan(x) ? x : V(0);
      } else {
        // Integers: compare and shift in double, then truncate and wrap into V (saturating
        // at the int64 range first so the conversion is always defined).
        const double d = static_cast<double>(x);
        double r = 0.0;
        if (d < -static_cast<double>(lambd)) {
          r = d + bias;
        } else if (d > static_cast<double>(lambd)) {
          r = d - bias;
        } else {
          return V(0);
        }
        if (std::isnan(r)) return V(0);
        r = std::trunc(r);
        if (r >= 0.0 && r < 18446744073709551616.0) return static_cast<V>(static_cast<uint64_t>(r));
        if (r < 0.0 && r > -9223372036854775808.0) return static_cast<V>(static_cast<int64_t>(r));
        return r > 0 ? std::numeric_limits<V>::max() : std::numeric_limits<V>::lowest();
      }
    });
  });
}

// Clip: before opset 11 the bounds are float attributes (float types only); from 11 they are
// optional scalar inputs of the input's type (integers from 12). min > max yields max
// everywhere (numpy.clip semantics); NaN inputs stay NaN.
struct ClipAttrs {
  bool from_inputs = true;
  float min = -std::numeric_limits<float>::max();
  float max = std::numeric_limits<float>::max();
};

template <typename T>
Result<compute_t<T>> clip_bound(KernelContext& ctx, size_t i, const char* which, DataType dt, compute_t<T> def) {
  if (!ctx.has_input(i)) return def;
  const Tensor& b = ctx.input(i);
  if (!b.defined()) return invalid_argument("Clip: input ", i, " (", which, ") must be a tensor");
  if (b.dtype() != dt) {
    return invalid_argument("Clip: input ", i, " (", which, ") has type ", dtype_name(b.dtype()),
                            " but input 0 has type ", dtype_name(dt));
  }
  if (b.numel() != 1) {
    return invalid_argument("Clip: input ", i, " (", which, ") must be a scalar, got shape ",
                            shape_to_string(b.shape()));
  }
  return to_compute(b.data<T>()[0]);
}

// An attribute bound (Clip before opset 11) in the compute type. Converting a float outside
// an integer type's range is undefined (the defaults are +-FLT_MAX), so it saturates.
template <typename C>
C clip_bound_from_attr(float v, C def) {
  if constexpr (std::is_integral_v<C>) {
    if (std::isnan(v)) return def;
    if (v <= static_cast<float>(std::numeric_limits<C>::lowest())) return std::numeric_limits<C>::lowest();
    if (v >= static_cast<float>(std::numeric_limits<C>::max())) return std::numeric_limits<C>::max();
  }
  return static_cast<C>(v);
}

template <typename T>
Status clip_typed(KernelContext& ctx, const ClipAttrs& a) {
  using C = compute_t<T>;
  const Tensor& x = ctx.input(0);
  const DataType dt = x.dtype();
  C lo = clip_bound_from_attr<C>(a.min, std::numeric_limits<C>::lowest());
  C hi = clip_bound_from_attr<C>(a.max, std::numeric_limits<C>::max());
  if (a.from_inputs) {
    XONNX_ASSIGN_OR_RETURN(lo, clip_bound<T>(ctx, 1, "min", dt, std::numeric_limits<C>::lowest()));
    XONNX_ASSIGN_OR_RETURN(hi, clip_bound<T>(ctx, 2, "max", dt, std::numeric_limits<C>::max()));
  }
  XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dt, x.shape()));
  const int64_t n = x.numel();
  const T* in = x.data<T>();
  T* out = y->data<T>();
  for (int64_t i = 0; i < n; ++i) {
    C v = to_compute(in[i]);
    if (v < lo) v = lo;
    if (v > hi) v = hi;
    out[i] = from_compute<T>(v);
  }
  return Status::ok();
}

KernelResult create_Clip(const KernelInit& init) {
  ClipAttrs a;
  if (init.since_version() < 11) {
    a.from_inputs = false;
    XONNX_ASSIGN_OR_RETURN(a.min, init.get_float("min", -std::numeric_limits<float>::max()));
    XONNX_ASSIGN_OR_RETURN(a.max, init.get_float("max", std::numeric_limits<float>::max()));
  }
  return make_kernel([a](KernelContext& ctx) -> Status {
    XONNX_RETURN_IF_ERROR(check_unary_input(ctx, "Clip"));
    const Tensor& x = ctx.input(0);
    const DataType dt = x.dtype();
    if (!is_numeric_type(dt) || (!a.from_inputs && !is_float_type(dt))) {
      return input_type_error("Clip", dt, a.from_inputs ? "a numeric type" : "a float type");
    }
    XONNX_DISPATCH_NUMERIC(dt, return input_type_error("Clip", dt, "a numeric type"), return clip_typed<T>(ctx, a));
    return Status::ok();
  });
}

}  // namespace

void register_activation_ops(OpRegistry& registry) {
  // Ranges follow the schema since_versions in onnx_op_versions.inc; earlier versions differ
  // only in type lists or the legacy `consumed_inputs` attribute (ignored).
  XONNX_REGISTER(registry, "", "Relu", 1, kLatestVersion, create_Relu);
  XONNX_REGISTER(registry, "", "LeakyRelu", 1, kLatestVersion, create_LeakyRelu);
  XONNX_REGISTER(registry, "", "Elu", 1, kLatestVersion, create_Elu);
  XONNX_REGISTER(registry, "", "Selu", 1, kLatestVersion, create_Selu);
  XONNX_REGISTER(registry, "", "Celu", 12, kLatestVersion, create_Celu);
  XONNX_REGISTER(registry, "", "Sigmoid", 1, kLatestVersion, create_Sigmoid);
  XONNX_REGISTER(registry, "", "HardSigmoid", 1, kLatestVersion, create_HardSigmoid);
  XONNX_REGISTER(registry, "", "HardSwish", 14, kLatestVersion, create_HardSwish);
  XONNX_REGISTER(registry, "", "Softplus", 1, kLatestVersion, create_Softplus);
  XONNX_REGISTER(registry, "", "Softsign", 1, kLatestVersion, create_Softsign);
  XONNX_REGISTER(registry, "", "Tanh", 1, kLatestVersion, create_Tanh);
  XONNX_REGISTER(registry, "", "ThresholdedRelu", 10, kLatestVersion, create_ThresholdedRelu);
  XONNX_REGISTER(registry, "", "Mish", 18, kLatestVersion, create_Mish);
  XONNX_REGISTER(registry, "", "Gelu", 20, kLatestVersion, create_Gelu);
  XONNX_REGISTER(registry, "", "Swish", 24, kLatestVersion, create_Swish);
  XONNX_REGISTER(registry, "", "Shrink", 9, kLatestVersion, create_Shrink);
  XONNX_REGISTER(registry, "", "Clip", 1, kLatestVersion, create_Clip);
}

}  // namespace xonnx
