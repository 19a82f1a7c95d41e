// Optimized BatchNormalization (opset 9+, inference) of float32 [N, C, ...] tensors, and of
// the layout pass's NHWC ones ([N, H, W, C], DenseNet's pre-activation BNs inside a region, and
// its ConcatBatchNorm: the BN of a channel Concat, reading the parts where they are): the
// reference's per-channel multiplier and offset (computed the same way, in double, then
// rounded), then y = x * m + b over each (n, c) plane, the planes split over the threads: the
// same bits as the reference kernel (ops/ref/normalization.cc), which runs on one thread and
// zero-fills its output first. Exports that keep BatchNormalization (TrainingMode.PRESERVE, no
// constant folding) run one per convolution. Declined: training mode and its extra outputs;
// at run time other dtypes, shapes or parameter sizes go to the reference (which reports them).
#include <cmath>
#include <vector>

#include "runtime/core/thread_pool.h"
#include "runtime/ops/internal_ops.h"
#include "runtime/ops/optimized/batch_norm_fold.h"
#include "runtime/ops/optimized/opt_util.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace opt {
namespace {

class BatchNormKernel final : public FastKernel {
 public:
  // nhwc: the layout pass's com.xonnx.nhwc BatchNormalization ([N, H, W, C], maybe with a fused
  // activation_min / activation_max range, applied as its reference twin does).
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init, bool nhwc) {
    XONNX_ASSIGN_OR_RETURN(int64_t training, init.get_int("training_mode", 0));
    if (training != 0) return unsupported("own BatchNormalization: training_mode");
    for (size_t i = 1; i < init.num_outputs(); ++i)
      if (!init.node().outputs[i].empty()) return unsupported("own BatchNormalization: running statistics outputs");
    XONNX_ASSIGN_OR_RETURN(float eps, init.get_float("epsilon", 1e-5f));
    auto k = std::unique_ptr<BatchNormKernel>(new BatchNormKernel());
    XONNX_RETURN_IF_ERROR(init_own_kernel(*k, init));
    k->epsilon_ = eps;
    k->nhwc_ = nhwc;
    if (nhwc) {  // without a fused range the bounds are infinite: the clamp changes nothing
      XONNX_ASSIGN_OR_RETURN(k->lo_, init.get_float("activation_min", -INFINITY));
      XONNX_ASSIGN_OR_RETURN(k->hi_, init.get_float("activation_max", INFINITY));
    }
    // Constant parameters (every export): the multipliers and offsets once, not per run (DenseNet's
    // 58 ConcatBatchNorms over up to 1024 channels: ~0.3 ms of square roots per run, on the caller).
    const Tensor* params[4];
    bool constant = true;
    for (size_t i = 0; i < 4; ++i) {
      params[i] = init.has_input(i + 1) ? init.constant_input(i + 1) : nullptr;
      constant = constant && params[i] && is_f32(*params[i]) && params[i]->numel() == params[0]->numel();
    }
    if (constant) {
      k->constant_params_ = true;
      k->fold(params[0]->data<float>(), params[1]->data<float>(), params[2]->data<float>(), params[3]->data<float>(),
              params[0]->numel());
    }
    return std::unique_ptr<Kernel>(std::move(k));
  }

 private:
  void fold(const float* scale, const float* bias, const float* mean, const float* var, int64_t c) {
    fold_batch_norm(scale, bias, mean, var, c, epsilon_, mul_, add_);
  }

