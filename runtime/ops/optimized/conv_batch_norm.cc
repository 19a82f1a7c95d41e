// Own float32 BatchNormConv: the layout pass's merge of an NHWC inference BatchNormalization
// (or ConcatBatchNorm, with its fused Relu) into the 1x1 Conv that alone reads it, DenseNet's
// pre-activation layers. Each task normalizes a block of pixels (the parts side by side) into a
// scratch that stays in L2, and the Conv's tiles (fconv.h) read it there: the normalized map, up
// to 1024 channels of 56 x 56 pixels, is never written whole and read back from L3. The same
// multipliers and expression as the own BatchNorm (batch_norm_fold.h) and the same tiles and
// order as the own 1x1 Conv: the same bits as the two kernels one after the other.
#include <algorithm>
#include <array>
#include <limits>
#include <memory>
#include <vector>

#include "runtime/core/thread_pool.h"
#include "runtime/ops/common/conv_geometry.h"
#include "runtime/ops/internal_ops.h"
#include "runtime/ops/optimized/batch_norm_fold.h"
#include "runtime/ops/optimized/fconv.h"
#include "runtime/ops/optimized/fdw_layer.h"
#include "runtime/ops/optimized/opt_util.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace opt {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr size_t kWeightInput = 5, kBiasInput = 6, kFirstPart = 7;  // parts 1.. (part 0 is input 0)
// A block's normalized pixels: at most this many bytes, so that they and a 32-channel panel of
// weights (128 KB at 1024 channels) share an L2 while the block's tiles run over each panel.
constexpr int64_t kBlockBytes = 256 * 1024;
constexpr int64_t kMaxBlockTiles = 8;  // 96 pixels, as the own Conv's blocks

