// XNNPACK pooling: MaxPool and AveragePool (2-D float32, explicit pads / auto_pad, ceil_mode,
// count_include_pad; MaxPool dilations) via xnn_create_{max,average}_pooling2d_nhwc_f32, and
// GlobalAveragePool via xnn_create_global_average_pooling_ncw_f32 (reads NCHW directly).
//
// How ONNX maps onto XNNPACK (whose padding is excluded from averages and never wins a max):
//  - ceil_mode: extra bottom/right padding so XNNPACK's floor formula gives the ceil size;
//  - count_include_pad=1: the explicit pads become real zeros in the NHWC copy of the input
//    (counted), only the ceil-mode extra stays XNNPACK padding (not counted, as in ONNX);
//  - MaxPool with dilations > 1 and padding, windows without any input element, 1x1 pools,
//    the Indices output and non-float inputs go to the reference kernel; NHWC MaxPool also
//    takes int8 / uint8 (the integer MaxPool of QDQ models, passes/qdq_fusion.h).
// As the layout pass's com.xonnx.nhwc ops (MaxPool, AveragePool, GlobalAveragePool) they take
// and return NHWC tensors: no transposes (GlobalAveragePool via the NWC operator).
#include <algorithm>
#include <cstring>
#include <array>
#include <limits>
#include <string>
#include <vector>

#include "runtime/core/thread_pool.h"
#include "runtime/ops/common/finite.h"
#include "runtime/ops/common/layout_convert.h"
#include "runtime/ops/internal_ops.h"
#include "runtime/ops/ref/common.h"
#include "runtime/ops/registry.h"
#include "runtime/ops/xnnpack/xnnpack_util.h"

namespace xonnx {
namespace xnn {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// The geometry of one input size: XNNPACK pads (top, left, bottom, right), the input size
// XNNPACK sees (after explicit zero padding) and the output size.
struct PoolPlan {
  bool ok = false;
  std::array<int64_t, 4> real_pads{};  // materialized as zeros (count_include_pad = 1)
  std::array<int64_t, 4> xnn_pads{};
  int64_t oh = 0, ow = 0;
};

class PoolKernel final : public FastKernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init, bool is_max);

 private:
  Status run_fast(KernelContext& ctx, bool& handled) override;
  Status run_nhwc(KernelContext& ctx, bool& handled);
  Status run_nhwc_q8(KernelContext& ctx, bool& handled);
  PoolPlan plan(int64_t h, int64_t w) const;
  Status ensure_operator(int64_t channels, const std::array<int64_t, 4>& pads);

  bool nhwc_ = false;
  Buffer input_copy_;
  bool is_max_ = true;
  bool include_pad_ = false;
  bool ceil_ = false;
  std::string auto_pad_;
  int64_t k_[2] = {1, 1}, s_[2] = {1, 1}, d_[2] = {1, 1};
  std::array<int64_t, 4> pads_{};  // top, left, bottom, right (NOTSET)

  Operator op_;
  Operator op_q8_;  // MaxPool on int8 / uint8 (QDQ models): type, channels and pads it has
  DataType q8_type_ = DataType::kUndefined;
  int64_t q8_channels_ = -1;
  std::array<int64_t, 4> q8_pads_{};
  Buffer q8_copy_;
  int64_t op_channels_ = -1;
  std::array<int64_t, 4> op_pads_{};
  int64_t last_n_ = -1, last_h_ = -1, last_w_ = -1;
  PoolPlan plan_;
  const float* last_in_ = nullptr;  // buffers bound by the last xnn_setup_*
  const float* last_out_ = nullptr;
};

