// Reference kernels: integer / quantized linear algebra. MatMulInteger (10), ConvInteger (10),
// QLinearMatMul (10, 21), QLinearConv (10). Part of the quantize family (registered from
// register_quantize_ops). Accumulation is exact integer arithmetic; requantization follows the
// ONNX reference evaluator: y = saturate(round_half_even(acc * (s_in * s_w / s_y)) + y_zp), with the
// multiplier computed in the scales' precision.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "runtime/ops/ref/common.h"
#include "runtime/ops/ref/quantize_internal.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace {

bool is_8bit(DataType t) { return t == DataType::kInt8 || t == DataType::kUint8; }

Status check_8bit(const Tensor& t, const char* name) {
  if (!is_8bit(t.dtype()))
    return invalid_argument("input ", name, " must be int8 or uint8, got ", dtype_name(t.dtype()));
  return Status::ok();
}

// Reads a quantization parameter (scale or zero point) that is a scalar / 1-element tensor or a
// 1-D tensor of `len` elements. Returns `len` values (broadcast for the per-tensor case).
Result<std::vector<double>> read_param(const Tensor& t, const char* name, int64_t len, const char* len_what) {
  if (t.numel() == 1 && t.rank() <= 1) {
    return std::vector<double>(static_cast<size_t>(len), t.get_as_double(0));
  }
  if (t.rank() != 1 || t.dim(0) != len) {
    return invalid_argument("input ", name, " must be a scalar or a 1-D tensor of ", len, " elements (", len_what,
                            "), got shape ", shape_to_string(t.shape()));
  }
  std::vector<double> v(static_cast<size_t>(len));
  for (int64_t i = 0; i < len; ++i) v[i] = t.get_as_double(i);
  return v;
}

Status check_scales(const std::vector<double>& s, const char* name) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (!(s[i] > 0.0) || std::isinf(s[i])) {
      return invalid_argument("input ", name, " has invalid value ", s[i], ": scales must be positive and finite");
    }
  }
  return Status::ok();
}

Status check_zero_point(const Tensor& zp, const Tensor& data, const char* zp_name, const char* data_name) {
  if (zp.dtype() != data.dtype()) {
    return invalid_argument("input ", zp_name, " has type ", dtype_name(zp.dtype()), " but ", data_name, " has type ",
                            dtype_name(data.dtype()), "; they must match");
  }
  return Status::ok();
}

// Rounds to the precision of a scale type (the reference multiplies/divides scales in it).
double round_scale(DataType t, double v) {
  if (t == DataType::kFloat16) return half_to_float(float_to_half(static_cast<float>(v)));
  if (t == DataType::kBFloat16) return bfloat16_to_float(float_to_bfloat16(static_cast<float>(v)));
  if (t == DataType::kDouble) return v;
  return static_cast<float>(v);
}

// ---- session-creation checks of constant quantization parameters ---------------------------
// Parameters stored as initializers are checked once when the session is created, so a bad
// model fails early with the input named; run time repeats the checks for computed ones.

// A constant scale input: every element positive and finite; 1 or `len` elements (len < 0: any).
Status check_const_scale(const KernelInit& init, size_t i, const char* name, int64_t len, const char* len_what) {
  const Tensor* t = init.has_input(i) ? init.constant_input(i) : nullptr;
  if (!t) return Status::ok();
  if (!dtype_is_float(t->dtype()))
    return invalid_argument("input ", name, " must be a float tensor, got ", dtype_name(t->dtype()));
  if (t->rank() > 1)
    return invalid_argument("input ", name, " must be a scalar or 1-D, got shape ", shape_to_string(t->shape()));
  if (len == 1 && t->numel() != 1) {
    return invalid_argument("input ", name, " must be a scalar (per-tensor), got shape ", shape_to_string(t->shape()));
  }
  if (len >= 0 && t->numel() != 1 && t->numel() != len) {
    return invalid_argument("input ", name, " has ", t->numel(), " elements but there are ", len, " ", len_what,
                            " (per-axis lengths must match)");
  }
  if (t->numel() == 0) return invalid_argument("input ", name, " is empty");
  for (int64_t k = 0; k < t->numel(); ++k) {
    const double v = t->get_as_double(k);
    if (!(v > 0.0) || std::isinf(v)) {
      return invalid_argument("input ", name, "[", k, "] = ", v, " is invalid: scales must be positive and finite");
    }
  }
  return Status::ok();
}

