// The weight transform of Winograd F(2x2, 3x3) and F(4x4, 3x3) (fwinograd.h), U = G g G^T for
// one panel of 32 output channels, written once and compiled twice: in fwinograd.cc for every
// CPU and in fwinograd_avx512.cc with AVX-512 flags, whose 8-lane doubles run the transform of
// densenet121's 58 layers in a quarter of the time (it was an eighth of its session creation).
// Both round the same way (see apply_g). Internal to the runtime; include it from those two
// files only.
#pragma once

#include <cstdint>

#include "runtime/ops/optimized/fconv.h"

namespace xonnx {
namespace opt {
// Internal linkage: each ISA's file keeps its own copy (a shared inline function compiled with
// AVX-512 flags could be merged by the linker into the generic file's calls).
namespace {

// G of F(2x2, 3x3) and of F(4x4, 3x3) (points 0, +-1, +-2 and infinity), applied to the three
// taps (a, b, c) of a kernel row or column, lanes innermost:
//   F(2x2): (a, (a + b + c) / 2, (a - b + c) / 2, c)
//   F(4x4): (a / 4, -(a + b + c) / 6, -(a - b + c) / 6, (a + 2b + 4c) / 24, (a - 2b + 4c) / 24, c)
// Written out: the general product spent 30 multiply-adds a column on the zeros and ones, and
// the transform was a quarter of a U-Net's session creation. Every product that an addition
// follows is exact (by 2 or 4; the others come last), so an FMA contraction rounds the same: the compilations with
// and without FMA (AVX-512 here, every aarch64 build) give the same bits.
template <int kPoints>
inline void apply_g(const double* a, const double* b, const double* c, double* const* out) {
  for (int64_t l = 0; l < kFconvCols; ++l) {
    const double s = a[l] + c[l];
    if constexpr (kPoints == 4) {
      out[0][l] = a[l];
      out[1][l] = (s + b[l]) * 0.5;
      out[2][l] = (s - b[l]) * 0.5;
      out[3][l] = c[l];
    } else {
      const double ac = a[l] + 4.0 * c[l], b2 = 2.0 * b[l];
      out[0][l] = a[l] * 0.25;
      out[1][l] = (s + b[l]) * (-1.0 / 6);
      out[2][l] = (s - b[l]) * (-1.0 / 6);
      out[3][l] = (ac + b2) * (1.0 / 24);
      out[4][l] = (ac - b2) * (1.0 / 24);
      out[5][l] = c[l];
    }
  }
}

// g: `lanes` (1..32) kernels [c][3][3] in ONNX order; panel: [points^2][c][32], lanes past
// `lanes` zero. One input channel at a time, the 32 kernels side by side (lanes innermost, so
// the arithmetic runs on vectors of lanes), each position's 32 values stored as one panel row.
// (A transformed copy of the panel's rows, gathered into panel order afterwards, took twice as
// long: 4 MB per panel at 2048 channels.) U is computed in double and rounded once.
template <int kPoints>
void pack_winograd_panel(const float* g, int64_t lanes, int64_t c, float* panel) {
  constexpr int kPositions = kPoints * kPoints;
  double k9[9][kFconvCols] = {};           // the channel's 3x3 kernels, lane by lane
  double gg[kPoints][3][kFconvCols];       // G g: row i of the points, the kernel's 3 columns
  double u[kPoints][kPoints][kFconvCols];  // (G g) G^T
  for (int64_t ci = 0; ci < c; ++ci) {
    for (int64_t lane = 0; lane < lanes; ++lane)
      for (int t = 0; t < 9; ++t) k9[t][lane] = g[(lane * c + ci) * 9 + t];
    for (int j = 0; j < 3; ++j) {  // G times column j of the kernel
      double* col[kPoints];
      for (int i = 0; i < kPoints; ++i) col[i] = gg[i][j];
      apply_g<kPoints>(k9[j], k9[3 + j], k9[6 + j], col);
    }
    for (int i = 0; i < kPoints; ++i) {  // row i of G g times G^T
      double* row[kPoints];
      for (int j = 0; j < kPoints; ++j) row[j] = u[i][j];
      apply_g<kPoints>(gg[i][0], gg[i][1], gg[i][2], row);
    }
    for (int pos = 0; pos < kPositions; ++pos) {
      float* dst = panel + (pos * c + ci) * kFconvCols;
      const double* src = u[pos / kPoints][pos % kPoints];
      for (int64_t l = 0; l < kFconvCols; ++l) dst[l] = static_cast<float>(src[l]);
    }
  }
}

// The function both files hand out: tile 2 or 4.
inline void pack_winograd_panel_for(const float* g, int64_t lanes, int64_t c, int64_t tile, float* panel) {
  if (tile == 4) {
    pack_winograd_panel<6>(g, lanes, c, panel);
  } else {
    pack_winograd_panel<4>(g, lanes, c, panel);
  }
}

}  // namespace
}  // namespace opt
}  // namespace xonnx
