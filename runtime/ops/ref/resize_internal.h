// Declarations shared by the files of the resize family (resize.cc, resize_grid.cc, resize_roi.cc).
#pragma once

#include "runtime/ops/registry.h"

namespace xonnx {

void register_resize_grid_ops(OpRegistry& registry);  // resize_grid.cc: GridSample, AffineGrid
void register_resize_roi_ops(OpRegistry& registry);   // resize_roi.cc: RoiAlign, Col2Im

}  // namespace xonnx
