#include "converter/passes/attention_match.h"

#include <cmath>

#include "converter/passes/genai_util.h"

namespace xonnx {
namespace convert {
namespace {

class Matcher {
 public:
  Matcher(const Graph& g, const GraphIndex& index, const ShapeFacts& facts, AttentionMatch* m, std::string* why)
      : g_(g), index_(index), facts_(facts), m_(m), why_(why) {}

  // The default-domain `op` producing `value` (appended to the matched nodes), else -1.
  int producer(const std::string& value, const char* op, const char* domain = "") {
    const int p = value.empty() ? -1 : index_.producer(value);
    if (p < 0) return -1;
    const Node& n = g_.nodes[static_cast<size_t>(p)];
    if (n.op_type != op || n.domain != domain || n.inputs.empty() || n.outputs.empty()) return -1;
    return p;
  }
  const Node& node(int i) const { return g_.nodes[static_cast<size_t>(i)]; }
  bool fail(const std::string& why) {
    *why_ = why;
    return false;
  }
  void take(int i) { m_->nodes.push_back(i); }

  bool perm_is(int transpose, const std::vector<int64_t>& perm) {
    const Attribute* a = node(transpose).find_attr("perm");
    return a && a->ints == perm;
  }

  // A float32 scalar (one element) constant's value.
  bool scalar(const std::string& name, double* out) {
    const Tensor* t = constant_tensor(g_, name);
    if (!t || t->dtype() != DataType::kFloat || t->numel() != 1) return false;
    *out = t->data<float>()[0];
    return true;
  }

  // Transpose(Reshape(in, target), 0213) = heads.
  bool head_split(const std::string& heads, const char* what, HeadSplit* h) {
    const int t = producer(heads, "Transpose");
    if (t < 0 || !perm_is(t, {0, 2, 1, 3}))
      return fail(std::string(what) + " heads '" + heads + "' are not Transpose(perm 0,2,1,3)");
    const int r = producer(node(t).inputs[0], "Reshape");
    if (r < 0 || node(r).inputs.size() < 2 || attr_int_or(node(r), "allowzero", 0) != 0) {
      return fail(std::string(what) + " heads are not a Reshape (allowzero 0) of the projection");
    }
    take(t);
    take(r);
    h->heads = heads;
    h->in = node(r).inputs[0];
    h->target = node(r).inputs[1];
    return true;
  }

  // RotaryEmbedding(x, ...) = value (the fused contrib op), or value itself.
  std::string through_rotary(const std::string& value, RotaryUse* r) {
    const int p = producer(value, "RotaryEmbedding", "com.microsoft");
    if (p < 0) return value;
    const Node& n = node(p);
    if (n.inputs.size() < 4 || attr_int_or(n, "rotary_embedding_dim", 0) != 0 ||
        attr_int_or(n, "is_packed_batching", 0)) {
      return value;  // partial rotary or packed batches: GroupQueryAttention cannot absorb it
    }
    take(p);
    r->present = true;
    r->position_ids = n.inputs[1];
    r->cos_cache = n.inputs[2];
    r->sin_cache = n.inputs[3];
    r->interleaved = attr_int_or(n, "interleaved", 0) != 0;
    return n.inputs[0];
  }

  // present = Concat(past, new, axis 2) with past a graph input.
  bool kv_concat(const std::string& present, const char* what, std::string* past, std::string* fresh) {
    const int c = producer(present, "Concat");
    if (c < 0) return fail(std::string(what) + " '" + present + "' is not a Concat of the past and the new tokens");
    const Node& n = node(c);
    const int64_t axis = attr_int_or(n, "axis", 0);
    if (n.inputs.size() != 2 || (axis != 2 && axis != -2))
      return fail(std::string(what) + " Concat is not of two inputs on axis 2");
    if (!index_.is_graph_input(n.inputs[0]) || constant_tensor(g_, n.inputs[0])) {
      return fail(std::string(what) + " Concat's first input '" + n.inputs[0] + "' is not a graph input (the past)");
    }
    if (!index_.is_graph_output(present))
      return fail(std::string(what) + " '" + present + "' is not a graph output (the present)");
    take(c);
    *past = n.inputs[0];
    *fresh = n.inputs[1];
    return true;
  }

