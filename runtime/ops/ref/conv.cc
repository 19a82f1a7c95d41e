// Reference kernels: convolution family (Conv, ConvTranspose; DeformConv in conv_deform.cc).
//
// Conv runs as im2col + a blocked GEMM whose innermost loop is contiguous (the hot path of
// CNN models in reference mode); depthwise convolutions (one input channel per group) use a
// direct loop. ConvTranspose is GEMM (W^T * X) + col2im. fp16/bf16 compute in float.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/ops/ref/common.h"
#include "runtime/ops/ref/conv_internal.h"
#include "runtime/ops/ref/gemm.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace {

using ref::gemm_acc;

// Spatial geometry of one convolution: `col` positions map to `data` positions as
// data = col * stride + k * dilation - pad_begin (per spatial dim).
struct Geometry {
  size_t nd = 0;
  Shape in, out, kernel;  // in: data spatial, out: output spatial (conv) / col spatial
  std::vector<int64_t> strides, dilations, pad_begin, pad_end;
};

struct ConvAttrs {
  std::string auto_pad = "NOTSET";
  std::vector<int64_t> kernel_shape, strides, dilations, pads;
  int64_t group = 1;
};

Result<ConvAttrs> parse_conv_attrs(const KernelInit& init) {
  ConvAttrs a;
  XONNX_ASSIGN_OR_RETURN(a.auto_pad, ref::get_auto_pad(init));
  XONNX_ASSIGN_OR_RETURN(a.kernel_shape, init.get_ints("kernel_shape"));
  XONNX_ASSIGN_OR_RETURN(a.strides, init.get_ints("strides"));
  XONNX_ASSIGN_OR_RETURN(a.dilations, init.get_ints("dilations"));
  XONNX_ASSIGN_OR_RETURN(a.pads, init.get_ints("pads"));
  XONNX_ASSIGN_OR_RETURN(a.group, init.get_int("group", 1));
  if (a.group < 1) return invalid_argument("group must be >= 1, got ", a.group);
  for (int64_t s : a.strides)
    if (s < 1) return invalid_argument("strides must be >= 1, got ", s);
  for (int64_t d : a.dilations)
    if (d < 1) return invalid_argument("dilations must be >= 1, got ", d);
  for (int64_t k : a.kernel_shape)
    if (k < 1) return invalid_argument("kernel_shape must be >= 1, got ", k);
  return a;
}

// Fills kernel/strides/dilations (defaults) and checks their lengths against nd.
Status fill_common(const ConvAttrs& a, const Tensor& w, size_t nd, Geometry& g) {
  g.nd = nd;
  g.kernel.assign(w.shape().begin() + 2, w.shape().end());
  for (int64_t k : g.kernel)
    if (k < 1) return invalid_argument("weight W ", shape_to_string(w.shape()), " has an empty kernel dim");
  if (!a.kernel_shape.empty()) {
    if (a.kernel_shape != g.kernel) {
      return invalid_argument("kernel_shape ", shape_to_string(a.kernel_shape),
                              " does not match the weight's spatial shape ", shape_to_string(g.kernel));
    }
  }
  g.strides = a.strides.empty() ? std::vector<int64_t>(nd, 1) : a.strides;
  g.dilations = a.dilations.empty() ? std::vector<int64_t>(nd, 1) : a.dilations;
  if (g.strides.size() != nd) return invalid_argument("strides needs ", nd, " values, got ", g.strides.size());
  if (g.dilations.size() != nd) return invalid_argument("dilations needs ", nd, " values, got ", g.dilations.size());
  if (!a.pads.empty() && a.pads.size() != 2 * nd)
    return invalid_argument("pads needs ", 2 * nd, " values, got ", a.pads.size());
  for (int64_t p : a.pads)
    if (p < 0) return invalid_argument("pads must be >= 0, got ", p);
  return Status::ok();
}

