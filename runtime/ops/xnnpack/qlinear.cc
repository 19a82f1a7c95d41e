// XNNPACK integer kernels for models that come quantized: QLinearConv (2-D, constant weights,
// scales, zero points and int32 bias; any group, strides, dilations, pads, auto_pad) via
// xnn_create_convolution2d_nhwc_qu8 / _qs8 / _qc8 (per-channel weight scales), and
// QLinearMatMul with a constant 2-D B via xnn_create_fully_connected_nc_qu8 / _qs8.
// XNNPACK does the requantization (fp32 multiplier, round to nearest even), so a result may
// differ from the reference kernel (double multiply) by 1 in the last integer step.
//
// Signedness: XNNPACK's signed kernels want int8 activations and int8 weights with zero point 0;
// its unsigned ones want uint8 everywhere. uint8 <-> int8 is x ^ 0x80 with the zero point moved
// by 128 (same real values), so uint8 activations with symmetric int8 weights (what ORT's
// quantize_static emits) run on the signed kernels, flipped while transposing to/from NHWC.
// Weights that fit neither form (asymmetric per-channel) and scales XNNPACK rejects (not
// normal floats, requantization scale outside [2^-32, 256)) decline at session creation.
// As the layout pass's com.xonnx.nhwc QLinearConv (made from QDQ groups by passes/qdq_fusion.h)
// it takes and returns NHWC tensors directly.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "runtime/core/thread_pool.h"
#include "runtime/ops/common/conv_geometry.h"
#include "runtime/ops/common/layout_convert.h"
#include "runtime/ops/common/quant_params.h"
#include "runtime/ops/internal_ops.h"
#include "runtime/ops/registry.h"
#include "runtime/ops/xnnpack/xnnpack_util.h"

namespace xonnx {
namespace xnn {
namespace {

// XNNPACK's limits on the requantization scale in_scale * w_scale / out_scale.
bool requant_ok(float in_scale, float w_scale, float out_scale) {
  const float r = in_scale * w_scale / out_scale;
  return r >= 0x1.0p-32f && r < 256.0f;
}

// How the weights go to XNNPACK: as int8 with zero point 0 (signed kernels; per-channel scales
// allowed) or as uint8 with one zero point (unsigned kernels; one scale).
struct PackedWeights {
  bool is_signed = true;
  bool per_channel = false;
  std::vector<uint8_t> bytes;  // raw values, converted (same layout as the source)
  std::vector<float> scales;   // one per output channel
  int32_t zero_point = 0;      // unsigned form only
};

// w: the constant weight tensor; scale / zp: constant tensors of 1 or `out_ch` elements.
Result<PackedWeights> convert_weights(const Tensor& w, const Tensor& scale, const Tensor& zp, int64_t out_ch) {
  if (!dtype_is_8bit_int(w.dtype()) || zp.dtype() != w.dtype()) return unsupported("XNNPACK QLinear: weight types");
  if (scale.dtype() != DataType::kFloat) return unsupported("XNNPACK QLinear: weight scale must be float");
  const int64_t ns = scale.numel(), nz = zp.numel();
  if ((ns != 1 && ns != out_ch) || (nz != 1 && nz != out_ch) || scale.rank() > 1 || zp.rank() > 1)
    return unsupported("XNNPACK QLinear: weight scale / zero point must be per-tensor or per output channel");
  PackedWeights p;
  p.scales.resize(static_cast<size_t>(out_ch));
  std::vector<int32_t> zps(static_cast<size_t>(out_ch));
  for (int64_t m = 0; m < out_ch; ++m) {
    p.scales[m] = scale.data<float>()[ns == 1 ? 0 : m];
    zps[m] = static_cast<int32_t>(zp.get_as_int64(nz == 1 ? 0 : m));
    if (!(p.scales[m] > 0.0f) || !std::isnormal(p.scales[m]))
      return unsupported("XNNPACK QLinear: weight scale is not a normal positive float");
  }
  const bool one_scale = std::all_of(p.scales.begin(), p.scales.end(), [&](float s) { return s == p.scales[0]; });
  const bool one_zp = std::all_of(zps.begin(), zps.end(), [&](int32_t z) { return z == zps[0]; });
  const int32_t shift = w.dtype() == DataType::kUint8 ? 128 : 0;  // int8 value = raw - shift
  const uint8_t* raw = static_cast<const uint8_t*>(w.raw_data());
  p.bytes.assign(raw, raw + w.numel());
  if (one_zp && zps[0] == shift) {  // symmetric: int8 weights, zero point 0
    p.is_signed = true;
    p.per_channel = !one_scale;
    if (shift)
      for (uint8_t& b : p.bytes) b ^= 0x80;
    return p;
  }
  if (one_zp && one_scale) {  // asymmetric per-tensor: uint8 weights
    p.is_signed = false;
    p.zero_point = zps[0] - shift + 128;
    if (!shift)
      for (uint8_t& b : p.bytes) b ^= 0x80;
    return p;
  }
  return unsupported("XNNPACK QLinear: asymmetric per-channel weights");
}

// Activations: flip = 0x80 when their signedness differs from the kernel's; the zero point
// moves with the values.
uint8_t flip_for(DataType t, bool kernel_signed) { return (t == DataType::kInt8) != kernel_signed ? 0x80 : 0; }
int32_t zp_for(DataType t, int32_t zp, bool kernel_signed) {
  if (!flip_for(t, kernel_signed)) return zp;
  return t == DataType::kInt8 ? zp + 128 : zp - 128;
}

// src [n][c][hw] -> dst [n][hw][c] (and back with to_nhwc = false), each byte ^ flip.
void transpose_bytes(const uint8_t* src, uint8_t* dst, size_t n, size_t c, size_t hw, uint8_t flip, bool to_nhwc) {
  constexpr size_t kTile = 64;
  for (size_t b = 0; b < n; ++b) {
    const uint8_t* s = src + b * c * hw;
    uint8_t* d = dst + b * c * hw;
    for (size_t p0 = 0; p0 < hw; p0 += kTile) {
      const size_t p1 = std::min(hw, p0 + kTile);
      for (size_t ch = 0; ch < c; ++ch) {
        if (to_nhwc) {
          for (size_t p = p0; p < p1; ++p) d[p * c + ch] = s[ch * hw + p] ^ flip;
        } else {
          for (size_t p = p0; p < p1; ++p) d[ch * hw + p] = s[p * c + ch] ^ flip;
        }
      }
    }
  }
}

uint8_t* byte_scratch(int which, size_t bytes) {
  return reinterpret_cast<uint8_t*>(thread_scratch(which).resize((bytes + sizeof(float) - 1) / sizeof(float)));
}

// ---- QLinearConv ------------------------------------------------------------------------
class QLinearConvKernel final : public FastKernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init);