  // kv or repeat_kv(kv) = value; returns kv.
  std::string through_repeat(const std::string& value, RepeatKv* rep) {
    const int r = producer(value, "Reshape");
    if (r < 0 || node(r).inputs.size() < 2) return value;
    const int e = producer(node(r).inputs[0], "Expand");
    if (e < 0 || node(e).inputs.size() < 2) return value;
    const int u = producer(node(e).inputs[0], "Unsqueeze");
    if (u < 0) return value;
    std::vector<int64_t> axes;
    const Node& un = node(u);
    if (un.inputs.size() > 1) {
      if (!genai::constant_ints(g_, un.inputs[1], &axes)) return value;
    } else if (const Attribute* a = un.find_attr("axes")) {
      axes = a->ints;
    }
    if (axes != std::vector<int64_t>{2}) return value;
    take(r);
    take(e);
    take(u);
    rep->expand_shape = node(e).inputs[1];
    rep->reshape_shape = node(r).inputs[1];
    return un.inputs[0];
  }

  bool run(int softmax) {
    const Node& sm = node(softmax);
    if (sm.op_type != "Softmax" || !sm.domain.empty() || sm.inputs.size() != 1 || sm.outputs.size() != 1) return false;
    const std::vector<Dim>* sd = facts_.dims(sm.inputs[0]);
    const int64_t axis = attr_int_or(sm, "axis", -1);
    if (!sd || sd->size() != 4) return false;  // not a [B, H, S, T] attention softmax
    if (axis != -1 && axis != 3) return fail("the Softmax is not over the last axis");
    m_->softmax = softmax;
    take(softmax);

    // Output side: MatMul(probs, V) -> Transpose 0213 -> Reshape.
    const std::vector<int>& readers = index_.consumers(sm.outputs[0]);
    if (readers.size() != 1 || index_.is_graph_output(sm.outputs[0]))
      return fail("the Softmax output has other readers");
    const int pv = readers[0];
    if (node(pv).op_type != "MatMul" || node(pv).inputs.size() != 2 || node(pv).inputs[0] != sm.outputs[0]) {
      return fail("the probabilities are not the first input of a MatMul with V");
    }
    take(pv);
    const std::vector<int>& pv_readers = index_.consumers(node(pv).outputs[0]);
    const int tr = pv_readers.size() == 1 ? pv_readers[0] : -1;
    if (tr < 0 || node(tr).op_type != "Transpose" || !perm_is(tr, {0, 2, 1, 3})) {
      return fail("the attention output is not read by one Transpose(perm 0,2,1,3)");
    }
    take(tr);
    const std::vector<int>& tr_readers = index_.consumers(node(tr).outputs[0]);
    const int out = tr_readers.size() == 1 ? tr_readers[0] : -1;
    if (out < 0 || node(out).op_type != "Reshape" || node(out).inputs.size() < 2) {
      return fail("the transposed attention output is not read by one Reshape (merging the heads)");
    }
    take(out);
    m_->out_target = node(out).inputs[1];
    m_->output = node(out).outputs[0];

    // V: present_v or repeat_kv(present_v); present_v = Concat(past_v, v heads).
    m_->present_v = through_repeat(node(pv).inputs[1], &m_->v_repeat);
    std::string v_new;
    if (!kv_concat(m_->present_v, "V", &m_->past_v, &v_new)) return false;
    if (!head_split(v_new, "V", &m_->v)) return false;

    // Mask: Add(scores, mask) or Where(cond, scores, fill) / Where(cond, fill, scores).
    std::string scores;
    const std::string& masked = sm.inputs[0];
    if (const int add = producer(masked, "Add"); add >= 0 && node(add).inputs.size() == 2) {
      take(add);
      const Node& a = node(add);
      // The scores side is the one computed from a MatMul (directly or through the scale).
      const bool first_is_scores = leads_to_qk(a.inputs[0]);
      if (!first_is_scores && !leads_to_qk(a.inputs[1])) return fail("neither Add operand comes from the Q.K MatMul");
      scores = a.inputs[first_is_scores ? 0 : 1];
      m_->mask = a.inputs[first_is_scores ? 1 : 0];
      m_->mask_kind = AttentionMatch::Mask::kAdditive;
    } else if (const int w = producer(masked, "Where"); w >= 0 && node(w).inputs.size() == 3) {
      take(w);
      const Node& n = node(w);
      m_->mask = n.inputs[0];
      if (scalar(n.inputs[2], &m_->fill) && leads_to_qk(n.inputs[1])) {
        scores = n.inputs[1];
        m_->mask_kind = AttentionMatch::Mask::kVisibleWhereTrue;
      } else if (scalar(n.inputs[1], &m_->fill) && leads_to_qk(n.inputs[2])) {
        scores = n.inputs[2];
        m_->mask_kind = AttentionMatch::Mask::kHiddenWhereTrue;
      } else {
        return fail("the Where is not (mask, scores, constant fill) or (mask, constant fill, scores)");
      }
      if (!(m_->fill <= -1e4))
        return fail("the masked scores are filled with " + std::to_string(m_->fill) + ", not a large negative value");
    } else {
      return fail("the softmax input is neither Add(scores, mask) nor Where(mask, ...): no causal mask");
    }

    // Scale: Mul(qk, c) / Div(qk, c), or none.
    std::string qk = scores;
    if (const int mul = producer(scores, "Mul"); mul >= 0 && node(mul).inputs.size() == 2) {
      double c = 0;
      const Node& n = node(mul);
      if (scalar(n.inputs[1], &c)) {
        qk = n.inputs[0];
      } else if (scalar(n.inputs[0], &c)) {
        qk = n.inputs[1];
      } else {
        return fail("the scores are multiplied by a non-constant");
      }
      take(mul);
      m_->scale = c;
    } else if (const int div = producer(scores, "Div"); div >= 0 && node(div).inputs.size() == 2) {
      double c = 0;
      if (!scalar(node(div).inputs[1], &c) || c == 0) return fail("the scores are divided by a non-constant");
      take(div);
      qk = node(div).inputs[0];
      m_->scale = 1.0 / c;
    }
    const int mm = producer(qk, "MatMul");
    if (mm < 0 || node(mm).inputs.size() != 2) return fail("the scores are not a MatMul of Q and K^T");
    take(mm);

    // K side: Transpose(K, 0132), K = present_k or repeat_kv(present_k).
    const int kt = producer(node(mm).inputs[1], "Transpose");
    if (kt < 0 || !perm_is(kt, {0, 1, 3, 2})) return fail("the second MatMul input is not Transpose(K, perm 0,1,3,2)");
    take(kt);
    m_->present_k = through_repeat(node(kt).inputs[0], &m_->k_repeat);
    std::string k_new;
    if (!kv_concat(m_->present_k, "K", &m_->past_k, &k_new)) return false;
    const std::string k_heads = through_rotary(k_new, &m_->k_rotary);
    if (!head_split(k_heads, "K", &m_->k)) return false;

    // Q side: [Mul(q, c)] over rotary over the head split.
    std::string q = node(mm).inputs[0];
    if (const int mul = producer(q, "Mul"); mul >= 0 && node(mul).inputs.size() == 2) {
      double c = 0;
      const Node& n = node(mul);
      const int qi = scalar(n.inputs[1], &c) ? 0 : (scalar(n.inputs[0], &c) ? 1 : -1);
      if (qi < 0) return fail("Q is multiplied by a non-constant before the scores");
      take(mul);
      m_->scale *= c;
      q = n.inputs[qi];
    }
    const std::string q_heads = through_rotary(q, &m_->q_rotary);
    if (!head_split(q_heads, "Q", &m_->q)) return false;
    if (m_->q_rotary.present != m_->k_rotary.present) return fail("only one of Q and K has a rotary embedding");
    if (m_->q_rotary.present &&
        (m_->q_rotary.position_ids != m_->k_rotary.position_ids || m_->q_rotary.cos_cache != m_->k_rotary.cos_cache ||
         m_->q_rotary.sin_cache != m_->k_rotary.sin_cache || m_->q_rotary.interleaved != m_->k_rotary.interleaved)) {
      return fail("Q and K rotary embeddings differ (positions, tables or interleaving)");
    }
    if (!(m_->scale > 0) || !std::isfinite(m_->scale))
      return fail("the scale " + std::to_string(m_->scale) + " is not positive");
    return true;
  }

 private:
  // True when `value` is MatMul(...), Mul(MatMul, c) or Div(MatMul, c).
  bool leads_to_qk(const std::string& value) {
    const int p = value.empty() ? -1 : index_.producer(value);
    if (p < 0) return false;
    const Node& n = node(p);
    if (n.op_type == "MatMul") return true;
    if ((n.op_type == "Mul" || n.op_type == "Div") && n.inputs.size() == 2) {
      for (const std::string& in : n.inputs) {
        const int q = in.empty() ? -1 : index_.producer(in);
        if (q >= 0 && node(q).op_type == "MatMul") return true;
      }
    }
    return false;
  }

  const Graph& g_;
  const GraphIndex& index_;
  const ShapeFacts& facts_;
  AttentionMatch* m_;
  std::string* why_;
};

}  // namespace

bool match_attention(const Graph& g, const GraphIndex& index, const ShapeFacts& facts, int softmax, AttentionMatch* m,
                     std::string* why) {
  why->clear();
  Matcher matcher(g, index, facts, m, why);
  return matcher.run(softmax);
}

}  // namespace convert
}  // namespace xonnx
