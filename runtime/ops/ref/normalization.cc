// Reference kernels: normalization family. BatchNormalization, InstanceNormalization,
// LayerNormalization, GroupNormalization, RMSNormalization here; LRN, LpNormalization,
// MeanVarianceNormalization and Dropout in normalization_misc.cc.
//
// Statistics accumulate in double whatever the stash_type (at least as precise as asked).
#include <cmath>
#include <string>
#include <vector>

#include "runtime/ops/ref/common.h"
#include "runtime/ops/ref/normalization_internal.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace {

using ref::load_doubles;

Status check_float(const Tensor& t, const char* what) {
  if (!dtype_is_float(t.dtype()) || dtype_bits(t.dtype()) < 16)
    return unsupported(what, " of type ", dtype_name(t.dtype()));
  return Status::ok();
}

// Normalizes each of `rows` contiguous rows of `inner` elements: y = affine(row, j, xhat).
// xhat = (x - mean) / sqrt(var + eps), or x / sqrt(mean(x^2) + eps) when `rms`.
// mean_out / inv_out (optional, `rows` entries) receive the statistics.
template <typename T, typename Affine>
void normalize_rows(const T* x, T* y, int64_t rows, int64_t inner, double eps, bool rms, Affine&& affine,
                    double* mean_out = nullptr, double* inv_out = nullptr) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * inner;
    T* yr = y + r * inner;
    double mean = 0, var = 0;
    if (inner > 0) {
      if (rms) {
        for (int64_t j = 0; j < inner; ++j) {
          const double v = static_cast<double>(to_compute(xr[j]));
          var += v * v;
        }
        var /= static_cast<double>(inner);
      } else {
        for (int64_t j = 0; j < inner; ++j) mean += static_cast<double>(to_compute(xr[j]));
        mean /= static_cast<double>(inner);
        for (int64_t j = 0; j < inner; ++j) {
          const double d = static_cast<double>(to_compute(xr[j])) - mean;
          var += d * d;
        }
        var /= static_cast<double>(inner);
      }
    }
    const double inv = 1.0 / std::sqrt(var + eps);
    if (mean_out) mean_out[r] = mean;
    if (inv_out) inv_out[r] = inv;
    for (int64_t j = 0; j < inner; ++j) {
      const double xh = (static_cast<double>(to_compute(xr[j])) - mean) * inv;
      yr[j] = from_compute<T>(static_cast<compute_t<T>>(affine(r, j, xh)));
    }
  }
}

// ---- BatchNormalization ------------------------------------------------------------------

struct BatchNormAttrs {
  double epsilon = 1e-5, momentum = 0.9;
  bool training = false;
  int version = 15;
};

