// Reference kernels: gather_scatter family, part 1. Gather, GatherElements, GatherND, OneHot,
// Compress, NonZero. (Scatter, ScatterElements, ScatterND, TensorScatter are in
// gather_scatter_scatter.cc.)
//
// Data is copied element by element whatever its type (strings, bool, fp16, float8, sub-byte).
// Every index is bounds-checked; negative indices count from the end where the spec allows.
#include <cmath>
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

// ---------------------------------------------------------------- Gather
Result<std::unique_ptr<Kernel>> create_gather(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(int64_t axis, init.get_int("axis", 0));
  return make_kernel([axis](KernelContext& ctx) -> Status {
    XONNX_ASSIGN_OR_RETURN(const Tensor* x, tensor_input(ctx, 0, "data"));
    XONNX_ASSIGN_OR_RETURN(const Tensor* ind, tensor_input(ctx, 1, "indices"));
    const int64_t r = static_cast<int64_t>(x->rank());
    if (r == 0) return invalid_argument("data must have rank >= 1");
    XONNX_ASSIGN_OR_RETURN(int64_t a, normalize_axis(axis, r));
    if (ind->dtype() != DataType::kInt32 && ind->dtype() != DataType::kInt64) {
      return invalid_argument("indices must be int32 or int64, got ", dtype_name(ind->dtype()));
    }
    const int64_t dim = x->dim(static_cast<size_t>(a));
    const int64_t n = ind->numel();
    // Indices are checked in one pass and read again while copying: no index list is built,
    // so run() does not allocate.
    for (int64_t j = 0; j < n; ++j) {
      int64_t i = ind->get_as_int64(j);
      XONNX_RETURN_IF_ERROR(fix_index(i, dim, "indices"));
    }
    Shape out_shape(x->shape().begin(), x->shape().begin() + a);
    out_shape.insert(out_shape.end(), ind->shape().begin(), ind->shape().end());
    out_shape.insert(out_shape.end(), x->shape().begin() + a + 1, x->shape().end());
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), out_shape));
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < a; ++d) outer *= x->dim(static_cast<size_t>(d));
    for (int64_t d = a + 1; d < r; ++d) inner *= x->dim(static_cast<size_t>(d));
    ElemCopy cp(*x, y);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < n; ++j) {
        int64_t i = ind->get_as_int64(j);
        if (i < 0) i += dim;
        cp.run((o * n + j) * inner, (o * dim + i) * inner, inner);
      }
    }
    return Status::ok();
  });
}

// ---------------------------------------------------------------- GatherElements
Result<std::unique_ptr<Kernel>> create_gather_elements(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(int64_t axis, init.get_int("axis", 0));
  return make_kernel([axis](KernelContext& ctx) -> Status {
    XONNX_ASSIGN_OR_RETURN(const Tensor* x, tensor_input(ctx, 0, "data"));
    XONNX_ASSIGN_OR_RETURN(const Tensor* ind, tensor_input(ctx, 1, "indices"));
    const int64_t r = static_cast<int64_t>(x->rank());
    if (r == 0) return invalid_argument("data must have rank >= 1");
    XONNX_ASSIGN_OR_RETURN(int64_t a, normalize_axis(axis, r));
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), ind->shape()));
    const ElemCopy cp(*x, y);
    return ref::visit_element_offsets(*x, *ind, a, [&](int64_t o, int64_t src) { cp.one(o, src); });
  });
}

