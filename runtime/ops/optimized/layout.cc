// Optimized layout kernels (float32): Transpose and Gather.
//
// Transpose drops size-1 dims and merges input dims that stay adjacent, then either shares
// the input's storage (the permutation only moves size-1 dims, e.g. [1,0,2] at batch 1),
// copies whole rows (innermost dim kept: [0,2,1,3]) or runs blocked 2-D transposes of the
// (innermost input dim, dim that becomes innermost) planes ([0,2,3,1], [0,3,1,2], [1,0] ...).
// Gather copies rows of `inner` elements (embedding lookups) for int32/int64 indices.
#include <algorithm>
#include <cstring>
#include <vector>

#include "runtime/core/thread_pool.h"
#include "runtime/ops/internal_ops.h"
#include "runtime/ops/optimized/opt_util.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace opt {
namespace {

// A transposed plane this small runs as a whole per outer index (no 2-D row blocks).
constexpr int64_t kSmallPlane = 4096;

class TransposeKernel final : public FastKernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    XONNX_RETURN_IF_ERROR(require_f32_if_constant(init, 0, "Transpose"));
    auto k = std::unique_ptr<TransposeKernel>(new TransposeKernel());
    XONNX_RETURN_IF_ERROR(init_own_kernel(*k, init));
    k->has_perm_ = init.has_attr("perm");
    XONNX_ASSIGN_OR_RETURN(k->perm_attr_, init.get_ints("perm"));
    return std::unique_ptr<Kernel>(std::move(k));
  }

  // The layout pass's region boundaries as the Transposes they are: ToNHWC [N,C,H,W] ->
  // [N,H,W,C] is perm [0, 2, 3, 1], ToNCHW the inverse (the reference kernels in ref/nhwc.cc
  // take other types, and report a rank other than 4).
  template <bool kToNhwc>
  static Result<std::unique_ptr<Kernel>> create_boundary(const KernelInit& init) {
    auto k = std::unique_ptr<TransposeKernel>(new TransposeKernel());
    XONNX_RETURN_IF_ERROR(init_own_kernel(*k, init));
    k->has_perm_ = true;
    k->perm_attr_ = kToNhwc ? Shape{0, 2, 3, 1} : Shape{0, 3, 1, 2};
    return std::unique_ptr<Kernel>(std::move(k));
  }

 private:
  Status run_fast(KernelContext& ctx, bool& handled) override {
    const Tensor& x = ctx.input(0);
    if (!is_f32(x) || x.numel() <= 0) return Status::ok();
    const size_t r = x.rank();
    // Small vectors (Shape) throughout: run() must not allocate.
    Shape perm = perm_attr_;
    if (!has_perm_) {
      perm.resize(r);
      for (size_t i = 0; i < r; ++i) perm[i] = static_cast<int64_t>(r - 1 - i);
    }
    if (perm.size() != r) return Status::ok();
    Shape seen(r, 0);
    for (int64_t& p : perm) {
      if (p < 0) p += static_cast<int64_t>(r);
      if (p < 0 || p >= static_cast<int64_t>(r) || seen[static_cast<size_t>(p)]) return Status::ok();
      seen[static_cast<size_t>(p)] = true;
    }
    Shape out_shape(r);
    for (size_t i = 0; i < r; ++i) out_shape[i] = x.dim(static_cast<size_t>(perm[i]));

    // Collapse: keep dims of size > 1, in output order, then merge runs that are adjacent
    // in the input too.
    Shape kept;  // input dims, output order
    for (size_t i = 0; i < r; ++i)
      if (x.dim(static_cast<size_t>(perm[i])) > 1) kept.push_back(perm[i]);
    Shape group_first, group_last;  // runs of consecutive input dims [first, last]
    for (int64_t d : kept) {
      if (!group_last.empty() && group_last.back() + 1 == d) {
        group_last.back() = d;
      } else {
        group_first.push_back(d);
        group_last.push_back(d);
      }
    }
    // Input order of the groups gives the collapsed input shape; output order the perm.
    const size_t k = group_first.size();
    Shape order(k);
    for (size_t i = 0; i < k; ++i) order[i] = static_cast<int64_t>(i);
    std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return group_first[a] < group_first[b]; });
    Shape in_dims(k), cperm(k);
    for (size_t j = 0; j < k; ++j) {
      const size_t g = static_cast<size_t>(order[j]);
      int64_t size = 1;
      for (int64_t d = group_first[g]; d <= group_last[g]; ++d) size *= x.dim(static_cast<size_t>(d));
      in_dims[j] = size;
      cperm[g] = static_cast<int64_t>(j);  // output group order[j] is input dim j
    }
    bool identity = true;
    for (size_t i = 0; i < k; ++i) identity = identity && cperm[i] == static_cast<int64_t>(i);
    if (identity) {  // only size-1 dims move: same bytes, new shape
      ctx.set_output(0, x.reshaped(out_shape));
      handled = true;
      return Status::ok();
    }
    Shape in_stride(k), out_stride(k), out_dims(k);
    for (size_t i = 0; i < k; ++i) out_dims[i] = in_dims[static_cast<size_t>(cperm[i])];
    int64_t s = 1, o = 1;
    for (size_t i = k; i-- > 0;) {
      in_stride[i] = s;
      s *= in_dims[i];
      out_stride[i] = o;
      o *= out_dims[i];
    }
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DataType::kFloat, out_shape));
    const float* src = x.data<float>();
    float* dst = y->data<float>();
    const KernelTable& t = *k_;
    const int64_t last = static_cast<int64_t>(k) - 1;
    // The output dims walked by the outer loop (`skip` excluded), and the 2-D plane.
    const int64_t p = cperm[static_cast<size_t>(last)];  // input dim that becomes innermost
    int64_t q = 0;                                       // output position of the input's innermost dim
    for (size_t i = 0; i < k; ++i)
      if (cperm[i] == last) q = static_cast<int64_t>(i);
    Shape walk;
    for (size_t i = 0; i + 1 < k; ++i)
      if (static_cast<int64_t>(i) != q) walk.push_back(static_cast<int64_t>(i));
    int64_t outer = 1;
    for (size_t i : walk) outer *= out_dims[i];
    auto offsets = [&](int64_t idx, int64_t& so, int64_t& d) {
      so = 0;
      d = 0;
      for (size_t w = walk.size(); w-- > 0;) {
        const size_t i = walk[w];
        const int64_t v = idx % out_dims[i];
        idx /= out_dims[i];
        so += v * in_stride[static_cast<size_t>(cperm[i])];
        d += v * out_stride[i];
      }
    };
    const int64_t cols = in_dims[static_cast<size_t>(last)];
    if (p == last) {  // innermost dim kept: copy rows of `cols` floats
      pool_->parallel_for(static_cast<size_t>(outer), chunk_for(cols), [&](size_t b, size_t e) {
        // Decode the first row's position once, then step an odometer over the walked dims.
        Shape idx(walk.size(), 0);
        int64_t rest = static_cast<int64_t>(b), so = 0, d = 0;
        for (size_t w = walk.size(); w-- > 0;) {
          const size_t i = walk[w];
          idx[w] = rest % out_dims[i];
          rest /= out_dims[i];
          so += idx[w] * in_stride[static_cast<size_t>(cperm[i])];
          d += idx[w] * out_stride[i];
        }
        for (size_t row = b; row < e; ++row) {
          std::memcpy(dst + d, src + so, static_cast<size_t>(cols) * sizeof(float));
          for (size_t w = walk.size(); w-- > 0;) {
            const size_t i = walk[w];
            const int64_t sstep = in_stride[static_cast<size_t>(cperm[i])];
            so += sstep;
            d += out_stride[i];
            if (++idx[w] < out_dims[i]) break;
            so -= sstep * out_dims[i];
            d -= out_stride[i] * out_dims[i];
            idx[w] = 0;
          }
        }
      });
      handled = true;
      return Status::ok();
    }
    const int64_t rows = in_dims[static_cast<size_t>(p)];
    if (k == 3 && cperm[0] == 0 && cperm[1] == 2 && cperm[2] == 1 && rows * cols <= kSmallPlane) {
      // [outer, rows, cols] -> [outer, cols, rows] of small planes (a channel shuffle in NHWC:
      // [pixels, 2, C / 2] -> [pixels, C / 2, 2]): plane by plane, without the 2-D blocking.
      const int64_t plane = rows * cols;
      pool_->parallel_for(static_cast<size_t>(in_dims[0]), chunk_for(plane), [&](size_t b, size_t e) {
        for (size_t i = b; i < e; ++i) {
          const float* in = src + static_cast<int64_t>(i) * plane;
          float* out = dst + static_cast<int64_t>(i) * plane;
          if (rows == 2) {  // an interleave of two rows
            for (int64_t c = 0; c < cols; ++c) {
              out[2 * c] = in[c];
              out[2 * c + 1] = in[cols + c];
            }
            continue;
          }
          for (int64_t c = 0; c < cols; ++c)
            for (int64_t r = 0; r < rows; ++r) out[c * rows + r] = in[r * cols + c];
        }
      });
      handled = true;
      return Status::ok();
    }
    constexpr int64_t kRowBlock = 64;
    const int64_t rblocks = (rows + kRowBlock - 1) / kRowBlock;
    pool_->parallel_for(static_cast<size_t>(outer * rblocks), chunk_for(kRowBlock * cols), [&](size_t b, size_t e) {
      for (size_t task = b; task < e; ++task) {
        int64_t so, d;
        offsets(static_cast<int64_t>(task) / rblocks, so, d);
        const int64_t r0 = (static_cast<int64_t>(task) % rblocks) * kRowBlock;
        const int64_t nr = rows - r0 < kRowBlock ? rows - r0 : kRowBlock;
        t.transpose_2d(src + so + r0 * in_stride[static_cast<size_t>(p)], in_stride[static_cast<size_t>(p)],
                       dst + d + r0, out_stride[static_cast<size_t>(q)], nr, cols);
      }
    });
    handled = true;
    return Status::ok();
  }

  bool has_perm_ = false;
  Shape perm_attr_;
  const KernelTable* k_ = &kernels();
};

