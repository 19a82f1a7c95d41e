// Optimized ReduceSum / ReduceMean / ReduceMax (float32) over axes that form one contiguous
// run of dims: the input is viewed as [outer, r, inner] and reduced over r, either along
// rows (inner == 1, the innermost axes) or as vector sums of inner-length rows. Empty axes,
// repeated or scattered axes and empty tensors go to the reference kernel.
#include <algorithm>
#include <vector>

#include "runtime/exec/thread_pool.h"
#include "runtime/ops/optimized/opt_util.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace opt {
namespace {

enum class Kind { kSum, kMean, kMax };

class ReduceKernel final : public OptKernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init, Kind kind) {
    XONNX_RETURN_IF_ERROR(require_f32_if_constant(init, 0, "Reduce"));
    auto k = std::unique_ptr<ReduceKernel>(new ReduceKernel());
    XONNX_RETURN_IF_ERROR(k->init_common(init));
    k->kind_ = kind;
    k->axes_from_input_ = init.since_version() >= (kind == Kind::kSum ? 13 : 18);
    XONNX_ASSIGN_OR_RETURN(k->keepdims_, init.get_int("keepdims", 1));
    XONNX_ASSIGN_OR_RETURN(k->attr_axes_, init.get_ints("axes"));
    return std::unique_ptr<Kernel>(std::move(k));
  }

 private:
  Status run_fast(KernelContext& ctx, bool& handled) override {
    const Tensor& x = ctx.input(0);
    if (!is_f32(x) || x.numel() <= 0) return Status::ok();
    Shape axes = attr_axes_;  // a small vector: no allocation in run()
    if (axes_from_input_) {
      if (!ctx.has_input(1)) return Status::ok();
      const Tensor& a = ctx.input(1);
      if (a.dtype() != DataType::kInt64 || a.rank() > 1) return Status::ok();
      axes.assign(a.data<int64_t>(), a.data<int64_t>() + a.numel());
    }
    if (axes.empty()) return Status::ok();  // reduce-all / no-op rules: reference
    const int64_t rank = static_cast<int64_t>(x.rank());
    for (int64_t& v : axes) {
      if (v < 0) v += rank;
      if (v < 0 || v >= rank) return Status::ok();
    }
    std::sort(axes.begin(), axes.end());
    for (size_t i = 1; i < axes.size(); ++i)
      if (axes[i] != axes[i - 1] + 1) return Status::ok();  // repeated or not contiguous
    int64_t outer = 1, r = 1, inner = 1;
    Shape out_shape;
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t v = x.dim(static_cast<size_t>(d));
      if (d < axes.front()) outer *= v;
      else if (d > axes.back()) inner *= v;
      else r *= v;
      if (d < axes.front() || d > axes.back()) out_shape.push_back(v);
      else if (keepdims_) out_shape.push_back(1);
    }
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DataType::kFloat, out_shape));
    const float* in = x.data<float>();
    float* out = y->data<float>();
    const KernelTable& t = *k_;
    const Kind kind = kind_;
    const float scale = kind == Kind::kMean ? 1.0f / static_cast<float>(r) : 1.0f;
    pool_->parallel_for(static_cast<size_t>(outer), chunk_for(r * inner), [&](size_t b, size_t e) {
      for (size_t o = b; o < e; ++o) {
        const float* src = in + static_cast<int64_t>(o) * r * inner;
        float* dst = out + static_cast<int64_t>(o) * inner;
        if (inner == 1) {
          *dst = kind == Kind::kMax ? t.row_max(src, r) : t.row_sum(src, r) * scale;
          continue;
        }
        std::copy(src, src + inner, dst);
        for (int64_t j = 1; j < r; ++j) {
          if (kind == Kind::kMax) t.max_into(src + j * inner, dst, inner);
          else t.add_into(src + j * inner, dst, inner);
        }
        if (kind == Kind::kMean)
          for (int64_t j = 0; j < inner; ++j) dst[j] *= scale;
      }
    });
    handled = true;
    return Status::ok();
  }

  Kind kind_ = Kind::kSum;
  bool axes_from_input_ = false;
  int64_t keepdims_ = 1;
  Shape attr_axes_;
};

Result<std::unique_ptr<Kernel>> create_sum(const KernelInit& init) { return ReduceKernel::create(init, Kind::kSum); }
Result<std::unique_ptr<Kernel>> create_mean(const KernelInit& init) { return ReduceKernel::create(init, Kind::kMean); }
Result<std::unique_ptr<Kernel>> create_max(const KernelInit& init) { return ReduceKernel::create(init, Kind::kMax); }

}  // namespace

void register_opt_reduce(OpRegistry& registry) {
  registry.add({"", "ReduceSum", 1, kLatestVersion, create_sum, 1, 2, 1, 1, Backend::kOptimized});
  registry.add({"", "ReduceMean", 1, kLatestVersion, create_mean, 1, 2, 1, 1, Backend::kOptimized});
  registry.add({"", "ReduceMax", 1, kLatestVersion, create_max, 1, 2, 1, 1, Backend::kOptimized});
}

}  // namespace opt
}  // namespace xonnx