// A constant zero point: 8-bit, of the type of its data when that is known (data_type != kUndefined),
// with 1 or `len` elements (len < 0: any).
Status check_const_zero_point(const KernelInit& init, size_t i, const char* name, DataType data_type,
                              const char* data_name, int64_t len, const char* len_what) {
  const Tensor* t = init.has_input(i) ? init.constant_input(i) : nullptr;
  if (!t) return Status::ok();
  if (!is_8bit(t->dtype()))
    return invalid_argument("input ", name, " must be int8 or uint8, got ", dtype_name(t->dtype()));
  if (data_type != DataType::kUndefined && t->dtype() != data_type) {
    return invalid_argument("input ", name, " has type ", dtype_name(t->dtype()), " but ", data_name, " has type ",
                            dtype_name(data_type), "; they must match");
  }
  if (t->rank() > 1 || (len >= 0 && t->numel() != 1 && t->numel() != len)) {
    return invalid_argument("input ", name, " must be a scalar or 1-D with ", len < 0 ? 1 : len, " elements (",
                            len_what, "), got shape ", shape_to_string(t->shape()));
  }
  return Status::ok();
}

DataType const_type(const KernelInit& init, size_t i) {
  const Tensor* t = init.has_input(i) ? init.constant_input(i) : nullptr;
  return t ? t->dtype() : DataType::kUndefined;
}

// Output channels of a constant weight (its first dimension), or -1 when unknown.
int64_t const_dim0(const KernelInit& init, size_t i) {
  const Tensor* t = init.has_input(i) ? init.constant_input(i) : nullptr;
  return t && t->rank() >= 1 ? t->dim(0) : -1;
}
// Columns of a constant matrix (its last dimension), or -1 when unknown.
int64_t const_last_dim(const KernelInit& init, size_t i) {
  const Tensor* t = init.has_input(i) ? init.constant_input(i) : nullptr;
  return t && t->rank() >= 1 ? t->shape().back() : -1;
}

// ---- batched integer matmul with numpy broadcasting --------------------------------------
struct MatmulGeom {
  Shape out_shape;
  int64_t M = 0, K = 0, N = 0, batch = 0;
  std::vector<int64_t> a_off, b_off;  // per batch: element offsets of the A and B matrices
};