// Conv geometry from the input shape (auto_pad rules of the ONNX spec).
Status conv_geometry(const ConvAttrs& a, const Tensor& x, const Tensor& w, Geometry& g) {
  const size_t nd = x.rank() - 2;
  XONNX_RETURN_IF_ERROR(fill_common(a, w, nd, g));
  g.in.assign(x.shape().begin() + 2, x.shape().end());
  g.out.resize(nd);
  g.pad_begin.assign(nd, 0);
  g.pad_end.assign(nd, 0);
  for (size_t i = 0; i < nd; ++i) {
    const int64_t ek = (g.kernel[i] - 1) * g.dilations[i] + 1;
    const int64_t s = g.strides[i];
    if (a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER") {
      const ref::SamePadding p = ref::same_padding(g.in[i], s, ek, a.auto_pad == "SAME_UPPER");
      g.out[i] = p.out;
      g.pad_begin[i] = p.pad_begin;
      g.pad_end[i] = p.pad_end;
    } else {
      if (a.auto_pad == "NOTSET" && !a.pads.empty()) {
        g.pad_begin[i] = a.pads[i];
        g.pad_end[i] = a.pads[i + nd];
      }
      const int64_t span = g.in[i] + g.pad_begin[i] + g.pad_end[i] - ek;
      if (span < 0) {
        return invalid_argument("spatial dim ", i, ": input ", g.in[i], " plus pads is smaller than the ",
                                "dilated kernel ", ek);
      }
      g.out[i] = span / s + 1;
    }
  }
  return Status::ok();
}

// Walks every (row = channel x kernel offset, col position) pair of an im2col matrix.
// kScatter=false: col[row, p] = data[c, map(p)] or 0 outside (im2col).
// kScatter=true:  data[c, map(p)] += col[row, p] where map(p) is inside (col2im).
template <bool kScatter, typename CT>
void im2col_walk(const Geometry& g, int64_t channels, CT* data, CT* col) {
  const size_t nd = g.nd;
  const size_t last = nd - 1;
  const int64_t data_size = shape_numel(g.in);
  const int64_t col_size = shape_numel(g.out);
  const int64_t K = shape_numel(g.kernel);
  const int64_t out_last = g.out[last];
  const int64_t in_last = g.in[last];
  const int64_t s_last = g.strides[last];
  const int64_t outer = out_last == 0 ? 0 : col_size / out_last;
  std::vector<int64_t> in_strides(nd, 1);
  for (size_t i = nd - 1; i-- > 0;) in_strides[i] = in_strides[i + 1] * g.in[i + 1];
  std::vector<int64_t> kk(nd, 0), oi(nd, 0);
  for (int64_t c = 0; c < channels; ++c) {
    CT* dc = data + c * data_size;
    std::fill(kk.begin(), kk.end(), 0);
    for (int64_t kidx = 0; kidx < K; ++kidx) {
      CT* row = col + (c * K + kidx) * col_size;
      const int64_t off = kk[last] * g.dilations[last] - g.pad_begin[last];
      int64_t lo = off >= 0 ? 0 : (-off + s_last - 1) / s_last;
      int64_t hi = (in_last - 1 - off) < 0 ? 0 : (in_last - 1 - off) / s_last + 1;
      hi = std::min(hi, out_last);
      lo = std::min(lo, hi);
      std::fill(oi.begin(), oi.end(), 0);
      for (int64_t q = 0; q < outer; ++q) {
        CT* crow = row + q * out_last;
        bool valid = true;
        int64_t base = 0;
        for (size_t j = 0; j < last; ++j) {
          const int64_t p = oi[j] * g.strides[j] + kk[j] * g.dilations[j] - g.pad_begin[j];
          if (p < 0 || p >= g.in[j]) {
            valid = false;
            break;
          }
          base += p * in_strides[j];
        }
        if (!kScatter) {
          if (!valid) {
            std::fill(crow, crow + out_last, CT(0));
          } else {
            std::fill(crow, crow + lo, CT(0));
            std::fill(crow + hi, crow + out_last, CT(0));
            const CT* src = dc + base + off;
            if (s_last == 1) {
              for (int64_t p = lo; p < hi; ++p) crow[p] = src[p];
            } else {
              for (int64_t p = lo; p < hi; ++p) crow[p] = src[p * s_last];
            }
          }
        } else if (valid) {
          CT* dst = dc + base + off;
          if (s_last == 1) {
            for (int64_t p = lo; p < hi; ++p) dst[p] += crow[p];
          } else {
            for (int64_t p = lo; p < hi; ++p) dst[p * s_last] += crow[p];
          }
        }
        for (size_t j = last; j-- > 0;) {  // odometer over the outer col dims
          if (++oi[j] < g.out[j]) break;
          oi[j] = 0;
        }
      }
      for (size_t j = nd; j-- > 0;) {  // next kernel offset
        if (++kk[j] < g.kernel[j]) break;
        kk[j] = 0;
      }
    }
  }
}

