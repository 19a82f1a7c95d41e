// Optimized Slice (opset 10+) of fixed-size elements with positive steps: the output is written
// as runs of contiguous input (the sliced axis with step 1 and every whole axis after it), split
// over the threads. ShuffleNet's channel split, a transformer's q/k/v split and a KV window are
// each one copy per outer index; a slice that is one contiguous block of at least half the input
// is a view of it instead. The reference kernel (ops/ref/layout.cc) walks the output one
// element at a time; it still takes what this one does not: negative steps, strings, sub-byte
// types and malformed starts / ends / axes / steps (it reports them). Split, below, the same way.
#include <cstring>
#include <vector>

#include "runtime/core/thread_pool.h"
#include "runtime/ops/optimized/opt_util.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace opt {
namespace {

// Shape keeps 8 values inline: these small lists never reach the heap in run().
bool int_list(KernelContext& ctx, size_t i, Shape& out) {
  const Tensor& t = ctx.input(i);
  if (!t.defined() || t.rank() != 1) return false;
  if (t.dtype() == DataType::kInt64) {
    out.assign(t.data<int64_t>(), t.data<int64_t>() + t.numel());
  } else if (t.dtype() == DataType::kInt32) {
    out.assign(t.data<int32_t>(), t.data<int32_t>() + t.numel());
  } else {
    return false;
  }
  return true;
}

class SliceKernel final : public FastKernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    auto k = std::unique_ptr<SliceKernel>(new SliceKernel());
    XONNX_RETURN_IF_ERROR(init_own_kernel(*k, init));
    return std::unique_ptr<Kernel>(std::move(k));
  }

 private:
  Status run_fast(KernelContext& ctx, bool& handled) override {
    const Tensor& x = ctx.input(0);
    const DataType dtype = x.dtype();
    if (!byte_copyable(x) || x.rank() == 0) return Status::ok();
    const int64_t rank = static_cast<int64_t>(x.rank());
    Shape starts, ends, axes, steps;
    if (!int_list(ctx, 1, starts) || !int_list(ctx, 2, ends) || starts.size() != ends.size()) return Status::ok();
    const size_t n = starts.size();
    if (ctx.has_input(3)) {
      if (!int_list(ctx, 3, axes) || axes.size() != n) return Status::ok();
    } else {
      for (size_t i = 0; i < n; ++i) axes.push_back(static_cast<int64_t>(i));
    }
    if (ctx.has_input(4)) {
      if (!int_list(ctx, 4, steps) || steps.size() != n) return Status::ok();
    } else {
      steps.assign(n, 1);
    }
    Shape out_shape = x.shape();
    Shape start(static_cast<size_t>(rank), 0), step(static_cast<size_t>(rank), 1);
    Shape seen(static_cast<size_t>(rank), 0);
    for (size_t i = 0; i < n; ++i) {
      const int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
      if (a < 0 || a >= rank || seen[static_cast<size_t>(a)] != 0 || steps[i] <= 0) return Status::ok();
      seen[static_cast<size_t>(a)] = 1;
      const int64_t dim = x.dim(static_cast<size_t>(a));
      int64_t s = starts[i] < 0 ? starts[i] + dim : starts[i];
      int64_t e = ends[i] < 0 ? ends[i] + dim : ends[i];
      s = s < 0 ? 0 : (s > dim ? dim : s);
      e = e < 0 ? 0 : (e > dim ? dim : e);
      out_shape[static_cast<size_t>(a)] = e > s ? (e - s - 1) / steps[i] + 1 : 0;
      start[static_cast<size_t>(a)] = s;
      step[static_cast<size_t>(a)] = steps[i];
    }
    const int64_t total = shape_numel(out_shape);
    // The run: whole trailing axes, then one more axis read with step 1.
    int64_t split = rank, run = 1;
    while (split > 0 && out_shape[static_cast<size_t>(split - 1)] == x.dim(static_cast<size_t>(split - 1))) {
      --split;
      run *= out_shape[static_cast<size_t>(split)];
    }
    if (split > 0 && step[static_cast<size_t>(split - 1)] == 1) {
      --split;
      run *= out_shape[static_cast<size_t>(split)];
    }
    Shape in_stride(static_cast<size_t>(rank));
    int64_t stride = 1;
    for (int64_t d = rank; d-- > 0;) {
      in_stride[static_cast<size_t>(d)] = stride;
      stride *= x.dim(static_cast<size_t>(d));
    }
    int64_t base = 0;  // the input offset of the first output element
    for (int64_t d = 0; d < rank; ++d) base += start[static_cast<size_t>(d)] * in_stride[static_cast<size_t>(d)];
    const int64_t es = dtype_bits(dtype) / 8;
    if (total > 0 && total == run && 2 * total >= x.numel()) {
      // One contiguous block of at least half the input (a lowered 3-D Conv's frame taps): a
      // view, no copy. It keeps the input's buffer for as long as it lives, hence the half.
      ctx.set_output(0, Tensor(dtype, out_shape, x.storage(), x.byte_offset() + static_cast<size_t>(base * es)));
      handled = true;
      return Status::ok();
    }
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, dtype, out_shape));
    handled = true;
    if (total == 0) return Status::ok();
    const int64_t runs = total / run;
    const char* src = static_cast<const char*>(x.raw_data());
    char* dst = static_cast<char*>(y->raw_data());
    Shape run_stride(static_cast<size_t>(split), 0);  // input step of each outer output axis
    for (int64_t d = 0; d < split; ++d) {
      run_stride[static_cast<size_t>(d)] = step[static_cast<size_t>(d)] * in_stride[static_cast<size_t>(d)];
    }
    pool_->parallel_for(static_cast<size_t>(runs), chunk_for(run * es, kMinCopyChunkBytes), [&](size_t r0, size_t r1) {
      for_each_run(out_shape, run_stride, static_cast<size_t>(split), base, r0, r1, [&](size_t r, int64_t off) {
        std::memcpy(dst + static_cast<int64_t>(r) * run * es, src + off * es, static_cast<size_t>(run * es));
      });
    });
    return Status::ok();
  }
};

