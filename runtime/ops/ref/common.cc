#include "runtime/ops/ref/common.h"

#include <algorithm>

#include "runtime/core/checked.h"
#include "runtime/core/limits.h"

namespace xonnx {
namespace ref {

Shape contiguous_strides(const Shape& shape) {
  Shape s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

Result<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da == db || db == 1) {
      out[i] = da;
    } else if (da == 1) {
      out[i] = db;
    } else {
      return invalid_argument("shapes ", shape_to_string(a), " and ", shape_to_string(b),
                              " cannot be broadcast together");
    }
  }
  return out;
}

Result<Shape> broadcast_shapes(const std::vector<Shape>& shapes) {
  if (shapes.empty()) return Shape{};
  Shape out = shapes[0];
  for (size_t i = 1; i < shapes.size(); ++i) {
    XONNX_ASSIGN_OR_RETURN(out, broadcast_shapes(out, shapes[i]));
  }
  return out;
}

Shape broadcast_strides(const Shape& in_shape, const Shape& out_shape) {
  const size_t rank = out_shape.size();
  Shape strides(rank, 0);
  const Shape in_strides = contiguous_strides(in_shape);
  const size_t lead = rank - in_shape.size();
  for (size_t i = 0; i < in_shape.size(); ++i) {
    strides[lead + i] = in_shape[i] == 1 ? 0 : in_strides[i];
  }
  return strides;
}

Result<const Tensor*> tensor_input(KernelContext& ctx, size_t i, const char* what) {
  const Tensor& t = ctx.input(i);
  if (!t.defined()) return invalid_argument("input ", i, " (", what, ") must be a tensor");
  return &t;
}

Result<Shape> int_list_input(KernelContext& ctx, size_t i, const char* what) {
  XONNX_ASSIGN_OR_RETURN(const Tensor* t, tensor_input(ctx, i, what));
  if (t->rank() > 1) {
    return invalid_argument(what, " must be a 1-D tensor, got shape ", shape_to_string(t->shape()));
  }
  if (t->dtype() == DataType::kInt64) {  // the common case, without a temporary vector
    const int64_t* v = t->data<int64_t>();
    return Shape(v, v + t->numel());
  }
  auto r = t->to_int64_vector();
  if (!r.is_ok()) return invalid_argument(what, ": ", r.status().message());
  return Shape(r->begin(), r->end());
}

Result<std::string> get_auto_pad(const KernelInit& init, const std::string& name) {
  XONNX_ASSIGN_OR_RETURN(std::string auto_pad, init.get_string(name, "NOTSET"));
  if (auto_pad != "NOTSET" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER" && auto_pad != "VALID") {
    return invalid_argument(name, " must be NOTSET, SAME_UPPER, SAME_LOWER or VALID, got '", auto_pad, "'");
  }
  return auto_pad;
}

SamePadding same_padding(int64_t in, int64_t stride, int64_t dilated_kernel, bool upper) {
  SamePadding p;
  p.out = (in + stride - 1) / stride;
  const int64_t total = std::max<int64_t>(0, (p.out - 1) * stride + dilated_kernel - in);
  p.pad_begin = upper ? total / 2 : total - total / 2;
  p.pad_end = total - p.pad_begin;
  return p;
}

int64_t pool_output_size(int64_t in, int64_t pad_begin, int64_t pad_end, int64_t dilated_kernel, int64_t stride,
                         bool ceil_mode) {
  const int64_t span = in + pad_begin + pad_end - dilated_kernel;
  if (span < 0) return -1;
  if (!ceil_mode) return span / stride + 1;
  const int64_t out = (span + stride - 1) / stride + 1;
  return (out - 1) * stride >= in + pad_begin ? out - 1 : out;
}

std::vector<double> load_doubles(const Tensor& t) {
  const int64_t n = t.numel();
  std::vector<double> out(static_cast<size_t>(std::max<int64_t>(n, 0)));
  XONNX_DISPATCH_FLOAT(t.dtype(), for (int64_t i = 0; i < n; ++i) out[i] = t.get_as_double(i), {
    const T* p = t.data<T>();
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<double>(to_compute(p[i]));
  });
  return out;
}

Result<std::vector<double>> load_float_doubles(const Tensor& t, const char* what) {
  if (!is_float_type(t.dtype())) {
    return unsupported(what, " type ", dtype_name(t.dtype()), " (expected float, double, float16 or bfloat16)");
  }
  return load_doubles(t);
}

Status check_scratch(const KernelContext& ctx, const char* what, int64_t elem_bytes,
                     std::initializer_list<int64_t> dims) {
  int64_t bytes = elem_bytes;
  for (int64_t d : dims) bytes = bytes < 0 ? -1 : checked_mul(bytes, d);
  const int64_t cap = ctx.limits().max_tensor_bytes;
  if (bytes < 0 || bytes > cap) {
    return resource_exhausted(what, ": ", shape_to_string(Shape(dims)), " x ", elem_bytes,
                              " bytes, over the tensor cap of ", describe_bytes(cap));
  }
  return Status::ok();
}

void store_doubles(Tensor* t, const std::vector<double>& v) {
  const int64_t n = t->numel();
  XONNX_DISPATCH_FLOAT(t->dtype(), return, {
    T* p = t->data<T>();
    for (int64_t i = 0; i < n; ++i) p[i] = from_compute<T>(static_cast<compute_t<T>>(v[i]));
  });
}

}  // namespace ref
}  // namespace xonnx
