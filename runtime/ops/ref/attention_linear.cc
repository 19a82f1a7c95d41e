// Reference kernel: LinearAttention (opset 27), recurrent linear attention over packed
// (B, T, H*D) inputs with a (B, H_kv, d_k, d_v) state:
//   linear:      S_t = S_{t-1} + k_t v_t^T
//   gated:       S_t = exp(g_t) S_{t-1} + k_t v_t^T
//   delta:       S_t = S_{t-1} + k_t (beta_t (v_t - S_{t-1}^T k'_t))^T
//   gated_delta: S_t = exp(g_t) S_{t-1} + k_t (beta_t (v_t - (exp(g_t) S_{t-1})^T k'_t))^T
//   o_t = scale * q_t^T S_t   (query head h reads KV head h / (H_q / H_kv))
// where k'_t = erase_gate_t * k_t when erase_gate is given, else k_t.
// The recurrence runs in double; output takes the query type, present_state the type of
// past_state (the query type when past_state is absent).
#include <cmath>
#include <string>
#include <vector>

#include "runtime/ops/ref/common.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace {

using ref::check_scratch;
using ref::is_float_type;
using ref::load_float_doubles;
using ref::store_doubles;

struct LinearAttentionConfig {
  int64_t q_heads = 0;
  int64_t kv_heads = 0;
  double scale = 0.0;  // 0: 1/sqrt(d_k)
  bool gating = false;
  bool delta = false;
};

