// Own float32 StemDepthwiseConv (the layout pass's merge of an image's Conv into the depthwise
// Conv that alone reads it: MobileNetV1 / V2's and MNASNet's first block). The depthwise layer
// (fdw_layer.h) takes its input rows from the stem's tiles (fconv.h, on the zero-padded copy
// with merged kernel rows, as the own Conv's stem), which write them straight into its ring:
// the stem's output (1.6 MB at 112 x 112 x 32) never goes through memory. Same tiles, taps and
// order per value as the two own kernels one after the other: the same bits.
#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/ops/common/conv_geometry.h"
#include "runtime/ops/internal_ops.h"
#include "runtime/ops/optimized/fconv.h"
#include "runtime/ops/optimized/fdw_layer.h"
#include "runtime/ops/optimized/opt_util.h"
#include "runtime/ops/optimized/padded_image.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace opt {
namespace {

constexpr int64_t kSegmentTiles = 8;  // tiles of a stem row per indirection table (96 pixels)
constexpr int64_t kMaxStemRows = 11;  // kernel rows of the stem (ResNet's 7x7 and more)

// The stem: an image's Conv on the tiles, its kernel rows merged (kh taps of kw * C values).
struct StemConv {
  FconvTileFn tile = nullptr;
  ConvGeometry geo;
  FconvWeights weights;
  int64_t channels = 0;  // the image's
  FusedOutput output;    // its fused output range and activation
};

// The stem's output rows, computed by its tiles into the depthwise ring's 16-channel blocks
// (a tile's columns 16-31 go to the next block), from the image's zero-padded copy (ph x pw).
// Every row's indirection tables are the same byte offsets from the row's first value, laid
// out once per run in `offsets` (built per row, the tables took a third of the time of a
// 3-channel 3x3 stem's tiles: MNASNet's, 27 multiply-adds per output value).
class StemRows final : public FdwSource {
 public:
  StemRows(const StemConv& stem, const float* padded, int64_t oh, int64_t ow, int64_t ph, int64_t pw,
           std::vector<uintptr_t>& offsets)
      : stem_(stem), padded_(padded), oh_(oh), ow_(ow), ph_(ph), pw_(pw), offsets_(offsets) {
    const ConvGeometry& g = stem_.geo;
    const int64_t kh = g.kh, c = stem_.channels, row_tiles = (ow + kFconvRows - 1) / kFconvRows;
    offsets_.resize(static_cast<size_t>(row_tiles * kh * kFconvRows));
    for (int64_t p0 = 0; p0 < ow_; p0 += kSegmentTiles * kFconvRows) {
      const int64_t p1 = std::min(ow_, p0 + kSegmentTiles * kFconvRows);
      uintptr_t* const segment = offsets_.data() + p0 / kFconvRows * kh * kFconvRows;
      const int64_t tiles = (p1 - p0 + kFconvRows - 1) / kFconvRows;
      for (int64_t i = 0; i < tiles * kFconvRows; ++i) {  // past the row: its last pixel
        const int64_t window = std::min(p0 + i, p1 - 1) * g.sw * c, ti = i / kFconvRows, r = i % kFconvRows;
        for (int64_t ky = 0; ky < kh; ++ky)
          segment[(ti * kh + ky) * kFconvRows + r] = (window + ky * pw_ * c) * sizeof(float);
      }
    }
  }

  void fill(int64_t row, float* blocks, int64_t block_floats, int64_t b0, int64_t b1) override {
    const ConvGeometry& g = stem_.geo;
    const int64_t img = row / oh_, oy = row % oh_, kh = g.kh;
    std::array<const float*, kSegmentTiles * kMaxStemRows * kFconvRows> table;
    FconvTile t;
    t.taps = kh;  // a tap per kernel row: its kw * C values are contiguous in the padded copy
    t.c = stem_.weights.c;
    t.lo = stem_.output.lo;
    t.hi = stem_.output.hi;
    const float* const first_row = padded_ + (img * ph_ + oy * g.sh) * pw_ * stem_.channels;
    for (int64_t p0 = 0; p0 < ow_; p0 += kSegmentTiles * kFconvRows) {
      const int64_t p1 = std::min(ow_, p0 + kSegmentTiles * kFconvRows);
      const int64_t entries = (p1 - p0 + kFconvRows - 1) / kFconvRows * kh * kFconvRows;
      const uintptr_t* __restrict const segment = offsets_.data() + p0 / kFconvRows * kh * kFconvRows;
      const float** __restrict const entry = table.data();
      const uintptr_t base = reinterpret_cast<uintptr_t>(first_row);
      for (int64_t i = 0; i < entries; ++i)  // vectorized: plain integer adds
        entry[i] = reinterpret_cast<const float*>(base + segment[i]);
      fdw_tiles_into_blocks(stem_.tile, t, stem_.weights, table.data(), p1 - p0, blocks + p0 * kFdwChannelBlock,
                            block_floats, b0, b1);
    }
    // the stem's fused (Hard)Swish, on the row's blocks
    if (stem_.output.activation) fdw_activate_blocks(stem_.output.activation, blocks, block_floats, b0, b1, ow_);
  }

