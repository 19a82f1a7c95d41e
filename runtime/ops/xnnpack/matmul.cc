// XNNPACK fully connected: Gemm (transA = 0, constant B, any transB, constant bias C that
// broadcasts along N, any alpha/beta folded into the packed weights and bias) and MatMul
// with a constant 2-D right-hand side (A of any rank: leading dims flattened into the batch),
// via xnn_create_fully_connected_nc_f32. XNNPACK packs B once at creation.
#include <algorithm>
#include <limits>
#include <vector>

#include "runtime/core/thread_pool.h"
#include "runtime/ops/common/finite.h"
#include "runtime/ops/common/fully_connected_gemm.h"
#include "runtime/ops/registry.h"
#include "runtime/ops/xnnpack/xnnpack_util.h"

namespace xonnx {
namespace xnn {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

class FullyConnectedKernel final : public FastKernel {
 public:
  // B [K, N] (b_is_nk = false) or [N, K]; bias: N values or empty.
  Status build(const KernelInit& init, const Tensor& b, bool b_is_nk, float alpha, const std::vector<float>& bias,
               bool gemm) {
    XONNX_RETURN_IF_ERROR(init_xnn_kernel(*this, init));
    gemm_ = gemm;
    k_ = b_is_nk ? b.dim(1) : b.dim(0);
    n_ = b_is_nk ? b.dim(0) : b.dim(1);
    if (k_ <= 0 || n_ <= 0) return unsupported("XNNPACK FC: empty B");
    const float* w = b.data<float>();
    std::vector<float> scaled;
    if (alpha != 1.0f) {
      scaled.assign(w, w + b.numel());
      for (float& v : scaled) v *= alpha;
      w = scaled.data();
    }
    const xnn_status s = xnn_create_fully_connected_nc_f32(
        static_cast<size_t>(k_), static_cast<size_t>(n_), static_cast<size_t>(k_), static_cast<size_t>(n_), w,
        bias.empty() ? nullptr : bias.data(), -kInf, kInf, b_is_nk ? 0 : XNN_FLAG_TRANSPOSE_WEIGHTS, op_.replace());
    XONNX_RETURN_IF_ERROR(check(s, "xnn_create_fully_connected_nc_f32"));
    init.packed_constant_input(1);
    if (gemm && init.has_input(2)) init.packed_constant_input(2);
    return Status::ok();
  }

 private:
  Status run_fast(KernelContext& ctx, bool& handled) override {
    const Tensor& a = ctx.input(0);
    if (!is_f32(a) || a.rank() == 0 || a.shape().back() != k_) return Status::ok();
    if (gemm_ && a.rank() != 2) return Status::ok();
    Shape out_shape(a.shape().begin(), a.shape().end() - 1);
    out_shape.push_back(n_);
    const int64_t batch = a.numel() / k_;
    if (batch <= 0) return Status::ok();
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DataType::kFloat, out_shape));
    const float* in = readable_input(a, scratch_);
    // Few rows stream the whole weight matrix for little arithmetic: count them as 16, so a
    // classifier head's GEMV (MobileNetV3: 1024 x 1000) splits over the threads too.
    pthreadpool_t tp = pool_for(*pool_, double(std::max<int64_t>(batch, 16)) * double(k_) * double(n_));
    XONNX_RETURN_IF_ERROR(
        check(xnn_setup_fully_connected_nc_f32(op_.get(), static_cast<size_t>(batch), in, y->data<float>(), tp),
              "xnn_setup_fully_connected_nc_f32"));
    XONNX_RETURN_IF_ERROR(op_.run(tp));
    handled = keep_if_finite(
        all_finite(y->data<float>(), static_cast<size_t>(y->numel()), *pool_));  // else: reference reruns
    return Status::ok();
  }

  bool gemm_ = false;
  int64_t k_ = 0, n_ = 0;
  Operator op_;
  Buffer scratch_;
};

Result<std::unique_ptr<Kernel>> create_gemm(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(FullyConnectedGemm g, FullyConnectedGemm::parse(init, "XNNPACK Gemm"));
  auto k = std::make_unique<FullyConnectedKernel>();
  XONNX_RETURN_IF_ERROR(k->build(init, *init.constant_input(1), g.trans_b, g.alpha, g.bias, /*gemm=*/true));
  return std::unique_ptr<Kernel>(std::move(k));
}

Result<std::unique_ptr<Kernel>> create_matmul(const KernelInit& init) {
  const Tensor* b = init.constant_input(1);
  if (!b || !is_f32(*b) || b->rank() != 2) return unsupported("XNNPACK MatMul: needs a constant 2-D float B");
  auto k = std::make_unique<FullyConnectedKernel>();
  XONNX_RETURN_IF_ERROR(k->build(init, *b, false, 1.0f, {}, /*gemm=*/false));
  return std::unique_ptr<Kernel>(std::move(k));
}

}  // namespace

void register_xnnpack_matmul(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "Gemm", 1, kLatestVersion, create_gemm, Backend::kXnnpack);
  XONNX_REGISTER(registry, "", "MatMul", 1, kLatestVersion, create_matmul, Backend::kXnnpack);
}

}  // namespace xnn
}  // namespace xonnx
