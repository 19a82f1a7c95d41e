// Declarations shared by the files of the quantize family (quantize.cc, quantize_int.cc).
#pragma once

#include "runtime/ops/registry.h"

namespace xonnx {

void register_quantize_int_ops(OpRegistry& registry);  // quantize_int.cc: MatMulInteger, QLinear*, ...

}  // namespace xonnx
