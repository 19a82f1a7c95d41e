// Declarations shared by the files of the misc family (misc.cc, misc_ml.cc, misc_strings.cc).
#pragma once

#include "runtime/ops/registry.h"

namespace xonnx {

void register_misc_string_ops(OpRegistry& registry);  // misc_strings.cc: string ops
void register_misc_ml_ops(OpRegistry& registry);      // misc_ml.cc: ai.onnx.ml ops

}  // namespace xonnx
