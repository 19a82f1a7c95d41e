// Optimized SimplifiedLayerNormalization (last axis) and com.microsoft
// SkipSimplifiedLayerNormalization (float32): one vectorized pass per row for the residual sum
// and one for the RMS scaling, rows split over the pool. Other axes, broadcasts and dtypes go
// to the reference kernels (ref/norm_simplified.cc), which define the semantics.
#include "runtime/ops/optimized/kernels_llm.h"
#include "runtime/ops/optimized/opt_util.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace opt {
namespace {

template <bool kSkip>
class SimplifiedNormKernel final : public FastKernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    XONNX_ASSIGN_OR_RETURN(float eps, init.get_float("epsilon", 1e-5f));
    XONNX_ASSIGN_OR_RETURN(int64_t axis, init.get_int("axis", -1));
    if (!kSkip && axis != -1)
      return unsupported("SimplifiedLayerNormalization: the optimized kernel normalizes the last axis");
    auto k = std::unique_ptr<SimplifiedNormKernel>(new SimplifiedNormKernel());
    XONNX_RETURN_IF_ERROR(init_own_kernel(*k, init));
    k->eps_ = eps;
    return std::unique_ptr<Kernel>(std::move(k));
  }

 private:
  Status run_fast(KernelContext& ctx, bool& handled) override {
    const Tensor& x = ctx.input(0);
    const size_t scale_at = kSkip ? 2 : 1;
    if (!is_f32(x) || x.rank() < 1 || x.numel() == 0) return Status::ok();
    if (kSkip && x.rank() != 2 && x.rank() != 3) return Status::ok();
    const int64_t D = x.dim(x.rank() - 1), rows = x.numel() / D;
    const Tensor& scale = ctx.input(scale_at);
    if (!is_f32(scale) || scale.shape() != Shape{D}) return Status::ok();
    const float* skip = nullptr;
    const float* bias = nullptr;
    float* sum = nullptr;
    if (kSkip) {
      const Tensor& s = ctx.input(1);
      if (!is_f32(s) || s.shape() != x.shape()) return Status::ok();
      skip = s.data<float>();
      if (ctx.has_input(3)) {
        if (!is_f32(ctx.input(3)) || ctx.input(3).shape() != Shape{D}) return Status::ok();
        bias = ctx.input(3).data<float>();
      }
      if (ctx.num_outputs() > 1 && ctx.output_wanted(1)) return Status::ok();
    }
    const size_t inv_at = kSkip ? 2 : 1;
    float* inv = nullptr;
    if (ctx.num_outputs() > inv_at && ctx.output_wanted(inv_at)) {
      Shape s = x.shape();
      s.back() = 1;
      XONNX_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output_uninitialized(inv_at, DataType::kFloat, s));
      inv = t->data<float>();
    }
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DataType::kFloat, x.shape()));
    if (kSkip) {
      if (ctx.num_outputs() > 3 && ctx.output_wanted(3)) {
        XONNX_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output_uninitialized(3, DataType::kFloat, x.shape()));
        sum = t->data<float>();
      }
    }
    const float* xp = x.data<float>();
    float* yp = y->data<float>();
    const float* gamma = scale.data<float>();
    const KernelTable& t = *k_;
    const LlmKernelTable& lt = llm_kernels();
    const float eps = eps_;
    pool_->parallel_for(static_cast<size_t>(rows), chunk_for(4 * D), [&](size_t begin, size_t end) {
      for (size_t r = begin; r < end; ++r) {
        const int64_t o = static_cast<int64_t>(r) * D;
        const float* src = xp + o;
        if (kSkip) {
          // The residual sum goes to output 3 when wanted, else through y (normalized in place).
          float* dst = sum ? sum + o : yp + o;
          t.binary(BinaryOp::kAdd, false, xp + o, skip + o, false, dst, D, 1);
          if (bias) t.add_into(bias, dst, D);
          src = dst;
        }
        lt.rms_norm_row(src, yp + o, D, gamma, eps, inv ? inv + r : nullptr);
      }
    });
    handled = true;
    return Status::ok();
  }

  float eps_ = 1e-5f;
  const KernelTable* k_ = &kernels();
};

}  // namespace

void register_opt_norm_simplified(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "SimplifiedLayerNormalization", 1, kLatestVersion, SimplifiedNormKernel<false>::create,
                 Backend::kOptimized);
  XONNX_REGISTER(registry, "com.microsoft", "SkipSimplifiedLayerNormalization", 1, kLatestVersion,
                 SimplifiedNormKernel<true>::create, Backend::kOptimized);
}

}  // namespace opt
}  // namespace xonnx
