// Optimized element-wise float32 kernels: Relu, Erf, Gelu (ONNX-20 and com.microsoft Gelu /
// FastGelu without bias), Swish (alpha 1), Softmax on any axis (opset < 13: 2-D coercion; >= 13: one axis;
// inner axes are transposed to rows through a scratch block), and Where with equal shapes or
// suffix broadcasting (scalars, rows, masks broadcast over leading dims).
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/core/thread_pool.h"
#include "runtime/ops/optimized/opt_util.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace opt {
namespace {

constexpr int64_t kMapChunk = 4096;  // elements per parallel chunk of a map

// ---- Erf / Gelu --------------------------------------------------------------------------

class MapKernel final : public FastKernel {
 public:
  // `fn` names the table entry of kernels() to map with.
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init, MapFn KernelTable::*fn, const char* op) {
    return create(init, kernels().*fn, op);
  }
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init, MapFn fn, const char* op) {
    XONNX_RETURN_IF_ERROR(require_f32_if_constant(init, 0, op));
    auto k = std::unique_ptr<MapKernel>(new MapKernel());
    XONNX_RETURN_IF_ERROR(init_own_kernel(*k, init));
    k->fn_ = fn;
    return std::unique_ptr<Kernel>(std::move(k));
  }

 private:
  Status run_fast(KernelContext& ctx, bool& handled) override {
    const Tensor& x = ctx.input(0);
    if (!is_f32(x)) return Status::ok();
    // In place when x is dead after this node (a map reads each element before its store).
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_over_input(0, 0, DataType::kFloat, x.shape()));
    const float* in = x.data<float>();
    float* out = y->data<float>();
    const MapFn fn = fn_;
    const int64_t n = x.numel();
    // These maps cost ~10 vector ops per element: 32K elements (~10 us) are worth a worker.
    pool_->parallel_for(static_cast<size_t>((n + kMapChunk - 1) / kMapChunk), 8, [&](size_t b, size_t e) {
      const int64_t lo = static_cast<int64_t>(b) * kMapChunk;
      const int64_t hi = static_cast<int64_t>(e) * kMapChunk < n ? static_cast<int64_t>(e) * kMapChunk : n;
      fn(in + lo, out + lo, hi - lo);
    });
    handled = true;
    return Status::ok();
  }

  MapFn fn_ = nullptr;
};

// Swish with alpha 1 (SiLU; the layout pass makes it from Mul(x, Sigmoid(x)) in EfficientNets).
Result<std::unique_ptr<Kernel>> create_swish(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(const float alpha, init.get_float("alpha", 1.0f));
  if (alpha != 1.0f) return unsupported("Swish: optimized kernel has alpha 1 only");
  return MapKernel::create(init, &KernelTable::swish, "Swish");
}

Result<std::unique_ptr<Kernel>> create_erf(const KernelInit& init) {
  return MapKernel::create(init, &KernelTable::erf, "Erf");
}

Result<std::unique_ptr<Kernel>> create_gelu(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(std::string approximate, init.get_string("approximate", "none"));
  if (approximate == "none") return MapKernel::create(init, &KernelTable::gelu_erf, "Gelu");
  if (approximate == "tanh") return MapKernel::create(init, &KernelTable::gelu_tanh, "Gelu");
  return unsupported("Gelu: approximate '", approximate, "'");  // the reference reports it
}

Result<std::unique_ptr<Kernel>> create_ms_gelu(const KernelInit& init) {
  return MapKernel::create(init, &KernelTable::gelu_erf, "Gelu");
}

Result<std::unique_ptr<Kernel>> create_ms_fast_gelu(const KernelInit& init) {
  if (init.has_input(1)) return unsupported("FastGelu: optimized kernel has no bias input");
  return MapKernel::create(init, &KernelTable::gelu_tanh, "FastGelu");
}

// ---- Softmax -----------------------------------------------------------------------------

