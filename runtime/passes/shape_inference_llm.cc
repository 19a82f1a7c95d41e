// Shape rules for the LLM ops the GenAI passes emit and GenAI graphs hold, so the passes after a
// fusion (and the value_info the writer emits) still see typed values:
// SimplifiedLayerNormalization, RMSNormalization, RotaryEmbedding (ONNX 23), Attention (ONNX 23);
// com.microsoft SkipSimplifiedLayerNormalization, RotaryEmbedding, GroupQueryAttention, MatMulNBits.
#include "runtime/core/checked.h"
#include "runtime/passes/shape_inference_rules.h"

namespace xonnx {
namespace passes {
namespace {

// Output `out` with input 0's type and shape.
void like_input(InferCtx& c, size_t out) {
  const TypeInfo* t = c.in_type(0);
  if (!t || t->kind != TypeInfo::Kind::kTensor) return;
  if (t->has_shape) {
    c.set_type(out, t->elem_type, t->dims);
  } else {
    c.set_rank_unknown(out, t->elem_type);
  }
}

void first_output_like_input(InferCtx& c) { like_input(c, 0); }

// Outputs 0 (normalized) and 3 (input + skip [+ bias]) have the input's shape.
void skip_norm_rule(InferCtx& c) {
  like_input(c, 0);
  if (c.node.outputs.size() > 3 && !c.node.outputs[3].empty()) like_input(c, 3);
}

// GroupQueryAttention: output [B, S, num_heads * head], presents [B, kv_heads, ?, head]. The head
// size comes from the past input, else from the query width (packed Q|K|V when key is absent).
void group_query_attention_rule(InferCtx& c) {
  const std::vector<Dim>* q = c.in_dims(0);
  const int64_t heads = c.attr_int("num_heads", 0), kv_heads = c.attr_int("kv_num_heads", 0);
  if (!q || q->size() != 3 || heads <= 0 || kv_heads <= 0) return;
  int64_t head = -1;
  if (const std::vector<Dim>* past = c.has_input(3) ? c.in_dims(3) : nullptr;
      past && past->size() == 4 && (*past)[3].known()) {
    head = (*past)[3].value;
  } else if ((*q)[2].known()) {
    // Attributes come from the file: sums and products are checked (-1: overflow, no dim).
    const int64_t parts = c.has_input(1) ? heads : checked_add(heads, checked_mul(2, kv_heads));
    if (parts > 0 && (*q)[2].value % parts == 0) head = (*q)[2].value / parts;
  }
  const DataType t = c.in_dtype(0);
  const int64_t width = head > 0 ? checked_mul(heads, head) : -1;
  c.set_type(0, t, {(*q)[0], (*q)[1], width >= 0 ? known_dim(width) : Dim()});
  const Dim batch = (*q)[0];
  for (size_t out : {size_t{1}, size_t{2}}) {
    if (c.node.outputs.size() > out && !c.node.outputs[out].empty()) {
      c.set_type(out, t, {batch, known_dim(kv_heads), Dim(), head > 0 ? known_dim(head) : Dim()});
    }
  }
}

// ONNX Attention: Y has Q's rank; 3-D [B, S, q_heads * v_head], 4-D [B, q_heads, S, v_head].
void attention_rule(InferCtx& c) {
  const std::vector<Dim>* q = c.in_dims(0);
  const std::vector<Dim>* v = c.in_dims(2);
  if (!q || !v || q->size() != v->size()) return;
  const DataType t = c.in_dtype(0);
  if (q->size() == 4) {
    c.set_type(0, t, {(*q)[0], (*q)[1], (*q)[2], (*v)[3]});
    for (size_t out : {size_t{1}, size_t{2}}) {
      const std::vector<Dim>* kv = c.in_dims(out);  // present K / V: like K / V with a longer sequence
      if (kv && kv->size() == 4 && c.node.outputs.size() > out && !c.node.outputs[out].empty()) {
        c.set_type(out, t, {(*kv)[0], (*kv)[1], Dim(), (*kv)[3]});
      }
    }
    return;
  }
  if (q->size() != 3) return;  // the kernel rejects other ranks; (*v)[2] must exist
  const int64_t heads = c.attr_int("q_num_heads", 0), kv_heads = c.attr_int("kv_num_heads", 0);
  Dim width;
  if (heads > 0 && kv_heads > 0 && (*v)[2].known() && (*v)[2].value % kv_heads == 0) {
    const int64_t w = checked_mul(heads, (*v)[2].value / kv_heads);
    if (w >= 0) width = known_dim(w);
  }
  c.set_type(0, t, {(*q)[0], (*q)[1], width});
}

// MatMulNBits: A [..., K] -> [..., N].
void matmul_nbits_rule(InferCtx& c) {
  const std::vector<Dim>* a = c.in_dims(0);
  const int64_t n = c.attr_int("N", 0);
  if (!a || a->empty() || n <= 0) return;
  std::vector<Dim> out = *a;
  out.back() = known_dim(n);
  c.set_type(0, c.in_dtype(0), std::move(out));
}

}  // namespace

void add_llm_rules(RuleTable& onnx, RuleTable& contrib) {
  onnx["SimplifiedLayerNormalization"] = first_output_like_input;
  onnx["RMSNormalization"] = first_output_like_input;
  onnx["RotaryEmbedding"] = first_output_like_input;
  onnx["Attention"] = attention_rule;
  contrib["SkipSimplifiedLayerNormalization"] = skip_norm_rule;
  contrib["SkipLayerNormalization"] = skip_norm_rule;
  contrib["RotaryEmbedding"] = first_output_like_input;
  contrib["GroupQueryAttention"] = group_query_attention_rule;
  contrib["MatMulNBits"] = matmul_nbits_rule;
}

}  // namespace passes
}  // namespace xonnx
