// Reference kernels: shape family. Shape, Size, Reshape, Flatten, Squeeze, Unsqueeze,
// Identity, Expand, ConstantOfShape, Constant, Range, EyeLike.
//
// Data-movement ops here handle every element type (strings, bool, fp16, float8, sub-byte)
// by copying elements, never by interpreting them.
#include <cmath>
#include <cstring>
#include <limits>
#include <set>

#include "runtime/ops/ref/common.h"
#include "runtime/ops/ref/elem_copy.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace {

using ref::ElemCopy;
using ref::int_list_input;
using ref::tensor_input;

// ---------------------------------------------------------------- Shape / Size
Result<std::unique_ptr<Kernel>> create_shape(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(int64_t start, init.get_int("start", 0));
  const bool has_end = init.has_attr("end");
  XONNX_ASSIGN_OR_RETURN(int64_t end, init.get_int("end", 0));
  return make_kernel([start, end, has_end](KernelContext& ctx) -> Status {
    XONNX_ASSIGN_OR_RETURN(const Tensor* x, tensor_input(ctx, 0, "data"));
    const int64_t r = static_cast<int64_t>(x->rank());
    auto clampi = [r](int64_t v) {
      if (v < 0) v += r;
      return v < 0 ? 0 : (v > r ? r : v);
    };
    const int64_t s = clampi(start);
    const int64_t e = has_end ? clampi(end) : r;
    const int64_t n = e > s ? e - s : 0;
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kInt64, {n}));
    for (int64_t i = 0; i < n; ++i) y->data<int64_t>()[i] = x->dim(static_cast<size_t>(s + i));
    return Status::ok();
  });
}

Result<std::unique_ptr<Kernel>> create_size(const KernelInit&) {
  return make_kernel([](KernelContext& ctx) -> Status {
    XONNX_ASSIGN_OR_RETURN(const Tensor* x, tensor_input(ctx, 0, "data"));
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kInt64, {}));
    y->data<int64_t>()[0] = x->numel();
    return Status::ok();
  });
}

// ---------------------------------------------------------------- Reshape / Flatten
Result<Shape> reshape_target(const Shape& in, const Shape& spec, bool allowzero) {
  Shape out(spec.size());
  int64_t infer = -1;
  int64_t known = 1;
  bool has_zero = false;
  for (size_t i = 0; i < spec.size(); ++i) {
    int64_t d = spec[i];
    if (d == -1) {
      if (infer >= 0) return invalid_argument("shape ", shape_to_string(spec), " has more than one -1");
      infer = static_cast<int64_t>(i);
      continue;
    }
    if (d < -1) return invalid_argument("shape ", shape_to_string(spec), " has invalid dimension ", d);
    if (d == 0 && !allowzero) {
      if (i >= in.size()) {
        return invalid_argument("shape ", shape_to_string(spec), ": 0 at index ", i, " copies a dimension the input ",
                                shape_to_string(in), " does not have");
      }
      d = in[i];
    }
    if (d == 0) has_zero = true;
    out[i] = d;
    if (d != 0) {
      if (known > std::numeric_limits<int64_t>::max() / d) return invalid_argument("shape overflows");
      known *= d;
    }
  }
  const int64_t n = shape_numel(in);
  if (infer >= 0) {
    if (allowzero && has_zero) {
      return invalid_argument("shape ", shape_to_string(spec), " has both 0 and -1 with allowzero=1");
    }
    if (has_zero) {
      // product of known dims is 0: -1 is ambiguous unless the input is also empty
      if (n != 0) {
        return invalid_argument("cannot reshape ", shape_to_string(in), " to ", shape_to_string(spec));
      }
      return invalid_argument("cannot infer -1 in ", shape_to_string(spec), " for empty input ", shape_to_string(in));
    }
    if (n % known != 0) {
      return invalid_argument("cannot reshape ", shape_to_string(in), " (", n, " elements) to ", shape_to_string(spec));
    }
    out[static_cast<size_t>(infer)] = n / known;
  }
  if (shape_numel(out) != n) {
    return invalid_argument("cannot reshape ", shape_to_string(in), " (", n, " elements) to ", shape_to_string(out));
  }
  return out;
}

