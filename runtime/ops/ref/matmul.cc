// Reference kernels: matmul family. MatMul and Gemm here; Einsum and Det in matmul_einsum.cc.
#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "runtime/ops/ref/common.h"
#include "runtime/ops/ref/gemm.h"
#include "runtime/ops/ref/matmul_internal.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace {

using ref::gemm_acc_t;

// C[M,N] += A[M,K] * B[K,N]; all row-major and contiguous.
template <typename A>
void gemm_nn(const A* a, const A* b, A* c, int64_t M, int64_t N, int64_t K) {
  ref::gemm_acc<A>(M, N, K, a, K, b, N, c, N);
}

// C[M,N] += A[M,K] * B^T where B is stored [N,K] (rows contiguous): dot products.
template <typename A>
void gemm_nt(const A* a, const A* b, A* c, int64_t M, int64_t N, int64_t K) {
  for (int64_t i = 0; i < M; ++i) {
    const A* __restrict arow = a + i * K;
    for (int64_t j = 0; j < N; ++j) {
      const A* __restrict brow = b + j * K;
      A s0 = A(0), s1 = A(0), s2 = A(0), s3 = A(0);
      int64_t k = 0;
      for (; k + 4 <= K; k += 4) {
        s0 += arow[k] * brow[k];
        s1 += arow[k + 1] * brow[k + 1];
        s2 += arow[k + 2] * brow[k + 2];
        s3 += arow[k + 3] * brow[k + 3];
      }
      for (; k < K; ++k) s0 += arow[k] * brow[k];
      c[i * N + j] += (s0 + s1) + (s2 + s3);
    }
  }
}

template <typename A>
void transpose_into(const A* src, A* dst, int64_t rows, int64_t cols) {
  constexpr int64_t kB = 32;
  for (int64_t r0 = 0; r0 < rows; r0 += kB) {
    for (int64_t c0 = 0; c0 < cols; c0 += kB) {
      const int64_t r1 = std::min(rows, r0 + kB), c1 = std::min(cols, c0 + kB);
      for (int64_t r = r0; r < r1; ++r) {
        for (int64_t cc = c0; cc < c1; ++cc) dst[cc * rows + r] = src[r * cols + cc];
      }
    }
  }
}

// C += op(A) * op(B) with A [M,K] (or [K,M] if trans_a) and B [K,N] (or [N,K] if trans_b).
template <typename A>
void gemm_any(const A* a, bool trans_a, const A* b, bool trans_b, A* c, int64_t M, int64_t N, int64_t K) {
  std::vector<A> at;
  if (trans_a) {
    at.resize(static_cast<size_t>(M * K));
    transpose_into(a, at.data(), K, M);
    a = at.data();
  }
  if (trans_b) {
    if (M >= 8) {
      std::vector<A> bt(static_cast<size_t>(N * K));
      transpose_into(b, bt.data(), N, K);
      gemm_nn(a, bt.data(), c, M, N, K);
    } else {
      gemm_nt(a, b, c, M, N, K);
    }
  } else {
    gemm_nn(a, b, c, M, N, K);
  }
}

// A tensor's elements as accumulation type A: a pointer to the data itself when the storage
// type already is A, otherwise a converted copy held in `buf`.
template <typename T, typename A>
const A* as_acc(const Tensor& t, std::vector<A>& buf) {
  if constexpr (std::is_same_v<T, A>) {
    (void)buf;
    return t.data<T>();
  } else {
    const int64_t n = t.numel();
    buf.resize(static_cast<size_t>(n));
    const T* p = t.data<T>();
    for (int64_t i = 0; i < n; ++i) buf[i] = static_cast<A>(to_compute(p[i]));
    return buf.data();
  }
}

template <typename T, typename A>
inline T acc_to(A v) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(v);
  } else {
    return from_compute<T>(static_cast<compute_t<T>>(v));
  }
}

// ---------------------------------------------------------------- MatMul

bool matmul_type_ok(DataType t) {
  switch (t) {
    case DataType::kFloat:
    case DataType::kDouble:
    case DataType::kFloat16:
    case DataType::kBFloat16:
    case DataType::kInt32:
    case DataType::kInt64:
    case DataType::kUint32:
    case DataType::kUint64:
    case DataType::kInt8:
    case DataType::kUint8:
    case DataType::kInt16:
    case DataType::kUint16: return true;
    default: return false;
  }
}