Result<std::unique_ptr<Kernel>> create_batch_norm(const KernelInit& init) {
  BatchNormAttrs a;
  a.version = init.since_version();
  XONNX_ASSIGN_OR_RETURN(float eps, init.get_float("epsilon", 1e-5f));
  XONNX_ASSIGN_OR_RETURN(float mom, init.get_float("momentum", 0.9f));
  a.epsilon = eps;
  a.momentum = mom;
  if (a.version >= 14) {
    XONNX_ASSIGN_OR_RETURN(int64_t tm, init.get_int("training_mode", 0));
    a.training = tm != 0;
  } else {
    // Before 14 the extra outputs (mean, var, saved_mean, saved_var) mean training mode.
    for (size_t i = 1; i < init.num_outputs(); ++i)
      if (!init.node().outputs[i].empty())
        return unsupported("BatchNormalization-", a.version, " training outputs (mean, var, saved_mean, saved_var)");
  }
  return make_kernel([a](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    XONNX_RETURN_IF_ERROR(check_float(x, "BatchNormalization input"));
    if (x.rank() < 2)
      return invalid_argument("input X must have rank >= 2 (N, C, ...), got ", shape_to_string(x.shape()));
    const int64_t N = x.dim(0), C = x.dim(1);
    const int64_t sp = x.numel() / std::max<int64_t>(1, N * C);
    std::vector<double> p[4];
    bool per_element = false;
    static const char* kNames[4] = {"scale", "B", "input_mean", "input_var"};
    for (int i = 0; i < 4; ++i) {
      const Tensor& t = ctx.input(1 + i);
      XONNX_RETURN_IF_ERROR(check_float(t, kNames[i]));
      if (t.numel() == C && (t.rank() == 1 || a.version >= 9)) {
        // per channel
      } else if (a.version < 9 && t.numel() == C * sp && C * sp != C) {
        per_element = true;  // spatial=0: one parameter per (c, d1, ...)
      } else {
        return invalid_argument(kNames[i], " must have shape [", C, "], got ", shape_to_string(t.shape()));
      }
      p[i] = load_doubles(t);
    }
    for (int i = 0; i < 4; ++i)
      if (static_cast<int64_t>(p[i].size()) != static_cast<int64_t>(p[0].size()))
        return invalid_argument("scale, B, mean and var must have the same size");
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), x.shape()));
    std::vector<double> mean = p[2], var = p[3];
    if (a.training) {
      const double cnt = static_cast<double>(N * sp);
      std::vector<double> bm(C, 0.0), bv(C, 0.0);
      for (int64_t c = 0; c < C; ++c) {
        double s = 0;
        for (int64_t n = 0; n < N; ++n)
          for (int64_t j = 0; j < sp; ++j) s += x.get_as_double((n * C + c) * sp + j);
        bm[c] = cnt > 0 ? s / cnt : 0;
        double q = 0;
        for (int64_t n = 0; n < N; ++n)
          for (int64_t j = 0; j < sp; ++j) {
            const double d = x.get_as_double((n * C + c) * sp + j) - bm[c];
            q += d * d;
          }
        bv[c] = cnt > 0 ? q / cnt : 0;
      }
      for (int out = 1; out <= 2; ++out) {
        if (ctx.num_outputs() <= static_cast<size_t>(out) || !ctx.output_wanted(out)) continue;
        const Tensor& src = ctx.input(2 + out);  // input_mean / input_var
        XONNX_ASSIGN_OR_RETURN(Tensor * r, ctx.allocate_output(out, src.dtype(), src.shape()));
        const std::vector<double>& cur = out == 1 ? bm : bv;
        const std::vector<double>& run = out == 1 ? p[2] : p[3];
        XONNX_DISPATCH_FLOAT(src.dtype(), return unsupported("running stats of type ", dtype_name(src.dtype())), {
          T* rp = r->data<T>();
          for (int64_t c = 0; c < C; ++c)
            rp[c] = from_compute<T>(static_cast<compute_t<T>>(run[c] * a.momentum + cur[c] * (1 - a.momentum)));
        });
      }
      mean = bm;
      var = bv;
    } else if (a.version >= 14 && ctx.num_outputs() > 1) {
      for (size_t out = 1; out < ctx.num_outputs(); ++out)
        if (ctx.output_wanted(out)) return invalid_argument("running_mean/running_var outputs need training_mode=1");
    }
    std::vector<double> mul(p[0].size()), add(p[0].size());
    for (size_t i = 0; i < mul.size(); ++i) {
      mul[i] = p[0][i] / std::sqrt(var[i] + a.epsilon);
      add[i] = std::fma(-mean[i], mul[i], p[1][i]);  // as opt::fold_batch_norm
    }
    XONNX_DISPATCH_FLOAT(x.dtype(), return unsupported("BatchNormalization on ", dtype_name(x.dtype())), {
      using CT = compute_t<T>;
      const T* xp = x.data<T>();
      T* yp = y->data<T>();
      for (int64_t n = 0; n < N; ++n) {
        for (int64_t c = 0; c < C; ++c) {
          const int64_t base = (n * C + c) * sp;
          if (!per_element) {
            const CT m = static_cast<CT>(mul[c]), b = static_cast<CT>(add[c]);
            for (int64_t j = 0; j < sp; ++j) yp[base + j] = from_compute<T>(to_compute(xp[base + j]) * m + b);
          } else {
            for (int64_t j = 0; j < sp; ++j) {
              const int64_t k = c * sp + j;
              yp[base + j] = from_compute<T>(static_cast<CT>(to_compute(xp[base + j]) * mul[k] + add[k]));
            }
          }
        }
      }
    });
    return Status::ok();
  });
}

