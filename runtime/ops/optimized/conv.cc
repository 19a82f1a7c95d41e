// Own fp32 convolution for the layout pass's NHWC Conv on the 12 x 32 AVX-512 tiles
// of fconv.h, tried before XNNPACK. No im2col: each block of output pixels builds an
// indirection table (per tile, per kernel tap, the 12 input pixels it reads, or a row of zeros
// for padding), then every 32-channel weight panel runs over the block's tiles while the
// block's input stays in cache. Bias and the fused Relu / Clip range are applied in the tile;
// its clamp keeps NaN, so unlike XNNPACK's kernels this one needs no finiteness scans.
// A grouped convolution of 32k output channels per group runs as one whose panels read a
// window of the channels (one group per panel). Groups of 4 or 8 inputs and as many outputs run
// on the depthwise rows (fdw_layer.h); other grouped and depthwise convolutions, and CPUs without
// AVX-512, stay with the depthwise kernels, XNNPACK or the twin.
// It also runs the layout pass's ConvNchwInput (an image read in NCHW by the stem's padded
// copy), ConcatConv (a 1x1 Conv over a channel Concat: one tap per part) and ConvMaxPool (a
// stem and its MaxPool: the stem's rows pooled from a ring in cache as they are computed), and
// a Conv with a residual Z (common/residual.h), added to the sums in the tile.
#include <algorithm>
#include <array>
#include <string>
#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "runtime/core/thread_pool.h"
#include "runtime/ops/common/conv_geometry.h"
#include "runtime/ops/common/finite.h"
#include "runtime/ops/internal_ops.h"
#include "runtime/ops/optimized/conv_winograd.h"
#include "runtime/ops/optimized/fconv.h"
#include "runtime/ops/optimized/max_pool.h"
#include "runtime/ops/optimized/opt_util.h"
#include "runtime/ops/optimized/padded_image.h"
#include "runtime/ops/optimized/row_ring.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace opt {
namespace {

constexpr int64_t kTilesPerBlock = 8;  // 96 output pixels per task
// A weight panel's taps run in chunks of at most this many bytes, so that the chunk stays in L2
// while a block's tiles run over it (a 3x3 layer of 2048 input channels has 2.4 MB panels:
// FCN's head read each one from L3 for every tile).
constexpr int64_t kPanelChunkBytes = 256 * 1024;
constexpr int64_t kMaxConcatParts = 16;  // ConcatConv's parts (the layout pass merges up to 16)
// Grouped Convs this kernel takes: a panel of one group (32k channels per group). Measured
// against XNNPACK's grouped igemm (four 3x3 layers of ResNeXt-50's widths, 1 thread): groups
// of 32 1.71 -> 0.87 ms; groups of 8 and 16 ran faster on XNNPACK (2.8 vs 3.0 ms, 1.24 vs
// 2.24 ms) than on panels holding 4 or 2 groups block-diagonally: groups of 4, 8 and 16 take
// the depthwise rows (fdw_layer.h).
bool own_grouped(int64_t group_out) { return group_out % kFconvCols == 0; }
constexpr float kInf = std::numeric_limits<float>::infinity();

class ConvF32NhwcKernel final : public FastKernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    const FconvTileFn tile = fconv_tile_fast();
    if (!tile || !is_nhwc_node(init)) return unsupported("own fp32 Conv: NHWC on AVX-512 only");
    const Tensor* w = init.constant_input(1);
    if (!w || !is_f32(*w) || w->rank() != 4) return unsupported("own fp32 Conv: needs a constant 4-D float W");
    const Tensor* b = init.has_input(2) ? init.constant_input(2) : nullptr;
    if (init.has_input(2) && (!b || !is_f32(*b) || b->numel() != w->dim(0)))
      return unsupported("own fp32 Conv: bias must be a constant float [M]");
    auto k = std::unique_ptr<ConvF32NhwcKernel>(new ConvF32NhwcKernel());
    int64_t group = 1;
    XONNX_ASSIGN_OR_RETURN(k->geo_, ConvGeometry::parse(init, w->shape(), group, "own fp32 Conv"));
    const int64_t group_out = w->dim(0) / group;
    if (group > 1) {
      if (!own_grouped(group_out) || init.node().op_type != "Conv")
        return unsupported("own fp32 Conv: ", group, " groups of ", group_out, " output channels");
      k->group_in_ = w->dim(1);
      k->group_out_ = group_out;
    }
    XONNX_ASSIGN_OR_RETURN(const FusedOutput fused, parse_fused_output(init, "", "own fp32 Conv"));
    k->lo_ = fused.lo;
    k->hi_ = fused.hi;
    k->activation_ = fused.activation;
    // A residual Z (the layout pass's merged Add) is added to the sums before the output range,
    // in the tile (FconvTile::residual) or Winograd's output transform.
    k->residual_ = init.node().op_type == "Conv" && init.has_input(kConvResidualInput);  // ConcatConv: parts
    if (k->residual_ && k->activation_) return unsupported("own fp32 Conv: a residual input with an activation");
    // Padding taps multiply zeros by the weights where the reference skips them: the same
    // only while 0 * w == 0.
    if (b && !all_finite(b->data<float>(), static_cast<size_t>(b->numel())))
      return unsupported("own fp32 Conv: non-finite bias");
    XONNX_RETURN_IF_ERROR(init_own_kernel(*k, init));
    k->tile_ = tile;
    k->session_scratch_ = session_float_scratch(init);
    const int64_t m = w->dim(0), c = w->dim(1) * group, taps = k->geo_.kh * k->geo_.kw;
    const ConvGeometry& g = k->geo_;
    // A few-channel stem (7x7 over RGB) has 3 values per tap: too few per row pointer (a tap's
    // loop of 16 values ran SqueezeNet's 16-channel 3x3 convs 8 % slower than 48). On a
    // zero-padded copy of the input the kw taps of a kernel row are contiguous, so they run as
    // one tap of kw * C values (the panels' [kh][kw][C] order is already that).
    k->merge_rows_ = c < 32 && k->geo_.kw > 1 && k->geo_.dw == 1 && group == 1;
    // ConvNchwInput (an image the layout pass left in NCHW): the padded copy converts it.
    XONNX_ASSIGN_OR_RETURN(const int64_t nchw_input, init.get_int("nchw_input", 0));
    k->nchw_input_ = init.node().op_type == kConvNchwInputOp || nchw_input == 1;
    // ConvMaxPool: the pool's attributes are pool_*.
    if (init.node().op_type == kConvMaxPoolOp) {
      XONNX_ASSIGN_OR_RETURN(k->stem_pool_, MaxPoolWindows::parse(init, "pool_"));
      if (k->stem_pool_->kernel(0) >= kMaxRingRows)
        return unsupported("own ConvMaxPool: a pool window of ", k->stem_pool_->kernel(0), " rows");
      k->pool_pad_.assign(static_cast<size_t>(m), -kInf);
    }
    // ConcatConv: a 1x1 Conv over the channel concatenation of its inputs 0, 3, 4, ...: each
    // part is one tap of C / parts values (the panels' [C] order is [parts][C / parts]).
    if (init.node().op_type == kConcatConvOp) {
      k->parts_ = static_cast<int64_t>(init.num_inputs()) - 2;
      if (taps != 1 || g.sh != 1 || g.sw != 1 || k->parts_ < 2 || k->parts_ > kMaxConcatParts || c % k->parts_ != 0)
        return unsupported("own fp32 Conv: ConcatConv of ", k->parts_, " parts with a ", g.kh, "x", g.kw, " kernel");
      k->merge_rows_ = false;
    }
    k->in_ch_ = c / k->parts_;
    k->out_ch_ = m;
    // A panel's rows at a time, checked for non-finite values (see above) on the way.
    std::vector<float> rows;
    bool finite = true;
    const FconvRowsFn rows_of = fconv_rows_of(*w, rows, finite);  // grouped: a panel's rows are its group's
    const float* bias = b ? b->data<float>() : nullptr;
    if (group == 1 && k->parts_ == 1 && WinogradConvF32::applies(g.kh, g.kw, g.sh, g.sw, g.dh, g.dw, c, m)) {
      k->merge_rows_ = false;
      if (k->nchw_input_ || k->stem_pool_) return unsupported("own fp32 Conv: NCHW input or pool on the Winograd path");
      // The weights the runs will take, packed now when the input's static shape tells which:
      // F(4x4) on large maps, F(2x2), or the direct tiles on maps too small for Winograd.
      // Without one, the first run packs what its map takes (a U-Net of dynamic size packed
      // F(2x2) here and F(4x4) at its first run: 3/4 of its creation was thrown away).
      auto winograd = std::make_unique<WinogradConvF32>(m, c, k->lo_, k->hi_, g.dh, g.dw);
      const std::optional<Shape> x = init.static_input_shape(0);
      std::array<int64_t, 4> pads;
      if (x && x->size() == 4 && (*x)[3] == c && (*x)[0] > 0 && (*x)[1] > 0 && (*x)[2] > 0 &&
          g.pads_for((*x)[1], (*x)[2], pads)) {
        const int64_t tile = winograd->tile_for((*x)[0], (*x)[1], (*x)[2], pads);
        if (tile > 0) {
          winograd = std::make_unique<WinogradConvF32>(rows_of, bias, m, c, k->lo_, k->hi_, g.dh, g.dw, tile);
        } else {
          k->w_ = pack_fconv_weights(rows_of, bias, m, c, taps, taps);
          k->zeros_.assign(static_cast<size_t>(c), 0.0f);
        }
      }
      if (!winograd->has_weights() && k->w_.packed.empty()) {  // nothing packed yet: W is still checked now
        for (int64_t o0 = 0; o0 < m; o0 += kFconvCols) rows_of(o0, std::min(kFconvCols, m - o0));
      }
      k->winograd_ = std::move(winograd);
    } else {
      if ((k->nchw_input_ || k->stem_pool_) && !k->merge_rows_)
        return unsupported("own fp32 Conv: NCHW input or pool without merged rows");
      k->w_ = pack_fconv_weights(rows_of, bias, m, group == 1 ? c : k->group_in_, taps,
                                 k->merge_rows_ ? g.kh : taps * k->parts_);
      k->zeros_.assign(static_cast<size_t>(c), 0.0f);
    }
    if (!finite) return unsupported("own fp32 Conv: non-finite weights");
    init.packed_constant_input(1);
    if (b) init.packed_constant_input(2);
    return std::unique_ptr<Kernel>(std::move(k));
  }

 private:
  Status run_fast(KernelContext& ctx, bool& handled) override {
    const Tensor& x = ctx.input(0);
    const int64_t c = in_ch_, m = out_ch_;
    if (!is_f32(x) || x.rank() != 4 || x.dim(nchw_input_ ? 1 : 3) != c) return Status::ok();
    const int64_t n = x.dim(0), h = x.dim(nchw_input_ ? 2 : 1), w = x.dim(nchw_input_ ? 3 : 2);
    std::array<const float*, kMaxConcatParts> parts{};  // ConcatConv: each part's data
    for (int64_t k = 0; k < parts_ && parts_ > 1; ++k) {
      const Tensor& part = k == 0 ? x : ctx.input(static_cast<size_t>(k + 2));
      if (!is_f32(part) || part.shape() != x.shape()) return Status::ok();  // the reference reports it
      parts[static_cast<size_t>(k)] = part.data<float>();
    }
    std::array<int64_t, 4> pads;
    if (n <= 0 || h <= 0 || w <= 0 || !geo_.pads_for(h, w, pads)) return Status::ok();
    const int64_t oh = geo_.out_h(h, pads), ow = geo_.out_w(w, pads);
    if (oh <= 0 || ow <= 0) return Status::ok();  // the reference reports it
    PoolDim pool_y, pool_x;                       // ConvMaxPool: the pool's windows over the Conv's output
    if (stem_pool_ &&
        (!stem_pool_->dim(0, oh, &pool_y) || !stem_pool_->dim(1, ow, &pool_x) || pool_y.out <= 0 || pool_x.out <= 0))
      return Status::ok();
    const Shape out_shape = stem_pool_ ? Shape{n, pool_y.out, pool_x.out, m} : Shape{n, oh, ow, m};
    const float* residual = nullptr;
    if (residual_) {  // Z of the output's shape (a broadcasting one is the twin's)
      const Tensor& z = ctx.input(kConvResidualInput);
      if (!is_f32(z) || z.shape() != out_shape) return Status::ok();
      residual = z.data<float>();
    }
    // Y over a Z nobody reads after this node: the tiles add each value of Z and store the sum
    // in its place, and the memory holds two streams of the tensor instead of three. Only
    // where the tiles are the whole path: Winograd may hand a non-finite result to the
    // reference, and taps in chunks keep partial sums in Y before Z is added.
    const bool over_residual = residual && !winograd_ && !stem_pool_ && w_.taps == 1;
    XONNX_ASSIGN_OR_RETURN(
        Tensor * y, over_residual ? ctx.allocate_output_over_input(0, kConvResidualInput, DataType::kFloat, out_shape)
                                  : ctx.allocate_output_uninitialized(0, DataType::kFloat, out_shape));
    const float* in = x.data<float>();
    // A map large enough for F(4x4) on an F(2x2) layer (no static shape at creation, or another
    // map than it said): F(4x4)'s weights, 36 / 16 as many, replace F(2x2)'s at the first such run.
    if (winograd_ && winograd_->large_tiles_pay(n, h, w, pads)) winograd_ = repack_winograd(ctx, 4);
    if (winograd_ && winograd_->pays(n, h, w, pads)) {  // inf / NaN in x: the reference's results, not Winograd's
      if (!winograd_->has_weights()) winograd_ = repack_winograd(ctx, winograd_->tile());
      winograd_ran_ = true;
      handled =
          keep_if_finite(winograd_->run(*pool_, *session_scratch_, in, n, h, w, pads, y->data<float>(), residual));
      if (handled && activation_) {  // after the output transform, in one pass
        float* out = y->data<float>();
        pool_->parallel_for(static_cast<size_t>(n * oh * ow), chunk_for(m * 4), [&](size_t p0, size_t p1) {
          const int64_t count = static_cast<int64_t>(p1 - p0) * m;
          activation_(out + p0 * m, out + p0 * m, count);
        });
      }
      return Status::ok();
    }
    // A map too small for Winograd's tiles (WinogradConvF32::pays): the direct tiles, their
    // weights packed at the first such run unless creation packed them.
    if (winograd_ && w_.packed.empty()) {
      const int64_t khw = geo_.kh * geo_.kw;
      w_ = repack(ctx, [&](const FconvRowsFn& rows_of, const float* bias) {
        return pack_fconv_weights(rows_of, bias, m, c, khw, khw);
      });
      zeros_.assign(static_cast<size_t>(c), 0.0f);
      // Winograd's weights, not used so far, make way for these: a model of fixed shapes never
      // needs them (512 -> 512 on 6x6 maps: 16.8 MB). A map that pays for Winograd packs them
      // again.
      if (!winograd_ran_) winograd_->release_weights();
    }
    const int64_t taps = w_.taps;
    const int64_t ph = h + pads[0] + pads[2], pw = w + pads[1] + pads[3];
    const bool pointwise =
        taps == 1 && !merge_rows_ && pads == std::array<int64_t, 4>{} && geo_.sh == 1 && geo_.sw == 1;
    if (merge_rows_) {  // the zero-padded copy, made before the tiles read it
      bool reshaped = false;
      in = padded_.copy(*pool_, in, nchw_input_, n, c, h, w, pads, &reshaped);
      if (reshaped) layer_table_.clear();  // built again below
    }
    float* out = y->data<float>();
    const int64_t pixels = n * oh * ow, tiles = (pixels + kFconvRows - 1) / kFconvRows;
    const int64_t panels = (m + kFconvCols - 1) / kFconvCols, threads = pool_->num_threads();
    // Blocks of at most kTilesPerBlock tiles, sized evenly, as many per thread: parallel_for's
    // contiguous chunks then carry equal work (a last short block left one thread idle).
    int64_t blocks = (tiles + kTilesPerBlock - 1) / kTilesPerBlock;
    // Few blocks (late layers: 7x7 = 49 pixels) split the weight panels over the threads
    // instead, when they divide evenly: each thread streams only its share of the weights,
    // once, over all tiles as one block (squeezenet's 13x13 512 -> 1000 classifier at 2
    // threads: 0.45 -> 0.43 ms with one block instead of two). Not where the map outweighs the
    // weights on enough tiles to share evenly (a 14 x 14 projection after a depthwise layer):
    // split by pixels, each thread reads all weights from L3 but only its pixels, which its own
    // core wrote, where a panel split read half the map from the other core (performance.md,
    // "Pre-activation BatchNorms in the Conv").
    const bool map_outweighs_weights =
        threads > 1 && tiles >= 4 * threads && n * h * w * c * parts_ > static_cast<int64_t>(w_.packed.size());
    const bool split_panels = blocks < 4 * threads && panels >= threads && panels % threads == 0 &&
                              channels_fill_cache_lines(m) && !map_outweighs_weights;
    if (split_panels) {
      blocks = 1;
    } else if (tiles >= threads) {
      blocks = (blocks + threads - 1) / threads * threads;
    }
    const int64_t groups = split_panels ? threads : 1;
    const int64_t group_panels = panels / groups;
    const size_t tasks = static_cast<size_t>(blocks * groups);  // group-major: a chunk keeps its panels
    const size_t min_chunk = chunk_for((tiles * kFconvRows / blocks) * taps * w_.c * m / groups / 4);
    // The indirection table of tiles [t0, t0 + count): [tiles][taps][12] input pointers.
    // Offsets of the taps from a window's first input value, for windows clear of the padding.
    const int64_t span_h = (geo_.kh - 1) * geo_.dh + 1, span_w = (geo_.kw - 1) * geo_.dw + 1;
    tap_offsets_.resize(static_cast<size_t>(geo_.kh * geo_.kw));  // sized once: the kernel is fixed
    for (int64_t ky = 0, tap = 0; ky < geo_.kh; ++ky)
      for (int64_t kx = 0; kx < geo_.kw; ++kx, ++tap)
        tap_offsets_[static_cast<size_t>(tap)] = (ky * geo_.dh * w + kx * geo_.dw) * c;
    // Merged rows: the kh taps of output pixel (img, oy, ox), kFconvRows apart from `entry` on,
    // each a kernel row of the padded copy.
    const auto merged_taps = [&](const float** entry, int64_t img, int64_t oy, int64_t ox) {
      for (int64_t ky = 0; ky < geo_.kh; ++ky)
        entry[ky * kFconvRows] = in + ((img * ph + oy * geo_.sh + ky * geo_.dh) * pw + ox * geo_.sw) * c;
    };
    const auto build_table = [&](const float** table, int64_t t0, int64_t count) {
      const int64_t p0 = t0 * kFconvRows, p1 = std::min(pixels, (t0 + count) * kFconvRows);
      if (parts_ > 1) {  // pixel p reads row p of each part, one tap per part
        for (int64_t ti = 0; ti < count; ++ti)
          for (int64_t tap = 0; tap < taps; ++tap)
            for (int64_t r = 0; r < kFconvRows; ++r)
              table[(ti * taps + tap) * kFconvRows + r] =
                  parts[static_cast<size_t>(tap)] + std::min(p0 + ti * kFconvRows + r, p1 - 1) * c;
        return;
      }
      if (pointwise) {  // pixel p reads row p of the input: no image / row / column walk
        fconv_consecutive_rows(table, in, p0, p1 - 1, count * kFconvRows, c);
        return;
      }
      // The pixel's (image, row, column), stepped instead of divided out per pixel.
      int64_t img = p0 / (oh * ow), oy = (p0 / ow) % oh, ox = p0 % ow;
      const auto next_pixel = [&] {
        if (++ox < ow) return;
        ox = 0;
        if (++oy < oh) return;
        oy = 0;
        ++img;
      };
      for (int64_t ti = 0; ti < count; ++ti) {
        const int64_t first = p0 + ti * kFconvRows, rows = std::min(kFconvRows, p1 - first);
        for (int64_t r = 0; r < kFconvRows; ++r) {
          if (r > 0 && r < rows) next_pixel();  // rows past the end repeat the last pixel
          const float** entry = table + ti * taps * kFconvRows + r;
          if (merge_rows_) {
            merged_taps(entry, img, oy, ox);
            continue;
          }
          const int64_t iy0 = oy * geo_.sh - pads[0], ix0 = ox * geo_.sw - pads[1];
          if (iy0 >= 0 && iy0 + span_h <= h && ix0 >= 0 && ix0 + span_w <= w) {  // no padding tap
            const float* base = in + ((img * h + iy0) * w + ix0) * c;
            for (int64_t tap = 0; tap < taps; ++tap)
              entry[tap * kFconvRows] = base + tap_offsets_[static_cast<size_t>(tap)];
            continue;
          }
          for (int64_t ky = 0, tap = 0; ky < geo_.kh; ++ky) {
            const int64_t iy = oy * geo_.sh - pads[0] + ky * geo_.dh;
            for (int64_t kx = 0; kx < geo_.kw; ++kx, ++tap) {
              const int64_t ix = ox * geo_.sw - pads[1] + kx * geo_.dw;
              const bool inside = iy >= 0 && iy < h && ix >= 0 && ix < w;
              entry[tap * kFconvRows] = inside ? in + ((img * h + iy) * w + ix) * c : zeros_.data();
            }
          }
        }
        next_pixel();  // the next tile's first pixel
      }
    };
    // The padded copy stays at one address: its table (for a stem, as much work as the tiles'
    // few multiply-adds) is built once per geometry, for the whole layer. ConvMaxPool's tiles
    // each lie in one output row: [rows][row_tiles] tiles.
    const int64_t row_tiles = (ow + kFconvRows - 1) / kFconvRows;
    const int64_t table_tiles = stem_pool_ ? n * oh * row_tiles : tiles;
    if (merge_rows_ &&
        (layer_table_in_ != in || layer_table_.size() != static_cast<size_t>(table_tiles * taps * kFconvRows))) {
      layer_table_.assign(static_cast<size_t>(table_tiles * taps * kFconvRows), nullptr);
      if (stem_pool_) {
        for (int64_t row = 0; row < n * oh; ++row) {
          const int64_t img = row / oh, oy = row % oh;
          for (int64_t ox = 0; ox < row_tiles * kFconvRows; ++ox)  // past the row: its last pixel
            merged_taps(
                layer_table_.data() + ((row * row_tiles + ox / kFconvRows) * taps) * kFconvRows + ox % kFconvRows, img,
                oy, std::min(ox, ow - 1));
        }
      } else {
        build_table(layer_table_.data(), 0, tiles);
      }
      layer_table_in_ = in;
    }
    if (stem_pool_) {
      run_pooled(n, oh, ow, pool_y, pool_x, out);
      handled = true;
      return Status::ok();
    }
    const int64_t most_block_tiles = (tiles + blocks - 1) / blocks;
    const int64_t chunk_taps =
        std::max<int64_t>(1, kPanelChunkBytes / (w_.c * kFconvCols * static_cast<int64_t>(sizeof(float))));
    const size_t table_size = static_cast<size_t>(most_block_tiles * taps * kFconvRows);
    if (!merge_rows_) tables_.prepare(*pool_, tasks, min_chunk, table_size);
    // The input pixels a block reads: at most its output rows' windows, whole rows.
    const bool restride = !merge_rows_ && parts_ == 1 && fconv_rows_alias(c);
    const int64_t block_out_rows = (most_block_tiles * kFconvRows + ow - 1) / ow + 1;
    const int64_t restride_capacity = std::min(n * h, (block_out_rows - 1) * geo_.sh + span_h) * w;
    if (restride) {
      session_scratch_->prepare(*pool_, tasks, min_chunk, static_cast<size_t>(restride_capacity * (c + kFconvRowPad)));
      restrided_tables_.prepare(*pool_, tasks, min_chunk, table_size);
    }
    if (group_in_) group_tables_.prepare(*pool_, tasks, min_chunk, table_size);
    // Whole tiles read padding in some taps only where the taps reach far past the border: a
    // dilated or large kernel. Those taps are skipped (FconvTile::padding_taps).
    const bool skip_padding =
        !merge_rows_ && parts_ == 1 && !pointwise && (geo_.dh > 1 || geo_.dw > 1 || geo_.kh > 3 || geo_.kw > 3);
    if (skip_padding) padding_masks_.prepare(*pool_, tasks, min_chunk, static_cast<size_t>(most_block_tiles));
    const auto padding_taps = [&](const float* const* entry) {
      uint64_t mask = 0;
      for (int64_t tap = 0; tap < std::min<int64_t>(taps, 64); ++tap) {
        const float* const* rows = entry + tap * kFconvRows;
        bool zeros = true;
        for (int64_t r = 0; r < kFconvRows && zeros; ++r) zeros = rows[r] == zeros_.data();
        if (zeros) mask |= uint64_t{1} << tap;
      }
      return mask;
    };
    auto run_tasks = [&](size_t task0, size_t task1) {
      FconvTile t = layer_tile();
      for (size_t task = task0; task < task1; ++task) {
        const int64_t group = static_cast<int64_t>(task) / blocks, blk = static_cast<int64_t>(task) % blocks;
        const int64_t t0 = blk * tiles / blocks, t1 = (blk + 1) * tiles / blocks;
        const int64_t p0 = t0 * kFconvRows, p1 = std::min(pixels, t1 * kFconvRows);
        const int64_t block_tiles = t1 - t0;
        const float** table = merge_rows_ ? layer_table_.data() + t0 * taps * kFconvRows : tables_.of(task0);
        if (!merge_rows_) build_table(table, t0, block_tiles);
        if (restride) {  // pixels 4 KB apart: the block reads a copy of them (fconv_rows_alias)
          const float** moved = restrided_tables_.of(task0);
          if (restride_rows(table, block_tiles * taps * kFconvRows, in, n * h * w, c, session_scratch_->of(task0),
                            restride_capacity, moved))
            table = moved;
        }
        // Each tile's padding taps, once for all of the block's panels.
        uint64_t* const masks = skip_padding ? padding_masks_.of(task0) : nullptr;
        for (int64_t ti = 0; masks && ti < block_tiles; ++ti) masks[ti] = padding_taps(table + ti * taps * kFconvRows);
        const int64_t pn0 = group * group_panels, pn1 = std::min(panels, (group + 1) * group_panels);
        for (int64_t pn = pn0; pn < pn1; ++pn) {
          set_panel(t, pn);
          // Grouped: the block's table shifted to the panel's first input channel (its zeros
          // row too: zeros_ spans every channel).
          const float** panel_table = table;
          if (group_in_) {
            panel_table = group_tables_.of(task0);
            const int64_t shift = panel_channel(pn);
            for (int64_t i = 0; i < block_tiles * taps * kFconvRows; ++i) panel_table[i] = table[i] + shift;
          }
          for (int64_t tap0 = 0; tap0 < taps; tap0 += chunk_taps) {
            FconvTile part = t;  // taps [tap0, tap0 + part.taps); the earlier ones' sums are at out
            part.taps = std::min(chunk_taps, taps - tap0);
            part.panel += tap0 * w_.c * kFconvCols;
            part.resume = tap0 > 0;
            const bool last = tap0 + part.taps == taps;
            if (!last) {  // partial sums, unclamped; the last chunk adds Z (if any), then clamps
              part.lo = -kInf;
              part.hi = kInf;
            }
            // Panels lie one after another, each [taps][c][32]: the next chunk of taps or panel.
            const bool more = tap0 + part.taps < taps || pn + 1 < pn1;
            const float* next = more ? part.panel + part.taps * w_.c * kFconvCols : nullptr;
            for (int64_t ti = 0; ti < block_tiles; ++ti) {
              const int64_t first = p0 + ti * kFconvRows;
              fconv_share_next_panel(part, next, ti, block_tiles);
              part.a = panel_table + (ti * taps + tap0) * kFconvRows;
              part.padding_taps = masks && tap0 < 64 ? masks[ti] >> tap0 : 0;
              part.rows = std::min(kFconvRows, p1 - first);
              part.out = out + first * m + pn * kFconvCols;
              part.residual = last && residual ? residual + first * m + pn * kFconvCols : nullptr;
              tile_(part);
            }
          }
        }
        if (activation_) {  // the fused (Hard)Swish on the block's output, still in cache; long
                            // runs hide the division's latency that a tile row's 32 values could not
          const int64_t c0 = pn0 * kFconvCols, c1 = std::min(m, pn1 * kFconvCols);
          if (c0 == 0 && c1 == m) {
            activation_(out + p0 * m, out + p0 * m, (p1 - p0) * m);
          } else {
            for (int64_t p = p0; p < p1; ++p) activation_(out + p * m + c0, out + p * m + c0, c1 - c0);
          }
        }
      }
    };
    pool_->parallel_for(tasks, min_chunk, run_tasks);
    handled = true;
    return Status::ok();
  }

  // A tile of this layer: its weights' taps and depth, output rows m apart, its output range.
  FconvTile layer_tile() const {
    FconvTile t;
    t.taps = w_.taps;
    t.c = w_.c;
    t.ldo = out_ch_;
    t.lo = lo_;
    t.hi = hi_;
    return t;
  }
  // Grouped: the first input channel of panel pn's group.
  int64_t panel_channel(int64_t pn) const { return pn * kFconvCols / group_out_ * group_in_; }
  // The tile's weights, bias and columns: 32-channel panel pn.
  void set_panel(FconvTile& t, int64_t pn) const {
    t.panel = w_.packed.data() + pn * w_.taps * w_.c * kFconvCols;
    t.bias = w_.bias.data() + pn * kFconvCols;
    t.cols = std::min(kFconvCols, out_ch_ - pn * kFconvCols);
  }

  void release_scratch() override { session_scratch_->release(); }

  // ConvMaxPool: per chunk of pool output rows, the Conv rows their windows read are computed
  // into a ring (RowRing) when first needed and pooled from there while in cache; the Conv's
  // output is never written whole. A chunk computes its first shared row again (one row of
  // ~100 per thread), the rest once. The tiles use the layer table, row by row.
  void run_pooled(int64_t n, int64_t oh, int64_t ow, const PoolDim& pool_y, const PoolDim& pool_x, float* out) {
    const MaxPoolWindows& win = *stem_pool_;
    const int64_t m = out_ch_, taps = w_.taps, panels = (m + kFconvCols - 1) / kFconvCols;
    const int64_t row_tiles = (ow + kFconvRows - 1) / kFconvRows;
    const int64_t row_floats = (ow * m + 15) / 16 * 16, kh = win.kernel(0), ntaps = win.taps();
    const int64_t rows = n * pool_y.out, row_taps = pool_x.out * ntaps;
    const size_t min_chunk = chunk_for(win.stride(0) * ow * taps * w_.c * m / 4);
    ring_.prepare(*pool_, static_cast<size_t>(rows), min_chunk, RowRing::floats_needed(kh, row_floats));
    pool_taps_.prepare(*pool_, static_cast<size_t>(rows), min_chunk, static_cast<size_t>(row_taps + kh));
    const float* pad = pool_pad_.data();
    pool_->parallel_for(static_cast<size_t>(rows), min_chunk, [&](size_t r0, size_t r1) {
      RowRing ring(ring_.of(r0), kh, row_floats, -kInf);
      const float** taps_of_row = pool_taps_.of(r0);
      const float** window_rows = taps_of_row + row_taps;
      std::array<float*, kMaxRingRows> slots;
      std::array<int64_t, kMaxRingRows> input, fresh;
      FconvTile t = layer_tile();
      for (size_t r = r0; r < r1; ++r) {
        const int64_t img = static_cast<int64_t>(r) / pool_y.out, py = static_cast<int64_t>(r) % pool_y.out;
        const int64_t n_fresh = ring.place(img, py, oh, win.stride(0), pool_y.pad_begin, win.dilation(0), slots.data(),
                                           input.data(), fresh.data());
        for (int64_t f = 0; f < n_fresh; ++f) {  // Conv row input[ky] (img * oh + oy) into its slot
          const int64_t ky = fresh[static_cast<size_t>(f)];
          float* const dst = slots[static_cast<size_t>(ky)];
          const float** table = layer_table_.data() + input[static_cast<size_t>(ky)] * row_tiles * taps * kFconvRows;
          for (int64_t pn = 0; pn < panels; ++pn) {
            set_panel(t, pn);
            for (int64_t j = 0; j < row_tiles; ++j) {
              t.a = table + j * taps * kFconvRows;
              t.rows = std::min(kFconvRows, ow - j * kFconvRows);
              t.out = dst + j * kFconvRows * m + pn * kFconvCols;
              tile_(t);
            }
          }
          if (activation_) activation_(dst, dst, ow * m);
        }
        for (int64_t ky = 0; ky < kh; ++ky)
          window_rows[ky] = input[static_cast<size_t>(ky)] < 0 ? nullptr : slots[static_cast<size_t>(ky)];
        win.row_taps(window_rows, ow, m, pool_x, pad, taps_of_row);
        max_pool_float(*k_, taps_of_row, pad, ntaps, pool_x.out, m, out + static_cast<int64_t>(r) * pool_x.out * m, m);
      }
    });
  }

  // pack(rows_of, bias) over the layer's constant W and B again, for the weights a Winograd
  // layer packs once a run shows the map's size (W was checked finite at creation; reading it
  // faults its pages back in).
  template <typename Pack>
  static std::invoke_result_t<Pack, const FconvRowsFn&, const float*> repack(KernelContext& ctx, Pack pack) {
    std::vector<float> rows;
    bool finite = true;
    return pack(fconv_rows_of(ctx.input(1), rows, finite), ctx.has_input(2) ? ctx.input(2).data<float>() : nullptr);
  }

  // This layer on Winograd F(tile x tile), its weights packed again from W and B.
  std::unique_ptr<WinogradConvF32> repack_winograd(KernelContext& ctx, int64_t tile) const {
    return repack(ctx, [&](const FconvRowsFn& rows_of, const float* bias) {
      return std::make_unique<WinogradConvF32>(rows_of, bias, out_ch_, in_ch_, lo_, hi_, geo_.dh, geo_.dw, tile);
    });
  }

  FconvTileFn tile_ = nullptr;
  MapFn activation_ = nullptr;  // the layout pass's fused activation = "Swish" / "HardSwish"
  ConvGeometry geo_;
  float lo_ = -kInf, hi_ = kInf;
  bool residual_ = false;  // Z (input 3) added before the range
  int64_t in_ch_ = 0, out_ch_ = 0;
  int64_t group_in_ = 0, group_out_ = 0;  // grouped: channels per group (0: one group)
  bool merge_rows_ = false;
  bool nchw_input_ = false;                    // ConvNchwInput: x is [N, C, H, W]
  int64_t parts_ = 1;                          // ConcatConv: the parts concatenated (in_ch_ channels each)
  std::unique_ptr<WinogradConvF32> winograd_;  // 3x3 stride 1: the Winograd path (w_ for small maps only)
  bool winograd_ran_ = false;                  // a run took the Winograd path
  FconvWeights w_;                             // taps and depth as the tiles see them (kh and kw * C when rows merge)
  std::vector<float> zeros_;                   // the input of padding taps
  PaddedImage padded_;                         // merged rows: the zero-padded input
  ChunkScratch<const float*> tables_;          // per chunk of tasks: the indirection table
  ChunkScratch<uint64_t> padding_masks_;       // per chunk of tasks: its tiles' padding taps
  ChunkScratch<const float*> group_tables_;    // grouped, per chunk: the table shifted to a panel's channels
  std::shared_ptr<ChunkScratch<float>>
      session_scratch_;                          // per chunk: a block's re-strided pixels, or Winograd's V and M
  ChunkScratch<const float*> restrided_tables_;  // per chunk: the block's table into session_scratch_
  std::vector<int64_t> tap_offsets_;             // per tap: its offset inside an unpadded window
  std::vector<const float*> layer_table_;        // merged rows: the whole layer's table, into padded_
  const float* layer_table_in_ = nullptr;        // the padded_ address layer_table_ points into
                                                 // (cleared when padded_ changes geometry)
  std::optional<MaxPoolWindows> stem_pool_;      // ConvMaxPool: the pool after the Conv
  std::vector<float> pool_pad_;                  // ConvMaxPool: what the pool's padding taps read (-inf)
  ChunkScratch<float> ring_;                     // ConvMaxPool, per chunk: the ring of Conv rows
  ChunkScratch<const float*> pool_taps_;         // ConvMaxPool, per chunk: a pool row's taps and rows
  const KernelTable* k_ = &kernels();
};

}  // namespace

void register_opt_conv(OpRegistry& registry) {
  bool (*available)() = [] { return enabled() && fconv_tile_fast() != nullptr; };
  // The layout pass's fused forms (runtime/passes/layout_nhwc.h) run on the same kernel.
  XONNX_REGISTER(registry, kNhwcDomain, "Conv", 1, kLatestVersion, ConvF32NhwcKernel::create, Backend::kOptimized,
                 kPriorityBeforeXnnpack, available);
  XONNX_REGISTER(registry, kNhwcDomain, kConvNchwInputOp, 1, kLatestVersion, ConvF32NhwcKernel::create,
                 Backend::kOptimized, kPriorityBeforeXnnpack, available);
  XONNX_REGISTER(registry, kNhwcDomain, kConvMaxPoolOp, 1, kLatestVersion, ConvF32NhwcKernel::create,
                 Backend::kOptimized, kPriorityBeforeXnnpack, available);
  XONNX_REGISTER(registry, kNhwcDomain, kConcatConvOp, 1, kLatestVersion, ConvF32NhwcKernel::create,
                 Backend::kOptimized, kPriorityBeforeXnnpack, available);
}

}  // namespace opt
}  // namespace xonnx
