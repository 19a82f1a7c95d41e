// The Winograd path of the own fp32 NHWC Conv (conv.cc chooses it at session creation for 3x3,
// stride-1 layers of 16 channels or more; fwinograd.h has the math): F(2x2, 3x3), or F(4x4, 3x3)
// on maps large enough for its tiles.
// Per task, a block of tiles: the input transform writes V [positions][tiles][c], the direct
// conv's 12 x 32 tiles multiply each position's V by its U panel into M [positions][tiles][m],
// and the output transform adds the bias, clamps and writes the pixels. V and M of a block stay
// in L2 together, or, where the transformed weights exceed 1 MB, one position's rows of them
// (conv_winograd.cc: block_tiles_for). A small map with large weights splits the weight panels
// over the threads instead of its tiles.
// A dilated layer (dilation d) is d x d undilated ones over the phases of its grid (the pixels
// whose row and column are p_y and p_x modulo d), whose tiles share the blocks: output pixel
// p + d * i reads input p + d * (i + k) - pad.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "runtime/core/thread_pool.h"
#include "runtime/ops/optimized/fwinograd.h"
#include "runtime/ops/optimized/opt_util.h"

namespace xonnx {
namespace opt {

class WinogradConvF32 {
 public:
  // Whether a group-1 convolution of c -> m channels with this kernel, stride and dilation takes
  // this path (on this CPU): it does where the transforms cost less than the multiplies saved,
  // on maps where pays() holds.
  static bool applies(int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t c, int64_t m);

  // F(tile x tile, 3x3), tile 2 or 4, with weights as for pack_winograd_weights; the output
  // range [lo, hi] is the fused Relu / Clip; dh, dw: the dilation.
  WinogradConvF32(const FconvRowsFn& rows_of, const float* bias, int64_t m, int64_t c, float lo, float hi,
                  int64_t dh = 1, int64_t dw = 1, int64_t tile = 2);
  // The same layer without weights (has_weights() false): its predicates (pays,
  // large_tiles_pay) before the caller picks a tile, or a layer whose maps take the direct tiles.
  WinogradConvF32(int64_t m, int64_t c, float lo, float hi, int64_t dh = 1, int64_t dw = 1, int64_t tile = 2);

  int64_t tile() const { return size_; }
  // Frees the transformed weights (a layer whose maps all take the direct tiles); run() needs
  // them packed again, by a new WinogradConvF32.
  void release_weights() { u_ = FconvWeights(); }
  bool has_weights() const { return !u_.packed.empty(); }

  // Whether F(tile x tile) on an input of n x h x w pixels with these pads and dilation has
  // tiles enough to beat the direct tiles: at least 4 of them (on 2x2 maps of 512 channels
  // F(2x2) took 1.9x the direct time), with no more positions than the taps the direct tiles
  // would run, those reading only padding left out (3x3 maps: 64 positions for 49 taps;
  // DeepLabV3's ASPP, dilation 12 over 20 x 20: 2304 for 1296, 1.3x the direct time).
  static bool pays(int64_t tile, int64_t n, int64_t h, int64_t w, const std::array<int64_t, 4>& pads, int64_t dh,
                   int64_t dw);
  // The same for this layer, which also needs 16 tiles where its transformed weights exceed
  // 1 MB: with fewer rows than that, each panel of them streamed from L3 or memory feeds too
  // few multiplies. resnet50's 7x7 layers (512 -> 512, 16 tiles, 16.8 MB of weights where the
  // direct tiles read 9.4 MB across 49 rows) take 0.77x the direct time on an AMD EPYC of
  // family 26 (1.3-1.4x on a Xeon before the tiles prefetched the next panel: 24 tiles then).
  bool pays(int64_t n, int64_t h, int64_t w, const std::array<int64_t, 4>& pads) const;
  // Whether F(4x4) should replace this F(2x2) layer on such a map: fewer positions, a whole
  // 12-row GEMM tile of its tiles (from 14x14 maps on; on 7x7 its 4 tiles ran the GEMMs at a
  // third of their pace), F(4x4) itself paying as pays() asks (its weights are 36 / 16 of
  // F(2x2)'s: resnet50's 256 x 256 layers on 14x14 have 16 tiles of 4x4 for 9.4 MB of them,
  // 0.95x the time of F(2x2)'s 49 tiles for 4.2 MB), and at most 256 x 256 channels: its
  // weights take 4x the direct ones' memory (F(2x2): 16 / 9). With 512 x 512 too, vgg11 ran
  // 79 -> 63 ms, unet 114 -> 103 and fcn_resnet50 348 -> 326, but unet's peak RSS grew from 204
  // to 252 MB (ORT: 214).
  bool large_tiles_pay(int64_t n, int64_t h, int64_t w, const std::array<int64_t, 4>& pads) const;
  // What an F(2x2) layer runs such a map on: 4 (F(4x4): large_tiles_pay), 2 (pays) or 0 (the
  // direct tiles).
  int64_t tile_for(int64_t n, int64_t h, int64_t w, const std::array<int64_t, 4>& pads) const {
    return large_tiles_pay(n, h, w, pads) ? 4 : pays(n, h, w, pads) ? size_ : 0;
  }

  // y [n][oh][ow][m] from x [n][h][w][c] with pads (top, left, bottom, right), oh = h + top +
  // bottom - 2 dh and ow alike, both > 0. Returns false, with y partly written, when x holds inf or
  // NaN: the direct convolution's results then differ, and the caller runs the reference.
  // z (or nullptr): a residual of y's shape, added before the output range.
  // scratch: per chunk, a block's V and M (the session's: free between runs of any kernel).
  bool run(const ThreadPool& pool, ChunkScratch<float>& scratch, const float* x, int64_t n, int64_t h, int64_t w,
           const std::array<int64_t, 4>& pads, float* y, const float* z = nullptr);

 private:
  // pays() as F(tile x tile) of this layer's channels.
  bool pays_as(int64_t tile, int64_t n, int64_t h, int64_t w, const std::array<int64_t, 4>& pads) const;

  FconvWeights u_;  // panels [positions][c][32]; u_.bias is the layer's bias
  int64_t c_ = 0, m_ = 0;
  float lo_ = 0, hi_ = 0;
  int64_t dh_ = 1, dw_ = 1;
  int64_t size_ = 2;  // output pixels per tile side (input points per patch side: size_ + 2)
  FconvTileFn tile_ = nullptr;
  WinoInputFn input_ = nullptr;
  WinoOutputFn output_ = nullptr;
  std::vector<float> zeros_;                   // the input of padding points
  std::array<float, kFconvCols> zero_bias_{};  // the GEMM tiles add no bias
};

}  // namespace opt
}  // namespace xonnx
