// Reference kernels: attention family (Attention opset 23/24, RotaryEmbedding opset 23).
//
// Arithmetic happens in double; outputs are narrowed to the type of Q (or of the input).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "runtime/ops/ref/common.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace {

using ref::is_float_type;
using ref::load_doubles;
using ref::store_doubles;

// ---------------------------------------------------------------------------------------
// Attention

struct AttentionConfig {
  bool is_causal = false;
  int64_t q_num_heads = 0;   // 0: not given
  int64_t kv_num_heads = 0;  // 0: not given
  int64_t qk_mode = 0;
  bool has_scale = false;
  double scale = 0.0;
  double softcap = 0.0;
};

Result<std::unique_ptr<Kernel>> create_attention(const KernelInit& init) {
  AttentionConfig cfg;
  XONNX_ASSIGN_OR_RETURN(int64_t causal, init.get_int("is_causal", 0));
  cfg.is_causal = causal != 0;
  XONNX_ASSIGN_OR_RETURN(cfg.q_num_heads, init.get_int("q_num_heads", 0));
  XONNX_ASSIGN_OR_RETURN(cfg.kv_num_heads, init.get_int("kv_num_heads", 0));
  if (cfg.q_num_heads < 0 || cfg.kv_num_heads < 0) {
    return invalid_model("q_num_heads and kv_num_heads must be positive");
  }
  XONNX_ASSIGN_OR_RETURN(cfg.qk_mode, init.get_int("qk_matmul_output_mode", 0));
  if (cfg.qk_mode < 0 || cfg.qk_mode > 3) {
    return invalid_model("qk_matmul_output_mode must be 0..3, got ", cfg.qk_mode);
  }
  if (init.has_attr("scale")) {
    XONNX_ASSIGN_OR_RETURN(float s, init.get_float("scale", 1.0f));
    cfg.has_scale = true;
    cfg.scale = s;
  }
  XONNX_ASSIGN_OR_RETURN(float softcap, init.get_float("softcap", 0.0f));
  cfg.softcap = softcap;
  XONNX_ASSIGN_OR_RETURN(int64_t sp, init.get_int("softmax_precision", 0));
  if (sp != 0 && !is_float_type(static_cast<DataType>(sp))) {
    return invalid_model("softmax_precision must be a float type, got ", sp);
  }
  // softmax_precision only allows extra precision; this kernel always uses double.
  return make_kernel([cfg](KernelContext& ctx) -> Status {
    const Tensor& q = ctx.input(0);
    const Tensor& k = ctx.input(1);
    const Tensor& v = ctx.input(2);
    if (!q.defined() || !k.defined() || !v.defined()) {
      return invalid_argument("Q, K and V are required");
    }
    const DataType dt = q.dtype();
    if (!is_float_type(dt)) return unsupported("Q type ", dtype_name(dt), " is not supported");
    if (k.dtype() != dt || v.dtype() != dt) {
      return invalid_argument("K and V must have the type of Q (", dtype_name(dt), ")");
    }
    if (q.rank() != k.rank() || q.rank() != v.rank() || (q.rank() != 3 && q.rank() != 4)) {
      return invalid_argument("Q, K, V must all be 3-D or all 4-D, got ", shape_to_string(q.shape()), ", ",
                              shape_to_string(k.shape()), ", ", shape_to_string(v.shape()));
    }
    const bool three_d = q.rank() == 3;
    const int64_t B = q.dim(0);
    if (k.dim(0) != B || v.dim(0) != B) return invalid_argument("Q, K, V batch sizes differ");
    int64_t qh, kvh, qs, kvs, hd, vhd;
    if (three_d) {
      if (cfg.q_num_heads <= 0 || cfg.kv_num_heads <= 0) {
        return invalid_argument("3-D inputs need the q_num_heads and kv_num_heads attributes");
      }
      qh = cfg.q_num_heads;
      kvh = cfg.kv_num_heads;
      qs = q.dim(1);
      kvs = k.dim(1);
      if (v.dim(1) != kvs) return invalid_argument("K and V sequence lengths differ");
      if (q.dim(2) % qh != 0 || k.dim(2) % kvh != 0 || v.dim(2) % kvh != 0) {
        return invalid_argument("hidden sizes ", q.dim(2), "/", k.dim(2), "/", v.dim(2),
                                " are not divisible by the head counts ", qh, "/", kvh);
      }
      hd = q.dim(2) / qh;
      if (k.dim(2) / kvh != hd) return invalid_argument("Q and K head sizes differ");
      vhd = v.dim(2) / kvh;
    } else {
      qh = q.dim(1);
      kvh = k.dim(1);
      qs = q.dim(2);
      kvs = k.dim(2);
      hd = q.dim(3);
      vhd = v.dim(3);
      if (v.dim(1) != kvh || v.dim(2) != kvs) return invalid_argument("K and V shapes disagree");
      if (k.dim(3) != hd) return invalid_argument("Q and K head sizes differ");
    }
    if (qh <= 0 || kvh <= 0 || qh % kvh != 0) {
      return invalid_argument("q_num_heads ", qh, " must be a multiple of kv_num_heads ", kvh);
    }
    // Load Q, K, V as [B, heads, seq, dim].
    auto to_bhsd = [&](const Tensor& t, int64_t heads, int64_t seq, int64_t dim) {
      std::vector<double> raw = load_doubles(t);
      if (!three_d) return raw;
      std::vector<double> out(raw.size());
      for (int64_t b = 0; b < B; ++b)
        for (int64_t s = 0; s < seq; ++s)
          for (int64_t h = 0; h < heads; ++h)
            for (int64_t d = 0; d < dim; ++d)
              out[((b * heads + h) * seq + s) * dim + d] = raw[((b * seq + s) * heads + h) * dim + d];
      return out;
    };
    std::vector<double> Q = to_bhsd(q, qh, qs, hd);
    std::vector<double> K = to_bhsd(k, kvh, kvs, hd);
    std::vector<double> V = to_bhsd(v, kvh, kvs, vhd);
    int64_t past = 0;
    const bool has_past_k = ctx.has_input(4), has_past_v = ctx.has_input(5);
    if (has_past_k != has_past_v) return invalid_argument("past_key and past_value must be given together");
    if (has_past_k) {
      const Tensor& pk = ctx.input(4);
      const Tensor& pv = ctx.input(5);
      if (pk.dtype() != dt || pv.dtype() != dt) return invalid_argument("past_key/past_value type differs from Q");
      if (pk.rank() != 4 || pv.rank() != 4 || pk.dim(0) != B || pk.dim(1) != kvh || pk.dim(3) != hd || pv.dim(0) != B ||
          pv.dim(1) != kvh || pv.dim(2) != pk.dim(2) || pv.dim(3) != vhd) {
        return invalid_argument("past_key ", shape_to_string(pk.shape()), " / past_value ", shape_to_string(pv.shape()),
                                " do not match [", B, ", ", kvh, ", past, ", hd, "/", vhd, "]");
      }
      past = pk.dim(2);
      std::vector<double> PK = load_doubles(pk), PV = load_doubles(pv);
      const int64_t total = past + kvs;
      std::vector<double> NK(static_cast<size_t>(B * kvh * total * hd)), NV(static_cast<size_t>(B * kvh * total * vhd));
      for (int64_t bh = 0; bh < B * kvh; ++bh) {
        std::copy(PK.begin() + bh * past * hd, PK.begin() + (bh + 1) * past * hd, NK.begin() + bh * total * hd);
        std::copy(K.begin() + bh * kvs * hd, K.begin() + (bh + 1) * kvs * hd, NK.begin() + bh * total * hd + past * hd);
        std::copy(PV.begin() + bh * past * vhd, PV.begin() + (bh + 1) * past * vhd, NV.begin() + bh * total * vhd);
        std::copy(V.begin() + bh * kvs * vhd, V.begin() + (bh + 1) * kvs * vhd,
                  NV.begin() + bh * total * vhd + past * vhd);
      }
      K.swap(NK);
      V.swap(NV);
    }
    const int64_t T = past + kvs;  // total kv length

    // Mask: broadcast to [B, qh, qs, T]; the last dim may be shorter (padded with -inf/false).
    const bool has_mask = ctx.has_input(3);
    std::vector<double> mask_vals;
    int64_t mstride[4] = {0, 0, 0, 0};
    int64_t mask_last = 0;
    if (has_mask) {
      const Tensor& m = ctx.input(3);
      if (m.dtype() != DataType::kBool && m.dtype() != dt) {
        return invalid_argument("attn_mask must be bool or ", dtype_name(dt), ", got ", dtype_name(m.dtype()));
      }
      if (m.rank() < 2 || m.rank() > 4) return invalid_argument("attn_mask must have rank 2..4");
      Shape ms(4 - m.rank(), 1);
      ms.insert(ms.end(), m.shape().begin(), m.shape().end());
      const int64_t target[4] = {B, qh, qs, T};
      for (int i = 0; i < 3; ++i) {
        if (ms[i] != 1 && ms[i] != target[i]) {
          return invalid_argument("attn_mask shape ", shape_to_string(m.shape()), " does not broadcast to [", B, ", ",
                                  qh, ", ", qs, ", ", T, "]");
        }
      }
      if (ms[3] > T) {
        return invalid_argument("attn_mask last dimension ", ms[3], " exceeds total sequence length ", T);
      }
      mask_last = ms[3];
      const std::vector<int64_t> cs = ref::contiguous_strides(ms);
      for (int i = 0; i < 4; ++i) mstride[i] = ms[i] == 1 && i < 3 ? 0 : cs[i];
      mask_vals.resize(static_cast<size_t>(m.numel()));
      const double ninf = -std::numeric_limits<double>::infinity();
      if (m.dtype() == DataType::kBool) {
        const bool* p = m.data<bool>();
        for (int64_t i = 0; i < m.numel(); ++i) mask_vals[i] = p[i] ? 0.0 : ninf;
      } else {
        mask_vals = load_doubles(m);
      }
    }
    std::vector<int64_t> nonpad;
    if (ctx.num_inputs() > 6 && ctx.has_input(6)) {
      const Tensor& np_t = ctx.input(6);
      if (!dtype_is_integer(np_t.dtype()) || np_t.numel() != B) {
        return invalid_argument("nonpad_kv_seqlen must be an integer tensor of shape [", B, "]");
      }
      for (int64_t b = 0; b < B; ++b) {
        nonpad.push_back(np_t.get_as_int64(b));
        if (nonpad.back() < 0 || nonpad.back() > T) {
          return invalid_argument("nonpad_kv_seqlen[", b, "] = ", nonpad.back(), " is outside [0, ", T, "]");
        }
      }
    }
    const double scale = cfg.has_scale ? cfg.scale : 1.0 / std::sqrt(static_cast<double>(hd));
    const double ninf = -std::numeric_limits<double>::infinity();
    const int64_t reps = qh / kvh;

    std::vector<double> Y(static_cast<size_t>(B * qh * qs * vhd), 0.0);
    const bool want_qk = ctx.num_outputs() > 3 && ctx.output_wanted(3);
    std::vector<double> QK;
    if (want_qk) QK.resize(static_cast<size_t>(B * qh * qs * T));
    std::vector<double> raw(T), capped(T), biased(T), prob(T);
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t h = 0; h < qh; ++h) {
        const int64_t kh = h / reps;
        const double* Kb = K.data() + (b * kvh + kh) * T * hd;
        const double* Vb = V.data() + (b * kvh + kh) * T * vhd;
        for (int64_t i = 0; i < qs; ++i) {
          const double* qi = Q.data() + ((b * qh + h) * qs + i) * hd;
          for (int64_t j = 0; j < T; ++j) {
            double s = 0.0;
            for (int64_t d = 0; d < hd; ++d) s += qi[d] * Kb[j * hd + d];
            raw[j] = s * scale;
            capped[j] = cfg.softcap > 0 ? cfg.softcap * std::tanh(raw[j] / cfg.softcap) : raw[j];
            double bias = 0.0;
            if (has_mask) {
              bias =
                  j < mask_last ? mask_vals[b * mstride[0] + h * mstride[1] + i * mstride[2] + j * mstride[3]] : ninf;
            }
            if (cfg.is_causal) {
              const int64_t offset = has_past_k ? past : (!nonpad.empty() ? nonpad[b] - qs : 0);
              if (j > i + offset) bias += ninf;
            }
            if (!nonpad.empty() && j >= nonpad[b]) bias += ninf;
            biased[j] = capped[j] + bias;
          }
          double mx = ninf;
          for (int64_t j = 0; j < T; ++j) mx = std::max(mx, biased[j]);
          double sum = 0.0;
          for (int64_t j = 0; j < T; ++j) {
            prob[j] = std::exp(biased[j] - mx);  // NaN when the row is fully masked (as numpy)
            sum += prob[j];
          }
          for (int64_t j = 0; j < T; ++j) prob[j] /= sum;
          double* yi = Y.data() + ((b * qh + h) * qs + i) * vhd;
          for (int64_t j = 0; j < T; ++j) {
            const double p = prob[j];
            for (int64_t d = 0; d < vhd; ++d) yi[d] += p * Vb[j * vhd + d];
          }
          if (want_qk) {
            const std::vector<double>& src = cfg.qk_mode == 0   ? raw
                                             : cfg.qk_mode == 1 ? capped
                                             : cfg.qk_mode == 2 ? biased
                                                                : prob;
            std::copy(src.begin(), src.end(), QK.begin() + ((b * qh + h) * qs + i) * T);
          }
        }
      }
    }
    if (three_d) {
      XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dt, {B, qs, qh * vhd}));
      std::vector<double> t(Y.size());
      for (int64_t b = 0; b < B; ++b)
        for (int64_t h = 0; h < qh; ++h)
          for (int64_t i = 0; i < qs; ++i)
            for (int64_t d = 0; d < vhd; ++d)
              t[((b * qs + i) * qh + h) * vhd + d] = Y[((b * qh + h) * qs + i) * vhd + d];
      store_doubles(y, t);
    } else {
      XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dt, {B, qh, qs, vhd}));
      store_doubles(y, Y);
    }
    if (ctx.num_outputs() > 1 && ctx.output_wanted(1)) {
      XONNX_ASSIGN_OR_RETURN(Tensor * pk, ctx.allocate_output(1, dt, {B, kvh, T, hd}));
      store_doubles(pk, K);
    }
    if (ctx.num_outputs() > 2 && ctx.output_wanted(2)) {
      XONNX_ASSIGN_OR_RETURN(Tensor * pv, ctx.allocate_output(2, dt, {B, kvh, T, vhd}));
      store_doubles(pv, V);
    }
    if (want_qk) {
      XONNX_ASSIGN_OR_RETURN(Tensor * o, ctx.allocate_output(3, dt, {B, qh, qs, T}));
      store_doubles(o, QK);
    }
    return Status::ok();
  });
}