Result<std::unique_ptr<Kernel>> PoolKernel::create(const KernelInit& init, bool is_max) {
  if (is_max && init.num_outputs() > 1 && !init.node().outputs[1].empty())
    return unsupported("XNNPACK MaxPool: Indices output");
  XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> ks, init.get_ints("kernel_shape"));
  XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> strides, init.get_ints("strides", {1, 1}));
  XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> dil, init.get_ints("dilations", {1, 1}));
  XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> pads, init.get_ints("pads", {0, 0, 0, 0}));
  XONNX_ASSIGN_OR_RETURN(int64_t ceil_mode, init.get_int("ceil_mode", 0));
  XONNX_ASSIGN_OR_RETURN(int64_t cip, init.get_int("count_include_pad", 0));
  auto k = std::unique_ptr<PoolKernel>(new PoolKernel());
  XONNX_ASSIGN_OR_RETURN(k->auto_pad_, init.get_string("auto_pad", "NOTSET"));
  const std::string& ap = k->auto_pad_;
  if (ap != "NOTSET" && ap != "VALID" && ap != "SAME_UPPER" && ap != "SAME_LOWER")
    return unsupported("XNNPACK pool: auto_pad ", ap);
  if (ks.size() != 2 || strides.size() != 2 || dil.size() != 2 || pads.size() != 4)
    return unsupported("XNNPACK pool: only 2-D");
  constexpr int64_t kMax = 1 << 16;
  for (int i = 0; i < 2; ++i) {
    if (ks[i] < 1 || ks[i] > kMax || strides[i] < 1 || strides[i] > kMax || dil[i] < 1 || dil[i] > kMax)
      return unsupported("XNNPACK pool: attribute out of range");
  }
  for (int64_t p : pads)
    if (p < 0 || p > kMax) return unsupported("XNNPACK pool: pads out of range");
  if (ks[0] * ks[1] == 1) return unsupported("XNNPACK pool: 1x1 pooling");
  if (!is_max && (dil[0] != 1 || dil[1] != 1)) return unsupported("XNNPACK AveragePool: dilations");
  if (ceil_mode != 0 && ceil_mode != 1) return unsupported("XNNPACK pool: ceil_mode");
  XONNX_RETURN_IF_ERROR(init_xnn_kernel(*k, init));
  k->nhwc_ = is_nhwc_node(init);
  k->is_max_ = is_max;
  k->include_pad_ = !is_max && cip != 0;
  k->ceil_ = ceil_mode != 0;
  for (int i = 0; i < 2; ++i) {
    k->k_[i] = ks[i];
    k->s_[i] = strides[i];
    k->d_[i] = dil[i];
  }
  if (ap == "NOTSET") k->pads_ = {pads[0], pads[1], pads[2], pads[3]};
  return std::unique_ptr<Kernel>(std::move(k));
}

PoolPlan PoolKernel::plan(int64_t h, int64_t w) const {
  PoolPlan p;
  const int64_t in[2] = {h, w};
  bool any_pad = false;
  for (int i = 0; i < 2; ++i) {
    const int64_t ek = (k_[i] - 1) * d_[i] + 1, s = s_[i];
    int64_t pb = 0, pe = 0, out = 0;
    if (auto_pad_ == "SAME_UPPER" || auto_pad_ == "SAME_LOWER") {
      const ref::SamePadding same = ref::same_padding(in[i], s, ek, auto_pad_ == "SAME_UPPER");
      out = same.out;
      pb = same.pad_begin;
      pe = same.pad_end;
    } else {
      pb = pads_[i];
      pe = pads_[i + 2];
      out = ref::pool_output_size(in[i], pb, pe, ek, s, ceil_);
      if (out < 0) return p;
    }
    // Extra end padding so that XNNPACK's floor((padded - ek) / s) + 1 equals `out`.
    const int64_t extra = std::max<int64_t>(0, (out - 1) * s + ek - (in[i] + pb + pe));
    if ((in[i] + pb + pe + extra - ek) / s + 1 != out || out < 1) return p;
    // Every window must hold an input element (XNNPACK has no "empty window" value).
    for (int64_t o = 0; o < out; ++o) {
      bool hit = false;
      for (int64_t kk = 0; kk < k_[i] && !hit; ++kk) {
        const int64_t pos = o * s - pb + kk * d_[i];
        hit = pos >= 0 && pos < in[i];
      }
      if (!hit) return p;
    }
    if (include_pad_) {
      p.real_pads[i] = pb;
      p.real_pads[i + 2] = pe;
      p.xnn_pads[i + 2] = extra;
    } else {
      p.xnn_pads[i] = pb;
      p.xnn_pads[i + 2] = pe + extra;
    }
    any_pad = any_pad || pb + pe + extra > 0;
    (i == 0 ? p.oh : p.ow) = out;
  }
  // XNNPACK max pooling clamps padded taps to the edge pixel: exact only for dense windows.
  if (is_max_ && any_pad && (d_[0] != 1 || d_[1] != 1)) return p;
  p.ok = true;
  return p;
}

