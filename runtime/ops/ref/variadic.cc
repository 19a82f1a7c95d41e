// Reference kernels: variadic family. Sum Mean Max Min (N inputs, numpy broadcasting from
// opset 8, equal shapes before), Where (3-way broadcasting), PRelu (slope broadcast to X;
// before opset 7 a 1-D slope of size C applies per channel, axis 1).
#include <array>
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "runtime/ops/ref/broadcast.h"
#include "runtime/ops/ref/common.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace {

using ref::apply_binary;
using ref::BroadcastPlan;
using ref::for_each_run;
using ref::make_broadcast_plan;

template <typename C>
using wide_unsigned_t = std::conditional_t<(sizeof(C) < 4), uint32_t, std::make_unsigned_t<C>>;

template <typename C>
C wrap_add(C x, C y) {
  if constexpr (std::is_integral_v<C>) {
    using W = wide_unsigned_t<C>;
    return static_cast<C>(static_cast<W>(x) + static_cast<W>(y));
  } else {
    return x + y;
  }
}
template <typename C>
C wrap_mul(C x, C y) {
  if constexpr (std::is_integral_v<C>) {
    using W = wide_unsigned_t<C>;
    return static_cast<C>(static_cast<W>(x) * static_cast<W>(y));
  } else {
    return x * y;
  }
}

// ---------------------------------------------------------------------------------------
// Sum / Mean / Max / Min
// ---------------------------------------------------------------------------------------
enum class Reduce { kSum, kMean, kMax, kMin };

template <Reduce R, typename C>
C combine(C acc, C v) {
  if constexpr (R == Reduce::kSum || R == Reduce::kMean) {
    return wrap_add(acc, v);
  } else {
    if constexpr (std::is_floating_point_v<C>) {
      // NaN propagates (numpy maximum/minimum).
      if (std::isnan(acc)) return acc;
      if (std::isnan(v)) return v;
    }
    if constexpr (R == Reduce::kMax) {
      return v > acc ? v : acc;
    } else {
      return v < acc ? v : acc;
    }
  }
}

constexpr const char* reduce_name(Reduce r) {
  return r == Reduce::kSum ? "Sum" : r == Reduce::kMean ? "Mean" : r == Reduce::kMax ? "Max" : "Min";
}

template <Reduce R>
Result<std::unique_ptr<Kernel>> create_variadic(const KernelInit& init) {
  const bool broadcast = init.since_version() >= 8;
  return make_kernel([broadcast](KernelContext& ctx) -> Status {
    const size_t n = ctx.num_inputs();
    if (n == 0) return invalid_argument(reduce_name(R), " needs at least one input");
    std::vector<Shape> shapes;
    const DataType dt = ctx.input(0).dtype();
    for (size_t i = 0; i < n; ++i) {
      const Tensor& t = ctx.input(i);
      if (!t.defined()) return invalid_argument("input ", i, " is missing or not a tensor");
      if (t.dtype() != dt) {
        return invalid_argument("input ", i, " has type ", dtype_name(t.dtype()), ", input 0 has ", dtype_name(dt));
      }
      if (!broadcast && t.shape() != ctx.input(0).shape()) {
        return invalid_argument("input ", i, " has shape ", shape_to_string(t.shape()), ", input 0 has ",
                                shape_to_string(ctx.input(0).shape()), "; before opset 8 all shapes must be equal");
      }
      shapes.push_back(t.shape());
    }
    XONNX_ASSIGN_OR_RETURN(Shape out_shape, ref::broadcast_shapes(shapes));
    if (R == Reduce::kMean && !dtype_is_float(dt)) {
      return unsupported("Mean does not support type ", dtype_name(dt));
    }
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dt, out_shape));
    const int64_t total = y->numel();
    XONNX_DISPATCH_NUMERIC(dt, return unsupported(reduce_name(R), " does not support type ", dtype_name(dt)), {
      using C = compute_t<T>;
      std::vector<C> tmp;
      C* acc;
      if constexpr (std::is_same_v<C, T>) {
        acc = reinterpret_cast<C*>(y->data<T>());  // C is T here; clang checks this branch for every T
      } else {
        tmp.assign(static_cast<size_t>(total), C(0));
        acc = tmp.data();
      }
      for (size_t i = 0; i < n; ++i) {
        const Tensor& t = ctx.input(i);
        const BroadcastPlan<2> plan = make_broadcast_plan<2>(out_shape, {&out_shape, &t.shape()});
        if (i == 0) {
          apply_binary(acc, t.data<T>(), acc, plan, [](C, T v) { return to_compute(v); });
        } else {
          apply_binary(acc, t.data<T>(), acc, plan, [](C a, T v) { return combine<R, C>(a, to_compute(v)); });
        }
      }
      if constexpr (R == Reduce::kMean) {
        const C div = static_cast<C>(n);
        for (int64_t i = 0; i < total; ++i) acc[i] = acc[i] / div;
      }
      if constexpr (!std::is_same_v<C, T>) {
        T* out = y->data<T>();
        for (int64_t i = 0; i < total; ++i) out[i] = from_compute<T>(acc[i]);
      }
    });
    return Status::ok();
  });
}

