// Reference kernels: binary family. Add Sub Mul Div Pow Mod BitShift, And Or Xor,
// Equal Greater Less GreaterOrEqual LessOrEqual, BitwiseAnd BitwiseOr BitwiseXor.
//
// Broadcasting is the hot path of every model in reference mode: the element loops run over
// the collapsed contiguous runs of broadcast.h.
//
// Opset < 7 forms (Add/Sub/Mul/Div/Pow/And/Or/Xor/Equal/Greater/Less) use the legacy
// `broadcast`/`axis` attributes: B is aligned with A at `axis` (or at the trailing dims)
// and broadcast to A's shape; without broadcast=1 the shapes must be equal.
#include <array>
#include <cmath>
#include <limits>
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

// ---------------------------------------------------------------------------------------
// Shapes: numpy broadcasting (opset >= 7) or the legacy broadcast/axis attributes.
// ---------------------------------------------------------------------------------------
struct Bcast {
  bool legacy = false;     // opset < 7 semantics
  bool broadcast = false;  // legacy `broadcast` attribute
  bool has_axis = false;
  int64_t axis = 0;
};

Result<Bcast> parse_bcast(const KernelInit& init) {
  Bcast b;
  if (init.since_version() >= 7) return b;
  b.legacy = true;
  XONNX_ASSIGN_OR_RETURN(int64_t bc, init.get_int("broadcast", 0));
  b.broadcast = bc != 0;
  b.has_axis = init.has_attr("axis");
  XONNX_ASSIGN_OR_RETURN(b.axis, init.get_int("axis", 0));
  return b;
}

// Computes the output shape and the shape B is to be read with (legacy: B padded to A's rank).
Status resolve_shapes(const Bcast& bc, const Shape& a, const Shape& b, Shape* b_shape, Shape* out) {
  if (!bc.legacy) {
    *b_shape = b;
    XONNX_ASSIGN_OR_RETURN(*out, ref::broadcast_shapes(a, b));
    return Status::ok();
  }
  if (!bc.broadcast) {
    if (a != b) {
      return invalid_argument("inputs have shapes ", shape_to_string(a), " and ", shape_to_string(b),
                              "; before opset 7 they must be equal unless broadcast=1");
    }
    *b_shape = b;
    *out = a;
    return Status::ok();
  }
  const int64_t ra = static_cast<int64_t>(a.size());
  const int64_t rb = static_cast<int64_t>(b.size());
  if (rb > ra) {
    return invalid_argument("legacy broadcast: B ", shape_to_string(b), " has higher rank than A ", shape_to_string(a));
  }
  int64_t start = ra - rb;
  if (bc.has_axis) {
    start = bc.axis < 0 ? bc.axis + ra : bc.axis;
    if (start < 0 || start + rb > ra) {
      return invalid_argument("legacy broadcast: axis ", bc.axis, " does not fit B ", shape_to_string(b), " into A ",
                              shape_to_string(a));
    }
  }
  Shape nb(a.size(), 1);
  for (int64_t i = 0; i < rb; ++i) {
    const int64_t d = b[i];
    if (d != a[start + i] && d != 1) {
      return invalid_argument("legacy broadcast: B ", shape_to_string(b), " at axis ", start, " does not match A ",
                              shape_to_string(a));
    }
    nb[start + i] = d;
  }
  *b_shape = std::move(nb);
  *out = a;
  return Status::ok();
}

// Common run-time preamble: checks, output shape, plan.
struct Prepared {
  Shape out_shape;
  BroadcastPlan<2> plan;
};

Result<Prepared> prepare(KernelContext& ctx, const Bcast& bc, bool same_type) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (!a.defined() || !b.defined()) return invalid_argument("both inputs must be tensors");
  if (same_type && a.dtype() != b.dtype()) {
    return invalid_argument("input types differ: A is ", dtype_name(a.dtype()), ", B is ", dtype_name(b.dtype()));
  }
  Prepared p;
  Shape b_shape;
  XONNX_RETURN_IF_ERROR(resolve_shapes(bc, a.shape(), b.shape(), &b_shape, &p.out_shape));
  p.plan = make_broadcast_plan<2>(p.out_shape, {&a.shape(), &b_shape});
  return p;
}

Status type_error(const char* op, DataType t) { return unsupported(op, " does not support type ", dtype_name(t)); }

// ---------------------------------------------------------------------------------------
// Element operations, on compute types (float for fp16/bf16).
// ---------------------------------------------------------------------------------------
template <typename C>
using wide_unsigned_t = std::conditional_t<(sizeof(C) < 4), uint32_t, std::make_unsigned_t<C>>;

