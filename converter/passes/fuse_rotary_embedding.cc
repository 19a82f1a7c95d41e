// GenAI pass: fuses a decomposed rotary position embedding of a 4-D [B, N, S, head] tensor
//   y = Add(Mul(x, cos), Mul(rotate(x), sin))            (operands of Add and Mul in any order)
//   rotate-half:  Concat(Neg(Slice(x, h:, last axis)), Slice(x, :h, last axis), last axis)
//   interleaved:  Reshape(Concat(Unsqueeze(Neg(Slice(x, 1::2)), -1), Unsqueeze(Slice(x, 0::2), -1), -1))
//                 back to x's shape (GPT-J's rotate_every_two)
// into com.microsoft RotaryEmbedding(x, position_ids, cos_cache, sin_cache, interleaved). h is half
// of x's last dim. cos and sin may be rows gathered from constant tables or computed in the graph;
// rotary_tables.h finds the positions they are a function of and tabulates them ([rows, h]).
// position_ids: the positions when they are [B, S]; 1-D [S] positions are broadcast to [B, S]
// with B from x (one small index chain per positions tensor, placed before its first use).
// A candidate (an Add of two Muls, one operand of which is a Concat / Reshape over a Neg) that
// does not match is reported with the check that failed.
#include <map>
#include <string>
#include <vector>

#include "runtime/ir/graph_edit.h"
#include "converter/passes/genai_util.h"
#include "converter/passes/passes.h"
#include "converter/passes/rotary_tables.h"

