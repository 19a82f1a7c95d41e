// Declarations shared by the files of the gather/scatter family (gather_scatter.cc,
// gather_scatter_scatter.cc).
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/core/tensor.h"
#include "runtime/ops/ref/common.h"
#include "runtime/ops/registry.h"

namespace xonnx {

void register_gather_scatter_scatter_ops(OpRegistry& registry);  // gather_scatter_scatter.cc

namespace ref {

// Index tensors: int32 or int64 only.
inline Result<std::vector<int64_t>> index_values(const Tensor& t, const char* what) {
  if (t.dtype() != DataType::kInt32 && t.dtype() != DataType::kInt64) {
    return invalid_argument(what, " must be int32 or int64, got ", dtype_name(t.dtype()));
  }
  return t.to_int64_vector();
}

// Normalizes a (possibly negative) index into [0, dim) or fails.
inline Status fix_index(int64_t& i, int64_t dim, const char* what) {
  const int64_t orig = i;
  if (i < 0) i += dim;
  if (i < 0 || i >= dim) {
    return invalid_argument(what, " value ", orig, " is out of range [", -dim, ", ", dim - 1, "]");
  }
  return Status::ok();
}

// GatherElements / ScatterElements: `indices` must have the rank of `data` and fit inside its
// shape except along `axis` (already normalized). Calls visit(o, offset) for every element o of
// `indices` in order, with the flat offset into `data` it addresses; fails on the first index
// out of range. Row by row, without a table of offsets: Faster R-CNN's RoI pooling scatters
// 12.5M elements, whose offsets alone would take 100 MB.
template <typename Visit>
Status visit_element_offsets(const Tensor& data, const Tensor& indices, int64_t axis, Visit visit) {
  const int64_t r = static_cast<int64_t>(data.rank());
  if (static_cast<int64_t>(indices.rank()) != r) {
    return invalid_argument("indices shape ", shape_to_string(indices.shape()), " must have the rank of data shape ",
                            shape_to_string(data.shape()));
  }
  for (int64_t d = 0; d < r; ++d) {
    if (d != axis && indices.dim(static_cast<size_t>(d)) > data.dim(static_cast<size_t>(d))) {
      return invalid_argument("indices shape ", shape_to_string(indices.shape()), " exceeds data shape ",
                              shape_to_string(data.shape()), " at axis ", d);
    }
  }
  if (indices.dtype() != DataType::kInt32 && indices.dtype() != DataType::kInt64) {
    return invalid_argument("indices must be int32 or int64, got ", dtype_name(indices.dtype()));
  }
  const int64_t total = indices.numel();
  if (total == 0) return Status::ok();
  const bool wide = indices.dtype() == DataType::kInt64;
  const int64_t* i64 = wide ? indices.data<int64_t>() : nullptr;
  const int32_t* i32 = wide ? nullptr : indices.data<int32_t>();
  const std::vector<int64_t> xs = contiguous_strides(data.shape());
  const int64_t dim = data.dim(static_cast<size_t>(axis)), axis_stride = xs[static_cast<size_t>(axis)];
  const int64_t last = indices.dim(static_cast<size_t>(r - 1)), rows = total / last;
  // row_base: the offset of the row's first element without the axis' term.
  std::vector<int64_t> pos(static_cast<size_t>(r), 0);
  int64_t row_base = 0;
  for (int64_t row = 0, o = 0; row < rows; ++row) {
    for (int64_t j = 0; j < last; ++j, ++o) {
      int64_t i = wide ? i64[o] : i32[o];
      XONNX_RETURN_IF_ERROR(fix_index(i, dim, "indices"));
      visit(o, row_base + i * axis_stride + (axis == r - 1 ? 0 : j));
    }
    for (int64_t d = r - 2; d >= 0; --d) {  // the next row: carry over the outer dimensions
      const size_t u = static_cast<size_t>(d);
      const int64_t step = d == axis ? 0 : xs[u];
      if (++pos[u] < indices.dim(u)) {
        row_base += step;
        break;
      }
      row_base -= step * (pos[u] - 1);
      pos[u] = 0;
    }
  }
  return Status::ok();
}

}  // namespace ref

}  // namespace xonnx