struct AddOp {
  static constexpr const char* name = "Add";
  template <typename C>
  static C f(C x, C y) {
    if constexpr (std::is_integral_v<C>) {
      using W = wide_unsigned_t<C>;
      return static_cast<C>(static_cast<W>(x) + static_cast<W>(y));
    } else {
      return x + y;
    }
  }
};
struct SubOp {
  static constexpr const char* name = "Sub";
  template <typename C>
  static C f(C x, C y) {
    if constexpr (std::is_integral_v<C>) {
      using W = wide_unsigned_t<C>;
      return static_cast<C>(static_cast<W>(x) - static_cast<W>(y));
    } else {
      return x - y;
    }
  }
};
struct MulOp {
  static constexpr const char* name = "Mul";
  template <typename C>
  static C f(C x, C y) {
    if constexpr (std::is_integral_v<C>) {
      using W = wide_unsigned_t<C>;
      return static_cast<C>(static_cast<W>(x) * static_cast<W>(y));
    } else {
      return x * y;
    }
  }
};
struct DivOp {
  static constexpr const char* name = "Div";
  template <typename C>
  static C f(C x, C y) {
    if constexpr (std::is_integral_v<C>) {
      // Truncates toward zero; x/0 gives 0 (numpy) instead of trapping.
      if (y == 0) return 0;
      if constexpr (std::is_signed_v<C>) {
        if (y == -1) {
          using W = wide_unsigned_t<C>;
          return static_cast<C>(W(0) - static_cast<W>(x));
        }
      }
      return static_cast<C>(x / y);
    } else {
      return x / y;
    }
  }
};

template <typename Op>
Result<std::unique_ptr<Kernel>> create_arith(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(Bcast bc, parse_bcast(init));
  return make_kernel([bc](KernelContext& ctx) -> Status {
    XONNX_ASSIGN_OR_RETURN(Prepared p, prepare(ctx, bc, true));
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, a.dtype(), p.out_shape));
    XONNX_DISPATCH_NUMERIC(a.dtype(), return type_error(Op::name, a.dtype()), {
      apply_binary(a.data<T>(), b.data<T>(), y->data<T>(), p.plan, [](T u, T v) {
        return from_compute<T>(Op::template f<compute_t<T>>(to_compute(u), to_compute(v)));
      });
    });
    return Status::ok();
  });
}

// ---------------------------------------------------------------------------------------
// Pow: output has the base's type; the exponent may have another numeric type (opset 12+).
// ---------------------------------------------------------------------------------------
template <typename C>
C int_pow(C base, int64_t e) {
  if (e < 0) {
    if (base == 1) return 1;
    if constexpr (std::is_signed_v<C>) {
      if (base == -1) return (e & 1) ? C(-1) : C(1);
    }
    return 0;
  }
  using W = wide_unsigned_t<C>;
  W result = 1;
  W b = static_cast<W>(base);
  while (e > 0) {
    if (e & 1) result = static_cast<W>(result * b);
    b = static_cast<W>(b * b);
    e >>= 1;
  }
  return static_cast<C>(result);
}