namespace xonnx {
namespace convert {
namespace {

constexpr int64_t kSliceToEnd = 1LL << 40;  // ends at or beyond this are "to the end"

struct RotarySite {
  std::string x, cos, sin;
  bool interleaved = false;
  std::vector<int> nodes;  // every matched node; `add` writes y
  int add = -1;
};

// Slice(x, [start], [end], [axis], [step]) over the last axis of a rank-4 x. `end` < 0 means "to
// the end (head or beyond)".
bool is_last_axis_slice(const FusionView& v, const Graph& g, int i, const std::string& x, int64_t head, int64_t start,
                        int64_t end, int64_t step) {
  if (!v.is(i, "Slice")) return false;
  const Node& n = v.node(i);
  if (n.inputs[0] != x || n.inputs.size() < 4) return false;
  int64_t s = 0, e = 0, axis = 0, st = 1;
  if (!genai::constant_int(g, n.inputs[1], &s) || !genai::constant_int(g, n.inputs[2], &e) ||
      !genai::constant_int(g, n.inputs[3], &axis)) {
    return false;
  }
  if (n.inputs.size() > 4 && !n.inputs[4].empty() && !genai::constant_int(g, n.inputs[4], &st)) return false;
  if (axis != -1 && axis != 3) return false;
  if (s != start || st != step) return false;
  return end < 0 ? (e >= head || e >= kSliceToEnd) : e == end;
}

bool is_last_axis_concat(const Node& n, size_t rank) {
  const int64_t axis = attr_int_or(n, "axis", 0);
  return n.inputs.size() == 2 && (axis == -1 || axis == static_cast<int64_t>(rank) - 1);
}

// Unsqueeze(value, [-1] or [4]) (axes as attribute before opset 13).
int unsqueeze_last(const FusionView& v, const Graph& g, const std::string& out, std::string* in) {
  const int u = v.sole_producer(out);
  if (!v.is(u, "Unsqueeze")) return -1;
  const Node& n = v.node(u);
  std::vector<int64_t> axes;
  if (n.inputs.size() > 1) {
    if (!genai::constant_ints(g, n.inputs[1], &axes)) return -1;
  } else if (const Attribute* a = n.find_attr("axes")) {
    axes = a->ints;
  }
  if (axes.size() != 1 || (axes[0] != -1 && axes[0] != 4)) return -1;
  *in = n.inputs[0];
  return u;
}

// rotate-half(x) = r: appends its nodes.
bool match_rotate_half(const FusionView& v, const Graph& g, const std::string& r, const std::string& x, int64_t head,
                       std::vector<int>* nodes) {
  const int cat = v.sole_producer(r);
  if (!v.is(cat, "Concat") || !is_last_axis_concat(v.node(cat), 4)) return false;
  const int neg = v.sole_producer(v.node(cat).inputs[0]);
  if (!v.is(neg, "Neg")) return false;
  const int hi = v.sole_producer(v.node(neg).inputs[0]);
  const int lo = v.sole_producer(v.node(cat).inputs[1]);
  const int64_t h = head / 2;
  if (!is_last_axis_slice(v, g, hi, x, head, h, -1, 1) || !is_last_axis_slice(v, g, lo, x, head, 0, h, 1)) return false;
  nodes->insert(nodes->end(), {cat, neg, hi, lo});
  return true;
}

// rotate_every_two(x) = r: appends its nodes (the Reshape's shape computation is left to DCE).
bool match_rotate_interleaved(const FusionView& v, const Graph& g, const ShapeFacts& facts, const std::string& r,
                              const std::string& x, int64_t head, std::vector<int>* nodes) {
  const int reshape = v.sole_producer(r);
  if (!v.is(reshape, "Reshape")) return false;
  // The Reshape merges the [.., h / 2, 2] pairs back: 4-D with x's first three dims (the last one
  // then holds the remaining h elements, whether or not inference could name it).
  const std::vector<Dim>* rd = facts.dims(r);
  const std::vector<Dim>* xd = facts.dims(x);
  if (!rd || !xd || rd->size() != 4 || xd->size() != 4) return false;
  if (!dims_equal({rd->begin(), rd->begin() + 3}, {xd->begin(), xd->begin() + 3})) return false;
  // Without torch's constant folding the Reshape's target is computed from Shape(the Concat):
  // that Shape is the Concat's only other reader allowed, and the pairs are then left to DCE.
  const std::string& pairs = v.node(reshape).inputs[0];
  const int cat = v.index().producer(pairs);
  bool shape_readers = false;
  if (v.index().is_graph_output(pairs)) return false;
  for (int reader : v.index().consumers(pairs)) {
    if (reader == reshape) continue;
    if (v.node(reader).op_type != "Shape") return false;
    shape_readers = true;
  }
  if (!v.is(cat, "Concat") || !is_last_axis_concat(v.node(cat), 5)) return false;
  std::string odd_neg, even;
  const int u0 = unsqueeze_last(v, g, v.node(cat).inputs[0], &odd_neg);
  const int u1 = unsqueeze_last(v, g, v.node(cat).inputs[1], &even);
  if (u0 < 0 || u1 < 0) return false;
  const int neg = v.sole_producer(odd_neg);
  if (!v.is(neg, "Neg")) return false;
  const int odd = v.sole_producer(v.node(neg).inputs[0]);
  const int ev = v.sole_producer(even);
  if (!is_last_axis_slice(v, g, odd, x, head, 1, -1, 2) || !is_last_axis_slice(v, g, ev, x, head, 0, -1, 2))
    return false;
  if (shape_readers) {
    nodes->push_back(reshape);
  } else {
    nodes->insert(nodes->end(), {reshape, cat, u0, u1, neg, odd, ev});
  }
  return true;
}

// A Concat (or a Reshape of one) with a Neg among its producers: the shape of a rotate, so a
// failed match is worth a report line.
bool looks_like_rotate(const FusionView& v, const std::string& r) {
  const GraphIndex& idx = v.index();
  int p = idx.producer(r);
  if (p >= 0 && v.node(p).op_type == "Reshape") p = idx.producer(v.node(p).inputs[0]);
  if (p < 0 || v.node(p).op_type != "Concat") return false;
  for (const std::string& in : v.node(p).inputs) {
    int q = idx.producer(in);
    if (q >= 0 && v.node(q).op_type == "Unsqueeze") q = idx.producer(v.node(q).inputs[0]);
    if (q >= 0 && v.node(q).op_type == "Neg") return true;
  }
  return false;
}

// From the Add `add`; *why names the failed check when the Add looks like a rotary embedding.
bool match_site(const FusionView& v, const Graph& g, const ShapeFacts& facts, int add, RotarySite* site,
                std::string* why) {
  if (!v.is(add, "Add")) return false;
  const Node& a = v.node(add);
  const int m[2] = {v.sole_producer(a.inputs[0]), v.sole_producer(a.inputs[1])};
  if (!v.is(m[0], "Mul") || !v.is(m[1], "Mul")) return false;
  bool candidate = false;
  for (int plain_side = 0; plain_side < 2; ++plain_side) {
    const Node& plain = v.node(m[plain_side]);
    const Node& rot = v.node(m[1 - plain_side]);
    for (int xi = 0; xi < 2; ++xi) {
      const std::string& x = plain.inputs[xi];
      const std::string& cos = plain.inputs[1 - xi];
      for (int ri = 0; ri < 2; ++ri) {
        const std::string& r = rot.inputs[ri];
        const std::string& sin = rot.inputs[1 - ri];
        if (!looks_like_rotate(v, r)) continue;
        candidate = true;
        const std::vector<Dim>* xd = facts.dims(x);
        if (!xd || xd->size() != 4 || !xd->back().known() || xd->back().value % 2) {
          // Only when no other operand order got further: that one's reason is the useful one.
          if (why->empty()) *why = "x '" + x + "' is not known to be 4-D [B, N, S, head] with an even head size";
          continue;
        }
        const int64_t head = xd->back().value;
        std::vector<int> nodes = {add, m[0], m[1]};
        if (match_rotate_half(v, g, r, x, head, &nodes)) {
          site->interleaved = false;
        } else if (match_rotate_interleaved(v, g, facts, r, x, head, &nodes)) {
          site->interleaved = true;
        } else {
          *why = "'" + r + "' is not rotate-half or rotate-every-two of '" + x +
                 "' (Slice starts / ends / axes / steps, Neg, Concat axis or Reshape shape differ)";
          continue;
        }
        site->x = x;
        site->cos = cos;
        site->sin = sin;
        site->nodes = nodes;
        site->add = add;
        return true;
      }
    }
  }
  if (candidate && why->empty()) *why = "no operand order matches";
  return false;
}

struct Fused {
  RotaryTables tables;
  std::string cos_cache, sin_cache, position_ids;
  std::string batch_source;  // 1-D positions: a 4-D value whose dim 0 is the batch
  int first_node = -1;       // the first rotary node reading position_ids (after commit: by output)
  std::string first_output;
};

// Nodes making int64 [B, S] position ids from 1-D positions [S] and the batch of `x`.
std::vector<Node> position_ids_chain(Graph& g, int64_t opset, const std::string& positions, const std::string& x,
                                     const std::string& ids) {
  const std::string p = ids + "/";
  const std::string zero = add_initializer(g, p + "zero", Tensor::from_vector<int64_t>({0}, {1}));
  const std::string one = add_initializer(g, p + "one", Tensor::from_vector<int64_t>({1}, {1}));
  std::vector<Node> chain;
  chain.push_back(genai::make_node("Shape", "", p + "x_shape", {x}, {p + "x_shape"}));
  chain.push_back(genai::make_node("Slice", "", p + "batch", {p + "x_shape", zero, one, zero}, {p + "batch"}));
  chain.push_back(genai::make_node("Shape", "", p + "length", {positions}, {p + "length"}));
  chain.push_back(genai::make_node("Concat", "", p + "shape", {p + "batch", p + "length"}, {p + "shape"},
                                   {genai::int_attribute("axis", 0)}));
  if (opset >= 13) {
    chain.push_back(genai::make_node("Unsqueeze", "", p + "row", {positions, zero}, {p + "row"}));
  } else {
    chain.push_back(
        genai::make_node("Unsqueeze", "", p + "row", {positions}, {p + "row"}, {genai::ints_attribute("axes", {0})}));
  }
  chain.push_back(genai::make_node("Expand", "", ids, {p + "row", p + "shape"}, {ids}));
  return chain;
}

}  // namespace

Result<bool> fuse_rotary_embedding(Model& model, PassContext& ctx) {
  Graph& g = model.graph;
  const ShapeFacts facts = infer_shapes(model);
  FusionView view(g);
  std::map<std::pair<std::string, std::string>, Fused> by_tables;  // (cos, sin) -> tables
  std::map<std::string, std::string> ids_of;                       // positions -> position_ids
  std::vector<Fused*> chains;                                      // 1-D positions to expand
  int fused = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    RotarySite site;
    std::string why;
    if (!match_site(view, g, facts, static_cast<int>(i), &site, &why)) {
      if (!why.empty()) ctx.diagnose("rotary embedding at " + g.nodes[i].describe() + " not fused: " + why);
      continue;
    }
    const int64_t head = facts.dims(site.x)->back().value;
    auto key = std::make_pair(site.cos, site.sin);
    auto it = by_tables.find(key);
    if (it == by_tables.end()) {
      auto tables =
          rotary_tables(model, facts, site.cos, site.sin, head, site.interleaved, ctx.options.genai.context_length);
      if (!tables.is_ok()) {
        ctx.diagnose("rotary embedding at " + g.nodes[i].describe() + " not fused: " + tables.status().message());
        continue;
      }
      Fused f;
      f.tables = std::move(tables).value();
      it = by_tables.emplace(key, std::move(f)).first;
    }
    Fused& f = it->second;
    if (!view.claim(site.nodes)) continue;
    if (f.cos_cache.empty()) {
      f.cos_cache = add_initializer(g, "cos_cache", f.tables.cos);
      f.sin_cache = add_initializer(g, "sin_cache", f.tables.sin);
      auto known = ids_of.find(f.tables.positions);
      if (f.tables.positions_rank == 2) {
        f.position_ids = f.tables.positions;
      } else if (known != ids_of.end()) {
        f.position_ids = known->second;
      } else {
        f.position_ids = unique_name(g, f.tables.positions + "/position_ids");
        f.batch_source = site.x;
        f.first_output = view.node(site.add).outputs[0];
        ids_of[f.tables.positions] = f.position_ids;
        chains.push_back(&f);
      }
    }
    Node rope = genai::make_node("RotaryEmbedding", "com.microsoft", view.node(site.add).name,
                                 {site.x, f.position_ids, f.cos_cache, f.sin_cache}, {view.node(site.add).outputs[0]},
                                 {genai::int_attribute("interleaved", site.interleaved ? 1 : 0)});
    ctx.note("rotary embedding of '" + site.x + "' -> RotaryEmbedding (" +
             (site.interleaved ? "interleaved" : "rotate-half") + ", [" + std::to_string(f.tables.cos.dim(0)) + ", " +
             std::to_string(f.tables.cos.dim(1)) + "] tables of positions '" + f.tables.positions + "')");
    view.replace(site.nodes, site.add, std::move(rope));
    ++fused;
  }
  if (fused == 0) return false;
  view.commit();
  // Each [B, S] position_ids chain goes right before the first rotary node reading it.
  for (const Fused* f : chains) {
    size_t at = 0;
    while (at < g.nodes.size() && (g.nodes[at].outputs.empty() || g.nodes[at].outputs[0] != f->first_output)) ++at;
    std::vector<Node> chain =
        position_ids_chain(g, genai::onnx_opset(model), f->tables.positions, f->batch_source, f->position_ids);
    g.nodes.insert(g.nodes.begin() + static_cast<std::ptrdiff_t>(at), chain.begin(), chain.end());
  }
  model.opset_imports.emplace("com.microsoft", 1);
  return true;
}

}  // namespace convert
}  // namespace xonnx
