// Reference kernels: sort family. TopK, Unique, CumSum, CumProd.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <type_traits>

#include "runtime/ops/ref/common.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace {

template <typename C>
inline bool nan_of(const C& v) {
  if constexpr (std::is_floating_point_v<C>) {
    return std::isnan(v);
  } else {
    (void)v;
    return false;
  }
}

// Three-way compare with NaN greater than everything and equal to NaN (numpy sort order).
template <typename C>
inline int cmp3(const C& a, const C& b) {
  const bool na = nan_of(a), nb = nan_of(b);
  if (na || nb) return na == nb ? 0 : (na ? 1 : -1);
  if (a < b) return -1;
  if (b < a) return 1;
  return 0;
}

// Outer x axis x inner decomposition around `axis`.
struct AxisSplit {
  int64_t outer = 1, n = 1, inner = 1;
};
AxisSplit split_at(const Shape& s, int64_t axis) {
  AxisSplit r;
  for (int64_t i = 0; i < axis; ++i) r.outer *= s[i];
  r.n = s[axis];
  for (size_t i = axis + 1; i < s.size(); ++i) r.inner *= s[i];
  return r;
}

// ---------------------------------------------------------------- TopK

template <typename T>
void topk_typed(const T* x, T* vals, int64_t* idxs, const AxisSplit& sp, int64_t k, bool largest) {
  using C = compute_t<T>;
  std::vector<C> v(static_cast<size_t>(sp.n));
  std::vector<int64_t> order(static_cast<size_t>(sp.n));
  auto before = [&](int64_t a, int64_t b) {
    const int c = cmp3(v[a], v[b]);
    if (c != 0) return largest ? c > 0 : c < 0;
    return a < b;  // ties: lower index first
  };
  for (int64_t o = 0; o < sp.outer; ++o) {
    for (int64_t i = 0; i < sp.inner; ++i) {
      const T* base = x + o * sp.n * sp.inner + i;
      for (int64_t j = 0; j < sp.n; ++j) v[j] = to_compute(base[j * sp.inner]);
      std::iota(order.begin(), order.end(), 0);
      std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
      T* vo = vals + o * k * sp.inner + i;
      int64_t* io = idxs + o * k * sp.inner + i;
      for (int64_t j = 0; j < k; ++j) {
        vo[j * sp.inner] = base[order[j] * sp.inner];
        io[j * sp.inner] = order[j];
      }
    }
  }
}

Result<std::unique_ptr<Kernel>> create_topk(const KernelInit& init) {
  const int version = init.since_version();
  XONNX_ASSIGN_OR_RETURN(int64_t axis_attr, init.get_int("axis", -1));
  XONNX_ASSIGN_OR_RETURN(int64_t largest, init.get_int("largest", 1));
  XONNX_ASSIGN_OR_RETURN(int64_t sorted, init.get_int("sorted", 1));
  (void)sorted;  // unsorted output may be in any order; we always return sorted order
  int64_t k_attr = -1;
  if (version < 10) {
    XONNX_ASSIGN_OR_RETURN(k_attr, init.require_int("k"));
    if (k_attr < 0) return invalid_model("attribute k must be >= 0, got ", k_attr);
  } else if (init.num_inputs() < 2) {
    return invalid_model("TopK since opset 10 needs input 1 (K)");
  }
  return make_kernel([=](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    if (!x.defined()) return invalid_argument("input 0 (X) is missing");
    const int64_t rank = static_cast<int64_t>(x.rank());
    if (rank == 0) return invalid_argument("input 0 (X) must have rank >= 1, got a scalar");
    XONNX_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(axis_attr, rank));
    int64_t k = k_attr;
    if (version >= 10) {
      const Tensor& kt = ctx.input(1);
      if (!kt.defined()) return invalid_argument("input 1 (K) is missing");
      if (kt.dtype() != DataType::kInt64) {
        return invalid_argument("input 1 (K) must be int64, got ", dtype_name(kt.dtype()));
      }
      if (kt.numel() != 1) {
        return invalid_argument("input 1 (K) must hold exactly one value, got shape ", shape_to_string(kt.shape()));
      }
      k = kt.data<int64_t>()[0];
    }
    const AxisSplit sp = split_at(x.shape(), axis);
    if (k < 0 || k > sp.n) {
      return invalid_argument("K = ", k, " is out of range for axis ", axis, " of size ", sp.n);
    }
    Shape out_shape = x.shape();
    out_shape[axis] = k;
    XONNX_ASSIGN_OR_RETURN(Tensor * vals, ctx.allocate_output(0, x.dtype(), out_shape));
    XONNX_ASSIGN_OR_RETURN(Tensor * idxs, ctx.allocate_output(1, DataType::kInt64, out_shape));
    if (vals->numel() == 0) return Status::ok();
    XONNX_DISPATCH_NUMERIC(x.dtype(), return unsupported("TopK does not support type ", dtype_name(x.dtype())), {
      topk_typed<T>(x.data<T>(), vals->data<T>(), idxs->data<int64_t>(), sp, k, largest != 0);
    });
    return Status::ok();
  });
}