Result<std::unique_ptr<Kernel>> create_reshape(const KernelInit& init) {
  const int ver = init.since_version();
  XONNX_ASSIGN_OR_RETURN(int64_t allowzero, init.get_int("allowzero", 0));
  std::vector<int64_t> attr_shape;
  if (ver < 5) {
    XONNX_ASSIGN_OR_RETURN(attr_shape, init.get_ints("shape"));
  }
  return make_kernel([ver, allowzero, attr_shape](KernelContext& ctx) -> Status {
    XONNX_ASSIGN_OR_RETURN(const Tensor* x, tensor_input(ctx, 0, "data"));
    Shape spec = attr_shape;
    if (ver >= 5) {
      XONNX_ASSIGN_OR_RETURN(spec, int_list_input(ctx, 1, "shape"));
    }
    XONNX_ASSIGN_OR_RETURN(Shape out, reshape_target(x->shape(), spec, allowzero != 0));
    ctx.set_output(0, x->reshaped(out));
    return Status::ok();
  });
}

Result<std::unique_ptr<Kernel>> create_flatten(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(int64_t axis, init.get_int("axis", 1));
  return make_kernel([axis](KernelContext& ctx) -> Status {
    XONNX_ASSIGN_OR_RETURN(const Tensor* x, tensor_input(ctx, 0, "input"));
    const int64_t r = static_cast<int64_t>(x->rank());
    int64_t a = axis < 0 ? axis + r : axis;
    if (a < 0 || a > r) return invalid_argument("axis ", axis, " is out of range for rank ", r);
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < r; ++i) (i < a ? outer : inner) *= x->dim(static_cast<size_t>(i));
    ctx.set_output(0, x->reshaped({outer, inner}));
    return Status::ok();
  });
}

// ---------------------------------------------------------------- Squeeze / Unsqueeze
Result<std::unique_ptr<Kernel>> create_squeeze(const KernelInit& init) {
  const int ver = init.since_version();
  std::vector<int64_t> attr_axes;
  const bool has_attr_axes = ver < 13 && init.has_attr("axes");
  if (ver < 13) {
    XONNX_ASSIGN_OR_RETURN(attr_axes, init.get_ints("axes"));
  }
  return make_kernel([ver, attr_axes, has_attr_axes](KernelContext& ctx) -> Status {
    XONNX_ASSIGN_OR_RETURN(const Tensor* x, tensor_input(ctx, 0, "data"));
    Shape axes = attr_axes;
    bool given = has_attr_axes;
    if (ver >= 13 && ctx.has_input(1)) {
      XONNX_ASSIGN_OR_RETURN(axes, int_list_input(ctx, 1, "axes"));
      given = true;
    }
    const int64_t r = static_cast<int64_t>(x->rank());
    Shape drop(x->rank(), 0);  // flags; a Shape so run() does not allocate
    if (given) {
      for (int64_t a : axes) {
        XONNX_ASSIGN_OR_RETURN(int64_t n, normalize_axis(a, r, "axes value"));
        if (drop[static_cast<size_t>(n)]) return invalid_argument("axes has duplicate axis ", a);
        if (x->dim(static_cast<size_t>(n)) != 1) {
          return invalid_argument("cannot squeeze axis ", a, " of size ", x->dim(static_cast<size_t>(n)),
                                  " (input shape ", shape_to_string(x->shape()), ")");
        }
        drop[static_cast<size_t>(n)] = true;
      }
    } else {
      for (size_t i = 0; i < x->rank(); ++i) drop[i] = x->dim(i) == 1;
    }
    Shape out;
    for (size_t i = 0; i < x->rank(); ++i)
      if (!drop[i]) out.push_back(x->dim(i));
    ctx.set_output(0, x->reshaped(out));
    return Status::ok();
  });
}