// ---------------------------------------------------------------- GatherND
Result<std::unique_ptr<Kernel>> create_gather_nd(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(int64_t batch_dims, init.get_int("batch_dims", 0));
  if (batch_dims < 0) return invalid_model("batch_dims must be >= 0, got ", batch_dims);
  return make_kernel([batch_dims](KernelContext& ctx) -> Status {
    XONNX_ASSIGN_OR_RETURN(const Tensor* x, tensor_input(ctx, 0, "data"));
    XONNX_ASSIGN_OR_RETURN(const Tensor* ind, tensor_input(ctx, 1, "indices"));
    const int64_t r = static_cast<int64_t>(x->rank()), q = static_cast<int64_t>(ind->rank());
    const int64_t b = batch_dims;
    if (r < 1 || q < 1) return invalid_argument("data and indices must have rank >= 1");
    if (b >= q || b >= r) {
      return invalid_argument("batch_dims ", b, " must be less than the ranks of data (", r, ") and indices (", q, ")");
    }
    const int64_t k = ind->dim(static_cast<size_t>(q - 1));
    if (k < 0 || k > r - b) {
      return invalid_argument("indices last dimension ", k, " must be in [0, ", r - b, "]");
    }
    for (int64_t d = 0; d < b; ++d) {
      if (x->dim(static_cast<size_t>(d)) != ind->dim(static_cast<size_t>(d))) {
        return invalid_argument("batch dimension ", d, " differs: data ", shape_to_string(x->shape()), ", indices ",
                                shape_to_string(ind->shape()));
      }
    }
    XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> idx, index_values(*ind, "indices"));
    Shape out_shape(ind->shape().begin(), ind->shape().end() - 1);
    out_shape.insert(out_shape.end(), x->shape().begin() + b + k, x->shape().end());
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), out_shape));
    const auto xs = ref::contiguous_strides(x->shape());
    int64_t batches = 1, per_batch = 1, slice = 1;
    for (int64_t d = 0; d < b; ++d) batches *= x->dim(static_cast<size_t>(d));
    for (int64_t d = b; d < q - 1; ++d) per_batch *= ind->dim(static_cast<size_t>(d));
    for (int64_t d = b + k; d < r; ++d) slice *= x->dim(static_cast<size_t>(d));
    const int64_t batch_block = b == 0 ? 0 : xs[static_cast<size_t>(b - 1)];
    ElemCopy cp(*x, y);
    for (int64_t bi = 0; bi < batches; ++bi) {
      for (int64_t j = 0; j < per_batch; ++j) {
        const int64_t t = bi * per_batch + j;
        int64_t off = bi * batch_block;
        for (int64_t c = 0; c < k; ++c) {
          int64_t v = idx[static_cast<size_t>(t * k + c)];
          XONNX_RETURN_IF_ERROR(fix_index(v, x->dim(static_cast<size_t>(b + c)), "indices"));
          off += v * xs[static_cast<size_t>(b + c)];
        }
        cp.run(t * slice, off, slice);
      }
    }
    return Status::ok();
  });
}

// ---------------------------------------------------------------- OneHot
Result<std::unique_ptr<Kernel>> create_onehot(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(int64_t axis, init.get_int("axis", -1));
  return make_kernel([axis](KernelContext& ctx) -> Status {
    XONNX_ASSIGN_OR_RETURN(const Tensor* ind, tensor_input(ctx, 0, "indices"));
    XONNX_ASSIGN_OR_RETURN(const Tensor* depth_t, tensor_input(ctx, 1, "depth"));
    XONNX_ASSIGN_OR_RETURN(const Tensor* values, tensor_input(ctx, 2, "values"));
    if (depth_t->numel() != 1) {
      return invalid_argument("depth must hold one element, got shape ", shape_to_string(depth_t->shape()));
    }
    if (values->numel() != 2) {
      return invalid_argument("values must hold [off_value, on_value], got shape ", shape_to_string(values->shape()));
    }
    const bool int_like = dtype_is_integer(ind->dtype()) || ind->dtype() == DataType::kBool;
    if (!int_like && !dtype_is_float(ind->dtype())) {
      return invalid_argument("indices must be numeric, got ", dtype_name(ind->dtype()));
    }
    const double depth_d = depth_t->get_as_double(0);
    if (!(depth_d >= 1.0) || depth_d > 1e9) return invalid_argument("depth ", depth_d, " is invalid");
    const int64_t depth = static_cast<int64_t>(depth_d);
    const int64_t r = static_cast<int64_t>(ind->rank());
    XONNX_ASSIGN_OR_RETURN(int64_t a, normalize_axis(axis, r + 1));
    Shape out_shape(ind->shape().begin(), ind->shape().begin() + a);
    out_shape.push_back(depth);
    out_shape.insert(out_shape.end(), ind->shape().begin() + a, ind->shape().end());
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, values->dtype(), out_shape));
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < a; ++d) outer *= ind->dim(static_cast<size_t>(d));
    for (int64_t d = a; d < r; ++d) inner *= ind->dim(static_cast<size_t>(d));
    ElemCopy cp(*values, y);
    const int64_t total = y->numel();
    for (int64_t i = 0; i < total; ++i) cp.one(i, 0);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t src = o * inner + i;
        int64_t v;
        if (int_like) {
          v = ind->get_as_int64(src);
        } else {
          const double dv = ind->get_as_double(src);
          if (!(std::fabs(dv) < 9e18)) continue;  // NaN / huge: out of range, stays off
          v = static_cast<int64_t>(dv);
        }
        if (v < 0) v += depth;
        if (v < 0 || v >= depth) continue;  // out of range: all off_value
        cp.one((o * depth + v) * inner + i, 1);
      }
    }
    return Status::ok();
  });
}

