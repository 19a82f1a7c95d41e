// XNNPACK ConvTranspose: 2-D float32 transposed convolution with constant weights (and bias),
// any group, strides, dilations, explicit pads and output_padding (< stride), via
// xnn_create_deconvolution2d_nhwc_f32 (weights packed once at session creation). The layout
// pass's com.xonnx.nhwc ConvTranspose runs on its NHWC tensors directly; an ONNX one (outside
// the regions) transposes its NCHW input to NHWC scratch and the output back. Declined:
// auto_pad SAME, output_shape, other ranks, runtime weights; the reference kernel
// (ops/ref/conv.cc, or its NHWC twin) covers those.
//
// NaN/inf rule as XNNPACK Conv: XNNPACK's clamp turns NaN into the lower bound, so an output
// that is not all finite reruns the reference.
#include <array>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "runtime/ops/common/conv_geometry.h"
#include "runtime/ops/common/finite.h"
#include "runtime/ops/common/layout_convert.h"
#include "runtime/ops/internal_ops.h"
#include "runtime/ops/registry.h"
#include "runtime/ops/xnnpack/xnnpack_util.h"

namespace xonnx {
namespace xnn {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

class DeconvKernel final : public FastKernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init);

 private:
  Status run_fast(KernelContext& ctx, bool& handled) override;

  Status run_nhwc(KernelContext& ctx, bool& handled);
  struct Dims {
    int64_t n, h, w, oh, ow;  // images, input and output rows and columns
  };
  // X's dims in the node's layout and the output's; false for what the reference handles or
  // reports (another type, rank or channel count, an empty map or output).
  bool dims_of(const Tensor& x, Dims& d) const;
  // Points the operator at (n, h, w) images from `in` into `out`, unless it already is.
  Status setup(int64_t n, int64_t h, int64_t w, const float* in, float* out, pthreadpool_t tp);

  bool nhwc_ = false;                           // com.xonnx.nhwc: [N, H, W, C] in and out
  int64_t group_ = 1, in_ch_ = 0, out_ch_ = 0;  // totals over the groups
  ConvGeometry geo_;
  std::array<int64_t, 4> pads_{};  // top, left, bottom, right
  int64_t adj_h_ = 0, adj_w_ = 0;  // output_padding
  Operator op_;
  int64_t last_n_ = -1, last_h_ = -1, last_w_ = -1;
  const float* last_in_ = nullptr;  // the setup's pointers: pool buffers keep theirs from run to run
  const float* last_out_ = nullptr;
};

// ONNX W [C][M/g][kh][kw] (C = g * C/g) -> XNNPACK [g][M/g][kh][kw][C/g].
std::vector<float> pack_weights(const float* w, int64_t group, int64_t cg, int64_t mg, int64_t khw) {
  std::vector<float> packed(static_cast<size_t>(group * cg * mg * khw));
  for (int64_t g = 0; g < group; ++g)
    for (int64_t ci = 0; ci < cg; ++ci)
      for (int64_t o = 0; o < mg; ++o)
        for (int64_t p = 0; p < khw; ++p)
          packed[static_cast<size_t>(((g * mg + o) * khw + p) * cg + ci)] = w[((g * cg + ci) * mg + o) * khw + p];
  return packed;
}

Result<std::unique_ptr<Kernel>> DeconvKernel::create(const KernelInit& init) {
  const Tensor* w = init.constant_input(1);
  if (!w || !is_f32(*w) || w->rank() != 4) return unsupported("XNNPACK ConvTranspose: needs a constant 4-D float W");
  const Tensor* b = nullptr;
  auto k = std::unique_ptr<DeconvKernel>(new DeconvKernel());
  k->nhwc_ = is_nhwc_node(init);
  XONNX_ASSIGN_OR_RETURN(k->geo_, ConvGeometry::parse(init, w->shape(), k->group_, "XNNPACK ConvTranspose"));
  if (init.has_input(2)) {
    b = init.constant_input(2);
    if (!b || !is_f32(*b) || b->rank() != 1 || b->dim(0) != w->dim(1) * k->group_)
      return unsupported("XNNPACK ConvTranspose: bias must be a constant float [M]");
  }
  if (k->geo_.auto_pad == "SAME_UPPER" || k->geo_.auto_pad == "SAME_LOWER")
    return unsupported("XNNPACK ConvTranspose: auto_pad ", k->geo_.auto_pad);
  XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> output_shape, init.get_ints("output_shape"));
  if (!output_shape.empty()) return unsupported("XNNPACK ConvTranspose: output_shape");
  XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> adj, init.get_ints("output_padding", {0, 0}));
  if (adj.size() != 2 || adj[0] < 0 || adj[1] < 0 || adj[0] >= k->geo_.sh || adj[1] >= k->geo_.sw)
    return unsupported("XNNPACK ConvTranspose: output_padding must be below the stride");
  k->adj_h_ = adj[0];
  k->adj_w_ = adj[1];
  k->geo_.fixed_pads(k->pads_);  // NOTSET or VALID: the explicit pads (zero for VALID)
  XONNX_RETURN_IF_ERROR(init_xnn_kernel(*k, init));
  k->in_ch_ = w->dim(0);
  k->out_ch_ = w->dim(1) * k->group_;
  const int64_t cg = k->in_ch_ / k->group_, mg = w->dim(1);
  const std::vector<float> packed = pack_weights(w->data<float>(), k->group_, cg, mg, k->geo_.kh * k->geo_.kw);
  const std::array<int64_t, 4>& p = k->pads_;
  const xnn_status s = xnn_create_deconvolution2d_nhwc_f32(
      static_cast<uint32_t>(p[0]), static_cast<uint32_t>(p[3]), static_cast<uint32_t>(p[2]),
      static_cast<uint32_t>(p[1]), static_cast<uint32_t>(k->geo_.kh), static_cast<uint32_t>(k->geo_.kw),
      static_cast<uint32_t>(k->geo_.sh), static_cast<uint32_t>(k->geo_.sw), static_cast<uint32_t>(k->geo_.dh),
      static_cast<uint32_t>(k->geo_.dw), static_cast<uint32_t>(k->group_), static_cast<size_t>(cg),
      static_cast<size_t>(mg), static_cast<size_t>(k->in_ch_), static_cast<size_t>(k->out_ch_), packed.data(),
      b ? b->data<float>() : nullptr, -kInf, kInf, 0, k->op_.replace());
  XONNX_RETURN_IF_ERROR(check(s, "xnn_create_deconvolution2d_nhwc_f32"));
  // The weights live on only in XNNPACK's packed copy.
  init.packed_constant_input(1);
  if (b) init.packed_constant_input(2);
  return std::unique_ptr<Kernel>(std::move(k));
}

