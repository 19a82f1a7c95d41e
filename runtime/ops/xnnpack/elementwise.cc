// XNNPACK element-wise float32 kernels: Add/Sub/Mul/Div with numpy broadcasting (up to 6-D,
// opset >= 7) via xnn_create_{add,subtract,multiply,divide}_nd_f32; Sigmoid, Relu, Clip
// (constant bounds), HardSwish, LeakyRelu, Elu, Abs, Neg, Sqrt, Floor, Ceil, Round via the
// *_nc_f32 unary operators (one channel, the whole tensor as the batch); Softmax over the last axis (opset >= 13) or the 2-D coercion of
// opset < 13 via xnn_create_softmax_nc_f32.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "runtime/core/thread_pool.h"
#include "runtime/ops/common/finite.h"
#include "runtime/ops/registry.h"
#include "runtime/ops/xnnpack/xnnpack_util.h"

namespace xonnx {
namespace xnn {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// ---- binary ----------------------------------------------------------------------------------

using BinaryCreate = xnn_status (*)(float, float, uint32_t, xnn_operator_t*);
using BinarySetup = xnn_status (*)(xnn_operator_t, size_t, const size_t*, size_t, const size_t*, const float*,
                                   const float*, float*, pthreadpool_t);

class BinaryKernel final : public FastKernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init, BinaryCreate create, BinarySetup setup) {
    if (init.since_version() < 7) return unsupported("XNNPACK binary: legacy broadcast attribute");
    auto k = std::unique_ptr<BinaryKernel>(new BinaryKernel());
    XONNX_RETURN_IF_ERROR(init_xnn_kernel(*k, init));
    k->setup_ = setup;
    XONNX_RETURN_IF_ERROR(check(create(-kInf, kInf, 0, k->op_.replace()), "xnn_create_*_nd_f32"));
    return std::unique_ptr<Kernel>(std::move(k));
  }

 private:
  Status run_fast(KernelContext& ctx, bool& handled) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    BroadcastDims d;
    if (!is_f32(a) || !is_f32(b) || !broadcast_dims(a, b, d)) return Status::ok();
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DataType::kFloat, d.out));
    const float* pa = readable_input(a, scratch_a_);
    const float* pb = readable_input(b, scratch_b_);
    pthreadpool_t tp = pool_for(*pool_, double(y->numel()));
    XONNX_RETURN_IF_ERROR(
        check(setup_(op_.get(), d.rank_a, d.a, d.rank_b, d.b, pa, pb, y->data<float>(), tp), "xnn_setup_*_nd_f32"));
    XONNX_RETURN_IF_ERROR(op_.run(tp));
    handled = keep_if_finite(
        all_finite(y->data<float>(), static_cast<size_t>(y->numel()), *pool_));  // else: reference reruns
    return Status::ok();
  }

  BinarySetup setup_ = nullptr;
  Operator op_;
  Buffer scratch_a_, scratch_b_;
};

Result<std::unique_ptr<Kernel>> create_add(const KernelInit& init) {
  return BinaryKernel::create(init, xnn_create_add_nd_f32, xnn_setup_add_nd_f32);
}
Result<std::unique_ptr<Kernel>> create_sub(const KernelInit& init) {
  return BinaryKernel::create(init, xnn_create_subtract_nd_f32, xnn_setup_subtract_nd_f32);
}
Result<std::unique_ptr<Kernel>> create_mul(const KernelInit& init) {
  return BinaryKernel::create(init, xnn_create_multiply_nd_f32, xnn_setup_multiply_nd_f32);
}
Result<std::unique_ptr<Kernel>> create_div(const KernelInit& init) {
  return BinaryKernel::create(init, xnn_create_divide_nd_f32, xnn_setup_divide_nd_f32);
}

// ---- unary (incl. Softmax) -------------------------------------------------------------------

using UnarySetup = xnn_status (*)(xnn_operator_t, size_t, const float*, float*, pthreadpool_t);
// Creates the operator for `channels` per row (unary element-wise ops use 1).
using UnaryCreate = std::function<xnn_status(size_t channels, xnn_operator_t* out)>;

UnaryCreate clamp(float lo, float hi) {
  return [lo, hi](size_t c, xnn_operator_t* out) { return xnn_create_clamp_nc_f32(c, c, c, lo, hi, 0, out); };
}

// What a unary kernel verifies so that NaN/inf give the reference kernel's results.
enum class Check {
  kNone,          // XNNPACK matches the reference on NaN/inf (Sigmoid, HardSwish)
  kOutputFinite,  // a non-finite output reruns the reference (Softmax)
  kInputNoNan,    // a NaN input runs the reference (Relu, Clip: XNNPACK clamps NaN)
};

