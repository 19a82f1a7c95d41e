// XNNPACK Conv: 2-D (and 1-D, [N, C, L] as [N, C, 1, L]) float32 convolution with constant
// weights (and bias), any group (depthwise included), strides, dilations, pads and auto_pad, via
// xnn_create_convolution2d_nhwc_f32. XNNPACK packs the weights into its own buffer when the
// operator is created; we keep only a handle on the initializer (no second copy) to
// re-create the operator when auto_pad SAME with strides > 1 needs new pads for a new
// input size. NCHW in and out: the input is transposed to NHWC scratch, the output back.
// As the layout pass's com.xonnx.nhwc Conv: NHWC in and out, no transposes, and the fused
// Relu/Clip of attributes activation_min/max as XNNPACK's output range. A grouped NHWC Conv in a
// session of several threads runs as one operator per thread, each over a range of the groups
// (a window of the same tensors' channels), on the session's pool. Through pthreadpool, whose
// workers are woken for each operator and parked after it while the pool's own wait, RegNet's
// sixteen grouped layers took 0.85x of their 1-thread time on 2 threads.
//
// NaN/inf rule: XNNPACK's clamp turns NaN into the lower bound, so an unfused Conv (range
// +-inf) whose output holds a non-finite value reruns the reference; a fused Conv also checks
// its input first and, when it is not all finite, runs the reference twin (ONNX Conv, then
// the clamp with Relu/Clip semantics: NaN stays NaN). Finite inputs whose products overflow
// are the one case left to XNNPACK's clamp.
#include <algorithm>
#include <array>
#include <limits>
#include <string>
#include <vector>

#include "runtime/core/thread_pool.h"
#include "runtime/ops/common/conv_geometry.h"
#include "runtime/ops/common/finite.h"
#include "runtime/ops/common/layout_convert.h"
#include "runtime/ops/common/residual.h"
#include "runtime/ops/internal_ops.h"
#include "runtime/ops/registry.h"
#include "runtime/ops/xnnpack/xnnpack_util.h"

namespace xonnx {
namespace xnn {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

class ConvKernel final : public FastKernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init);

 private:
  Status run_fast(KernelContext& ctx, bool& handled) override;
  Status run_nhwc(KernelContext& ctx, bool& handled);
  Status ensure_operator(const std::array<int64_t, 4>& pads);

  int64_t group_ = 1, out_ch_ = 0, in_ch_ = 0;  // in_ch_: per group
  size_t rank_ = 4;                             // of W and X: 3 for a 1-D Conv
  ConvGeometry geo_;
  Tensor weight_, bias_;  // the initializers (shared storage)
  bool nhwc_ = false;
  float act_lo_ = -kInf, act_hi_ = kInf;  // fused output range (NHWC only)
  bool residual_ = false;                 // Z (input 3, NHWC only): added before the range
  // XNNPACK's clamp: the fused range, open when a residual is added after the run.
  float op_lo() const { return residual_ ? -kInf : act_lo_; }
  float op_hi() const { return residual_ ? kInf : act_hi_; }
  RowFunction activation_ = nullptr;  // fused Swish / HardSwish after it (NHWC only)
  Buffer input_copy_;

  // One operator, or (a grouped NHWC Conv on several threads) one per range of groups, as many
  // as the session's threads: operator i covers groups [first_group(i), first_group(i + 1)).
  std::vector<Operator> ops_;
  int64_t first_group(size_t i) const { return static_cast<int64_t>(i) * group_ / static_cast<int64_t>(ops_.size()); }
  std::array<int64_t, 4> op_pads_{-1, -1, -1, -1};
  int64_t last_n_ = -1, last_h_ = -1, last_w_ = -1;
  const float* last_in_ = nullptr;  // buffers bound by the last xnn_setup_*
  const float* last_out_ = nullptr;
  std::vector<Status> part_results_;  // per operator of ops_, one run
};

