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
// shape except along `axis` (already normalized); returns, for every element of `indices`,
// the flat offset into `data` it addresses.
inline Result<std::vector<int64_t>> element_offsets(const Tensor& data, const Tensor& indices, int64_t axis) {
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
  XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> idx, index_values(indices, "indices"));
  const int64_t dim = data.dim(static_cast<size_t>(axis));
  for (int64_t& i : idx) XONNX_RETURN_IF_ERROR(fix_index(i, dim, "indices"));
  const std::vector<int64_t> xs = contiguous_strides(data.shape());
  const int64_t total = indices.numel();
  std::vector<int64_t> offsets(static_cast<size_t>(total));
  std::vector<int64_t> pos(static_cast<size_t>(r), 0);
  for (int64_t o = 0; o < total; ++o) {
    int64_t off = 0;
    for (int64_t d = 0; d < r; ++d) {
      const int64_t c = d == axis ? idx[static_cast<size_t>(o)] : pos[static_cast<size_t>(d)];
      off += c * xs[static_cast<size_t>(d)];
    }
    offsets[static_cast<size_t>(o)] = off;
    for (size_t d = static_cast<size_t>(r); d-- > 0;) {
      if (++pos[d] < indices.dim(d)) break;
      pos[d] = 0;
    }
  }
  return offsets;
}

}  // namespace ref

}  // namespace xonnx