Status PoolKernel::ensure_operator(int64_t channels, const std::array<int64_t, 4>& pads) {
  if (op_ && channels == op_channels_ && pads == op_pads_) return Status::ok();
  const auto u = [](int64_t v) { return static_cast<uint32_t>(v); };
  const size_t c = static_cast<size_t>(channels);
  xnn_status s;
  if (is_max_) {
    s = xnn_create_max_pooling2d_nhwc_f32(u(pads[0]), u(pads[3]), u(pads[2]), u(pads[1]), u(k_[0]), u(k_[1]), u(s_[0]),
                                          u(s_[1]), u(d_[0]), u(d_[1]), c, c, c, -kInf, kInf, 0, op_.replace());
  } else {
    s = xnn_create_average_pooling2d_nhwc_f32(u(pads[0]), u(pads[3]), u(pads[2]), u(pads[1]), u(k_[0]), u(k_[1]),
                                              u(s_[0]), u(s_[1]), c, c, c, -kInf, kInf, 0, op_.replace());
  }
  XONNX_RETURN_IF_ERROR(
      check(s, is_max_ ? "xnn_create_max_pooling2d_nhwc_f32" : "xnn_create_average_pooling2d_nhwc_f32"));
  op_channels_ = channels;
  op_pads_ = pads;
  last_n_ = last_h_ = last_w_ = -1;
  return Status::ok();
}

// src [n][h][w][c] -> dst [n][h + pt + pb][w + pl + pr][c] with zeros in the border.
void nhwc_padded(const float* src, float* dst, size_t n, size_t c, size_t h, size_t w, size_t pt, size_t pl, size_t pb,
                 size_t pr) {
  const size_t ph = h + pt + pb, pw = w + pl + pr;
  std::memset(dst, 0, n * ph * pw * c * sizeof(float));
  for (size_t b = 0; b < n; ++b) {
    for (size_t y = 0; y < h; ++y) {
      std::memcpy(dst + ((b * ph + y + pt) * pw + pl) * c, src + (b * h + y) * w * c, w * c * sizeof(float));
    }
  }
}

// Max of integers is exact: no NaN rule, no requantization (same type in and out).
Status PoolKernel::run_nhwc_q8(KernelContext& ctx, bool& handled) {
  const Tensor& x = ctx.input(0);
  const int64_t n = x.dim(0), h = x.dim(1), w = x.dim(2), c = x.dim(3);
  if (n <= 0 || c <= 0 || h <= 0 || w <= 0) return Status::ok();
  const PoolPlan p = plan(h, w);
  if (!p.ok) return Status::ok();
  const auto& pads = p.xnn_pads;
  const bool is_signed = x.dtype() == DataType::kInt8;
  if (!op_q8_ || q8_type_ != x.dtype() || q8_channels_ != c || q8_pads_ != pads) {
    const auto u = [](int64_t v) { return static_cast<uint32_t>(v); };
    const size_t cc = static_cast<size_t>(c);
    const xnn_status s = is_signed
                             ? xnn_create_max_pooling2d_nhwc_s8(u(pads[0]), u(pads[3]), u(pads[2]), u(pads[1]),
                                                                u(k_[0]), u(k_[1]), u(s_[0]), u(s_[1]), u(d_[0]),
                                                                u(d_[1]), cc, cc, cc, -128, 127, 0, op_q8_.replace())
                             : xnn_create_max_pooling2d_nhwc_u8(u(pads[0]), u(pads[3]), u(pads[2]), u(pads[1]),
                                                                u(k_[0]), u(k_[1]), u(s_[0]), u(s_[1]), u(d_[0]),
                                                                u(d_[1]), cc, cc, cc, 0, 255, 0, op_q8_.replace());
    if (Status st = check(s, "xnn_create_max_pooling2d_nhwc_[su]8"); !st.is_ok()) return unless_declined(st);
    q8_type_ = x.dtype();
    q8_channels_ = c;
    q8_pads_ = pads;
  }
  const uint8_t* in = readable_bytes(x, q8_copy_);
  XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, x.dtype(), {n, p.oh, p.ow, c}));
  void* out = y->raw_data();
  pthreadpool_t tp = pool_for(*pool_, double(y->numel()) * double(k_[0] * k_[1]));
  const size_t nb = static_cast<size_t>(n), hh = static_cast<size_t>(h), ww = static_cast<size_t>(w);
  const xnn_status s =
      is_signed ? xnn_setup_max_pooling2d_nhwc_s8(op_q8_.get(), nb, hh, ww, reinterpret_cast<const int8_t*>(in),
                                                  static_cast<int8_t*>(out), tp)
                : xnn_setup_max_pooling2d_nhwc_u8(op_q8_.get(), nb, hh, ww, in, static_cast<uint8_t*>(out), tp);
  if (Status st = check(s, "xnn_setup_max_pooling2d_nhwc_[su]8"); !st.is_ok()) return unless_declined(st);
  XONNX_RETURN_IF_ERROR(op_q8_.run(tp));
  handled = true;
  return Status::ok();
}

