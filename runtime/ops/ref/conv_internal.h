// Declarations shared by the files of the convolution family (conv.cc, conv_deform.cc).
#pragma once

#include "runtime/ops/registry.h"

namespace xonnx {

void register_deform_conv_ops(OpRegistry& registry);  // conv_deform.cc: DeformConv

}  // namespace xonnx
