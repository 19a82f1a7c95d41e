// One float32 depthwise convolution layer on the AVX-512 rows of fdwconv.h: its packed
// weights, output range and row loop, shared by the NHWC depthwise Conv (conv_depthwise.cc) and
// the fused pointwise + depthwise and image + depthwise Convs (conv_pointwise_depthwise.cc,
// conv_stem_depthwise.cc), which differ only in where the layer's input rows come from (an
// FdwSource).
//
// Each task takes a run of output rows. The input rows a row needs are held, 16 channels at a
// time with zero padding columns (no bounds checks in the row kernel), in a ring of kh rows
// per parallel chunk, which consecutive output rows share. Rows from memory are copied into it
// (narrow rows all blocks at once, wide ones a block right before the row kernel reads it, so it
// is still in L1); a source that computes its rows writes them into the ring itself.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "runtime/core/aligned_vector.h"
#include "runtime/core/status.h"
#include "runtime/core/thread_pool.h"
#include "runtime/ops/common/conv_geometry.h"
#include "runtime/ops/kernel.h"
#include "runtime/ops/optimized/fconv.h"
#include "runtime/ops/optimized/fdwconv.h"
#include "runtime/ops/optimized/kernels.h"
#include "runtime/ops/optimized/opt_util.h"

namespace xonnx {
namespace opt {

// Where a layer's input rows come from. Either the layer copies them from memory into the ring
// (row()), or the source writes them into the ring itself (fill()).
class FdwSource {
 public:
  virtual ~FdwSource() = default;
  // Input row `row` (img * h + iy) in memory: w pixels of `channels` floats; or nullptr when
  // the source fills the ring instead.
  virtual const float* row(int64_t /*row*/) const { return nullptr; }
  // A row about to be read later, to prefetch (or nullptr).
  virtual const float* ahead(int64_t /*row*/) const { return nullptr; }
  // Writes input row `row`'s channel blocks [b0, b1) into a ring row: block b's w pixels of 16
  // floats at blocks + b * block_floats (its padding columns are the layer's).
  virtual void fill(int64_t /*row*/, float* /*blocks*/, int64_t /*block_floats*/, int64_t /*b0*/, int64_t /*b1*/) {}
};

// A source's rows computed by a Conv's tiles (fconv.h) straight into ring blocks [b0, b1) (whole
// 32-channel panels: a tile's columns 16-31 go to the next block): `pixels` pixels of a row from
// `out` on, tile i reading table[i * t.taps * 12 ...] (rows past `pixels` repeat a valid one).
// t holds the layer's taps, depth and output range.
inline void fdw_tiles_into_blocks(FconvTileFn tile, FconvTile t, const FconvWeights& weights, const float* const* table,
                                  int64_t pixels, float* out, int64_t block_floats, int64_t b0, int64_t b1) {
  constexpr int64_t kBlocksPerPanel = kFconvCols / kFdwChannelBlock;
  t.ldo = kFdwChannelBlock;
  t.upper = block_floats;
  const int64_t tiles = (pixels + kFconvRows - 1) / kFconvRows;
  for (int64_t pn = b0 / kBlocksPerPanel; pn < (b1 + kBlocksPerPanel - 1) / kBlocksPerPanel; ++pn) {
    t.panel = weights.packed.data() + pn * weights.taps * weights.c * kFconvCols;
    t.bias = weights.bias.data() + pn * kFconvCols;
    t.cols = std::min(kFconvCols, weights.m - pn * kFconvCols);
    for (int64_t ti = 0; ti < tiles; ++ti) {
      t.a = table + ti * t.taps * kFconvRows;
      t.rows = std::min(kFconvRows, pixels - ti * kFconvRows);
      t.out = out + pn * kBlocksPerPanel * block_floats + ti * kFconvRows * kFdwChannelBlock;
      tile(t);
    }
  }
}

// A source's fused activation (the (Hard)Swish of the Conv that computes its rows) on blocks
// [b0, b1) of a ring row: w pixels of 16 floats each, block_floats apart.
inline void fdw_activate_blocks(MapFn activation, float* blocks, int64_t block_floats, int64_t b0, int64_t b1,
                                int64_t w) {
  for (int64_t b = b0; b < b1; ++b)
    activation(blocks + b * block_floats, blocks + b * block_floats, w * kFdwChannelBlock);
}

// Input rows of an [n, h, w, channels] tensor in memory, row_floats = w * channels apart.
class FdwTensorRows final : public FdwSource {
 public:
  FdwTensorRows(const float* in, int64_t row_floats) : in_(in), row_floats_(row_floats) {}
  const float* row(int64_t row) const override { return in_ + row * row_floats_; }
  const float* ahead(int64_t row) const override { return in_ + row * row_floats_; }

