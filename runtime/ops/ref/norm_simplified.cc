// Reference kernels: RMS normalization as ONNX Runtime's contrib ops spell it (float32).
//  - SimplifiedLayerNormalization (default domain, an ORT contrib op): Y = X / sqrt(mean(X^2) +
//    epsilon) * scale over the dims from `axis`; optional output 1 = that 1 / sqrt(...), shaped
//    like X with the normalized dims set to 1.
//  - com.microsoft SkipSimplifiedLayerNormalization: the same over the last dim of
//    input + skip (+ bias); outputs output, mean (never produced, as ORT's simplified form has
//    no mean), inv_std_var and input_skip_bias_sum (the residual stream the next layer reads).
//    skip is [B, S, D], [1, S, D] or [S, D]; gamma and bias are [D].
#include <algorithm>
#include <cmath>
#include <vector>

#include "runtime/ops/registry.h"

namespace xonnx {
namespace {

Status check_f32(const Tensor& t, const char* what) {
  if (!t.defined()) return invalid_argument(what, " is required");
  if (t.dtype() != DataType::kFloat) return unsupported(what, " of type ", dtype_name(t.dtype()), " (float32 only)");
  return Status::ok();
}

// Normalizes rows of `inner` values of `x` into y with weights `w` ([inner]); inv[r] receives
// each row's 1 / rms when given.
void rms_rows(const float* x, float* y, int64_t rows, int64_t inner, const float* w, double eps, float* inv) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * inner;
    double ss = 0;
    for (int64_t j = 0; j < inner; ++j) ss += static_cast<double>(xr[j]) * xr[j];
    const double iv = 1.0 / std::sqrt(ss / static_cast<double>(inner) + eps);
    for (int64_t j = 0; j < inner; ++j) y[r * inner + j] = static_cast<float>(xr[j] * iv * w[j]);
    if (inv) inv[r] = static_cast<float>(iv);
  }
}

Result<std::unique_ptr<Kernel>> create_simplified_layer_norm(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(int64_t axis, init.get_int("axis", -1));
  XONNX_ASSIGN_OR_RETURN(float eps, init.get_float("epsilon", 1e-5f));
  return make_kernel([axis, eps](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    const Tensor& scale = ctx.input(1);
    XONNX_RETURN_IF_ERROR(check_f32(x, "X"));
    XONNX_RETURN_IF_ERROR(check_f32(scale, "scale"));
    XONNX_ASSIGN_OR_RETURN(int64_t ax, normalize_axis(axis, static_cast<int64_t>(x.rank())));
    int64_t rows = 1, inner = 1;
    for (size_t i = 0; i < x.rank(); ++i) (static_cast<int64_t>(i) < ax ? rows : inner) *= x.dim(i);
    const Shape norm_dims(x.shape().begin() + ax, x.shape().end());
    if (scale.numel() != inner || scale.rank() > norm_dims.size() ||
        !std::equal(scale.shape().rbegin(), scale.shape().rend(), norm_dims.rbegin())) {
      return invalid_argument("scale ", shape_to_string(scale.shape()), " must cover the normalized dims ",
                              shape_to_string(norm_dims));
    }
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DataType::kFloat, x.shape()));
    float* inv = nullptr;
    if (ctx.num_outputs() > 1 && ctx.output_wanted(1)) {
      Shape s = x.shape();
      for (size_t i = static_cast<size_t>(ax); i < s.size(); ++i) s[i] = 1;
      XONNX_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output_uninitialized(1, DataType::kFloat, s));
      inv = t->data<float>();
    }
    rms_rows(x.data<float>(), y->data<float>(), rows, inner, scale.data<float>(), eps, inv);
    return Status::ok();
  });
}

Result<std::unique_ptr<Kernel>> create_skip_simplified_layer_norm(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(float eps, init.get_float("epsilon", 1e-5f));
  if (init.num_outputs() > 1 && !init.node().outputs[1].empty()) {
    return unsupported("output 1 (mean): the simplified form has none");
  }
  return make_kernel([eps](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    const Tensor& skip = ctx.input(1);
    const Tensor& gamma = ctx.input(2);
    XONNX_RETURN_IF_ERROR(check_f32(x, "input"));
    XONNX_RETURN_IF_ERROR(check_f32(skip, "skip"));
    XONNX_RETURN_IF_ERROR(check_f32(gamma, "gamma"));
    if (x.rank() < 2 || x.rank() > 3)
      return invalid_argument("input must be 2-D or 3-D, got ", shape_to_string(x.shape()));
    const int64_t D = x.dim(x.rank() - 1);
    const int64_t rows = x.numel() / std::max<int64_t>(D, 1);
    const int64_t S = x.rank() == 3 ? x.dim(1) : rows;
    // skip repeats every skip_rows rows (broadcast over the batch) or matches input.
    const int64_t skip_rows = skip.numel() / std::max<int64_t>(D, 1);
    const bool skip_ok =
        skip.rank() >= 1 && skip.dim(skip.rank() - 1) == D &&
        (skip.shape() == x.shape() ||
         (x.rank() == 3 && skip_rows == S && (skip.shape() == Shape{S, D} || skip.shape() == Shape{1, S, D})));
    if (!skip_ok) {
      return invalid_argument("skip ", shape_to_string(skip.shape()), " must be the input's shape ",
                              shape_to_string(x.shape()), ", [1, S, D] or [S, D]");
    }
    if (gamma.numel() != D || gamma.rank() != 1)
      return invalid_argument("gamma must be [", D, "], got ", shape_to_string(gamma.shape()));
    const float* bias = nullptr;
    if (ctx.has_input(3)) {
      XONNX_RETURN_IF_ERROR(check_f32(ctx.input(3), "bias"));
      if (ctx.input(3).shape() != Shape{D}) {
        return invalid_argument("bias must be [", D, "], got ", shape_to_string(ctx.input(3).shape()));
      }
      bias = ctx.input(3).data<float>();
    }
    // The sum goes to output 3 when wanted, else to scratch.
    std::vector<float> scratch;
    float* sum = nullptr;
    if (ctx.num_outputs() > 3 && ctx.output_wanted(3)) {
      XONNX_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output_uninitialized(3, DataType::kFloat, x.shape()));
      sum = t->data<float>();
    } else {
      scratch.resize(static_cast<size_t>(x.numel()));
      sum = scratch.data();
    }
    const float* xp = x.data<float>();
    const float* sp = skip.data<float>();
    for (int64_t r = 0; r < rows; ++r) {
      const float* sr = sp + (r % skip_rows) * D;
      for (int64_t j = 0; j < D; ++j) sum[r * D + j] = xp[r * D + j] + sr[j] + (bias ? bias[j] : 0.0f);
    }
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DataType::kFloat, x.shape()));
    float* inv = nullptr;
    if (ctx.num_outputs() > 2 && ctx.output_wanted(2)) {
      Shape s = x.shape();
      s.back() = 1;
      XONNX_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output_uninitialized(2, DataType::kFloat, s));
      inv = t->data<float>();
    }
    rms_rows(sum, y->data<float>(), rows, D, gamma.data<float>(), eps, inv);
    return Status::ok();
  });
}

}  // namespace

void register_simplified_norm_ops(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "SimplifiedLayerNormalization", 1, kLatestVersion, create_simplified_layer_norm);
  XONNX_REGISTER(registry, "com.microsoft", "SkipSimplifiedLayerNormalization", 1, kLatestVersion,
                 create_skip_simplified_layer_norm);
}

}  // namespace xonnx