// ---------------------------------------------------------------------------------------
// Where
// ---------------------------------------------------------------------------------------
template <typename T>
void where_apply(const uint8_t* c, const T* x, const T* yv, T* o, const BroadcastPlan<3>& p) {
  for_each_run(p, [&](int64_t oo, const std::array<int64_t, 3>& off, int64_t n, const std::array<int64_t, 3>& st) {
    const uint8_t* pc = c + off[0];
    const T* px = x + off[1];
    const T* py = yv + off[2];
    T* po = o + oo;
    if (st[0] && st[1] && st[2]) {
      for (int64_t i = 0; i < n; ++i) po[i] = pc[i] ? px[i] : py[i];
    } else if (st[0] == 0) {
      const T* src = *pc ? px : py;
      const int64_t s = *pc ? st[1] : st[2];
      if (s) {
        for (int64_t i = 0; i < n; ++i) po[i] = src[i];
      } else {
        for (int64_t i = 0; i < n; ++i) po[i] = *src;
      }
    } else {
      const int64_t sx = st[1], sy = st[2];
      for (int64_t i = 0; i < n; ++i) po[i] = pc[i] ? px[i * sx] : py[i * sy];
    }
  });
}

Result<std::unique_ptr<Kernel>> create_where(const KernelInit& init) {
  (void)init;
  return make_kernel([](KernelContext& ctx) -> Status {
    const Tensor& c = ctx.input(0);
    const Tensor& x = ctx.input(1);
    const Tensor& y = ctx.input(2);
    if (!c.defined() || !x.defined() || !y.defined()) {
      return invalid_argument("Where needs condition, X and Y tensors");
    }
    if (c.dtype() != DataType::kBool) {
      return invalid_argument("condition must be bool, got ", dtype_name(c.dtype()));
    }
    if (x.dtype() != y.dtype()) {
      return invalid_argument("X is ", dtype_name(x.dtype()), " but Y is ", dtype_name(y.dtype()));
    }
    XONNX_ASSIGN_OR_RETURN(Shape out_shape, ref::broadcast_shapes({c.shape(), x.shape(), y.shape()}));
    XONNX_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, x.dtype(), out_shape));
    const BroadcastPlan<3> plan = make_broadcast_plan<3>(out_shape, {&c.shape(), &x.shape(), &y.shape()});
    const uint8_t* cond = static_cast<const uint8_t*>(c.raw_data());
    if (x.dtype() == DataType::kString) {
      where_apply(cond, x.string_data(), y.string_data(), out->string_data(), plan);
      return Status::ok();
    }
    if (dtype_is_subbyte(x.dtype()) || dtype_bits(x.dtype()) == 0) {
      return unsupported("Where does not support type ", dtype_name(x.dtype()));
    }
    // Selection only moves elements: dispatch on element size.
    switch (dtype_bits(x.dtype())) {
      case 8:
        where_apply(cond, static_cast<const uint8_t*>(x.raw_data()), static_cast<const uint8_t*>(y.raw_data()),
                    static_cast<uint8_t*>(out->raw_data()), plan);
        break;
      case 16:
        where_apply(cond, static_cast<const uint16_t*>(x.raw_data()), static_cast<const uint16_t*>(y.raw_data()),
                    static_cast<uint16_t*>(out->raw_data()), plan);
        break;
      case 32:
        where_apply(cond, static_cast<const uint32_t*>(x.raw_data()), static_cast<const uint32_t*>(y.raw_data()),
                    static_cast<uint32_t*>(out->raw_data()), plan);
        break;
      case 64:
        where_apply(cond, static_cast<const uint64_t*>(x.raw_data()), static_cast<const uint64_t*>(y.raw_data()),
                    static_cast<uint64_t*>(out->raw_data()), plan);
        break;
      default: return unsupported("Where does not support type ", dtype_name(x.dtype()));
    }
    return Status::ok();
  });
}

