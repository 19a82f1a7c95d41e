// Shared helpers for reference kernels: broadcasting, strides, input access and small utilities.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/core/tensor.h"
#include "runtime/ops/kernel.h"

namespace xonnx {
namespace ref {

// Row-major strides (in elements) of `shape`.
Shape contiguous_strides(const Shape& shape);

// Multidirectional (numpy) broadcast of two or more shapes; fails naming both shapes.
Result<Shape> broadcast_shapes(const Shape& a, const Shape& b);
Result<Shape> broadcast_shapes(const std::vector<Shape>& shapes);

// For an input of `in_shape` broadcast to `out_shape`, the element strides to use when
// walking the output in row-major order (0 where the input dimension is broadcast).
Shape broadcast_strides(const Shape& in_shape, const Shape& out_shape);

// Calls fn(out_index, in_offsets) for every output element of a broadcast over any number of
// inputs; in_offsets[k] is the flat element offset into input k. (Hot element-wise loops use
// the collapsed contiguous runs of broadcast.h instead.)
template <typename Fn>
void for_each_broadcast(const Shape& out_shape, const std::vector<Shape>& in_shapes, Fn&& fn) {
  const size_t rank = out_shape.size();
  const size_t n_in = in_shapes.size();
  std::vector<std::vector<int64_t>> strides(n_in);
  for (size_t k = 0; k < n_in; ++k) strides[k] = broadcast_strides(in_shapes[k], out_shape);
  const int64_t total = shape_numel(out_shape);
  std::vector<int64_t> idx(rank, 0);
  std::vector<int64_t> off(n_in, 0);
  for (int64_t o = 0; o < total; ++o) {
    fn(o, off);
    // increment the multi-index and the input offsets
    for (size_t d = rank; d-- > 0;) {
      ++idx[d];
      for (size_t k = 0; k < n_in; ++k) off[k] += strides[k][d];
      if (idx[d] < out_shape[d]) break;
      for (size_t k = 0; k < n_in; ++k) off[k] -= strides[k][d] * out_shape[d];
      idx[d] = 0;
    }
  }
}

// float, double, float16 or bfloat16: the types XONNX_DISPATCH_FLOAT covers.
inline bool is_float_type(DataType t) {
  return t == DataType::kFloat || t == DataType::kDouble || t == DataType::kFloat16 || t == DataType::kBFloat16;
}

// Input i as a tensor; fails naming `what` when it is not one (e.g. a sequence).
Result<const Tensor*> tensor_input(KernelContext& ctx, size_t i, const char* what);

// Input i as a list of integers: a 0-D or 1-D int32/int64 tensor (axes, pads, shape, ...).
// A Shape (small vector), so that shape-computing kernels do not allocate in run().
Result<Shape> int_list_input(KernelContext& ctx, size_t i, const char* what);

// The auto_pad attribute of convolution and pooling ops: NOTSET (default), SAME_UPPER,
// SAME_LOWER or VALID. `name`: the attribute's name (a fused node prefixes its parts').
Result<std::string> get_auto_pad(const KernelInit& init, const std::string& name = "auto_pad");

// One spatial dim under auto_pad SAME_UPPER / SAME_LOWER: out = ceil(in / stride), and the
// padding that makes the windows (of `dilated_kernel` elements) cover it, split evenly with
// the odd element at the end (SAME_UPPER) or at the beginning (SAME_LOWER).
struct SamePadding {
  int64_t out, pad_begin, pad_end;
};
SamePadding same_padding(int64_t in, int64_t stride, int64_t dilated_kernel, bool upper);

// One spatial dim of a pool under explicit pads: the number of windows of `dilated_kernel`
// elements, stride apart. ceil_mode keeps a last partial window only if it starts inside the
// input or the begin padding. -1 when the padded input is shorter than one window.
int64_t pool_output_size(int64_t in, int64_t pad_begin, int64_t pad_end, int64_t dilated_kernel, int64_t stride,
                         bool ceil_mode);

// Every element of a numeric tensor as double (float types exactly, via their compute type).
std::vector<double> load_doubles(const Tensor& t);
// The same for an input that must be float, double, float16 or bfloat16; fails naming `what`.
Result<std::vector<double>> load_float_doubles(const Tensor& t, const char* what);

// Scratch beside a kernel's outputs (a score matrix, a work array) whose size the inputs' dims
// multiply to: an error naming `what` when any count is negative, their product overflows, or
// it needs more than the session's tensor cap, before anything is allocated.
Status check_scratch(const KernelContext& ctx, const char* what, int64_t elem_bytes,
                     std::initializer_list<int64_t> dims);

// Stores v (one value per element) into a float, double, float16 or bfloat16 tensor, rounding
// to its type; other types are left untouched.
void store_doubles(Tensor* t, const std::vector<double>& v);

}  // namespace ref
}  // namespace xonnx