Result<MatmulGeom> matmul_geometry(const Shape& as, const Shape& bs) {
  if (as.empty() || bs.empty()) return invalid_argument("matmul inputs must have rank >= 1");
  Shape a = as, b = bs;
  const bool a1 = a.size() == 1, b1 = b.size() == 1;
  if (a1) a.insert(a.begin(), 1);
  if (b1) b.push_back(1);
  MatmulGeom g;
  g.M = a[a.size() - 2];
  g.K = a[a.size() - 1];
  g.N = b[b.size() - 1];
  if (b[b.size() - 2] != g.K) {
    return invalid_argument("matmul inner dimensions differ: A ", shape_to_string(as), ", B ", shape_to_string(bs));
  }
  Shape ab(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
  XONNX_ASSIGN_OR_RETURN(Shape batch, ref::broadcast_shapes(ab, bb));
  g.batch = shape_numel(batch);
  const int64_t a_mat = g.M * g.K, b_mat = g.K * g.N;
  ref::for_each_broadcast(batch, {ab, bb}, [&](int64_t, const std::vector<int64_t>& off) {
    g.a_off.push_back(off[0] * a_mat);
    g.b_off.push_back(off[1] * b_mat);
  });
  if (batch.empty()) {
    g.a_off.assign(1, 0);
    g.b_off.assign(1, 0);
  }
  g.out_shape = batch;
  if (!a1) g.out_shape.push_back(g.M);
  if (!b1) g.out_shape.push_back(g.N);
  return g;
}

std::vector<int32_t> to_int32(const Tensor& t) {
  std::vector<int32_t> v(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int32_t>(t.get_as_int64(static_cast<int64_t>(i)));
  return v;
}

// acc[b, m, n] = sum_k (A - azp[m]) * (B - bzp[n])
std::vector<int64_t> int_matmul(const MatmulGeom& g, const std::vector<int32_t>& A, const std::vector<int32_t>& B,
                                const std::vector<double>& azp, const std::vector<double>& bzp) {
  std::vector<int64_t> acc(static_cast<size_t>(g.batch * g.M * g.N), 0);
  for (int64_t bt = 0; bt < g.batch; ++bt) {
    const int32_t* a = A.data() + g.a_off[bt];
    const int32_t* b = B.data() + g.b_off[bt];
    int64_t* c = acc.data() + bt * g.M * g.N;
    for (int64_t m = 0; m < g.M; ++m) {
      const int64_t za = static_cast<int64_t>(azp[m]);
      for (int64_t k = 0; k < g.K; ++k) {
        const int64_t av = a[m * g.K + k] - za;
        if (av == 0) continue;
        for (int64_t n = 0; n < g.N; ++n) c[m * g.N + n] += av * (b[k * g.N + n] - static_cast<int64_t>(bzp[n]));
      }
    }
  }
  return acc;
}

Result<std::unique_ptr<Kernel>> create_matmul_integer(const KernelInit& init) {
  (void)init;
  return make_kernel([](KernelContext& ctx) -> Status {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    XONNX_RETURN_IF_ERROR(check_8bit(a, "A"));
    XONNX_RETURN_IF_ERROR(check_8bit(b, "B"));
    XONNX_ASSIGN_OR_RETURN(MatmulGeom g, matmul_geometry(a.shape(), b.shape()));
    std::vector<double> azp(static_cast<size_t>(g.M), 0.0), bzp(static_cast<size_t>(g.N), 0.0);
    if (ctx.has_input(2)) {
      XONNX_RETURN_IF_ERROR(check_zero_point(ctx.input(2), a, "a_zero_point", "A"));
      XONNX_ASSIGN_OR_RETURN(azp, read_param(ctx.input(2), "a_zero_point", g.M, "rows of A"));
    }
    if (ctx.has_input(3)) {
      XONNX_RETURN_IF_ERROR(check_zero_point(ctx.input(3), b, "b_zero_point", "B"));
      XONNX_ASSIGN_OR_RETURN(bzp, read_param(ctx.input(3), "b_zero_point", g.N, "columns of B"));
    }
    const std::vector<int64_t> acc = int_matmul(g, to_int32(a), to_int32(b), azp, bzp);
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kInt32, g.out_shape));
    int32_t* out = y->data<int32_t>();
    for (size_t i = 0; i < acc.size(); ++i) out[i] = static_cast<int32_t>(acc[i]);
    return Status::ok();
  });
}

// Requantizes v (already scaled) to the type of `out`: round half to even, saturate.
void store_quantized(Tensor* out, int64_t i, double v) {
  int64_t lo = 0, hi = 255;
  if (out->dtype() == DataType::kInt8) {
    lo = -128;
    hi = 127;
  }
  double r = std::nearbyint(v);
  if (std::isnan(r)) r = 0.0;
  r = std::min(std::max(r, static_cast<double>(lo)), static_cast<double>(hi));
  if (out->dtype() == DataType::kInt8)
    out->data<int8_t>()[i] = static_cast<int8_t>(r);
  else
    out->data<uint8_t>()[i] = static_cast<uint8_t>(r);
}