// ---------------------------------------------------------------- Compress
Result<std::unique_ptr<Kernel>> create_compress(const KernelInit& init) {
  const bool has_axis = init.has_attr("axis");
  XONNX_ASSIGN_OR_RETURN(int64_t axis, init.get_int("axis", 0));
  return make_kernel([has_axis, axis](KernelContext& ctx) -> Status {
    XONNX_ASSIGN_OR_RETURN(const Tensor* x, tensor_input(ctx, 0, "input"));
    XONNX_ASSIGN_OR_RETURN(const Tensor* cond, tensor_input(ctx, 1, "condition"));
    if (cond->rank() != 1) {
      return invalid_argument("condition must be 1-D, got shape ", shape_to_string(cond->shape()));
    }
    if (cond->dtype() != DataType::kBool) {
      return invalid_argument("condition must be bool, got ", dtype_name(cond->dtype()));
    }
    const int64_t r = static_cast<int64_t>(x->rank());
    int64_t a = 0, dim, outer = 1, inner = 1;
    if (has_axis) {
      XONNX_ASSIGN_OR_RETURN(a, normalize_axis(axis, r));
      dim = x->dim(static_cast<size_t>(a));
      for (int64_t d = 0; d < a; ++d) outer *= x->dim(static_cast<size_t>(d));
      for (int64_t d = a + 1; d < r; ++d) inner *= x->dim(static_cast<size_t>(d));
    } else {
      dim = x->numel();
    }
    const bool* c = cond->data<bool>();
    const int64_t clen = cond->numel();
    std::vector<int64_t> keep;
    for (int64_t i = 0; i < clen; ++i) {
      if (!c[i]) continue;
      if (i >= dim) {
        return invalid_argument("condition is true at index ", i, " beyond the axis size ", dim);
      }
      keep.push_back(i);
    }
    const int64_t nk = static_cast<int64_t>(keep.size());
    Shape out_shape;
    if (has_axis) {
      out_shape = x->shape();
      out_shape[static_cast<size_t>(a)] = nk;
    } else {
      out_shape = {nk};
    }
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), out_shape));
    ElemCopy cp(*x, y);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < nk; ++j) {
        cp.run((o * nk + j) * inner, (o * dim + keep[static_cast<size_t>(j)]) * inner, inner);
      }
    }
    return Status::ok();
  });
}

// ---------------------------------------------------------------- NonZero
Result<std::unique_ptr<Kernel>> create_nonzero(const KernelInit&) {
  return make_kernel([](KernelContext& ctx) -> Status {
    XONNX_ASSIGN_OR_RETURN(const Tensor* x, tensor_input(ctx, 0, "X"));
    const int64_t n = x->numel();
    std::vector<int64_t> nz;
    const DataType dt = x->dtype();
    if (dt == DataType::kString) {
      for (int64_t i = 0; i < n; ++i)
        if (!x->string_data()[i].empty()) nz.push_back(i);
    } else {
      bool done = false;
      XONNX_DISPATCH_ALL_BYTES(dt, break, {
        const T* p = x->data<T>();
        for (int64_t i = 0; i < n; ++i)
          if (to_compute(p[i]) != static_cast<compute_t<T>>(0)) nz.push_back(i);
        done = true;
      });
      if (!done) {
        if (dtype_bits(dt) == 0 || dt == DataType::kComplex64 || dt == DataType::kComplex128) {
          return unsupported("NonZero of type ", dtype_name(dt));
        }
        for (int64_t i = 0; i < n; ++i)
          if (x->get_as_double(i) != 0.0) nz.push_back(i);
      }
    }
    // A scalar behaves like a 1-element vector (numpy semantics).
    const Shape in_shape = x->rank() == 0 ? Shape{1} : x->shape();
    const int64_t r = static_cast<int64_t>(in_shape.size());
    const int64_t cnt = static_cast<int64_t>(nz.size());
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kInt64, {r, cnt}));
    int64_t* out = y->data<int64_t>();
    for (int64_t j = 0; j < cnt; ++j) {
      int64_t flat = nz[static_cast<size_t>(j)];
      for (int64_t d = r; d-- > 0;) {
        const int64_t dim = in_shape[static_cast<size_t>(d)];
        out[d * cnt + j] = flat % dim;
        flat /= dim;
      }
    }
    return Status::ok();
  });
}

}  // namespace

void register_gather_scatter_ops(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "Gather", 1, kLatestVersion, create_gather);
  XONNX_REGISTER(registry, "", "GatherElements", 11, kLatestVersion, create_gather_elements);
  XONNX_REGISTER(registry, "", "GatherND", 11, kLatestVersion, create_gather_nd);
  XONNX_REGISTER(registry, "", "OneHot", 9, kLatestVersion, create_onehot);
  XONNX_REGISTER(registry, "", "Compress", 9, kLatestVersion, create_compress);
  XONNX_REGISTER(registry, "", "NonZero", 9, kLatestVersion, create_nonzero);
  register_gather_scatter_scatter_ops(registry);
}

}  // namespace xonnx