// Split of fixed-size elements into sizes given (the `split` input from opset 13, the attribute
// before) or equal parts: per outer index, one copy of each output's run. YOLOv8's C2f splits its
// first Conv's channels, in NHWC the last axis, where the reference's element walk ran 2.5x
// slower than on the NCHW split it replaced. Uneven chunks (opset 18's num_outputs) and malformed
// sizes stay with the reference, which reports them.
class SplitKernel final : public FastKernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    auto k = std::unique_ptr<SplitKernel>(new SplitKernel());
    XONNX_RETURN_IF_ERROR(init_own_kernel(*k, init));
    XONNX_ASSIGN_OR_RETURN(k->axis_, init.get_int("axis", 0));
    k->sizes_from_input_ = init.since_version() == 1 || init.since_version() >= 13;
    if (init.since_version() < 13) {
      XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> split, init.get_ints("split"));
      k->split_.assign(split.begin(), split.end());
    }
    return std::unique_ptr<Kernel>(std::move(k));
  }

 private:
  Status run_fast(KernelContext& ctx, bool& handled) override {
    const Tensor& x = ctx.input(0);
    if (!byte_copyable(x) || x.rank() == 0) return Status::ok();
    const int64_t rank = static_cast<int64_t>(x.rank()), a = axis_ < 0 ? axis_ + rank : axis_;
    const int64_t n_out = static_cast<int64_t>(ctx.num_outputs());
    if (a < 0 || a >= rank || n_out < 1) return Status::ok();
    const int64_t dim = x.dim(static_cast<size_t>(a));
    Shape sizes = split_;
    if (sizes_from_input_ && ctx.has_input(1) && !int_list(ctx, 1, sizes)) return Status::ok();
    if (sizes.empty() && dim % n_out == 0) sizes.assign(static_cast<size_t>(n_out), dim / n_out);
    if (static_cast<int64_t>(sizes.size()) != n_out) return Status::ok();
    int64_t sum = 0;
    for (const int64_t len : sizes) {
      if (len < 0 || len > dim - sum) return Status::ok();
      sum += len;
    }
    if (sum != dim) return Status::ok();
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < a; ++d) outer *= x.dim(static_cast<size_t>(d));
    for (int64_t d = a + 1; d < rank; ++d) inner *= x.dim(static_cast<size_t>(d));
    const int64_t es = dtype_bits(x.dtype()) / 8, row = dim * inner * es;  // bytes per outer index
    std::vector<char*>& out = outputs_;  // a member: a steady-state run allocates nothing
    out.assign(sizes.size(), nullptr);
    for (size_t k = 0; k < sizes.size(); ++k) {
      if (!ctx.output_wanted(k)) continue;
      Shape s = x.shape();
      s[static_cast<size_t>(a)] = sizes[k];
      XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(k, x.dtype(), s));
      out[k] = static_cast<char*>(y->raw_data());
    }
    handled = true;
    if (row == 0) return Status::ok();
    const char* src = static_cast<const char*>(x.raw_data());
    pool_->parallel_for(static_cast<size_t>(outer), chunk_for(row, kMinCopyChunkBytes), [&](size_t o0, size_t o1) {
      for (size_t o = o0; o < o1; ++o) {
        int64_t at = static_cast<int64_t>(o) * row;
        for (size_t k = 0; k < sizes.size(); ++k) {
          const int64_t bytes = sizes[k] * inner * es;
          if (out[k]) std::memcpy(out[k] + static_cast<int64_t>(o) * bytes, src + at, static_cast<size_t>(bytes));
          at += bytes;
        }
      }
    });
    return Status::ok();
  }

  int64_t axis_ = 0;
  bool sizes_from_input_ = true;  // Split-1 and -13+: input 1, when given, sets the sizes
  Shape split_;                   // the `split` attribute (opset 1-12)
  std::vector<char*> outputs_;    // per output: its data, or null where not wanted
};

}  // namespace

void register_opt_slice(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "Slice", 10, kLatestVersion, SliceKernel::create, Backend::kOptimized);
  XONNX_REGISTER(registry, "", "Split", 1, kLatestVersion, SplitKernel::create, Backend::kOptimized);
}

}  // namespace opt
}  // namespace xonnx
