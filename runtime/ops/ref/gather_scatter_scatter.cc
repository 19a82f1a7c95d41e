// Reference kernels: gather_scatter family, part 2. Scatter (deprecated), ScatterElements,
// ScatterND (with reductions), TensorScatter. Registered from register_gather_scatter_ops.
//
// reduction="none" copies elements of any type; add/mul/max/min work on numeric types and
// bool (add = or, mul = and). Duplicate indices apply in order (last write wins for "none").
#include <cstring>
#include <limits>

#include "runtime/ops/ref/common.h"
#include "runtime/ops/ref/elem_copy.h"
#include "runtime/ops/ref/gather_scatter_internal.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace {

using ref::ElemCopy;
using ref::fix_index;
using ref::index_values;
using ref::tensor_input;

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

Result<Reduction> parse_reduction(const KernelInit& init) {
  const int ver = init.since_version();
  XONNX_ASSIGN_OR_RETURN(std::string s, init.get_string("reduction", "none"));
  if (s == "none") return Reduction::kNone;
  if (s == "add" && ver >= 16) return Reduction::kAdd;
  if (s == "mul" && ver >= 16) return Reduction::kMul;
  if (s == "max" && ver >= 18) return Reduction::kMax;
  if (s == "min" && ver >= 18) return Reduction::kMin;
  return invalid_model("unsupported reduction '", s, "' for opset version ", ver);
}

template <typename T>
inline void reduce_into(T* dst, const T& src, Reduction red) {
  using C = compute_t<T>;
  const C a = to_compute(*dst), b = to_compute(src);
  C r = a;
  switch (red) {
    case Reduction::kNone: r = b; break;
    case Reduction::kAdd: r = static_cast<C>(a + b); break;
    case Reduction::kMul: r = static_cast<C>(a * b); break;
    case Reduction::kMax: r = b > a ? b : a; break;
    case Reduction::kMin: r = b < a ? b : a; break;
  }
  *dst = from_compute<T>(r);
}

// Applies out[dst_offsets[i] + k] (op)= upd[i * run + k] for every i and k < run.
Status apply_updates(const Tensor& upd, Tensor* out, const std::vector<int64_t>& dst_offsets, int64_t run,
                     Reduction red) {
  if (red == Reduction::kNone) {
    ElemCopy cp(upd, out);
    for (size_t i = 0; i < dst_offsets.size(); ++i) cp.run(dst_offsets[i], static_cast<int64_t>(i) * run, run);
    return Status::ok();
  }
  XONNX_DISPATCH_ALL_BYTES(upd.dtype(), return unsupported("reduction on type ", dtype_name(upd.dtype())), {
    const T* u = upd.data<T>();
    T* o = out->data<T>();
    for (size_t i = 0; i < dst_offsets.size(); ++i) {
      for (int64_t k = 0; k < run; ++k) {
        reduce_into<T>(&o[dst_offsets[i] + k], u[static_cast<int64_t>(i) * run + k], red);
      }
    }
  });
  return Status::ok();
}

Result<Tensor*> copy_data_to_output(KernelContext& ctx, const Tensor& x) {
  XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), x.shape()));
  ElemCopy(x, y).run(0, 0, x.numel());
  return y;
}