Result<std::unique_ptr<Kernel>> ConvKernel::create(const KernelInit& init) {
  const Tensor* w = init.constant_input(1);
  if (!w || !is_f32(*w) || (w->rank() != 4 && w->rank() != 3))
    return unsupported("XNNPACK Conv: needs a constant 3-D or 4-D float W");
  const Tensor* b = nullptr;
  if (init.has_input(2)) {
    b = init.constant_input(2);
    if (!b || !is_f32(*b) || b->rank() != 1 || b->dim(0) != w->dim(0))
      return unsupported("XNNPACK Conv: bias must be a constant float [M]");
  }
  auto k = std::unique_ptr<ConvKernel>(new ConvKernel());
  XONNX_RETURN_IF_ERROR(init_xnn_kernel(*k, init));
  k->nhwc_ = is_nhwc_node(init);
  k->rank_ = w->rank();
  if (k->nhwc_ && k->rank_ != 4) return unsupported("XNNPACK Conv: NHWC needs 4-D W");
  if (k->nhwc_) {
    XONNX_ASSIGN_OR_RETURN(k->act_lo_, init.get_float("activation_min", -kInf));
    XONNX_ASSIGN_OR_RETURN(k->act_hi_, init.get_float("activation_max", kInf));
    if (!(k->act_lo_ < k->act_hi_)) return unsupported("XNNPACK Conv: empty output range");
    XONNX_ASSIGN_OR_RETURN(const std::string activation, init.get_string("activation", ""));
    if (!activation.empty()) {  // the layout pass's Swish / HardSwish, from the registry
      k->activation_ = OpRegistry::global().row_function(activation);
      if (!k->activation_) return unsupported("XNNPACK Conv: activation ", activation);
    }
    k->residual_ = init.has_input(kConvResidualInput);
    if (k->residual_ && k->activation_) return unsupported("XNNPACK Conv: a residual input with an activation");
  } else if (init.has_input(kConvResidualInput)) {
    return unsupported("XNNPACK Conv: a residual input outside the NHWC layout");
  }
  if (k->rank_ == 3) {
    XONNX_ASSIGN_OR_RETURN(k->geo_, ConvGeometry::parse_1d(init, w->shape(), k->group_, "XNNPACK Conv"));
  } else {
    XONNX_ASSIGN_OR_RETURN(k->geo_, ConvGeometry::parse(init, w->shape(), k->group_, "XNNPACK Conv"));
  }
  k->out_ch_ = w->dim(0);
  k->in_ch_ = w->dim(1);
  k->weight_ = *w;
  if (b) k->bias_ = *b;
  // Pads that do not depend on the input size: create (and pack) now, so an operator
  // XNNPACK rejects declines the node at session creation.
  std::array<int64_t, 4> p;
  if (k->geo_.fixed_pads(p)) {
    XONNX_RETURN_IF_ERROR(k->ensure_operator(p));
    // Never created again: the weights live on only in XNNPACK's packed copy.
    k->weight_ = Tensor();
    k->bias_ = Tensor();
    init.packed_constant_input(1);
    if (b) init.packed_constant_input(2);
  }
  return std::unique_ptr<Kernel>(std::move(k));
}

Status ConvKernel::ensure_operator(const std::array<int64_t, 4>& pads) {
  if (!ops_.empty() && pads == op_pads_) return Status::ok();
  // ONNX W [M][C/g][kh][kw] -> XNNPACK [g][M/g][kh][kw][C/g] == [M][kh][kw][C/g].
  const int64_t khw = geo_.kh * geo_.kw;
  const float* w = weight_.data<float>();
  std::vector<float> packed;
  if (in_ch_ > 1) {
    packed.resize(static_cast<size_t>(out_ch_ * khw * in_ch_));
    weights_to_ohwi(w, packed.data(), out_ch_, in_ch_, khw);
    w = packed.data();
  }
  const size_t gin = static_cast<size_t>(in_ch_), gout = static_cast<size_t>(out_ch_ / group_);
  const int64_t parts = nhwc_ && group_ > 1 ? std::min<int64_t>(group_, pool_->num_threads()) : 1;
  ops_.clear();
  ops_.resize(static_cast<size_t>(parts));
  for (size_t i = 0; i < ops_.size(); ++i) {
    const int64_t g0 = first_group(i), groups = first_group(i + 1) - g0;
    const int64_t out0 = g0 * static_cast<int64_t>(gout);  // its first output channel
    const xnn_status s = xnn_create_convolution2d_nhwc_f32(
        static_cast<uint32_t>(pads[0]), static_cast<uint32_t>(pads[3]), static_cast<uint32_t>(pads[2]),
        static_cast<uint32_t>(pads[1]), static_cast<uint32_t>(geo_.kh), static_cast<uint32_t>(geo_.kw),
        static_cast<uint32_t>(geo_.sh), static_cast<uint32_t>(geo_.sw), static_cast<uint32_t>(geo_.dh),
        static_cast<uint32_t>(geo_.dw), static_cast<uint32_t>(groups), gin, gout, gin * static_cast<size_t>(group_),
        gout * static_cast<size_t>(group_), w + out0 * khw * in_ch_,
        bias_.defined() ? bias_.data<float>() + out0 : nullptr, op_lo(), op_hi(), 0, ops_[i].replace());
    if (s != xnn_status_success) ops_.clear();
    XONNX_RETURN_IF_ERROR(check(s, "xnn_create_convolution2d_nhwc_f32"));
  }
  op_pads_ = pads;
  last_n_ = last_h_ = last_w_ = -1;
  return Status::ok();
}

