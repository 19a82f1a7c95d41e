// Fuses the RMSNorm that torch exports decomposed (torch.rsqrt(x.pow(2).mean(-1) + eps)
// * x * weight, as Llama, Mistral, Qwen and Phi-3 write it):
//   ms = ReduceMean(Pow(x, 2) | Mul(x, x), last axis, keepdims); v = Add(ms, eps); r = Sqrt(v);
//   n = Mul(x, Div(1, r)) | Mul(x, Reciprocal(r)) | Div(x, r);  y = Mul(n, weight)  (operands in
//   either order; the weight Mul is optional)
// into SimplifiedLayerNormalization(x, weight, axis=-1, epsilon=eps, stash_type=1), the form ORT
// GenAI's model builder writes (an ORT contrib op in the default domain, whose own kernel is one
// row pass: session creation runs this pass on every model, the converter with --genai only, as
// the ONNX checker does not know the op).
// Every intermediate must be read only inside the pattern; eps a float32 scalar constant; the
// weight a float32 [D] constant with D x's last dim (a broadcast [1] weight is not a norm scale:
// the plain normalization fuses with a ones scale and the Mul stays). A candidate (a ReduceMean
// of a square) that does not match is reported with the check that failed.
#include <string>
#include <vector>

#include "runtime/ir/graph_edit.h"
#include "runtime/passes/fusion_view.h"
#include "runtime/passes/pass_util.h"
#include "runtime/passes/passes.h"
#include "runtime/passes/shape_inference.h"