// Depthwise (one input channel per group), 1-D/2-D: out plane += w * shifted input plane.
template <typename CT>
void depthwise_plane(const Geometry& g, const CT* x, const CT* w, CT* y) {
  const bool two = g.nd == 2;
  const int64_t H = two ? g.in[0] : 1, W = g.in[g.nd - 1];
  const int64_t OH = two ? g.out[0] : 1, OW = g.out[g.nd - 1];
  const int64_t KH = two ? g.kernel[0] : 1, KW = g.kernel[g.nd - 1];
  const int64_t SH = two ? g.strides[0] : 1, SW = g.strides[g.nd - 1];
  const int64_t DH = two ? g.dilations[0] : 1, DW = g.dilations[g.nd - 1];
  const int64_t PH = two ? g.pad_begin[0] : 0, PW = g.pad_begin[g.nd - 1];
  for (int64_t kh = 0; kh < KH; ++kh) {
    for (int64_t kw = 0; kw < KW; ++kw) {
      const CT wv = w[kh * KW + kw];
      const int64_t off = kw * DW - PW;
      int64_t lo = off >= 0 ? 0 : (-off + SW - 1) / SW;
      int64_t hi = (W - 1 - off) < 0 ? 0 : (W - 1 - off) / SW + 1;
      hi = std::min(hi, OW);
      lo = std::min(lo, hi);
      for (int64_t oh = 0; oh < OH; ++oh) {
        const int64_t ih = oh * SH + kh * DH - PH;
        if (ih < 0 || ih >= H) continue;
        const CT* __restrict src = x + ih * W + off;
        CT* __restrict dst = y + oh * OW;
        if (SW == 1) {
          for (int64_t p = lo; p < hi; ++p) dst[p] += wv * src[p];
        } else {
          for (int64_t p = lo; p < hi; ++p) dst[p] += wv * src[p * SW];
        }
      }
    }
  }
}

// A float-typed tensor as a compute-type pointer (converting fp16/bf16 into `buf`).
template <typename T>
const compute_t<T>* as_compute(const Tensor& t, std::vector<compute_t<T>>& buf) {
  using CT = compute_t<T>;
  if constexpr (std::is_same_v<T, CT>) {
    return t.data<T>();
  } else {
    const int64_t n = t.numel();
    buf.resize(static_cast<size_t>(n));
    const T* p = t.data<T>();
    for (int64_t i = 0; i < n; ++i) buf[i] = to_compute(p[i]);
    return buf.data();
  }
}

Status check_bias(const KernelContext& ctx, size_t idx, int64_t M, DataType dt) {
  if (!ctx.has_input(idx)) return Status::ok();
  const Tensor& b = ctx.input(idx);
  if (b.dtype() != dt)
    return invalid_argument("bias B has type ", dtype_name(b.dtype()), ", expected ", dtype_name(dt));
  if (b.rank() != 1 || b.dim(0) != M)
    return invalid_argument("bias B must have shape [", M, "], got ", shape_to_string(b.shape()));
  return Status::ok();
}

