// Slicing and stacking along an axis for any byte-sized or string element type
// (used by Loop/Scan scan outputs and sequence ops).
#pragma once

#include <vector>

#include "runtime/core/tensor.h"

namespace xonnx {
namespace ref {

// src with dimension `axis` removed, at position `index` (a copy).
Result<Tensor> take_along_axis(const Tensor& src, int64_t axis, int64_t index);
// Stacks equally shaped tensors along a new dimension `axis`.
Result<Tensor> stack_along_axis(const std::vector<Tensor>& items, int64_t axis);
// Concatenates along an existing dimension `axis`.
Result<Tensor> concat_along_axis(const std::vector<Tensor>& items, int64_t axis);

}  // namespace ref
}  // namespace xonnx