Status DeconvKernel::setup(int64_t n, int64_t h, int64_t w, const float* in, float* out, pthreadpool_t tp) {
  if (n == last_n_ && h == last_h_ && w == last_w_ && in == last_in_ && out == last_out_) return Status::ok();
  XONNX_RETURN_IF_ERROR(check(xnn_setup_deconvolution2d_nhwc_f32(
                                  op_.get(), static_cast<size_t>(n), static_cast<size_t>(h), static_cast<size_t>(w),
                                  static_cast<uint32_t>(adj_h_), static_cast<uint32_t>(adj_w_), in, out, tp),
                              "xnn_setup_deconvolution2d_nhwc_f32"));
  last_n_ = n;
  last_h_ = h;
  last_w_ = w;
  last_in_ = in;
  last_out_ = out;
  return Status::ok();
}

bool DeconvKernel::dims_of(const Tensor& x, Dims& d) const {
  if (!is_f32(x) || x.rank() != 4 || x.dim(nhwc_ ? 3 : 1) != in_ch_) return false;
  d.n = x.dim(0);
  d.h = x.dim(nhwc_ ? 1 : 2);
  d.w = x.dim(nhwc_ ? 2 : 3);
  if (d.n <= 0 || d.h <= 0 || d.w <= 0) return false;
  d.oh = geo_.sh * (d.h - 1) + adj_h_ + (geo_.kh - 1) * geo_.dh + 1 - pads_[0] - pads_[2];
  d.ow = geo_.sw * (d.w - 1) + adj_w_ + (geo_.kw - 1) * geo_.dw + 1 - pads_[1] - pads_[3];
  return d.oh > 0 && d.ow > 0;
}

Status DeconvKernel::run_fast(KernelContext& ctx, bool& handled) {
  if (nhwc_) return run_nhwc(ctx, handled);
  const Tensor& x = ctx.input(0);
  Dims d;
  if (!dims_of(x, d)) return Status::ok();
  const int64_t n = d.n, h = d.h, w = d.w, oh = d.oh, ow = d.ow;
  const size_t nb = static_cast<size_t>(n), cin = static_cast<size_t>(in_ch_), cout = static_cast<size_t>(out_ch_);
  const size_t in_hw = static_cast<size_t>(h * w), out_hw = static_cast<size_t>(oh * ow);
  float* in = thread_scratch(0).resize(nb * in_hw * cin);
  float* out = thread_scratch(1).resize(nb * out_hw * cout);
  pthreadpool_t tp =
      pool_for(*pool_, double(nb) * double(in_hw) * double(cout) * double(in_ch_ / group_) * double(geo_.kh * geo_.kw));
  XONNX_RETURN_IF_ERROR(setup(n, h, w, in, out, tp));
  nchw_to_nhwc(x.data<float>(), in, nb, cin, in_hw, *pool_);
  XONNX_RETURN_IF_ERROR(op_.run(tp));
  if (!keep_if_finite(all_finite(out, nb * out_hw * cout, *pool_)))
    return Status::ok();  // NaN/inf: reference semantics
  XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DataType::kFloat, {n, out_ch_, oh, ow}));
  nhwc_to_nchw(out, y->data<float>(), nb, cout, out_hw, *pool_);
  handled = true;
  return Status::ok();
}

Status DeconvKernel::run_nhwc(KernelContext& ctx, bool& handled) {
  const Tensor& x = ctx.input(0);
  Dims d;
  if (!dims_of(x, d)) return Status::ok();
  const int64_t n = d.n, h = d.h, w = d.w;
  XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DataType::kFloat, {n, d.oh, d.ow, out_ch_}));
  float* out = y->data<float>();
  pthreadpool_t tp = pool_for(
      *pool_, double(n) * double(h * w) * double(out_ch_) * double(in_ch_ / group_) * double(geo_.kh * geo_.kw));
  XONNX_RETURN_IF_ERROR(setup(n, h, w, x.data<float>(), out, tp));
  XONNX_RETURN_IF_ERROR(op_.run(tp));
  handled = keep_if_finite(all_finite(out, static_cast<size_t>(y->numel()), *pool_));  // else the twin's
  return Status::ok();
}

}  // namespace

void register_xnnpack_deconv(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "ConvTranspose", 1, kLatestVersion, DeconvKernel::create, Backend::kXnnpack);
  XONNX_REGISTER(registry, kNhwcDomain, "ConvTranspose", 1, kLatestVersion, DeconvKernel::create, Backend::kXnnpack);
}

}  // namespace xnn
}  // namespace xonnx