Status check_xw(const Tensor& x, const Tensor& w) {
  if (x.rank() < 3)
    return invalid_argument("input X must have rank >= 3 (N, C, spatial...), got ", shape_to_string(x.shape()));
  if (w.rank() != x.rank())
    return invalid_argument("weight W ", shape_to_string(w.shape()), " must have the rank of X ",
                            shape_to_string(x.shape()));
  if (w.dtype() != x.dtype())
    return invalid_argument("W has type ", dtype_name(w.dtype()), ", X has ", dtype_name(x.dtype()));
  return Status::ok();
}

// Conv / ConvTranspose operands in the compute type CT (float for fp16/bf16): X, W, and Y's
// accumulation buffer (Y's own storage when T is CT), which starts as the bias B (input 2,
// optional) of each output channel; the convolution accumulates on top.
template <typename T>
struct ConvBuffers {
  using CT = compute_t<T>;
  Tensor* y = nullptr;
  const CT* xp = nullptr;
  const CT* wp = nullptr;
  CT* yp = nullptr;
  std::vector<CT> xb, wb, bb, yb;

  // Allocates Y = [N, M, y_spatial...] (N from X) and fills the buffers.
  Status init(KernelContext& ctx, int64_t M, const Shape& y_spatial) {
    const Tensor& x = ctx.input(0);
    const int64_t N = x.dim(0);
    Shape yshape = {N, M};
    yshape.insert(yshape.end(), y_spatial.begin(), y_spatial.end());
    XONNX_ASSIGN_OR_RETURN(y, ctx.allocate_output(0, x.dtype(), yshape));
    xp = as_compute<T>(x, xb);
    wp = as_compute<T>(ctx.input(1), wb);
    const CT* bp = ctx.has_input(2) ? as_compute<T>(ctx.input(2), bb) : nullptr;
    if constexpr (std::is_same_v<T, CT>) {
      yp = y->data<T>();
    } else {
      yb.assign(static_cast<size_t>(y->numel()), CT(0));
      yp = yb.data();
    }
    const int64_t size = shape_numel(y_spatial);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t m = 0; m < M; ++m) std::fill_n(yp + (n * M + m) * size, size, bp ? bp[m] : CT(0));
    return Status::ok();
  }

  // Stores the accumulation buffer into Y when it is not Y itself.
  void finish() {
    if constexpr (!std::is_same_v<T, CT>) {
      T* out = y->data<T>();
      for (size_t i = 0; i < yb.size(); ++i) out[i] = from_compute<T>(yb[i]);
    }
  }
};

template <typename T>
Status run_conv(KernelContext& ctx, const Geometry& g, int64_t group) {
  using CT = compute_t<T>;
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  const int64_t N = x.dim(0), C = x.dim(1), M = w.dim(0);
  const int64_t Cg = C / group, Mg = M / group;
  const int64_t K = shape_numel(g.kernel);
  const int64_t in_size = shape_numel(g.in), out_size = shape_numel(g.out);
  ConvBuffers<T> buf;
  XONNX_RETURN_IF_ERROR(buf.init(ctx, M, g.out));
  const CT* xp = buf.xp;
  const CT* wp = buf.wp;
  CT* yp = buf.yp;
  if (out_size > 0 && N > 0) {
    const bool depthwise = Cg == 1 && g.nd <= 2;
    const bool pointwise =
        K == 1 && std::all_of(g.strides.begin(), g.strides.end(), [](int64_t s) { return s == 1; }) &&
        std::all_of(g.pad_begin.begin(), g.pad_begin.end(), [](int64_t p) { return p == 0; }) && g.in == g.out;
    std::vector<CT> col;
    if (!depthwise && !pointwise) {
      XONNX_RETURN_IF_ERROR(ref::check_scratch(ctx, "the column matrix", sizeof(CT), {Cg, K, out_size}));
      col.resize(static_cast<size_t>(Cg * K * out_size));
    }
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t gi = 0; gi < group; ++gi) {
        const CT* xg = xp + (n * C + gi * Cg) * in_size;
        CT* yg = yp + (n * M + gi * Mg) * out_size;
        const CT* wg = wp + gi * Mg * Cg * K;
        if (depthwise) {
          for (int64_t m = 0; m < Mg; ++m) depthwise_plane<CT>(g, xg, wg + m * K, yg + m * out_size);
          continue;
        }
        const CT* colp = xg;
        if (!pointwise) {
          im2col_walk<false, CT>(g, Cg, const_cast<CT*>(xg), col.data());
          colp = col.data();
        }
        gemm_acc<CT>(Mg, out_size, Cg * K, wg, Cg * K, colp, out_size, yg, out_size);
      }
    }
  }
  buf.finish();
  return Status::ok();
}

