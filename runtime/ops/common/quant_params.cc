#include "runtime/ops/common/quant_params.h"

#include <cmath>

namespace xonnx {

Result<float> constant_scale(const KernelInit& init, size_t i, const char* what) {
  const Tensor* t = init.constant_input(i);
  if (!t || t->dtype() != DataType::kFloat || t->numel() != 1)
    return unsupported(what, " must be a constant float scalar");
  const float s = t->data<float>()[0];
  if (!(s > 0.0f) || !std::isnormal(s)) return unsupported(what, " is not a normal positive float");
  return s;
}

Result<int32_t> constant_zero_point(const KernelInit& init, size_t i, const char* what, DataType* type) {
  const Tensor* t = init.constant_input(i);
  if (!t || !dtype_is_8bit_int(t->dtype()) || t->numel() != 1)
    return unsupported(what, " must be a constant 8-bit scalar");
  *type = t->dtype();
  return static_cast<int32_t>(t->get_as_int64(0));
}

}  // namespace xonnx