// ---- InstanceNormalization ---------------------------------------------------------------

Result<std::unique_ptr<Kernel>> create_instance_norm(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(float eps, init.get_float("epsilon", 1e-5f));
  return make_kernel([eps](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    XONNX_RETURN_IF_ERROR(check_float(x, "InstanceNormalization input"));
    if (x.rank() < 3)
      return invalid_argument("input must have rank >= 3 (N, C, D1, ...), got ", shape_to_string(x.shape()));
    const int64_t N = x.dim(0), C = x.dim(1), sp = x.numel() / std::max<int64_t>(1, N * C);
    const Tensor& s = ctx.input(1);
    const Tensor& b = ctx.input(2);
    if (s.shape() != Shape{C} || b.shape() != Shape{C})
      return invalid_argument("scale and B must have shape [", C, "], got ", shape_to_string(s.shape()), " and ",
                              shape_to_string(b.shape()));
    const std::vector<double> sv = load_doubles(s), bv = load_doubles(b);
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), x.shape()));
    XONNX_DISPATCH_FLOAT(x.dtype(), return unsupported("InstanceNormalization on ", dtype_name(x.dtype())), {
      normalize_rows(x.data<T>(), y->data<T>(), N * C, sp, eps, false,
                     [&](int64_t r, int64_t, double xh) { return xh * sv[r % C] + bv[r % C]; });
    });
    return Status::ok();
  });
}

// ---- LayerNormalization / RMSNormalization -------------------------------------------------

// A scale/bias broadcast against X: either over the normalized (inner) block only, or full.
struct Param {
  std::vector<double> v;
  bool full = false;
  double at(int64_t r, int64_t j, int64_t inner) const { return full ? v[r * inner + j] : v[j]; }
};

Result<Param> expand_param(const Tensor& t, const Shape& xshape, size_t axis, const char* what) {
  Param p;
  const Shape inner_shape(xshape.begin() + static_cast<int64_t>(axis), xshape.end());
  p.full = t.rank() > inner_shape.size();
  const Shape& target = p.full ? xshape : inner_shape;
  auto b = ref::broadcast_shapes(t.shape(), target);
  if (!b.is_ok() || *b != target)
    return invalid_argument(what, " ", shape_to_string(t.shape()), " does not broadcast to ", shape_to_string(target));
  p.v.resize(static_cast<size_t>(shape_numel(target)));
  ref::for_each_broadcast(target, {t.shape()},
                          [&](int64_t o, const std::vector<int64_t>& off) { p.v[o] = t.get_as_double(off[0]); });
  return p;
}

Result<DataType> stash_dtype(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(int64_t st, init.get_int("stash_type", 1));
  if (!dtype_is_known(static_cast<int32_t>(st)) || !dtype_is_float(static_cast<DataType>(st)) ||
      dtype_bits(static_cast<DataType>(st)) < 16)
    return invalid_argument("stash_type must be a float type, got ", st);
  return static_cast<DataType>(st);
}