 private:
  const float* in_;
  int64_t row_floats_;
};

// Whether the fused depthwise layers (a 1x1 or an image Conv's tiles writing the layer's input
// rows: conv_pointwise_depthwise.cc, conv_stem_depthwise.cc) run on this CPU.
bool fdw_fused_layers_available();
// Whether a depthwise layer on its own (FdwLayer: the NHWC depthwise Conv) runs on this CPU.
bool fdw_layer_available();

// The weights of such a fused layer's first Conv (or of another fused node's Conv): W [M, C, kh,
// kw] at input w_input (its shape checked by the caller) and the optional bias at b_input,
// packed for tiles of `tile_taps` taps (pack_fconv_weights). Declines, as the own Conv does, a
// bias that is not a finite constant float [M] and non-finite weights (the reference runs
// those). Marks both inputs packed: call it after init_own_kernel, whose fallback reads them
// first. `part` names the Conv in messages.
Result<FconvWeights> pack_fdw_source_conv(const KernelInit& init, const Tensor& w, int64_t tile_taps, const char* what,
                                          const char* part, size_t w_input = 1, size_t b_input = 2);

class FdwLayer {
 public:
  // The depthwise Conv of `init` (or one of groups of G = 4, 8 or 16 inputs and outputs: W [M, G, kh, kw]):
  // geometry and output range from its attributes (activation_min, activation_max,
  // activation), W [M, 1, kh, kw] and B [M] at inputs `w_input` / `b_input`. Declines other
  // CPUs, a channel multiplier above 1, other groups and non-finite weights.
  static Result<FdwLayer> create(const KernelInit& init, size_t w_input, size_t b_input, const char* what);

  int64_t channels() const { return channels_; }
  const ConvGeometry& geometry() const { return geo_; }

  // Output rows of an [n, h, w, channels] input into out [n, oh, ow, channels], input rows
  // from `source`. `row_work`: the source's own work per output row (element operations), for
  // the chunk size; the channel blocks split over threads in multiples of `block_multiple`.
  void run(const ThreadPool& pool, ChunkScratch<float>& scratch, FdwSource& source, int64_t n, int64_t h, int64_t w,
           const std::array<int64_t, 4>& pads, float* out, int64_t row_work = 0, int64_t block_multiple = 1) const;

  // The output rows of each of run()'s chunks (the last may have fewer) when run(pool, ..., n,
  // h, w, pads) with the default row_work and block_multiple splits the rows over the threads
  // in their order (chunk i: rows i * row_chunk on); 0 when it splits the channel blocks, runs
  // on one thread or takes a dilated layer's rows in phase order. On 2 threads chunk i runs,
  // unless the worker is late, on the thread of chunk i of any parallel_for of two chunks.
  size_t row_chunk(const ThreadPool& pool, int64_t n, int64_t h, int64_t w, const std::array<int64_t, 4>& pads) const;

 private:
  struct Split {
    size_t rows_total = 0, min_chunk = 1;  // output rows, and the fewest worth a chunk
    bool channels = false;                 // the threads take channel blocks, not rows
  };
  Split split_for(const ThreadPool& pool, int64_t n, int64_t h, int64_t w, const std::array<int64_t, 4>& pads,
                  int64_t row_work, int64_t block_multiple) const;

  FdwRowFn row_ = nullptr;
  FdwPackFn pack_ = nullptr;
  ConvGeometry geo_;
  int64_t channels_ = 0, cp_ = 0;
  int64_t group_ = 1;                    // channels per group (fdw_group_supported)
  float lo_ = 0, hi_ = 0;                // fused output range
  MapFn activation_ = nullptr;           // the layout pass's fused activation = "Swish" / "HardSwish"
  AlignedVector<float> weights_, bias_;  // [cp / 16][kh * kw][group_][16], [cp]
};

}  // namespace opt
}  // namespace xonnx