// ---------------------------------------------------------------- ScatterElements / Scatter
Result<std::unique_ptr<Kernel>> create_scatter_elements(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(int64_t axis, init.get_int("axis", 0));
  XONNX_ASSIGN_OR_RETURN(Reduction red, parse_reduction(init));
  return make_kernel([axis, red](KernelContext& ctx) -> Status {
    XONNX_ASSIGN_OR_RETURN(const Tensor* x, tensor_input(ctx, 0, "data"));
    XONNX_ASSIGN_OR_RETURN(const Tensor* ind, tensor_input(ctx, 1, "indices"));
    XONNX_ASSIGN_OR_RETURN(const Tensor* upd, tensor_input(ctx, 2, "updates"));
    const int64_t r = static_cast<int64_t>(x->rank());
    if (r == 0) return invalid_argument("data must have rank >= 1");
    XONNX_ASSIGN_OR_RETURN(int64_t a, normalize_axis(axis, r));
    if (upd->dtype() != x->dtype()) {
      return invalid_argument("updates has type ", dtype_name(upd->dtype()), ", data has ", dtype_name(x->dtype()));
    }
    if (ind->shape() != upd->shape()) {
      return invalid_argument("indices shape ", shape_to_string(ind->shape()), " differs from updates shape ",
                              shape_to_string(upd->shape()));
    }
    XONNX_ASSIGN_OR_RETURN(Tensor * y, copy_data_to_output(ctx, *x));
    if (red == Reduction::kNone) {
      const ElemCopy cp(*upd, y);
      return ref::visit_element_offsets(*x, *ind, a, [&](int64_t o, int64_t dst) { cp.one(dst, o); });
    }
    XONNX_DISPATCH_ALL_BYTES(upd->dtype(), return unsupported("reduction on type ", dtype_name(upd->dtype())), {
      const T* u = upd->data<T>();
      T* out = y->data<T>();
      return ref::visit_element_offsets(*x, *ind, a,
                                        [&](int64_t o, int64_t dst) { reduce_into<T>(&out[dst], u[o], red); });
    });
  });
}

// ---------------------------------------------------------------- ScatterND
Result<std::unique_ptr<Kernel>> create_scatter_nd(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(Reduction red, parse_reduction(init));
  return make_kernel([red](KernelContext& ctx) -> Status {
    XONNX_ASSIGN_OR_RETURN(const Tensor* x, tensor_input(ctx, 0, "data"));
    XONNX_ASSIGN_OR_RETURN(const Tensor* ind, tensor_input(ctx, 1, "indices"));
    XONNX_ASSIGN_OR_RETURN(const Tensor* upd, tensor_input(ctx, 2, "updates"));
    const int64_t r = static_cast<int64_t>(x->rank()), q = static_cast<int64_t>(ind->rank());
    if (r < 1 || q < 1) return invalid_argument("data and indices must have rank >= 1");
    if (upd->dtype() != x->dtype()) {
      return invalid_argument("updates has type ", dtype_name(upd->dtype()), ", data has ", dtype_name(x->dtype()));
    }
    const int64_t k = ind->dim(static_cast<size_t>(q - 1));
    if (k < 0 || k > r) return invalid_argument("indices last dimension ", k, " must be in [0, ", r, "]");
    Shape expect(ind->shape().begin(), ind->shape().end() - 1);
    expect.insert(expect.end(), x->shape().begin() + k, x->shape().end());
    if (upd->shape() != expect) {
      return invalid_argument("updates shape ", shape_to_string(upd->shape()), " must be ", shape_to_string(expect));
    }
    XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> idx, index_values(*ind, "indices"));
    const auto xs = ref::contiguous_strides(x->shape());
    int64_t n = 1, slice = 1;
    for (int64_t d = 0; d < q - 1; ++d) n *= ind->dim(static_cast<size_t>(d));
    for (int64_t d = k; d < r; ++d) slice *= x->dim(static_cast<size_t>(d));
    std::vector<int64_t> dst(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) {
      int64_t off = 0;
      for (int64_t c = 0; c < k; ++c) {
        int64_t v = idx[static_cast<size_t>(j * k + c)];
        XONNX_RETURN_IF_ERROR(fix_index(v, x->dim(static_cast<size_t>(c)), "indices"));
        off += v * xs[static_cast<size_t>(c)];
      }
      dst[static_cast<size_t>(j)] = off;
    }
    XONNX_ASSIGN_OR_RETURN(Tensor * y, copy_data_to_output(ctx, *x));
    return apply_updates(*upd, y, dst, slice, red);
  });
}

