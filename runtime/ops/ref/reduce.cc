// Reference kernels: reduce family. Reduce* (axes attribute before opset 13/18, axes input
// after; keepdims; noop_with_empty_axes; empty-set identities) and ArgMax/ArgMin.
#include <cmath>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "runtime/ops/ref/common.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace {

enum class ReduceKind { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

// Converts a double result to T; integer targets saturate (NaN -> 0) instead of invoking UB.
template <typename T>
T cast_from_double(double v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0.0;
  } else if constexpr (std::is_integral_v<T>) {
    if (std::isnan(v)) return T(0);
    if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) {
      return std::numeric_limits<T>::lowest();
    }
    if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  } else {
    return from_compute<T>(static_cast<compute_t<T>>(v));
  }
}

// Walk plan for a reduction: the input is split into contiguous runs of `inner` elements;
// each run accumulates into out[out_base + j * inner_out_step].
struct ReducePlan {
  std::vector<int64_t> outer_dims;        // collapsed dims except the innermost
  std::vector<int64_t> outer_out_stride;  // output stride per outer dim (0 if reduced)
  int64_t inner = 1;
  int64_t inner_out_step = 0;  // 1 if the innermost dim is kept, 0 if reduced
};

// Everything a run computes besides the output, kept by the kernel so that runs at a shape
// seen before allocate nothing. A kernel runs on one thread at a time.
struct ReduceScratch {
  std::vector<int64_t> axes;
  std::vector<bool> reduced;
  std::vector<int64_t> dims, out_stride, idx;
  std::vector<bool> red;
  ReducePlan plan;
  std::vector<double> acc_f, mx, sum;
  std::vector<int64_t> acc_i;
  std::vector<uint64_t> acc_u;
};

void make_plan(const Shape& shape, const std::vector<bool>& reduced, ReduceScratch& sc) {
  // Drop size-1 dims, merge neighbours that are both kept or both reduced.
  std::vector<int64_t>& dims = sc.dims;
  std::vector<bool>& red = sc.red;
  dims.clear();
  red.clear();
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1) continue;
    if (!dims.empty() && red.back() == reduced[i]) {
      dims.back() *= shape[i];
    } else {
      dims.push_back(shape[i]);
      red.push_back(reduced[i]);
    }
  }
  ReducePlan& p = sc.plan;
  p.outer_dims.clear();
  p.outer_out_stride.clear();
  p.inner = 1;
  p.inner_out_step = 0;
  if (dims.empty()) return;
  sc.out_stride.assign(dims.size(), 0);
  int64_t s = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    if (!red[i]) {
      sc.out_stride[i] = s;
      s *= dims[i];
    }
  }
  p.inner = dims.back();
  p.inner_out_step = sc.out_stride.back();
  p.outer_dims.assign(dims.begin(), dims.end() - 1);
  p.outer_out_stride.assign(sc.out_stride.begin(), sc.out_stride.end() - 1);
}

// Calls fn(in_offset, out_offset, len, out_step) for every contiguous input run.
template <typename Fn>
void walk_plan(const ReducePlan& p, std::vector<int64_t>& idx, Fn&& fn) {
  const size_t r = p.outer_dims.size();
  idx.assign(r, 0);
  int64_t outer = 1;
  for (int64_t d : p.outer_dims) outer *= d;
  int64_t out_off = 0;
  for (int64_t o = 0; o < outer; ++o) {
    fn(o * p.inner, out_off, p.inner, p.inner_out_step);
    for (size_t d = r; d-- > 0;) {
      ++idx[d];
      out_off += p.outer_out_stride[d];
      if (idx[d] < p.outer_dims[d]) break;
      out_off -= p.outer_out_stride[d] * p.outer_dims[d];
      idx[d] = 0;
    }
  }
}

template <typename T>
using acc_t =
    std::conditional_t<!std::is_integral_v<T>, double, std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;

template <typename A>
inline A wrap_add(A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    return static_cast<A>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  } else {
    return a + b;
  }
}
template <typename A>
inline A wrap_mul(A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    return static_cast<A>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  } else {
    return a * b;
  }
}
template <typename A>
inline bool is_nan_val(A v) {
  if constexpr (std::is_floating_point_v<A>) {
    return std::isnan(v);
  } else {
    (void)v;
    return false;
  }
}

