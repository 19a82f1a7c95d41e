// Tiles of the own fp32 NHWC convolution (optimized/conv.cc), an indirect GEMM:
//   out[r][j] = clamp(bias[j] + sum_t sum_c a[t][r][c] * w[t][c][j] (+ residual[r][j]), lo, hi)
// for up to 12 output pixels r and 32 output channels j, where a[t][r] points at the C input
// values that tap t of pixel r reads (a row of zeros for padding). XNNPACK 2022's f32 igemm
// runs 7 x 16 tiles: 7 accumulator chains cannot fill two FMA pipes of latency 4, and every
// FMA loads its broadcast. 12 x 32 keeps 24 chains in flight with one broadcast per two FMAs.
// The clamp propagates NaN (ONNX Relu / Clip semantics), so no finiteness scan is needed.
// fconv_tile_reference is the twin: the same FMA order per element, bit-identical results.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "runtime/core/aligned_vector.h"

namespace xonnx {
class Tensor;
namespace opt {

constexpr int64_t kFconvRows = 12;  // output pixels per tile
constexpr int64_t kFconvCols = 32;  // output channels per packed panel

// W packed once per session: panels of 32 output channels, each [taps][c][32] (zero past m).
struct FconvWeights {
  int64_t m = 0, taps = 0, c = 0;
  UninitAlignedVector<float> packed;  // 64-byte aligned: the tiles load whole vectors of it
  AlignedVector<float> bias;          // [panels * 32], zero past m
};
// Weights in ONNX's [m][c][khw] order (khw = kh * kw), one panel's rows at a time:
// rows_of(o0, n) returns rows o0 .. o0 + n - 1, valid until the next call.
using FconvRowsFn = std::function<const float*(int64_t o0, int64_t n)>;
// Bias may be null. The panels hold [khw][c][32] either way; the tiles see them as `tile_taps`
// taps of khw * c / tile_taps values (khw taps of c, or a merged-rows stem's kh taps of kw * c).
FconvWeights pack_fconv_weights(const FconvRowsFn& rows_of, const float* bias, int64_t m, int64_t c, int64_t khw,
                                int64_t tile_taps);
// rows_of for a constant float W [m][...]: rows copied into `rows` (the model's bytes may be
// misaligned; no copy of the whole tensor); clears `finite` when a row holds inf or NaN.
// W, rows and finite must outlive the function.
FconvRowsFn fconv_rows_of(const Tensor& w, std::vector<float>& rows, bool& finite);

struct FconvTile {
  const float* const* a = nullptr;  // [taps][12] input pointers (rows past `rows` repeat a valid one)
  const float* panel = nullptr;     // [taps][c][32]
  const float* bias = nullptr;      // [32]
  int64_t taps = 0, c = 0;
  int64_t rows = 0, cols = 0;  // valid rows (1..12) and columns (1..32) to store
  float* out = nullptr;        // row r at out + r * ldo
  int64_t ldo = 0;
  int64_t upper = 16;    // a row's columns 16-31 start `upper` floats after its first
                         // (16: contiguous; a channel-blocked layout puts them apart)
  float lo = 0, hi = 0;  // the fused activation range (+-inf when none)
  // Start from the values at out (the sums of an earlier run over the preceding taps, stored
  // unclamped) instead of the bias: a deep layer's taps run in chunks whose weights stay in
  // cache. The sums are the same bits as one run over all taps.
  bool resume = false;
  // Bit t (t < 64): tap t reads a row of zeros for every row of the tile, so its products are
  // zero and the tile skips it (a dilated Conv on a small map: DeepLabV3's ASPP 3x3 of dilation
  // 12 over 20 x 20 reads padding in about half of its taps).
  uint64_t padding_taps = 0;
  // The layout pass's residual Z (common/residual.h), laid out as out (rows ldo apart, columns
  // 16-31 `upper` on), added to the sums before the clamp; nullptr: none.
  const float* residual = nullptr;
  // The AVX-512 tile also brings into L2, per input value it reads, the cache line at prefetch
  // + prefetch_step * (values read so far), and the one after it when the step spans two lines
  // (a hint: any address is safe; nullptr: none). See fconv_share_next_panel.
  const float* prefetch = nullptr;
  int64_t prefetch_step = 0;
};

// Sets t.prefetch for tile i of the `tiles` that run over the current panel, one after another:
// the first eight share the next panel (`next`, as large as this one; nullptr: none) between
// them. It then comes from memory while this one is computed, a line every few values, where
// the first tile over it would otherwise wait for it at the pace of its FMAs (weights streamed
// from DRAM: twelve [128, 768] x [768, 3072] x [3072, 768] layers 100 -> 88 ms). A panel's only
// tile (a squeeze-excitation's 1 x 1 map) steps 32 floats, two lines, per value: with one, every
// other line came from memory at the tile's pace (16 SE convs of 960 <-> 240: 0.88 -> 0.77 ms).
inline void fconv_share_next_panel(FconvTile& t, const float* next, int64_t i, int64_t tiles) {
  const int64_t spread = tiles < 8 ? tiles : 8;
  t.prefetch_step = (kFconvCols + spread - 1) / spread;
  t.prefetch = next && i < spread ? next + i * t.taps * t.c * t.prefetch_step : nullptr;
}

// A tile of a 1x1 Conv (one tap of the weights' c channels) with its output range, rows ldo
// apart; fconv_use_panel then points it at 32-channel panel pn.
inline FconvTile fconv_pointwise_tile(const FconvWeights& weights, float lo, float hi, int64_t ldo) {
  FconvTile t;
  t.taps = 1;
  t.c = weights.c;
  t.ldo = ldo;
  t.lo = lo;
  t.hi = hi;
  return t;
}
inline void fconv_use_panel(FconvTile& t, const FconvWeights& weights, int64_t pn) {
  t.panel = weights.packed.data() + pn * weights.c * kFconvCols;
  t.bias = weights.bias.data() + pn * kFconvCols;
  t.cols = std::min(kFconvCols, weights.m - pn * kFconvCols);
}

using FconvTileFn = void (*)(const FconvTile& t);

// Tile rows of consecutive pixels: table[i] = base + min(first + i, last) * stride for i <
// count, the rows past `last` repeating it (a tile's rows past the end of its pixels). Plain
// integer adds, which the compiler vectorizes (a multiply per entry took ~4 % of a narrow 1x1
// layer's time at 112 x 112).
inline void fconv_consecutive_rows(const float** table, const float* base, int64_t first, int64_t last, int64_t count,
                                   int64_t stride) {
  const float** __restrict const out = table;
  const int64_t inside = std::max<int64_t>(0, std::min(count, last - first + 1));
  const uintptr_t start = reinterpret_cast<uintptr_t>(base + first * stride);
  const uintptr_t step = static_cast<uintptr_t>(stride) * sizeof(float);
  for (int64_t i = 0; i < inside; ++i)
    out[i] = reinterpret_cast<const float*>(start + static_cast<uintptr_t>(i) * step);
  const float* const tail = base + last * stride;
  for (int64_t i = inside; i < count; ++i) out[i] = tail;
}

// The scalar twins' form of the AVX-512 min_ps(hi, max_ps(lo, x)): each returns its second
// operand unless the first is strictly greater (smaller), so NaN passes through (and -0 stays
// -0 at lo = 0).
inline float clamp_keeping_nan(float x, float lo, float hi) {
  const float m = lo > x ? lo : x;
  return hi < m ? hi : m;
}

// Rows 4 KB apart (a multiple of 1024 floats) all fall into one set of a 32 KB, 8-way L1: a
// tile's 12 input rows evict each other and the tile runs at ~90 % of its speed (1x1 layers
// over 1024 and 2048 channels, a MatMul with K = 3072). Such a block of tiles reads a copy of
// its rows, kFconvRowPad floats further apart (measured: 104 -> 116 GFLOP/s at K = 1024).
constexpr int64_t kFconvRowPad = 16;
inline bool fconv_rows_alias(int64_t row_floats) { return row_floats % 1024 == 0; }
// The `count` row pointers of `table` that point at one of the `rows` rows of c floats at
// `base` (others, such as a row of zeros, are kept) are written to `restrided`, pointing into
// copies of those rows in buf, c + kFconvRowPad floats apart. buf holds up to `capacity` rows:
// the range from the first row read to the last. Returns false, writing nothing, when the
// range is longer.
bool restride_rows(const float* const* table, int64_t count, const float* base, int64_t rows, int64_t c, float* buf,
                   int64_t capacity, const float** restrided);

void fconv_tile_reference(const FconvTile& t);
// The AVX-512 tile, or nullptr where the CPU (or XONNX_OPT_ISA) has no AVX-512.
FconvTileFn fconv_tile_fast();

}  // namespace opt
}  // namespace xonnx