Result<std::unique_ptr<Kernel>> create_qlinear_matmul(const KernelInit& init) {
  const int64_t n = const_last_dim(init, 3);
  XONNX_RETURN_IF_ERROR(check_const_scale(init, 1, "a_scale", -1, ""));
  XONNX_RETURN_IF_ERROR(check_const_scale(init, 4, "b_scale", n, "columns of b"));
  XONNX_RETURN_IF_ERROR(check_const_scale(init, 6, "y_scale", -1, ""));
  XONNX_RETURN_IF_ERROR(check_const_zero_point(init, 2, "a_zero_point", const_type(init, 0), "a", -1, ""));
  XONNX_RETURN_IF_ERROR(check_const_zero_point(init, 5, "b_zero_point", const_type(init, 3), "b", n, "columns of b"));
  XONNX_RETURN_IF_ERROR(check_const_zero_point(init, 7, "y_zero_point", DataType::kUndefined, "", -1, ""));
  return make_kernel([](KernelContext& ctx) -> Status {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(3);
    XONNX_RETURN_IF_ERROR(check_8bit(a, "a"));
    XONNX_RETURN_IF_ERROR(check_8bit(b, "b"));
    XONNX_ASSIGN_OR_RETURN(MatmulGeom g, matmul_geometry(a.shape(), b.shape()));
    const Tensor& as = ctx.input(1);
    const Tensor& bs = ctx.input(4);
    const Tensor& ys = ctx.input(6);
    if (!dtype_is_float(as.dtype()) || as.dtype() != bs.dtype() || as.dtype() != ys.dtype()) {
      return invalid_argument("a_scale, b_scale and y_scale must have the same float type, got ",
                              dtype_name(as.dtype()), ", ", dtype_name(bs.dtype()), ", ", dtype_name(ys.dtype()));
    }
    XONNX_ASSIGN_OR_RETURN(std::vector<double> a_s, read_param(as, "a_scale", g.M, "rows of a"));
    XONNX_ASSIGN_OR_RETURN(std::vector<double> b_s, read_param(bs, "b_scale", g.N, "columns of b"));
    XONNX_ASSIGN_OR_RETURN(std::vector<double> y_s, read_param(ys, "y_scale", g.M, "rows of y"));
    XONNX_RETURN_IF_ERROR(check_scales(a_s, "a_scale"));
    XONNX_RETURN_IF_ERROR(check_scales(b_s, "b_scale"));
    XONNX_RETURN_IF_ERROR(check_scales(y_s, "y_scale"));
    std::vector<double> azp(static_cast<size_t>(g.M), 0.0), bzp(static_cast<size_t>(g.N), 0.0),
        yzp(static_cast<size_t>(g.M), 0.0);
    if (ctx.has_input(2)) {
      XONNX_RETURN_IF_ERROR(check_zero_point(ctx.input(2), a, "a_zero_point", "a"));
      XONNX_ASSIGN_OR_RETURN(azp, read_param(ctx.input(2), "a_zero_point", g.M, "rows of a"));
    }
    if (ctx.has_input(5)) {
      XONNX_RETURN_IF_ERROR(check_zero_point(ctx.input(5), b, "b_zero_point", "b"));
      XONNX_ASSIGN_OR_RETURN(bzp, read_param(ctx.input(5), "b_zero_point", g.N, "columns of b"));
    }
    DataType out_t = a.dtype();
    if (ctx.has_input(7)) {
      out_t = ctx.input(7).dtype();
      if (!is_8bit(out_t)) return invalid_argument("input y_zero_point must be int8 or uint8, got ", dtype_name(out_t));
      XONNX_ASSIGN_OR_RETURN(yzp, read_param(ctx.input(7), "y_zero_point", g.M, "rows of y"));
    }
    const std::vector<int64_t> acc = int_matmul(g, to_int32(a), to_int32(b), azp, bzp);
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, out_t, g.out_shape));
    const DataType st = as.dtype();
    for (int64_t bt = 0; bt < g.batch; ++bt) {
      for (int64_t m = 0; m < g.M; ++m) {
        for (int64_t n = 0; n < g.N; ++n) {
          const double mult = round_scale(st, round_scale(st, a_s[m] * b_s[n]) / y_s[m]);
          const int64_t i = (bt * g.M + m) * g.N + n;
          store_quantized(y, i, static_cast<double>(acc[i]) * mult + yzp[m]);
        }
      }
    }
    return Status::ok();
  });
}

// ---- integer convolution -----------------------------------------------------------------
struct ConvAttrs {
  std::string auto_pad = "NOTSET";
  std::vector<int64_t> dilations, kernel_shape, pads, strides;
  int64_t group = 1;
};

Result<ConvAttrs> parse_conv_attrs(const KernelInit& init) {
  ConvAttrs c;
  XONNX_ASSIGN_OR_RETURN(c.auto_pad, ref::get_auto_pad(init));
  XONNX_ASSIGN_OR_RETURN(c.dilations, init.get_ints("dilations"));
  XONNX_ASSIGN_OR_RETURN(c.kernel_shape, init.get_ints("kernel_shape"));
  XONNX_ASSIGN_OR_RETURN(c.pads, init.get_ints("pads"));
  XONNX_ASSIGN_OR_RETURN(c.strides, init.get_ints("strides"));
  XONNX_ASSIGN_OR_RETURN(c.group, init.get_int("group", 1));
  if (c.group <= 0) return invalid_argument("group must be positive, got ", c.group);
  return c;
}

struct ConvGeom {
  int64_t N = 0, C = 0, M = 0, G = 1, cg = 0, mg = 0;
  std::vector<int64_t> in, k, out, stride, dil, pad_begin;
  int64_t in_sp = 1, k_sp = 1, out_sp = 1;
  Shape out_shape;
};

