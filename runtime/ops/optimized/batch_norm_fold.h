// The arithmetic an inference BatchNormalization shares between its own kernels (batch_norm.cc,
// and conv_batch_norm.cc, which normalizes a 1x1 Conv's input in cache): the same multipliers
// and expression, so the same bits as the reference (ops/ref/normalization.cc).
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace xonnx {
namespace opt {

// mul and add for c channels, as the reference: m = scale / sqrt(var + epsilon) and
// bias - mean * m in double, each rounded once.
inline void fold_batch_norm(const float* scale, const float* bias, const float* mean, const float* var, int64_t c,
                            double epsilon, std::vector<float>& mul, std::vector<float>& add) {
  mul.resize(static_cast<size_t>(c));
  add.resize(static_cast<size_t>(c));
  for (int64_t i = 0; i < c; ++i) {
    const double m = double(scale[i]) / std::sqrt(double(var[i]) + epsilon);
    mul[static_cast<size_t>(i)] = static_cast<float>(m);
    add[static_cast<size_t>(i)] = static_cast<float>(double(bias[i]) - double(mean[i]) * m);
  }
}

// out[j] = clamp(in[j] * mul[j] + add[j], lo, hi) for j < n: branch-free (vectorized); as the
// twin's clamp, NaN stays NaN.
inline void normalize_channels(const float* in, const float* mul, const float* add, float lo, float hi, int64_t n,
                               float* out) {
  for (int64_t j = 0; j < n; ++j) {
    float v = in[j] * mul[j] + add[j];
    v = v < lo ? lo : v;
    out[j] = v > hi ? hi : v;
  }
}

}  // namespace opt
}  // namespace xonnx