Result<std::unique_ptr<Kernel>> create_unsqueeze(const KernelInit& init) {
  const int ver = init.since_version();
  std::vector<int64_t> attr_axes;
  if (ver < 13) {
    XONNX_ASSIGN_OR_RETURN(attr_axes, init.get_ints("axes"));
    if (attr_axes.empty()) return invalid_model("Unsqueeze requires the 'axes' attribute");
  }
  return make_kernel([ver, attr_axes](KernelContext& ctx) -> Status {
    XONNX_ASSIGN_OR_RETURN(const Tensor* x, tensor_input(ctx, 0, "data"));
    Shape axes = attr_axes;
    if (ver >= 13) {
      XONNX_ASSIGN_OR_RETURN(axes, int_list_input(ctx, 1, "axes"));
    }
    const int64_t out_rank = static_cast<int64_t>(x->rank() + axes.size());
    Shape ins(static_cast<size_t>(out_rank), 0);  // flags; a Shape so run() does not allocate
    for (int64_t a : axes) {
      XONNX_ASSIGN_OR_RETURN(int64_t n, normalize_axis(a, out_rank, "axes value"));
      if (ins[static_cast<size_t>(n)]) return invalid_argument("axes has duplicate axis ", a);
      ins[static_cast<size_t>(n)] = true;
    }
    Shape out;
    size_t k = 0;
    for (int64_t i = 0; i < out_rank; ++i) out.push_back(ins[static_cast<size_t>(i)] ? 1 : x->dim(k++));
    ctx.set_output(0, x->reshaped(out));
    return Status::ok();
  });
}

// ---------------------------------------------------------------- Identity
Result<std::unique_ptr<Kernel>> create_identity(const KernelInit&) {
  return make_kernel([](KernelContext& ctx) -> Status {
    ctx.set_output_value(0, ctx.input_value(0));
    return Status::ok();
  });
}

// ---------------------------------------------------------------- Expand
Result<std::unique_ptr<Kernel>> create_expand(const KernelInit&) {
  return make_kernel([](KernelContext& ctx) -> Status {
    XONNX_ASSIGN_OR_RETURN(const Tensor* x, tensor_input(ctx, 0, "input"));
    XONNX_ASSIGN_OR_RETURN(Shape shape, int_list_input(ctx, 1, "shape"));
    for (int64_t d : shape) {
      if (d < 0) return invalid_argument("shape ", shape_to_string(shape), " has a negative dimension");
    }
    XONNX_ASSIGN_OR_RETURN(Shape out_shape, ref::broadcast_shapes(x->shape(), shape));
    if (out_shape == x->shape()) {
      ctx.set_output(0, *x);
      return Status::ok();
    }
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), out_shape));
    ElemCopy cp(*x, y);
    ref::for_each_broadcast(out_shape, {x->shape()},
                            [&](int64_t o, const std::vector<int64_t>& off) { cp.one(o, off[0]); });
    return Status::ok();
  });
}

// ---------------------------------------------------------------- ConstantOfShape
Result<std::unique_ptr<Kernel>> create_constant_of_shape(const KernelInit& init) {
  Tensor value;
  if (init.has_attr("value")) {
    XONNX_ASSIGN_OR_RETURN(value, init.require_tensor("value"));
    if (value.numel() != 1) {
      return invalid_model("attribute 'value' must hold exactly one element, got shape ",
                           shape_to_string(value.shape()));
    }
  } else {
    value = Tensor::scalar<float>(0.0f);
  }
  return make_kernel([value](KernelContext& ctx) -> Status {
    XONNX_ASSIGN_OR_RETURN(Shape shape, int_list_input(ctx, 0, "input"));
    for (int64_t d : shape) {
      if (d < 0) return invalid_argument("shape ", shape_to_string(shape), " has a negative dimension");
    }
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, value.dtype(), shape));
    ElemCopy cp(value, y);
    const int64_t n = y->numel();
    for (int64_t i = 0; i < n; ++i) cp.one(i, 0);
    return Status::ok();
  });
}

