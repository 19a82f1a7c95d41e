// Reference kernels: softmax family. Softmax, LogSoftmax, Hardmax, NegativeLogLikelihoodLoss,
// SoftmaxCrossEntropyLoss.
//
// Softmax/LogSoftmax/Hardmax before opset 13 coerce the input to 2-D at `axis` (default 1)
// and normalise over the flattened trailing block; from opset 13 they normalise along the
// single dimension `axis` (default -1).
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "runtime/ops/ref/common.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace {

enum class SmKind { kSoftmax, kLogSoftmax, kHardmax };

constexpr const char* sm_name(SmKind k) {
  return k == SmKind::kSoftmax ? "Softmax" : k == SmKind::kLogSoftmax ? "LogSoftmax" : "Hardmax";
}

// Normalises over `n` elements spaced `inner` apart, for each of `outer` blocks and each of
// `inner` positions. Reads with load(i) -> C, writes with store(i, C).
template <SmKind K, typename C, typename Load, typename Store>
void softmax_core(int64_t outer, int64_t n, int64_t inner, Load load, Store store) {
  if (n <= 0) return;
  if (inner == 1) {
    std::vector<double> ebuf(K == SmKind::kSoftmax ? static_cast<size_t>(n) : 0);
    for (int64_t o = 0; o < outer; ++o) {
      const int64_t base = o * n;
      if constexpr (K == SmKind::kHardmax) {
        int64_t best = 0;
        C best_v = load(base);
        if (!std::isnan(best_v)) {
          for (int64_t k = 1; k < n; ++k) {
            const C v = load(base + k);
            if (std::isnan(v)) {  // numpy argmax: the first NaN wins
              best = k;
              break;
            }
            if (v > best_v) {
              best_v = v;
              best = k;
            }
          }
        }
        for (int64_t k = 0; k < n; ++k) store(base + k, C(k == best ? 1 : 0));
      } else {
        C m = load(base);
        for (int64_t k = 1; k < n; ++k) {
          const C v = load(base + k);
          if (v > m || std::isnan(v)) m = v;
        }
        double sum = 0;
        if constexpr (K == SmKind::kSoftmax) {
          for (int64_t k = 0; k < n; ++k) {
            const double e = std::exp(static_cast<double>(load(base + k) - m));
            ebuf[k] = e;
            sum += e;
          }
          const double inv = 1.0 / sum;
          for (int64_t k = 0; k < n; ++k) store(base + k, static_cast<C>(ebuf[k] * inv));
        } else {
          for (int64_t k = 0; k < n; ++k) sum += std::exp(static_cast<double>(load(base + k) - m));
          const C lse = static_cast<C>(std::log(sum));
          for (int64_t k = 0; k < n; ++k) store(base + k, load(base + k) - m - lse);
        }
      }
    }
    return;
  }
  // Strided: vectorise over the `inner` positions.
  std::vector<C> mx(static_cast<size_t>(inner));
  std::vector<double> sum(static_cast<size_t>(inner));
  std::vector<int64_t> arg(static_cast<size_t>(inner));
  for (int64_t o = 0; o < outer; ++o) {
    const int64_t base = o * n * inner;
    for (int64_t j = 0; j < inner; ++j) {
      mx[j] = load(base + j);
      arg[j] = 0;
      sum[j] = 0;
    }
    for (int64_t k = 1; k < n; ++k) {
      for (int64_t j = 0; j < inner; ++j) {
        const C v = load(base + k * inner + j);
        if (std::isnan(mx[j])) continue;
        if (v > mx[j] || std::isnan(v)) {
          mx[j] = v;
          arg[j] = k;
        }
      }
    }
    if constexpr (K == SmKind::kHardmax) {
      for (int64_t k = 0; k < n; ++k) {
        for (int64_t j = 0; j < inner; ++j) store(base + k * inner + j, C(arg[j] == k ? 1 : 0));
      }
    } else {
      for (int64_t k = 0; k < n; ++k) {
        for (int64_t j = 0; j < inner; ++j) {
          sum[j] += std::exp(static_cast<double>(load(base + k * inner + j) - mx[j]));
        }
      }
      if constexpr (K == SmKind::kSoftmax) {
        for (int64_t j = 0; j < inner; ++j) sum[j] = 1.0 / sum[j];
        for (int64_t k = 0; k < n; ++k) {
          for (int64_t j = 0; j < inner; ++j) {
            const int64_t i = base + k * inner + j;
            store(i, static_cast<C>(std::exp(static_cast<double>(load(i) - mx[j])) * sum[j]));
          }
        }
      } else {
        for (int64_t j = 0; j < inner; ++j) sum[j] = std::log(sum[j]);
        for (int64_t k = 0; k < n; ++k) {
          for (int64_t j = 0; j < inner; ++j) {
            const int64_t i = base + k * inner + j;
            store(i, static_cast<C>(static_cast<double>(load(i) - mx[j]) - sum[j]));
          }
        }
      }
    }
  }
}

