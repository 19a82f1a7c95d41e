#include "runtime/ops/optimized/fdw_layer.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "runtime/ops/optimized/fconv.h"
#include "runtime/ops/optimized/row_ring.h"

namespace xonnx {
namespace opt {

namespace {
bool finite(const float* p, int64_t n) {
  return std::all_of(p, p + n, [](float v) { return std::isfinite(v); });
}
}  // namespace

bool fdw_layer_available() { return enabled() && fdw_row_fast() != nullptr && fdw_pack_fast() != nullptr; }

bool fdw_fused_layers_available() { return fdw_layer_available() && fconv_tile_fast() != nullptr; }

Result<FconvWeights> pack_fdw_source_conv(const KernelInit& init, const Tensor& w, int64_t tile_taps, const char* what,
                                          const char* part, size_t w_input, size_t b_input) {
  const int64_t m = w.dim(0);
  const Tensor* b = init.has_input(b_input) ? init.constant_input(b_input) : nullptr;
  if (init.has_input(b_input) && (!b || !is_f32(*b) || b->numel() != m))
    return unsupported(what, ": ", part, " bias must be a constant float [M]");
  if (b && !finite(b->data<float>(), m)) return unsupported(what, ": non-finite ", part, " bias");
  std::vector<float> rows;
  bool finite_weights = true;
  FconvWeights packed = pack_fconv_weights(fconv_rows_of(w, rows, finite_weights), b ? b->data<float>() : nullptr, m,
                                           w.dim(1), w.dim(2) * w.dim(3), tile_taps);
  if (!finite_weights) return unsupported(what, ": non-finite ", part, " weights");
  init.packed_constant_input(w_input);
  if (b) init.packed_constant_input(b_input);
  return packed;
}

Result<FdwLayer> FdwLayer::create(const KernelInit& init, size_t w_input, size_t b_input, const char* what) {
  FdwLayer k;
  k.row_ = fdw_row_fast();
  k.pack_ = fdw_pack_fast();
  if (!k.row_ || !k.pack_ || !is_nhwc_node(init)) return unsupported(what, ": NHWC on AVX-512 only");
  const Tensor* w = init.constant_input(w_input);
  if (!w || !is_f32(*w) || w->rank() != 4 || !fdw_group_supported(w->dim(1)))
    return unsupported(what, ": needs a constant float [M, G, kh, kw] W, G 1, 4, 8 or 16");
  const int64_t m = w->dim(0);
  int64_t group = 1;
  XONNX_ASSIGN_OR_RETURN(k.geo_, ConvGeometry::parse(init, w->shape(), group, what));
  k.group_ = w->dim(1);
  if (m < 1 || group * k.group_ != m) return unsupported(what, ": not depthwise nor groups of G inputs and G outputs");
  if (k.geo_.kh > kMaxRingRows) return unsupported(what, ": kernel taller than 16");
  const Tensor* bias = init.has_input(b_input) ? init.constant_input(b_input) : nullptr;
  if (init.has_input(b_input) && (!bias || !is_f32(*bias) || bias->rank() != 1 || bias->numel() != m))
    return unsupported(what, ": bias must be a constant float [M]");
  XONNX_ASSIGN_OR_RETURN(const FusedOutput fused, parse_fused_output(init, "", what));
  k.lo_ = fused.lo;
  k.hi_ = fused.hi;
  k.activation_ = fused.activation;
  // The padding columns are multiplied by the weights where the reference skips them:
  // the same only while 0 * w == 0.
  const float* wd = w->data<float>();
  if (!finite(wd, w->numel()) || (bias && !finite(bias->data<float>(), m)))
    return unsupported(what, ": non-finite weights or bias");
  k.channels_ = m;
  k.cp_ = (m + kFdwChannelBlock - 1) / kFdwChannelBlock * kFdwChannelBlock;
  const int64_t taps = k.geo_.kh * k.geo_.kw, g = k.group_;
  k.weights_.assign(static_cast<size_t>(taps * g * k.cp_), 0.0f);  // [cp / 16][taps][g][16]
  k.bias_.assign(static_cast<size_t>(k.cp_), 0.0f);
  for (int64_t o = 0; o < m; ++o) {
    for (int64_t t = 0; t < taps; ++t)
      for (int64_t i = 0; i < g; ++i)
        k.weights_[static_cast<size_t>(((o / kFdwChannelBlock * taps + t) * g + i) * kFdwChannelBlock +
                                       o % kFdwChannelBlock)] = wd[(o * g + i) * taps + t];
    if (bias) k.bias_[static_cast<size_t>(o)] = bias->data<float>()[o];
  }
  init.packed_constant_input(w_input);
  if (bias) init.packed_constant_input(b_input);
  return k;
}

namespace {

// Fresh rows up to this size are copied all blocks at once, each pixel's channels read in one
// sweep; larger ones block by block, each right before the row kernel reads it from L1.
constexpr int64_t kPackAllBlocksBytes = 16 << 10;

// The order a chunk takes its output rows in. With a dilation dh that the stride does not
// cover, consecutive output rows read disjoint input rows (dh 2, stride 1: rows oy - 4, oy - 2,
// ... and oy - 3, oy - 1, ...), so the ring would refill all kh rows for each one, and a fused
// 1x1 Conv would expand every input row kh times (DeepLabV3's and LR-ASPP's dilated 5x5 blocks:
// 5.3 ms instead of ~1). Taking the rows of one phase (oy mod period) after another makes
// consecutive rows share kh - 1 input rows again.
class DilatedRowOrder {
 public:
  DilatedRowOrder(int64_t oh, int64_t sh, int64_t dh) : oh_(oh), period_(dh / std::gcd(std::max<int64_t>(sh, 1), dh)) {}
  int64_t period() const { return period_; }
  // The output row taken at position v (0 .. oh - 1) of an image.
  int64_t row(int64_t v) const {
    if (period_ <= 1) return v;
    for (int64_t phase = 0; phase < period_; ++phase) {
      const int64_t count = (oh_ - phase + period_ - 1) / period_;  // rows phase, phase + period, ...
      if (v < count) return phase + v * period_;
      v -= count;
    }
    return v;  // not reached: the phases' counts sum to oh
  }