// ---------------------------------------------------------------------------------------
// RotaryEmbedding

Result<std::unique_ptr<Kernel>> create_rotary_embedding(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(int64_t interleaved_i, init.get_int("interleaved", 0));
  XONNX_ASSIGN_OR_RETURN(int64_t rot_dim_attr, init.get_int("rotary_embedding_dim", 0));
  XONNX_ASSIGN_OR_RETURN(int64_t num_heads_attr, init.get_int("num_heads", 0));
  if (rot_dim_attr < 0 || num_heads_attr < 0) {
    return invalid_model("rotary_embedding_dim and num_heads must be non-negative");
  }
  const bool interleaved = interleaved_i != 0;
  return make_kernel([=](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    const Tensor& cos_t = ctx.input(1);
    const Tensor& sin_t = ctx.input(2);
    if (!x.defined() || !cos_t.defined() || !sin_t.defined()) {
      return invalid_argument("input, cos_cache and sin_cache are required");
    }
    const DataType dt = x.dtype();
    if (!is_float_type(dt)) return unsupported("input type ", dtype_name(dt), " is not supported");
    if (cos_t.dtype() != dt || sin_t.dtype() != dt) {
      return invalid_argument("cos_cache and sin_cache must have the input type");
    }
    int64_t B, S, NH, HD;
    const bool four_d = x.rank() == 4;
    if (four_d) {
      B = x.dim(0);
      NH = x.dim(1);
      S = x.dim(2);
      HD = x.dim(3);
    } else if (x.rank() == 3) {
      B = x.dim(0);
      S = x.dim(1);
      if (num_heads_attr <= 0) return invalid_argument("3-D input needs the num_heads attribute");
      NH = num_heads_attr;
      if (x.dim(2) % NH != 0) {
        return invalid_argument("hidden size ", x.dim(2), " is not divisible by num_heads ", NH);
      }
      HD = x.dim(2) / NH;
    } else {
      return invalid_argument("input must be 3-D or 4-D, got ", shape_to_string(x.shape()));
    }
    const int64_t rot = rot_dim_attr == 0 ? HD : rot_dim_attr;
    if (rot > HD || rot % 2 != 0) {
      return invalid_argument("rotary_embedding_dim ", rot, " must be even and <= head size ", HD);
    }
    const int64_t half = rot / 2;
    std::vector<double> X = load_doubles(x), C = load_doubles(cos_t), Sn = load_doubles(sin_t);
    // cos/sin row for (b, s): pointer offset into C/Sn.
    std::vector<int64_t> row(static_cast<size_t>(B * S));
    if (ctx.has_input(3)) {
      const Tensor& pos = ctx.input(3);
      if (!dtype_is_integer(pos.dtype()) || pos.shape() != Shape{B, S}) {
        return invalid_argument("position_ids must be an integer tensor of shape [", B, ", ", S, "]");
      }
      if (cos_t.rank() != 2 || cos_t.dim(1) != half || sin_t.shape() != cos_t.shape()) {
        return invalid_argument("with position_ids, cos_cache/sin_cache must be [max_pos, ", half, "], got ",
                                shape_to_string(cos_t.shape()));
      }
      for (int64_t i = 0; i < B * S; ++i) {
        const int64_t p = pos.get_as_int64(i);
        if (p < 0 || p >= cos_t.dim(0)) {
          return invalid_argument("position id ", p, " is outside [0, ", cos_t.dim(0), ")");
        }
        row[i] = p * half;
      }
    } else {
      if (cos_t.shape() != Shape{B, S, half} || sin_t.shape() != cos_t.shape()) {
        return invalid_argument("without position_ids, cos_cache/sin_cache must be [", B, ", ", S, ", ", half,
                                "], got ", shape_to_string(cos_t.shape()));
      }
      for (int64_t i = 0; i < B * S; ++i) row[i] = i * half;
    }
    std::vector<double> Y = X;
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < NH; ++h)
        for (int64_t s = 0; s < S; ++s) {
          const int64_t base = four_d ? ((b * NH + h) * S + s) * HD : ((b * S + s) * NH + h) * HD;
          const double* c = C.data() + row[b * S + s];
          const double* sn = Sn.data() + row[b * S + s];
          for (int64_t k = 0; k < half; ++k) {
            const int64_t i1 = interleaved ? base + 2 * k : base + k;
            const int64_t i2 = interleaved ? base + 2 * k + 1 : base + half + k;
            const double x1 = X[i1], x2 = X[i2];
            Y[i1] = c[k] * x1 - sn[k] * x2;
            Y[i2] = sn[k] * x1 + c[k] * x2;
          }
        }
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dt, x.shape()));
    store_doubles(y, Y);
    return Status::ok();
  });
}

}  // namespace

void register_attention_ops(OpRegistry& registry) {
  // One kernel covers Attention-23 and Attention-24 (24 adds the nonpad_kv_seqlen input and
  // offset-aligned causal masking, which reduce to 23's behaviour when the input is absent).
  XONNX_REGISTER(registry, "", "Attention", 23, kLatestVersion, create_attention);
  XONNX_REGISTER(registry, "", "RotaryEmbedding", 23, kLatestVersion, create_rotary_embedding);
}

}  // namespace xonnx
