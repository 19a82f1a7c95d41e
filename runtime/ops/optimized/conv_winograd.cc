#include "runtime/ops/optimized/conv_winograd.h"

#include <algorithm>
#include <atomic>
#include <limits>

namespace xonnx {
namespace opt {
namespace {

// V and M of a block together (16 positions x tiles x (c + m) floats) stay within this many
// bytes, a quarter of a 1 MB L2 (measured on resnet18: 512 KB ran its 2-thread layers 10-30 %
// slower; the weight panels and the input rows need the rest).
constexpr int64_t kBlockBytes = 256 * 1024;
constexpr int64_t kMaxBlockTiles = 96;

}  // namespace

bool WinogradConvF32::applies(int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t c,
                              int64_t m) {
  if (!fconv_tile_fast() || !wino_input_fast() || !wino_output_fast()) return false;
  if (kh != 3 || kw != 3 || sh != 1 || sw != 1 || dh != 1 || dw != 1) return false;
  // The range measured faster than the direct tiles: 16 channels (SqueezeNet's expands) to
  // 256 x 256 (resnet18's 14x14 layers). Wider layers (resnet18's 7x7 x 512) have few tiles
  // per weight, 16/9 more of them, and stay direct.
  return c >= 16 && m >= 16 && c * m <= 256 * 256;
}

WinogradConvF32::WinogradConvF32(const FconvRowsFn& rows_of, const float* bias, int64_t m, int64_t c, float lo,
                                 float hi)
    : u_(pack_winograd_weights(rows_of, bias, m, c)),
      c_(c),
      m_(m),
      lo_(lo),
      hi_(hi),
      tile_(fconv_tile_fast()),
      input_(wino_input_fast()),
      output_(wino_output_fast()),
      zeros_(static_cast<size_t>(c), 0.0f) {}

bool WinogradConvF32::run(const ThreadPool& pool, const float* x, int64_t n, int64_t h, int64_t w,
                          const std::array<int64_t, 4>& pads, float* y, const float* z) {
  const int64_t c = c_, m = m_;
  const int64_t oh = h + pads[0] + pads[2] - 2, ow = w + pads[1] + pads[3] - 2;
  const int64_t th = (oh + 1) / 2, tw = (ow + 1) / 2, tiles = n * th * tw;
  const int64_t panels = (m + kFconvCols - 1) / kFconvCols, threads = pool.num_threads();
  int64_t block_tiles = kBlockBytes / (kWinoPositions * 4 * (c + m));
  block_tiles = std::max<int64_t>(kFconvRows, std::min(kMaxBlockTiles, block_tiles / kFconvRows * kFconvRows));
  // Evenly sized blocks, as many per thread (see conv.cc).
  int64_t blocks = (tiles + block_tiles - 1) / block_tiles;
  if (tiles >= threads * kFconvRows) blocks = (blocks + threads - 1) / threads * threads;
  const int64_t max_tiles = (tiles + blocks - 1) / blocks;
  const size_t min_chunk = chunk_for(max_tiles * kWinoPositions * c * m / 4);
  scratch_.prepare(pool, static_cast<size_t>(blocks), min_chunk,
                   static_cast<size_t>(kWinoPositions * max_tiles * (c + m)));
  std::atomic<bool> finite{true};
  pool.parallel_for(static_cast<size_t>(blocks), min_chunk, [&](size_t b0, size_t b1) {
    float* const v = scratch_.of(b0);
    float* const mm = v + kWinoPositions * max_tiles * c;
    const float* patch[kWinoPositions];
    float* pixels[4];
    const float* residual[4];  // z's rows of the same pixels
    const float* rows[kFconvRows];
    FconvTile t;
    t.a = rows;
    t.bias = zero_bias_.data();
    t.taps = 1;
    t.c = c;
    t.ldo = m;
    t.lo = -std::numeric_limits<float>::infinity();
    t.hi = std::numeric_limits<float>::infinity();
    // A tile's 4x4 input points (zeros for padding) and its 2x2 output pixels (null outside).
    const auto locate_patch = [&](int64_t tile) {
      const int64_t img = tile / (th * tw), ty = tile / tw % th, tx = tile % tw;
      for (int q = 0; q < kWinoPositions; ++q) {
        const int64_t iy = 2 * ty - pads[0] + q / 4, ix = 2 * tx - pads[1] + q % 4;
        patch[q] = iy >= 0 && iy < h && ix >= 0 && ix < w ? x + ((img * h + iy) * w + ix) * c : zeros_.data();
      }
    };
    const auto locate_pixels = [&](int64_t tile) {
      const int64_t img = tile / (th * tw), ty = tile / tw % th, tx = tile % tw;
      for (int k = 0; k < 4; ++k) {
        const int64_t oy = 2 * ty + k / 2, ox = 2 * tx + k % 2;
        const int64_t at = ((img * oh + oy) * ow + ox) * m;
        pixels[k] = oy < oh && ox < ow ? y + at : nullptr;
        residual[k] = pixels[k] && z ? z + at : nullptr;
      }
    };
    for (size_t blk = b0; blk < b1; ++blk) {
      const int64_t t0 = static_cast<int64_t>(blk) * tiles / blocks,
                    t1 = (static_cast<int64_t>(blk) + 1) * tiles / blocks;
      const int64_t count = t1 - t0;
      for (int64_t i = 0; i < count; ++i) {
        locate_patch(t0 + i);
        if (!input_(patch, c, v + i * c, count * c)) {
          finite = false;
          return;
        }
      }
      for (int64_t pn = 0; pn < panels; ++pn) {
        t.cols = std::min(kFconvCols, m - pn * kFconvCols);
        for (int64_t p = 0; p < kWinoPositions; ++p) {
          t.panel = u_.packed.data() + (pn * kWinoPositions + p) * c * kFconvCols;
          for (int64_t r0 = 0; r0 < count; r0 += kFconvRows) {
            t.rows = std::min(kFconvRows, count - r0);
            for (int64_t r = 0; r < kFconvRows; ++r) rows[r] = v + (p * count + r0 + std::min(r, t.rows - 1)) * c;
            t.out = mm + (p * count + r0) * m + pn * kFconvCols;
            tile_(t);
          }
        }
      }
      for (int64_t i = 0; i < count; ++i) {
        locate_pixels(t0 + i);
        output_(mm + i * m, count * m, m, u_.bias.data(), lo_, hi_, pixels, z ? residual : nullptr);
      }
    }
  });
  return finite;
}

}  // namespace opt
}  // namespace xonnx
