// Own float32 depthwise convolution for the layout pass's NHWC Conv (group = channels, one
// output channel per input channel) on the AVX-512 rows of fdwconv.h, tried before XNNPACK:
// XNNPACK 2022's f32 depthwise kernels were ~3x slower than our int8 one on MobileNetV2's
// layers, and needed finiteness scans for the fused range's NaN semantics (ours need none).
//
// Each task takes a run of output rows. The input rows a row needs are copied, 16 channels
// at a time with zero padding columns (no bounds checks in the row kernel), into a
// ring of kh rows per parallel chunk, which consecutive output rows share; a block's rows are
// copied right before the row kernel reads them, so they are still in L1. Other CPUs, a
// channel multiplier above 1 and non-finite weights stay with XNNPACK or the reference twin.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "runtime/exec/thread_pool.h"
#include "runtime/ops/optimized/fdwconv.h"
#include "runtime/ops/optimized/opt_util.h"
#include "runtime/ops/optimized/row_ring.h"
#include "runtime/ops/registry.h"
#include "runtime/ops/xnnpack/xnnpack_util.h"

namespace xonnx {
namespace opt {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

class ConvDwF32NhwcKernel final : public OptKernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    const FdwRowFn row = fdw_row_fast();
    const FdwPackFn pack = fdw_pack_fast();
    if (!row || !pack || !xnn::is_nhwc_node(init)) return unsupported("own depthwise Conv: NHWC on AVX-512 only");
    const Tensor* w = init.constant_input(1);
    if (!w || !is_f32(*w) || w->rank() != 4 || w->dim(1) != 1)
      return unsupported("own depthwise Conv: needs a constant float [M, 1, kh, kw] W");
    const int64_t m = w->dim(0);
    int64_t group = 1;
    auto k = std::unique_ptr<ConvDwF32NhwcKernel>(new ConvDwF32NhwcKernel());
    XONNX_ASSIGN_OR_RETURN(k->geo_, xnn::ConvGeometry::parse(init, w->shape(), group, "own depthwise Conv"));
    if (group != m || m < 1) return unsupported("own depthwise Conv: not depthwise (group != channels)");
    if (k->geo_.kh > kMaxRingRows) return unsupported("own depthwise Conv: kernel taller than 16");
    const Tensor* bias = init.has_input(2) ? init.constant_input(2) : nullptr;
    if (init.has_input(2) && (!bias || !is_f32(*bias) || bias->rank() != 1 || bias->numel() != m))
      return unsupported("own depthwise Conv: bias must be a constant float [M]");
    XONNX_ASSIGN_OR_RETURN(k->lo_, init.get_float("activation_min", -kInf));
    XONNX_ASSIGN_OR_RETURN(k->hi_, init.get_float("activation_max", kInf));
    if (!(k->lo_ < k->hi_)) return unsupported("own depthwise Conv: empty output range");
    XONNX_ASSIGN_OR_RETURN(const std::string activation, init.get_string("activation", ""));
    if (!fused_activation(kernels(), activation, &k->activation_)) return unsupported("own depthwise Conv: activation ", activation);
    // The padding columns are multiplied by the weights where the reference skips them:
    // the same only while 0 * w == 0.
    const float* wd = w->data<float>();
    if (!std::all_of(wd, wd + w->numel(), [](float v) { return std::isfinite(v); }) ||
        (bias && !std::all_of(bias->data<float>(), bias->data<float>() + m, [](float v) { return std::isfinite(v); })))
      return unsupported("own depthwise Conv: non-finite weights or bias");
    XONNX_RETURN_IF_ERROR(k->init_common(init));
    k->row_ = row;
    k->pack_ = pack;
    k->channels_ = m;
    k->cp_ = (m + kFdwChannelBlock - 1) / kFdwChannelBlock * kFdwChannelBlock;
    const int64_t taps = k->geo_.kh * k->geo_.kw;
    k->weights_.assign(static_cast<size_t>(taps * k->cp_), 0.0f);
    k->bias_.assign(static_cast<size_t>(k->cp_), 0.0f);
    for (int64_t o = 0; o < m; ++o) {
      for (int64_t t = 0; t < taps; ++t)
        k->weights_[static_cast<size_t>((o / kFdwChannelBlock * taps + t) * kFdwChannelBlock + o % kFdwChannelBlock)] =
            wd[o * taps + t];
      if (bias) k->bias_[static_cast<size_t>(o)] = bias->data<float>()[o];
    }
    init.packed_constant_input(1);
    if (bias) init.packed_constant_input(2);
    return std::unique_ptr<Kernel>(std::move(k));
  }

