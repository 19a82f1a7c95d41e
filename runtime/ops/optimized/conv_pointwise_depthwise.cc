// Own float32 PointwiseDepthwiseConv (the layout pass's fusion of an NHWC 1x1 Conv into the
// depthwise Conv that alone reads it: MobileNet's and EfficientNet's expand -> depthwise; or
// into a grouped Conv of 4, 8 or 16 channels per group: ResNeXt's and RegNet's 1x1 -> 3x3).
// The depthwise layer (fdw_layer.h) takes its input rows from the 1x1 Conv's tiles (fconv.h),
// which write them straight into its ring: the expanded tensor, 6x the block's input (4.8 MB
// in MobileNetV2's first expand), never goes through memory and is never copied. Small maps,
// whose short rows would leave most tile rows idle, are expanded whole first (run_fast).
// Same tiles, rows and order as the two own kernels one after the other: the same bits.
#include <algorithm>
#include <array>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "runtime/ops/common/conv_geometry.h"
#include "runtime/ops/internal_ops.h"
#include "runtime/ops/optimized/fconv.h"
#include "runtime/ops/optimized/fdw_layer.h"
#include "runtime/ops/optimized/opt_util.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace opt {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr int64_t kSegmentTiles = 8;         // tiles of an expanded row per indirection table (96 pixels)
constexpr int64_t kWholeMapBytes = 1 << 20;  // a small map's whole expansion, in an L2

// The 1x1 Conv's output rows, written by its tiles straight into the depthwise ring's
// 16-channel blocks (a tile's columns 16-31 go to the next block).
class ExpandedRows final : public FdwSource {
 public:
  ExpandedRows(const FconvTileFn tile, const FconvWeights& weights, float lo, float hi, MapFn activation,
               const float* in, int64_t w)
      : tile_(tile), weights_(weights), lo_(lo), hi_(hi), activation_(activation), in_(in), w_(w) {}

  void fill(int64_t row, float* blocks, int64_t block_floats, int64_t b0, int64_t b1) override {
    const int64_t c = weights_.c;
    const float* x = in_ + row * w_ * c;
    std::array<const float*, kSegmentTiles * kFconvRows> table;
    const FconvTile t = fconv_pointwise_tile(weights_, lo_, hi_, kFdwChannelBlock);
    for (int64_t p0 = 0; p0 < w_; p0 += kSegmentTiles * kFconvRows) {
      const int64_t p1 = std::min(w_, p0 + kSegmentTiles * kFconvRows);
      const int64_t tiles = (p1 - p0 + kFconvRows - 1) / kFconvRows;
      fconv_consecutive_rows(table.data(), x, p0, p1 - 1, tiles * kFconvRows, c);  // past the row: its last pixel
      fdw_tiles_into_blocks(tile_, t, weights_, table.data(), p1 - p0, blocks + p0 * kFdwChannelBlock, block_floats, b0,
                            b1);
    }
    // the 1x1 Conv's fused (Hard)Swish, on the row's blocks
    if (activation_) fdw_activate_blocks(activation_, blocks, block_floats, b0, b1, w_);
  }

 private:
  FconvTileFn tile_;
  const FconvWeights& weights_;
  float lo_, hi_;
  MapFn activation_;
  const float* in_;
  int64_t w_;
};