Result<ConvGeom> conv_geometry(const ConvAttrs& a, const Shape& xs, const Shape& ws) {
  if (xs.size() < 3) return invalid_argument("input x must have rank >= 3 (N, C, D1, ...), got ", shape_to_string(xs));
  if (ws.size() != xs.size()) {
    return invalid_argument("input w must have the rank of x (", xs.size(), "), got ", shape_to_string(ws));
  }
  const size_t nd = xs.size() - 2;
  ConvGeom g;
  g.N = xs[0];
  g.C = xs[1];
  g.M = ws[0];
  g.G = a.group;
  if (g.C % g.G != 0 || g.M % g.G != 0) {
    return invalid_argument("group ", g.G, " must divide the input channels (", g.C, ") and the output channels (", g.M,
                            ")");
  }
  g.cg = g.C / g.G;
  g.mg = g.M / g.G;
  if (ws[1] != g.cg) return invalid_argument("input w has ", ws[1], " channels per group, expected ", g.cg);
  auto get = [&](const std::vector<int64_t>& v, size_t n, int64_t def,
                 const char* name) -> Result<std::vector<int64_t>> {
    if (v.empty()) return std::vector<int64_t>(n, def);
    if (v.size() != n) return invalid_argument("attribute ", name, " must have ", n, " values, got ", v.size());
    return v;
  };
  XONNX_ASSIGN_OR_RETURN(g.stride, get(a.strides, nd, 1, "strides"));
  XONNX_ASSIGN_OR_RETURN(g.dil, get(a.dilations, nd, 1, "dilations"));
  XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> pads, get(a.pads, 2 * nd, 0, "pads"));
  if (!a.kernel_shape.empty()) {
    if (a.kernel_shape.size() != nd) return invalid_argument("attribute kernel_shape must have ", nd, " values");
    for (size_t i = 0; i < nd; ++i) {
      if (a.kernel_shape[i] != ws[2 + i]) {
        return invalid_argument("kernel_shape ", a.kernel_shape[i], " does not match w dimension ", ws[2 + i]);
      }
    }
  }
  g.out_shape = {g.N, g.M};
  g.pad_begin.resize(nd);
  for (size_t i = 0; i < nd; ++i) {
    const int64_t in = xs[2 + i], k = ws[2 + i], s = g.stride[i], d = g.dil[i];
    if (s <= 0 || d <= 0) return invalid_argument("strides and dilations must be positive");
    if (pads[i] < 0 || pads[nd + i] < 0) return invalid_argument("pads must be non-negative");
    const int64_t ek = (k - 1) * d + 1;
    int64_t out, pb;
    if (a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER") {
      const ref::SamePadding p = ref::same_padding(in, s, ek, a.auto_pad == "SAME_UPPER");
      out = p.out;
      pb = p.pad_begin;
    } else if (a.auto_pad == "VALID") {
      pb = 0;
      out = in >= ek ? (in - ek) / s + 1 : 0;
    } else {
      pb = pads[i];
      const int64_t padded = in + pads[i] + pads[nd + i];
      out = padded >= ek ? (padded - ek) / s + 1 : 0;
    }
    g.in.push_back(in);
    g.k.push_back(k);
    g.out.push_back(out);
    g.pad_begin[i] = pb;
    g.in_sp *= in;
    g.k_sp *= k;
    g.out_sp *= out;
    g.out_shape.push_back(out);
  }
  return g;
}

// acc[n, m, out...] = sum_{c in group, k} (x - xzp) * (w - wzp[m])
std::vector<int64_t> int_conv(const ConvGeom& g, const std::vector<int32_t>& X, const std::vector<int32_t>& W,
                              int64_t xzp, const std::vector<double>& wzp) {
  const size_t nd = g.in.size();
  std::vector<int64_t> acc(static_cast<size_t>(g.N * g.M * g.out_sp), 0);
  std::vector<int64_t> oi(nd), ki(nd);
  for (int64_t n = 0; n < g.N; ++n) {
    for (int64_t m = 0; m < g.M; ++m) {
      const int64_t grp = m / g.mg;
      const int64_t wz = static_cast<int64_t>(wzp[m]);
      int64_t* out = acc.data() + (n * g.M + m) * g.out_sp;
      for (int64_t o = 0; o < g.out_sp; ++o) {
        int64_t rem = o;
        for (size_t i = nd; i-- > 0;) {
          oi[i] = rem % g.out[i];
          rem /= g.out[i];
        }
        int64_t sum = 0;
        for (int64_t kk = 0; kk < g.k_sp; ++kk) {
          int64_t r2 = kk, off = 0;
          bool inside = true;
          for (size_t i = nd; i-- > 0;) {
            ki[i] = r2 % g.k[i];
            r2 /= g.k[i];
          }
          for (size_t i = 0; i < nd; ++i) {
            const int64_t pos = oi[i] * g.stride[i] - g.pad_begin[i] + ki[i] * g.dil[i];
            if (pos < 0 || pos >= g.in[i]) {
              inside = false;
              break;
            }
            off = off * g.in[i] + pos;
          }
          if (!inside) continue;  // padding contributes (xzp - xzp) = 0
          for (int64_t c = 0; c < g.cg; ++c) {
            const int64_t xv = X[static_cast<size_t>((n * g.C + grp * g.cg + c) * g.in_sp + off)] - xzp;
            const int64_t wv = W[static_cast<size_t>((m * g.cg + c) * g.k_sp + kk)] - wz;
            sum += xv * wv;
          }
        }
        out[o] = sum;
      }
    }
  }
  return acc;
}

