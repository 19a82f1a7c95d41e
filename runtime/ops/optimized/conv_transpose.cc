// Own fp32 NHWC ConvTranspose for kernels that tile the output without overlap: kernel ==
// stride, no dilation, pads or output_padding, one group (U-Net's and DB heads' 2x2 stride-2
// upsampling). Each input pixel then owns a kh x kw block of output pixels, and row i of that
// block (taps (i, 0 .. kw-1), M channels each) is kw * M contiguous outputs: the input pixel
// times a [C, kw * M] matrix. So the op is kh GEMMs over the input pixels on the fconv tiles
// (fconv.h); a block of 96 pixels is computed into scratch and copied to its output rows.
// XNNPACK's deconvolution ran U-Net's two at ~50 % of the tiles' speed on one thread and took
// as long on two (up_t.1: 1.75 / 1.74 ms). The tile's clamp keeps NaN, and each output is one
// dot product plus the bias: no finiteness scan. Everything else stays with XNNPACK.
#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/thread_pool.h"
#include "runtime/ops/common/conv_geometry.h"
#include "runtime/ops/common/finite.h"
#include "runtime/ops/internal_ops.h"
#include "runtime/ops/optimized/fconv.h"
#include "runtime/ops/optimized/opt_util.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace opt {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr int64_t kTilesPerBlock = 8;  // 96 input pixels per task
constexpr int64_t kBlockPixels = kTilesPerBlock * kFconvRows;

