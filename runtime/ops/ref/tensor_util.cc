#include "runtime/ops/ref/tensor_util.h"

#include <cstring>

namespace xonnx {
namespace ref {
namespace {

Result<size_t> element_size(DataType t) {
  if (t == DataType::kString) return sizeof(std::string);  // handled separately
  const int bits = dtype_bits(t);
  if (bits < 8) return unsupported("slicing ", dtype_name(t), " tensors along an axis");
  return static_cast<size_t>(bits / 8);
}

// Copies `count` elements from src[src_off] to dst[dst_off] (element offsets).
void copy_elements(const Tensor& src, int64_t src_off, Tensor& dst, int64_t dst_off, int64_t count, size_t esize) {
  if (src.dtype() == DataType::kString) {
    for (int64_t i = 0; i < count; ++i) dst.string_data()[dst_off + i] = src.string_data()[src_off + i];
    return;
  }
  std::memcpy(static_cast<char*>(dst.raw_data()) + dst_off * esize,
              static_cast<const char*>(src.raw_data()) + src_off * esize, count * esize);
}

}  // namespace

Result<Tensor> take_along_axis(const Tensor& src, int64_t axis, int64_t index) {
  if (axis < 0 || axis >= static_cast<int64_t>(src.rank())) {
    return invalid_argument("axis ", axis, " out of range for rank ", src.rank());
  }
  if (index < 0 || index >= src.dim(axis)) {
    return invalid_argument("index ", index, " out of range for dimension ", src.dim(axis));
  }
  XONNX_ASSIGN_OR_RETURN(size_t esize, element_size(src.dtype()));
  Shape out_shape = src.shape();
  out_shape.erase(out_shape.begin() + axis);
  XONNX_ASSIGN_OR_RETURN(Tensor out, Tensor::allocate(src.dtype(), out_shape));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= src.dim(d);
  for (size_t d = axis + 1; d < src.rank(); ++d) inner *= src.dim(d);
  const int64_t len = src.dim(axis);
  for (int64_t o = 0; o < outer; ++o) {
    copy_elements(src, (o * len + index) * inner, out, o * inner, inner, esize);
  }
  return out;
}

Result<Tensor> stack_along_axis(const std::vector<Tensor>& items, int64_t axis) {
  if (items.empty()) return invalid_argument("cannot stack zero tensors");
  const Shape& shape = items[0].shape();
  if (axis < 0 || axis > static_cast<int64_t>(shape.size())) {
    return invalid_argument("stack axis ", axis, " out of range for rank ", shape.size());
  }
  for (const Tensor& t : items) {
    if (t.shape() != shape || t.dtype() != items[0].dtype()) {
      return invalid_argument("cannot stack ", shape_to_string(t.shape()), " with ", shape_to_string(shape));
    }
  }
  std::vector<Tensor> expanded;
  Shape with_axis = shape;
  with_axis.insert(with_axis.begin() + axis, 1);
  for (const Tensor& t : items) expanded.push_back(t.reshaped(with_axis));
  return concat_along_axis(expanded, axis);
}

Result<Tensor> concat_along_axis(const std::vector<Tensor>& items, int64_t axis) {
  if (items.empty()) return invalid_argument("cannot concatenate zero tensors");
  const Tensor& first = items[0];
  const int64_t rank = static_cast<int64_t>(first.rank());
  if (axis < 0 || axis >= rank) return invalid_argument("concat axis ", axis, " out of range for rank ", rank);
  Shape out_shape = first.shape();
  out_shape[axis] = 0;
  for (const Tensor& t : items) {
    if (t.dtype() != first.dtype() || static_cast<int64_t>(t.rank()) != rank) {
      return invalid_argument("cannot concatenate ", dtype_name(t.dtype()), shape_to_string(t.shape()), " with ",
                              dtype_name(first.dtype()), shape_to_string(first.shape()));
    }
    for (int64_t d = 0; d < rank; ++d) {
      if (d != axis && t.dim(d) != first.dim(d)) {
        return invalid_argument("cannot concatenate ", shape_to_string(t.shape()), " with ",
                                shape_to_string(first.shape()), " along axis ", axis);
      }
    }
    out_shape[axis] += t.dim(axis);
  }
  XONNX_ASSIGN_OR_RETURN(size_t esize, element_size(first.dtype()));
  XONNX_ASSIGN_OR_RETURN(Tensor out, Tensor::allocate(first.dtype(), out_shape));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= first.dim(d);
  for (int64_t d = axis + 1; d < rank; ++d) inner *= first.dim(d);
  const int64_t out_row = out_shape[axis] * inner;
  int64_t col = 0;
  for (const Tensor& t : items) {
    const int64_t row = t.dim(axis) * inner;
    for (int64_t o = 0; o < outer; ++o) copy_elements(t, o * row, out, o * out_row + col, row, esize);
    col += row;
  }
  return out;
}

}  // namespace ref
}  // namespace xonnx
