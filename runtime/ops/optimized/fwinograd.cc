#include "runtime/ops/optimized/fwinograd.h"

#include <algorithm>
#include <vector>

#include "runtime/ops/optimized/fwinograd4_math.h"
#include "runtime/ops/optimized/fwinograd_pack.h"
#include "runtime/ops/optimized/kernels.h"

namespace xonnx {
namespace opt {

WinoInputFn wino_input_avx512();  // fwinograd_avx512.cc (nullptr off x86-64)
WinoOutputFn wino_output_avx512();
WinoInputFn wino4_input_avx512();
WinoOutputFn wino4_output_avx512();
WinoPackFn wino_pack_avx512();

FconvWeights pack_winograd_weights(const FconvRowsFn& rows_of, const float* bias, int64_t m, int64_t c, int64_t tile) {
  // U = G g G^T in double, rounded once.
  const int points = tile == 4 ? 6 : 4, positions = points * points;
  FconvWeights p;
  p.m = m;
  p.taps = positions;  // the positions take the place of the direct panels' taps
  p.c = c;
  const int64_t panels = (m + kFconvCols - 1) / kFconvCols;
  p.packed.resize(static_cast<size_t>(panels * positions * c * kFconvCols));  // every element written below
  p.bias.assign(static_cast<size_t>(panels * kFconvCols), 0.0f);
  if (bias) std::copy(bias, bias + m, p.bias.begin());
  const WinoPackFn pack = wino_pack_fast() ? wino_pack_fast() : wino_pack_reference;
  for (int64_t pn = 0; pn < panels; ++pn) {
    const int64_t o0 = pn * kFconvCols, lanes = std::min(kFconvCols, m - o0);
    pack(rows_of(o0, lanes), lanes, c, tile, p.packed.data() + pn * positions * c * kFconvCols);
  }
  return p;
}

void wino_pack_reference(const float* g, int64_t lanes, int64_t c, int64_t tile, float* panel) {
  pack_winograd_panel_for(g, lanes, c, tile, panel);
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

bool wino4_input_reference(const float* const* patch, int64_t c, float* v, int64_t ldv) {
  bool finite = true;
  for (int64_t ci = 0; ci < c; ++ci) {
    float t[6][6];  // B^T d: t[i][j], column j transformed
    for (int j = 0; j < 6; ++j) {
      float d[6], r[6];
      for (int i = 0; i < 6; ++i) d[i] = patch[i * 6 + j][ci];
      wino4_b(d, r);
      for (int i = 0; i < 6; ++i) t[i][j] = r[i];
    }
    for (int i = 0; i < 6; ++i) {  // (B^T d) B
      float r[6];
      wino4_b(t[i], r);
      for (int j = 0; j < 6; ++j) {
        v[(i * 6 + j) * ldv + ci] = r[j];
        finite = finite && r[j] - r[j] == 0.0f;  // NaN for inf and NaN
      }
    }
  }
  return finite;
}

void wino4_output_reference(const float* m, int64_t ldm, int64_t cols, const float* bias, float lo, float hi,
                            float* const* out, const float* const* z) {
  for (int64_t j = 0; j < cols; ++j) {
    float s[6][4];  // M A: row i's 6 values to 4
    for (int i = 0; i < 6; ++i) {
      float row[6];
      for (int q = 0; q < 6; ++q) row[q] = m[(i * 6 + q) * ldm + j];
      wino4_a(row, s[i]);
    }
    for (int kx = 0; kx < 4; ++kx) {  // A^T (M A), column kx
      float col[6], y[4];
      for (int i = 0; i < 6; ++i) col[i] = s[i][kx];
      wino4_a(col, y);
      for (int ky = 0; ky < 4; ++ky) {
        float* const o = out[ky * 4 + kx];
        if (!o) continue;
        const float val = y[ky] + bias[j];
        o[j] = clamp_keeping_nan(z ? val + z[ky * 4 + kx][j] : val, lo, hi);
      }
    }
  }
}

WinoPackFn wino_pack_fast() {
  static const WinoPackFn fn = avx512_chosen() ? wino_pack_avx512() : nullptr;
  return fn;
}

WinoInputFn wino_input_fast() {
  static const WinoInputFn fn = avx512_chosen() ? wino_input_avx512() : nullptr;
  return fn;
}

WinoOutputFn wino_output_fast() {
  static const WinoOutputFn fn = avx512_chosen() ? wino_output_avx512() : nullptr;
  return fn;
}

WinoInputFn wino4_input_fast() {
  static const WinoInputFn fn = avx512_chosen() ? wino4_input_avx512() : nullptr;
  return fn;
}

WinoOutputFn wino4_output_fast() {
  static const WinoOutputFn fn = avx512_chosen() ? wino4_output_avx512() : nullptr;
  return fn;
}

}  // namespace opt
}  // namespace xonnx