template <typename T>
Status reduce_typed(ReduceKind kind, const T* x, T* y, ReduceScratch& sc, int64_t out_n, int64_t count,
                    bool input_empty) {
  using A = acc_t<T>;
  constexpr bool kFloat = !std::is_integral_v<T>;
  auto load = [&](int64_t i) -> A { return static_cast<A>(to_compute(x[i])); };
  const ReducePlan& plan = sc.plan;
  auto walk = [&](auto&& fn) { walk_plan(plan, sc.idx, fn); };
  std::vector<A>* acc_vector;
  if constexpr (std::is_same_v<A, double>) {
    acc_vector = &sc.acc_f;
  } else if constexpr (std::is_same_v<A, int64_t>) {
    acc_vector = &sc.acc_i;
  } else {
    acc_vector = &sc.acc_u;
  }
  std::vector<A>& acc = *acc_vector;
  acc.resize(static_cast<size_t>(out_n));
  A init = A(0);
  if (kind == ReduceKind::kProd) init = A(1);
  if (kind == ReduceKind::kMax) {
    if constexpr (kFloat)
      init = -std::numeric_limits<double>::infinity();
    else
      init = static_cast<A>(std::numeric_limits<T>::lowest());
  }
  if (kind == ReduceKind::kMin) {
    if constexpr (kFloat)
      init = std::numeric_limits<double>::infinity();
    else
      init = static_cast<A>(std::numeric_limits<T>::max());
  }
  std::fill(acc.begin(), acc.end(), init);
  std::vector<double>& mx = sc.mx;  // LogSumExp: per-output maximum

  if (!input_empty) {
    switch (kind) {
      case ReduceKind::kSum:
      case ReduceKind::kMean:
      case ReduceKind::kLogSum:
        walk([&](int64_t in, int64_t out, int64_t len, int64_t step) {
          if (step == 0) {
            A s = acc[out];
            for (int64_t j = 0; j < len; ++j) s = wrap_add(s, load(in + j));
            acc[out] = s;
          } else {
            for (int64_t j = 0; j < len; ++j) acc[out + j] = wrap_add(acc[out + j], load(in + j));
          }
        });
        break;
      case ReduceKind::kL1:
        walk([&](int64_t in, int64_t out, int64_t len, int64_t step) {
          for (int64_t j = 0; j < len; ++j) {
            A v = load(in + j);
            if constexpr (std::is_signed_v<A>) v = v < 0 ? wrap_mul(v, A(-1)) : v;
            acc[out + j * step] = wrap_add(acc[out + j * step], v);
          }
        });
        break;
      case ReduceKind::kL2:
      case ReduceKind::kSumSquare:
        walk([&](int64_t in, int64_t out, int64_t len, int64_t step) {
          for (int64_t j = 0; j < len; ++j) {
            const A v = load(in + j);
            acc[out + j * step] = wrap_add(acc[out + j * step], wrap_mul(v, v));
          }
        });
        break;
      case ReduceKind::kProd:
        walk([&](int64_t in, int64_t out, int64_t len, int64_t step) {
          for (int64_t j = 0; j < len; ++j) {
            acc[out + j * step] = wrap_mul(acc[out + j * step], load(in + j));
          }
        });
        break;
      case ReduceKind::kMax:
        walk([&](int64_t in, int64_t out, int64_t len, int64_t step) {
          for (int64_t j = 0; j < len; ++j) {
            const A v = load(in + j);
            A& a = acc[out + j * step];
            if (v > a || is_nan_val(v)) a = v;
          }
        });
        break;
      case ReduceKind::kMin:
        walk([&](int64_t in, int64_t out, int64_t len, int64_t step) {
          for (int64_t j = 0; j < len; ++j) {
            const A v = load(in + j);
            A& a = acc[out + j * step];
            if (v < a || is_nan_val(v)) a = v;
          }
        });
        break;
      case ReduceKind::kLogSumExp: {
        mx.assign(static_cast<size_t>(out_n), -std::numeric_limits<double>::infinity());
        walk([&](int64_t in, int64_t out, int64_t len, int64_t step) {
          for (int64_t j = 0; j < len; ++j) {
            const double v = static_cast<double>(to_compute(x[in + j]));
            double& m = mx[out + j * step];
            if (v > m || std::isnan(v)) m = v;
          }
        });
        std::vector<double>& s = sc.sum;
        s.assign(static_cast<size_t>(out_n), 0.0);
        walk([&](int64_t in, int64_t out, int64_t len, int64_t step) {
          for (int64_t j = 0; j < len; ++j) {
            const double m = mx[out + j * step];
            if (std::isinf(m)) continue;  // all -inf or some +inf: result is m
            s[out + j * step] += std::exp(static_cast<double>(to_compute(x[in + j])) - m);
          }
        });
        for (int64_t o = 0; o < out_n; ++o) {
          const double m = mx[o];
          y[o] = cast_from_double<T>(std::isinf(m) || std::isnan(m) ? m : m + std::log(s[o]));
        }
        return Status::ok();
      }
    }
  } else if (kind == ReduceKind::kLogSumExp) {
    for (int64_t o = 0; o < out_n; ++o) {
      y[o] = cast_from_double<T>(-std::numeric_limits<double>::infinity());
    }
    return Status::ok();
  }

  for (int64_t o = 0; o < out_n; ++o) {
    const A a = acc[o];
    switch (kind) {
      case ReduceKind::kMean:
        if constexpr (kFloat) {
          y[o] = cast_from_double<T>(a / static_cast<double>(count));
        } else {
          y[o] = count == 0 ? T(0) : static_cast<T>(a / static_cast<A>(count));
        }
        break;
      case ReduceKind::kL2: y[o] = cast_from_double<T>(std::sqrt(static_cast<double>(a))); break;
      case ReduceKind::kLogSum: y[o] = cast_from_double<T>(std::log(static_cast<double>(a))); break;
      default:
        if constexpr (kFloat) {
          y[o] = cast_from_double<T>(a);
        } else {
          y[o] = static_cast<T>(a);
        }
    }
  }
  return Status::ok();
}