Status PoolKernel::run_nhwc(KernelContext& ctx, bool& handled) {
  const Tensor& x = ctx.input(0);
  if (is_max_ && x.defined() && x.rank() == 4 && (x.dtype() == DataType::kInt8 || x.dtype() == DataType::kUint8))
    return run_nhwc_q8(ctx, handled);
  if (!is_f32(x) || x.rank() != 4) return Status::ok();
  const int64_t n = x.dim(0), h = x.dim(1), w = x.dim(2), c = x.dim(3);
  if (n <= 0 || c <= 0 || h <= 0 || w <= 0) return Status::ok();
  if (h != last_h_ || w != last_w_) plan_ = plan(h, w);
  last_h_ = h;
  last_w_ = w;
  last_n_ = -1;  // the NCHW path's binding is not kept
  if (!plan_.ok) return Status::ok();
  if (Status st = ensure_operator(c, plan_.xnn_pads); !st.is_ok()) return unless_declined(st);
  last_h_ = h;  // ensure_operator forgets the plan's size
  last_w_ = w;
  const auto& rp = plan_.real_pads;
  const int64_t ih = h + rp[0] + rp[2], iw = w + rp[1] + rp[3];
  const size_t nb = static_cast<size_t>(n), cc = static_cast<size_t>(c);
  const float* in = nullptr;
  if (rp[0] + rp[1] + rp[2] + rp[3] > 0) {
    float* padded = input_copy_.resize(nb * static_cast<size_t>(ih * iw) * cc);
    nhwc_padded(x.data<float>(), padded, nb, cc, static_cast<size_t>(h), static_cast<size_t>(w),
                static_cast<size_t>(rp[0]), static_cast<size_t>(rp[1]), static_cast<size_t>(rp[2]),
                static_cast<size_t>(rp[3]));
    in = padded;
  } else {
    in = readable_input(x, input_copy_);
  }
  XONNX_ASSIGN_OR_RETURN(Tensor * y,
                         ctx.allocate_output_uninitialized(0, DataType::kFloat, {n, plan_.oh, plan_.ow, c}));
  float* out = y->data<float>();
  const size_t out_elems = static_cast<size_t>(y->numel());
  pthreadpool_t tp = pool_for(*pool_, double(out_elems) * double(k_[0] * k_[1]));
  const xnn_status s = is_max_ ? xnn_setup_max_pooling2d_nhwc_f32(op_.get(), nb, static_cast<size_t>(ih),
                                                                  static_cast<size_t>(iw), in, out, tp)
                               : xnn_setup_average_pooling2d_nhwc_f32(op_.get(), nb, static_cast<size_t>(ih),
                                                                      static_cast<size_t>(iw), in, out, tp);
  if (Status st = check(s, "xnn_setup_*_pooling2d_nhwc_f32"); !st.is_ok()) return unless_declined(st);
  XONNX_RETURN_IF_ERROR(op_.run(tp));
  handled = keep_if_finite(all_finite(out, out_elems, *pool_));  // NaN/inf: the reference twin's semantics
  return Status::ok();
}