class ConvTransposeF32NhwcKernel final : public FastKernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    static const char* const kWhat = "own fp32 ConvTranspose";
    const FconvTileFn tile = fconv_tile_fast();
    if (!tile || !is_nhwc_node(init)) return unsupported(kWhat, ": NHWC on AVX-512 only");
    const Tensor* w = init.constant_input(1);
    if (!w || !is_f32(*w) || w->rank() != 4) return unsupported(kWhat, ": needs a constant 4-D float W");
    int64_t group = 1;
    XONNX_ASSIGN_OR_RETURN(const ConvGeometry geo, ConvGeometry::parse(init, w->shape(), group, kWhat));
    std::array<int64_t, 4> pads{};
    XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> adj, init.get_ints("output_padding"));
    XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> output_shape, init.get_ints("output_shape"));
    const bool no_adj = std::all_of(adj.begin(), adj.end(), [](int64_t v) { return v == 0; });
    if (group != 1 || geo.kh != geo.sh || geo.kw != geo.sw || geo.dh != 1 || geo.dw != 1 || !no_adj ||
        !output_shape.empty() || !geo.fixed_pads(pads) || pads != std::array<int64_t, 4>{})
      return unsupported(kWhat, ": only kernel == stride, one group, no dilation, pads or output_padding");
    for (const char* fused : {"activation", "activation_min", "activation_max"})
      if (init.node().find_attr(fused)) return unsupported(kWhat, ": fused ", fused);
    const int64_t c = w->dim(0), m = w->dim(1);
    if (c <= 0 || m <= 0) return unsupported(kWhat, ": empty W");
    const Tensor* b = init.has_input(2) ? init.constant_input(2) : nullptr;
    if (init.has_input(2) && (!b || !is_f32(*b) || b->numel() != m))
      return unsupported(kWhat, ": bias must be a constant float [M]");
    auto k = std::unique_ptr<ConvTransposeF32NhwcKernel>(new ConvTransposeF32NhwcKernel());
    XONNX_RETURN_IF_ERROR(init_own_kernel(*k, init));
    k->tile_ = tile;
    k->kh_ = geo.kh;
    k->kw_ = geo.kw;
    k->c_ = c;
    k->m_ = m;
    // Tap row i's matrix, rows (j, o) for j < kw, o < M: W[:, o, i, j]. Non-finite weights
    // or bias are declined, as the own Conv declines them (the reference runs).
    const int64_t cols = geo.kw * m;
    std::vector<float> all(static_cast<size_t>(w->numel())), bias(static_cast<size_t>(cols), 0.0f), rows;
    w->read_bytes(0, all.size() * sizeof(float), all.data());  // the model's bytes may be misaligned
    bool finite = all_finite(all.data(), all.size());
    if (b) {
      std::vector<float> b_values(static_cast<size_t>(m));
      b->read_bytes(0, b_values.size() * sizeof(float), b_values.data());
      finite = finite && all_finite(b_values.data(), b_values.size());
      for (int64_t j = 0; j < geo.kw; ++j) std::copy(b_values.begin(), b_values.end(), bias.begin() + j * m);
    }
    if (!finite) return unsupported(kWhat, ": non-finite weights or bias");
    for (int64_t i = 0; i < geo.kh; ++i) {
      const auto rows_of = [&](int64_t o0, int64_t n) -> const float* {
        rows.resize(static_cast<size_t>(n * c));
        for (int64_t r = 0; r < n; ++r) {
          const int64_t j = (o0 + r) / m, o = (o0 + r) % m;
          for (int64_t ci = 0; ci < c; ++ci)
            rows[static_cast<size_t>(r * c + ci)] = all[static_cast<size_t>(((ci * m + o) * geo.kh + i) * geo.kw + j)];
        }
        return rows.data();
      };
      k->weights_.push_back(pack_fconv_weights(rows_of, b ? bias.data() : nullptr, cols, c, 1, 1));
    }
    init.packed_constant_input(1);
    if (b) init.packed_constant_input(2);
    return std::unique_ptr<Kernel>(std::move(k));
  }

 private:
  Status run_fast(KernelContext& ctx, bool& handled) override {
    const Tensor& x = ctx.input(0);
    if (!is_f32(x) || x.rank() != 4 || x.dim(3) != c_) return Status::ok();  // the twin reports it
    const int64_t n = x.dim(0), h = x.dim(1), w = x.dim(2);
    if (n <= 0 || h <= 0 || w <= 0) return Status::ok();
    const int64_t oh = h * kh_, ow = w * kw_, cols = kw_ * m_;
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DataType::kFloat, {n, oh, ow, m_}));
    const int64_t pixels = n * h * w, blocks = (pixels + kBlockPixels - 1) / kBlockPixels;
    const float* in = x.data<float>();
    float* out = y->data<float>();
    table_.resize(static_cast<size_t>(blocks * kBlockPixels));  // tile rows past the last pixel repeat it
    for (int64_t p = 0; p < blocks * kBlockPixels; ++p)
      table_[static_cast<size_t>(p)] = in + std::min(p, pixels - 1) * c_;
    const size_t tasks = static_cast<size_t>(blocks * kh_), min_chunk = chunk_for(kBlockPixels * c_ * cols);
    scratch_.prepare(*pool_, tasks, min_chunk, static_cast<size_t>(kBlockPixels * cols));
    pool_->parallel_for(tasks, min_chunk, [&](size_t begin, size_t end) {
      float* block_out = scratch_.of(begin);
      for (size_t task = begin; task < end; ++task) {
        const int64_t block = static_cast<int64_t>(task) / kh_, i = static_cast<int64_t>(task) % kh_;
        const int64_t p0 = block * kBlockPixels, count = std::min(kBlockPixels, pixels - p0);
        const FconvWeights& wt = weights_[static_cast<size_t>(i)];
        FconvTile t = fconv_pointwise_tile(wt, -kInf, kInf, cols);
        for (int64_t pn = 0; pn * kFconvCols < cols; ++pn) {  // a panel's weights stay in L1 over the block
          fconv_use_panel(t, wt, pn);
          for (int64_t r0 = 0; r0 < count; r0 += kFconvRows) {
            t.a = table_.data() + p0 + r0;
            t.rows = std::min(kFconvRows, count - r0);
            t.out = block_out + r0 * cols + pn * kFconvCols;
            tile_(t);
          }
        }
        // Pixel (image, row, column) of the block -> output row kh * row + i, columns kw * column ..
        for (int64_t r = 0; r < count; ++r) {
          const int64_t p = p0 + r, img = p / (h * w), yx = p % (h * w);
          float* dst = out + ((img * oh + kh_ * (yx / w) + i) * ow + kw_ * (yx % w)) * m_;
          std::memcpy(dst, block_out + r * cols, static_cast<size_t>(cols) * sizeof(float));
        }
      }
    });
    handled = true;
    return Status::ok();
  }

  void release_scratch() override {
    scratch_.release();
    std::vector<const float*>().swap(table_);
  }

  FconvTileFn tile_ = nullptr;
  int64_t kh_ = 1, kw_ = 1, c_ = 0, m_ = 0;
  std::vector<FconvWeights> weights_;  // per tap row i: [C] -> [kw * M]
  ChunkScratch<float> scratch_;        // per chunk: a block's [96][kw * M] outputs
  std::vector<const float*> table_;    // the tiles' input pixels
};

}  // namespace

void register_opt_conv_transpose(OpRegistry& registry) {
  // Before XNNPACK's deconvolution, which takes every other geometry.
  XONNX_REGISTER(registry, kNhwcDomain, "ConvTranspose", 1, kLatestVersion, ConvTransposeF32NhwcKernel::create,
                 Backend::kOptimized, kPriorityBeforeXnnpack, [] { return enabled() && fconv_tile_fast() != nullptr; });
}

}  // namespace opt
}  // namespace xonnx
