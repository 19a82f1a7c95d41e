#include "runtime/ops/optimized/fwinograd.h"

#include <vector>

#include "runtime/ops/optimized/kernels.h"

namespace xonnx {
namespace opt {

WinoInputFn wino_input_avx512();  // fwinograd_avx512.cc (nullptr off x86-64)
WinoOutputFn wino_output_avx512();

FconvWeights pack_winograd_weights(const FconvRowsFn& rows_of, const float* bias, int64_t m, int64_t c) {
  // U = G g G^T with G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1], in double, rounded once.
  static constexpr double kG[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  std::vector<float> transformed;
  const auto transformed_rows = [&](int64_t o0, int64_t n) -> const float* {
    const float* g = rows_of(o0, n);
    transformed.resize(static_cast<size_t>(n * c * kWinoPositions));
    for (int64_t k = 0; k < n * c; ++k) {  // one 3x3 kernel of one (output, input) channel pair
      const float* gk = g + k * 9;
      double gg[4][3];  // G g
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 3; ++j) gg[i][j] = kG[i][0] * gk[j] + kG[i][1] * gk[3 + j] + kG[i][2] * gk[6 + j];
      float* u = transformed.data() + k * kWinoPositions;
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j)
          u[i * 4 + j] = static_cast<float>(gg[i][0] * kG[j][0] + gg[i][1] * kG[j][1] + gg[i][2] * kG[j][2]);
    }
    return transformed.data();
  };
  // The 16 positions take the place of the direct panels' taps: [position][c][32] per panel.
  return pack_fconv_weights(transformed_rows, bias, m, c, kWinoPositions, kWinoPositions);
}

bool wino_input_reference(const float* const* patch, int64_t c, float* v, int64_t ldv) {
  bool finite = true;
  for (int64_t ci = 0; ci < c; ++ci) {
    float t[4][4];  // B^T d
    for (int j = 0; j < 4; ++j) {
      const float d0 = patch[j][ci], d1 = patch[4 + j][ci], d2 = patch[8 + j][ci], d3 = patch[12 + j][ci];
      t[0][j] = d0 - d2;
      t[1][j] = d1 + d2;
      t[2][j] = d2 - d1;
      t[3][j] = d1 - d3;
    }
    for (int i = 0; i < 4; ++i) {  // (B^T d) B
      const float r[4] = {t[i][0] - t[i][2], t[i][1] + t[i][2], t[i][2] - t[i][1], t[i][1] - t[i][3]};
      for (int j = 0; j < 4; ++j) {
        v[(i * 4 + j) * ldv + ci] = r[j];
        finite = finite && r[j] - r[j] == 0.0f;  // NaN for inf and NaN
      }
    }
  }
  return finite;
}

void wino_output_reference(const float* m, int64_t ldm, int64_t cols, const float* bias, float lo, float hi,
                           float* const* out, const float* const* z) {
  for (int64_t j = 0; j < cols; ++j) {
    float s[4][2];  // M A
    for (int i = 0; i < 4; ++i) {
      const float m0 = m[(i * 4) * ldm + j], m1 = m[(i * 4 + 1) * ldm + j];
      const float m2 = m[(i * 4 + 2) * ldm + j], m3 = m[(i * 4 + 3) * ldm + j];
      s[i][0] = m0 + m1 + m2;
      s[i][1] = m1 - m2 - m3;
    }
    for (int k = 0; k < 2; ++k) {  // A^T (M A)
      const float y0 = s[0][k] + s[1][k] + s[2][k], y1 = s[1][k] - s[2][k] - s[3][k];
      const float v0 = y0 + bias[j], v1 = y1 + bias[j];
      if (out[k]) out[k][j] = clamp_keeping_nan(z ? v0 + z[k][j] : v0, lo, hi);
      if (out[2 + k]) out[2 + k][j] = clamp_keeping_nan(z ? v1 + z[2 + k][j] : v1, lo, hi);
    }
  }
}

WinoInputFn wino_input_fast() {
  static const WinoInputFn fn = avx512_chosen() ? wino_input_avx512() : nullptr;
  return fn;
}

WinoOutputFn wino_output_fast() {
  static const WinoOutputFn fn = avx512_chosen() ? wino_output_avx512() : nullptr;
  return fn;
}

}  // namespace opt
}  // namespace xonnx