// ---------------------------------------------------------------- Unique

// Groups the n slices x[o, j, i] (j = 0..n-1) into unique values. Returns, per unique value in
// output order, its first index; plus inverse and counts.
template <typename T>
void unique_groups(const T* x, const AxisSplit& sp, bool sorted, std::vector<int64_t>& first,
                   std::vector<int64_t>& inverse, std::vector<int64_t>& counts) {
  auto elem = [&](int64_t j, int64_t e) -> const T& {
    const int64_t o = e / sp.inner, i = e % sp.inner;
    return x[(o * sp.n + j) * sp.inner + i];
  };
  const int64_t m = sp.outer * sp.inner;
  auto cmp_slices = [&](int64_t a, int64_t b) {
    for (int64_t e = 0; e < m; ++e) {
      int c;
      if constexpr (std::is_same_v<T, std::string>) {
        const int r = elem(a, e).compare(elem(b, e));
        c = r < 0 ? -1 : (r > 0 ? 1 : 0);
      } else {
        c = cmp3(to_compute(elem(a, e)), to_compute(elem(b, e)));
      }
      if (c != 0) return c;
    }
    return 0;
  };
  std::vector<int64_t> order(static_cast<size_t>(sp.n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return cmp_slices(a, b) < 0; });
  // Groups in sorted order.
  std::vector<int64_t> group_first, group_count;
  std::vector<int64_t> group_of(static_cast<size_t>(sp.n));
  for (size_t p = 0; p < order.size(); ++p) {
    if (p == 0 || cmp_slices(order[p - 1], order[p]) != 0) {
      group_first.push_back(order[p]);
      group_count.push_back(0);
    }
    group_of[order[p]] = static_cast<int64_t>(group_first.size()) - 1;
    ++group_count.back();
  }
  const size_t g = group_first.size();
  std::vector<int64_t> rank_of(g);  // group -> output position
  std::iota(rank_of.begin(), rank_of.end(), 0);
  if (!sorted) {
    std::vector<int64_t> by_first(g);
    std::iota(by_first.begin(), by_first.end(), 0);
    std::sort(by_first.begin(), by_first.end(), [&](int64_t a, int64_t b) { return group_first[a] < group_first[b]; });
    for (size_t p = 0; p < g; ++p) rank_of[by_first[p]] = static_cast<int64_t>(p);
  }
  first.assign(g, 0);
  counts.assign(g, 0);
  for (size_t q = 0; q < g; ++q) {
    first[rank_of[q]] = group_first[q];
    counts[rank_of[q]] = group_count[q];
  }
  inverse.resize(static_cast<size_t>(sp.n));
  for (int64_t j = 0; j < sp.n; ++j) inverse[j] = rank_of[group_of[j]];
}

