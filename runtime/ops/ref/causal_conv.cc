// Reference kernel: CausalConvWithState (opset 27), a stateful causal depthwise 1-D
// convolution: output = act(depthwise_conv(concat(past_state or zeros, input))), and
// present_state = the last k-1 positions of that concatenation.
//
// Accumulation is in double; the convolution result is rounded to the tensor type before the
// fused SiLU (as the spec's function body does: Conv in T, then the activation).
#include <cmath>
#include <string>
#include <vector>

#include "runtime/ops/ref/common.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace {

using ref::is_float_type;
using ref::load_float_doubles;
using ref::store_doubles;

Result<std::unique_ptr<Kernel>> create_causal_conv(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(std::string activation, init.get_string("activation", "none"));
  if (activation != "none" && activation != "silu" && activation != "swish") {
    return invalid_model("activation must be one of 'none', 'silu', 'swish', got '", activation, "'");
  }
  const bool silu = activation != "none";
  return make_kernel([silu](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    if (!x.defined() || !w.defined()) return invalid_argument("input and weight are required");
    if (!is_float_type(x.dtype())) {
      return unsupported("input type ", dtype_name(x.dtype()), " (expected float, double, float16 or bfloat16)");
    }
    if (x.rank() != 3) {
      return invalid_argument("input must be rank 3 (batch_size, channels, length), got shape ",
                              shape_to_string(x.shape()));
    }
    const int64_t B = x.dim(0), C = x.dim(1), L = x.dim(2);
    if (w.dtype() != x.dtype()) {
      return invalid_argument("weight type ", dtype_name(w.dtype()), " differs from input type ",
                              dtype_name(x.dtype()));
    }
    if (w.rank() != 3 || w.dim(0) != C || w.dim(1) != 1 || w.dim(2) < 1) {
      return invalid_argument("weight must have shape (channels=", C, ", 1, k >= 1), got ", shape_to_string(w.shape()));
    }
    const int64_t K = w.dim(2);
    const Tensor* bias = nullptr;
    if (ctx.has_input(2)) {
      bias = &ctx.input(2);
      if (bias->dtype() != x.dtype()) {
        return invalid_argument("bias type ", dtype_name(bias->dtype()), " differs from input type ",
                                dtype_name(x.dtype()));
      }
      if (bias->rank() != 1 || bias->dim(0) != C) {
        return invalid_argument("bias must have shape (", C, "), got ", shape_to_string(bias->shape()));
      }
    }
    const Tensor* past = nullptr;
    if (ctx.has_input(3)) {
      past = &ctx.input(3);
      if (past->dtype() != x.dtype()) {
        return invalid_argument("past_state type ", dtype_name(past->dtype()), " differs from input type ",
                                dtype_name(x.dtype()));
      }
      if (past->rank() != 3 || past->dim(0) != B || past->dim(1) != C || past->dim(2) != K - 1) {
        return invalid_argument("past_state must have shape (", B, ", ", C, ", ", K - 1, "), got ",
                                shape_to_string(past->shape()));
      }
    }
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), {B, C, L}));
    Tensor* state = nullptr;
    if (ctx.num_outputs() > 1 && ctx.output_wanted(1)) {
      XONNX_ASSIGN_OR_RETURN(state, ctx.allocate_output(1, x.dtype(), {B, C, K - 1}));
    }
    if (B == 0 || C == 0) return Status::ok();  // no rows, however long L is
    const int64_t P = K - 1 + L;                // padded length
    XONNX_DISPATCH_FLOAT(x.dtype(), return unsupported("type ", dtype_name(x.dtype())), {
      const T* xp = x.data<T>();
      const T* wp = w.data<T>();
      const T* bp = bias ? bias->data<T>() : nullptr;
      const T* pp = past ? past->data<T>() : nullptr;
      T* yp = y->data<T>();
      T* sp = state ? state->data<T>() : nullptr;
      std::vector<double> padded(static_cast<size_t>(P));
      std::vector<T> padded_raw(static_cast<size_t>(P));
      for (int64_t b = 0; b < B; ++b) {
        for (int64_t c = 0; c < C; ++c) {
          const int64_t row = b * C + c;
          for (int64_t j = 0; j < K - 1; ++j) {
            padded_raw[j] = pp ? pp[row * (K - 1) + j] : from_compute<T>(compute_t<T>(0));
          }
          for (int64_t j = 0; j < L; ++j) padded_raw[K - 1 + j] = xp[row * L + j];
          for (int64_t j = 0; j < P; ++j) padded[j] = static_cast<double>(to_compute(padded_raw[j]));
          const T* wc = wp + c * K;
          const double bv = bp ? static_cast<double>(to_compute(bp[c])) : 0.0;
          for (int64_t t = 0; t < L; ++t) {
            double acc = bv;
            for (int64_t i = 0; i < K; ++i) {
              acc += static_cast<double>(to_compute(wc[i])) * padded[t + i];
            }
            T conv = from_compute<T>(static_cast<compute_t<T>>(acc));
            if (silu) {
              const double v = static_cast<double>(to_compute(conv));
              conv = from_compute<T>(static_cast<compute_t<T>>(v / (1.0 + std::exp(-v))));
            }
            yp[row * L + t] = conv;
          }
          if (sp) {
            for (int64_t j = 0; j < K - 1; ++j) sp[row * (K - 1) + j] = padded_raw[L + j];
          }
        }
      }
    });
    return Status::ok();
  });
}

}  // namespace

void register_causal_conv_ops(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "CausalConvWithState", 27, kLatestVersion, create_causal_conv);
}

}  // namespace xonnx