class ConvPwDwF32NhwcKernel final : public FastKernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    static const char* const kWhat = "own pointwise + depthwise Conv";
    const FconvTileFn tile = fconv_tile_fast();
    if (!tile) return unsupported(kWhat, ": AVX-512 only");
    auto k = std::unique_ptr<ConvPwDwF32NhwcKernel>(new ConvPwDwF32NhwcKernel());
    XONNX_ASSIGN_OR_RETURN(k->layer_, FdwLayer::create(init, 3, 4, kWhat));
    const int64_t m = k->layer_.channels();
    const Tensor* w = init.constant_input(1);
    if (!w || !is_f32(*w) || w->rank() != 4 || w->dim(0) != m || w->dim(1) < 1 || w->dim(2) != 1 || w->dim(3) != 1)
      return unsupported(kWhat, ": needs a constant float [M, C, 1, 1] pointwise W");
    XONNX_ASSIGN_OR_RETURN(const FusedOutput fused, parse_fused_output(init, "pointwise_", kWhat));
    k->lo_ = fused.lo;
    k->hi_ = fused.hi;
    k->activation_ = fused.activation;
    XONNX_RETURN_IF_ERROR(init_own_kernel(*k, init));
    k->tile_ = tile;
    k->expanded_ = session_float_scratch(init);
    XONNX_ASSIGN_OR_RETURN(k->weights_, pack_fdw_source_conv(init, *w, 1, kWhat, "pointwise"));
    return std::unique_ptr<Kernel>(std::move(k));
  }

 private:
  Status run_fast(KernelContext& ctx, bool& handled) override {
    const Tensor& x = ctx.input(0);
    const int64_t c = weights_.c, m = weights_.m;
    if (!is_f32(x) || x.rank() != 4 || x.dim(3) != c) return Status::ok();
    const int64_t n = x.dim(0), h = x.dim(1), w = x.dim(2);
    const ConvGeometry& geo = layer_.geometry();
    std::array<int64_t, 4> pads;
    if (n <= 0 || h <= 0 || w <= 0 || !geo.pads_for(h, w, pads)) return Status::ok();
    const int64_t oh = geo.out_h(h, pads), ow = geo.out_w(w, pads);
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DataType::kFloat, {n, oh, ow, m}));
    const int64_t pixels = n * h * w, row_tiles = (w + kFconvRows - 1) / kFconvRows;
    if (w * 10 < row_tiles * kFconvRows * 7 && pixels * m * static_cast<int64_t>(sizeof(float)) <= kWholeMapBytes) {
      // A row of w pixels fills its tiles' 12 rows to w / (12 ceil(w / 12)) only (7 of 12 at
      // w = 7 and 14, MNASNet's and MobileNetV3's late blocks: their expansion ran 30 % slower
      // than the same 1x1 Conv alone). A small map is expanded whole instead, its pixels through
      // full tiles, into the session's scratch, where the depthwise layer reads it from L2.
      expanded_->prepare(*pool_, 1, 1, static_cast<size_t>(pixels * m));
      float* expanded = expanded_->of(0);
      const size_t row_chunk = layer_.row_chunk(*pool_, n, h, w, pads);
      if (row_chunk == 0 || !expand_rows(x.data<float>(), n, h, w, oh, geo.sh, row_chunk, expanded))
        expand(x.data<float>(), pixels, expanded);
      FdwTensorRows rows(expanded, w * m);
      layer_.run(*pool_, scratch_, rows, n, h, w, pads, y->data<float>());
    } else {
      ExpandedRows rows(tile_, weights_, lo_, hi_, activation_, x.data<float>(), w);
      // An output row expands about sh input rows; the channels split by whole 32-wide panels.
      layer_.run(*pool_, scratch_, rows, n, h, w, pads, y->data<float>(), geo.sh * w * c * m,
                 kFconvCols / kFdwChannelBlock);
    }
    handled = true;
    return Status::ok();
  }

  // out [pixels, m] = the 1x1 Conv of x [pixels, c] (with its range and activation): tiles of
  // 12 consecutive pixels, a panel's tiles one after another so that its weights stay in L1.
  // Where a pixel's m outputs end inside a cache line, a thread takes all panels of its tiles
  // instead, so that no two threads write the same pixel.
  void expand(const float* x, int64_t pixels, float* out) {
    const int64_t c = weights_.c, m = weights_.m;
    const int64_t tiles = (pixels + kFconvRows - 1) / kFconvRows, panels = (m + kFconvCols - 1) / kFconvCols;
    const bool panel_major = channels_fill_cache_lines(m);
    table_.resize(static_cast<size_t>(tiles * kFconvRows));
    fconv_consecutive_rows(table_.data(), x, 0, pixels - 1, tiles * kFconvRows, c);
    pool_->parallel_for(static_cast<size_t>(panels * tiles), chunk_for(kFconvRows * c * kFconvCols),
                        [&](size_t begin, size_t end) {
                          FconvTile t = fconv_pointwise_tile(weights_, lo_, hi_, m);
                          for (size_t task = begin; task < end; ++task) {
                            const int64_t i = static_cast<int64_t>(task);
                            const int64_t pn = panel_major ? i / tiles : i % panels;
                            const int64_t p0 = (panel_major ? i % tiles : i / panels) * kFconvRows;
                            fconv_use_panel(t, weights_, pn);
                            expand_tile(t, table_.data() + p0, p0, pixels, pn, out);
                          }
                        });
  }

  // Pixels [first, min(first + 12, end)) (their input rows at `rows`) x the panel set in t (pn)
  // into out [pixels, m], with the 1x1 Conv's activation.
  void expand_tile(FconvTile& t, const float** rows, int64_t first, int64_t end, int64_t pn, float* out) const {
    const int64_t m = weights_.m;
    t.a = rows;
    t.rows = std::min(kFconvRows, end - first);
    t.out = out + first * m + pn * kFconvCols;
    tile_(t);
    if (activation_)
      for (int64_t r = 0; r < t.rows; ++r) activation_(t.out + r * m, t.out + r * m, t.cols);
  }

  // The same product where the depthwise layer splits its output rows over the threads, in
  // chunks of row_chunk rows: each thread expands the input rows from the first its chunk reads
  // to the next chunk's first, all panels, so that the layer reads its rows (but for the kh - 1
  // at the seam) from its own core's cache. Split by panels, each thread read half of every row
  // from the other core (2 threads, medians of 5 alternating rounds: MobileNetV2 3.36 -> 3.03 ms,
  // regnet_y_400mf 4.24 -> 4.12, efficientnet_b0 5.10 -> 4.97; mnasnet1_0's 14 x 14 blocks 5 %).
  // False, and nothing done, where the chunks' input rows differ by over 1/8 (7 rows in 4 + 3):
  // the panels split evenly.
  bool expand_rows(const float* x, int64_t n, int64_t h, int64_t w, int64_t oh, int64_t sh, size_t row_chunk,
                   float* out) {
    const int64_t c = weights_.c, m = weights_.m, panels = (m + kFconvCols - 1) / kFconvCols;
    const int64_t rows_total = n * oh, step = static_cast<int64_t>(row_chunk);
    const int64_t chunks = (rows_total + step - 1) / step;
    // The input row output row r's chunk starts expanding at; chunk k ends where k + 1 starts.
    const auto first_input_row = [&](int64_t r) {
      return r >= rows_total ? n * h : r / oh * h + std::min(r % oh * sh, h);
    };
    int64_t fewest = n * h, most = 0;
    for (int64_t k = 0; k < chunks; ++k) {
      const int64_t rows = first_input_row((k + 1) * step) - first_input_row(k * step);
      fewest = std::min(fewest, rows);
      most = std::max(most, rows);
    }
    if ((most - fewest) * 8 > most) return false;
    table_.resize(static_cast<size_t>(n * h * w + chunks * kFconvRows));
    pool_->parallel_for(static_cast<size_t>(chunks), 1, [&](size_t k0, size_t k1) {
      FconvTile t = fconv_pointwise_tile(weights_, lo_, hi_, m);
      for (int64_t k = static_cast<int64_t>(k0); k < static_cast<int64_t>(k1); ++k) {
        const int64_t p0 = first_input_row(k * step) * w, p1 = first_input_row((k + 1) * step) * w;
        if (p1 <= p0) continue;
        const int64_t tiles = (p1 - p0 + kFconvRows - 1) / kFconvRows;
        const float** table = table_.data() + p0 + k * kFconvRows;  // chunks' tables apart
        fconv_consecutive_rows(table, x, p0, p1 - 1, tiles * kFconvRows, c);
        for (int64_t pn = 0; pn < panels; ++pn) {
          fconv_use_panel(t, weights_, pn);
          for (int64_t ti = 0; ti < tiles; ++ti)
            expand_tile(t, table + ti * kFconvRows, p0 + ti * kFconvRows, p1, pn, out);
        }
      }
    });
    return true;
  }

  void release_scratch() override {
    scratch_.release();
    expanded_->release();
    std::vector<const float*>().swap(table_);
  }

  FdwLayer layer_;
  FconvTileFn tile_ = nullptr;
  FconvWeights weights_;                           // the 1x1 Conv: [C] -> [M]
  float lo_ = -kInf, hi_ = kInf;                   // its fused output range
  MapFn activation_ = nullptr;                     // and activation
  ChunkScratch<float> scratch_;                    // per chunk: the ring and the expanded rows
  std::shared_ptr<ChunkScratch<float>> expanded_;  // the session's: a small map expanded whole
  std::vector<const float*> table_;                // its tiles' input rows
};

}  // namespace

void register_opt_conv_pointwise_depthwise(OpRegistry& registry) {
  XONNX_REGISTER(registry, kNhwcDomain, kPointwiseDepthwiseOp, 1, kLatestVersion, ConvPwDwF32NhwcKernel::create,
                 Backend::kOptimized, kBackendPriority, fdw_fused_layers_available);
}

}  // namespace opt
}  // namespace xonnx
