// Declarations shared by the files of the layout family (layout.cc, layout_pad.cc).
#pragma once

#include "runtime/ops/registry.h"

namespace xonnx {

void register_layout_pad_ops(OpRegistry& registry);  // layout_pad.cc: Pad, DepthToSpace, ...

}  // namespace xonnx