template <SmKind K>
Result<std::unique_ptr<Kernel>> create_softmax(const KernelInit& init) {
  const bool legacy = init.since_version() < 13;
  XONNX_ASSIGN_OR_RETURN(int64_t axis_attr, init.get_int("axis", legacy ? 1 : -1));
  return make_kernel([legacy, axis_attr](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    if (!x.defined()) return invalid_argument("input is missing or not a tensor");
    const Shape& shape = x.shape();
    const int64_t rank = static_cast<int64_t>(shape.size());
    XONNX_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(axis_attr, rank));
    int64_t outer = 1, n = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
    if (legacy) {
      for (int64_t d = axis; d < rank; ++d) n *= shape[d];
    } else {
      n = shape[axis];
      for (int64_t d = axis + 1; d < rank; ++d) inner *= shape[d];
    }
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), shape));
    if (y->numel() == 0) return Status::ok();
    XONNX_DISPATCH_FLOAT(x.dtype(), return unsupported(sm_name(K), " does not support type ", dtype_name(x.dtype())), {
      using C = compute_t<T>;
      const T* in = x.data<T>();
      T* out = y->data<T>();
      if constexpr (std::is_same_v<C, T>) {
        softmax_core<K, C>(
            outer, n, inner, [in](int64_t i) { return in[i]; },
            [out](int64_t i, auto v) { out[i] = v; });  // generic: clang checks a discarded non-dependent branch
      } else {
        std::vector<C> tmp(static_cast<size_t>(x.numel()));
        softmax_core<K, C>(
            outer, n, inner, [in](int64_t i) { return to_compute(in[i]); }, [&tmp](int64_t i, C v) { tmp[i] = v; });
        for (size_t i = 0; i < tmp.size(); ++i) out[i] = from_compute<T>(tmp[i]);
      }
    });
    return Status::ok();
  });
}

// ---------------------------------------------------------------------------------------
// NegativeLogLikelihoodLoss / SoftmaxCrossEntropyLoss
// ---------------------------------------------------------------------------------------
enum class Reduction { kNone, kSum, kMean };

struct LossAttrs {
  Reduction reduction = Reduction::kMean;
  bool has_ignore = false;
  int64_t ignore_index = 0;
};

Result<LossAttrs> parse_loss_attrs(const KernelInit& init) {
  LossAttrs a;
  XONNX_ASSIGN_OR_RETURN(std::string r, init.get_string("reduction", "mean"));
  if (r == "none") {
    a.reduction = Reduction::kNone;
  } else if (r == "sum") {
    a.reduction = Reduction::kSum;
  } else if (r == "mean") {
    a.reduction = Reduction::kMean;
  } else {
    return invalid_model("reduction must be \"none\", \"sum\" or \"mean\", got \"", r, "\"");
  }
  a.has_ignore = init.has_attr("ignore_index");
  XONNX_ASSIGN_OR_RETURN(a.ignore_index, init.get_int("ignore_index", 0));
  return a;
}

// Validates input [N, C, d...], target [N, d...] and weight [C]; returns N, C, D.
struct LossDims {
  int64_t N = 0, C = 0, D = 1;
  Shape target_shape;
};

Result<LossDims> check_loss_inputs(const Tensor& x, const Tensor& target, const Tensor* weight, const char* x_name,
                                   const char* t_name) {
  if (!x.defined() || !target.defined()) return invalid_argument(x_name, " and ", t_name, " are required");
  if (x.rank() < 2) {
    return invalid_argument(x_name, " must have rank >= 2 ([N, C, ...]), got shape ", shape_to_string(x.shape()));
  }
  if (target.dtype() != DataType::kInt32 && target.dtype() != DataType::kInt64) {
    return invalid_argument(t_name, " must be int32 or int64, got ", dtype_name(target.dtype()));
  }
  LossDims d;
  d.N = x.dim(0);
  d.C = x.dim(1);
  d.target_shape = {d.N};
  for (size_t i = 2; i < x.rank(); ++i) {
    d.D *= x.dim(i);
    d.target_shape.push_back(x.dim(i));
  }
  if (target.shape() != d.target_shape) {
    return invalid_argument(t_name, " shape ", shape_to_string(target.shape()), " does not match ", x_name, " shape ",
                            shape_to_string(x.shape()), " (expected ", shape_to_string(d.target_shape), ")");
  }
  if (weight && weight->defined()) {
    if (weight->dtype() != x.dtype()) {
      return invalid_argument("weight type ", dtype_name(weight->dtype()), " differs from ", x_name, " type ",
                              dtype_name(x.dtype()));
    }
    if (weight->shape() != Shape{d.C}) {
      return invalid_argument("weight shape ", shape_to_string(weight->shape()), " must be [", d.C, "]");
    }
  }
  return d;
}

