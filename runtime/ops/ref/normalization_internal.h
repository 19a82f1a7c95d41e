// Declarations shared by the files of the normalization family (normalization.cc, normalization_misc.cc).
#pragma once

#include "runtime/ops/registry.h"

namespace xonnx {

void register_normalization_misc_ops(OpRegistry& registry);  // normalization_misc.cc: LRN, LpNormalization, ...

}  // namespace xonnx
