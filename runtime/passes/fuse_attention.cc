// Torch's attention, MatMul(Q, K^T) [then Mul / Div by a scalar] [then Add(mask), or
// masked_fill's Where(condition, -inf or finfo.min, .)] then Softmax over the keys then
// MatMul(., V), -> one ONNX Attention (opset 23, set on the node) with an explicit scale: its
// optimized kernel keeps each block of query rows' scores in cache through the softmax and the
// product with V, where the three ops wrote and read [heads, S, T] twice. Also from
// com.microsoft FusedMatMul (fuse-matmul-scale's output, alpha and transB). Session creation
// only, and only where the optimized kernel is registered: the converter writes files for
// runtimes that know the source opset.
//
// Rank 4 ([B, heads, S, d]) maps as is; rank 3 ([B * heads, S, d], nn.MultiheadAttention) as
// one head per batch entry (q_num_heads = kv_num_heads = 1); where Q, K, V and the output are
// transposes of [.., S, N, d] values, as a 3-D Attention of N heads reading them in place
// (HeadsInRows). K comes from K^T's Transpose (its input when the perm only swaps the last two
// axes, else a Transpose with those swapped) or a new Transpose of K^T. A Where's mask becomes
// Where(condition, fill, 0), added to the scores.
// Declined: masks of rank 0 or 1 (Attention's are 2 to 4), batch or head dims that differ or
// are not known to match (MatMul would broadcast them), a value head size unlike the query's, a
// mask that would broadcast the scores up or whose batch dim would meet Attention's head dim
// (rank 3), a Where's fill above -1e30, any intermediate another node reads. A mask whose last
// dim is not provably the keys' count (Hugging Face's, from attention_mask's total length) is
// expanded to the keys' count first: Expand fails or broadcasts exactly where the Add did, where
// Attention would pad a shorter mask.
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "runtime/core/checked.h"
#include "runtime/ir/graph_edit.h"
#include "runtime/ops/registry.h"
#include "runtime/passes/fusion_view.h"
#include "runtime/passes/pass_util.h"
#include "runtime/passes/passes.h"
#include "runtime/passes/shape_inference.h"