// A and B are present and of one type that MatMul / Gemm support.
Status check_ab(const Tensor& ta, const Tensor& tb, const char* op) {
  if (!ta.defined() || !tb.defined()) return invalid_argument("inputs A and B are required");
  if (ta.dtype() != tb.dtype()) {
    return invalid_argument("A and B must have the same type, got ", dtype_name(ta.dtype()), " and ",
                            dtype_name(tb.dtype()));
  }
  if (!matmul_type_ok(ta.dtype())) return unsupported(op, " does not support type ", dtype_name(ta.dtype()));
  return Status::ok();
}

template <typename T>
Status matmul_typed(const Tensor& ta, const Tensor& tb, Tensor* y, const Shape& batch, const Shape& a_batch,
                    const Shape& b_batch, int64_t M, int64_t N, int64_t K) {
  using A = gemm_acc_t<T>;
  std::vector<A> abuf, bbuf, cbuf;
  const A* a = as_acc<T, A>(ta, abuf);
  const A* b = as_acc<T, A>(tb, bbuf);
  A* c;
  const bool direct = std::is_same_v<T, A>;
  if constexpr (std::is_same_v<T, A>) {
    c = y->data<T>();
  } else {
    cbuf.assign(static_cast<size_t>(y->numel()), A(0));
    c = cbuf.data();
  }
  const int64_t nb = shape_numel(batch);
  const int64_t a_nb = shape_numel(a_batch);
  const int64_t b_nb = shape_numel(b_batch);
  if (b_nb == 1 && a_nb == nb) {
    // B is shared by every batch: one tall GEMM over all rows of A.
    gemm_nn(a, b, c, nb * M, N, K);
  } else {
    const std::vector<int64_t> sa = ref::broadcast_strides(a_batch, batch);
    const std::vector<int64_t> sb = ref::broadcast_strides(b_batch, batch);
    std::vector<int64_t> idx(batch.size(), 0);
    for (int64_t bi = 0; bi < nb; ++bi) {
      int64_t oa = 0, ob = 0;
      for (size_t d = 0; d < batch.size(); ++d) {
        oa += idx[d] * sa[d];
        ob += idx[d] * sb[d];
      }
      gemm_nn(a + oa * M * K, b + ob * K * N, c + bi * M * N, M, N, K);
      for (size_t d = batch.size(); d-- > 0;) {
        if (++idx[d] < batch[d]) break;
        idx[d] = 0;
      }
    }
  }
  if (!direct) {
    T* out = y->data<T>();
    const int64_t n = y->numel();
    for (int64_t i = 0; i < n; ++i) out[i] = acc_to<T, A>(c[i]);
  }
  return Status::ok();
}

// The last two dims of t swapped, as a new tensor (FusedMatMul's transA / transB; floating
// types).
Result<Tensor> swap_last_two(const Tensor& t) {
  Shape shape = t.shape();
  const size_t r = shape.size();
  const int64_t rows = shape[r - 2], cols = shape[r - 1], batches = rows * cols > 0 ? t.numel() / (rows * cols) : 0;
  std::swap(shape[r - 2], shape[r - 1]);
  XONNX_ASSIGN_OR_RETURN(Tensor out, Tensor::allocate(t.dtype(), shape));
  XONNX_DISPATCH_FLOAT(t.dtype(), return unsupported("FusedMatMul: type ", dtype_name(t.dtype())), {
    for (int64_t b = 0; b < batches; ++b)
      transpose_into(t.data<T>() + b * rows * cols, out.data<T>() + b * rows * cols, rows, cols);
  });
  return out;
}