Result<std::unique_ptr<Kernel>> create_conv_integer(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(ConvAttrs attrs, parse_conv_attrs(init));
  return make_kernel([attrs](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    XONNX_RETURN_IF_ERROR(check_8bit(x, "x"));
    XONNX_RETURN_IF_ERROR(check_8bit(w, "w"));
    XONNX_ASSIGN_OR_RETURN(ConvGeom g, conv_geometry(attrs, x.shape(), w.shape()));
    int64_t xzp = 0;
    std::vector<double> wzp(static_cast<size_t>(g.M), 0.0);
    if (ctx.has_input(2)) {
      XONNX_RETURN_IF_ERROR(check_zero_point(ctx.input(2), x, "x_zero_point", "x"));
      if (ctx.input(2).numel() != 1) return invalid_argument("input x_zero_point must be a scalar (per-tensor)");
      xzp = ctx.input(2).get_as_int64(0);
    }
    if (ctx.has_input(3)) {
      XONNX_RETURN_IF_ERROR(check_zero_point(ctx.input(3), w, "w_zero_point", "w"));
      XONNX_ASSIGN_OR_RETURN(wzp, read_param(ctx.input(3), "w_zero_point", g.M, "output channels"));
    }
    // The output first: its allocation checks the window's output size against the cap.
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kInt32, g.out_shape));
    XONNX_RETURN_IF_ERROR(ref::check_scratch(ctx, "the accumulators", sizeof(int64_t), {y->numel()}));
    const std::vector<int64_t> acc = int_conv(g, to_int32(x), to_int32(w), xzp, wzp);
    int32_t* out = y->data<int32_t>();
    for (size_t i = 0; i < acc.size(); ++i) out[i] = static_cast<int32_t>(acc[i]);
    return Status::ok();
  });
}