 private:
  int64_t oh_, period_;
};

}  // namespace

FdwLayer::Split FdwLayer::split_for(const ThreadPool& pool, int64_t n, int64_t h, int64_t w,
                                    const std::array<int64_t, 4>& pads, int64_t row_work,
                                    int64_t block_multiple) const {
  const int64_t oh = geo_.out_h(h, pads), ow = geo_.out_w(w, pads), taps = geo_.kh * geo_.kw;
  const int64_t threads = pool.num_threads(), blocks = cp_ / kFdwChannelBlock;
  const int64_t units = (blocks + block_multiple - 1) / block_multiple;
  Split split;
  split.rows_total = static_cast<size_t>(n * oh);
  split.min_chunk = static_cast<size_t>(chunk_for(ow * cp_ * taps * group_ + row_work));
  // Fewer output rows per thread than kernel rows (7 x 7 maps of 5x5 kernels), each thread's
  // chunk would copy nearly the same input rows into its ring: split the channel blocks over
  // the threads then (efficientnet_b0's 7x7 5x5 layers took as long on 2 threads as on 1).
  // More rows split rows, so each thread writes whole pixels and the ops after it (a squeeze-
  // excitation's pool and gate, the projection's tiles, all split by pixels) read them from
  // their own core (performance.md, "Depthwise layers split rows").
  split.channels = threads > 1 && channels_fill_cache_lines(channels_) &&
                   static_cast<int64_t>(split.rows_total) < geo_.kh * threads && units >= 2 * threads &&
                   split.rows_total >= 2 * split.min_chunk;
  return split;
}

size_t FdwLayer::row_chunk(const ThreadPool& pool, int64_t n, int64_t h, int64_t w,
                           const std::array<int64_t, 4>& pads) const {
  const Split split = split_for(pool, n, h, w, pads, 0, 1);
  if (split.channels || DilatedRowOrder(geo_.out_h(h, pads), geo_.sh, geo_.dh).period() > 1) return 0;
  const size_t chunk = pool.chunk_size(split.rows_total, split.min_chunk);
  return chunk < split.rows_total ? chunk : 0;
}

void FdwLayer::run(const ThreadPool& pool, ChunkScratch<float>& scratch, FdwSource& source, int64_t n, int64_t h,
                   int64_t w, const std::array<int64_t, 4>& pads, float* out, int64_t row_work,
                   int64_t block_multiple) const {
  const int64_t oh = geo_.out_h(h, pads), ow = geo_.out_w(w, pads), c = channels_;
  const int64_t kh = geo_.kh, wp = w + pads[1] + pads[3], row_floats = wp * cp_;
  const int64_t taps = kh * geo_.kw, blocks = cp_ / kFdwChannelBlock, block_floats = wp * kFdwChannelBlock;
  const int64_t left = pads[1] * kFdwChannelBlock, right = (pads[1] + w) * kFdwChannelBlock;
  const size_t ring_floats = RowRing::floats_needed(kh, row_floats);

  const Split split = split_for(pool, n, h, w, pads, row_work, block_multiple);
  const size_t rows_total = split.rows_total, min_chunk = split.min_chunk;
  const DilatedRowOrder order(oh, geo_.sh, geo_.dh);
  // Output rows r0 .. r1 - 1, channel blocks b0 .. b1 - 1, with the chunk's scratch at `storage`.
  auto run_rows = [&](size_t r0, size_t r1, int64_t b0, int64_t b1, float* storage) {
    // Padding rows (above and below the image) are read at the padding row's first block for
    // every block: one block of zeros per chunk instead of the whole row (83 KB for a 14 x 14 x
    // 1152 5x5 layer).
    RowRing ring(storage, kh, row_floats, 0.0f, block_floats);
    std::array<float*, kMaxRingRows> row_of;      // per ky: its ring row (all blocks)
    std::array<const float*, kMaxRingRows> rows;  // per ky: the current block of it
    std::array<const float*, kMaxRingRows> src;   // per fresh row: the source's row in memory
    std::array<int64_t, kMaxRingRows> input, fresh;
    const int64_t c0 = b0 * kFdwChannelBlock, c1 = std::min(c, b1 * kFdwChannelBlock);
    FdwRow p;
    p.rows = rows.data();
    p.kh = kh;
    p.kw = geo_.kw;
    p.sw = geo_.sw;
    p.dw = geo_.dw;
    p.out_stride = c;
    p.ow = ow;
    p.lo = lo_;
    p.hi = hi_;
    p.group = group_;
    // The zero padding columns around each block's pixels, once per slot: rows are written
    // only between them.
    for (int64_t s = 0; s < kh; ++s) {
      for (int64_t b = b0; b < b1; ++b) {
        float* const block = ring.slot(s) + b * block_floats;
        std::fill(block, block + left, 0.0f);
        std::fill(block + right, block + block_floats, 0.0f);
      }
    }
    for (size_t r = r0; r < r1; ++r) {
      const int64_t img = static_cast<int64_t>(r) / oh, oy = order.row(static_cast<int64_t>(r) % oh);
      float* const out_row = out + (img * oh + oy) * ow * c;
      const int64_t n_fresh =
          ring.place(img, oy, h, geo_.sh, pads[0], geo_.dh, row_of.data(), input.data(), fresh.data());
      for (int64_t f = 0; f < n_fresh; ++f) {
        src[f] = source.row(input[fresh[f]]);
        if (!src[f]) source.fill(input[fresh[f]], row_of[fresh[f]] + left, block_floats, b0, b1);
      }
      // Each copied row prefetches the same block of a row the next output row will add
      // (fresh row f <-> the f-th row past this output row's last). The copy reads 64 of each
      // pixel's c * 4 bytes, too sparse for the hardware's prefetchers, and large early layers
      // come from L3: MobileNetV2's 112x112x96 layer took 0.29 ms without it, 0.18 with it
      // (0.24 prefetching one output row further ahead).
      // In phase order the next output row's fresh rows are dh apart.
      const int64_t last = oy * geo_.sh - pads[0] + (kh - 1) * geo_.dh;
      const int64_t ahead_step = order.period() > 1 ? geo_.dh : 1;
      // Copies fresh row f's blocks [bb0, bb1).
      const auto pack_fresh = [&](int64_t f, int64_t bb0, int64_t bb1) {
        const int64_t ahead_row = last + (f + 1) * ahead_step, cb = bb0 * kFdwChannelBlock;
        const float* ahead = ahead_row >= 0 && ahead_row < h ? source.ahead(img * h + ahead_row) : nullptr;
        pack_(src[f] + cb, w, c, c - cb, bb1 - bb0, row_of[fresh[f]] + bb0 * block_floats + left, block_floats,
              ahead ? ahead + cb : nullptr);
      };
      const bool all_blocks_at_once =
          n_fresh * (b1 - b0) * block_floats * static_cast<int64_t>(sizeof(float)) <= kPackAllBlocksBytes;
      if (all_blocks_at_once)
        for (int64_t f = 0; f < n_fresh; ++f)
          if (src[f]) pack_fresh(f, b0, b1);
      for (int64_t b = b0; b < b1; ++b) {
        const int64_t cb = b * kFdwChannelBlock, valid = std::min<int64_t>(kFdwChannelBlock, c - cb);
        if (!all_blocks_at_once)
          for (int64_t f = 0; f < n_fresh; ++f)
            if (src[f]) pack_fresh(f, b, b + 1);
        for (int64_t ky = 0; ky < kh; ++ky) rows[ky] = input[ky] < 0 ? row_of[ky] : row_of[ky] + b * block_floats;
        p.weights = weights_.data() + b * taps * group_ * kFdwChannelBlock;
        p.bias = bias_.data() + cb;
        p.valid = valid;
        row_(p, out_row + cb);
      }
      // The fused Swish on the finished output row (or its blocks' channels), still in cache.
      if (activation_) {
        if (c0 == 0 && c1 == c) {
          activation_(out_row, out_row, ow * c);
        } else {
          for (int64_t ox = 0; ox < ow; ++ox) activation_(out_row + ox * c + c0, out_row + ox * c + c0, c1 - c0);
        }
      }
    }
  };
  const int64_t threads = pool.num_threads(), units = (blocks + block_multiple - 1) / block_multiple;
  if (split.channels) {
    scratch.prepare(pool, static_cast<size_t>(threads), 1, ring_floats);
    pool.parallel_for(static_cast<size_t>(threads), 1, [&](size_t g0, size_t g1) {
      for (size_t g = g0; g < g1; ++g) {
        const int64_t u0 = static_cast<int64_t>(g) * units / threads,
                      u1 = static_cast<int64_t>(g + 1) * units / threads;
        run_rows(0, rows_total, u0 * block_multiple, std::min(blocks, u1 * block_multiple), scratch.of(g0));
      }
    });
  } else {
    scratch.prepare(pool, rows_total, min_chunk, ring_floats);
    pool.parallel_for(rows_total, min_chunk,
                      [&](size_t r0, size_t r1) { run_rows(r0, r1, 0, blocks, scratch.of(r0)); });
  }
}

}  // namespace opt
}  // namespace xonnx