class UnaryKernel final : public FastKernel {
 public:
  // Element-wise unless `softmax`: then rows are the dims before `axis` and channels the
  // dims from it (the 2-D coercion of Softmax < 13); `last_only` requires axis = rank - 1.
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init, UnaryCreate create, UnarySetup setup,
                                                Check check, bool softmax = false, int64_t axis = 0,
                                                bool last_only = false, bool dynamic_clip = false) {
    auto k = std::unique_ptr<UnaryKernel>(new UnaryKernel());
    XONNX_RETURN_IF_ERROR(init_xnn_kernel(*k, init));
    k->create_ = std::move(create);
    k->setup_ = setup;
    k->check_ = check;
    k->dynamic_clip_ = dynamic_clip;
    k->softmax_ = softmax;
    k->axis_ = axis;
    k->last_only_ = last_only;
    XONNX_RETURN_IF_ERROR(k->ensure_operator(1));  // probe (and the element-wise operator)
    return std::unique_ptr<Kernel>(std::move(k));
  }

 private:
  Status ensure_operator(size_t channels) {
    if (op_ && channels == channels_) return Status::ok();
    XONNX_RETURN_IF_ERROR(check(create_(channels, op_.replace()), "xnn_create_*_nc_f32"));
    channels_ = channels;
    return Status::ok();
  }

  // Clip-11+ with computed bounds (e.g. Constant nodes): re-creates the clamp when they change.
  bool update_clip_bounds(KernelContext& ctx) {
    float b[2] = {-std::numeric_limits<float>::max(), std::numeric_limits<float>::max()};
    for (size_t i = 1; i <= 2; ++i) {
      if (!ctx.has_input(i)) continue;
      const Tensor& t = ctx.input(i);
      if (!is_f32(t) || t.numel() != 1) return false;
      b[i - 1] = t.data<float>()[0];
    }
    if (!(b[0] < b[1])) return false;  // min > max and NaN bounds: reference semantics
    if (op_ && b[0] == lo_ && b[1] == hi_) return true;
    lo_ = b[0];
    hi_ = b[1];
    create_ = clamp(lo_, hi_);
    op_.reset();
    return true;
  }

  Status run_fast(KernelContext& ctx, bool& handled) override {
    const Tensor& x = ctx.input(0);
    if (!is_f32(x) || x.numel() <= 0) return Status::ok();
    size_t channels = 1;
    if (softmax_) {
      const int64_t rank = static_cast<int64_t>(x.rank());
      const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
      if (axis < 0 || axis >= rank || (last_only_ && axis != rank - 1)) return Status::ok();
      for (int64_t d = axis; d < rank; ++d) channels *= static_cast<size_t>(x.dim(static_cast<size_t>(d)));
    }
    if (dynamic_clip_ && !update_clip_bounds(ctx)) return Status::ok();
    if (Status st = ensure_operator(channels); !st.is_ok()) return unless_declined(st);
    if (check_ == Check::kInputNoNan && !keep_if_finite(!has_nan(x.data<float>(), static_cast<size_t>(x.numel()))))
      return Status::ok();
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DataType::kFloat, x.shape()));
    const float* in = readable_input(x, scratch_);
    pthreadpool_t tp = pool_for(*pool_, double(x.numel()));
    const size_t batch = static_cast<size_t>(x.numel()) / channels;
    XONNX_RETURN_IF_ERROR(check(setup_(op_.get(), batch, in, y->data<float>(), tp), "xnn_setup_*_nc_f32"));
    XONNX_RETURN_IF_ERROR(op_.run(tp));
    handled = check_ != Check::kOutputFinite ||
              keep_if_finite(all_finite(y->data<float>(), static_cast<size_t>(y->numel()), *pool_));
    return Status::ok();
  }

  UnaryCreate create_;
  UnarySetup setup_ = nullptr;
  Check check_ = Check::kNone;
  bool dynamic_clip_ = false;
  float lo_ = 0, hi_ = 0;
  bool softmax_ = false;
  int64_t axis_ = 0;
  bool last_only_ = false;
  Operator op_;
  size_t channels_ = 0;
  Buffer scratch_;
};

template <xnn_status (*kCreate)(size_t, size_t, size_t, uint32_t, xnn_operator_t*)>
UnaryCreate simple_unary() {
  return [](size_t c, xnn_operator_t* out) { return kCreate(c, c, c, 0, out); };
}

Result<std::unique_ptr<Kernel>> create_sigmoid(const KernelInit& init) {
  return UnaryKernel::create(init, simple_unary<xnn_create_sigmoid_nc_f32>(), xnn_setup_sigmoid_nc_f32, Check::kNone);
}
Result<std::unique_ptr<Kernel>> create_hardswish(const KernelInit& init) {
  return UnaryKernel::create(init, simple_unary<xnn_create_hardswish_nc_f32>(), xnn_setup_hardswish_nc_f32,
                             Check::kNone);
}
Result<std::unique_ptr<Kernel>> create_relu(const KernelInit& init) {
  return UnaryKernel::create(init, clamp(0.0f, kInf), xnn_setup_clamp_nc_f32, Check::kInputNoNan);
}