 private:
  const StemConv& stem_;
  const float* padded_;
  int64_t oh_, ow_, ph_, pw_;
  std::vector<uintptr_t>& offsets_;
};

class StemDwF32NhwcKernel final : public FastKernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    static const char* const kWhat = "own image + depthwise Conv";
    const FconvTileFn tile = fconv_tile_fast();
    if (!tile) return unsupported(kWhat, ": AVX-512 only");
    auto k = std::unique_ptr<StemDwF32NhwcKernel>(new StemDwF32NhwcKernel());
    XONNX_ASSIGN_OR_RETURN(k->layer_, FdwLayer::create(init, 3, 4, kWhat));
    const int64_t m = k->layer_.channels();
    const Tensor* w = init.constant_input(1);
    if (!w || !is_f32(*w) || w->rank() != 4 || w->dim(0) != m || w->dim(1) < 1 || w->dim(1) > 4)
      return unsupported(kWhat, ": needs a constant float [M, C <= 4, kh, kw] stem W");
    int64_t group = 1;
    StemConv& stem = k->stem_;
    XONNX_ASSIGN_OR_RETURN(stem.geo, ConvGeometry::parse(init, w->shape(), group, kWhat, "stem_"));
    const ConvGeometry& g = stem.geo;
    if (group != 1 || g.dh != 1 || g.dw != 1 || g.kh > kMaxStemRows)
      return unsupported(kWhat, ": a stem of ", group, " groups, dilations ", g.dh, "x", g.dw, ", ", g.kh, " rows");
    XONNX_ASSIGN_OR_RETURN(stem.output, parse_fused_output(init, "stem_", kWhat));
    XONNX_ASSIGN_OR_RETURN(const int64_t nchw_input, init.get_int("nchw_input", 0));
    k->nchw_input_ = nchw_input == 1;
    XONNX_RETURN_IF_ERROR(init_own_kernel(*k, init));
    stem.tile = tile;
    stem.channels = w->dim(1);
    XONNX_ASSIGN_OR_RETURN(stem.weights, pack_fdw_source_conv(init, *w, g.kh, kWhat, "stem"));
    return std::unique_ptr<Kernel>(std::move(k));
  }

 private:
  Status run_fast(KernelContext& ctx, bool& handled) override {
    const Tensor& x = ctx.input(0);
    const int64_t c = stem_.channels;
    if (!is_f32(x) || x.rank() != 4 || x.dim(nchw_input_ ? 1 : 3) != c) return Status::ok();
    const int64_t n = x.dim(0), h = x.dim(nchw_input_ ? 2 : 1), w = x.dim(nchw_input_ ? 3 : 2);
    std::array<int64_t, 4> pads, dw_pads;
    if (n <= 0 || h <= 0 || w <= 0 || !stem_.geo.pads_for(h, w, pads)) return Status::ok();  // the reference reports it
    const int64_t oh = stem_.geo.out_h(h, pads), ow = stem_.geo.out_w(w, pads);
    const ConvGeometry& dw = layer_.geometry();
    if (oh <= 0 || ow <= 0 || !dw.pads_for(oh, ow, dw_pads)) return Status::ok();
    const int64_t out_h = dw.out_h(oh, dw_pads), out_w = dw.out_w(ow, dw_pads), m = layer_.channels();
    if (out_h <= 0 || out_w <= 0) return Status::ok();
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DataType::kFloat, {n, out_h, out_w, m}));
    const float* padded = padded_.copy(*pool_, x.data<float>(), nchw_input_, n, c, h, w, pads);
    StemRows rows(stem_, padded, oh, ow, h + pads[0] + pads[2], w + pads[1] + pads[3], row_offsets_);
    // An output row computes about sh stem rows; the channels split by whole 32-wide panels.
    layer_.run(*pool_, scratch_, rows, n, oh, ow, dw_pads, y->data<float>(),
               dw.sh * ow * stem_.weights.taps * stem_.weights.c * m, kFconvCols / kFdwChannelBlock);
    handled = true;
    return Status::ok();
  }

  void release_scratch() override { scratch_.release(); }

  FdwLayer layer_;
  StemConv stem_;
  bool nchw_input_ = false;             // X is [N, C, H, W]
  PaddedImage padded_;                  // the image, zero-padded, NHWC
  ChunkScratch<float> scratch_;         // per chunk: the depthwise ring
  std::vector<uintptr_t> row_offsets_;  // StemRows' table of a row, byte offsets (kept: no allocation per run)
};

}  // namespace

void register_opt_conv_stem_depthwise(OpRegistry& registry) {
  XONNX_REGISTER(registry, kNhwcDomain, kStemDepthwiseOp, 1, kLatestVersion, StemDwF32NhwcKernel::create,
                 Backend::kOptimized, kBackendPriority, fdw_fused_layers_available);
}

}  // namespace opt
}  // namespace xonnx