// ---------------------------------------------------------------- TensorScatter (opset 24)
Result<std::unique_ptr<Kernel>> create_tensor_scatter(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(int64_t axis, init.get_int("axis", -2));
  XONNX_ASSIGN_OR_RETURN(std::string mode, init.get_string("mode", "linear"));
  if (mode != "linear" && mode != "circular") {
    return invalid_model("mode must be 'linear' or 'circular', got '", mode, "'");
  }
  const bool circular = mode == "circular";
  return make_kernel([axis, circular](KernelContext& ctx) -> Status {
    XONNX_ASSIGN_OR_RETURN(const Tensor* past, tensor_input(ctx, 0, "past_cache"));
    XONNX_ASSIGN_OR_RETURN(const Tensor* upd, tensor_input(ctx, 1, "update"));
    const int64_t r = static_cast<int64_t>(past->rank());
    if (r < 2) return invalid_argument("past_cache must have rank >= 2, got ", shape_to_string(past->shape()));
    XONNX_ASSIGN_OR_RETURN(int64_t a, normalize_axis(axis, r));
    if (a == 0) return invalid_argument("axis must not be the batch axis 0");
    if (upd->dtype() != past->dtype()) {
      return invalid_argument("update has type ", dtype_name(upd->dtype()), ", past_cache has ",
                              dtype_name(past->dtype()));
    }
    if (static_cast<int64_t>(upd->rank()) != r) {
      return invalid_argument("update shape ", shape_to_string(upd->shape()), " and past_cache shape ",
                              shape_to_string(past->shape()), " differ in rank");
    }
    for (int64_t d = 0; d < r; ++d) {
      const size_t du = static_cast<size_t>(d);
      if (d == a ? upd->dim(du) > past->dim(du) : upd->dim(du) != past->dim(du)) {
        return invalid_argument("update shape ", shape_to_string(upd->shape()),
                                " is incompatible with past_cache shape ", shape_to_string(past->shape()), " at axis ",
                                d);
      }
    }
    const int64_t batch = past->dim(0);
    const int64_t max_seq = past->dim(static_cast<size_t>(a));
    const int64_t seq = upd->dim(static_cast<size_t>(a));
    std::vector<int64_t> wi(static_cast<size_t>(batch), 0);
    if (ctx.has_input(2)) {
      XONNX_ASSIGN_OR_RETURN(const Tensor* wt, tensor_input(ctx, 2, "write_indices"));
      if (wt->numel() != batch) {
        return invalid_argument("write_indices has shape ", shape_to_string(wt->shape()), ", expected [", batch, "]");
      }
      XONNX_ASSIGN_OR_RETURN(wi, index_values(*wt, "write_indices"));
    }
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t w = wi[static_cast<size_t>(b)];
      if (w < 0 || (!circular && w > max_seq - seq) || (circular && seq > 0 && max_seq == 0)) {
        return invalid_argument("write_indices[", b, "] = ", w, " with ", seq,
                                " updates does not fit the cache length ", max_seq);
      }
    }
    XONNX_ASSIGN_OR_RETURN(Tensor * y, copy_data_to_output(ctx, *past));
    int64_t prefix = 1, per_batch = 1, inner = 1;
    for (int64_t d = 0; d < a; ++d) prefix *= past->dim(static_cast<size_t>(d));
    for (int64_t d = 1; d < a; ++d) per_batch *= past->dim(static_cast<size_t>(d));
    for (int64_t d = a + 1; d < r; ++d) inner *= past->dim(static_cast<size_t>(d));
    ElemCopy cp(*upd, y);
    for (int64_t p = 0; p < prefix; ++p) {
      const int64_t w = wi[static_cast<size_t>(p / per_batch)];
      for (int64_t s = 0; s < seq; ++s) {
        const int64_t c = circular ? (w % max_seq + s) % max_seq : w + s;  // w fits (checked above)
        cp.run((p * max_seq + c) * inner, (p * seq + s) * inner, inner);
      }
    }
    return Status::ok();
  });
}

}  // namespace

void register_gather_scatter_scatter_ops(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "Scatter", 9, kLatestVersion, create_scatter_elements);
  XONNX_REGISTER(registry, "", "ScatterElements", 11, kLatestVersion, create_scatter_elements);
  XONNX_REGISTER(registry, "", "ScatterND", 11, kLatestVersion, create_scatter_nd);
  XONNX_REGISTER(registry, "", "TensorScatter", 24, kLatestVersion, create_tensor_scatter);
}

}  // namespace xonnx