// Writes the loss (output 0) from log-probabilities lp(n, c, d).
template <typename LogProb>
Status nll_finish(KernelContext& ctx, const LossAttrs& attrs, const LossDims& dims, DataType dt, const Tensor& target,
                  const Tensor* weight, LogProb lp) {
  const int64_t count = dims.N * dims.D;
  std::vector<double> loss(static_cast<size_t>(count));
  double wsum = 0;
  for (int64_t n = 0; n < dims.N; ++n) {
    for (int64_t d = 0; d < dims.D; ++d) {
      const int64_t i = n * dims.D + d;
      const int64_t t = target.get_as_int64(i);
      if (attrs.has_ignore && t == attrs.ignore_index) {
        loss[i] = 0;
        continue;
      }
      if (t < 0 || t >= dims.C) {
        return invalid_argument("target value ", t, " at index ", i, " is out of range [0, ", dims.C, ")");
      }
      const double w = weight ? weight->get_as_double(t) : 1.0;
      loss[i] = -lp(n, t, d) * w;
      wsum += w;
    }
  }
  if (attrs.reduction == Reduction::kNone) {
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dt, dims.target_shape));
    XONNX_DISPATCH_FLOAT(dt, return unsupported("loss type ", dtype_name(dt)), {
      T* out = y->data<T>();
      for (int64_t i = 0; i < count; ++i) out[i] = from_compute<T>(static_cast<compute_t<T>>(loss[i]));
    });
    return Status::ok();
  }
  double total = 0;
  for (double v : loss) total += v;
  if (attrs.reduction == Reduction::kMean) total /= wsum;  // 0/0 -> NaN, as numpy
  XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dt, Shape{}));
  XONNX_DISPATCH_FLOAT(dt, return unsupported("loss type ", dtype_name(dt)),
                       { y->data<T>()[0] = from_compute<T>(static_cast<compute_t<T>>(total)); });
  return Status::ok();
}

Result<std::unique_ptr<Kernel>> create_nll(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(LossAttrs attrs, parse_loss_attrs(init));
  return make_kernel([attrs](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    const Tensor& target = ctx.input(1);
    const Tensor* weight = ctx.has_input(2) ? &ctx.input(2) : nullptr;
    if (x.defined() && !dtype_is_float(x.dtype())) {
      return unsupported("NegativeLogLikelihoodLoss does not support type ", dtype_name(x.dtype()));
    }
    XONNX_ASSIGN_OR_RETURN(LossDims dims, check_loss_inputs(x, target, weight, "input", "target"));
    const int64_t C = dims.C, D = dims.D;
    return nll_finish(ctx, attrs, dims, x.dtype(), target, weight,
                      [&x, C, D](int64_t n, int64_t c, int64_t d) { return x.get_as_double((n * C + c) * D + d); });
  });
}

Result<std::unique_ptr<Kernel>> create_sce(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(LossAttrs attrs, parse_loss_attrs(init));
  return make_kernel([attrs](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    const Tensor& target = ctx.input(1);
    const Tensor* weight = ctx.has_input(2) ? &ctx.input(2) : nullptr;
    if (x.defined() && !dtype_is_float(x.dtype())) {
      return unsupported("SoftmaxCrossEntropyLoss does not support type ", dtype_name(x.dtype()));
    }
    XONNX_ASSIGN_OR_RETURN(LossDims dims, check_loss_inputs(x, target, weight, "scores", "labels"));
    const int64_t C = dims.C, D = dims.D;
    // log_softmax over axis 1, in double.
    std::vector<double> lp(static_cast<size_t>(x.numel()));
    softmax_core<SmKind::kLogSoftmax, double>(
        dims.N, C, D, [&x](int64_t i) { return x.get_as_double(i); }, [&lp](int64_t i, double v) { lp[i] = v; });
    if (ctx.num_outputs() > 1 && ctx.output_wanted(1)) {
      XONNX_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(1, x.dtype(), x.shape()));
      XONNX_DISPATCH_FLOAT(x.dtype(), return unsupported("type ", dtype_name(x.dtype())), {
        T* o = out->data<T>();
        for (size_t i = 0; i < lp.size(); ++i) o[i] = from_compute<T>(static_cast<compute_t<T>>(lp[i]));
      });
    }
    return nll_finish(ctx, attrs, dims, x.dtype(), target, weight, [&lp, C, D](int64_t n, int64_t c, int64_t d) {
      return lp[static_cast<size_t>((n * C + c) * D + d)];
    });
  });
}

}  // namespace

void register_softmax_ops(OpRegistry& registry) {
  // v1/v11: 2-D coercion at axis (default 1); v13: single axis (default -1).
  XONNX_REGISTER(registry, "", "Softmax", 1, kLatestVersion, create_softmax<SmKind::kSoftmax>);
  XONNX_REGISTER(registry, "", "LogSoftmax", 1, kLatestVersion, create_softmax<SmKind::kLogSoftmax>);
  XONNX_REGISTER(registry, "", "Hardmax", 1, kLatestVersion, create_softmax<SmKind::kHardmax>);
  XONNX_REGISTER(registry, "", "NegativeLogLikelihoodLoss", 12, kLatestVersion, create_nll);
  XONNX_REGISTER(registry, "", "SoftmaxCrossEntropyLoss", 12, kLatestVersion, create_sce);
}

}  // namespace xonnx