namespace xonnx {
namespace passes {
namespace {

struct RmsMatch {
  std::vector<int> nodes;
  std::string x, weight;
  float eps = 0;
  int last = -1;
};

// The last dim of `x` when known (> 0), else -1.
int64_t last_dim(const ShapeFacts& facts, const std::string& x) {
  const std::vector<Dim>* d = facts.dims(x);
  if (!d || d->empty() || !d->back().known()) return -1;
  return d->back().value;
}

// ReduceMean over exactly the last axis with keepdims=1 (axes as attribute or, from opset 18,
// as a constant input).
bool reduces_last_axis(const Graph& g, const Node& n, int64_t opset, const ShapeFacts& facts) {
  if (attr_int_or(n, "keepdims", 1) != 1) return false;
  std::vector<int64_t> axes;
  if (opset >= 18) {
    const Tensor* t = n.inputs.size() > 1 ? constant_tensor(g, n.inputs[1]) : nullptr;
    auto v = t ? t->to_int64_vector() : Result<std::vector<int64_t>>(invalid_argument("no axes"));
    if (!v.is_ok()) return false;
    axes = *v;
  } else {
    const Attribute* a = n.find_attr("axes");
    if (!a) return false;
    axes = a->ints;
  }
  if (axes.size() != 1) return false;
  if (axes[0] == -1) return true;
  const std::vector<Dim>* d = facts.dims(n.inputs[0]);
  return d && axes[0] == static_cast<int64_t>(d->size()) - 1;
}

// From the ReduceMean `rm`; on failure *why says which check failed (empty: not a candidate).
bool match(const FusionView& v, const Model& model, const ShapeFacts& facts, int rm, RmsMatch* m, std::string* why) {
  const Graph& g = model.graph;
  if (!v.is(rm, "ReduceMean")) return false;
  const int sq = v.sole_producer(v.node(rm).inputs[0]);
  std::string x;
  if (v.is(sq, "Pow") && v.is_const(v.node(sq).inputs[1], 2.0, 0)) {
    x = v.node(sq).inputs[0];
  } else if (v.is(sq, "Mul") && v.node(sq).inputs[0] == v.node(sq).inputs[1]) {
    x = v.node(sq).inputs[0];
  } else {
    return false;  // not a mean of squares: not a candidate
  }
  const std::string where = "RMSNorm at " + v.node(rm).describe() + " not fused: ";
  if (!reduces_last_axis(g, v.node(rm), opset_of(model, v.node(rm)), facts)) {
    *why = where + "the ReduceMean does not reduce only the last axis with keepdims=1";
    return false;
  }
  const int add = v.sole_consumer(v.node(rm).outputs[0]);
  if (!v.is(add, "Add")) {
    *why = where + "the mean of squares is not read by one Add (of epsilon)";
    return false;
  }
  const Tensor* eps = constant_tensor(g, v.other_input(add, v.node(rm).outputs[0]));
  if (!eps || eps->dtype() != DataType::kFloat || eps->numel() != 1 || eps->rank() > 1 ||
      !(eps->data<float>()[0] >= 0)) {
    *why = where + "epsilon is not a non-negative float32 scalar constant";
    return false;
  }
  const int sqrt = v.sole_consumer(v.node(add).outputs[0]);
  if (!v.is(sqrt, "Sqrt")) {
    *why = where + "mean + epsilon is not read by one Sqrt";
    return false;
  }
  m->nodes = {sq, rm, add, sqrt};
  const std::string& r = v.node(sqrt).outputs[0];
  const int after = v.sole_consumer(r);
  int norm = -1;  // the node whose output is x / rms
  if (v.is(after, "Div") && v.node(after).inputs[0] == x && v.node(after).inputs[1] == r) {
    norm = after;
  } else if ((v.is(after, "Div") && v.node(after).inputs[1] == r && v.is_const(v.node(after).inputs[0], 1.0, 0)) ||
             v.is(after, "Reciprocal")) {
    m->nodes.push_back(after);
    const int mul = v.sole_consumer(v.node(after).outputs[0]);
    if (v.is(mul, "Mul") && v.other_input(mul, v.node(after).outputs[0]) == x) norm = mul;
  }
  if (norm < 0) {
    *why = where + "the square root is not used as x / rms (Div(x, r), Mul(x, 1 / r) or Mul(x, Reciprocal(r)))";
    return false;
  }
  m->nodes.push_back(norm);
  m->last = norm;
  m->x = x;
  m->eps = eps->data<float>()[0];
  const int64_t d = last_dim(facts, x);
  if (d <= 0) {
    *why = where + "the normalized (last) dim of '" + x + "' is not known";
    return false;
  }
  const int wmul = v.sole_consumer(v.node(norm).outputs[0]);
  if (v.is(wmul, "Mul")) {
    const std::string w = v.other_input(wmul, v.node(norm).outputs[0]);
    const Tensor* t = constant_tensor(g, w);
    if (t && t->dtype() == DataType::kFloat && t->rank() == 1 && t->dim(0) == d) {
      m->weight = w;
      m->nodes.push_back(wmul);
      m->last = wmul;
    }
  }
  return true;
}

}  // namespace

Result<bool> fuse_rms_norm(Model& model, PassContext& ctx) {
  Graph& g = model.graph;
  if (!has_default_node(g, "ReduceMean")) return false;  // spares the shape inference
  const ShapeFacts& facts = ctx.shape_facts(model);
  FusionView view(g);
  int fused = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    RmsMatch m;
    std::string why;
    if (!match(view, model, facts, static_cast<int>(i), &m, &why)) {
      if (!why.empty()) ctx.diagnose(why);
      continue;
    }
    if (!view.claim(m.nodes)) continue;
    std::string weight = m.weight;
    if (weight.empty()) {  // ones of the last dim
      const int64_t d = last_dim(facts, m.x);
      weight = add_ones_initializer(g, m.x + "_rms_scale", {d}, ctx.options.fold_size_limit_bytes);
      if (weight.empty()) {
        ctx.diagnose("RMSNorm of '" + m.x + "' not fused: its weight of ones (" + std::to_string(d) +
                     " floats) would exceed the folding limit");
        continue;
      }
    }
    Node ln = make_node("SimplifiedLayerNormalization", "", view.node(m.last).name, {m.x, weight},
                        {view.node(m.last).outputs[0]},
                        {int_attribute("axis", -1), float_attribute("epsilon", m.eps), int_attribute("stash_type", 1)});
    ctx.note("RMSNorm of '" + m.x + "' -> SimplifiedLayerNormalization '" + ln.outputs[0] + "'" +
             (m.weight.empty() ? " (no weight: ones)" : ""));
    view.replace(m.nodes, m.last, std::move(ln));
    ++fused;
  }
  if (fused == 0) return false;
  view.commit();
  return true;
}

}  // namespace passes
}  // namespace xonnx
