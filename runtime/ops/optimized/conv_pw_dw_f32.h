// The own fused pointwise + depthwise Conv (conv_pw_dw_f32.cc), which the layout pass asks
// about before it fuses: without it the fused op would run only on its reference.
#pragma once

namespace xonnx {
namespace opt {

// True when the optimized kernels are on and this CPU runs the fused kernel (AVX-512).
bool pointwise_depthwise_available();

}  // namespace opt
}  // namespace xonnx