// ---------------------------------------------------------------------------------------
// PRelu
// ---------------------------------------------------------------------------------------
// The shape to read `slope` with so that it broadcasts to X.
Result<Shape> prelu_slope_shape(const Shape& x, const Shape& s, bool legacy) {
  const int64_t sn = shape_numel(s);
  if (legacy) {
    if (sn == 1) return Shape{};
    if (s == x) return s;
    // Before opset 7 a slope of C values is shared per channel (axis 1).
    if (s.size() == 1 && x.size() >= 2 && s[0] == x[1]) {
      Shape r(x.size() - 1, 1);
      r[0] = s[0];
      return r;
    }
  }
  auto b = ref::broadcast_shapes(x, s);
  if (!b.is_ok() || b.value() != x) {
    return invalid_argument("slope shape ", shape_to_string(s), " cannot be broadcast to X shape ", shape_to_string(x));
  }
  return s;
}

template <typename T>
T prelu_elem(T u, T v) {
  using C = compute_t<T>;
  if constexpr (std::is_unsigned_v<C>) {
    (void)v;
    return u;  // never negative
  } else {
    const C a = to_compute(u);
    return a < C(0) ? from_compute<T>(wrap_mul<C>(a, to_compute(v))) : u;
  }
}

Result<std::unique_ptr<Kernel>> create_prelu(const KernelInit& init) {
  const bool legacy = init.since_version() < 7;
  return make_kernel([legacy](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    const Tensor& s = ctx.input(1);
    if (!x.defined() || !s.defined()) return invalid_argument("PRelu needs X and slope tensors");
    if (x.dtype() != s.dtype()) {
      return invalid_argument("X is ", dtype_name(x.dtype()), " but slope is ", dtype_name(s.dtype()));
    }
    XONNX_ASSIGN_OR_RETURN(Shape s_shape, prelu_slope_shape(x.shape(), s.shape(), legacy));
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), x.shape()));
    const BroadcastPlan<2> plan = make_broadcast_plan<2>(x.shape(), {&x.shape(), &s_shape});
    XONNX_DISPATCH_NUMERIC(x.dtype(), return unsupported("PRelu does not support type ", dtype_name(x.dtype())), {
      apply_binary(x.data<T>(), s.data<T>(), y->data<T>(), plan, [](T u, T v) { return prelu_elem<T>(u, v); });
    });
    return Status::ok();
  });
}

}  // namespace

void register_variadic_ops(OpRegistry& registry) {
  // Sum/Mean/Max/Min: v1/v6 equal shapes, v8 broadcasting, v12 Max/Min ints, v13 bf16.
  XONNX_REGISTER(registry, "", "Sum", 1, kLatestVersion, create_variadic<Reduce::kSum>);
  XONNX_REGISTER(registry, "", "Mean", 1, kLatestVersion, create_variadic<Reduce::kMean>);
  XONNX_REGISTER(registry, "", "Max", 1, kLatestVersion, create_variadic<Reduce::kMax>);
  XONNX_REGISTER(registry, "", "Min", 1, kLatestVersion, create_variadic<Reduce::kMin>);
  XONNX_REGISTER(registry, "", "Where", 9, kLatestVersion, create_where);
  XONNX_REGISTER(registry, "", "PRelu", 1, kLatestVersion, create_prelu);
}

}  // namespace xonnx