 private:
  Status run_fast(KernelContext& ctx, bool& handled) override;
  Status run_nhwc(KernelContext& ctx, bool& handled);
  Status ensure_operator(const std::array<int64_t, 4>& pads);
  xnn_status setup(size_t n, size_t h, size_t w, const uint8_t* in, uint8_t* out, pthreadpool_t tp);

  bool nhwc_ = false;                           // the layout pass's com.xonnx.nhwc QLinearConv
  int64_t group_ = 1, out_ch_ = 0, in_ch_ = 0;  // in_ch_: per group
  ConvGeometry geo_;
  DataType x_type_ = DataType::kUint8, y_type_ = DataType::kUint8;
  float x_scale_ = 1, y_scale_ = 1;
  int32_t x_zp_ = 0, y_zp_ = 0;  // in the kernel's signedness
  PackedWeights w_;              // bytes in XNNPACK order [M][kh][kw][C/g]
  std::vector<int32_t> bias_;

  Operator op_;
  std::array<int64_t, 4> op_pads_{-1, -1, -1, -1};
  int64_t last_n_ = -1, last_h_ = -1, last_w_ = -1;
  const void* last_in_ = nullptr;
  const void* last_out_ = nullptr;
};

Result<std::unique_ptr<Kernel>> QLinearConvKernel::create(const KernelInit& init) {
  const Tensor* w = init.constant_input(3);
  const Tensor* ws = init.constant_input(4);
  const Tensor* wzp = init.constant_input(5);
  if (!w || !ws || !wzp || w->rank() != 4) return unsupported("XNNPACK QLinearConv: needs constant 4-D weights");
  auto k = std::unique_ptr<QLinearConvKernel>(new QLinearConvKernel());
  XONNX_RETURN_IF_ERROR(init_xnn_kernel(*k, init));
  k->nhwc_ = is_nhwc_node(init);
  XONNX_ASSIGN_OR_RETURN(k->x_scale_, constant_scale(init, 1, "XNNPACK QLinear: x_scale"));
  XONNX_ASSIGN_OR_RETURN(k->y_scale_, constant_scale(init, 6, "XNNPACK QLinear: y_scale"));
  XONNX_ASSIGN_OR_RETURN(int32_t xzp, constant_zero_point(init, 2, "XNNPACK QLinear: x_zero_point", &k->x_type_));
  XONNX_ASSIGN_OR_RETURN(int32_t yzp, constant_zero_point(init, 7, "XNNPACK QLinear: y_zero_point", &k->y_type_));
  const auto& wsh = w->shape();
  if (init.has_input(8)) {
    const Tensor* b = init.constant_input(8);
    if (!b || b->dtype() != DataType::kInt32 || b->rank() != 1 || b->dim(0) != wsh[0])
      return unsupported("XNNPACK QLinearConv: bias must be a constant int32 [M]");
    k->bias_.assign(b->data<int32_t>(), b->data<int32_t>() + b->numel());
  }
  XONNX_ASSIGN_OR_RETURN(k->geo_, ConvGeometry::parse(init, wsh, k->group_, "XNNPACK QLinearConv"));
  k->out_ch_ = wsh[0];
  k->in_ch_ = wsh[1];
  XONNX_ASSIGN_OR_RETURN(k->w_, convert_weights(*w, *ws, *wzp, k->out_ch_));
  init.packed_constant_input(3);  // w_ and bias_ are copies
  if (init.has_input(8)) init.packed_constant_input(8);
  for (float s : k->w_.scales)
    if (!requant_ok(k->x_scale_, s, k->y_scale_))
      return unsupported("XNNPACK QLinearConv: requantization scale outside XNNPACK's range");
  const bool sgn = k->w_.is_signed;
  k->x_zp_ = zp_for(k->x_type_, xzp, sgn);
  k->y_zp_ = zp_for(k->y_type_, yzp, sgn);
  // ONNX W [M][C/g][kh][kw] -> XNNPACK [M][kh][kw][C/g].
  const int64_t khw = k->geo_.kh * k->geo_.kw, cg = k->in_ch_;
  if (cg > 1) {
    std::vector<uint8_t> packed(k->w_.bytes.size());
    weights_to_ohwi(k->w_.bytes.data(), packed.data(), k->out_ch_, cg, khw);
    k->w_.bytes.swap(packed);
  }
  // Pads that do not depend on the input size: create now, so XNNPACK's refusal declines.
  std::array<int64_t, 4> p;
  if (k->geo_.fixed_pads(p)) {
    XONNX_RETURN_IF_ERROR(k->ensure_operator(p));
  }
  return std::unique_ptr<Kernel>(std::move(k));
}

Status QLinearConvKernel::ensure_operator(const std::array<int64_t, 4>& pads) {
  if (op_ && pads == op_pads_) return Status::ok();
  const uint32_t pt = static_cast<uint32_t>(pads[0]), pl = static_cast<uint32_t>(pads[1]);
  const uint32_t pb = static_cast<uint32_t>(pads[2]), pr = static_cast<uint32_t>(pads[3]);
  const uint32_t kh = static_cast<uint32_t>(geo_.kh), kw = static_cast<uint32_t>(geo_.kw);
  const uint32_t sh = static_cast<uint32_t>(geo_.sh), sw = static_cast<uint32_t>(geo_.sw);
  const uint32_t dh = static_cast<uint32_t>(geo_.dh), dw = static_cast<uint32_t>(geo_.dw);
  const uint32_t g = static_cast<uint32_t>(group_);
  const size_t gin = static_cast<size_t>(in_ch_), gout = static_cast<size_t>(out_ch_ / group_);
  const size_t cin = gin * g, cout = gout * g;
  const int32_t* bias = bias_.empty() ? nullptr : bias_.data();
  xnn_status s;
  const char* what;
  if (!w_.is_signed) {
    what = "xnn_create_convolution2d_nhwc_qu8";
    s = xnn_create_convolution2d_nhwc_qu8(pt, pr, pb, pl, kh, kw, sh, sw, dh, dw, g, gin, gout, cin, cout,
                                          static_cast<uint8_t>(x_zp_), x_scale_, static_cast<uint8_t>(w_.zero_point),
                                          w_.scales[0], w_.bytes.data(), bias, static_cast<uint8_t>(y_zp_), y_scale_, 0,
                                          255, 0, op_.replace());
  } else if (!w_.per_channel) {
    what = "xnn_create_convolution2d_nhwc_qs8";
    s = xnn_create_convolution2d_nhwc_qs8(pt, pr, pb, pl, kh, kw, sh, sw, dh, dw, g, gin, gout, cin, cout,
                                          static_cast<int8_t>(x_zp_), x_scale_, w_.scales[0],
                                          reinterpret_cast<const int8_t*>(w_.bytes.data()), bias,
                                          static_cast<int8_t>(y_zp_), y_scale_, -128, 127, 0, op_.replace());
  } else {
    what = "xnn_create_convolution2d_nhwc_qc8";
    s = xnn_create_convolution2d_nhwc_qc8(pt, pr, pb, pl, kh, kw, sh, sw, dh, dw, g, gin, gout, cin, cout,
                                          static_cast<int8_t>(x_zp_), x_scale_, w_.scales.data(),
                                          reinterpret_cast<const int8_t*>(w_.bytes.data()), bias,
                                          static_cast<int8_t>(y_zp_), y_scale_, -128, 127, 0, op_.replace());
  }
  XONNX_RETURN_IF_ERROR(check(s, what));
  op_pads_ = pads;
  last_n_ = last_h_ = last_w_ = -1;
  return Status::ok();
}

xnn_status QLinearConvKernel::setup(size_t n, size_t h, size_t w, const uint8_t* in, uint8_t* out, pthreadpool_t tp) {
  if (!w_.is_signed) return xnn_setup_convolution2d_nhwc_qu8(op_.get(), n, h, w, in, out, tp);
  const int8_t* si = reinterpret_cast<const int8_t*>(in);
  int8_t* so = reinterpret_cast<int8_t*>(out);
  if (!w_.per_channel) return xnn_setup_convolution2d_nhwc_qs8(op_.get(), n, h, w, si, so, tp);
  return xnn_setup_convolution2d_nhwc_qc8(op_.get(), n, h, w, si, so, tp);
}

// NHWC in and out: no transposes; a copy only to flip signedness or give XNNPACK its slack.
Status QLinearConvKernel::run_nhwc(KernelContext& ctx, bool& handled) {
  const Tensor& x = ctx.input(0);
  if (!x.defined() || x.dtype() != x_type_ || x.rank() != 4 || x.dim(3) != in_ch_ * group_) return Status::ok();
  const int64_t n = x.dim(0), h = x.dim(1), w = x.dim(2);
  if (n <= 0 || h <= 0 || w <= 0) return Status::ok();
  std::array<int64_t, 4> pads;
  if (!geo_.pads_for(h, w, pads)) return Status::ok();
  if (Status st = ensure_operator(pads); !st.is_ok()) return unless_declined(st);
  const int64_t oh = geo_.out_h(h, pads), ow = geo_.out_w(w, pads);
  const size_t in_bytes = static_cast<size_t>(x.numel());
  const uint8_t* in = static_cast<const uint8_t*>(x.raw_data());
  const uint8_t in_flip = flip_for(x_type_, w_.is_signed);
  if (in_flip || !over_read_safe(in, in_bytes)) {
    uint8_t* copy = byte_scratch(0, in_bytes);
    for (size_t i = 0; i < in_bytes; ++i) copy[i] = in[i] ^ in_flip;
    in = copy;
  }
  XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, y_type_, {n, oh, ow, out_ch_}));
  uint8_t* out = static_cast<uint8_t*>(y->raw_data());
  const size_t out_bytes = static_cast<size_t>(y->numel());
  pthreadpool_t tp = pool_for(*pool_, double(out_bytes) * double(in_ch_ * geo_.kh * geo_.kw));
  XONNX_RETURN_IF_ERROR(
      check(setup(static_cast<size_t>(n), static_cast<size_t>(h), static_cast<size_t>(w), in, out, tp),
            "xnn_setup_convolution2d_nhwc_q*8"));
  last_n_ = -1;  // the NCHW path's binding is gone
  XONNX_RETURN_IF_ERROR(op_.run(tp));
  if (const uint8_t out_flip = flip_for(y_type_, w_.is_signed)) {
    for (size_t i = 0; i < out_bytes; ++i) out[i] ^= out_flip;
  }
  handled = true;
  return Status::ok();
}