namespace xonnx {
namespace passes {

namespace {

constexpr int64_t kAttentionOpset = 23;

bool is_one(const Dim& d) { return d.known() && d.value == 1; }

// The scores: MatMul(Q, K^T), or FusedMatMul(Q, B) without transposes of A or the batches
// (alpha, and transB: B is K itself), then optionally a Mul or Div by a float scalar.
struct Scores {
  std::string q, b;
  bool b_is_k = false;
  float scale = 1.0f;
  std::vector<int> nodes;
};

bool match_product(const FusionView& view, int i, Scores* s) {
  if (i < 0) return false;
  const Node& n = view.node(i);
  if (view.is(i, "MatMul") && n.inputs.size() == 2) {
    s->q = n.inputs[0], s->b = n.inputs[1];
  } else if (n.domain == "com.microsoft" && n.op_type == "FusedMatMul" && n.inputs.size() == 2) {
    for (const char* off : {"transA", "transBatchA", "transBatchB"}) {
      if (attr_int_or(n, off, 0) != 0) return false;
    }
    s->q = n.inputs[0], s->b = n.inputs[1], s->b_is_k = attr_int_or(n, "transB", 0) != 0;
    s->scale *= attr_float_or(n, "alpha", 1.0f);
  } else {
    return false;
  }
  s->nodes.push_back(i);
  return std::isfinite(s->scale) && s->scale != 0.0f;
}

// Node p, a Mul or Div by a float scalar of rank <= rank (Div: only the divisor may be it):
// the factor it applies and its other input.
bool scalar_factor(const FusionView& view, const Graph& g, int p, int64_t rank, float* factor, std::string* other) {
  if (!view.is(p, "Mul") && !view.is(p, "Div")) return false;
  const Node& n = view.node(p);
  const bool div = view.is(p, "Div");
  for (size_t c = div ? 1 : 0; c < 2; ++c) {
    const Tensor* t = constant_tensor(g, n.inputs[c]);
    if (!t || t->dtype() != DataType::kFloat || t->numel() != 1 || static_cast<int64_t>(t->rank()) > rank) continue;
    const float v = static_cast<float>(t->get_as_double(0));
    *factor = div ? 1.0f / v : v;
    *other = n.inputs[1 - c];
    return true;
  }
  return false;
}

bool match_scores(const FusionView& view, const Graph& g, const std::string& value, int64_t rank, Scores* out) {
  Scores s;
  const int p = view.sole_producer(value);
  std::string product;
  if (view.is(p, "Mul") || view.is(p, "Div")) {
    if (!scalar_factor(view, g, p, rank, &s.scale, &product)) return false;
    s.nodes.push_back(p);
    if (!match_product(view, view.sole_producer(product), &s)) return false;
    *out = std::move(s);
    return true;
  }
  if (!match_product(view, p, &s)) return false;
  *out = std::move(s);
  return true;
}

// A mask of these dims added to scores of product_dims (rank 3 or 4) as Attention adds its
// attn_mask: rank 2 to 4, not growing the scores, and at rank 3 no batch dim (it would meet
// Attention's single head dim). *keys_proven: its last dim is provably the keys' count.
bool mask_fits(const std::vector<Dim>& mask, const std::vector<Dim>& product_dims, bool* keys_proven) {
  const int64_t rank = static_cast<int64_t>(product_dims.size()), lead = rank - static_cast<int64_t>(mask.size());
  if (mask.size() < 2 || lead < 0) return false;
  for (int64_t d = lead; d < rank - 1; ++d) {
    const Dim& m = mask[static_cast<size_t>(d - lead)];
    if (!is_one(m) && !(dim_equal(m, product_dims[static_cast<size_t>(d)]) && !(rank == 3 && d == 0))) return false;
  }
  *keys_proven = dim_equal(mask.back(), product_dims.back());
  return true;
}

// The graph's initializers the key-count Expands read, added once per pass run.
struct KeyCountConstants {
  std::string starts, ends, axes;       // Slice [-2, -1) of axis 0: a [.., T, d] K's T
  std::map<int64_t, std::string> ones;  // [1] * n, by n
};

// Nodes (appended to *nodes) that expand `mask` (of rank mask_rank) to the key count T of `k`
// [.., T, d] in its last dim; returns the expanded mask.
std::string expand_to_key_count(Graph& g, NameAllocator& names, KeyCountConstants& c, const std::string& mask,
                                int64_t mask_rank, const std::string& k, const std::string& name,
                                std::vector<Node>* nodes) {
  const auto constant = [&](std::string& slot, const char* base, std::vector<int64_t> v) {
    if (slot.empty())
      slot = add_initializer(g, names, base, Tensor::from_vector(v, Shape{static_cast<int64_t>(v.size())}));
    return slot;
  };
  const auto node = [&](const char* op, std::vector<std::string> inputs, std::vector<Attribute> attributes = {}) {
    const std::string node_name = names.fresh(name + "/mask_keys_" + op);
    nodes->push_back(
        make_node(op, "", node_name, std::move(inputs), {names.fresh(node_name + "_output")}, std::move(attributes)));
    return nodes->back().outputs[0];
  };
  const std::string shape = node("Shape", {k});
  const std::string keys =
      node("Slice", {shape, constant(c.starts, "attention_keys_start", {-2}),
                     constant(c.ends, "attention_keys_end", {-1}), constant(c.axes, "attention_keys_axis", {0})});
  const std::string ones = constant(c.ones[mask_rank - 1], "attention_mask_ones",
                                    std::vector<int64_t>(static_cast<size_t>(mask_rank - 1), 1));
  const std::string target = node("Concat", {ones, keys}, {int_attribute("axis", 0)});
  return node("Expand", {mask, target});
}

// K [.., T, d] from K^T: the input of the Transpose that made K^T when its perm only swaps the
// last two axes, else a Transpose (appended to *nodes) of that input or of K^T itself.
std::string key_from(const FusionView& view, NameAllocator& names, const std::string& kt, int64_t rank,
                     const std::string& name, std::vector<Node>* nodes) {
  std::vector<int64_t> perm(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d) perm[static_cast<size_t>(d)] = d;
  std::string source = kt;
  const int t = view.index().producer(kt);
  const Attribute* tp = t >= 0 ? view.node(t).find_attr("perm") : nullptr;
  if (tp && is_default(view.node(t), "Transpose") && static_cast<int64_t>(tp->ints.size()) == rank) {
    perm = tp->ints;
    source = view.node(t).inputs[0];
  }
  std::swap(perm[static_cast<size_t>(rank - 2)], perm[static_cast<size_t>(rank - 1)]);
  bool identity = true;
  for (int64_t d = 0; d < rank; ++d) identity = identity && perm[static_cast<size_t>(d)] == d;
  if (identity) return source;
  Node transpose;
  transpose.op_type = "Transpose";
  transpose.name = name;
  transpose.inputs = {source};
  transpose.outputs = {names.fresh(name + "_output")};
  transpose.attributes = {ints_attribute("perm", perm)};
  nodes->push_back(std::move(transpose));
  return nodes->back().outputs[0];
}

// The [B, kvh, T, d] source of K or V [B, kvh * rep, T, d] that torch's repeat_kv made,
// Reshape(Expand(Unsqueeze(x, 2), [B, kvh, rep, T, d]), [B, kvh * rep, T, d]), with its kvh; or
// ("", 0). Attention groups query heads over kv heads the same way (head h reads kv head
// h / rep), so it can read x itself and the rep copies of K and V go.
std::pair<std::string, int64_t> repeated_kv_source(const FusionView& view, const Graph& g, const ShapeFacts& facts,
                                                   const std::string& value) {
  const GraphIndex& index = view.index();
  const int reshape = index.producer(value);
  if (reshape < 0 || !is_default(view.node(reshape), "Reshape")) return {"", 0};
  const int expand = index.producer(view.node(reshape).inputs[0]);
  if (expand < 0 || !is_default(view.node(expand), "Expand")) return {"", 0};
  const int unsqueeze = index.producer(view.node(expand).inputs[0]);
  if (unsqueeze < 0 || !is_default(view.node(unsqueeze), "Unsqueeze")) return {"", 0};
  const Node& u = view.node(unsqueeze);
  std::vector<int64_t> axes;
  if (const Attribute* a = u.find_attr("axes")) {
    axes = a->ints;
  } else if (u.inputs.size() > 1) {
    const Tensor* t = constant_tensor(g, u.inputs[1]);
    if (!t) return {"", 0};
    auto values = t->to_int64_vector();
    if (!values.is_ok()) return {"", 0};
    axes = std::move(values).value();
  }
  if (axes != std::vector<int64_t>{2}) return {"", 0};
  const std::string& x = u.inputs[0];
  const std::vector<Dim>* xd = facts.dims(x);
  const std::vector<Dim>* ed = facts.dims(view.node(expand).outputs[0]);
  const std::vector<Dim>* rd = facts.dims(value);
  if (!xd || !ed || !rd || xd->size() != 4 || ed->size() != 5 || rd->size() != 4) return {"", 0};
  const Dim &kvh = (*xd)[1], &rep = (*ed)[2], &heads = (*rd)[1];
  if (!kvh.known() || !rep.known() || !heads.known() || heads.value != checked_mul(kvh.value, rep.value))
    return {"", 0};
  for (size_t d : {0, 2, 3}) {  // B, T, d through the Expand (at 0, 3, 4) and the Reshape
    if (!dim_equal((*xd)[d], (*ed)[d == 0 ? 0 : d + 1]) || !dim_equal((*xd)[d], (*rd)[d])) return {"", 0};
  }
  if (!dim_equal((*ed)[1], kvh)) return {"", 0};
  return {x, kvh.value};
}

// Attention's heads read in place. Torch cuts a projection's rows [.., S, N * d] into heads
// [.., S, N, d] (R) and transposes them for the products: Q and V are Transpose(R) to
// [B, N, S, d] (rank 4) or [N, S, d] (rank 3: nn.MultiheadAttention, its heads as batch entries),
// K^T is Transpose(R) to [.., d, T] (or K to [.., T, d]), and one Transpose turns the output back
// into R's layout. Attention reads each R as [B, S, N * d] (3-D, N heads, a head's rows N * d
// apart; rank 3: B = 1) and its output, reshaped, is that Transpose's: the four copies go, and a
// Div or Mul of Q by a scalar joins the scale.
struct HeadsInRows {
  std::string q, k, v;       // the R of each
  int64_t heads = 0, d = 0;  // N, d
  float scale = 1.0f;        // times the scores'
  int out = -1;              // the output's Transpose
  std::vector<int> nodes;    // every node that goes (out included)
};

bool has_perm(const FusionView& view, int i, const std::vector<int64_t>& perm) {
  const Attribute* a = i >= 0 && view.is(i, "Transpose") ? view.node(i).find_attr("perm") : nullptr;
  return a && a->ints == perm;
}

// R when `value` is Transpose(R, perm) read only by the fusion and R is [.., N, d] with N and d
// known (the same for Q, K and V); the Transpose joins m->nodes.
std::string head_rows(const FusionView& view, const ShapeFacts& facts, const std::string& value,
                      const std::vector<int64_t>& perm, HeadsInRows* m) {
  const int t = view.sole_producer(value);
  if (!has_perm(view, t, perm)) return "";
  const std::string& r = view.node(t).inputs[0];
  const std::vector<Dim>* rd = facts.dims(r);
  if (!rd || rd->size() != perm.size()) return "";
  const Dim &heads = (*rd)[perm.size() - 2], &d = (*rd)[perm.size() - 1];
  if (!heads.known() || !d.known()) return "";
  if (m->heads == 0) m->heads = heads.value, m->d = d.value;
  if (heads.value != m->heads || d.value != m->d) return "";
  m->nodes.push_back(t);
  return r;
}

bool match_heads_in_rows(const FusionView& view, const Graph& g, const ShapeFacts& facts, int64_t rank,
                         const Scores& scores, const std::string& v, const std::string& y, HeadsInRows* m) {
  std::string q = scores.q;
  const int scale = view.sole_producer(q);
  if (view.is(scale, "Mul") || view.is(scale, "Div")) {
    if (!scalar_factor(view, g, scale, rank, &m->scale, &q)) return false;
    if (!std::isfinite(m->scale) || m->scale == 0.0f) return false;
    m->nodes.push_back(scale);
  }
  // R -> [.., N, S, d] swaps S and N; R -> K^T [.., N, d, T] puts T last.
  const std::vector<int64_t> heads = rank == 3 ? std::vector<int64_t>{1, 0, 2} : std::vector<int64_t>{0, 2, 1, 3};
  const std::vector<int64_t> kt = rank == 3 ? std::vector<int64_t>{1, 2, 0} : std::vector<int64_t>{0, 2, 3, 1};
  m->q = head_rows(view, facts, q, heads, m);
  m->k = head_rows(view, facts, scores.b, scores.b_is_k ? heads : kt, m);
  m->v = head_rows(view, facts, v, heads, m);
  m->out = view.sole_consumer(y);
  if (m->q.empty() || m->k.empty() || m->v.empty() || !has_perm(view, m->out, heads)) return false;
  m->nodes.push_back(m->out);
  return true;
}

}  // namespace

Result<bool> fuse_attention(Model& model, PassContext& ctx) {
  const OpRegistry& registry = OpRegistry::global();
  if (!ctx.options.own_kernels || !registry.has_fast_kernel("", "Attention") ||
      !registry.resolve("", "Attention", kAttentionOpset).is_ok()) {
    return false;
  }
  Graph& g = model.graph;
  if (!has_default_node(g, "Softmax")) return false;
  const ShapeFacts& facts = ctx.shape_facts(model);
  const int64_t opset = model.opset_imports.count("") ? model.opset_imports.at("") : 0;
  FusionView view(g);
  NameAllocator names(g);
  std::string zero;                                    // the 0 of Where-made masks, added once
  KeyCountConstants key_count;                         // for masks expanded to the keys' count
  std::map<std::vector<int64_t>, std::string> shapes;  // Reshape shapes added, by dims
  int fused = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const int sm = static_cast<int>(i);
    if (!view.is(sm, "Softmax")) continue;
    const Node& softmax = view.node(sm);
    const std::vector<Dim>* s_dims = facts.dims(softmax.inputs[0]);
    const TypeInfo* s_type = facts.type(softmax.inputs[0]);
    if (!s_dims || !s_type || s_type->elem_type != DataType::kFloat) continue;
    const int64_t rank = static_cast<int64_t>(s_dims->size());
    if (rank != 3 && rank != 4) continue;
    const int64_t axis = attr_int_or(softmax, "axis", opset >= 13 ? -1 : 1);
    if (axis != -1 && axis != rank - 1) continue;

    // Forwards: the probabilities' one reader multiplies them by V.
    const int mm2 = view.sole_consumer(softmax.outputs[0]);
    if (!view.is(mm2, "MatMul") || view.node(mm2).inputs.size() != 2 || view.node(mm2).inputs[0] != softmax.outputs[0])
      continue;
    const std::string v = view.node(mm2).inputs[1];

    // Backwards: [Add(mask) or Where(condition, fill, .)] <- [Mul / Div by a scalar] <- the
    // product. Either operand of the Add may be the scores.
    std::vector<int> nodes = {sm, mm2};
    Scores scores;
    std::string mask;
    // Where(c, fill, S): the mask becomes Where(c, fill, 0), added to S. The same values where
    // fill is -inf or below -1e30 (torch's masked_fill with finfo.min): S + fill rounds to fill.
    std::vector<std::string> fill_mask;             // Where's inputs with the scores' replaced by "" (for 0)
    const std::vector<Dim>* product_dims = s_dims;  // the scores before the mask
    const int p = view.sole_producer(softmax.inputs[0]);
    if (!match_scores(view, g, softmax.inputs[0], rank, &scores)) {
      const bool add = view.is(p, "Add");
      if (!add && !(view.is(p, "Where") && view.node(p).inputs.size() == 3)) continue;
      const Node& n = view.node(p);
      size_t side = add ? 0 : 1;
      for (; side < n.inputs.size(); ++side) {
        if (!add) {
          const Tensor* fill = constant_tensor(g, n.inputs[3 - side]);
          if (!fill || fill->dtype() != DataType::kFloat || fill->numel() != 1 || !(fill->get_as_double(0) <= -1e30))
            continue;
        }
        if (match_scores(view, g, n.inputs[side], rank, &scores)) break;
      }
      if (side == n.inputs.size()) continue;
      if (add) {
        mask = n.inputs[1 - side];
      } else {
        mask = n.inputs[0];  // the condition, for the checks below
        fill_mask = n.inputs;
        fill_mask[side].clear();
      }
      product_dims = facts.dims(n.inputs[side]);
      if (!product_dims || product_dims->size() != s_dims->size()) continue;
      nodes.push_back(p);
    }
    nodes.insert(nodes.end(), scores.nodes.begin(), scores.nodes.end());

    // Shapes: Q [.., S, d], K^T [.., d, T] (or K [.., T, d]), V [.., T, d], the same batch and head
    // dims, the scores [.., S, T].
    const std::vector<Dim>* qd = facts.dims(scores.q);
    const std::vector<Dim>* bd = facts.dims(scores.b);
    const std::vector<Dim>* vd = facts.dims(v);
    if (!qd || !bd || !vd || static_cast<int64_t>(qd->size()) != rank || bd->size() != qd->size() ||
        vd->size() != qd->size())
      continue;
    bool ok = true;
    for (int64_t d = 0; d < rank - 2; ++d) ok = ok && dim_equal((*qd)[d], (*bd)[d]) && dim_equal((*qd)[d], (*vd)[d]);
    const Dim& head = (*qd)[static_cast<size_t>(rank - 1)];
    ok = ok && dim_equal((*vd)[static_cast<size_t>(rank - 1)], head);  // value head size = query's
    if (!ok) continue;
    bool keys_proven = true;
    int64_t mask_rank = 0;
    if (!mask.empty()) {
      const TypeInfo* mt = facts.type(mask);
      const std::vector<Dim>* md = facts.dims(mask);
      const DataType want = fill_mask.empty() ? DataType::kFloat : DataType::kBool;
      if (!mt || !md || mt->elem_type != want || !mask_fits(*md, *product_dims, &keys_proven)) continue;
      // The Expand's Slice, at the model's opset, reads its bounds from inputs (opset 10 on).
      if (!keys_proven && opset < 10) continue;
      mask_rank = static_cast<int64_t>(md->size());
    }
    HeadsInRows rows;
    const bool in_rows = match_heads_in_rows(view, g, facts, rank, scores, v, view.node(mm2).outputs[0], &rows);
    if (in_rows) nodes.insert(nodes.end(), rows.nodes.begin(), rows.nodes.end());
    if (!view.claim(nodes)) continue;

    std::vector<Node> replacement;
    const std::string& name = view.node(mm2).name;
    // in_rows: R as [B, S, N * d] (rank 3: [1, S, N * d]), and back.
    const auto reshape = [&](const std::string& x, const std::vector<int64_t>& dims, std::string out) {
      std::string& shape = shapes[dims];
      if (shape.empty())
        shape = add_initializer(g, names, "attention_heads_shape",
                                Tensor::from_vector(dims, Shape{static_cast<int64_t>(dims.size())}));
      Node n;
      n.op_type = "Reshape";
      n.name = names.fresh(name + "/heads");
      n.inputs = {x, shape};
      n.outputs = {out.empty() ? names.fresh(n.name + "_output") : std::move(out)};
      replacement.push_back(std::move(n));
      return replacement.back().outputs[0];
    };
    std::string k = in_rows         ? rows.k
                    : scores.b_is_k ? scores.b
                                    : key_from(view, names, scores.b, rank, name + "/K", &replacement);
    if (!fill_mask.empty()) {
      if (zero.empty()) zero = add_initializer(g, names, "attention_mask_zero", Tensor::scalar<float>(0.0f));
      Node where;
      where.op_type = "Where";
      where.name = view.node(mm2).name + "/mask";
      where.inputs = fill_mask;
      for (std::string& in : where.inputs)
        if (in.empty()) in = zero;
      mask = names.fresh(where.name + "_output");
      where.outputs = {mask};
      replacement.push_back(std::move(where));
    }
    std::string v_in = v;
    if (rank == 4 && !in_rows) {  // grouped-query attention exported through repeat_kv: K and V before their copies
      const auto [k_source, k_heads] = repeated_kv_source(view, g, facts, k);
      const auto [v_source, v_heads] = repeated_kv_source(view, g, facts, v);
      if (!k_source.empty() && k_heads == v_heads) {
        k = k_source;
        v_in = v_source;
      }
    }
    Node attention;
    attention.op_type = "Attention";
    attention.opset = kAttentionOpset;
    attention.name = name;
    attention.inputs = {scores.q, k, v_in};
    attention.outputs = view.node(mm2).outputs;
    attention.attributes = {float_attribute("scale", scores.scale)};
    int64_t heads = 1;
    if (in_rows) {
      const std::vector<int64_t> flat = rank == 3 ? std::vector<int64_t>{1, -1, rows.heads * rows.d}
                                                  : std::vector<int64_t>{0, 0, rows.heads * rows.d};
      attention.inputs = {reshape(rows.q, flat, ""), reshape(k, flat, ""), reshape(rows.v, flat, "")};
      attention.outputs = {names.fresh(name + "_heads_output")};
      attention.attributes[0].f = scores.scale * rows.scale;
      heads = rows.heads;
    }
    if (!mask.empty() && !keys_proven)
      mask = expand_to_key_count(g, names, key_count, mask, mask_rank, attention.inputs[1], name, &replacement);
    if (!mask.empty()) attention.inputs.push_back(mask);
    if (rank == 3 || in_rows) {
      attention.attributes.push_back(int_attribute("q_num_heads", heads));
      attention.attributes.push_back(int_attribute("kv_num_heads", heads));
    }
    const std::string y = attention.outputs[0];
    replacement.push_back(std::move(attention));
    if (in_rows) {
      const std::vector<int64_t> split =
          rank == 3 ? std::vector<int64_t>{-1, rows.heads, rows.d} : std::vector<int64_t>{0, 0, rows.heads, rows.d};
      reshape(y, split, view.node(rows.out).outputs[0]);
    }
    view.replace(nodes, mm2, std::move(replacement));
    ++fused;
  }
  if (fused == 0) return false;
  view.commit();
  ctx.note("fused " + std::to_string(fused) + " MatMul -> Softmax -> MatMul attentions into Attention (opset 23)");
  return true;
}

}  // namespace passes
}  // namespace xonnx
