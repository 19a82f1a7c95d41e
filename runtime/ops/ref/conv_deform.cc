// Reference kernels: DeformConv (opset 19, 22). N-d: every kernel tap samples the input at
// its regular position plus a learned offset, with multilinear interpolation (zero outside),
// optionally scaled by a mask; the sampled columns then go through the shared GEMM (gemm.h).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "runtime/ops/ref/common.h"
#include "runtime/ops/ref/conv_internal.h"
#include "runtime/ops/ref/gemm.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace {

struct DeformAttrs {
  std::vector<int64_t> kernel_shape, strides, dilations, pads;
  int64_t group = 1, offset_group = 1;
};

// Multilinear interpolation of `plane` (spatial shape `in`) at fractional `pos`; 0 outside.
template <typename CT>
CT sample(const CT* plane, const Shape& in, const std::vector<int64_t>& in_strides, const CT* pos, size_t nd) {
  int64_t base[8];
  CT frac[8];
  for (size_t i = 0; i < nd; ++i) {
    const CT p = pos[i];
    if (!(p > CT(-1)) || !(p < CT(in[i]))) return CT(0);  // also rejects NaN
    const CT f = std::floor(p);
    base[i] = static_cast<int64_t>(f);
    frac[i] = p - f;
  }
  CT acc = 0;
  for (int64_t corner = 0; corner < (int64_t{1} << nd); ++corner) {
    CT wgt = 1;
    int64_t off = 0;
    bool inside = true;
    for (size_t i = 0; i < nd; ++i) {
      const bool up = (corner >> (nd - 1 - i)) & 1;
      const int64_t c = base[i] + (up ? 1 : 0);
      if (c < 0 || c >= in[i]) {
        inside = false;
        break;
      }
      wgt *= up ? frac[i] : CT(1) - frac[i];
      off += c * in_strides[i];
    }
    if (inside && wgt != CT(0)) acc += wgt * plane[off];
  }
  return acc;
}

template <typename T>
Status run_deform(KernelContext& ctx, const DeformAttrs& a) {
  using CT = compute_t<T>;
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  const Tensor& offset = ctx.input(2);
  const size_t nd = x.rank() - 2;
  const int64_t N = x.dim(0), C = x.dim(1), M = w.dim(0);
  const int64_t G = a.group, OG = a.offset_group;
  const int64_t Cg = C / G, Mg = M / G;
  Shape in(x.shape().begin() + 2, x.shape().end());
  Shape kernel(w.shape().begin() + 2, w.shape().end());
  const int64_t K = shape_numel(kernel);
  auto or_default = [nd](const std::vector<int64_t>& v, int64_t d) {
    return v.empty() ? std::vector<int64_t>(nd, d) : v;
  };
  const std::vector<int64_t> strides = or_default(a.strides, 1), dil = or_default(a.dilations, 1);
  const std::vector<int64_t> pads = a.pads.empty() ? std::vector<int64_t>(2 * nd, 0) : a.pads;
  if (strides.size() != nd || dil.size() != nd || pads.size() != 2 * nd)
    return invalid_argument("strides/dilations need ", nd, " values and pads ", 2 * nd);
  Shape out(nd);
  for (size_t i = 0; i < nd; ++i) {
    const int64_t ek = (kernel[i] - 1) * dil[i] + 1;
    const int64_t span = in[i] + pads[i] + pads[i + nd] - ek;
    if (span < 0) return invalid_argument("spatial dim ", i, ": input plus pads is smaller than the kernel");
    out[i] = span / strides[i] + 1;
  }
  const int64_t out_size = shape_numel(out), in_size = shape_numel(in);
  Shape off_shape = {N, OG * K * static_cast<int64_t>(nd)};
  off_shape.insert(off_shape.end(), out.begin(), out.end());
  if (offset.shape() != off_shape)
    return invalid_argument("offset must have shape ", shape_to_string(off_shape), ", got ",
                            shape_to_string(offset.shape()));
  if (offset.dtype() != x.dtype()) return invalid_argument("offset type differs from X");
  const bool has_mask = ctx.has_input(4);
  if (has_mask) {
    Shape mask_shape = {N, OG * K};
    mask_shape.insert(mask_shape.end(), out.begin(), out.end());
    if (ctx.input(4).shape() != mask_shape || ctx.input(4).dtype() != x.dtype())
      return invalid_argument("mask must have shape ", shape_to_string(mask_shape), " and X's type, got ",
                              shape_to_string(ctx.input(4).shape()));
  }
  if (ctx.has_input(3)) {
    const Tensor& b = ctx.input(3);
    if (b.rank() != 1 || b.dim(0) != M || b.dtype() != x.dtype())
      return invalid_argument("bias B must have shape [", M, "] and X's type");
  }
  Shape yshape = {N, M};
  yshape.insert(yshape.end(), out.begin(), out.end());
  XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), yshape));

  auto load = [](const Tensor& t) {
    std::vector<CT> v(static_cast<size_t>(t.numel()));
    const T* p = t.data<T>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = to_compute(p[i]);
    return v;
  };
  const std::vector<CT> xv = load(x), wv = load(w), ov = load(offset);
  const std::vector<CT> mv = has_mask ? load(ctx.input(4)) : std::vector<CT>();
  const std::vector<CT> bv = ctx.has_input(3) ? load(ctx.input(3)) : std::vector<CT>();
  std::vector<CT> yv(static_cast<size_t>(y->numel()), CT(0));
  std::vector<int64_t> in_strides(nd, 1);
  for (size_t i = nd - 1; i-- > 0;) in_strides[i] = in_strides[i + 1] * in[i + 1];
  const int64_t c_per_og = C / OG;
  std::vector<CT> col(static_cast<size_t>(Cg * K * out_size));
  std::vector<int64_t> kk(nd), oi(nd);
  std::vector<CT> pos(nd);
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t m = 0; m < M; ++m)
      std::fill_n(yv.data() + (n * M + m) * out_size, out_size, bv.empty() ? CT(0) : bv[m]);
    for (int64_t gi = 0; gi < G; ++gi) {
      for (int64_t cl = 0; cl < Cg; ++cl) {
        const int64_t c = gi * Cg + cl;
        const int64_t og = c / c_per_og;
        const CT* plane = xv.data() + (n * C + c) * in_size;
        std::fill(kk.begin(), kk.end(), 0);
        for (int64_t k = 0; k < K; ++k) {
          CT* row = col.data() + (cl * K + k) * out_size;
          const CT* offs = ov.data() + ((n * OG + og) * K + k) * static_cast<int64_t>(nd) * out_size;
          const CT* msk = has_mask ? mv.data() + ((n * OG + og) * K + k) * out_size : nullptr;
          std::fill(oi.begin(), oi.end(), 0);
          for (int64_t p = 0; p < out_size; ++p) {
            for (size_t i = 0; i < nd; ++i)
              pos[i] = CT(oi[i] * strides[i] - pads[i] + kk[i] * dil[i]) + offs[i * out_size + p];
            CT v = sample<CT>(plane, in, in_strides, pos.data(), nd);
            if (msk) v *= msk[p];
            row[p] = v;
            for (size_t i = nd; i-- > 0;) {
              if (++oi[i] < out[i]) break;
              oi[i] = 0;
            }
          }
          for (size_t i = nd; i-- > 0;) {
            if (++kk[i] < kernel[i]) break;
            kk[i] = 0;
          }
        }
      }
      ref::gemm_acc<CT>(Mg, out_size, Cg * K, wv.data() + gi * Mg * Cg * K, Cg * K, col.data(), out_size,
                        yv.data() + (n * M + gi * Mg) * out_size, out_size);
    }
  }
  T* yp = y->data<T>();
  for (size_t i = 0; i < yv.size(); ++i) yp[i] = from_compute<T>(yv[i]);
  return Status::ok();
}

