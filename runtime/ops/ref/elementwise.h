// Helpers shared by the one-input element-wise families (unary.cc, activation.cc):
// input checks and y = fn(x) maps that keep the input's type and shape.
#pragma once

#include "runtime/ops/kernel.h"
#include "runtime/ops/ref/common.h"

namespace xonnx {
namespace ref {

// Input 0 must be a tensor with a valid shape.
inline Status check_unary_input(KernelContext& ctx, const char* op) {
  if (!ctx.has_input(0) || !ctx.input(0).defined()) {
    return invalid_argument(op, ": input 0 must be a tensor");
  }
  if (ctx.input(0).numel() < 0) return invalid_argument(op, ": input 0 has an invalid shape");
  return Status::ok();
}

inline Status input_type_error(const char* op, DataType t, const char* expected) {
  return unsupported(op, ": input type ", dtype_name(t), " is not supported (expected ", expected, ")");
}

// The types XONNX_DISPATCH_NUMERIC covers (floats and ints; not bool, string or sub-byte).
inline bool is_numeric_type(DataType t) {
  bool ok = true;
  XONNX_DISPATCH_NUMERIC(t, ok = false, (void)sizeof(T));
  return ok;
}

// y[i] = fn(x[i]) for storage type T; fn receives and returns the compute type (float for
// fp16/bf16).
template <typename T, typename Fn>
void map_elements(const Tensor& x, Tensor* y, Fn& fn) {
  const T* in = x.data<T>();
  T* out = y->data<T>();
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) {
    out[i] = from_compute<T>(static_cast<compute_t<T>>(fn(to_compute(in[i]))));
  }
}

// y = fn(x) over a float tensor. fn receives float (for float/fp16/bf16) or double.
template <typename Fn>
Status map_float(KernelContext& ctx, const char* op, Fn fn) {
  XONNX_RETURN_IF_ERROR(check_unary_input(ctx, op));
  const Tensor& x = ctx.input(0);
  const DataType dt = x.dtype();
  if (!is_float_type(dt)) return input_type_error(op, dt, "float, double, float16 or bfloat16");
  XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dt, x.shape()));
  XONNX_DISPATCH_FLOAT(dt, return input_type_error(op, dt, "a float type"), map_elements<T>(x, y, fn));
  return Status::ok();
}

// Which integer types map_numeric accepts besides the floats.
enum class IntTypes { kAll, kSignedOnly };

// y = fn(x) over floats (computed as in map_float) and integers (in their own type).
template <typename Fn>
Status map_numeric(KernelContext& ctx, const char* op, IntTypes ints, Fn fn) {
  XONNX_RETURN_IF_ERROR(check_unary_input(ctx, op));
  const Tensor& x = ctx.input(0);
  const DataType dt = x.dtype();
  const bool signed_only = ints == IntTypes::kSignedOnly;
  const char* expected = signed_only ? "a float or signed integer type" : "a numeric type";
  if (!is_numeric_type(dt) || (signed_only && dtype_is_integer(dt) && !dtype_is_signed(dt))) {
    return input_type_error(op, dt, expected);
  }
  XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dt, x.shape()));
  XONNX_DISPATCH_NUMERIC(dt, return input_type_error(op, dt, expected), map_elements<T>(x, y, fn));
  return Status::ok();
}

}  // namespace ref
}  // namespace xonnx
