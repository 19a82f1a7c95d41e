// Optimized LayerNormalization (float32): rows are the dims before `axis`, each normalized
// over the dims from it with float accumulation (two passes: mean, then centred squares),
// rows split over the pool. Scale and B must cover exactly the normalized dims (the usual
// [.., D] parameters); other broadcasts go to the reference kernel. The Mean / InvStdDev
// outputs are computed for stash_type float; other stash types are declined at creation.
// InstanceNormalization (float32, scale and B of [C]): each (n, c) row of the spatial dims
// normalized the same way, then scaled and shifted by its channel's values; torch exports
// GroupNorm as one too (Reshape to [N, groups, -1]).
#include <vector>

#include "runtime/core/thread_pool.h"
#include "runtime/ops/optimized/opt_util.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace opt {
namespace {

// True when `p` broadcasts to the normalized dims without repeating values (same numel).
bool param_covers_inner(const Tensor& p, const Shape& x, size_t axis, int64_t inner) {
  if (!is_f32(p) || p.numel() != inner || p.rank() > x.size() - axis) return false;
  for (size_t i = 0; i < p.rank(); ++i)
    if (p.dim(p.rank() - 1 - i) != x[x.size() - 1 - i]) return false;
  return true;
}

class LayerNormKernel final : public FastKernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    XONNX_ASSIGN_OR_RETURN(int64_t axis, init.get_int("axis", -1));
    XONNX_ASSIGN_OR_RETURN(float eps, init.get_float("epsilon", 1e-5f));
    XONNX_ASSIGN_OR_RETURN(int64_t stash, init.get_int("stash_type", 1));
    const bool stats = (init.num_outputs() > 1 && !init.node().outputs[1].empty()) ||
                       (init.num_outputs() > 2 && !init.node().outputs[2].empty());
    if (stats && stash != static_cast<int64_t>(DataType::kFloat))
      return unsupported("LayerNormalization: optimized kernel computes Mean/InvStdDev as float only");
    for (size_t i = 0; i < 3; ++i) XONNX_RETURN_IF_ERROR(require_f32_if_constant(init, i, "LayerNormalization"));
    auto k = std::unique_ptr<LayerNormKernel>(new LayerNormKernel());
    XONNX_RETURN_IF_ERROR(init_own_kernel(*k, init));
    k->axis_ = axis;
    k->eps_ = eps;
    return std::unique_ptr<Kernel>(std::move(k));
  }

 private:
  Status run_fast(KernelContext& ctx, bool& handled) override {
    const Tensor& x = ctx.input(0);
    if (!is_f32(x) || x.numel() <= 0) return Status::ok();
    const int64_t rank = static_cast<int64_t>(x.rank());
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    if (axis < 0 || axis >= rank) return Status::ok();
    int64_t rows = 1, inner = 1;
    for (int64_t i = 0; i < rank; ++i) (i < axis ? rows : inner) *= x.dim(static_cast<size_t>(i));
    const Tensor& scale = ctx.input(1);
    if (!param_covers_inner(scale, x.shape(), static_cast<size_t>(axis), inner)) return Status::ok();
    const bool has_bias = ctx.has_input(2);
    if (has_bias && !param_covers_inner(ctx.input(2), x.shape(), static_cast<size_t>(axis), inner)) return Status::ok();
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DataType::kFloat, x.shape()));
    float* stat[2] = {nullptr, nullptr};
    Shape sshape = x.shape();
    for (size_t i = static_cast<size_t>(axis); i < sshape.size(); ++i) sshape[i] = 1;
    for (size_t out = 1; out <= 2 && out < ctx.num_outputs(); ++out) {
      if (!ctx.output_wanted(out)) continue;
      XONNX_ASSIGN_OR_RETURN(Tensor * s, ctx.allocate_output_uninitialized(out, DataType::kFloat, sshape));
      stat[out - 1] = s->data<float>();
    }
    const float* xp = x.data<float>();
    const float* sp = scale.data<float>();
    const float* bp = has_bias ? ctx.input(2).data<float>() : nullptr;
    float* yp = y->data<float>();
    const KernelTable& t = *k_;
    const float eps = eps_;
    // A row is read three times (mean, variance, output) and written once: ~4 operations per
    // value, as the simplified norms count them (a ViT's [197, 384] ran on one thread).
    pool_->parallel_for(static_cast<size_t>(rows), chunk_for(4 * inner), [&](size_t begin, size_t end) {
      for (size_t r = begin; r < end; ++r) {
        const int64_t o = static_cast<int64_t>(r) * inner;
        t.layer_norm_row(xp + o, yp + o, inner, sp, bp, eps, stat[0] ? stat[0] + r : nullptr,
                         stat[1] ? stat[1] + r : nullptr);
      }
    });
    handled = true;
    return Status::ok();
  }

  int64_t axis_ = -1;
  float eps_ = 1e-5f;
  const KernelTable* k_ = &kernels();
};

class InstanceNormKernel final : public FastKernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    XONNX_ASSIGN_OR_RETURN(float eps, init.get_float("epsilon", 1e-5f));
    for (size_t i = 0; i < 3; ++i) XONNX_RETURN_IF_ERROR(require_f32_if_constant(init, i, "InstanceNormalization"));
    auto k = std::unique_ptr<InstanceNormKernel>(new InstanceNormKernel());
    XONNX_RETURN_IF_ERROR(init_own_kernel(*k, init));
    k->eps_ = eps;
    return std::unique_ptr<Kernel>(std::move(k));
  }

 private:
  Status run_fast(KernelContext& ctx, bool& handled) override {
    const Tensor& x = ctx.input(0);
    const Tensor& scale = ctx.input(1);
    const Tensor& bias = ctx.input(2);
    if (!is_f32(x) || x.rank() < 3 || x.numel() <= 0 || !is_f32(scale) || !is_f32(bias)) return Status::ok();
    const int64_t n = x.dim(0), c = x.dim(1), inner = x.numel() / (n * c);
    if (scale.rank() != 1 || scale.numel() != c || bias.rank() != 1 || bias.numel() != c) return Status::ok();
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DataType::kFloat, x.shape()));
    if (static_cast<int64_t>(ones_.size()) != inner) ones_.assign(static_cast<size_t>(inner), 1.0f);
    const float* xp = x.data<float>();
    const float* sp = scale.data<float>();
    const float* bp = bias.data<float>();
    const float* ones = ones_.data();
    float* yp = y->data<float>();
    const KernelTable& t = *k_;
    const float eps = eps_;
    pool_->parallel_for(static_cast<size_t>(n * c), chunk_for(5 * inner), [&](size_t begin, size_t end) {
      for (size_t r = begin; r < end; ++r) {
        float* row = yp + static_cast<int64_t>(r) * inner;
        t.layer_norm_row(xp + static_cast<int64_t>(r) * inner, row, inner, ones, nullptr, eps, nullptr, nullptr);
        const float s = sp[r % static_cast<size_t>(c)], b = bp[r % static_cast<size_t>(c)];
        for (int64_t i = 0; i < inner; ++i) row[i] = row[i] * s + b;  // still in cache
      }
    });
    handled = true;
    return Status::ok();
  }

  float eps_ = 1e-5f;
  std::vector<float> ones_;
  const KernelTable* k_ = &kernels();
};

}  // namespace

void register_opt_normalization(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "LayerNormalization", 17, kLatestVersion, LayerNormKernel::create, Backend::kOptimized);
  XONNX_REGISTER(registry, "", "InstanceNormalization", 6, kLatestVersion, InstanceNormKernel::create,
                 Backend::kOptimized);
}

}  // namespace opt
}  // namespace xonnx
