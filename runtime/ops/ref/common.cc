#include "runtime/ops/ref/common.h"

#include <algorithm>

namespace xonnx {
namespace ref {

std::vector<int64_t> contiguous_strides(const Shape& shape) {
  std::vector<int64_t> s(shape.size(), 1);
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

std::vector<int64_t> broadcast_strides(const Shape& in_shape, const Shape& out_shape) {
  const size_t rank = out_shape.size();
  std::vector<int64_t> strides(rank, 0);
  const std::vector<int64_t> in_strides = contiguous_strides(in_shape);
  const size_t lead = rank - in_shape.size();
  for (size_t i = 0; i < in_shape.size(); ++i) {
    strides[lead + i] = in_shape[i] == 1 ? 0 : in_strides[i];
  }
  return strides;
}

}  // namespace ref
}  // namespace xonnx