  Status run_fast(KernelContext& ctx, bool& handled) override {
    const Tensor& x = ctx.input(0);
    if (!is_f32(x) || x.rank() < 2 || (nhwc_ && x.rank() != 4)) return Status::ok();
    int64_t c = nhwc_ ? x.dim(3) : x.dim(1);
    // ConcatBatchNorm: the parts (input 0, inputs 5..) side by side on the channel axis.
    parts_.assign(1, &x);
    for (size_t i = kFirstPart; i < ctx.num_inputs(); ++i) {
      const Tensor& part = ctx.input(i);
      if (!is_f32(part) || part.rank() != 4 || part.dim(0) != x.dim(0) || part.dim(1) != x.dim(1) ||
          part.dim(2) != x.dim(2))
        return Status::ok();  // the twin reports it
      parts_.push_back(&part);
      c += part.dim(3);
    }
    if (x.numel() <= 0 || c <= 0) return Status::ok();
    for (size_t i = 1; i <= 4; ++i) {
      const Tensor& t = ctx.input(i);
      if (!is_f32(t) || t.numel() != c) return Status::ok();
    }
    if (!constant_params_) {
      fold(ctx.input(1).data<float>(), ctx.input(2).data<float>(), ctx.input(3).data<float>(),
           ctx.input(4).data<float>(), c);
    }
    Shape shape = x.shape();
    shape[nhwc_ ? 3 : 1] = c;
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DataType::kFloat, shape));
    const float* src = x.data<float>();
    float* dst = y->data<float>();
    const float* mul = mul_.data();
    const float* add = add_.data();
    if (nhwc_) {  // one pixel's C values per row (part by part), the channel's multiplier and offset along it
      const float lo = lo_, hi = hi_;
      const size_t pixels = static_cast<size_t>(x.numel() / x.dim(3));
      pool_->parallel_for(pixels, chunk_for(c, kMinStreamingWork), [&](size_t p0, size_t p1) {
        for (size_t p = p0; p < p1; ++p) {
          float* out = dst + static_cast<int64_t>(p) * c;
          int64_t j0 = 0;  // the part's first channel
          for (const Tensor* part : parts_) {
            const int64_t pc = part->dim(3);
            kernels_.scale_shift_clamp(part->data<float>() + static_cast<int64_t>(p) * pc, mul + j0, add + j0, lo, hi,
                                       out + j0, pc);
            j0 += pc;
          }
        }
      });
    } else {
      const int64_t planes = x.dim(0) * c, sp = x.numel() / planes;
      pool_->parallel_for(static_cast<size_t>(planes), chunk_for(sp), [&](size_t p0, size_t p1) {
        for (size_t p = p0; p < p1; ++p) {
          const float m = mul[p % static_cast<size_t>(c)], b = add[p % static_cast<size_t>(c)];
          const float* in = src + static_cast<int64_t>(p) * sp;
          float* out = dst + static_cast<int64_t>(p) * sp;
          for (int64_t j = 0; j < sp; ++j) out[j] = in[j] * m + b;
        }
      });
    }
    handled = true;
    return Status::ok();
  }

  static constexpr size_t kFirstPart = 5;  // ConcatBatchNorm's part 1 (parts 0 is input 0)
  double epsilon_ = 1e-5;
  bool nhwc_ = false;
  std::vector<const Tensor*> parts_;  // per run: input 0, and ConcatBatchNorm's parts 1..
  float lo_ = -INFINITY, hi_ = INFINITY;
  std::vector<float> mul_, add_;
  const KernelTable& kernels_ = kernels();
  bool constant_params_ = false;  // mul_ and add_ were folded at creation
};

Result<std::unique_ptr<Kernel>> create_nchw(const KernelInit& init) { return BatchNormKernel::create(init, false); }
Result<std::unique_ptr<Kernel>> create_nhwc(const KernelInit& init) { return BatchNormKernel::create(init, true); }

}  // namespace

void register_opt_batch_norm(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "BatchNormalization", 9, kLatestVersion, create_nchw, Backend::kOptimized);
  XONNX_REGISTER(registry, kNhwcDomain, "BatchNormalization", 1, kLatestVersion, create_nhwc, Backend::kOptimized);
  XONNX_REGISTER(registry, kNhwcDomain, kConcatBatchNormOp, 1, kLatestVersion, create_nhwc, Backend::kOptimized);
}

}  // namespace opt
}  // namespace xonnx
