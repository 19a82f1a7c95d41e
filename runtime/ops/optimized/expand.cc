// Optimized Expand (opset 8+) of fixed-size elements: the output is written as runs, a copy of
// the input's trailing block where the trailing axes are not broadcast (grouped-query attention's
// K/V heads repeated, [1, kv, 1, s, d] -> [1, kv, g, s, d]) or a fill with one input element
// where they are (a mask row repeated), split over the threads. The reference kernel
// (ops/ref/shape.cc) walks the output one element at a time; it still takes what this one
// does not: strings, sub-byte types, shapes that do not broadcast (it reports them), and an
// output of the input's shape (it passes the input on without a copy).
#include <algorithm>
#include <cstring>
#include <vector>

#include "runtime/core/thread_pool.h"
#include "runtime/ops/optimized/opt_util.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace opt {
namespace {

// numpy broadcasting of `x` against `shape`; false when they do not broadcast.
bool broadcast_to(const Shape& x, const Shape& shape, Shape& out) {
  const size_t rank = std::max(x.size(), shape.size());
  out.assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t a = i < rank - x.size() ? 1 : x[i - (rank - x.size())];
    const int64_t b = i < rank - shape.size() ? 1 : shape[i - (rank - shape.size())];
    if (b < 0 || (a != b && a != 1 && b != 1)) return false;
    out[i] = a == 1 ? b : a;
  }
  return true;
}

class ExpandKernel final : public FastKernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    auto k = std::unique_ptr<ExpandKernel>(new ExpandKernel());
    XONNX_RETURN_IF_ERROR(init_own_kernel(*k, init));
    return std::unique_ptr<Kernel>(std::move(k));
  }

 private:
  Status run_fast(KernelContext& ctx, bool& handled) override {
    const Tensor& x = ctx.input(0);
    const Tensor& s = ctx.input(1);
    const DataType dtype = x.dtype();
    if (!byte_copyable(x)) return Status::ok();
    if (!s.defined() || s.dtype() != DataType::kInt64 || s.rank() != 1) return Status::ok();
    // Shape keeps 8 values inline: these small lists never reach the heap in run().
    const Shape shape(s.data<int64_t>(), s.data<int64_t>() + s.numel());
    Shape out_shape;
    if (!broadcast_to(x.shape(), shape, out_shape) || out_shape == x.shape()) return Status::ok();
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, dtype, out_shape));
    handled = true;
    const int64_t total = y->numel();
    if (total == 0) return Status::ok();
    const size_t rank = out_shape.size(), lead = rank - x.rank();
    Shape in_shape(lead, 1);  // x's dims aligned to the output's rank
    in_shape.insert(in_shape.end(), x.shape().begin(), x.shape().end());
    // The trailing axes that are all copied (equal) or all broadcast (input 1) make one run.
    const bool copy = in_shape[rank - 1] == out_shape[rank - 1];
    size_t split = rank;  // axes [split, rank) form the run
    int64_t run = 1;
    while (split > 0 && (in_shape[split - 1] == out_shape[split - 1]) == copy) {
      --split;
      run *= out_shape[split];
    }
    // Input strides of the outer axes (0 where broadcast).
    Shape in_stride(rank, 0);
    int64_t stride = 1;
    for (size_t d = rank; d-- > 0;) {
      in_stride[d] = in_shape[d] == 1 && out_shape[d] != 1 ? 0 : stride;
      stride *= in_shape[d];
    }
    const int64_t es = dtype_bits(dtype) / 8, runs = total / run;
    const char* src = static_cast<const char*>(x.raw_data());
    char* dst = static_cast<char*>(y->raw_data());
    pool_->parallel_for(static_cast<size_t>(runs), chunk_for(run * es, kMinCopyChunkBytes), [&](size_t r0, size_t r1) {
      for_each_run(out_shape, in_stride, split, 0, r0, r1, [&](size_t r, int64_t off) {
        char* out = dst + static_cast<int64_t>(r) * run * es;
        if (copy)
          std::memcpy(out, src + off * es, static_cast<size_t>(run * es));
        else
          fill_run(out, src + off * es, run, es);
      });
    });
    return Status::ok();
  }
};

}  // namespace

void register_opt_expand(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "Expand", 8, kLatestVersion, ExpandKernel::create, Backend::kOptimized);
}

}  // namespace opt
}  // namespace xonnx