class SoftmaxKernel final : public FastKernel {
  // A softmax over a non-last axis runs down the columns when a row has this many (a vector's
  // worth on AVX-512), in blocks of kColumnBlock columns (16 rows of them fit in L1).
  static constexpr int64_t kMinColumns = 16, kColumnBlock = 256;

 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    const bool legacy = init.since_version() < 13;
    XONNX_ASSIGN_OR_RETURN(int64_t axis, init.get_int("axis", legacy ? 1 : -1));
    XONNX_RETURN_IF_ERROR(require_f32_if_constant(init, 0, "Softmax"));
    auto k = std::unique_ptr<SoftmaxKernel>(new SoftmaxKernel());
    XONNX_RETURN_IF_ERROR(init_own_kernel(*k, init));
    k->legacy_ = legacy;
    k->axis_ = axis;
    return std::unique_ptr<Kernel>(std::move(k));
  }

 private:
  Status run_fast(KernelContext& ctx, bool& handled) override {
    const Tensor& x = ctx.input(0);
    if (!is_f32(x) || x.numel() <= 0) return Status::ok();
    const int64_t rank = static_cast<int64_t>(x.rank());
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    if (axis < 0 || axis >= rank) return Status::ok();
    int64_t outer = 1, n = 1, inner = 1;
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t v = x.dim(static_cast<size_t>(d));
      if (d < axis)
        outer *= v;
      else if (d == axis || legacy_)
        n *= v;
      else
        inner *= v;
    }
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DataType::kFloat, x.shape()));
    const float* in = x.data<float>();
    float* out = y->data<float>();
    const KernelTable& t = *k_;
    if (inner == 1) {
      // Three passes with an exp each element: count 8 operations per value.
      pool_->parallel_for(static_cast<size_t>(outer), chunk_for(8 * n, 65536), [&](size_t b, size_t e) {
        for (size_t o = b; o < e; ++o) t.softmax_row(in + o * n, out + o * n, n);
      });
    } else if (inner >= kMinColumns) {
      // Down the columns of each outer block [n, inner], in blocks of columns: the tasks split
      // the columns too (YOLOv8's DFL softmax: one outer block of 16 x 33600 values).
      const int64_t blocks_per_outer = (inner + kColumnBlock - 1) / kColumnBlock;
      const size_t blocks = static_cast<size_t>(outer * blocks_per_outer);
      pool_->parallel_for(blocks, chunk_for(8 * n * kColumnBlock, 65536), [&](size_t b, size_t e) {
        for (size_t i = b; i < e; ++i) {
          const int64_t o = static_cast<int64_t>(i) / blocks_per_outer,
                        c0 = static_cast<int64_t>(i) % blocks_per_outer * kColumnBlock;
          const int64_t base = o * n * inner + c0;
          t.softmax_columns(in + base, out + base, n, inner, std::min(kColumnBlock, inner - c0));
        }
      });
    } else {
      // Few columns: each outer block [n, inner] is transposed to [inner, n] rows and back.
      const size_t min_chunk = chunk_for(n * inner, 65536);
      rows_.prepare(*pool_, static_cast<size_t>(outer), min_chunk, static_cast<size_t>(2 * n * inner));
      pool_->parallel_for(static_cast<size_t>(outer), min_chunk, [&](size_t b, size_t e) {
        float* tr = rows_.of(b);
        float* sm = tr + n * inner;
        for (size_t o = b; o < e; ++o) {
          const int64_t base = static_cast<int64_t>(o) * n * inner;
          t.transpose_2d(in + base, inner, tr, n, n, inner);
          for (int64_t j = 0; j < inner; ++j) t.softmax_row(tr + j * n, sm + j * n, n);
          t.transpose_2d(sm, n, out + base, inner, inner, n);
        }
      });
    }
    handled = true;
    return Status::ok();
  }

  bool legacy_ = false;
  int64_t axis_ = -1;
  ChunkScratch<float> rows_;  // inner-axis softmax: a block transposed, and its result
  const KernelTable* k_ = &kernels();
};

// ---- Where -------------------------------------------------------------------------------

// True when `s` (right-aligned against `out`) is 1s and then equal to a suffix of `out`,
// so element i of the output reads element i % numel of the input.
bool suffix_broadcast(const Shape& s, const Shape& out) {
  if (s.size() > out.size()) return false;
  bool in_suffix = true;  // walking from the right: equal dims, then only 1s
  for (size_t i = 0; i < s.size(); ++i) {
    const int64_t sd = s[s.size() - 1 - i], od = out[out.size() - 1 - i];
    if (in_suffix && sd == od) continue;
    in_suffix = false;
    if (sd != 1) return false;
  }
  return true;
}