// ---- Gather ------------------------------------------------------------------------------

class GatherKernel final : public FastKernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    XONNX_RETURN_IF_ERROR(require_f32_if_constant(init, 0, "Gather"));
    auto k = std::unique_ptr<GatherKernel>(new GatherKernel());
    XONNX_RETURN_IF_ERROR(init_own_kernel(*k, init));
    XONNX_ASSIGN_OR_RETURN(k->axis_, init.get_int("axis", 0));
    return std::unique_ptr<Kernel>(std::move(k));
  }

 private:
  Status run_fast(KernelContext& ctx, bool& handled) override {
    const Tensor& x = ctx.input(0);
    const Tensor& ind = ctx.input(1);
    if (!is_f32(x) || x.rank() == 0 || !ind.defined()) return Status::ok();
    if (ind.dtype() != DataType::kInt64 && ind.dtype() != DataType::kInt32) return Status::ok();
    const int64_t r = static_cast<int64_t>(x.rank());
    const int64_t a = axis_ < 0 ? axis_ + r : axis_;
    if (a < 0 || a >= r) return Status::ok();
    const int64_t dim = x.dim(static_cast<size_t>(a));
    const int64_t n = ind.numel();
    idx_.resize(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) {
      int64_t v = ind.dtype() == DataType::kInt64 ? ind.data<int64_t>()[j] : ind.data<int32_t>()[j];
      if (v < 0) v += dim;
      if (v < 0 || v >= dim) return Status::ok();  // the reference names the bad index
      idx_[static_cast<size_t>(j)] = v;
    }
    Shape out_shape(x.shape().begin(), x.shape().begin() + a);
    out_shape.insert(out_shape.end(), ind.shape().begin(), ind.shape().end());
    out_shape.insert(out_shape.end(), x.shape().begin() + a + 1, x.shape().end());
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DataType::kFloat, out_shape));
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < a; ++d) outer *= x.dim(static_cast<size_t>(d));
    for (int64_t d = a + 1; d < r; ++d) inner *= x.dim(static_cast<size_t>(d));
    const float* src = x.data<float>();
    float* dst = y->data<float>();
    // Tasks of whole gathered rows, or of pieces of them when the rows are few and long (a
    // q / k / v Gather of Swin-T's [3, ...] projections is one row of 1.2 MB).
    const int64_t rows = outer * n;
    const int64_t pieces = rows >= pool_->num_threads() ? 1 : std::max<int64_t>(1, inner / kMinStreamingWork);
    const int64_t piece = (inner + pieces - 1) / pieces;
    pool_->parallel_for(
        static_cast<size_t>(rows * pieces), chunk_for(piece, kMinStreamingWork), [&](size_t b, size_t e) {
          for (size_t task = b; task < e; ++task) {
            const int64_t row = static_cast<int64_t>(task) / pieces, p0 = static_cast<int64_t>(task) % pieces * piece;
            const int64_t o = row / (n > 0 ? n : 1), j = row % n, len = std::min(piece, inner - p0);
            std::memcpy(dst + row * inner + p0, src + (o * dim + idx_[static_cast<size_t>(j)]) * inner + p0,
                        static_cast<size_t>(len) * sizeof(float));
          }
        });
    handled = true;
    return Status::ok();
  }

  int64_t axis_ = 0;
  std::vector<int64_t> idx_;
};

}  // namespace

void register_opt_layout(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "Transpose", 1, kLatestVersion, TransposeKernel::create, Backend::kOptimized);
  XONNX_REGISTER(registry, kNhwcDomain, "ToNHWC", 1, kLatestVersion, TransposeKernel::create_boundary<true>,
                 Backend::kOptimized);
  XONNX_REGISTER(registry, kNhwcDomain, "ToNCHW", 1, kLatestVersion, TransposeKernel::create_boundary<false>,
                 Backend::kOptimized);
  XONNX_REGISTER(registry, "", "Gather", 1, kLatestVersion, GatherKernel::create, Backend::kOptimized);
}

}  // namespace opt
}  // namespace xonnx
