// Optimized NHWC GroupNorm (the layout pass's form of torch's GroupNorm, layout_group_norm.cc,
// with or without its gamma and beta) and InstanceNormalization (one channel per group, then
// its scale and B): per image, each chunk of pixels sums every channel and its square (double,
// per channel: a pixel's channels are contiguous, so the sums vectorize), the chunks' sums are
// added per group, and a second pass writes (x - mean[c]) * rstd[c] of the channel's group
// (times gamma[c], plus beta[c]), the mean as a float and its rounding error (x * a + b, or the
// mean rounded once, lost the digits that matter where the mean is far from zero: a map around
// 300 of spread 0.006). Non-float or odd shapes, and groups whose sums are not finite, go to the
// twin (ops/ref/nhwc.cc).
#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "runtime/core/aligned_vector.h"
#include "runtime/ops/internal_ops.h"
#include "runtime/ops/optimized/opt_util.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace opt {
namespace {

class GroupNormNhwcKernel final : public FastKernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    auto k = std::unique_ptr<GroupNormNhwcKernel>(new GroupNormNhwcKernel());
    XONNX_RETURN_IF_ERROR(init_own_kernel(*k, init));
    k->instance_ = init.node().op_type == "InstanceNormalization";
    if (!k->instance_) {
      XONNX_ASSIGN_OR_RETURN(k->groups_, init.require_int("groups"));
    }
    XONNX_ASSIGN_OR_RETURN(k->epsilon_, init.get_float("epsilon", 1e-5f));
    return std::unique_ptr<Kernel>(std::move(k));
  }

 private:
  Status run_fast(KernelContext& ctx, bool& handled) override {
    const Tensor& x = ctx.input(0);
    if (!is_f32(x) || x.rank() != 4 || x.numel() == 0) return Status::ok();
    const int64_t groups = instance_ ? x.dim(3) : groups_;
    const float* gamma = nullptr;  // InstanceNormalization's scale and B, GroupNorm's gamma and beta
    const float* beta = nullptr;
    if (ctx.num_inputs() > 1) {
      const Tensor& s = ctx.input(1);
      const Tensor& b = ctx.input(2);
      if (!is_f32(s) || !is_f32(b) || s.shape() != Shape{x.dim(3)} || b.shape() != s.shape()) return Status::ok();
      gamma = s.data<float>();
      beta = b.data<float>();
    }
    if (groups < 1 || x.dim(3) % groups != 0) return Status::ok();
    const int64_t n = x.dim(0), pixels = x.dim(1) * x.dim(2), c = x.dim(3), cg = c / groups;
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DataType::kFloat, x.shape()));
    const int64_t chunks = std::min<int64_t>(pool_->num_threads(), std::max<int64_t>(1, pixels / 64));
    // Each chunk's sums in cache lines of their own: two threads adding into one line (the end of
    // one chunk's squares, the start of the next one's sums) bounced it between the cores at
    // every pixel (a 64 x 64 x 64 GroupNorm: 0.154 ms at 1 thread, 0.231 at 2).
    const int64_t stride = (2 * c + kLineDoubles - 1) / kLineDoubles * kLineDoubles;
    sums_.resize(static_cast<size_t>(chunks * stride));  // zeroed per image below
    scale_.resize(static_cast<size_t>(3 * c));
    for (int64_t img = 0; img < n; ++img) {
      const float* in = x.data<float>() + img * pixels * c;
      float* out = y->data<float>() + img * pixels * c;
      std::fill(sums_.begin(), sums_.end(), 0.0);
      pool_->parallel_for(static_cast<size_t>(chunks), 1, [&](size_t k0, size_t k1) {
        for (size_t k = k0; k < k1; ++k) {
          double* sum = sums_.data() + k * stride;
          double* squares = sum + c;
          const int64_t p0 = static_cast<int64_t>(k) * pixels / chunks,
                        p1 = static_cast<int64_t>(k + 1) * pixels / chunks;
          for (int64_t p = p0; p < p1; ++p) {
            const float* v = in + p * c;
            for (int64_t ch = 0; ch < c; ++ch) {
              sum[ch] += v[ch];
              squares[ch] += static_cast<double>(v[ch]) * v[ch];
            }
          }
        }
      });
      const double count = static_cast<double>(pixels * cg);
      bool finite = true;
      for (int64_t g = 0; g < groups; ++g) {
        double sum = 0, squares = 0;
        for (int64_t k = 0; k < chunks; ++k)
          for (int64_t ch = g * cg; ch < (g + 1) * cg; ++ch) {
            sum += sums_[static_cast<size_t>(k * stride + ch)];
            squares += sums_[static_cast<size_t>(k * stride + c + ch)];
          }
        finite = finite && std::isfinite(sum) && std::isfinite(squares);
        const double mean = sum / count, var = std::max(0.0, squares / count - mean * mean);
        const double rstd = 1.0 / std::sqrt(var + static_cast<double>(epsilon_));
        for (int64_t ch = g * cg; ch < (g + 1) * cg; ++ch) {
          scale_[static_cast<size_t>(ch)] = static_cast<float>(rstd);
          const float hi = static_cast<float>(mean);
          scale_[static_cast<size_t>(c + ch)] = hi;
          scale_[static_cast<size_t>(2 * c + ch)] = static_cast<float>(mean - hi);
        }
      }
      if (!keep_if_finite(finite)) return Status::ok();  // NaN / inf: the twin's semantics
      const float* a = scale_.data();                    // rstd
      const float* b = scale_.data() + c;                // mean, rounded to float
      const float* b_lo = scale_.data() + 2 * c;         // and what the rounding dropped
      pool_->parallel_for(static_cast<size_t>(pixels), chunk_for(c), [&](size_t p0, size_t p1) {
        for (size_t p = p0; p < p1; ++p) {
          const float* v = in + static_cast<int64_t>(p) * c;
          float* o = out + static_cast<int64_t>(p) * c;
          if (gamma) {
            for (int64_t ch = 0; ch < c; ++ch) o[ch] = (v[ch] - b[ch] - b_lo[ch]) * a[ch] * gamma[ch] + beta[ch];
          } else {
            for (int64_t ch = 0; ch < c; ++ch) o[ch] = (v[ch] - b[ch] - b_lo[ch]) * a[ch];
          }
        }
      });
    }
    handled = true;
    return Status::ok();
  }

  bool instance_ = false;  // InstanceNormalization: one channel per group, then scale and B
  int64_t groups_ = 0;
  float epsilon_ = 1e-5f;
  static constexpr int64_t kLineDoubles = 64 / sizeof(double);
  AlignedVector<double> sums_;  // per chunk, `stride` apart: [C] sums, [C] sums of squares
  std::vector<float> scale_;    // per channel, of its group: [C] 1 / sqrt(var + eps), [C] mean, [C] its rounding error
};

}  // namespace

void register_opt_group_norm(OpRegistry& registry) {
  XONNX_REGISTER(registry, kNhwcDomain, kGroupNormOp, 1, kLatestVersion, GroupNormNhwcKernel::create,
                 Backend::kOptimized);
  XONNX_REGISTER(registry, kNhwcDomain, "InstanceNormalization", 1, kLatestVersion, GroupNormNhwcKernel::create,
                 Backend::kOptimized);
}

}  // namespace opt
}  // namespace xonnx