const char* reduce_name(ReduceKind k) {
  switch (k) {
    case ReduceKind::kSum: return "ReduceSum";
    case ReduceKind::kMean: return "ReduceMean";
    case ReduceKind::kMax: return "ReduceMax";
    case ReduceKind::kMin: return "ReduceMin";
    case ReduceKind::kProd: return "ReduceProd";
    case ReduceKind::kL1: return "ReduceL1";
    case ReduceKind::kL2: return "ReduceL2";
    case ReduceKind::kLogSum: return "ReduceLogSum";
    case ReduceKind::kLogSumExp: return "ReduceLogSumExp";
    case ReduceKind::kSumSquare: return "ReduceSumSquare";
  }
  return "Reduce";
}

Result<std::unique_ptr<Kernel>> create_reduce(const KernelInit& init, ReduceKind kind) {
  const int axes_input_version = kind == ReduceKind::kSum ? 13 : 18;
  const bool axes_from_input = init.since_version() >= axes_input_version;
  XONNX_ASSIGN_OR_RETURN(int64_t keepdims, init.get_int("keepdims", 1));
  XONNX_ASSIGN_OR_RETURN(int64_t noop, init.get_int("noop_with_empty_axes", 0));
  XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> attr_axes, init.get_ints("axes"));
  if (axes_from_input && init.has_attr("axes")) {
    return invalid_model(reduce_name(kind), " since opset ", axes_input_version,
                         " takes axes as input 1, not as an attribute");
  }
  if (!axes_from_input && init.num_inputs() > 1) {
    return invalid_model(reduce_name(kind), " before opset ", axes_input_version, " takes 1 input, got ",
                         init.num_inputs());
  }
  auto scratch = std::make_shared<ReduceScratch>();
  return make_kernel([=](KernelContext& ctx) -> Status {
    ReduceScratch& sc = *scratch;
    const Tensor& x = ctx.input(0);
    if (!x.defined()) return invalid_argument("input 0 (data) is missing");
    const int64_t rank = static_cast<int64_t>(x.rank());
    std::vector<int64_t>& axes = sc.axes;
    axes.assign(attr_axes.begin(), attr_axes.end());
    if (axes_from_input && ctx.has_input(1)) {
      const Tensor& a = ctx.input(1);
      if (a.dtype() != DataType::kInt64) {
        return invalid_argument("input 1 (axes) must be int64, got ", dtype_name(a.dtype()));
      }
      if (a.rank() > 1) return invalid_argument("input 1 (axes) must be 1-D, got rank ", a.rank());
      const int64_t* data = a.data<int64_t>();
      axes.assign(data, data + a.numel());
    }
    std::vector<bool>& reduced = sc.reduced;
    reduced.assign(static_cast<size_t>(rank), false);
    if (axes.empty()) {
      if (noop == 0) std::fill(reduced.begin(), reduced.end(), true);
    } else {
      for (int64_t a : axes) {
        XONNX_ASSIGN_OR_RETURN(int64_t ax, normalize_axis(a, rank, "axes"));
        if (reduced[static_cast<size_t>(ax)]) {
          return invalid_argument("axes contains axis ", a, " more than once");
        }
        reduced[static_cast<size_t>(ax)] = true;
      }
    }
    Shape out_shape;
    int64_t count = 1;
    for (int64_t i = 0; i < rank; ++i) {
      if (reduced[i]) {
        count *= x.dim(i);
        if (keepdims) out_shape.push_back(1);
      } else {
        out_shape.push_back(x.dim(i));
      }
    }
    const DataType dt = x.dtype();
    if (dt == DataType::kBool && kind != ReduceKind::kMax && kind != ReduceKind::kMin) {
      return unsupported(reduce_name(kind), " does not support bool input");
    }
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dt, out_shape));
    const int64_t out_n = y->numel();
    if (out_n == 0) return Status::ok();
    make_plan(x.shape(), reduced, sc);
    const bool empty = x.numel() == 0;
    XONNX_DISPATCH_ALL_BYTES(dt, return unsupported(reduce_name(kind), " does not support type ", dtype_name(dt)),
                             { return reduce_typed<T>(kind, x.data<T>(), y->data<T>(), sc, out_n, count, empty); });
    return Status::ok();
  });
}