Result<std::unique_ptr<Kernel>> create_unique(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(int64_t sorted, init.get_int("sorted", 1));
  const bool has_axis = init.has_attr("axis");
  XONNX_ASSIGN_OR_RETURN(int64_t axis_attr, init.get_int("axis", 0));
  return make_kernel([=](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    if (!x.defined()) return invalid_argument("input 0 (X) is missing");
    Shape shape = x.shape();
    int64_t axis = 0;
    if (has_axis) {
      XONNX_ASSIGN_OR_RETURN(axis, normalize_axis(axis_attr, static_cast<int64_t>(x.rank())));
    } else {
      shape = Shape{x.numel()};
    }
    const AxisSplit sp = split_at(shape, axis);
    // Indices per slice (order, groups, inverse): an axis of 2^40 empty slices holds no data.
    XONNX_RETURN_IF_ERROR(ref::check_scratch(ctx, "Unique's indices per slice", 4 * sizeof(int64_t), {sp.n}));
    std::vector<int64_t> first, inverse, counts;
    const DataType dt = x.dtype();
    auto emit = [&](auto tag) -> Status {
      using T = decltype(tag);
      const T* in = nullptr;
      if constexpr (std::is_same_v<T, std::string>)
        in = x.string_data();
      else
        in = x.data<T>();
      unique_groups<T>(in, sp, sorted != 0, first, inverse, counts);
      const int64_t g = static_cast<int64_t>(first.size());
      Shape yshape = shape;
      yshape[axis] = g;
      XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dt, yshape));
      T* out = nullptr;
      if constexpr (std::is_same_v<T, std::string>)
        out = y->string_data();
      else
        out = y->data<T>();
      for (int64_t o = 0; o < sp.outer; ++o) {
        for (int64_t q = 0; q < g; ++q) {
          for (int64_t i = 0; i < sp.inner; ++i) {
            out[(o * g + q) * sp.inner + i] = in[(o * sp.n + first[q]) * sp.inner + i];
          }
        }
      }
      return Status::ok();
    };
    Status st;
    if (dt == DataType::kString) {
      st = emit(std::string());
    } else {
      XONNX_DISPATCH_ALL_BYTES(dt, return unsupported("Unique does not support type ", dtype_name(dt)),
                               { st = emit(T{}); });
    }
    XONNX_RETURN_IF_ERROR(st);
    const std::vector<int64_t>* extra[3] = {&first, &inverse, &counts};
    for (size_t o = 1; o < 4 && o < ctx.num_outputs(); ++o) {
      if (!ctx.output_wanted(o)) continue;
      const std::vector<int64_t>& v = *extra[o - 1];
      XONNX_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output(o, DataType::kInt64, {static_cast<int64_t>(v.size())}));
      std::copy(v.begin(), v.end(), t->data<int64_t>());
    }
    return Status::ok();
  });
}

// ---------------------------------------------------------------- CumSum / CumProd

template <typename T, bool kProd>
void cum_typed(const T* x, T* y, const AxisSplit& sp, bool exclusive, bool reverse) {
  using C = compute_t<T>;
  using A = std::conditional_t<std::is_integral_v<C>, uint64_t, C>;  // ints wrap
  for (int64_t o = 0; o < sp.outer; ++o) {
    for (int64_t i = 0; i < sp.inner; ++i) {
      const int64_t base = o * sp.n * sp.inner + i;
      A acc = kProd ? A(1) : A(0);
      for (int64_t s = 0; s < sp.n; ++s) {
        const int64_t j = reverse ? sp.n - 1 - s : s;
        const int64_t off = base + j * sp.inner;
        const A v = static_cast<A>(to_compute(x[off]));
        if (exclusive) {
          y[off] = from_compute<T>(static_cast<C>(acc));
          acc = kProd ? A(acc * v) : A(acc + v);
        } else {
          acc = kProd ? A(acc * v) : A(acc + v);
          y[off] = from_compute<T>(static_cast<C>(acc));
        }
      }
    }
  }
}

template <bool kProd>
Result<std::unique_ptr<Kernel>> create_cum(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(int64_t exclusive, init.get_int("exclusive", 0));
  XONNX_ASSIGN_OR_RETURN(int64_t reverse, init.get_int("reverse", 0));
  return make_kernel([=](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    const Tensor& a = ctx.input(1);
    if (!x.defined()) return invalid_argument("input 0 (x) is missing");
    if (!a.defined()) return invalid_argument("input 1 (axis) is missing");
    if (a.dtype() != DataType::kInt32 && a.dtype() != DataType::kInt64) {
      return invalid_argument("input 1 (axis) must be int32 or int64, got ", dtype_name(a.dtype()));
    }
    if (a.numel() != 1 || a.rank() > 1) {
      return invalid_argument("input 1 (axis) must be a scalar, got shape ", shape_to_string(a.shape()));
    }
    const int64_t rank = static_cast<int64_t>(x.rank());
    if (rank == 0) return invalid_argument("input 0 (x) must have rank >= 1, got a scalar");
    XONNX_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(a.get_as_int64(0), rank));
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), x.shape()));
    if (x.numel() == 0) return Status::ok();
    const AxisSplit sp = split_at(x.shape(), axis);
    XONNX_DISPATCH_NUMERIC(x.dtype(), return unsupported("type ", dtype_name(x.dtype()), " is not supported"),
                           { cum_typed<T, kProd>(x.data<T>(), y->data<T>(), sp, exclusive != 0, reverse != 0); });
    return Status::ok();
  });
}

}  // namespace

void register_sort_ops(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "TopK", 1, kLatestVersion, create_topk);
  XONNX_REGISTER(registry, "", "Unique", 11, kLatestVersion, create_unique);
  XONNX_REGISTER(registry, "", "CumSum", 11, kLatestVersion, create_cum<false>);
  XONNX_REGISTER(registry, "", "CumProd", 26, kLatestVersion, create_cum<true>);
}

}  // namespace xonnx