Result<std::unique_ptr<Kernel>> create_conv(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(ConvAttrs a, parse_conv_attrs(init));
  return make_kernel([a](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    XONNX_RETURN_IF_ERROR(check_xw(x, w));
    const int64_t C = x.dim(1), M = w.dim(0);
    if (C != w.dim(1) * a.group)
      return invalid_argument("X has ", C, " channels but W ", shape_to_string(w.shape()), " with group ", a.group,
                              " expects ", w.dim(1) * a.group);
    if (M % a.group != 0) return invalid_argument("W has ", M, " output channels, not divisible by group ", a.group);
    XONNX_RETURN_IF_ERROR(check_bias(ctx, 2, M, x.dtype()));
    Geometry g;
    XONNX_RETURN_IF_ERROR(conv_geometry(a, x, w, g));
    XONNX_DISPATCH_FLOAT(x.dtype(), return unsupported("Conv on type ", dtype_name(x.dtype())),
                         { return run_conv<T>(ctx, g, a.group); });
    return Status::ok();
  });
}

// ---- ConvTranspose -----------------------------------------------------------------------

struct ConvTransposeAttrs {
  ConvAttrs conv;
  std::vector<int64_t> output_padding, output_shape;
};

template <typename T>
Status run_conv_transpose(KernelContext& ctx, const Geometry& g, int64_t group) {
  // Here g.out is the col (= X) spatial shape and g.in the output (Y) spatial shape.
  using CT = compute_t<T>;
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  const int64_t N = x.dim(0), C = x.dim(1), Mg = w.dim(1), M = Mg * group;
  const int64_t Cg = C / group;
  const int64_t K = shape_numel(g.kernel);
  const int64_t x_size = shape_numel(g.out), y_size = shape_numel(g.in);
  ConvBuffers<T> buf;
  XONNX_RETURN_IF_ERROR(buf.init(ctx, M, g.in));
  const CT* xp = buf.xp;
  const CT* wp = buf.wp;
  CT* yp = buf.yp;
  if (y_size > 0 && x_size > 0 && N > 0) {
    const int64_t R = Mg * K;  // rows of the col matrix
    XONNX_RETURN_IF_ERROR(ref::check_scratch(ctx, "the column matrix", sizeof(CT), {R, x_size}));
    std::vector<CT> col(static_cast<size_t>(R * x_size));
    std::vector<CT> wt(static_cast<size_t>(R * Cg));  // W_g transposed: [R x Cg]
    for (int64_t gi = 0; gi < group; ++gi) {
      const CT* wg = wp + gi * Cg * R;
      for (int64_t c = 0; c < Cg; ++c)
        for (int64_t r = 0; r < R; ++r) wt[r * Cg + c] = wg[c * R + r];
      for (int64_t n = 0; n < N; ++n) {
        const CT* xg = xp + (n * C + gi * Cg) * x_size;
        std::fill(col.begin(), col.end(), CT(0));
        gemm_acc<CT>(R, x_size, Cg, wt.data(), Cg, xg, x_size, col.data(), x_size);
        im2col_walk<true, CT>(g, Mg, yp + (n * M + gi * Mg) * y_size, col.data());
      }
    }
  }
  buf.finish();
  return Status::ok();
}

// Floor division (total padding may be negative when output_shape exceeds the natural size).
int64_t floor_div2(int64_t v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); }