class BatchNormConvKernel final : public FastKernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    static const char* const kWhat = "own BatchNormConv";
    const FconvTileFn tile = fconv_tile_fast();
    if (!tile || !is_nhwc_node(init)) return unsupported(kWhat, ": NHWC on AVX-512 only");
    XONNX_ASSIGN_OR_RETURN(const float epsilon, init.get_float("norm_epsilon", 1e-5f));
    XONNX_ASSIGN_OR_RETURN(const int64_t training, init.get_int("norm_training_mode", 0));
    if (training != 0) return unsupported(kWhat, ": training_mode");
    const Tensor* params[4];
    for (size_t i = 0; i < 4; ++i) {
      params[i] = init.has_input(i + 1) ? init.constant_input(i + 1) : nullptr;
      if (!params[i] || !is_f32(*params[i]) || params[i]->rank() != 1 || params[i]->numel() != params[0]->numel())
        return unsupported(kWhat, ": needs constant float [C] scale, B, mean and var");
    }
    const int64_t c = params[0]->numel();
    const Tensor* w = init.constant_input(kWeightInput);
    if (!w || !is_f32(*w) || w->rank() != 4 || w->dim(1) != c || w->dim(2) != 1 || w->dim(3) != 1 || c <= 0 ||
        w->dim(0) <= 0)
      return unsupported(kWhat, ": needs a constant float [M, C, 1, 1] W, M and C above 0");
    int64_t group = 1;
    XONNX_ASSIGN_OR_RETURN(const ConvGeometry geo, ConvGeometry::parse(init, w->shape(), group, kWhat));
    std::array<int64_t, 4> pads;
    if (group != 1 || geo.sh != 1 || geo.sw != 1 || !geo.fixed_pads(pads) || pads != std::array<int64_t, 4>{})
      return unsupported(kWhat, ": a 1x1 Conv of stride 1, no padding and one group only");
    auto k = std::unique_ptr<BatchNormConvKernel>(new BatchNormConvKernel());
    XONNX_ASSIGN_OR_RETURN(k->norm_lo_, init.get_float("norm_activation_min", -kInf));
    XONNX_ASSIGN_OR_RETURN(k->norm_hi_, init.get_float("norm_activation_max", kInf));
    XONNX_ASSIGN_OR_RETURN(const FusedOutput fused, parse_fused_output(init, "", kWhat));
    k->lo_ = fused.lo;
    k->hi_ = fused.hi;
    k->activation_ = fused.activation;
    XONNX_RETURN_IF_ERROR(init_own_kernel(*k, init));
    k->tile_ = tile;
    fold_batch_norm(params[0]->data<float>(), params[1]->data<float>(), params[2]->data<float>(),
                    params[3]->data<float>(), c, epsilon, k->mul_, k->add_);
    XONNX_ASSIGN_OR_RETURN(k->weights_, pack_fdw_source_conv(init, *w, 1, kWhat, "Conv", kWeightInput, kBiasInput));
    return std::unique_ptr<Kernel>(std::move(k));
  }

 private:
  Status run_fast(KernelContext& ctx, bool& handled) override {
    const Tensor& x = ctx.input(0);
    if (!is_f32(x) || x.rank() != 4) return Status::ok();
    const int64_t c = weights_.c, m = weights_.m;
    // The parts side by side on the channel axis (anything else: the twin reports it).
    parts_.assign(1, &x);
    int64_t channels = x.dim(3);
    for (size_t i = kFirstPart; i < ctx.num_inputs(); ++i) {
      const Tensor& part = ctx.input(i);
      if (!is_f32(part) || part.rank() != 4 || part.dim(0) != x.dim(0) || part.dim(1) != x.dim(1) ||
          part.dim(2) != x.dim(2))
        return Status::ok();
      parts_.push_back(&part);
      channels += part.dim(3);
    }
    const int64_t pixels = x.dim(0) * x.dim(1) * x.dim(2);
    if (channels != c || pixels <= 0) return Status::ok();
    XONNX_ASSIGN_OR_RETURN(Tensor * y,
                           ctx.allocate_output_uninitialized(0, DataType::kFloat, {x.dim(0), x.dim(1), x.dim(2), m}));
    float* const out = y->data<float>();
    // Rows 4 KB apart share an L1 set (fconv.h): such scratch rows are padded.
    const int64_t ldc = c + (fconv_rows_alias(c) ? kFconvRowPad : 0);
    const int64_t tiles = (pixels + kFconvRows - 1) / kFconvRows, panels = (m + kFconvCols - 1) / kFconvCols;
    const int64_t threads = pool_->num_threads();
    const int64_t block_tiles =
        std::clamp<int64_t>(kBlockBytes / (kFconvRows * ldc * static_cast<int64_t>(sizeof(float))), 1, kMaxBlockTiles);
    int64_t blocks = (tiles + block_tiles - 1) / block_tiles;
    // Fewer blocks than threads (DenseNet's 7 x 7 layers: 49 pixels) split the panels instead:
    // each thread normalizes the block too, a small part of the work, and writes whole lines.
    const int64_t groups = blocks < threads && panels % threads == 0 && channels_fill_cache_lines(m) ? threads : 1;
    if (groups == 1 && tiles >= threads) blocks = (blocks + threads - 1) / threads * threads;  // even chunks
    const int64_t most_tiles = (tiles + blocks - 1) / blocks;
    const size_t tasks = static_cast<size_t>(groups * blocks);  // group-major: a chunk keeps its panels
    const size_t min_chunk = chunk_for(most_tiles * kFconvRows * (c + c * m / groups));
    scratch_.prepare(*pool_, tasks, min_chunk, static_cast<size_t>(most_tiles * kFconvRows * ldc));
    tables_.prepare(*pool_, tasks, min_chunk, static_cast<size_t>(most_tiles * kFconvRows));
    pool_->parallel_for(tasks, min_chunk, [&](size_t begin, size_t end) {
      float* const normalized = scratch_.of(begin);
      const float** const table = tables_.of(begin);
      FconvTile t = fconv_pointwise_tile(weights_, lo_, hi_, m);
      for (size_t task = begin; task < end; ++task) {
        const int64_t g = static_cast<int64_t>(task) / blocks, b = static_cast<int64_t>(task) % blocks;
        const int64_t t0 = tiles * b / blocks, t1 = tiles * (b + 1) / blocks;
        const int64_t p0 = t0 * kFconvRows, p1 = std::min(pixels, t1 * kFconvRows);
        if (p0 >= p1) continue;
        normalize(p0, p1, ldc, normalized);
        fconv_consecutive_rows(table, normalized, 0, p1 - p0 - 1, (t1 - t0) * kFconvRows, ldc);
        const int64_t pn0 = panels * g / groups, pn1 = panels * (g + 1) / groups;
        for (int64_t pn = pn0; pn < pn1; ++pn) {
          fconv_use_panel(t, weights_, pn);
          for (int64_t ti = 0; ti < t1 - t0; ++ti) {
            t.a = table + ti * kFconvRows;
            t.rows = std::min(kFconvRows, p1 - p0 - ti * kFconvRows);
            t.out = out + (p0 + ti * kFconvRows) * m + pn * kFconvCols;
            tile_(t);
          }
        }
        if (!activation_) continue;  // the Conv's fused (Hard)Swish, on the block's outputs in cache
        if (groups == 1) {
          activation_(out + p0 * m, out + p0 * m, (p1 - p0) * m);
        } else {
          const int64_t j0 = pn0 * kFconvCols, j1 = std::min(m, pn1 * kFconvCols);
          for (int64_t p = p0; p < p1; ++p) activation_(out + p * m + j0, out + p * m + j0, j1 - j0);
        }
      }
    });
    handled = true;
    return Status::ok();
  }

  // Pixels [p0, p1) normalized into rows of `ldc` floats at `dst`, the parts side by side.
  void normalize(int64_t p0, int64_t p1, int64_t ldc, float* dst) const {
    for (int64_t p = p0; p < p1; ++p) {
      float* const row = dst + (p - p0) * ldc;
      int64_t j0 = 0;  // the part's first channel
      for (const Tensor* part : parts_) {
        const int64_t pc = part->dim(3);
        kernels_.scale_shift_clamp(part->data<float>() + p * pc, mul_.data() + j0, add_.data() + j0, norm_lo_, norm_hi_,
                                   row + j0, pc);
        j0 += pc;
      }
    }
  }

  void release_scratch() override {
    scratch_.release();
    tables_.release();
  }

  FconvTileFn tile_ = nullptr;
  FconvWeights weights_;                    // the 1x1 Conv: [C] -> [M]
  std::vector<float> mul_, add_;            // the BatchNorm, folded (batch_norm_fold.h)
  const KernelTable& kernels_ = kernels();  // its scale_shift_clamp
  float norm_lo_ = -kInf, norm_hi_ = kInf;  // its fused output range (the Relu)
  float lo_ = -kInf, hi_ = kInf;            // the Conv's
  MapFn activation_ = nullptr;              // and its fused activation
  std::vector<const Tensor*> parts_;        // per run: input 0, then inputs kFirstPart..
  ChunkScratch<float> scratch_;             // per chunk: a block's normalized pixels
  ChunkScratch<const float*> tables_;       // and its tiles' rows
};

}  // namespace

void register_opt_conv_batch_norm(OpRegistry& registry) {
  bool (*available)() = [] { return enabled() && fconv_tile_fast() != nullptr; };
  XONNX_REGISTER(registry, kNhwcDomain, kBatchNormConvOp, 1, kLatestVersion, BatchNormConvKernel::create,
                 Backend::kOptimized, kBackendPriority, available);
}

}  // namespace opt
}  // namespace xonnx
