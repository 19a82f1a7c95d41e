// What the layout pass (runtime/passes/layout_nhwc.h) may rewrite for the own kernels: only
// what this CPU's own kernels run (AVX-512), with the optimized kernels on. Elsewhere the
// rewritten ops would run on their reference twins.
#pragma once

#include "runtime/passes/layout_nhwc.h"

namespace xonnx {
namespace opt {

NhwcLayoutOptions layout_fusions();

}  // namespace opt
}  // namespace xonnx