Result<std::unique_ptr<Kernel>> create_leaky_relu(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(const float alpha, init.get_float("alpha", 0.01f));
  if (!std::isfinite(alpha)) return unsupported("XNNPACK LeakyRelu: alpha ", alpha);
  const UnaryCreate create = [alpha](size_t c, xnn_operator_t* out) {
    return xnn_create_leaky_relu_nc_f32(c, c, c, alpha, 0, out);
  };
  return UnaryKernel::create(init, create, xnn_setup_leaky_relu_nc_f32, Check::kNone);
}
Result<std::unique_ptr<Kernel>> create_elu(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(const float alpha, init.get_float("alpha", 1.0f));
  if (!std::isfinite(alpha)) return unsupported("XNNPACK Elu: alpha ", alpha);
  const UnaryCreate create = [alpha](size_t c, xnn_operator_t* out) {
    return xnn_create_elu_nc_f32(c, c, c, alpha, 0, out);
  };
  return UnaryKernel::create(init, create, xnn_setup_elu_nc_f32, Check::kNone);
}
template <xnn_status (*kCreate)(size_t, size_t, size_t, uint32_t, xnn_operator_t*), UnarySetup kSetup>
Result<std::unique_ptr<Kernel>> create_simple(const KernelInit& init) {
  return UnaryKernel::create(init, simple_unary<kCreate>(), kSetup, Check::kNone);
}

// A constant float scalar bound of Clip-11+ (absent: the default); false if computed.
Result<bool> clip_bound(const KernelInit& init, size_t i, float& bound) {
  if (!init.has_input(i)) return true;
  const Tensor* t = init.constant_input(i);
  if (!t) return false;
  if (!is_f32(*t) || t->numel() != 1) return unsupported("XNNPACK Clip: bounds must be float scalars");
  bound = t->data<float>()[0];
  return true;
}

Result<std::unique_ptr<Kernel>> create_clip(const KernelInit& init) {
  float lo = -std::numeric_limits<float>::max(), hi = std::numeric_limits<float>::max();
  if (init.since_version() < 11) {
    XONNX_ASSIGN_OR_RETURN(lo, init.get_float("min", lo));
    XONNX_ASSIGN_OR_RETURN(hi, init.get_float("max", hi));
  } else {
    XONNX_ASSIGN_OR_RETURN(bool lo_const, clip_bound(init, 1, lo));
    XONNX_ASSIGN_OR_RETURN(bool hi_const, clip_bound(init, 2, hi));
    if (!lo_const || !hi_const) {  // computed bounds (Constant nodes): read at run time
      return UnaryKernel::create(init, clamp(0.0f, 1.0f), xnn_setup_clamp_nc_f32, Check::kInputNoNan, false, 0, false,
                                 /*dynamic_clip=*/true);
    }
  }
  // min > max (all max in ONNX) and NaN bounds stay with the reference kernel.
  if (!(lo < hi)) return unsupported("XNNPACK Clip: empty range");
  return UnaryKernel::create(init, clamp(lo, hi), xnn_setup_clamp_nc_f32, Check::kInputNoNan);
}

Result<std::unique_ptr<Kernel>> create_softmax(const KernelInit& init) {
  const bool legacy = init.since_version() < 13;
  XONNX_ASSIGN_OR_RETURN(int64_t axis, init.get_int("axis", legacy ? 1 : -1));
  // Whether the axis is the last one depends on the input's rank: checked at run time.
  return UnaryKernel::create(init, simple_unary<xnn_create_softmax_nc_f32>(), xnn_setup_softmax_nc_f32,
                             Check::kOutputFinite, /*softmax=*/true, axis, /*last_only=*/!legacy);
}

