// Optimized ReduceSum / ReduceMean / ReduceMax (float32) over axes that form one contiguous
// run of dims: the input is viewed as [outer, r, inner] and reduced over r, either along
// rows (inner == 1, the innermost axes) or as vector sums of inner-length rows. Empty axes,
// repeated or scattered axes and empty tensors go to the reference kernel.
// The layout pass's NHWC GlobalAveragePool is the same reduction ([n, h * w, c] over the
// middle axis) and runs here too, ahead of XNNPACK's, which splits only the batch over threads.
#include <algorithm>
#include <vector>

#include "runtime/core/thread_pool.h"
#include "runtime/ops/internal_ops.h"
#include "runtime/ops/optimized/opt_util.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace opt {
namespace {

enum class Kind { kSum, kMean, kMax };

// Sums of a long middle axis split into this many blocks of rows (fewer when r is shorter):
// a split by rows, unlike one by columns, lets each thread read the rows it wrote in the op
// before (a squeeze-excitation's GlobalAveragePool over EfficientNetV2-S's 14 x 14 x 960
// maps: 2 threads read half of the map from the other core's cache, up to 2x the 1-thread time).
// The block count does not depend on the threads, so neither do the bits.
// Smaller sums (under kMinStreamingWork elements) stay one pass.
constexpr int64_t kRowBlocks = 8;

// out[o][j] = the sum (max) over i < r of in[o][i][j] for in [outer][r][inner], in an order
// that does not depend on the split, so neither do the bits on the thread count. Few outer
// rows split their inner columns (in 16-float steps) over the threads instead, or, for sums,
// their rows in kRowBlocks blocks whose sums land in `partials` and are added in block order.
void reduce_middle(const ThreadPool& pool, const KernelTable& t, bool max, const float* in, int64_t outer, int64_t r,
                   int64_t inner, float* out, std::vector<float>& partials) {
  const int64_t threads = pool.num_threads(), steps = (inner + 15) / 16;
  if (!max && outer == 1 && inner > 1 && r * inner >= kMinStreamingWork) {
    const int64_t blocks = std::min(kRowBlocks, r);
    partials.resize(static_cast<size_t>(blocks * inner));
    pool.parallel_for(static_cast<size_t>(blocks), chunk_for(r * inner / blocks, kMinStreamingWork),
                      [&](size_t b, size_t e) {
                        for (size_t block = b; block < e; ++block) {
                          const int64_t i0 = r * static_cast<int64_t>(block) / blocks,
                                        i1 = r * static_cast<int64_t>(block + 1) / blocks;
                          t.column_sums(in + i0 * inner, i1 - i0, inner, inner, partials.data() + block * inner);
                        }
                      });
    t.column_sums(partials.data(), blocks, inner, inner, out);
    return;
  }
  const int64_t parts = outer >= threads || inner == 1 ? 1 : std::min(threads, steps);
  pool.parallel_for(static_cast<size_t>(outer * parts), chunk_for(r * inner / parts), [&](size_t b, size_t e) {
    for (size_t item = b; item < e; ++item) {
      const int64_t o = static_cast<int64_t>(item) / parts, part = static_cast<int64_t>(item) % parts;
      const float* src = in + o * r * inner;
      float* dst = out + o * inner;
      if (inner == 1) {
        *dst = max ? t.row_max(src, r) : t.row_sum(src, r);
        continue;
      }
      const int64_t j0 = std::min(inner, part * steps / parts * 16),
                    j1 = std::min(inner, (part + 1) * steps / parts * 16);
      if (!max) {
        t.column_sums(src + j0, r, inner, j1 - j0, dst + j0);
        continue;
      }
      std::copy(src + j0, src + j1, dst + j0);
      for (int64_t i = 1; i < r; ++i) t.max_into(src + i * inner + j0, dst + j0, j1 - j0);
    }
  });
}

class ReduceKernel final : public FastKernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init, Kind kind) {
    XONNX_RETURN_IF_ERROR(require_f32_if_constant(init, 0, "Reduce"));
    auto k = std::unique_ptr<ReduceKernel>(new ReduceKernel());
    XONNX_RETURN_IF_ERROR(init_own_kernel(*k, init));
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
      if (d < axes.front())
        outer *= v;
      else if (d > axes.back())
        inner *= v;
      else
        r *= v;
      if (d < axes.front() || d > axes.back())
        out_shape.push_back(v);
      else if (keepdims_)
        out_shape.push_back(1);
    }
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DataType::kFloat, out_shape));
    const float* in = x.data<float>();
    float* out = y->data<float>();
    reduce_middle(*pool_, *k_, kind_ == Kind::kMax, in, outer, r, inner, out, partials_);
    if (kind_ == Kind::kMean) {
      const float scale = 1.0f / static_cast<float>(r);
      for (int64_t j = 0; j < outer * inner; ++j) out[j] *= scale;
    }
    handled = true;
    return Status::ok();
  }

  Kind kind_ = Kind::kSum;
  bool axes_from_input_ = false;
  int64_t keepdims_ = 1;
  Shape attr_axes_;
  std::vector<float> partials_;  // reduce_middle's block sums, kept across runs
  const KernelTable* k_ = &kernels();
};