Status ConvKernel::run_nhwc(KernelContext& ctx, bool& handled) {
  const Tensor& x = ctx.input(0);
  if (!is_f32(x) || x.rank() != 4 || x.dim(3) != in_ch_ * group_) return Status::ok();
  const int64_t n = x.dim(0), h = x.dim(1), w = x.dim(2);
  if (n <= 0 || h <= 0 || w <= 0) return Status::ok();
  std::array<int64_t, 4> pads;
  if (!geo_.pads_for(h, w, pads)) return Status::ok();
  if (Status st = ensure_operator(pads); !st.is_ok()) return unless_declined(st);
  const bool fused = op_lo() != -kInf || op_hi() != kInf;
  const size_t in_elems = static_cast<size_t>(x.numel());
  if (fused && !keep_if_finite(all_finite(x.data<float>(), in_elems, *pool_)))
    return Status::ok();  // the twin's semantics
  const int64_t oh = geo_.out_h(h, pads), ow = geo_.out_w(w, pads);
  const float* residual = nullptr;
  if (residual_) {  // Z of the output's shape (a broadcasting one is the twin's)
    const Tensor& z = ctx.input(kConvResidualInput);
    if (!is_f32(z) || z.shape() != Shape{n, oh, ow, out_ch_}) return Status::ok();
    residual = z.data<float>();
  }
  XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DataType::kFloat, {n, oh, ow, out_ch_}));
  const float* in = readable_input(x, input_copy_);
  float* out = y->data<float>();
  const size_t nb = static_cast<size_t>(n), out_elems = static_cast<size_t>(y->numel());
  const double work = double(out_elems) * double(in_ch_ * geo_.kh * geo_.kw);
  last_n_ = -1;  // the NCHW path's binding is gone
  if (ops_.size() == 1) {
    pthreadpool_t tp = pool_for(*pool_, work);
    // Same shape: XNNPACK's setup only rebinds the pointers (no indirection rebuild).
    XONNX_RETURN_IF_ERROR(check(xnn_setup_convolution2d_nhwc_f32(ops_[0].get(), nb, static_cast<size_t>(h),
                                                                 static_cast<size_t>(w), in, out, tp),
                                "xnn_setup_convolution2d_nhwc_f32"));
    XONNX_RETURN_IF_ERROR(ops_[0].run(tp));
  } else {
    const int64_t gin = in_ch_, gout = out_ch_ / group_;
    for (size_t i = 0; i < ops_.size(); ++i) {
      const int64_t g0 = first_group(i);
      XONNX_RETURN_IF_ERROR(
          check(xnn_setup_convolution2d_nhwc_f32(ops_[i].get(), nb, static_cast<size_t>(h), static_cast<size_t>(w),
                                                 in + g0 * gin, out + g0 * gout, nullptr),
                "xnn_setup_convolution2d_nhwc_f32"));
    }
    std::vector<Status>& results = part_results_;
    results.assign(ops_.size(), Status::ok());
    const size_t min_chunk = parallel_pays(work) ? 1 : ops_.size();
    pool_->parallel_for(ops_.size(), min_chunk, [&](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i) results[i] = ops_[i].run(nullptr);
    });
    for (const Status& st : results) XONNX_RETURN_IF_ERROR(st);
  }
  // A finite range cannot produce a non-finite value; an open one (Relu, none) can.
  if ((op_lo() == -kInf || op_hi() == kInf) && !keep_if_finite(all_finite(out, out_elems, *pool_))) return Status::ok();
  if (residual) {  // one pass: what the Add and its Relu / Clip took two for
    pool_->parallel_for(out_elems, 16384, [&](size_t b, size_t e) {
      add_residual_clamped(out + b, residual + b, 1, static_cast<int64_t>(e - b), 0, act_lo_, act_hi_);
    });
  }
  if (activation_) {  // a fused (Hard)Swish (XNNPACK has none): the own kernels' one pass, in place
    const RowFunction f = activation_;
    pool_->parallel_for(out_elems, 16384,
                        [&](size_t b, size_t e) { f(out + b, out + b, static_cast<int64_t>(e - b)); });
  }
  handled = true;
  return Status::ok();
}

