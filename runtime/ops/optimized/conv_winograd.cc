#include "runtime/ops/optimized/conv_winograd.h"

#include <algorithm>
#include <atomic>
#include <limits>

namespace xonnx {
namespace opt {
namespace {

// V and M of a block together (positions x tiles x (c + m) floats) stay within this many
// bytes, a quarter of a 1 MB L2 (measured on resnet18: 512 KB ran its 2-thread layers 10-30 %
// slower; the weight panels and the input rows need the rest).
constexpr int64_t kBlockBytes = 256 * 1024;
constexpr int64_t kMaxBlockTiles = 96;
// Transformed weights up to this size are read from L2 by a layer with few tiles (DenseNet's
// 7x7 layers, 128 -> 32: 256 KB, as fast as the direct tiles); larger ones from L3 or memory,
// for at least this many tiles (conv_winograd.h: pays): a 7x7 map's 16 of F(2x2), a 14x14
// map's 16 of F(4x4).
constexpr int64_t kMaxSparseWeightBytes = 1 << 20;
constexpr int64_t kMinStreamedWeightTiles = 16;

// Tiles per block. Each block reads all of U once (positions outer, panels inner), so larger
// weights take larger blocks: only one position's rows of V and M (tiles x (c + m) floats)
// then need to stay in L2, beside its panel. (resnet50's 14x14 layers, 256 -> 256, 4.2 MB of
// weights over 49 tiles: 5 blocks of L2-sized V and M streamed 21 MB of weights, one block
// 4.2.) Weights that fit L2 keep the blocks whose whole V and M stay in L2 too.
int64_t block_tiles_for(int64_t positions, int64_t c, int64_t m, int64_t weight_bytes) {
  const int64_t positions_in_l2 = weight_bytes <= kMaxSparseWeightBytes ? positions : 1;
  const int64_t tiles = kBlockBytes / (positions_in_l2 * 4 * (c + m));
  return std::max<int64_t>(kFconvRows, std::min(kMaxBlockTiles, tiles / kFconvRows * kFconvRows));
}

// Tiles of t x t pixels over the largest phase of `out` pixels dilated by d: that phase holds
// ceil(out / d).
int64_t phase_tiles(int64_t out, int64_t d, int64_t t) { return ((out + d - 1) / d + t - 1) / t; }

// Output pixels along a dimension of `in` pixels with pads `before` and `after` (a 3-tap
// kernel dilated by d, stride 1).
int64_t out_extent(int64_t in, int64_t before, int64_t after, int64_t d) { return in + before + after - 2 * d; }

// In double: the session-creation choice reads the declared shape, whose dims and pads a file
// may set near 2^31 each (the product of five int64s overflowed).
double tiles_of(int64_t t, int64_t n, int64_t oh, int64_t ow, int64_t dh, int64_t dw) {
  return static_cast<double>(n) * static_cast<double>(dh * dw) * static_cast<double>(phase_tiles(oh, dh, t)) *
         static_cast<double>(phase_tiles(ow, dw, t));
}

}  // namespace

bool WinogradConvF32::pays(int64_t t, int64_t n, int64_t h, int64_t w, const std::array<int64_t, 4>& pads, int64_t dh,
                           int64_t dw) {
  const int64_t oh = out_extent(h, pads[0], pads[2], dh), ow = out_extent(w, pads[1], pads[3], dw);
  const double tiles = tiles_of(t, n, oh, ow, dh, dw);
  // Per dimension, the taps of each output that read the input (the direct tiles skip the
  // others where a whole tile reads padding); the product counts the taps over the map. Tap k
  // of output o reads o - pad + k d: inside [0, in) for o in [pad - k d, in + pad - k d).
  const auto inside = [](int64_t out, int64_t in, int64_t pad, int64_t d) {
    double taps = 0;
    for (int64_t k = 0; k < 3; ++k)
      taps += static_cast<double>(
          std::max<int64_t>(0, std::min(out, in + pad - k * d) - std::max<int64_t>(0, pad - k * d)));
    return taps;
  };
  return tiles >= 4 && tiles * static_cast<double>((t + 2) * (t + 2)) <=
                           static_cast<double>(n) * inside(oh, h, pads[0], dh) * inside(ow, w, pads[1], dw);
}

bool WinogradConvF32::pays_as(int64_t tile, int64_t n, int64_t h, int64_t w, const std::array<int64_t, 4>& pads) const {
  if (!pays(tile, n, h, w, pads, dh_, dw_)) return false;
  const int64_t oh = out_extent(h, pads[0], pads[2], dh_), ow = out_extent(w, pads[1], pads[3], dw_);
  const int64_t panels = (m_ + kFconvCols - 1) / kFconvCols;
  const int64_t weight_bytes = (tile + 2) * (tile + 2) * c_ * panels * kFconvCols * 4;
  return weight_bytes <= kMaxSparseWeightBytes || tiles_of(tile, n, oh, ow, dh_, dw_) >= kMinStreamedWeightTiles;
}

bool WinogradConvF32::pays(int64_t n, int64_t h, int64_t w, const std::array<int64_t, 4>& pads) const {
  return pays_as(size_, n, h, w, pads);
}

bool WinogradConvF32::large_tiles_pay(int64_t n, int64_t h, int64_t w, const std::array<int64_t, 4>& pads) const {
  constexpr int64_t kMaxChannelPairs = 256 * 256;
  const int64_t dh = dh_, dw = dw_;
  const int64_t oh = out_extent(h, pads[0], pads[2], dh), ow = out_extent(w, pads[1], pads[3], dw);
  const double tiles4 = tiles_of(4, n, oh, ow, dh, dw), tiles2 = tiles_of(2, n, oh, ow, dh, dw);
  return size_ == 2 && c_ * m_ <= kMaxChannelPairs && wino4_input_fast() && wino4_output_fast() &&
         tiles4 >= kFconvRows && tiles4 * kWino4Positions < tiles2 * kWinoPositions && pays_as(4, n, h, w, pads);
}

bool WinogradConvF32::applies(int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t c,
                              int64_t m) {
  if (!fconv_tile_fast() || !wino_input_fast() || !wino_output_fast()) return false;
  // Dilations as far as real models go (DeepLab's 36) and well beyond; not a file's 2^31.
  if (kh != 3 || kw != 3 || sh != 1 || sw != 1 || dh < 1 || dw < 1 || dh > 1024 || dw > 1024) return false;
  // From 16 channels (SqueezeNet's expands) up, at any width: 512 -> 512 took 0.58x the direct
  // tiles' time on 7x7 and 0.50x on 28x28 (resnet50's layer4, vgg11), fcn_resnet50's 2048 ->
  // 512 head 0.54x. (Before the tiles' buffers were aligned, layers wider than 256 x 256 ran
  // slower on it.)
  return c >= 16 && m >= 16;
}

WinogradConvF32::WinogradConvF32(const FconvRowsFn& rows_of, const float* bias, int64_t m, int64_t c, float lo,
                                 float hi, int64_t dh, int64_t dw, int64_t tile)
    : WinogradConvF32(m, c, lo, hi, dh, dw, tile) {
  u_ = pack_winograd_weights(rows_of, bias, m, c, tile);
}

WinogradConvF32::WinogradConvF32(int64_t m, int64_t c, float lo, float hi, int64_t dh, int64_t dw, int64_t tile)
    : c_(c),
      m_(m),
      lo_(lo),
      hi_(hi),
      dh_(dh),
      dw_(dw),
      size_(tile),
      tile_(fconv_tile_fast()),
      input_(tile == 4 ? wino4_input_fast() : wino_input_fast()),
      output_(tile == 4 ? wino4_output_fast() : wino_output_fast()),
      zeros_(static_cast<size_t>(c), 0.0f) {}

bool WinogradConvF32::run(const ThreadPool& pool, ChunkScratch<float>& scratch, const float* x, int64_t n, int64_t h,
                          int64_t w, const std::array<int64_t, 4>& pads, float* y, const float* z) {
  const int64_t c = c_, m = m_, dh = dh_, dw = dw_, size = size_, points = size + 2, positions = points * points;
  const int64_t oh = out_extent(h, pads[0], pads[2], dh), ow = out_extent(w, pads[1], pads[3], dw);
  // Tiles per phase (the largest phase's grid, for all: the others' last tiles stick out).
  const int64_t th = phase_tiles(oh, dh, size), tw = phase_tiles(ow, dw, size), per_image = dh * dw * th * tw;
  const int64_t tiles = n * per_image;
  const int64_t panels = (m + kFconvCols - 1) / kFconvCols, threads = pool.num_threads();
  const int64_t u_bytes = static_cast<int64_t>(u_.packed.size() * sizeof(float));
  const int64_t block_tiles = block_tiles_for(positions, c, m, u_bytes);
  int64_t blocks = (tiles + block_tiles - 1) / block_tiles;
  // A map of fewer blocks than threads whose transformed weights outweigh its V and M by far
  // (resnet50's 14 x 14 layers, 256 -> 256: 9.4 MB against 1.2) splits the weight panels over
  // the threads instead, as the direct tiles do (conv.cc): each thread streams its share of U
  // once over all tiles, where blocks of half the tiles would each stream all of it. Each thread
  // transforms the whole input and writes its channels of every pixel (whole cache lines:
  // channels_fill_cache_lines). Where V and M weigh as much as U (28 x 28, 128 -> 128: 1.8 MB
  // against 2.4), the doubled input transform and the larger V and M cost more than it saves.
  const int64_t map_bytes = tiles * positions * (c + m) * static_cast<int64_t>(sizeof(float));
  const bool split_panels = blocks < threads && u_bytes >= 4 * map_bytes && panels >= threads &&
                            panels % threads == 0 && channels_fill_cache_lines(m);
  const int64_t groups = split_panels ? threads : 1, group_panels = panels / groups;
  if (!split_panels) {
    // Evenly sized blocks, as many per thread (see conv.cc), and a block for each thread that
    // has a GEMM tile's rows of tiles to take.
    blocks = std::max(blocks, std::min(threads, (tiles + kFconvRows - 1) / kFconvRows));
    if (tiles >= threads * kFconvRows) blocks = (blocks + threads - 1) / threads * threads;
  }
  const int64_t max_tiles = (tiles + blocks - 1) / blocks;
  const size_t tasks = static_cast<size_t>(blocks * groups);  // group-major: a chunk keeps its panels
  const size_t min_chunk = split_panels ? 1 : chunk_for(max_tiles * positions * c * m / 4);
  scratch.prepare(pool, tasks, min_chunk, static_cast<size_t>(positions * max_tiles * (c + m)));
  std::atomic<bool> finite{true};
  // Panel pn's weights for position p.
  const auto panel_at = [&](int64_t pn, int64_t p) { return u_.packed.data() + (pn * positions + p) * c * kFconvCols; };
  pool.parallel_for(tasks, min_chunk, [&](size_t b0, size_t b1) {
    float* const v = scratch.of(b0);
    float* const mm = v + positions * max_tiles * c;
    const float* patch[kWino4Positions];
    float* pixels[16];
    const float* residual[16];  // z's rows of the same pixels
    const float* rows[kFconvRows];
    FconvTile t;
    t.a = rows;
    t.bias = zero_bias_.data();
    t.taps = 1;
    t.c = c;
    t.ldo = m;
    t.lo = -std::numeric_limits<float>::infinity();
    t.hi = std::numeric_limits<float>::infinity();
    // A tile's points x points input points (zeros for padding) and its size x size output
    // pixels (null outside). Tile -> image, phase (py, px) and the phase grid's tile (ty, tx):
    // its first output pixel is (py + size dh ty, px + size dw tx), its points dh and dw apart.
    struct Where {
      int64_t img, y0, x0;
    };
    const auto where = [&](int64_t tile) {
      const int64_t img = tile / per_image, in_image = tile % per_image;
      const int64_t phase = in_image / (th * tw), ty = in_image / tw % th, tx = in_image % tw;
      return Where{img, phase / dw + size * dh * ty, phase % dw + size * dw * tx};
    };
    // Row by row, without a division per point: with few channels those took longer than the
    // input transform (a 24 -> 24 layer on 112 x 112 ran 10 % faster without them).
    const auto locate_patch = [&](int64_t tile) {
      const Where p = where(tile);
      for (int64_t qy = 0; qy < points; ++qy) {
        const int64_t iy = p.y0 + dh * qy - pads[0];
        const float* const row = iy >= 0 && iy < h ? x + (p.img * h + iy) * w * c : nullptr;
        for (int64_t qx = 0, ix = p.x0 - pads[1]; qx < points; ++qx, ix += dw)
          patch[qy * points + qx] = row && ix >= 0 && ix < w ? row + ix * c : zeros_.data();
      }
    };
    // ... from channel c0 on.
    const auto locate_pixels = [&](int64_t tile, int64_t c0) {
      const Where p = where(tile);
      for (int64_t ky = 0; ky < size; ++ky) {
        const int64_t oy = p.y0 + dh * ky;
        for (int64_t kx = 0, ox = p.x0; kx < size; ++kx, ox += dw) {
          const int64_t k = ky * size + kx, at = ((p.img * oh + oy) * ow + ox) * m + c0;
          pixels[k] = oy < oh && ox < ow ? y + at : nullptr;
          residual[k] = pixels[k] && z ? z + at : nullptr;
        }
      }
    };
    for (size_t task = b0; task < b1; ++task) {
      const int64_t group = static_cast<int64_t>(task) / blocks, blk = static_cast<int64_t>(task) % blocks;
      const int64_t t0 = blk * tiles / blocks, t1 = (blk + 1) * tiles / blocks;
      const int64_t count = t1 - t0;
      const int64_t pn0 = group * group_panels, pn1 = pn0 + group_panels;
      const int64_t c0 = pn0 * kFconvCols, c1 = std::min(m, pn1 * kFconvCols);
      for (int64_t i = 0; i < count; ++i) {
        locate_patch(t0 + i);
        if (!input_(patch, c, v + i * c, count * c)) {
          finite = false;
          return;
        }
      }
      // Positions outer: position p's rows of V are read by every panel while they are in L2.
      for (int64_t p = 0; p < positions; ++p) {
        for (int64_t pn = pn0; pn < pn1; ++pn) {
          t.cols = std::min(kFconvCols, m - pn * kFconvCols);
          t.panel = panel_at(pn, p);
          const float* next = pn + 1 < pn1 ? panel_at(pn + 1, p) : p + 1 < positions ? panel_at(pn0, p + 1) : nullptr;
          for (int64_t r0 = 0; r0 < count; r0 += kFconvRows) {
            fconv_share_next_panel(t, next, r0 / kFconvRows, (count + kFconvRows - 1) / kFconvRows);
            t.rows = std::min(kFconvRows, count - r0);
            for (int64_t r = 0; r < kFconvRows; ++r) rows[r] = v + (p * count + r0 + std::min(r, t.rows - 1)) * c;
            t.out = mm + (p * count + r0) * m + pn * kFconvCols;
            tile_(t);
          }
        }
      }
      for (int64_t i = 0; i < count; ++i) {
        locate_pixels(t0 + i, c0);
        output_(mm + i * m + c0, count * m, c1 - c0, u_.bias.data() + c0, lo_, hi_, pixels, z ? residual : nullptr);
      }
    }
  });
  return finite;
}

}  // namespace opt
}  // namespace xonnx