template <bool kRms>
Result<std::unique_ptr<Kernel>> create_layer_norm(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(int64_t axis, init.get_int("axis", -1));
  XONNX_ASSIGN_OR_RETURN(float eps, init.get_float("epsilon", 1e-5f));
  XONNX_ASSIGN_OR_RETURN(DataType stash, stash_dtype(init));
  return make_kernel([axis, eps, stash](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    XONNX_RETURN_IF_ERROR(check_float(x, kRms ? "RMSNormalization input" : "LayerNormalization input"));
    XONNX_ASSIGN_OR_RETURN(int64_t ax, normalize_axis(axis, static_cast<int64_t>(x.rank())));
    const size_t a = static_cast<size_t>(ax);
    int64_t rows = 1, inner = 1;
    for (size_t i = 0; i < x.rank(); ++i) (i < a ? rows : inner) *= x.dim(i);
    XONNX_ASSIGN_OR_RETURN(Param scale, expand_param(ctx.input(1), x.shape(), a, "Scale"));
    Param bias;
    const bool has_bias = !kRms && ctx.has_input(2);
    if (has_bias) {
      XONNX_ASSIGN_OR_RETURN(bias, expand_param(ctx.input(2), x.shape(), a, "B"));
    }
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), x.shape()));
    std::vector<double> mean(static_cast<size_t>(rows)), inv(static_cast<size_t>(rows));
    XONNX_DISPATCH_FLOAT(x.dtype(), return unsupported("normalization on ", dtype_name(x.dtype())), {
      normalize_rows(
          x.data<T>(), y->data<T>(), rows, inner, eps, kRms,
          [&](int64_t r, int64_t j, double xh) {
            double v = xh * scale.at(r, j, inner);
            if (has_bias) v += bias.at(r, j, inner);
            return v;
          },
          mean.data(), inv.data());
    });
    if (!kRms) {
      Shape sshape = x.shape();
      for (size_t i = a; i < sshape.size(); ++i) sshape[i] = 1;
      for (size_t out = 1; out <= 2 && out < ctx.num_outputs(); ++out) {
        if (!ctx.output_wanted(out)) continue;
        XONNX_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output(out, stash, sshape));
        const std::vector<double>& src = out == 1 ? mean : inv;
        XONNX_DISPATCH_FLOAT(stash, return unsupported("stash_type ", dtype_name(stash)), {
          T* tp = t->data<T>();
          for (int64_t r = 0; r < rows; ++r) tp[r] = from_compute<T>(static_cast<compute_t<T>>(src[r]));
        });
      }
    }
    return Status::ok();
  });
}

// ---- GroupNormalization ------------------------------------------------------------------

Result<std::unique_ptr<Kernel>> create_group_norm(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(int64_t groups, init.require_int("num_groups"));
  XONNX_ASSIGN_OR_RETURN(float eps, init.get_float("epsilon", 1e-5f));
  if (init.since_version() >= 21) {
    XONNX_ASSIGN_OR_RETURN(DataType stash, stash_dtype(init));
    (void)stash;
  }
  if (groups < 1) return invalid_argument("num_groups must be >= 1, got ", groups);
  const bool per_channel = init.since_version() >= 21;  // 18: scale/bias per group
  return make_kernel([groups, eps, per_channel](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    XONNX_RETURN_IF_ERROR(check_float(x, "GroupNormalization input"));
    if (x.rank() < 2)
      return invalid_argument("input must have rank >= 2 (N, C, ...), got ", shape_to_string(x.shape()));
    const int64_t N = x.dim(0), C = x.dim(1);
    if (C % groups != 0) return invalid_argument("channels ", C, " not divisible by num_groups ", groups);
    const int64_t sp = x.numel() / std::max<int64_t>(1, N * C);
    const int64_t pn = per_channel ? C : groups;
    const Tensor& s = ctx.input(1);
    const Tensor& b = ctx.input(2);
    if (s.shape() != Shape{pn} || b.shape() != Shape{pn})
      return invalid_argument("scale and bias must have shape [", pn, "], got ", shape_to_string(s.shape()), " and ",
                              shape_to_string(b.shape()));
    const std::vector<double> sv = load_doubles(s), bv = load_doubles(b);
    const int64_t cg = C / groups;
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), x.shape()));
    XONNX_DISPATCH_FLOAT(x.dtype(), return unsupported("GroupNormalization on ", dtype_name(x.dtype())), {
      normalize_rows(x.data<T>(), y->data<T>(), N * groups, cg * sp, eps, false, [&](int64_t r, int64_t j, double xh) {
        const int64_t g = r % groups;
        const int64_t k = per_channel ? g * cg + j / std::max<int64_t>(1, sp) : g;
        return xh * sv[k] + bv[k];
      });
    });
    return Status::ok();
  });
}

}  // namespace

void register_normalization_ops(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "BatchNormalization", 1, kLatestVersion, create_batch_norm);
  XONNX_REGISTER(registry, "", "InstanceNormalization", 1, kLatestVersion, create_instance_norm);
  XONNX_REGISTER(registry, "", "LayerNormalization", 17, kLatestVersion, create_layer_norm<false>);
  XONNX_REGISTER(registry, "", "RMSNormalization", 23, kLatestVersion, create_layer_norm<true>);
  XONNX_REGISTER(registry, "", "GroupNormalization", 18, kLatestVersion, create_group_norm);
  register_normalization_misc_ops(registry);
}

}  // namespace xonnx