// Float to integer without undefined behaviour: NaN -> 0, out of range saturates.
template <typename I>
I saturate_cast(double v) {
  if (std::isnan(v)) return 0;
  if (v <= static_cast<double>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  if (v >= static_cast<double>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return static_cast<I>(v);
}

// Base storage type T, exponent element type E (T itself, int64_t or double).
template <typename T, typename E>
T pow_elem(T x, E e) {
  using C = compute_t<T>;
  if constexpr (std::is_integral_v<C>) {
    if constexpr (std::is_integral_v<E>) {
      return int_pow<C>(x, static_cast<int64_t>(e));
    } else {
      return saturate_cast<C>(std::pow(static_cast<double>(x), static_cast<double>(to_compute(e))));
    }
  } else {
    const double v = std::pow(static_cast<double>(to_compute(x)), static_cast<double>(to_compute(e)));
    return from_compute<T>(static_cast<C>(v));
  }
}

Result<std::unique_ptr<Kernel>> create_pow(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(Bcast bc, parse_bcast(init));
  const bool mixed = init.since_version() >= 12;
  return make_kernel([bc, mixed](KernelContext& ctx) -> Status {
    XONNX_ASSIGN_OR_RETURN(Prepared p, prepare(ctx, bc, !mixed));
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, a.dtype(), p.out_shape));
    if (a.dtype() == b.dtype()) {
      // x ** 2 is common (variance, norms): an exact multiply.
      if (dtype_is_float(a.dtype()) && b.numel() == 1 && b.get_as_double(0) == 2.0) {
        XONNX_DISPATCH_FLOAT(a.dtype(), return type_error("Pow", a.dtype()), {
          apply_binary(a.data<T>(), b.data<T>(), y->data<T>(), p.plan, [](T u, T) {
            const auto c = to_compute(u);
            return from_compute<T>(c * c);
          });
        });
        return Status::ok();
      }
      XONNX_DISPATCH_NUMERIC(a.dtype(), return type_error("Pow", a.dtype()), {
        apply_binary(a.data<T>(), b.data<T>(), y->data<T>(), p.plan, [](T u, T v) { return pow_elem<T, T>(u, v); });
      });
      return Status::ok();
    }
    // Mixed types: widen the exponent to int64 (integers) or double (floats).
    const int64_t nb = b.numel();
    if (dtype_is_integer(b.dtype())) {
      std::vector<int64_t> e(static_cast<size_t>(nb));
      for (int64_t i = 0; i < nb; ++i) e[i] = b.get_as_int64(i);
      XONNX_DISPATCH_NUMERIC(a.dtype(), return type_error("Pow", a.dtype()), {
        apply_binary(a.data<T>(), e.data(), y->data<T>(), p.plan,
                     [](T u, int64_t v) { return pow_elem<T, int64_t>(u, v); });
      });
    } else if (dtype_is_float(b.dtype())) {
      std::vector<double> e(static_cast<size_t>(nb));
      for (int64_t i = 0; i < nb; ++i) e[i] = b.get_as_double(i);
      XONNX_DISPATCH_NUMERIC(a.dtype(), return type_error("Pow", a.dtype()), {
        apply_binary(a.data<T>(), e.data(), y->data<T>(), p.plan,
                     [](T u, double v) { return pow_elem<T, double>(u, v); });
      });
    } else {
      return unsupported("Pow exponent type ", dtype_name(b.dtype()), " is not supported");
    }
    return Status::ok();
  });
}

// ---------------------------------------------------------------------------------------
// Mod: fmod=0 -> sign of the divisor (numpy mod); fmod=1 -> sign of the dividend (C fmod).
// Integer division by zero gives 0 rather than trapping.
// ---------------------------------------------------------------------------------------
template <typename C>
C mod_floor(C x, C y) {
  if constexpr (std::is_integral_v<C>) {
    if (y == 0) return 0;
    if constexpr (std::is_signed_v<C>) {
      if (y == -1) return 0;
      C r = static_cast<C>(x % y);
      if (r != 0 && ((r < 0) != (y < 0))) r = static_cast<C>(r + y);
      return r;
    } else {
      return static_cast<C>(x % y);
    }
  } else {
    C r = std::fmod(x, y);
    if (r != 0 && ((r < 0) != (y < 0))) r += y;
    return r;
  }
}
template <typename C>
C mod_trunc(C x, C y) {
  if constexpr (std::is_integral_v<C>) {
    if (y == 0) return 0;
    if constexpr (std::is_signed_v<C>) {
      if (y == -1) return 0;
    }
    return static_cast<C>(x % y);
  } else {
    return std::fmod(x, y);
  }
}

Result<std::unique_ptr<Kernel>> create_mod(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(int64_t fmod_attr, init.get_int("fmod", 0));
  if (fmod_attr != 0 && fmod_attr != 1) {
    return invalid_model("Mod: fmod must be 0 or 1, got ", fmod_attr);
  }
  const bool use_fmod = fmod_attr == 1;
  return make_kernel([use_fmod](KernelContext& ctx) -> Status {
    XONNX_ASSIGN_OR_RETURN(Prepared p, prepare(ctx, Bcast{}, true));
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    // The spec requires fmod=1 for floats; fmod=0 on floats follows the ONNX reference
    // implementation (numpy mod, sign of the divisor).
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, a.dtype(), p.out_shape));
    XONNX_DISPATCH_NUMERIC(a.dtype(), return type_error("Mod", a.dtype()), {
      using C = compute_t<T>;
      if (use_fmod) {
        apply_binary(a.data<T>(), b.data<T>(), y->data<T>(), p.plan,
                     [](T u, T v) { return from_compute<T>(mod_trunc<C>(to_compute(u), to_compute(v))); });
      } else {
        apply_binary(a.data<T>(), b.data<T>(), y->data<T>(), p.plan,
                     [](T u, T v) { return from_compute<T>(mod_floor<C>(to_compute(u), to_compute(v))); });
      }
    });
    return Status::ok();
  });
}