// ---------------------------------------------------------------- Constant
Result<std::unique_ptr<Kernel>> create_constant(const KernelInit& init) {
  Tensor value;
  int count = 0;
  for (const Attribute& a : init.node().attributes) {
    if (a.name == "value") {
      if (a.type != AttrType::kTensor) return invalid_model("attribute 'value' must be a tensor");
      value = a.t;
    } else if (a.name == "value_float") {
      XONNX_ASSIGN_OR_RETURN(float f, init.require_float("value_float"));
      value = Tensor::scalar<float>(f);
    } else if (a.name == "value_floats") {
      XONNX_ASSIGN_OR_RETURN(std::vector<float> f, init.get_floats("value_floats"));
      value = Tensor::from_vector<float>(f, {static_cast<int64_t>(f.size())});
    } else if (a.name == "value_int") {
      XONNX_ASSIGN_OR_RETURN(int64_t v, init.require_int("value_int"));
      value = Tensor::scalar<int64_t>(v);
    } else if (a.name == "value_ints") {
      XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> v, init.get_ints("value_ints"));
      value = Tensor::from_vector<int64_t>(v, {static_cast<int64_t>(v.size())});
    } else if (a.name == "value_string") {
      XONNX_ASSIGN_OR_RETURN(std::string s, init.require_string("value_string"));
      value = Tensor::scalar<std::string>(s);
    } else if (a.name == "value_strings") {
      XONNX_ASSIGN_OR_RETURN(std::vector<std::string> v, init.get_strings("value_strings"));
      value = Tensor::from_vector<std::string>(v, {static_cast<int64_t>(v.size())});
    } else if (a.name == "sparse_value") {
      // The loader densifies SPARSE_TENSOR attributes into Attribute::t.
      if (a.type != AttrType::kSparseTensor) return invalid_model("attribute 'sparse_value' must be a sparse tensor");
      value = a.t;
    } else {
      continue;
    }
    ++count;
  }
  if (count != 1) {
    return invalid_model(
        "Constant needs exactly one of value, value_float(s), value_int(s), "
        "value_string(s), sparse_value; got ",
        count);
  }
  if (!value.defined()) return invalid_model("Constant 'value' tensor is undefined");
  return make_kernel([value](KernelContext& ctx) -> Status {
    ctx.set_output(0, value);
    return Status::ok();
  });
}

// ---------------------------------------------------------------- Range
Result<std::unique_ptr<Kernel>> create_range(const KernelInit&) {
  return make_kernel([](KernelContext& ctx) -> Status {
    const Tensor* in[3];
    const char* names[3] = {"start", "limit", "delta"};
    for (size_t i = 0; i < 3; ++i) {
      XONNX_ASSIGN_OR_RETURN(in[i], tensor_input(ctx, i, names[i]));
      if (in[i]->numel() != 1) {
        return invalid_argument(names[i], " must be a scalar, got shape ", shape_to_string(in[i]->shape()));
      }
      if (in[i]->dtype() != in[0]->dtype()) {
        return invalid_argument(names[i], " has type ", dtype_name(in[i]->dtype()), ", expected ",
                                dtype_name(in[0]->dtype()));
      }
    }
    const DataType dt = in[0]->dtype();
    if (dtype_is_integer(dt)) {
      const int64_t start = in[0]->get_as_int64(0), limit = in[1]->get_as_int64(0), delta = in[2]->get_as_int64(0);
      if (delta == 0) return invalid_argument("delta must not be 0");
      // n = max(ceil((limit - start) / delta), 0), computed in uint64 so nothing overflows.
      uint64_t n = 0;
      if (delta > 0 && limit > start) {
        const uint64_t span = static_cast<uint64_t>(limit) - static_cast<uint64_t>(start);
        n = (span - 1) / static_cast<uint64_t>(delta) + 1;
      } else if (delta < 0 && limit < start) {
        const uint64_t span = static_cast<uint64_t>(start) - static_cast<uint64_t>(limit);
        n = (span - 1) / (uint64_t{0} - static_cast<uint64_t>(delta)) + 1;
      }
      if (n > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
        return invalid_argument("Range output too large (", n, " elements)");
      }
      XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dt, {static_cast<int64_t>(n)}));
      XONNX_DISPATCH_INT(dt, return unsupported("Range of type ", dtype_name(dt)), {
        T* out = y->data<T>();
        for (uint64_t i = 0; i < n; ++i) {
          // start + i * delta lies between start and limit; modular uint64 math gives it exactly
          const uint64_t v = static_cast<uint64_t>(start) + i * static_cast<uint64_t>(delta);
          out[i] = static_cast<T>(static_cast<int64_t>(v));
        }
      });
      return Status::ok();
    }
    XONNX_DISPATCH_FLOAT(dt, return unsupported("Range of type ", dtype_name(dt)), {
      using C = compute_t<T>;
      const C start = to_compute(in[0]->data<T>()[0]);
      const C limit = to_compute(in[1]->data<T>()[0]);
      const C delta = to_compute(in[2]->data<T>()[0]);
      if (delta == C(0)) return invalid_argument("delta must not be 0");
      const double cnt =
          std::ceil((static_cast<double>(limit) - static_cast<double>(start)) / static_cast<double>(delta));
      if (std::isnan(cnt)) return invalid_argument("Range with NaN/inf arguments");
      if (cnt > 1e9) return invalid_argument("Range output too large (", cnt, " elements)");
      const int64_t n = cnt > 0 ? static_cast<int64_t>(cnt) : 0;
      XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dt, {n}));
      T* out = y->data<T>();
      for (int64_t i = 0; i < n; ++i) out[i] = from_compute<T>(static_cast<C>(start + static_cast<C>(i) * delta));
    });
    return Status::ok();
  });
}