Result<std::unique_ptr<Kernel>> create_linear_attention(const KernelInit& init) {
  LinearAttentionConfig cfg;
  if (!init.has_attr("q_num_heads") || !init.has_attr("kv_num_heads")) {
    return invalid_model("q_num_heads and kv_num_heads are required");
  }
  XONNX_ASSIGN_OR_RETURN(cfg.q_heads, init.require_int("q_num_heads"));
  XONNX_ASSIGN_OR_RETURN(cfg.kv_heads, init.require_int("kv_num_heads"));
  if (cfg.q_heads <= 0 || cfg.kv_heads <= 0 || cfg.q_heads % cfg.kv_heads != 0) {
    return invalid_model("q_num_heads (", cfg.q_heads, ") must be a positive multiple of kv_num_heads (", cfg.kv_heads,
                         ")");
  }
  XONNX_ASSIGN_OR_RETURN(float scale, init.get_float("scale", 0.0f));
  cfg.scale = scale;
  XONNX_ASSIGN_OR_RETURN(int64_t chunk, init.get_int("chunk_size", 64));
  (void)chunk;  // a tuning hint; no effect on the result
  XONNX_ASSIGN_OR_RETURN(std::string rule, init.get_string("update_rule", "gated_delta"));
  if (rule != "linear" && rule != "gated" && rule != "delta" && rule != "gated_delta") {
    return invalid_model("update_rule must be 'linear', 'gated', 'delta' or 'gated_delta', got '", rule, "'");
  }
  cfg.gating = rule == "gated" || rule == "gated_delta";
  cfg.delta = rule == "delta" || rule == "gated_delta";
  if (cfg.gating != init.has_input(4)) {
    return invalid_model("update_rule '", rule, "' ", cfg.gating ? "requires" : "forbids", " the decay input");
  }
  if (cfg.delta != init.has_input(5)) {
    return invalid_model("update_rule '", rule, "' ", cfg.delta ? "requires" : "forbids", " the beta input");
  }
  if (!cfg.delta && init.has_input(6)) {
    return invalid_model("update_rule '", rule, "' forbids the erase_gate input");
  }

  return make_kernel([cfg](KernelContext& ctx) -> Status {
    const Tensor& q = ctx.input(0);
    const Tensor& k = ctx.input(1);
    const Tensor& v = ctx.input(2);
    if (!q.defined() || !k.defined() || !v.defined()) {
      return invalid_argument("query, key and value are required");
    }
    const char* names[3] = {"query", "key", "value"};
    const Tensor* qkv[3] = {&q, &k, &v};
    for (int i = 0; i < 3; ++i) {
      if (qkv[i]->rank() != 3) {
        return invalid_argument(names[i], " must be rank 3 (B, T, H*D), got shape ", shape_to_string(qkv[i]->shape()));
      }
      if (qkv[i]->dtype() != q.dtype()) {
        return invalid_argument(names[i], " type ", dtype_name(qkv[i]->dtype()), " differs from query type ",
                                dtype_name(q.dtype()));
      }
    }
    const int64_t B = q.dim(0), T = q.dim(1);
    const int64_t Hq = cfg.q_heads, Hkv = cfg.kv_heads, G = Hq / Hkv;
    for (int i = 1; i < 3; ++i) {
      if (qkv[i]->dim(0) != B || qkv[i]->dim(1) != T) {
        return invalid_argument(names[i], " shape ", shape_to_string(qkv[i]->shape()),
                                " does not match query batch/sequence (", B, ", ", T, ")");
      }
    }
    if (q.dim(2) % Hq != 0) {
      return invalid_argument("query last dim ", q.dim(2), " is not divisible by q_num_heads ", Hq);
    }
    const int64_t dk = q.dim(2) / Hq;
    if (k.dim(2) != Hkv * dk) {
      return invalid_argument("key last dim ", k.dim(2), " must be kv_num_heads * d_k = ", Hkv * dk);
    }
    if (v.dim(2) % Hkv != 0) {
      return invalid_argument("value last dim ", v.dim(2), " is not divisible by kv_num_heads ", Hkv);
    }
    const int64_t dv = v.dim(2) / Hkv;

    // decay: (B, T, H_kv) per head or (B, T, H_kv*d_k) per key dim.
    const Tensor* decay = cfg.gating ? &ctx.input(4) : nullptr;
    bool decay_per_head = false;
    if (decay) {
      if (!decay->defined() || decay->rank() != 3 || decay->dim(0) != B || decay->dim(1) != T ||
          (decay->dim(2) != Hkv && decay->dim(2) != Hkv * dk)) {
        return invalid_argument("decay must have shape (", B, ", ", T, ", ", Hkv, ") or (", B, ", ", T, ", ", Hkv * dk,
                                "), got ", decay->defined() ? shape_to_string(decay->shape()) : "nothing");
      }
      decay_per_head = decay->dim(2) == Hkv;
    }
    // beta: (B, T, H_kv) or (B, T, 1).
    const Tensor* beta = cfg.delta ? &ctx.input(5) : nullptr;
    if (beta) {
      if (!beta->defined() || beta->rank() != 3 || beta->dim(0) != B || beta->dim(1) != T ||
          (beta->dim(2) != Hkv && beta->dim(2) != 1)) {
        return invalid_argument("beta must have shape (", B, ", ", T, ", ", Hkv, ") or (", B, ", ", T, ", 1), got ",
                                beta->defined() ? shape_to_string(beta->shape()) : "nothing");
      }
    }
    const Tensor* erase = (cfg.delta && ctx.has_input(6)) ? &ctx.input(6) : nullptr;
    if (erase) {
      if (erase->rank() != 3 || erase->dim(0) != B || erase->dim(1) != T || erase->dim(2) != Hkv * dk) {
        return invalid_argument("erase_gate must have shape (", B, ", ", T, ", ", Hkv * dk, "), got ",
                                shape_to_string(erase->shape()));
      }
    }
    const Tensor* past = ctx.has_input(3) ? &ctx.input(3) : nullptr;
    if (past && past->shape() != Shape{B, Hkv, dk, dv}) {
      return invalid_argument("past_state shape ", shape_to_string(past->shape()), " does not match (", B, ", ", Hkv,
                              ", ", dk, ", ", dv, ")");
    }

    XONNX_ASSIGN_OR_RETURN(std::vector<double> qd, load_float_doubles(q, "query"));
    XONNX_ASSIGN_OR_RETURN(std::vector<double> kd, load_float_doubles(k, "key"));
    XONNX_ASSIGN_OR_RETURN(std::vector<double> vd, load_float_doubles(v, "value"));
    std::vector<double> gd, bd, ed;
    if (decay) {
      XONNX_ASSIGN_OR_RETURN(gd, load_float_doubles(*decay, "decay"));
    }
    if (beta) {
      XONNX_ASSIGN_OR_RETURN(bd, load_float_doubles(*beta, "beta"));
    }
    if (erase) {
      XONNX_ASSIGN_OR_RETURN(ed, load_float_doubles(*erase, "erase_gate"));
    }
    XONNX_RETURN_IF_ERROR(check_scratch(ctx, "the state", sizeof(double), {B, Hkv, dk, dv}));
    XONNX_RETURN_IF_ERROR(check_scratch(ctx, "the output", sizeof(double), {B, T, Hq, dv}));
    std::vector<double> state;
    if (past) {
      XONNX_ASSIGN_OR_RETURN(state, load_float_doubles(*past, "past_state"));
    } else {
      state.assign(static_cast<size_t>(B * Hkv * dk * dv), 0.0);
    }
    const double scale = cfg.scale != 0.0 ? cfg.scale : 1.0 / std::sqrt(static_cast<double>(dk));

    std::vector<double> out(static_cast<size_t>(B * T * Hq * dv), 0.0);
    std::vector<double> vt(static_cast<size_t>(dv)), kerase(static_cast<size_t>(dk));
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t t = 0; t < T; ++t) {
        for (int64_t h = 0; h < Hkv; ++h) {
          double* S = state.data() + (b * Hkv + h) * dk * dv;
          const double* kt = kd.data() + (b * T + t) * Hkv * dk + h * dk;
          const double* vin = vd.data() + (b * T + t) * Hkv * dv + h * dv;
          if (cfg.gating) {
            for (int64_t i = 0; i < dk; ++i) {
              const double g = decay_per_head ? gd[(b * T + t) * Hkv + h] : gd[(b * T + t) * Hkv * dk + h * dk + i];
              const double f = std::exp(g);
              for (int64_t m = 0; m < dv; ++m) S[i * dv + m] *= f;
            }
          }
          for (int64_t m = 0; m < dv; ++m) vt[m] = vin[m];
          if (cfg.delta) {
            for (int64_t i = 0; i < dk; ++i) {
              kerase[i] = erase ? ed[(b * T + t) * Hkv * dk + h * dk + i] * kt[i] : kt[i];
            }
            const int64_t bw = beta->dim(2);
            const double bt = bd[(b * T + t) * bw + (bw == 1 ? 0 : h)];
            for (int64_t m = 0; m < dv; ++m) {
              double retrieved = 0.0;
              for (int64_t i = 0; i < dk; ++i) retrieved += S[i * dv + m] * kerase[i];
              vt[m] = bt * (vt[m] - retrieved);
            }
          }
          for (int64_t i = 0; i < dk; ++i) {
            for (int64_t m = 0; m < dv; ++m) S[i * dv + m] += kt[i] * vt[m];
          }
          for (int64_t hq = h * G; hq < (h + 1) * G; ++hq) {
            const double* qt = qd.data() + (b * T + t) * Hq * dk + hq * dk;
            double* o = out.data() + (b * T + t) * Hq * dv + hq * dv;
            for (int64_t m = 0; m < dv; ++m) {
              double acc = 0.0;
              for (int64_t i = 0; i < dk; ++i) acc += qt[i] * S[i * dv + m];
              o[m] = scale * acc;
            }
          }
        }
      }
    }
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, q.dtype(), {B, T, Hq * dv}));
    store_doubles(y, out);
    if (ctx.num_outputs() > 1 && ctx.output_wanted(1)) {
      const DataType sdt = past ? past->dtype() : q.dtype();
      XONNX_ASSIGN_OR_RETURN(Tensor * ps, ctx.allocate_output(1, sdt, {B, Hkv, dk, dv}));
      store_doubles(ps, state);
    }
    return Status::ok();
  });
}

}  // namespace

void register_linear_attention_ops(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "LinearAttention", 27, kLatestVersion, create_linear_attention);
}

}  // namespace xonnx