Status ConvKernel::run_fast(KernelContext& ctx, bool& handled) {
  if (nhwc_) return run_nhwc(ctx, handled);
  const Tensor& x = ctx.input(0);
  if (!is_f32(x) || x.rank() != rank_ || x.dim(1) != in_ch_ * group_) return Status::ok();
  const int64_t n = x.dim(0), h = rank_ == 4 ? x.dim(2) : 1, w = x.dim(rank_ - 1);
  if (n <= 0 || h <= 0 || w <= 0) return Status::ok();
  std::array<int64_t, 4> pads;
  if (!geo_.pads_for(h, w, pads)) return Status::ok();
  if (Status st = ensure_operator(pads); !st.is_ok()) return unless_declined(st);
  const int64_t oh = geo_.out_h(h, pads), ow = geo_.out_w(w, pads);
  const size_t cin = static_cast<size_t>(x.dim(1)), cout = static_cast<size_t>(out_ch_);
  const size_t in_hw = static_cast<size_t>(h * w), out_hw = static_cast<size_t>(oh * ow);
  const size_t nb = static_cast<size_t>(n);
  float* in = thread_scratch(0).resize(nb * in_hw * cin);
  float* out = thread_scratch(1).resize(nb * out_hw * cout);
  pthreadpool_t tp = pool_for(*pool_, double(nb) * double(out_hw) * double(cout) * double(in_ch_ * geo_.kh * geo_.kw));
  if (n != last_n_ || h != last_h_ || w != last_w_ || in != last_in_ || out != last_out_) {
    XONNX_RETURN_IF_ERROR(check(xnn_setup_convolution2d_nhwc_f32(ops_[0].get(), nb, static_cast<size_t>(h),
                                                                 static_cast<size_t>(w), in, out, tp),
                                "xnn_setup_convolution2d_nhwc_f32"));
    last_n_ = n;
    last_in_ = in;
    last_out_ = out;
    last_h_ = h;
    last_w_ = w;
  }
  nchw_to_nhwc(x.data<float>(), in, nb, cin, in_hw, *pool_);
  XONNX_RETURN_IF_ERROR(ops_[0].run(tp));
  if (!keep_if_finite(all_finite(out, nb * out_hw * cout, *pool_)))
    return Status::ok();  // NaN/inf: reference semantics
  const Shape y_shape = rank_ == 4 ? Shape{n, out_ch_, oh, ow} : Shape{n, out_ch_, ow};
  XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DataType::kFloat, y_shape));
  nhwc_to_nchw(out, y->data<float>(), nb, cout, out_hw, *pool_);
  handled = true;
  return Status::ok();
}

}  // namespace

void register_xnnpack_conv(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "Conv", 1, kLatestVersion, ConvKernel::create, Backend::kXnnpack);
  XONNX_REGISTER(registry, kNhwcDomain, "Conv", 1, kLatestVersion, ConvKernel::create, Backend::kXnnpack);
}

}  // namespace xnn
}  // namespace xonnx