Status conv_transpose_geometry(const ConvTransposeAttrs& t, const Tensor& x, const Tensor& w, Geometry& g) {
  const ConvAttrs& a = t.conv;
  const size_t nd = x.rank() - 2;
  XONNX_RETURN_IF_ERROR(fill_common(a, w, nd, g));
  std::vector<int64_t> opad = t.output_padding.empty() ? std::vector<int64_t>(nd, 0) : t.output_padding;
  if (opad.size() != nd) return invalid_argument("output_padding needs ", nd, " values, got ", opad.size());
  std::vector<int64_t> oshape = t.output_shape;
  if (oshape.size() == nd + 2) oshape.erase(oshape.begin(), oshape.begin() + 2);
  if (!oshape.empty() && oshape.size() != nd)
    return invalid_argument("output_shape needs ", nd, " values, got ", t.output_shape.size());
  g.out.assign(x.shape().begin() + 2, x.shape().end());  // col = X spatial
  g.in.resize(nd);
  g.pad_begin.assign(nd, 0);
  g.pad_end.assign(nd, 0);
  const bool same = a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER";
  for (size_t i = 0; i < nd; ++i) {
    const int64_t ek = (g.kernel[i] - 1) * g.dilations[i] + 1;
    const int64_t natural = g.strides[i] * (g.out[i] - 1) + opad[i] + ek;
    if (!oshape.empty() || same) {
      const int64_t target = !oshape.empty() ? oshape[i] : g.out[i] * g.strides[i];
      const int64_t total = natural - target;
      if (a.auto_pad == "SAME_UPPER") {
        g.pad_begin[i] = floor_div2(total);
        g.pad_end[i] = total - g.pad_begin[i];
      } else {
        g.pad_end[i] = floor_div2(total);
        g.pad_begin[i] = total - g.pad_end[i];
      }
      g.in[i] = target;
    } else {
      if (a.auto_pad == "NOTSET" && !a.pads.empty()) {
        g.pad_begin[i] = a.pads[i];
        g.pad_end[i] = a.pads[i + nd];
      }
      g.in[i] = natural - g.pad_begin[i] - g.pad_end[i];
    }
    if (g.in[i] < 0) return invalid_argument("spatial dim ", i, ": output size ", g.in[i], " is negative");
  }
  return Status::ok();
}

Result<std::unique_ptr<Kernel>> create_conv_transpose(const KernelInit& init) {
  ConvTransposeAttrs t;
  XONNX_ASSIGN_OR_RETURN(t.conv, parse_conv_attrs(init));
  XONNX_ASSIGN_OR_RETURN(t.output_padding, init.get_ints("output_padding"));
  XONNX_ASSIGN_OR_RETURN(t.output_shape, init.get_ints("output_shape"));
  for (int64_t v : t.output_padding)
    if (v < 0) return invalid_argument("output_padding must be >= 0, got ", v);
  return make_kernel([t](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    XONNX_RETURN_IF_ERROR(check_xw(x, w));
    const int64_t group = t.conv.group;
    if (x.dim(1) != w.dim(0))
      return invalid_argument("X has ", x.dim(1), " channels but W ", shape_to_string(w.shape()), " expects ",
                              w.dim(0));
    if (x.dim(1) % group != 0) return invalid_argument("X channels ", x.dim(1), " not divisible by group ", group);
    XONNX_RETURN_IF_ERROR(check_bias(ctx, 2, w.dim(1) * group, x.dtype()));
    Geometry g;
    XONNX_RETURN_IF_ERROR(conv_transpose_geometry(t, x, w, g));
    XONNX_DISPATCH_FLOAT(x.dtype(), return unsupported("ConvTranspose on type ", dtype_name(x.dtype())),
                         { return run_conv_transpose<T>(ctx, g, group); });
    return Status::ok();
  });
}

}  // namespace

void register_conv_ops(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "Conv", 1, kLatestVersion, create_conv);
  XONNX_REGISTER(registry, "", "ConvTranspose", 1, kLatestVersion, create_conv_transpose);
  register_deform_conv_ops(registry);
}

}  // namespace xonnx
