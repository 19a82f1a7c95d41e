// Declarations shared by the files of the quantize family (quantize.cc, qlinear.cc).
#pragma once

#include "runtime/ops/registry.h"

namespace xonnx {

void register_qlinear_ops(OpRegistry& registry);  // qlinear.cc: MatMulInteger, QLinear*, ...

}  // namespace xonnx