 private:
  Status run_fast(KernelContext& ctx, bool& handled) override {
    const Tensor& x = ctx.input(0);
    if (!is_f32(x) || x.rank() != 4 || x.dim(3) != channels_) return Status::ok();
    const int64_t n = x.dim(0), h = x.dim(1), w = x.dim(2), c = channels_;
    std::array<int64_t, 4> pads;
    if (n <= 0 || h <= 0 || w <= 0 || !geo_.pads_for(h, w, pads)) return Status::ok();
    const int64_t oh = geo_.out_h(h, pads), ow = geo_.out_w(w, pads);
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DataType::kFloat, {n, oh, ow, c}));
    const float* in = x.data<float>();
    float* out = y->data<float>();
    const int64_t kh = geo_.kh, wp = w + pads[1] + pads[3], row_floats = wp * cp_;
    const int64_t taps = kh * geo_.kw, blocks = cp_ / kFdwChannelBlock, block_floats = wp * kFdwChannelBlock;
    const int64_t left = pads[1] * kFdwChannelBlock, right = (pads[1] + w) * kFdwChannelBlock;

    const size_t rows_total = static_cast<size_t>(n * oh), min_chunk = static_cast<size_t>(chunk_for(ow * cp_ * taps));
    // Output rows r0 .. r1 - 1, channel blocks b0 .. b1 - 1, with the ring at `storage`.
    auto run_rows = [&](size_t r0, size_t r1, int64_t b0, int64_t b1, float* storage) {
      RowRing ring(storage, kh, row_floats, 0.0f);
      std::array<float*, kMaxRingRows> row_of;        // per ky: its ring row (all blocks)
      std::array<const float*, kMaxRingRows> rows;    // per ky: the current block of it
      std::array<int64_t, kMaxRingRows> input, fresh;
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
      for (size_t r = r0; r < r1; ++r) {
        const int64_t img = static_cast<int64_t>(r) / oh, oy = static_cast<int64_t>(r) % oh;
        const int64_t n_fresh =
            ring.place(img, oy, h, geo_.sh, pads[0], geo_.dh, row_of.data(), input.data(), fresh.data());
        // Each copied row prefetches the same block of a row the next output row will add
        // (fresh row f <-> the f-th row past this output row's last). The copy reads 64 of each
        // pixel's c * 4 bytes, too sparse for the hardware's prefetchers, and large early layers
        // come from L3: MobileNetV2's 112x112x96 layer took 0.29 ms without it, 0.18 with it
        // (0.24 prefetching one output row further ahead).
        const int64_t ahead_first = oy * geo_.sh - pads[0] + (kh - 1) * geo_.dh + 1;
        for (int64_t b = b0; b < b1; ++b) {
          const int64_t c0 = b * kFdwChannelBlock, valid = std::min<int64_t>(kFdwChannelBlock, c - c0);
          for (int64_t f = 0; f < n_fresh; ++f) {
            const int64_t ky = fresh[f];
            float* block = row_of[ky] + b * block_floats;
            std::fill(block, block + left, 0.0f);
            std::fill(block + right, block + block_floats, 0.0f);
            const int64_t ahead_row = ahead_first + f;
            const float* ahead = ahead_row >= 0 && ahead_row < h ? in + (img * h + ahead_row) * w * c + c0 : nullptr;
            pack_(in + input[ky] * w * c + c0, w, c, valid, block + left, ahead);
          }
          for (int64_t ky = 0; ky < kh; ++ky) rows[ky] = row_of[ky] + b * block_floats;
          p.weights = weights_.data() + b * taps * kFdwChannelBlock;
          p.bias = bias_.data() + c0;
          p.valid = valid;
          row_(p, out + static_cast<int64_t>(r) * ow * c + c0);
        }
        // The fused Swish on the finished output row (or its blocks' channels), still in cache.
        if (activation_) {
          float* const row = out + static_cast<int64_t>(r) * ow * c;
          const int64_t c0 = b0 * kFdwChannelBlock, c1 = std::min(c, b1 * kFdwChannelBlock);
          if (c0 == 0 && c1 == c) {
            activation_(row, row, ow * c);
          } else {
            for (int64_t ox = 0; ox < ow; ++ox) activation_(row + ox * c + c0, row + ox * c + c0, c1 - c0);
          }
        }
      }
    };
    // Few output rows per thread (late layers: 7 or 14 rows), each thread's chunk would copy
    // nearly the same input rows into its ring: split the channel blocks over the threads then
    // (efficientnet_b0's 7x7 5x5 layers took as long on 2 threads as on 1).
    const int64_t threads = pool_->num_threads();
    const bool split_channels = threads > 1 && static_cast<int64_t>(rows_total) < 4 * kh * threads &&
                                blocks >= 2 * threads && rows_total >= 2 * min_chunk;
    if (split_channels) {
      ring_.prepare(*pool_, static_cast<size_t>(threads), 1, RowRing::floats_needed(kh, row_floats));
      pool_->parallel_for(static_cast<size_t>(threads), 1, [&](size_t g0, size_t g1) {
        for (size_t g = g0; g < g1; ++g)
          run_rows(0, rows_total, static_cast<int64_t>(g) * blocks / threads, static_cast<int64_t>(g + 1) * blocks / threads,
                   ring_.of(g0));
      });
    } else {
      ring_.prepare(*pool_, rows_total, min_chunk, RowRing::floats_needed(kh, row_floats));
      pool_->parallel_for(rows_total, min_chunk, [&](size_t r0, size_t r1) { run_rows(r0, r1, 0, blocks, ring_.of(r0)); });
    }
    handled = true;
    return Status::ok();
  }

  FdwRowFn row_ = nullptr;
  FdwPackFn pack_ = nullptr;
  xnn::ConvGeometry geo_;
  int64_t channels_ = 0, cp_ = 0;
  float lo_ = -kInf, hi_ = kInf;  // fused output range
  MapFn activation_ = nullptr;     // the layout pass's fused activation = "Swish" / "HardSwish"
  std::vector<float> weights_, bias_;  // [cp / 16][kh * kw][16], [cp]
  ChunkScratch<float> ring_;           // per chunk of output rows: the copied input rows
};

}  // namespace

void register_opt_conv_dw_f32(OpRegistry& registry) {
  OpDef def{xnn::kNhwcOpDomain, "Conv", 1, kLatestVersion, ConvDwF32NhwcKernel::create, 2, 3, 1, 1,
            Backend::kOptimized};
  def.before_xnnpack = true;
  registry.add(def);
}

}  // namespace opt
}  // namespace xonnx
