#include "runtime/ops/optimized/fconv.h"

#include <algorithm>
#include <cmath>

#include "runtime/core/tensor.h"
#include "runtime/ops/common/finite.h"
#include "runtime/ops/optimized/kernels.h"

namespace xonnx {
namespace opt {

FconvTileFn fconv_tile_avx512();  // fconv_avx512.cc (nullptr off x86-64)

FconvWeights pack_fconv_weights(const FconvRowsFn& rows_of, const float* bias, int64_t m, int64_t c, int64_t khw,
                                int64_t tile_taps) {
  FconvWeights p;
  p.m = m;
  p.taps = tile_taps;
  p.c = khw * c / tile_taps;
  const int64_t panels = (m + kFconvCols - 1) / kFconvCols, depth = khw * c;
  // Each panel is written in order from a copy of its rows' next few channels, one contiguous
  // piece per row (in L1). Gathered straight from the rows, a 1x1 layer's rows 4 KB apart
  // (1024 channels) fell into one L1 set and every load missed: resnet50 packed at 0.5 GB/s.
  // Every element is written (lanes past m as zero): the buffer is not filled first.
  constexpr int64_t kPieceFloats = 128;
  const int64_t piece_c = std::max<int64_t>(1, kPieceFloats / khw);
  std::vector<float> pieces(static_cast<size_t>(kFconvCols * piece_c * khw));
  p.packed.resize(static_cast<size_t>(panels * depth * kFconvCols));
  p.bias.assign(static_cast<size_t>(panels * kFconvCols), 0.0f);
  for (int64_t pn = 0; pn < panels; ++pn) {
    const int64_t o0 = pn * kFconvCols, lanes = std::min(kFconvCols, m - o0);
    const float* w = rows_of(o0, lanes);
    float* const panel = p.packed.data() + pn * depth * kFconvCols;
    for (int64_t ci0 = 0; ci0 < c; ci0 += piece_c) {
      const int64_t nc = std::min(piece_c, c - ci0), span = nc * khw;
      for (int64_t lane = 0; lane < lanes; ++lane)
        std::copy(w + lane * depth + ci0 * khw, w + lane * depth + ci0 * khw + span, pieces.data() + lane * span);
      for (int64_t t = 0; t < khw; ++t) {
        float* dst = panel + (t * c + ci0) * kFconvCols;
        for (int64_t ci = 0; ci < nc; ++ci, dst += kFconvCols) {
          const float* src = pieces.data() + ci * khw + t;
          int64_t lane = 0;
          for (; lane < lanes; ++lane) dst[lane] = src[lane * span];
          for (; lane < kFconvCols; ++lane) dst[lane] = 0.0f;
        }
      }
    }
  }
  if (bias) std::copy(bias, bias + m, p.bias.begin());
  return p;
}

FconvRowsFn fconv_rows_of(const Tensor& w, std::vector<float>& rows, bool& finite) {
  const int64_t row = w.dim(0) > 0 ? w.numel() / w.dim(0) : 0;
  return [&w, &rows, &finite, row](int64_t o0, int64_t n) -> const float* {
    rows.resize(static_cast<size_t>(n * row));
    w.read_bytes(static_cast<size_t>(o0 * row) * sizeof(float), rows.size() * sizeof(float), rows.data());
    // common/finite.h's vectorized scan: std::isfinite one value at a time took a tenth of
    // resnet50's weight packing.
    finite = finite && all_finite(rows.data(), rows.size());
    return rows.data();
  };
}

bool restride_rows(const float* const* table, int64_t count, const float* base, int64_t rows, int64_t c, float* buf,
                   int64_t capacity, const float** restrided) {
  // The row that p starts, or -1 (compared as addresses: p may point into another buffer).
  const uintptr_t begin = reinterpret_cast<uintptr_t>(base), row_bytes = static_cast<uintptr_t>(c) * sizeof(float);
  const auto row_of = [&](const float* p) -> int64_t {
    const uintptr_t at = reinterpret_cast<uintptr_t>(p);
    if (at < begin || (at - begin) % row_bytes != 0) return -1;
    const uintptr_t row = (at - begin) / row_bytes;
    return row < static_cast<uintptr_t>(rows) ? static_cast<int64_t>(row) : -1;
  };
  int64_t first = -1, last = -1;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t row = row_of(table[i]);
    if (row < 0) continue;
    first = first < 0 ? row : std::min(first, row);
    last = std::max(last, row);
  }
  if (first < 0 || last - first + 1 > capacity) return false;
  const int64_t ld = c + kFconvRowPad;
  for (int64_t row = first; row <= last; ++row)
    std::copy(base + row * c, base + (row + 1) * c, buf + (row - first) * ld);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t row = row_of(table[i]);
    restrided[i] = row < 0 ? table[i] : buf + (row - first) * ld;
  }
  return true;
}

void fconv_tile_reference(const FconvTile& t) {
  for (int64_t r = 0; r < t.rows; ++r) {
    for (int64_t j = 0; j < t.cols; ++j) {
      float* out = t.out + r * t.ldo + (j < 16 ? j : t.upper + j - 16);
      float acc = t.resume ? *out : t.bias[j];
      for (int64_t tap = 0; tap < t.taps; ++tap) {
        if (tap < 64 && (t.padding_taps >> tap & 1)) continue;
        const float* a = t.a[tap * kFconvRows + r];
        const float* w = t.panel + tap * t.c * kFconvCols + j;
        for (int64_t ci = 0; ci < t.c; ++ci) acc = std::fma(a[ci], w[ci * kFconvCols], acc);
      }
      if (t.residual) acc += t.residual[out - t.out];
      *out = clamp_keeping_nan(acc, t.lo, t.hi);
    }
  }
}

FconvTileFn fconv_tile_fast() {
  static const FconvTileFn fn = avx512_chosen() ? fconv_tile_avx512() : nullptr;
  return fn;
}

}  // namespace opt
}  // namespace xonnx
