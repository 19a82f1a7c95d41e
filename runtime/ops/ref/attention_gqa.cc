// Reference kernel: com.microsoft GroupQueryAttention (float32), and the input checks and KV
// append it shares with the fast kernel (attention_gqa.h has the semantics).
//
// Scores and softmax accumulate in double, one query row at a time.
#include "runtime/ops/ref/attention_gqa.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "runtime/ops/registry.h"

namespace xonnx {
namespace gqa {

Result<Attrs> parse_attrs(const KernelInit& init) {
  Attrs a;
  XONNX_ASSIGN_OR_RETURN(a.num_heads, init.require_int("num_heads"));
  XONNX_ASSIGN_OR_RETURN(a.kv_num_heads, init.require_int("kv_num_heads"));
  if (a.num_heads <= 0 || a.kv_num_heads <= 0 || a.num_heads % a.kv_num_heads != 0) {
    return invalid_model("num_heads ", a.num_heads, " must be a positive multiple of kv_num_heads ", a.kv_num_heads);
  }
  XONNX_ASSIGN_OR_RETURN(a.scale, init.get_float("scale", 0.0f));
  XONNX_ASSIGN_OR_RETURN(a.softcap, init.get_float("softcap", 0.0f));
  if (a.softcap < 0) return invalid_model("softcap must be >= 0, got ", a.softcap);
  XONNX_ASSIGN_OR_RETURN(a.local_window, init.get_int("local_window_size", -1));
  if (a.local_window == 0 || a.local_window < -1) {
    return invalid_model("local_window_size must be -1 (none) or positive, got ", a.local_window);
  }
  XONNX_ASSIGN_OR_RETURN(int64_t rotary, init.get_int("do_rotary", 0));
  XONNX_ASSIGN_OR_RETURN(int64_t interleaved, init.get_int("rotary_interleaved", 0));
  XONNX_ASSIGN_OR_RETURN(int64_t smooth, init.get_int("smooth_softmax", 0));
  XONNX_ASSIGN_OR_RETURN(a.qk_output, init.get_int("qk_output", 0));
  a.do_rotary = rotary != 0;
  a.rotary_interleaved = interleaved != 0;
  a.smooth_softmax = smooth != 0;
  if (a.qk_output < 0 || a.qk_output > 2) return invalid_model("qk_output must be 0, 1 or 2, got ", a.qk_output);
  if (a.qk_output != 0 && !(init.num_outputs() > 3 && !init.node().outputs[3].empty())) {
    return invalid_model("qk_output=", a.qk_output, " needs the output_qk output");
  }
  XONNX_ASSIGN_OR_RETURN(int64_t causal, init.get_int("causal", 1));
  if (causal != 1) return unsupported("causal=0 (bidirectional GroupQueryAttention)");
  for (const char* q : {"k_quant_type", "v_quant_type"}) {
    XONNX_ASSIGN_OR_RETURN(std::string t, init.get_string(q, "NONE"));
    if (t != "NONE") return unsupported(q, "=", t, " (quantized KV cache)");
  }
  for (size_t i = 12; i < init.num_inputs(); ++i) {
    if (init.has_input(i)) return unsupported("input ", i, " (KV-cache scales or per-head Q/K norm weights)");
  }
  return a;
}

namespace {

Status check_f32(const Tensor& t, const char* what) {
  if (t.dtype() != DataType::kFloat) {
    return unsupported(what, " of type ", dtype_name(t.dtype()), " (this kernel takes float32)");
  }
  return Status::ok();
}

}  // namespace

Result<Dims> check_inputs(const KernelContext& ctx, const Attrs& a) {
  Dims d;
  d.N = a.num_heads;
  d.KV = a.kv_num_heads;
  const Tensor& q = ctx.input(kQuery);
  if (!q.defined()) return invalid_argument("query is required");
  XONNX_RETURN_IF_ERROR(check_f32(q, "query"));
  if (q.rank() != 3)
    return invalid_argument("query must be 3-D [batch, sequence, hidden], got ", shape_to_string(q.shape()));
  d.B = q.dim(0);
  d.S = q.dim(1);
  d.packed = !ctx.has_input(kKey);
  if (d.packed != !ctx.has_input(kValue)) {
    return invalid_argument("key and value must both be given, or both absent (packed QKV in query)");
  }
  const int64_t heads_in_q = d.packed ? d.N + 2 * d.KV : d.N;
  if (q.dim(2) % heads_in_q != 0 || q.dim(2) == 0) {
    return invalid_argument("query hidden size ", q.dim(2), " is not a multiple of ", heads_in_q,
                            d.packed ? " (num_heads + 2 * kv_num_heads, packed QKV)" : " (num_heads)");
  }
  d.H = q.dim(2) / heads_in_q;
  d.q_row = q.dim(2);
  d.kv_row = d.packed ? q.dim(2) : d.KV * d.H;
  if (!d.packed) {
    for (size_t i : {kKey, kValue}) {
      const Tensor& t = ctx.input(i);
      const char* what = i == kKey ? "key" : "value";
      XONNX_RETURN_IF_ERROR(check_f32(t, what));
      if (t.shape() != Shape{d.B, d.S, d.KV * d.H}) {
        return invalid_argument(what, " must be [", d.B, ", ", d.S, ", ", d.KV * d.H, "] (kv_num_heads * head_size ",
                                d.H, "), got ", shape_to_string(t.shape()));
      }
    }
  }
  if (ctx.has_input(kPastKey) != ctx.has_input(kPastValue)) {
    return invalid_argument("past_key and past_value must both be given or both absent");
  }
  if (ctx.has_input(kPastKey)) {
    const Tensor& pk = ctx.input(kPastKey);
    const Tensor& pv = ctx.input(kPastValue);
    XONNX_RETURN_IF_ERROR(check_f32(pk, "past_key"));
    XONNX_RETURN_IF_ERROR(check_f32(pv, "past_value"));
    if (pk.rank() != 4 || pk.dim(0) != d.B || pk.dim(1) != d.KV || pk.dim(3) != d.H || pv.shape() != pk.shape()) {
      return invalid_argument("past_key ", shape_to_string(pk.shape()), " and past_value ", shape_to_string(pv.shape()),
                              " must both be [", d.B, ", ", d.KV, ", past, ", d.H, "]");
    }
    d.past_len = pk.dim(2);
  }
  const Tensor& seqlens = ctx.input(kSeqlensK);
  const Tensor& total = ctx.input(kTotalSeqLen);
  if (!seqlens.defined() || !total.defined())
    return invalid_argument("seqlens_k and total_sequence_length are required");
  // [B], or [B, 1] as GenAI's graphs make it (ReduceSum with keepdims): every dim 1 or B.
  bool seqlens_ok = seqlens.dtype() == DataType::kInt32 && seqlens.numel() == d.B && seqlens.rank() >= 1;
  for (size_t i = 0; seqlens_ok && i < seqlens.rank(); ++i) seqlens_ok = seqlens.dim(i) == 1 || seqlens.dim(i) == d.B;
  if (!seqlens_ok) {
    return invalid_argument("seqlens_k must be int32 [", d.B, "] (or [", d.B, ", 1]), got ",
                            dtype_name(seqlens.dtype()), " ", shape_to_string(seqlens.shape()));
  }
  if (total.dtype() != DataType::kInt32 || total.numel() != 1) {
    return invalid_argument("total_sequence_length must be one int32, got ", dtype_name(total.dtype()), " ",
                            shape_to_string(total.shape()));
  }
  d.total = total.data<int32_t>()[0];
  if (d.total < d.S || d.total <= 0) {
    return invalid_argument("total_sequence_length ", d.total, " is less than the sequence length ", d.S);
  }
  d.present_len = std::max(d.total, d.past_len);
  d.first_prompt = d.S == d.total;
  if (d.S > 1 && !d.first_prompt && d.B != 1) {
    return invalid_argument("a prompt continuing a cache (sequence ", d.S, " < total ", d.total,
                            ") needs batch 1, got ", d.B);
  }
  for (int64_t b = 0; b < d.B; ++b) {
    const int64_t len = static_cast<int64_t>(seqlens.data<int32_t>()[b]) + 1;
    if (len < 1 || len > d.total || (!d.first_prompt && len < d.S)) {
      return invalid_argument("seqlens_k[", b, "] = ", len - 1, ": the total length ", len, " must be in [",
                              d.first_prompt ? 1 : d.S, ", total_sequence_length ", d.total, "]");
    }
  }
  if (ctx.has_input(kCos) != ctx.has_input(kSin))
    return invalid_argument("cos_cache and sin_cache must be given together");
  if (a.do_rotary) {
    if (!ctx.has_input(kCos)) return invalid_argument("do_rotary=1 needs cos_cache and sin_cache");
    const Tensor& c = ctx.input(kCos);
    const Tensor& s = ctx.input(kSin);
    XONNX_RETURN_IF_ERROR(check_f32(c, "cos_cache"));
    XONNX_RETURN_IF_ERROR(check_f32(s, "sin_cache"));
    if (c.rank() != 2 || s.shape() != c.shape() || c.dim(1) * 2 > d.H || c.dim(1) == 0) {
      return invalid_argument("cos_cache ", shape_to_string(c.shape()), " and sin_cache ", shape_to_string(s.shape()),
                              " must both be [max_position, rotary_dim / 2] with rotary_dim <= head_size ", d.H);
    }
    d.rotary_dim = 2 * c.dim(1);
  }
  if (ctx.has_input(kPositionIds)) {
    const Tensor& p = ctx.input(kPositionIds);
    if (p.dtype() != DataType::kInt64 || p.rank() != 2 || p.dim(0) != d.B || p.dim(1) < d.S) {
      return invalid_argument("position_ids must be int64 [", d.B, ", >= ", d.S, "], got ", dtype_name(p.dtype()), " ",
                              shape_to_string(p.shape()));
    }
  }
  if (ctx.has_input(kAttentionBias)) {
    const Tensor& ab = ctx.input(kAttentionBias);
    XONNX_RETURN_IF_ERROR(check_f32(ab, "attention_bias"));
    if (ab.rank() != 4 || (ab.dim(0) != 1 && ab.dim(0) != d.B) || (ab.dim(1) != 1 && ab.dim(1) != d.N) ||
        ab.dim(2) != d.S || ab.dim(3) != d.total) {
      return invalid_argument("attention_bias must be [", d.B, " or 1, ", d.N, " or 1, ", d.S, ", ", d.total, "], got ",
                              shape_to_string(ab.shape()));
    }
    d.bias_b = ab.dim(0);
    d.bias_n = ab.dim(1);
  }
  if (ctx.has_input(kHeadSink)) {
    const Tensor& hs = ctx.input(kHeadSink);
    XONNX_RETURN_IF_ERROR(check_f32(hs, "head_sink"));
    if (hs.shape() != Shape{d.N}) {
      return invalid_argument("head_sink must be [num_heads ", d.N, "], got ", shape_to_string(hs.shape()));
    }
    if (a.smooth_softmax) return invalid_argument("head_sink and smooth_softmax=1 exclude each other");
  }
  return d;
}

Result<int64_t> past_length(const KernelContext& ctx, const Dims& d, int64_t b) {
  if (d.first_prompt) return int64_t{0};
  const int64_t past = static_cast<int64_t>(ctx.input(kSeqlensK).data<int32_t>()[b]) + 1 - d.S;
  if (past > d.past_len) {
    return invalid_argument("batch ", b, " continues ", past,
                            " cached tokens (seqlens_k + 1 - sequence length), but past_key holds ", d.past_len);
  }
  return past;
}

Result<int64_t> position_of(const KernelContext& ctx, const Dims& d, int64_t b, int64_t s, int64_t past_b) {
  int64_t pos = past_b + s;
  if (ctx.has_input(kPositionIds)) {
    const Tensor& p = ctx.input(kPositionIds);
    pos = p.data<int64_t>()[b * p.dim(1) + s];
  }
  const int64_t rows = ctx.input(kCos).dim(0);
  if (pos < 0 || pos >= rows) {
    return invalid_argument("position ", pos, " of batch ", b, " token ", s, " is outside the rotary tables [0, ", rows,
                            ")");
  }
  return pos;
}

void rotate_row(const float* x, float* y, int64_t head_size, const float* cos, const float* sin, int64_t rotary_dim,
                bool interleaved) {
  const int64_t half = rotary_dim / 2;
  for (int64_t i = 0; i < half; ++i) {
    const int64_t i1 = interleaved ? 2 * i : i;
    const int64_t i2 = interleaved ? 2 * i + 1 : i + half;
    const float x1 = x[i1], x2 = x[i2];
    y[i1] = x1 * cos[i] - x2 * sin[i];
    y[i2] = x1 * sin[i] + x2 * cos[i];
  }
  if (y != x) std::memcpy(y + rotary_dim, x + rotary_dim, static_cast<size_t>(head_size - rotary_dim) * sizeof(float));
}

Result<Present> append_kv(KernelContext& ctx, const Attrs& a, const Dims& d, float* q_rot) {
  Present p;
  const Shape shape{d.B, d.KV, d.present_len, d.H};
  XONNX_ASSIGN_OR_RETURN(p.key, ctx.allocate_output_uninitialized(1, DataType::kFloat, shape));
  XONNX_ASSIGN_OR_RETURN(p.value, ctx.allocate_output_uninitialized(2, DataType::kFloat, shape));
  const bool has_past = d.past_len > 0;
  const float* past_k = has_past ? ctx.input(kPastKey).data<float>() : nullptr;
  const float* past_v = has_past ? ctx.input(kPastValue).data<float>() : nullptr;
  float* pk = p.key->data<float>();
  float* pv = p.value->data<float>();
  if ((pk == past_k) != (pv == past_v)) {
    return invalid_argument("present_key and present_value must both share past's buffers, or neither");
  }
  p.shared = has_past && pk == past_k;
  if (p.shared && d.present_len != d.past_len) {
    return invalid_argument("present_key shares past_key's buffer of ", d.past_len, " positions, but ",
                            "total_sequence_length ", d.total, " needs ", d.present_len);
  }
  const int64_t plane = d.present_len * d.H;
  const float* q = ctx.input(kQuery).data<float>();
  const float* k = d.packed ? q + d.N * d.H : ctx.input(kKey).data<float>();
  const float* v = d.packed ? q + (d.N + d.KV) * d.H : ctx.input(kValue).data<float>();
  const float* cos = a.do_rotary ? ctx.input(kCos).data<float>() : nullptr;
  const float* sin = a.do_rotary ? ctx.input(kSin).data<float>() : nullptr;
  const int64_t half = d.rotary_dim / 2;
  for (int64_t b = 0; b < d.B; ++b) {
    XONNX_ASSIGN_OR_RETURN(int64_t past, past_length(ctx, d, b));
    if (past + d.S > d.present_len) {
      return invalid_argument("batch ", b, ": ", past, " cached + ", d.S, " new tokens exceed the present length ",
                              d.present_len);
    }
    for (int64_t kh = 0; kh < d.KV; ++kh) {
      float* dk = pk + (b * d.KV + kh) * plane;
      float* dv = pv + (b * d.KV + kh) * plane;
      if (!p.shared) {
        const size_t kept = static_cast<size_t>(past * d.H);
        if (has_past) {
          std::memcpy(dk, past_k + (b * d.KV + kh) * d.past_len * d.H, kept * sizeof(float));
          std::memcpy(dv, past_v + (b * d.KV + kh) * d.past_len * d.H, kept * sizeof(float));
        }
        std::fill(dk + kept, dk + plane, 0.0f);
        std::fill(dv + kept, dv + plane, 0.0f);
      }
      for (int64_t s = 0; s < d.S; ++s) {
        const float* ks = k + (b * d.S + s) * d.kv_row + kh * d.H;
        const float* vs = v + (b * d.S + s) * d.kv_row + kh * d.H;
        float* kd = dk + (past + s) * d.H;
        if (a.do_rotary) {
          XONNX_ASSIGN_OR_RETURN(int64_t pos, position_of(ctx, d, b, s, past));
          rotate_row(ks, kd, d.H, cos + pos * half, sin + pos * half, d.rotary_dim, a.rotary_interleaved);
        } else {
          std::memcpy(kd, ks, static_cast<size_t>(d.H) * sizeof(float));
        }
        std::memcpy(dv + (past + s) * d.H, vs, static_cast<size_t>(d.H) * sizeof(float));
      }
    }
    if (a.do_rotary && q_rot) {
      for (int64_t s = 0; s < d.S; ++s) {
        XONNX_ASSIGN_OR_RETURN(int64_t pos, position_of(ctx, d, b, s, past));
        for (int64_t h = 0; h < d.N; ++h) {
          rotate_row(q + (b * d.S + s) * d.q_row + h * d.H, q_rot + ((b * d.S + s) * d.N + h) * d.H, d.H,
                     cos + pos * half, sin + pos * half, d.rotary_dim, a.rotary_interleaved);
        }
      }
    }
  }
  return p;
}

namespace {

Result<std::unique_ptr<Kernel>> create_gqa(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(Attrs a, parse_attrs(init));
  return make_kernel([a](KernelContext& ctx) -> Status {
    XONNX_ASSIGN_OR_RETURN(Dims d, check_inputs(ctx, a));
    std::vector<float> q_rot(a.do_rotary ? static_cast<size_t>(d.B * d.S * d.N * d.H) : 0);
    XONNX_ASSIGN_OR_RETURN(Present present, append_kv(ctx, a, d, a.do_rotary ? q_rot.data() : nullptr));
    XONNX_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, DataType::kFloat, {d.B, d.S, d.N * d.H}));
    float* qk = nullptr;
    if (a.qk_output != 0) {
      XONNX_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output(3, DataType::kFloat, {d.B, d.N, d.S, d.total}));
      qk = t->data<float>();
    }
    const float* q = ctx.input(kQuery).data<float>();
    const float* bias = d.bias_b ? ctx.input(kAttentionBias).data<float>() : nullptr;
    const float* sinks = ctx.has_input(kHeadSink) ? ctx.input(kHeadSink).data<float>() : nullptr;
    const double scale = scale_of(a, d);
    const double ninf = -std::numeric_limits<double>::infinity();
    std::vector<double> row(static_cast<size_t>(d.present_len));
    for (int64_t b = 0; b < d.B; ++b) {
      XONNX_ASSIGN_OR_RETURN(int64_t past, past_length(ctx, d, b));
      for (int64_t h = 0; h < d.N; ++h) {
        const int64_t kh = h / (d.N / d.KV);
        const float* K = present.key->data<float>() + (b * d.KV + kh) * d.present_len * d.H;
        const float* V = present.value->data<float>() + (b * d.KV + kh) * d.present_len * d.H;
        for (int64_t s = 0; s < d.S; ++s) {
          const float* qs =
              a.do_rotary ? q_rot.data() + ((b * d.S + s) * d.N + h) * d.H : q + (b * d.S + s) * d.q_row + h * d.H;
          const int64_t causal = past + s + 1;
          const int64_t lo = a.local_window > 0 ? std::max<int64_t>(0, causal - a.local_window) : 0;
          const float* brow = bias ? bias + (((b % d.bias_b) * d.bias_n + h % d.bias_n) * d.S + s) * d.total : nullptr;
          double mx = ninf;
          for (int64_t t = 0; t < causal; ++t) {
            double dot = 0;
            for (int64_t i = 0; i < d.H; ++i) dot += static_cast<double>(qs[i]) * K[t * d.H + i];
            double x = dot * scale;
            if (a.softcap > 0) x = a.softcap * std::tanh(x / a.softcap);
            if (brow) x += brow[t];
            if (a.qk_output == 1) qk[((b * d.N + h) * d.S + s) * d.total + t] = static_cast<float>(x);
            row[t] = x;
            if (t >= lo) mx = std::max(mx, x);
          }
          double sink = ninf;
          if (a.smooth_softmax) sink = 0.0;
          if (sinks) sink = sinks[h];
          if (sink != ninf) mx = std::max(mx, sink);
          double sum = sink != ninf ? std::exp(sink - mx) : 0.0;
          for (int64_t t = lo; t < causal; ++t) sum += (row[t] = std::exp(row[t] - mx));
          float* o = out->data<float>() + ((b * d.S + s) * d.N + h) * d.H;
          std::vector<double> acc(static_cast<size_t>(d.H), 0.0);
          for (int64_t t = lo; t < causal; ++t) {
            const double p = row[t] / sum;
            if (a.qk_output == 2) qk[((b * d.N + h) * d.S + s) * d.total + t] = static_cast<float>(p);
            for (int64_t i = 0; i < d.H; ++i) acc[i] += p * V[t * d.H + i];
          }
          for (int64_t i = 0; i < d.H; ++i) o[i] = static_cast<float>(acc[i]);
        }
      }
    }
    return Status::ok();
  });
}

}  // namespace
}  // namespace gqa

void register_gqa_ops(OpRegistry& registry) {
  XONNX_REGISTER(registry, "com.microsoft", "GroupQueryAttention", 1, kLatestVersion, gqa::create_gqa);
}

}  // namespace xonnx