// Y = alpha * A x B with numpy matmul semantics.
Status run_matmul(KernelContext& ctx, const Tensor& ta, const Tensor& tb, float alpha) {
  XONNX_RETURN_IF_ERROR(check_ab(ta, tb, "MatMul"));
  if (ta.rank() == 0 || tb.rank() == 0) {
    return invalid_argument("MatMul inputs must have rank >= 1, got shapes ", shape_to_string(ta.shape()), " and ",
                            shape_to_string(tb.shape()));
  }
  Shape sa = ta.shape(), sb = tb.shape();
  const bool a_vec = sa.size() == 1, b_vec = sb.size() == 1;
  if (a_vec) sa.insert(sa.begin(), 1);
  if (b_vec) sb.push_back(1);
  const int64_t M = sa[sa.size() - 2], K = sa.back();
  const int64_t K2 = sb[sb.size() - 2], N = sb.back();
  if (K != K2) {
    return invalid_argument("MatMul inner dimensions differ: A ", shape_to_string(ta.shape()), " vs B ",
                            shape_to_string(tb.shape()));
  }
  const Shape a_batch(sa.begin(), sa.end() - 2), b_batch(sb.begin(), sb.end() - 2);
  XONNX_ASSIGN_OR_RETURN(Shape batch, ref::broadcast_shapes(a_batch, b_batch));
  Shape out = batch;
  if (!a_vec) out.push_back(M);
  if (!b_vec) out.push_back(N);
  XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, ta.dtype(), out));
  if (y->numel() == 0 || K == 0) return Status::ok();  // zero-filled already
  XONNX_DISPATCH_NUMERIC(ta.dtype(), return unsupported("type ", dtype_name(ta.dtype())), {
    XONNX_RETURN_IF_ERROR(matmul_typed<T>(ta, tb, y, batch, a_batch, b_batch, M, N, K));
    if constexpr (!std::is_integral_v<T>) {
      if (alpha != 1.0f) {  // the product scaled, as ORT's FusedMatMul does
        T* p = y->data<T>();
        for (int64_t i = 0; i < y->numel(); ++i) p[i] = from_compute<T>(to_compute(p[i]) * alpha);
      }
    }
    return Status::ok();
  });
  return Status::ok();
}

// MatMul, and com.microsoft FusedMatMul: alpha * op(A) x op(B) for floating-point types, op
// swapping the last two dims under transA / transB (1-D operands are not transposed);
// transBatchA / transBatchB are not supported.
Result<std::unique_ptr<Kernel>> create_matmul(const KernelInit& init) {
  if (init.node().op_type != "FusedMatMul")
    return make_kernel([](KernelContext& ctx) { return run_matmul(ctx, ctx.input(0), ctx.input(1), 1.0f); });
  XONNX_ASSIGN_OR_RETURN(const float alpha, init.get_float("alpha", 1.0f));
  XONNX_ASSIGN_OR_RETURN(const int64_t trans_a, init.get_int("transA", 0));
  XONNX_ASSIGN_OR_RETURN(const int64_t trans_b, init.get_int("transB", 0));
  XONNX_ASSIGN_OR_RETURN(const int64_t trans_batch_a, init.get_int("transBatchA", 0));
  XONNX_ASSIGN_OR_RETURN(const int64_t trans_batch_b, init.get_int("transBatchB", 0));
  if (trans_batch_a || trans_batch_b)
    return unsupported("FusedMatMul: transBatchA / transBatchB (batch-dimension transposition)");
  return make_kernel([=](KernelContext& ctx) -> Status {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    XONNX_RETURN_IF_ERROR(check_ab(a, b, "FusedMatMul"));
    if (!dtype_is_float(a.dtype()))
      return unsupported("FusedMatMul supports floating-point types, got ", dtype_name(a.dtype()));
    Tensor ta = a, tb = b;
    if (trans_a && a.rank() >= 2) {
      XONNX_ASSIGN_OR_RETURN(ta, swap_last_two(a));
    }
    if (trans_b && b.rank() >= 2) {
      XONNX_ASSIGN_OR_RETURN(tb, swap_last_two(b));
    }
    return run_matmul(ctx, ta, tb, alpha);
  });
}

// ---------------------------------------------------------------- Gemm