// ---------------------------------------------------------------------------------------
// BitShift (unsigned ints); shifting by >= the bit width gives 0.
// ---------------------------------------------------------------------------------------
#define XONNX_DISPATCH_UNSIGNED(DTYPE, ON_ERROR, ...) \
  switch (DTYPE) {                                    \
    XONNX_TYPE_CASE(kUint8, uint8_t, __VA_ARGS__)     \
    XONNX_TYPE_CASE(kUint16, uint16_t, __VA_ARGS__)   \
    XONNX_TYPE_CASE(kUint32, uint32_t, __VA_ARGS__)   \
    XONNX_TYPE_CASE(kUint64, uint64_t, __VA_ARGS__)   \
    default: ON_ERROR;                                \
  }

Result<std::unique_ptr<Kernel>> create_bitshift(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(std::string dir, init.require_string("direction"));
  bool left;
  if (dir == "LEFT") {
    left = true;
  } else if (dir == "RIGHT") {
    left = false;
  } else {
    return invalid_model("BitShift: direction must be \"LEFT\" or \"RIGHT\", got \"", dir, "\"");
  }
  return make_kernel([left](KernelContext& ctx) -> Status {
    XONNX_ASSIGN_OR_RETURN(Prepared p, prepare(ctx, Bcast{}, true));
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, a.dtype(), p.out_shape));
    XONNX_DISPATCH_UNSIGNED(a.dtype(), return type_error("BitShift", a.dtype()), {
      constexpr T bits = static_cast<T>(sizeof(T) * 8);
      if (left) {
        apply_binary(a.data<T>(), b.data<T>(), y->data<T>(), p.plan,
                     [](T u, T v) { return v >= bits ? T(0) : static_cast<T>(static_cast<uint64_t>(u) << v); });
      } else {
        apply_binary(a.data<T>(), b.data<T>(), y->data<T>(), p.plan,
                     [](T u, T v) { return v >= bits ? T(0) : static_cast<T>(u >> v); });
      }
    });
    return Status::ok();
  });
}

// ---------------------------------------------------------------------------------------
// Logical (bool) and bitwise (ints).
// ---------------------------------------------------------------------------------------
struct AndOp {
  static constexpr const char* name = "And";
  template <typename C>
  static C f(C x, C y) {
    return x & y;
  }
};
struct OrOp {
  static constexpr const char* name = "Or";
  template <typename C>
  static C f(C x, C y) {
    return x | y;
  }
};
struct XorOp {
  static constexpr const char* name = "Xor";
  template <typename C>
  static C f(C x, C y) {
    return x ^ y;
  }
};
struct BitwiseAndOp {
  static constexpr const char* name = "BitwiseAnd";
  template <typename C>
  static C f(C x, C y) {
    return x & y;
  }
};
struct BitwiseOrOp {
  static constexpr const char* name = "BitwiseOr";
  template <typename C>
  static C f(C x, C y) {
    return x | y;
  }
};
struct BitwiseXorOp {
  static constexpr const char* name = "BitwiseXor";
  template <typename C>
  static C f(C x, C y) {
    return x ^ y;
  }
};

template <typename Op>
Result<std::unique_ptr<Kernel>> create_logical(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(Bcast bc, parse_bcast(init));
  return make_kernel([bc](KernelContext& ctx) -> Status {
    XONNX_ASSIGN_OR_RETURN(Prepared p, prepare(ctx, bc, true));
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    if (a.dtype() != DataType::kBool) return type_error(Op::name, a.dtype());
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kBool, p.out_shape));
    // bool storage is one byte holding 0 or 1; operate on bytes.
    apply_binary(static_cast<const uint8_t*>(a.raw_data()), static_cast<const uint8_t*>(b.raw_data()),
                 static_cast<uint8_t*>(y->raw_data()), p.plan,
                 [](uint8_t u, uint8_t v) { return static_cast<uint8_t>(Op::template f<uint8_t>(u != 0, v != 0)); });
    return Status::ok();
  });
}

template <typename Op>
Result<std::unique_ptr<Kernel>> create_bitwise(const KernelInit& init) {
  (void)init;
  return make_kernel([](KernelContext& ctx) -> Status {
    XONNX_ASSIGN_OR_RETURN(Prepared p, prepare(ctx, Bcast{}, true));
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, a.dtype(), p.out_shape));
    XONNX_DISPATCH_INT(a.dtype(), return type_error(Op::name, a.dtype()), {
      apply_binary(a.data<T>(), b.data<T>(), y->data<T>(), p.plan,
                   [](T u, T v) { return static_cast<T>(Op::template f<T>(u, v)); });
    });
    return Status::ok();
  });
}

