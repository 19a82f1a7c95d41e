// The multipliers an inference BatchNormalization's own kernels share (batch_norm.cc, and
// conv_batch_norm.cc, which normalizes a 1x1 Conv's input in cache), applied by the kernel
// table's scale_shift_clamp: the same bits as the reference (ops/ref/normalization.cc).
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace xonnx {
namespace opt {

// mul and add for c channels, as the reference: m = scale / sqrt(var + epsilon) and
// bias - mean * m in double, each rounded once (the latter one fma: the same bits whether or
// not the compiler contracts, as GCC does on aarch64).
inline void fold_batch_norm(const float* scale, const float* bias, const float* mean, const float* var, int64_t c,
                            double epsilon, std::vector<float>& mul, std::vector<float>& add) {
  mul.resize(static_cast<size_t>(c));
  add.resize(static_cast<size_t>(c));
  for (int64_t i = 0; i < c; ++i) {
    const double m = double(scale[i]) / std::sqrt(double(var[i]) + epsilon);
    mul[static_cast<size_t>(i)] = static_cast<float>(m);
    add[static_cast<size_t>(i)] = static_cast<float>(std::fma(-double(mean[i]), m, double(bias[i])));
  }
}

}  // namespace opt
}  // namespace xonnx