// Swish (alpha 1, i.e. SiLU x * sigmoid(x); the layout pass makes it from Mul(x, Sigmoid(x))):
// sigmoid into the output, then the output multiplied by x in place. A non-finite output
// reruns the reference (XNNPACK's multiply clamps NaN).
class SwishKernel final : public FastKernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    XONNX_ASSIGN_OR_RETURN(float alpha, init.get_float("alpha", 1.0f));
    if (alpha != 1.0f) return unsupported("XNNPACK Swish: alpha != 1");
    auto k = std::unique_ptr<SwishKernel>(new SwishKernel());
    XONNX_RETURN_IF_ERROR(init_xnn_kernel(*k, init));
    XONNX_RETURN_IF_ERROR(
        check(xnn_create_sigmoid_nc_f32(1, 1, 1, 0, k->sigmoid_.replace()), "xnn_create_sigmoid_nc_f32"));
    XONNX_RETURN_IF_ERROR(
        check(xnn_create_multiply_nd_f32(-kInf, kInf, 0, k->multiply_.replace()), "xnn_create_multiply_nd_f32"));
    return std::unique_ptr<Kernel>(std::move(k));
  }

 private:
  Status run_fast(KernelContext& ctx, bool& handled) override {
    const Tensor& x = ctx.input(0);
    if (!is_f32(x) || x.numel() <= 0) return Status::ok();
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DataType::kFloat, x.shape()));
    const size_t n = static_cast<size_t>(x.numel());
    const float* in = readable_input(x, scratch_);
    float* out = y->data<float>();
    pthreadpool_t tp = pool_for(*pool_, double(n));
    XONNX_RETURN_IF_ERROR(check(xnn_setup_sigmoid_nc_f32(sigmoid_.get(), n, in, out, tp), "xnn_setup_sigmoid_nc_f32"));
    XONNX_RETURN_IF_ERROR(sigmoid_.run(tp));
    XONNX_RETURN_IF_ERROR(
        check(xnn_setup_multiply_nd_f32(multiply_.get(), 1, &n, 1, &n, in, out, out, tp), "xnn_setup_multiply_nd_f32"));
    XONNX_RETURN_IF_ERROR(multiply_.run(tp));
    handled = keep_if_finite(all_finite(out, n, *pool_));
    return Status::ok();
  }

  Operator sigmoid_, multiply_;
  Buffer scratch_;
};

}  // namespace

void register_xnnpack_elementwise(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "Add", 7, kLatestVersion, create_add, Backend::kXnnpack);
  XONNX_REGISTER(registry, "", "Sub", 7, kLatestVersion, create_sub, Backend::kXnnpack);
  XONNX_REGISTER(registry, "", "Mul", 7, kLatestVersion, create_mul, Backend::kXnnpack);
  XONNX_REGISTER(registry, "", "Div", 7, kLatestVersion, create_div, Backend::kXnnpack);
  XONNX_REGISTER(registry, "", "Sigmoid", 1, kLatestVersion, create_sigmoid, Backend::kXnnpack);
  XONNX_REGISTER(registry, "", "HardSwish", 14, kLatestVersion, create_hardswish, Backend::kXnnpack);
  XONNX_REGISTER(registry, "", "Swish", 24, kLatestVersion, SwishKernel::create, Backend::kXnnpack);
  XONNX_REGISTER(registry, "", "Relu", 1, kLatestVersion, create_relu, Backend::kXnnpack);
  XONNX_REGISTER(registry, "", "LeakyRelu", 6, kLatestVersion, create_leaky_relu, Backend::kXnnpack);
  XONNX_REGISTER(registry, "", "Elu", 6, kLatestVersion, create_elu, Backend::kXnnpack);
  XONNX_REGISTER(registry, "", "Abs", 6, kLatestVersion, (create_simple<xnn_create_abs_nc_f32, xnn_setup_abs_nc_f32>),
                 Backend::kXnnpack);
  XONNX_REGISTER(registry, "", "Neg", 6, kLatestVersion,
                 (create_simple<xnn_create_negate_nc_f32, xnn_setup_negate_nc_f32>), Backend::kXnnpack);
  XONNX_REGISTER(registry, "", "Sqrt", 6, kLatestVersion,
                 (create_simple<xnn_create_square_root_nc_f32, xnn_setup_square_root_nc_f32>), Backend::kXnnpack);
  XONNX_REGISTER(registry, "", "Floor", 6, kLatestVersion,
                 (create_simple<xnn_create_floor_nc_f32, xnn_setup_floor_nc_f32>), Backend::kXnnpack);
  XONNX_REGISTER(registry, "", "Ceil", 6, kLatestVersion,
                 (create_simple<xnn_create_ceiling_nc_f32, xnn_setup_ceiling_nc_f32>), Backend::kXnnpack);
  // ONNX rounds halves to even, as XNNPACK's bankers rounding does.
  XONNX_REGISTER(registry, "", "Round", 11, kLatestVersion,
                 (create_simple<xnn_create_bankers_rounding_nc_f32, xnn_setup_bankers_rounding_nc_f32>),
                 Backend::kXnnpack);
  XONNX_REGISTER(registry, "", "Clip", 1, kLatestVersion, create_clip, Backend::kXnnpack);
  XONNX_REGISTER(registry, "", "Softmax", 1, kLatestVersion, create_softmax, Backend::kXnnpack);
}

}  // namespace xnn
}  // namespace xonnx