Status PoolKernel::run_fast(KernelContext& ctx, bool& handled) {
  if (nhwc_) return run_nhwc(ctx, handled);
  const Tensor& x = ctx.input(0);
  if (!is_f32(x) || x.rank() != 4) return Status::ok();
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
  if (n <= 0 || c <= 0 || h <= 0 || w <= 0) return Status::ok();
  if (h != last_h_ || w != last_w_) plan_ = plan(h, w);
  if (!plan_.ok) return Status::ok();
  if (Status st = ensure_operator(c, plan_.xnn_pads); !st.is_ok()) return unless_declined(st);
  const auto& rp = plan_.real_pads;
  const int64_t ih = h + rp[0] + rp[2], iw = w + rp[1] + rp[3];
  const size_t nb = static_cast<size_t>(n), cc = static_cast<size_t>(c);
  const size_t in_hw = static_cast<size_t>(ih * iw), out_hw = static_cast<size_t>(plan_.oh * plan_.ow);
  float* in = thread_scratch(0).resize(nb * in_hw * cc);
  float* out = thread_scratch(1).resize(nb * out_hw * cc);
  pthreadpool_t tp = pool_for(*pool_, double(nb) * double(out_hw) * double(cc) * double(k_[0] * k_[1]));
  if (n != last_n_ || h != last_h_ || w != last_w_ || in != last_in_ || out != last_out_) {
    const xnn_status s = is_max_ ? xnn_setup_max_pooling2d_nhwc_f32(op_.get(), nb, static_cast<size_t>(ih),
                                                                    static_cast<size_t>(iw), in, out, tp)
                                 : xnn_setup_average_pooling2d_nhwc_f32(op_.get(), nb, static_cast<size_t>(ih),
                                                                        static_cast<size_t>(iw), in, out, tp);
    if (Status st = check(s, "xnn_setup_*_pooling2d_nhwc_f32"); !st.is_ok()) return unless_declined(st);
    last_n_ = n;
    last_in_ = in;
    last_out_ = out;
    last_h_ = h;
    last_w_ = w;
  }
  if (rp[0] + rp[1] + rp[2] + rp[3] > 0) {
    nchw_to_nhwc_padded(x.data<float>(), in, nb, cc, static_cast<size_t>(h), static_cast<size_t>(w),
                        static_cast<size_t>(rp[0]), static_cast<size_t>(rp[1]), static_cast<size_t>(rp[2]),
                        static_cast<size_t>(rp[3]), *pool_);
  } else {
    nchw_to_nhwc(x.data<float>(), in, nb, cc, in_hw, *pool_);
  }
  XONNX_RETURN_IF_ERROR(op_.run(tp));
  if (!keep_if_finite(all_finite(out, nb * out_hw * cc, *pool_))) return Status::ok();  // NaN/inf: reference semantics
  XONNX_ASSIGN_OR_RETURN(Tensor * y,
                         ctx.allocate_output_uninitialized(0, DataType::kFloat, {n, c, plan_.oh, plan_.ow}));
  nhwc_to_nchw(out, y->data<float>(), nb, cc, out_hw, *pool_);
  handled = true;
  return Status::ok();
}

Result<std::unique_ptr<Kernel>> create_max_pool(const KernelInit& init) { return PoolKernel::create(init, true); }
Result<std::unique_ptr<Kernel>> create_average_pool(const KernelInit& init) { return PoolKernel::create(init, false); }

// ---- GlobalAveragePool ---------------------------------------------------------------------

class GlobalAveragePoolKernel final : public FastKernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    auto k = std::unique_ptr<GlobalAveragePoolKernel>(new GlobalAveragePoolKernel());
    XONNX_RETURN_IF_ERROR(init_xnn_kernel(*k, init));
    // Probe once: the NCW operator exists only where XNNPACK has its micro-kernel.
    XONNX_RETURN_IF_ERROR(k->ensure_operator(1));
    return std::unique_ptr<Kernel>(std::move(k));
  }

 private:
  Status ensure_operator(int64_t channels) {
    if (op_ && channels == channels_) return Status::ok();
    XONNX_RETURN_IF_ERROR(
        check(xnn_create_global_average_pooling_ncw_f32(static_cast<size_t>(channels), -kInf, kInf, 0, op_.replace()),
              "xnn_create_global_average_pooling_ncw_f32"));
    channels_ = channels;
    return Status::ok();
  }

  Status run_fast(KernelContext& ctx, bool& handled) override {
    const Tensor& x = ctx.input(0);
    if (!is_f32(x) || x.rank() < 3) return Status::ok();
    const int64_t n = x.dim(0), c = x.dim(1), sp = x.numel() / std::max<int64_t>(1, n * c);
    if (n <= 0 || c <= 0 || sp <= 0) return Status::ok();
    if (Status st = ensure_operator(c); !st.is_ok()) return unless_declined(st);
    Shape yshape = x.shape();
    for (size_t i = 2; i < yshape.size(); ++i) yshape[i] = 1;
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DataType::kFloat, yshape));
    const float* in = readable_input(x, scratch_);
    pthreadpool_t tp = pool_for(*pool_, double(x.numel()));
    XONNX_RETURN_IF_ERROR(
        check(xnn_setup_global_average_pooling_ncw_f32(op_.get(), static_cast<size_t>(n), static_cast<size_t>(sp), in,
                                                       y->data<float>(), tp),
              "xnn_setup_global_average_pooling_ncw_f32"));
    XONNX_RETURN_IF_ERROR(op_.run(tp));
    handled = keep_if_finite(
        all_finite(y->data<float>(), static_cast<size_t>(y->numel()), *pool_));  // else: reference reruns
    return Status::ok();
  }

  Operator op_;
  int64_t channels_ = -1;
  Buffer scratch_;
};