// GlobalAveragePool on NHWC [n, h, w, c] -> [n, 1, 1, c]: float sums (the reference sums in
// double), divided by h * w; inf and NaN propagate, no scan needed.
class GlobalAveragePoolNhwcKernel final : public FastKernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    auto k = std::unique_ptr<GlobalAveragePoolNhwcKernel>(new GlobalAveragePoolNhwcKernel());
    XONNX_RETURN_IF_ERROR(init_own_kernel(*k, init));
    return std::unique_ptr<Kernel>(std::move(k));
  }

 private:
  Status run_fast(KernelContext& ctx, bool& handled) override {
    const Tensor& x = ctx.input(0);
    if (!is_f32(x) || x.rank() != 4) return Status::ok();
    const int64_t n = x.dim(0), hw = x.dim(1) * x.dim(2), c = x.dim(3);
    if (n <= 0 || hw <= 0 || c <= 0) return Status::ok();
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DataType::kFloat, {n, 1, 1, c}));
    float* out = y->data<float>();
    reduce_middle(*pool_, *k_, false, x.data<float>(), n, hw, c, out, partials_);
    const float count = static_cast<float>(hw);
    for (int64_t j = 0; j < n * c; ++j) out[j] /= count;
    handled = true;
    return Status::ok();
  }

  std::vector<float> partials_;  // reduce_middle's block sums, kept across runs
  const KernelTable* k_ = &kernels();
};

Result<std::unique_ptr<Kernel>> create_sum(const KernelInit& init) { return ReduceKernel::create(init, Kind::kSum); }
Result<std::unique_ptr<Kernel>> create_mean(const KernelInit& init) { return ReduceKernel::create(init, Kind::kMean); }
Result<std::unique_ptr<Kernel>> create_max(const KernelInit& init) { return ReduceKernel::create(init, Kind::kMax); }

}  // namespace

void register_opt_reduce(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "ReduceSum", 1, kLatestVersion, create_sum, Backend::kOptimized);
  XONNX_REGISTER(registry, "", "ReduceMean", 1, kLatestVersion, create_mean, Backend::kOptimized);
  XONNX_REGISTER(registry, "", "ReduceMax", 1, kLatestVersion, create_max, Backend::kOptimized);
  // Before XNNPACK: splits the channels over the threads; needs no finiteness scan.
  XONNX_REGISTER(registry, kNhwcDomain, "GlobalAveragePool", 1, kLatestVersion, GlobalAveragePoolNhwcKernel::create,
                 Backend::kOptimized, kPriorityBeforeXnnpack);
}

}  // namespace opt
}  // namespace xonnx