template <typename T>
Status gemm_typed(const Tensor& ta, bool trans_a, const Tensor& tb, bool trans_b, const Tensor* tc, float alpha,
                  float beta, Tensor* y, int64_t M, int64_t N, int64_t K) {
  using A = gemm_acc_t<T>;
  std::vector<A> abuf, bbuf, cbuf(static_cast<size_t>(M * N), A(0));
  if (K > 0) {
    const A* a = as_acc<T, A>(ta, abuf);
    const A* b = as_acc<T, A>(tb, bbuf);
    gemm_any(a, trans_a, b, trans_b, cbuf.data(), M, N, K);
  }
  T* out = y->data<T>();
  std::vector<int64_t> cs;  // strides of C broadcast to [M, N]
  const T* cp = nullptr;
  if (tc) {
    cs = ref::broadcast_strides(tc->shape(), {M, N});
    cp = tc->data<T>();
  }
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) {
      const A acc = cbuf[i * N + j];
      if constexpr (std::is_integral_v<T>) {
        int64_t v = alpha == 1.0f ? static_cast<int64_t>(acc)
                                  : static_cast<int64_t>(static_cast<double>(static_cast<int64_t>(acc)) * alpha);
        if (cp) {
          const int64_t cv = static_cast<int64_t>(cp[i * cs[0] + j * cs[1]]);
          v += beta == 1.0f ? cv : static_cast<int64_t>(static_cast<double>(cv) * beta);
        }
        out[i * N + j] = static_cast<T>(v);
      } else {
        A v = alpha == 1.0f ? acc : static_cast<A>(acc * static_cast<A>(alpha));
        if (cp) v += static_cast<A>(beta) * static_cast<A>(to_compute(cp[i * cs[0] + j * cs[1]]));
        out[i * N + j] = acc_to<T, A>(v);
      }
    }
  }
  return Status::ok();
}

Result<std::unique_ptr<Kernel>> create_gemm(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(int64_t trans_a, init.get_int("transA", 0));
  XONNX_ASSIGN_OR_RETURN(int64_t trans_b, init.get_int("transB", 0));
  XONNX_ASSIGN_OR_RETURN(float alpha, init.get_float("alpha", 1.0f));
  XONNX_ASSIGN_OR_RETURN(float beta, init.get_float("beta", 1.0f));
  if (init.since_version() < 11 && !init.has_input(2)) {
    return invalid_model("Gemm before opset 11 requires input C");
  }
  return make_kernel([=](KernelContext& ctx) -> Status {
    const Tensor& ta = ctx.input(0);
    const Tensor& tb = ctx.input(1);
    XONNX_RETURN_IF_ERROR(check_ab(ta, tb, "Gemm"));
    if (ta.rank() != 2 || tb.rank() != 2) {
      return invalid_argument("Gemm inputs A and B must be 2-D, got shapes ", shape_to_string(ta.shape()), " and ",
                              shape_to_string(tb.shape()));
    }
    const int64_t M = trans_a ? ta.dim(1) : ta.dim(0);
    const int64_t K = trans_a ? ta.dim(0) : ta.dim(1);
    const int64_t K2 = trans_b ? tb.dim(1) : tb.dim(0);
    const int64_t N = trans_b ? tb.dim(0) : tb.dim(1);
    if (K != K2) {
      return invalid_argument("Gemm inner dimensions differ: A ", shape_to_string(ta.shape()),
                              (trans_a ? " (transposed)" : ""), " vs B ", shape_to_string(tb.shape()),
                              (trans_b ? " (transposed)" : ""));
    }
    const Tensor* tc = nullptr;
    if (ctx.has_input(2) && ctx.input(2).defined()) {
      tc = &ctx.input(2);
      if (tc->dtype() != ta.dtype()) {
        return invalid_argument("C must have the type of A (", dtype_name(ta.dtype()), "), got ",
                                dtype_name(tc->dtype()));
      }
      XONNX_ASSIGN_OR_RETURN(Shape bs, ref::broadcast_shapes(tc->shape(), {M, N}));
      if (tc->rank() > 2 || bs != Shape{M, N}) {
        return invalid_argument("C of shape ", shape_to_string(tc->shape()), " cannot be broadcast to [", M, ",", N,
                                "]");
      }
    }
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, ta.dtype(), {M, N}));
    if (y->numel() == 0) return Status::ok();
    XONNX_DISPATCH_NUMERIC(ta.dtype(), return unsupported("type ", dtype_name(ta.dtype())),
                           { return gemm_typed<T>(ta, trans_a != 0, tb, trans_b != 0, tc, alpha, beta, y, M, N, K); });
    return Status::ok();
  });
}

}  // namespace

void register_matmul_ops(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "MatMul", 1, kLatestVersion, create_matmul);
  XONNX_REGISTER(registry, "com.microsoft", "FusedMatMul", 1, kLatestVersion, create_matmul);
  XONNX_REGISTER(registry, "", "Gemm", 1, kLatestVersion, create_gemm);
  register_matmul_einsum_ops(registry);
}

}  // namespace xonnx