template <ReduceKind K>
Result<std::unique_ptr<Kernel>> create_reduce_k(const KernelInit& init) {
  return create_reduce(init, K);
}

// ---------------------------------------------------------------- ArgMax / ArgMin

template <typename T, bool kMax>
void arg_typed(const T* x, int64_t* y, int64_t outer, int64_t n, int64_t inner, bool last) {
  using C = compute_t<T>;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const T* base = x + o * n * inner + i;
      int64_t best = 0;
      C bv = to_compute(base[0]);
      bool best_nan = is_nan_val(bv);
      for (int64_t k = 1; k < n; ++k) {
        const C v = to_compute(base[k * inner]);
        bool take;
        if (best_nan) {
          // NaN wins (numpy): among NaNs the first, or the last with select_last_index.
          take = last && is_nan_val(v);
        } else if (is_nan_val(v)) {
          take = true;
        } else if (kMax) {
          take = last ? v >= bv : v > bv;
        } else {
          take = last ? v <= bv : v < bv;
        }
        if (take) {
          best = k;
          bv = v;
          best_nan = is_nan_val(v);
        }
      }
      y[o * inner + i] = best;
    }
  }
}

template <bool kMax>
Result<std::unique_ptr<Kernel>> create_arg(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(int64_t axis_attr, init.get_int("axis", 0));
  XONNX_ASSIGN_OR_RETURN(int64_t keepdims, init.get_int("keepdims", 1));
  XONNX_ASSIGN_OR_RETURN(int64_t last, init.get_int("select_last_index", 0));
  return make_kernel([=](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    if (!x.defined()) return invalid_argument("input 0 (data) is missing");
    const int64_t rank = static_cast<int64_t>(x.rank());
    if (rank == 0) return invalid_argument("input 0 (data) must have rank >= 1, got a scalar");
    XONNX_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(axis_attr, rank));
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < axis; ++i) outer *= x.dim(i);
    for (int64_t i = axis + 1; i < rank; ++i) inner *= x.dim(i);
    const int64_t n = x.dim(axis);
    Shape out_shape;
    for (int64_t i = 0; i < rank; ++i) {
      if (i != axis)
        out_shape.push_back(x.dim(i));
      else if (keepdims)
        out_shape.push_back(1);
    }
    if (n == 0 && outer * inner > 0) {
      return invalid_argument(kMax ? "ArgMax" : "ArgMin", " over axis ", axis, " of size 0 (input shape ",
                              shape_to_string(x.shape()), ")");
    }
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kInt64, out_shape));
    if (y->numel() == 0) return Status::ok();
    XONNX_DISPATCH_NUMERIC(x.dtype(), return unsupported("type ", dtype_name(x.dtype()), " is not supported"),
                           { arg_typed<T, kMax>(x.data<T>(), y->data<int64_t>(), outer, n, inner, last != 0); });
    return Status::ok();
  });
}

}  // namespace

void register_reduce_ops(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "ReduceSum", 1, kLatestVersion, create_reduce_k<ReduceKind::kSum>);
  XONNX_REGISTER(registry, "", "ReduceMean", 1, kLatestVersion, create_reduce_k<ReduceKind::kMean>);
  XONNX_REGISTER(registry, "", "ReduceMax", 1, kLatestVersion, create_reduce_k<ReduceKind::kMax>);
  XONNX_REGISTER(registry, "", "ReduceMin", 1, kLatestVersion, create_reduce_k<ReduceKind::kMin>);
  XONNX_REGISTER(registry, "", "ReduceProd", 1, kLatestVersion, create_reduce_k<ReduceKind::kProd>);
  XONNX_REGISTER(registry, "", "ReduceL1", 1, kLatestVersion, create_reduce_k<ReduceKind::kL1>);
  XONNX_REGISTER(registry, "", "ReduceL2", 1, kLatestVersion, create_reduce_k<ReduceKind::kL2>);
  XONNX_REGISTER(registry, "", "ReduceLogSum", 1, kLatestVersion, create_reduce_k<ReduceKind::kLogSum>);
  XONNX_REGISTER(registry, "", "ReduceLogSumExp", 1, kLatestVersion, create_reduce_k<ReduceKind::kLogSumExp>);
  XONNX_REGISTER(registry, "", "ReduceSumSquare", 1, kLatestVersion, create_reduce_k<ReduceKind::kSumSquare>);
  XONNX_REGISTER(registry, "", "ArgMax", 1, kLatestVersion, create_arg<true>);
  XONNX_REGISTER(registry, "", "ArgMin", 1, kLatestVersion, create_arg<false>);
}

}  // namespace xonnx