class WhereKernel final : public FastKernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    XONNX_RETURN_IF_ERROR(require_f32_if_constant(init, 1, "Where"));
    XONNX_RETURN_IF_ERROR(require_f32_if_constant(init, 2, "Where"));
    auto k = std::unique_ptr<WhereKernel>(new WhereKernel());
    XONNX_RETURN_IF_ERROR(init_own_kernel(*k, init));
    return std::unique_ptr<Kernel>(std::move(k));
  }

 private:
  Status run_fast(KernelContext& ctx, bool& handled) override {
    const Tensor& c = ctx.input(0);
    const Tensor& x = ctx.input(1);
    const Tensor& y = ctx.input(2);
    if (!c.defined() || c.dtype() != DataType::kBool || !is_f32(x) || !is_f32(y)) return Status::ok();
    const size_t rank = std::max({c.rank(), x.rank(), y.rank()});
    Shape out(rank, 1);
    for (const Tensor* t : {&c, &x, &y}) {
      for (size_t i = 0; i < t->rank(); ++i) {
        const int64_t d = t->dim(i);
        int64_t& o = out[rank - t->rank() + i];
        if (d == o || d == 1) continue;
        if (o != 1) return Status::ok();  // not broadcastable: the reference reports it
        o = d;
      }
    }
    for (const Tensor* t : {&c, &x, &y})
      if (!suffix_broadcast(t->shape(), out) || t->numel() <= 0) return Status::ok();
    XONNX_ASSIGN_OR_RETURN(Tensor * z, ctx.allocate_output_uninitialized(0, DataType::kFloat, out));
    const bool* cp = c.data<bool>();
    const float* xp = x.data<float>();
    const float* yp = y.data<float>();
    float* zp = z->data<float>();
    const int64_t n = z->numel(), nc = c.numel(), nx = x.numel(), ny = y.numel();
    pool_->parallel_for(static_cast<size_t>(n), 131072, [&](size_t b, size_t e) {
      // Output i reads i % numel of each input: runs over which every non-scalar input walks
      // contiguously (no division per element; a mask row broadcast over heads is one run
      // per row).
      const int64_t hi = static_cast<int64_t>(e);
      int64_t i = static_cast<int64_t>(b), ic = i % nc, ix = i % nx, iy = i % ny;
      while (i < hi) {
        int64_t len = hi - i;
        if (nc > 1) len = std::min(len, nc - ic);
        if (nx > 1) len = std::min(len, nx - ix);
        if (ny > 1) len = std::min(len, ny - iy);
        select_run(cp + ic, nc > 1, xp + ix, nx > 1, yp + iy, ny > 1, zp + i, len);
        i += len;
        if (nc > 1 && (ic += len) == nc) ic = 0;
        if (nx > 1 && (ix += len) == nx) ix = 0;
        if (ny > 1 && (iy += len) == ny) iy = 0;
      }
    });
    handled = true;
    return Status::ok();
  }

  // z[j] = c[j] ? x[j] : y[j] over a run, each input walking or (a scalar) held.
  template <bool kC, bool kX, bool kY>
  static void select(const bool* c, const float* x, const float* y, float* z, int64_t len) {
    for (int64_t j = 0; j < len; ++j) z[j] = c[kC ? j : 0] ? x[kX ? j : 0] : y[kY ? j : 0];
  }
  static void select_run(const bool* c, bool wc, const float* x, bool wx, const float* y, bool wy, float* z,
                         int64_t len) {
    using Fn = void (*)(const bool*, const float*, const float*, float*, int64_t);
    static constexpr Fn kVariants[8] = {
        select<false, false, false>, select<false, false, true>, select<false, true, false>, select<false, true, true>,
        select<true, false, false>,  select<true, false, true>,  select<true, true, false>,  select<true, true, true>};
    kVariants[(wc ? 4 : 0) | (wx ? 2 : 0) | (wy ? 1 : 0)](c, x, y, z, len);
  }
};

// Relu as the reference computes it: NaN stays NaN, -0 becomes +0. !(x <= 0) holds for both
// x > 0 and NaN: one compare per element, which the compiler vectorizes.
void relu_map(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = !(x[i] <= 0.0f) ? x[i] : 0.0f;
}

Result<std::unique_ptr<Kernel>> create_relu(const KernelInit& init) {
  return MapKernel::create(init, relu_map, "Relu");
}

Result<std::unique_ptr<Kernel>> create_tanh(const KernelInit& init) {
  return MapKernel::create(init, &KernelTable::tanh, "Tanh");
}
Result<std::unique_ptr<Kernel>> create_exp(const KernelInit& init) {
  return MapKernel::create(init, &KernelTable::exp, "Exp");
}

}  // namespace

void register_opt_elementwise(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "Erf", 9, kLatestVersion, create_erf, Backend::kOptimized);
  XONNX_REGISTER(registry, "", "Tanh", 6, kLatestVersion, create_tanh, Backend::kOptimized);
  XONNX_REGISTER(registry, "", "Exp", 6, kLatestVersion, create_exp, Backend::kOptimized);
  XONNX_REGISTER(registry, "", "Gelu", 20, kLatestVersion, create_gelu, Backend::kOptimized);
  XONNX_REGISTER(registry, "com.microsoft", "Gelu", 1, kLatestVersion, create_ms_gelu, Backend::kOptimized);
  XONNX_REGISTER(registry, "com.microsoft", "FastGelu", 1, kLatestVersion, create_ms_fast_gelu, Backend::kOptimized);
  // Before XNNPACK: NaN-exact rows split over threads; XNNPACK's needs a finiteness scan.
  XONNX_REGISTER(registry, "", "Softmax", 1, kLatestVersion, SoftmaxKernel::create, Backend::kOptimized,
                 kPriorityBeforeXnnpack);
  // Before XNNPACK: one pass; XNNPACK's takes three (sigmoid, multiply, finiteness scan).
  XONNX_REGISTER(registry, "", "Swish", 24, kLatestVersion, create_swish, Backend::kOptimized, kPriorityBeforeXnnpack);
  XONNX_REGISTER(registry, "", "Where", 9, kLatestVersion, WhereKernel::create, Backend::kOptimized);
  // Before XNNPACK: one pass, in place where x is dead; XNNPACK's clamp scans x for NaN first.
  // (T5's feed-forward Relus, [64, 2048]: 0.07 ms each there.)
  XONNX_REGISTER(registry, "", "Relu", 6, kLatestVersion, create_relu, Backend::kOptimized, kPriorityBeforeXnnpack);
}

}  // namespace opt
}  // namespace xonnx