// ---------------------------------------------------------------------------------------
// Comparisons -> bool.
// ---------------------------------------------------------------------------------------
struct EqualOp {
  static constexpr const char* name = "Equal";
  template <typename C>
  static bool f(const C& x, const C& y) {
    return x == y;
  }
};
struct GreaterOp {
  static constexpr const char* name = "Greater";
  template <typename C>
  static bool f(const C& x, const C& y) {
    return x > y;
  }
};
struct LessOp {
  static constexpr const char* name = "Less";
  template <typename C>
  static bool f(const C& x, const C& y) {
    return x < y;
  }
};
struct GreaterEqualOp {
  static constexpr const char* name = "GreaterOrEqual";
  template <typename C>
  static bool f(const C& x, const C& y) {
    return x >= y;
  }
};
struct LessEqualOp {
  static constexpr const char* name = "LessOrEqual";
  template <typename C>
  static bool f(const C& x, const C& y) {
    return x <= y;
  }
};

template <typename Op>
Result<std::unique_ptr<Kernel>> create_compare(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(Bcast bc, parse_bcast(init));
  return make_kernel([bc](KernelContext& ctx) -> Status {
    constexpr bool is_equal = std::is_same_v<Op, EqualOp>;
    XONNX_ASSIGN_OR_RETURN(Prepared p, prepare(ctx, bc, true));
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kBool, p.out_shape));
    bool* out = y->data<bool>();
    if (a.dtype() == DataType::kString) {
      if (!is_equal) return type_error(Op::name, a.dtype());
      apply_binary(a.string_data(), b.string_data(), out, p.plan,
                   [](const std::string& u, const std::string& v) { return u == v; });
      return Status::ok();
    }
    if (a.dtype() == DataType::kBool) {
      if (!is_equal) return type_error(Op::name, a.dtype());
      apply_binary(static_cast<const uint8_t*>(a.raw_data()), static_cast<const uint8_t*>(b.raw_data()), out, p.plan,
                   [](uint8_t u, uint8_t v) { return (u != 0) == (v != 0); });
      return Status::ok();
    }
    XONNX_DISPATCH_NUMERIC(a.dtype(), return type_error(Op::name, a.dtype()), {
      apply_binary(a.data<T>(), b.data<T>(), out, p.plan,
                   [](T u, T v) { return Op::template f<compute_t<T>>(to_compute(u), to_compute(v)); });
    });
    return Status::ok();
  });
}

}  // namespace

void register_binary_ops(OpRegistry& registry) {
  // Arithmetic: v1/v6 legacy broadcast, v7+ numpy broadcasting, v13 bf16, v14 int8/16 uint8/16.
  XONNX_REGISTER(registry, "", "Add", 1, kLatestVersion, create_arith<AddOp>);
  XONNX_REGISTER(registry, "", "Sub", 1, kLatestVersion, create_arith<SubOp>);
  XONNX_REGISTER(registry, "", "Mul", 1, kLatestVersion, create_arith<MulOp>);
  XONNX_REGISTER(registry, "", "Div", 1, kLatestVersion, create_arith<DivOp>);
  XONNX_REGISTER(registry, "", "Pow", 1, kLatestVersion, create_pow);
  XONNX_REGISTER(registry, "", "Mod", 10, kLatestVersion, create_mod);
  XONNX_REGISTER(registry, "", "BitShift", 11, kLatestVersion, create_bitshift);
  XONNX_REGISTER(registry, "", "And", 1, kLatestVersion, create_logical<AndOp>);
  XONNX_REGISTER(registry, "", "Or", 1, kLatestVersion, create_logical<OrOp>);
  XONNX_REGISTER(registry, "", "Xor", 1, kLatestVersion, create_logical<XorOp>);
  XONNX_REGISTER(registry, "", "Equal", 1, kLatestVersion, create_compare<EqualOp>);
  XONNX_REGISTER(registry, "", "Greater", 1, kLatestVersion, create_compare<GreaterOp>);
  XONNX_REGISTER(registry, "", "Less", 1, kLatestVersion, create_compare<LessOp>);
  XONNX_REGISTER(registry, "", "GreaterOrEqual", 12, kLatestVersion, create_compare<GreaterEqualOp>);
  XONNX_REGISTER(registry, "", "LessOrEqual", 12, kLatestVersion, create_compare<LessEqualOp>);
  XONNX_REGISTER(registry, "", "BitwiseAnd", 18, kLatestVersion, create_bitwise<BitwiseAndOp>);
  XONNX_REGISTER(registry, "", "BitwiseOr", 18, kLatestVersion, create_bitwise<BitwiseOrOp>);
  XONNX_REGISTER(registry, "", "BitwiseXor", 18, kLatestVersion, create_bitwise<BitwiseXorOp>);
}

}  // namespace xonnx