Result<std::unique_ptr<Kernel>> create_qlinear_conv(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(ConvAttrs attrs, parse_conv_attrs(init));
  const int64_t m = const_dim0(init, 3);
  XONNX_RETURN_IF_ERROR(check_const_scale(init, 1, "x_scale", 1, "values per tensor"));
  XONNX_RETURN_IF_ERROR(check_const_scale(init, 4, "w_scale", m, "output channels"));
  XONNX_RETURN_IF_ERROR(check_const_scale(init, 6, "y_scale", 1, "values per tensor"));
  XONNX_RETURN_IF_ERROR(check_const_zero_point(init, 2, "x_zero_point", const_type(init, 0), "x", 1, "per-tensor"));
  XONNX_RETURN_IF_ERROR(
      check_const_zero_point(init, 5, "w_zero_point", const_type(init, 3), "w", m, "output channels"));
  XONNX_RETURN_IF_ERROR(check_const_zero_point(init, 7, "y_zero_point", DataType::kUndefined, "", 1, "per-tensor"));
  if (const Tensor* b = init.has_input(8) ? init.constant_input(8) : nullptr) {
    if (b->dtype() != DataType::kInt32) return invalid_argument("input B must be int32, got ", dtype_name(b->dtype()));
    if (m >= 0 && (b->rank() != 1 || b->dim(0) != m)) {
      return invalid_argument("input B must have shape (", m, "), got ", shape_to_string(b->shape()));
    }
  }
  return make_kernel([attrs](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(3);
    XONNX_RETURN_IF_ERROR(check_8bit(x, "x"));
    XONNX_RETURN_IF_ERROR(check_8bit(w, "w"));
    XONNX_ASSIGN_OR_RETURN(ConvGeom g, conv_geometry(attrs, x.shape(), w.shape()));
    const Tensor& xs = ctx.input(1);
    const Tensor& ws = ctx.input(4);
    const Tensor& ys = ctx.input(6);
    for (const Tensor* t : {&xs, &ws, &ys}) {
      if (t->dtype() != DataType::kFloat) {
        return invalid_argument("scales of QLinearConv must be float, got ", dtype_name(t->dtype()));
      }
    }
    if (xs.numel() != 1) return invalid_argument("input x_scale must be a scalar (per-tensor)");
    if (ys.numel() != 1) return invalid_argument("input y_scale must be a scalar (per-tensor)");
    std::vector<double> x_s{xs.get_as_double(0)}, y_s{ys.get_as_double(0)};
    XONNX_ASSIGN_OR_RETURN(std::vector<double> w_s, read_param(ws, "w_scale", g.M, "output channels"));
    XONNX_RETURN_IF_ERROR(check_scales(x_s, "x_scale"));
    XONNX_RETURN_IF_ERROR(check_scales(w_s, "w_scale"));
    XONNX_RETURN_IF_ERROR(check_scales(y_s, "y_scale"));
    XONNX_RETURN_IF_ERROR(check_zero_point(ctx.input(2), x, "x_zero_point", "x"));
    if (ctx.input(2).numel() != 1) return invalid_argument("input x_zero_point must be a scalar (per-tensor)");
    const int64_t xzp = ctx.input(2).get_as_int64(0);
    XONNX_RETURN_IF_ERROR(check_zero_point(ctx.input(5), w, "w_zero_point", "w"));
    XONNX_ASSIGN_OR_RETURN(std::vector<double> wzp, read_param(ctx.input(5), "w_zero_point", g.M, "output channels"));
    const Tensor& yzp_t = ctx.input(7);
    if (!is_8bit(yzp_t.dtype()))
      return invalid_argument("input y_zero_point must be int8 or uint8, got ", dtype_name(yzp_t.dtype()));
    if (yzp_t.numel() != 1) return invalid_argument("input y_zero_point must be a scalar (per-tensor)");
    const double yzp = yzp_t.get_as_double(0);
    std::vector<int64_t> bias(static_cast<size_t>(g.M), 0);
    if (ctx.has_input(8)) {
      const Tensor& bt = ctx.input(8);
      if (bt.dtype() != DataType::kInt32)
        return invalid_argument("input B must be int32, got ", dtype_name(bt.dtype()));
      if (bt.rank() != 1 || bt.dim(0) != g.M) {
        return invalid_argument("input B must have shape (", g.M, "), got ", shape_to_string(bt.shape()));
      }
      for (int64_t m = 0; m < g.M; ++m) bias[m] = bt.data<int32_t>()[m];
    }
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, yzp_t.dtype(), g.out_shape));  // checks the cap
    XONNX_RETURN_IF_ERROR(ref::check_scratch(ctx, "the accumulators", sizeof(int64_t), {y->numel()}));
    const std::vector<int64_t> acc = int_conv(g, to_int32(x), to_int32(w), xzp, wzp);
    for (int64_t n = 0; n < g.N; ++n) {
      for (int64_t m = 0; m < g.M; ++m) {
        const double mult = round_scale(DataType::kFloat, round_scale(DataType::kFloat, x_s[0] * w_s[m]) / y_s[0]);
        for (int64_t o = 0; o < g.out_sp; ++o) {
          const int64_t i = (n * g.M + m) * g.out_sp + o;
          const int32_t a32 = static_cast<int32_t>(acc[i] + bias[m]);
          store_quantized(y, i, static_cast<double>(a32) * mult + yzp);
        }
      }
    }
    return Status::ok();
  });
}

}  // namespace

void register_qlinear_ops(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "MatMulInteger", 10, kLatestVersion, create_matmul_integer);
  XONNX_REGISTER(registry, "", "ConvInteger", 10, kLatestVersion, create_conv_integer);
  XONNX_REGISTER(registry, "", "QLinearMatMul", 10, kLatestVersion, create_qlinear_matmul);
  XONNX_REGISTER(registry, "", "QLinearConv", 10, kLatestVersion, create_qlinear_conv);
}

}  // namespace xonnx
