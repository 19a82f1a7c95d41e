// com.microsoft GroupQueryAttention: attributes, input checks and the KV-cache append, shared by
// the reference kernel (ref/attention_gqa.cc) and the fast one (optimized/attention.cc).
//
// Semantics (ONNX Runtime 1.30's CPU kernel, checked on tests/models_llm_ops):
//  - query [B, S, N*H] (or packed [B, S, (N + 2*KV)*H] with key/value absent), key/value
//    [B, S, KV*H]; caches past_key/past_value and present_key/present_value are [B, KV, P, H].
//  - seqlens_k[b] + 1 is batch b's total length; total_sequence_length is their maximum. A first
//    prompt (S == total_sequence_length) starts at position 0; otherwise batch b's new tokens
//    follow past_b = seqlens_k[b] + 1 - S cached ones.
//  - present length P = max(total_sequence_length, past buffer length). When present is the
//    same storage as past (past_present_share_buffer), only the S new rows are written;
//    otherwise present = past's first past_b rows + the new rows, zeros after.
//  - query i of batch b sees keys [lo, past_b + i], lo = past_b + i + 1 - local_window_size
//    when a window is set; scores are scaled, soft-capped, biased (attention_bias), then
//    softmax-ed; smooth_softmax adds a zero logit, head_sink a per-head logit, to the
//    denominator only.
#pragma once

#include <cmath>
#include <cstdint>

#include "runtime/ops/kernel.h"

namespace xonnx {
namespace gqa {

struct Attrs {
  int64_t num_heads = 0;
  int64_t kv_num_heads = 0;
  float scale = 0.0f;  // 0: 1/sqrt(head_size)
  float softcap = 0.0f;
  int64_t local_window = -1;  // -1: none
  bool do_rotary = false;
  bool rotary_interleaved = false;
  bool smooth_softmax = false;
  int64_t qk_output = 0;  // 0 none, 1 scores before softmax, 2 probabilities
};

Result<Attrs> parse_attrs(const KernelInit& init);

// Input indices.
enum : size_t {
  kQuery = 0,
  kKey,
  kValue,
  kPastKey,
  kPastValue,
  kSeqlensK,
  kTotalSeqLen,
  kCos,
  kSin,
  kPositionIds,
  kAttentionBias,
  kHeadSink
};

struct Dims {
  int64_t B = 0, S = 0, N = 0, KV = 0, H = 0;
  int64_t past_len = 0;     // past buffer length (0 without past)
  int64_t present_len = 0;  // P
  int64_t total = 0;        // total_sequence_length
  int64_t rotary_dim = 0;   // 0 without rotary
  bool packed = false;
  bool first_prompt = false;
  // Element strides of one token's row in query/key/value (packed: all three in one row).
  int64_t q_row = 0, kv_row = 0;
  int64_t bias_b = 0, bias_n = 0;  // attention_bias dims 0 and 1 (1 = broadcast), 0 without it
};

// Validates every input against the attributes (errors name the input and the rule) and
// returns the dimensions. Per-batch lengths are checked by past_length().
Result<Dims> check_inputs(const KernelContext& ctx, const Attrs& a);

// Batch b's cached length past_b, checked against the buffers (named in the error).
Result<int64_t> past_length(const KernelContext& ctx, const Dims& d, int64_t b);

inline float scale_of(const Attrs& a, const Dims& d) {
  return a.scale != 0.0f ? a.scale : 1.0f / std::sqrt(static_cast<float>(d.H));
}

// Rotates one head row x[0, rotary_dim) by the angle table row (cos/sin, rotary_dim / 2
// entries each) into y; y may be x. Dims past rotary_dim are copied.
void rotate_row(const float* x, float* y, int64_t head_size, const float* cos, const float* sin, int64_t rotary_dim,
                bool interleaved);

// The present outputs: allocated (bound or pooled), and, unless they share past's storage,
// filled with past's first past_b rows of every batch and zeros after. Then the S new key /
// value rows of every batch (key rotated when do_rotary) are written at past_b. Returns the
// present tensors; `q_rot` receives the query rotated (when do_rotary) as [B, S, N, H], else
// stays empty and the kernel reads the query input.
struct Present {
  Tensor* key = nullptr;
  Tensor* value = nullptr;
  bool shared = false;
};
Result<Present> append_kv(KernelContext& ctx, const Attrs& a, const Dims& d, float* q_rot);

// Position of query token s of batch b (for the rotary tables).
Result<int64_t> position_of(const KernelContext& ctx, const Dims& d, int64_t b, int64_t s, int64_t past_b);

}  // namespace gqa
}  // namespace xonnx