Result<std::unique_ptr<Kernel>> create_deform_conv(const KernelInit& init) {
  DeformAttrs a;
  XONNX_ASSIGN_OR_RETURN(a.kernel_shape, init.get_ints("kernel_shape"));
  XONNX_ASSIGN_OR_RETURN(a.strides, init.get_ints("strides"));
  XONNX_ASSIGN_OR_RETURN(a.dilations, init.get_ints("dilations"));
  XONNX_ASSIGN_OR_RETURN(a.pads, init.get_ints("pads"));
  XONNX_ASSIGN_OR_RETURN(a.group, init.get_int("group", 1));
  XONNX_ASSIGN_OR_RETURN(a.offset_group, init.get_int("offset_group", 1));
  if (a.group < 1 || a.offset_group < 1) return invalid_argument("group and offset_group must be >= 1");
  for (int64_t v : a.strides)
    if (v < 1) return invalid_argument("strides must be >= 1, got ", v);
  for (int64_t v : a.dilations)
    if (v < 1) return invalid_argument("dilations must be >= 1, got ", v);
  for (int64_t v : a.pads)
    if (v < 0) return invalid_argument("pads must be >= 0, got ", v);
  return make_kernel([a](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    if (x.rank() < 3 || x.rank() > 10 || w.rank() != x.rank())
      return invalid_argument("X must have rank 3..10 and W the same rank, got ", shape_to_string(x.shape()), " and ",
                              shape_to_string(w.shape()));
    if (w.dtype() != x.dtype()) return invalid_argument("W type differs from X");
    if (x.rank() - 2 > 8) return unsupported("DeformConv with more than 8 spatial dims");
    if (x.dim(1) != w.dim(1) * a.group || w.dim(0) % a.group != 0)
      return invalid_argument("X ", shape_to_string(x.shape()), " and W ", shape_to_string(w.shape()),
                              " are inconsistent with group ", a.group);
    if (x.dim(1) % a.offset_group != 0)
      return invalid_argument("X channels ", x.dim(1), " not divisible by offset_group ", a.offset_group);
    if (!a.kernel_shape.empty() && Shape(w.shape().begin() + 2, w.shape().end()) != a.kernel_shape)
      return invalid_argument("kernel_shape does not match W's spatial shape");
    XONNX_DISPATCH_FLOAT(x.dtype(), return unsupported("DeformConv on type ", dtype_name(x.dtype())),
                         { return run_deform<T>(ctx, a); });
    return Status::ok();
  });
}

}  // namespace

void register_deform_conv_ops(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "DeformConv", 19, kLatestVersion, create_deform_conv);
}

}  // namespace xonnx