// ---------------------------------------------------------------- EyeLike
Result<std::unique_ptr<Kernel>> create_eyelike(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(int64_t k, init.get_int("k", 0));
  const bool has_dtype = init.has_attr("dtype");
  XONNX_ASSIGN_OR_RETURN(int64_t dtype_attr, init.get_int("dtype", 0));
  if (has_dtype && !dtype_is_known(static_cast<int32_t>(dtype_attr))) {
    return invalid_model("attribute 'dtype' has unknown data type ", dtype_attr);
  }
  return make_kernel([k, has_dtype, dtype_attr](KernelContext& ctx) -> Status {
    XONNX_ASSIGN_OR_RETURN(const Tensor* x, tensor_input(ctx, 0, "input"));
    if (x->rank() != 2) {
      return invalid_argument("input must be 2-D, got shape ", shape_to_string(x->shape()));
    }
    const DataType dt = has_dtype ? static_cast<DataType>(dtype_attr) : x->dtype();
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dt, x->shape()));
    const int64_t rows = x->dim(0), cols = x->dim(1);
    const int64_t lim = rows + cols + 1;  // clamp k so i + k cannot overflow
    const int64_t kk = k > lim ? lim : (k < -lim ? -lim : k);
    XONNX_DISPATCH_ALL_BYTES(dt, return unsupported("EyeLike of type ", dtype_name(dt)), {
      T* out = y->data<T>();
      const T one = from_compute<T>(static_cast<compute_t<T>>(1));
      for (int64_t i = 0; i < rows; ++i) {
        const int64_t j = i + kk;
        if (j >= 0 && j < cols) out[i * cols + j] = one;
      }
    });
    return Status::ok();
  });
}

}  // namespace

void register_shape_ops(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "Shape", 1, kLatestVersion, create_shape);
  XONNX_REGISTER(registry, "", "Size", 1, kLatestVersion, create_size);
  XONNX_REGISTER(registry, "", "Reshape", 1, kLatestVersion, create_reshape);
  XONNX_REGISTER(registry, "", "Flatten", 1, kLatestVersion, create_flatten);
  XONNX_REGISTER(registry, "", "Squeeze", 1, kLatestVersion, create_squeeze);
  XONNX_REGISTER(registry, "", "Unsqueeze", 1, kLatestVersion, create_unsqueeze);
  XONNX_REGISTER(registry, "", "Identity", 1, kLatestVersion, create_identity);
  XONNX_REGISTER(registry, "", "Expand", 8, kLatestVersion, create_expand);
  XONNX_REGISTER(registry, "", "ConstantOfShape", 9, kLatestVersion, create_constant_of_shape);
  XONNX_REGISTER(registry, "", "Constant", 1, kLatestVersion, create_constant);
  XONNX_REGISTER(registry, "", "Range", 11, kLatestVersion, create_range);
  XONNX_REGISTER(registry, "", "EyeLike", 9, kLatestVersion, create_eyelike);
}

}  // namespace xonnx
