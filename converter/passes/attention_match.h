// The structure of one decomposed causal self-attention block with a KV cache, as torch 1.13's
// TorchScript exporter writes a Llama-style layer (opsets 14-17), matched from its Softmax:
//
//   q = Transpose(Reshape(q_in, [B, S, H, d]), 0213)        -> RotaryEmbedding (optional)
//   k = Transpose(Reshape(k_in, [B, S, KV, d]), 0213)       -> RotaryEmbedding (optional)
//   v = Transpose(Reshape(v_in, [B, S, KV, d]), 0213)
//   present_k = Concat(past_k, k, axis 2); present_v = Concat(past_v, v, axis 2)   (graph outputs)
//   K = present_k or repeat_kv(present_k) = Reshape(Expand(Unsqueeze(present_k, 2), [B, KV, H / KV, T, d]), [B, H, T, d])
//   scores = MatMul(q [* c], Transpose(K, 0132)) [* scale | / c]
//   masked = Add(scores, mask) | Where(cond, scores, fill) | Where(cond, fill, scores)
//   out = Reshape(Transpose(MatMul(Softmax(masked, -1), V), 0213), [B, S, H * d])
//
// Only the wiring, ops, axes, perms and constants are checked here; what the computed values hold
// (the Reshape / Expand targets, the mask, the rotary positions) depends on the input shapes and
// is checked on probe inputs (attention_probe.h). Every check that fails is named.
#pragma once

#include <string>
#include <vector>

#include "runtime/ir/graph_edit.h"
#include "converter/passes/passes.h"

namespace xonnx {
namespace convert {

// A [B, S, heads * d] projection split into heads: Transpose(Reshape(in, target), 0213).
struct HeadSplit {
  std::string in;      // [B, S, heads * d]
  std::string target;  // the Reshape's shape input
  std::string heads;   // the Transpose output [B, heads, S, d]
};

// repeat_kv: Reshape(Expand(Unsqueeze(x, 2), expand_shape), reshape_shape); empty when absent.
struct RepeatKv {
  std::string expand_shape, reshape_shape;
  bool present() const { return !expand_shape.empty(); }
};

struct RotaryUse {
  bool present = false;
  std::string position_ids, cos_cache, sin_cache;
  bool interleaved = false;
};

struct AttentionMatch {
  int softmax = -1;
  HeadSplit q, k, v;
  RotaryUse q_rotary, k_rotary;
  std::string past_k, past_v, present_k, present_v;
  RepeatKv k_repeat, v_repeat;
  double scale = 1.0;
  enum class Mask { kAdditive, kVisibleWhereTrue, kHiddenWhereTrue } mask_kind = Mask::kAdditive;
  std::string mask;        // the additive bias, or the Where condition
  double fill = 0;         // the Where's fill value (boolean masks)
  std::string out_target;  // the final Reshape's shape input
  std::string output;      // [B, S, H * d]
  std::vector<int> nodes;  // every node the fused op replaces
};

// Matches the block around the Softmax node `softmax` (index into g.nodes). On failure returns
// false with *why naming the failed check (empty when the Softmax is no attention candidate).
bool match_attention(const Graph& g, const GraphIndex& index, const ShapeFacts& facts, int softmax, AttentionMatch* m,
                     std::string* why);

}  // namespace convert
}  // namespace xonnx