// GlobalAveragePool on NHWC [N,H,W,C] -> [N,1,1,C] (XNNPACK's NWC operator, W = H * W).
class GlobalAveragePoolNhwcKernel final : public FastKernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    auto k = std::unique_ptr<GlobalAveragePoolNhwcKernel>(new GlobalAveragePoolNhwcKernel());
    XONNX_RETURN_IF_ERROR(init_xnn_kernel(*k, init));
    XONNX_RETURN_IF_ERROR(k->ensure_operator(1));
    return std::unique_ptr<Kernel>(std::move(k));
  }

 private:
  Status ensure_operator(int64_t channels) {
    if (op_ && channels == channels_) return Status::ok();
    const size_t c = static_cast<size_t>(channels);
    XONNX_RETURN_IF_ERROR(check(xnn_create_global_average_pooling_nwc_f32(c, c, c, -kInf, kInf, 0, op_.replace()),
                                "xnn_create_global_average_pooling_nwc_f32"));
    channels_ = channels;
    return Status::ok();
  }

  Status run_fast(KernelContext& ctx, bool& handled) override {
    const Tensor& x = ctx.input(0);
    if (!is_f32(x) || x.rank() != 4) return Status::ok();
    const int64_t n = x.dim(0), hw = x.dim(1) * x.dim(2), c = x.dim(3);
    if (n <= 0 || c <= 0 || hw <= 0) return Status::ok();
    if (Status st = ensure_operator(c); !st.is_ok()) return unless_declined(st);
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DataType::kFloat, {n, 1, 1, c}));
    const float* in = readable_input(x, scratch_);
    pthreadpool_t tp = pool_for(*pool_, double(x.numel()));
    XONNX_RETURN_IF_ERROR(
        check(xnn_setup_global_average_pooling_nwc_f32(op_.get(), static_cast<size_t>(n), static_cast<size_t>(hw), in,
                                                       y->data<float>(), tp),
              "xnn_setup_global_average_pooling_nwc_f32"));
    XONNX_RETURN_IF_ERROR(op_.run(tp));
    handled =
        keep_if_finite(all_finite(y->data<float>(), static_cast<size_t>(y->numel()), *pool_));  // else: the twin reruns
    return Status::ok();
  }

  Operator op_;
  int64_t channels_ = -1;
  Buffer scratch_;
};

}  // namespace

void register_xnnpack_pool(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "MaxPool", 1, kLatestVersion, create_max_pool, Backend::kXnnpack);
  XONNX_REGISTER(registry, "", "AveragePool", 1, kLatestVersion, create_average_pool, Backend::kXnnpack);
  XONNX_REGISTER(registry, "", "GlobalAveragePool", 1, kLatestVersion, GlobalAveragePoolKernel::create,
                 Backend::kXnnpack);
  XONNX_REGISTER(registry, kNhwcDomain, "MaxPool", 1, kLatestVersion, create_max_pool, Backend::kXnnpack);
  XONNX_REGISTER(registry, kNhwcDomain, "AveragePool", 1, kLatestVersion, create_average_pool, Backend::kXnnpack);
  XONNX_REGISTER(registry, kNhwcDomain, "GlobalAveragePool", 1, kLatestVersion, GlobalAveragePoolNhwcKernel::create,
                 Backend::kXnnpack);
}

}  // namespace xnn
}  // namespace xonnx
