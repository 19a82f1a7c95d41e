// Shared helpers for reference kernels: broadcasting, strides, and small utilities.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/core/tensor.h"

namespace xonnx {
namespace ref {

// Row-major strides (in elements) of `shape`.
std::vector<int64_t> contiguous_strides(const Shape& shape);

// Multidirectional (numpy) broadcast of two or more shapes; fails naming both shapes.
Result<Shape> broadcast_shapes(const Shape& a, const Shape& b);
Result<Shape> broadcast_shapes(const std::vector<Shape>& shapes);

// For an input of `in_shape` broadcast to `out_shape`, the element strides to use when
// walking the output in row-major order (0 where the input dimension is broadcast).
std::vector<int64_t> broadcast_strides(const Shape& in_shape, const Shape& out_shape);

// Calls fn(out_index, in_offsets...) for every output element of a broadcast over N inputs.
// in_offsets[k] is the flat element offset into input k.
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

}  // namespace ref
}  // namespace xonnx