Status QLinearConvKernel::run_fast(KernelContext& ctx, bool& handled) {
  if (nhwc_) return run_nhwc(ctx, handled);
  const Tensor& x = ctx.input(0);
  if (!x.defined() || x.dtype() != x_type_ || x.rank() != 4 || x.dim(1) != in_ch_ * group_) return Status::ok();
  const int64_t n = x.dim(0), h = x.dim(2), w = x.dim(3);
  if (n <= 0 || h <= 0 || w <= 0) return Status::ok();
  std::array<int64_t, 4> pads;
  if (!geo_.pads_for(h, w, pads)) return Status::ok();
  if (Status st = ensure_operator(pads); !st.is_ok()) return unless_declined(st);
  const int64_t oh = geo_.out_h(h, pads), ow = geo_.out_w(w, pads);
  const size_t cin = static_cast<size_t>(x.dim(1)), cout = static_cast<size_t>(out_ch_);
  const size_t in_hw = static_cast<size_t>(h * w), out_hw = static_cast<size_t>(oh * ow);
  const size_t nb = static_cast<size_t>(n);
  uint8_t* in = byte_scratch(0, nb * in_hw * cin);
  uint8_t* out = byte_scratch(1, nb * out_hw * cout);
  pthreadpool_t tp = pool_for(*pool_, double(nb) * double(out_hw) * double(cout) * double(in_ch_ * geo_.kh * geo_.kw));
  if (n != last_n_ || h != last_h_ || w != last_w_ || in != last_in_ || out != last_out_) {
    XONNX_RETURN_IF_ERROR(check(setup(nb, static_cast<size_t>(h), static_cast<size_t>(w), in, out, tp),
                                "xnn_setup_convolution2d_nhwc_q*8"));
    last_n_ = n;
    last_h_ = h;
    last_w_ = w;
    last_in_ = in;
    last_out_ = out;
  }
  transpose_bytes(static_cast<const uint8_t*>(x.raw_data()), in, nb, cin, in_hw, flip_for(x_type_, w_.is_signed), true);
  XONNX_RETURN_IF_ERROR(op_.run(tp));
  XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, y_type_, {n, out_ch_, oh, ow}));
  transpose_bytes(out, static_cast<uint8_t*>(y->raw_data()), nb, cout, out_hw, flip_for(y_type_, w_.is_signed), false);
  handled = true;
  return Status::ok();
}

