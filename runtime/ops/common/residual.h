// The layout pass's residual Conv: a com.xonnx.nhwc Conv with a fourth input Z (the Add that
// alone read the Conv's output; kConvResidualInput, ops/internal_ops.h) computes
// clamp(conv(X) + B + Z, activation_min, activation_max). The fast kernels add Z where the
// Conv's output is still in cache; Z of any other shape than the output (a broadcasting Add)
// is left to the reference twin.
#pragma once

#include <cstdint>

namespace xonnx {

// y = clamp(y + z, lo, hi) over `rows` rows of `cols` values, `ld` apart in both; NaN stays NaN
// (the comparisons are false), as in Relu and Clip.
inline void add_residual_clamped(float* y, const float* z, int64_t rows, int64_t cols, int64_t ld, float lo,
                                 float hi) {
  for (int64_t r = 0; r < rows; ++r) {
    float* yr = y + r * ld;
    const float* zr = z + r * ld;
    for (int64_t c = 0; c < cols; ++c) {
      float v = yr[c] + zr[c];
      v = v < lo ? lo : v;
      yr[c] = v > hi ? hi : v;
    }
  }
}

}  // namespace xonnx