// ---- QLinearMatMul with a constant 2-D B ----------------------------------------------------
class QLinearMatMulKernel final : public FastKernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    const Tensor* b = init.constant_input(3);
    const Tensor* bs = init.constant_input(4);
    const Tensor* bzp = init.constant_input(5);
    if (!b || !bs || !bzp || b->rank() != 2) return unsupported("XNNPACK QLinearMatMul: needs a constant 2-D b");
    auto k = std::unique_ptr<QLinearMatMulKernel>(new QLinearMatMulKernel());
    XONNX_RETURN_IF_ERROR(init_xnn_kernel(*k, init));
    k->k_ = b->dim(0);
    k->n_ = b->dim(1);
    if (k->k_ <= 0 || k->n_ <= 0) return unsupported("XNNPACK QLinearMatMul: empty b");
    XONNX_ASSIGN_OR_RETURN(float a_scale, constant_scale(init, 1, "XNNPACK QLinear: a_scale"));
    XONNX_ASSIGN_OR_RETURN(float y_scale, constant_scale(init, 6, "XNNPACK QLinear: y_scale"));
    XONNX_ASSIGN_OR_RETURN(int32_t azp, constant_zero_point(init, 2, "XNNPACK QLinear: a_zero_point", &k->a_type_));
    XONNX_ASSIGN_OR_RETURN(int32_t yzp, constant_zero_point(init, 7, "XNNPACK QLinear: y_zero_point", &k->y_type_));
    XONNX_ASSIGN_OR_RETURN(PackedWeights w, convert_weights(*b, *bs, *bzp, k->n_));
    init.packed_constant_input(3);  // XNNPACK packs w
    if (w.per_channel) return unsupported("XNNPACK QLinearMatMul: per-column b scales (no qc8 fully connected)");
    if (!requant_ok(a_scale, w.scales[0], y_scale))
      return unsupported("XNNPACK QLinearMatMul: requantization scale outside XNNPACK's range");
    k->signed_ = w.is_signed;
    const size_t kk = static_cast<size_t>(k->k_), nn = static_cast<size_t>(k->n_);
    const int32_t azk = zp_for(k->a_type_, azp, w.is_signed), yzk = zp_for(k->y_type_, yzp, w.is_signed);
    xnn_status s;
    if (w.is_signed) {
      s = xnn_create_fully_connected_nc_qs8(kk, nn, kk, nn, static_cast<int8_t>(azk), a_scale, w.scales[0],
                                            reinterpret_cast<const int8_t*>(w.bytes.data()), nullptr,
                                            static_cast<int8_t>(yzk), y_scale, -128, 127, XNN_FLAG_TRANSPOSE_WEIGHTS,
                                            k->op_.replace());
    } else {
      s = xnn_create_fully_connected_nc_qu8(kk, nn, kk, nn, static_cast<uint8_t>(azk), a_scale,
                                            static_cast<uint8_t>(w.zero_point), w.scales[0], w.bytes.data(), nullptr,
                                            static_cast<uint8_t>(yzk), y_scale, 0, 255, XNN_FLAG_TRANSPOSE_WEIGHTS,
                                            k->op_.replace());
    }
    XONNX_RETURN_IF_ERROR(check(s, "xnn_create_fully_connected_nc_q*8"));
    return std::unique_ptr<Kernel>(std::move(k));
  }

 private:
  Status run_fast(KernelContext& ctx, bool& handled) override {
    const Tensor& a = ctx.input(0);
    if (!a.defined() || a.dtype() != a_type_ || a.rank() == 0 || a.shape().back() != k_) return Status::ok();
    const int64_t batch = a.numel() / k_;
    if (batch <= 0) return Status::ok();
    Shape out_shape(a.shape().begin(), a.shape().end() - 1);
    out_shape.push_back(n_);
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, y_type_, out_shape));
    // A copy with XNNPACK's over-read slack, flipped to the kernel's signedness on the way.
    const size_t in_bytes = static_cast<size_t>(a.numel());
    uint8_t* in = byte_scratch(0, in_bytes);
    const uint8_t* src = static_cast<const uint8_t*>(a.raw_data());
    const uint8_t in_flip = flip_for(a_type_, signed_);
    if (in_flip) {
      for (size_t i = 0; i < in_bytes; ++i) in[i] = src[i] ^ in_flip;
    } else {
      std::memcpy(in, src, in_bytes);
    }
    uint8_t* out = static_cast<uint8_t*>(y->raw_data());
    pthreadpool_t tp = pool_for(*pool_, double(batch) * double(k_) * double(n_));
    const size_t nb = static_cast<size_t>(batch);
    const xnn_status s = signed_ ? xnn_setup_fully_connected_nc_qs8(op_.get(), nb, reinterpret_cast<const int8_t*>(in),
                                                                    reinterpret_cast<int8_t*>(out), tp)
                                 : xnn_setup_fully_connected_nc_qu8(op_.get(), nb, in, out, tp);
    XONNX_RETURN_IF_ERROR(check(s, "xnn_setup_fully_connected_nc_q*8"));
    XONNX_RETURN_IF_ERROR(op_.run(tp));
    const uint8_t out_flip = flip_for(y_type_, signed_);
    if (out_flip) {
      const size_t out_bytes = static_cast<size_t>(y->numel());
      for (size_t i = 0; i < out_bytes; ++i) out[i] ^= out_flip;
    }
    handled = true;
    return Status::ok();
  }

  int64_t k_ = 0, n_ = 0;
  bool signed_ = true;
  DataType a_type_ = DataType::kUint8, y_type_ = DataType::kUint8;
  Operator op_;
};

}  // namespace

void register_xnnpack_qlinear(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "QLinearConv", 10, kLatestVersion, QLinearConvKernel::create, Backend::kXnnpack);
  XONNX_REGISTER(registry, kNhwcDomain, "QLinearConv", 1, kLatestVersion, QLinearConvKernel::create, Backend::kXnnpack);
  XONNX_REGISTER(registry, "", "QLinearMatMul", 10, kLatestVersion, QLinearMatMulKernel::create, Backend::kXnnpack);
}

}  // namespace xnn
}  // namespace xonnx
