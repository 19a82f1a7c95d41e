// Fuses the decomposed LayerNorm the exporters emit below opset 17:
//   m = ReduceMean(x); d = Sub(x, m); p = Pow(d, 2); v = ReduceMean(p);
//   s = Sqrt(Add(v, eps)); n = Div(d, s); y = Add(Mul(n, gamma), beta)   (Mul/Add optional)
// into LayerNormalization(x, gamma, beta, axis=-K, epsilon=eps), over the last K axes, keepdims.
// LayerNormalization exists from opset 17 only: below it the converter leaves the pattern (see
// fuse_gelu for the com.microsoft route, which ORT does not offer for LayerNormalization in a
// portable way); session creation fuses it into a node of its own opset 17, which the runtime
// resolves per node and no file has to express. Each node is read at its own opset (nodes
// inlined from a function may carry one).
#include <algorithm>

#include "runtime/ir/graph_edit.h"
#include "runtime/passes/fusion_view.h"
#include "runtime/passes/pass_util.h"
#include "runtime/passes/passes.h"
#include "runtime/passes/shape_inference.h"

namespace xonnx {
namespace passes {

namespace {

// The reduced axes of a ReduceMean as negative axes [-K..-1], keepdims=1; K, or 0 if not.
int64_t trailing_axes(const Model& model, const Node& n, const ShapeFacts& facts) {
  const Graph& g = model.graph;
  const int64_t opset = opset_of(model, n);
  if (attr_int_or(n, "keepdims", 1) != 1 || n.inputs.empty()) return 0;
  std::vector<int64_t> axes;
  if (opset >= 18) {
    if (n.inputs.size() < 2 || n.inputs[1].empty()) return 0;
    const Tensor* t = constant_tensor(g, n.inputs[1]);
    if (!t) return 0;
    auto v = t->to_int64_vector();
    if (!v.is_ok()) return 0;
    axes = v.value();
  } else {
    const Attribute* a = n.find_attr("axes");
    if (!a) return 0;
    axes = a->ints;
  }
  if (axes.empty()) return 0;
  const std::vector<Dim>* dims = facts.dims(n.inputs[0]);
  const int64_t rank = dims ? static_cast<int64_t>(dims->size()) : -1;
  for (int64_t& a : axes) {
    if (a >= 0) {
      if (rank < 0) return 0;
      a -= rank;
    }
  }
  std::sort(axes.begin(), axes.end());
  const int64_t k = static_cast<int64_t>(axes.size());
  for (int64_t i = 0; i < k; ++i) {
    if (axes[static_cast<size_t>(i)] != i - k) return 0;
  }
  if (rank >= 0 && k > rank) return 0;
  return k;
}

// gamma/beta must have exactly the normalized shape; broadcasting a [1] would not be LayerNorm.
bool affine_shape_ok(const Tensor& t, int64_t k, const std::vector<Dim>* x_dims) {
  if (t.dtype() != DataType::kFloat || static_cast<int64_t>(t.rank()) != k) return false;
  for (int64_t i = 0; i < k; ++i) {
    const int64_t d = t.dim(static_cast<size_t>(i));
    if (x_dims && x_dims->size() >= static_cast<size_t>(k)) {
      const Dim& xd = (*x_dims)[x_dims->size() - static_cast<size_t>(k - i)];
      if (xd.known()) {
        if (xd.value != d) return false;
        continue;
      }
    }
    if (d <= 1) return false;  // unknown x dim: only a > 1 dim proves equality
  }
  return true;
}

struct LnMatch {
  std::vector<int> nodes;
  std::string x, gamma, beta;
  float eps = 0;
  int64_t k = 0;
  int last = -1;
};

bool match(const FusionView& v, const Model& model, const ShapeFacts& facts, bool any_opset, int rm1, LnMatch* m) {
  if (!v.is(rm1, "ReduceMean") || (!any_opset && opset_of(model, v.node(rm1)) < 17)) return false;
  const Graph& g = model.graph;
  const Node& mean = v.node(rm1);
  const int64_t k = trailing_axes(model, mean, facts);
  if (k == 0) return false;
  const std::string& x = mean.inputs[0];
  const int sub = v.sole_consumer(mean.outputs[0]);
  if (!v.is(sub, "Sub") || v.node(sub).inputs[0] != x || v.node(sub).inputs[1] != mean.outputs[0]) {
    return false;
  }
  const std::string& d = v.node(sub).outputs[0];
  const std::vector<int>& readers = v.index().consumers(d);
  if (readers.size() != 2 || v.index().is_graph_output(d)) return false;
  // Pow(d, 2) and Div(d, s).
  int sq = -1, div = -1;
  for (int r : readers) {
    if (v.is(r, "Div") && v.node(r).inputs[0] == d) div = r;
    if (v.is(r, "Pow") && v.node(r).inputs[0] == d && v.is_const(v.node(r).inputs[1], 2.0, 0)) {
      sq = r;
    }
  }
  if (sq < 0 || div < 0) return false;
  const int rm2 = v.sole_consumer(v.node(sq).outputs[0]);
  if (!v.is(rm2, "ReduceMean") || trailing_axes(model, v.node(rm2), facts) != k) return false;
  const int add = v.sole_consumer(v.node(rm2).outputs[0]);
  if (!v.is(add, "Add")) return false;
  const std::string eps_name = v.other_input(add, v.node(rm2).outputs[0]);
  const Tensor* eps = constant_tensor(g, eps_name);
  if (!eps || eps->dtype() != DataType::kFloat || eps->numel() != 1 || eps->rank() > 1) {
    return false;
  }
  const int sqrt = v.sole_consumer(v.node(add).outputs[0]);
  if (!v.is(sqrt, "Sqrt")) return false;
  if (v.sole_consumer(v.node(sqrt).outputs[0]) != div || v.node(div).inputs[1] != v.node(sqrt).outputs[0]) {
    return false;
  }
  m->nodes = {rm1, sub, sq, rm2, add, sqrt, div};
  m->last = div;
  const std::vector<Dim>* x_dims = facts.dims(x);
  const int mul = v.sole_consumer(v.node(div).outputs[0]);
  if (v.is(mul, "Mul")) {
    const std::string gamma = v.other_input(mul, v.node(div).outputs[0]);
    const Tensor* t = constant_tensor(g, gamma);
    if (t && affine_shape_ok(*t, k, x_dims)) {
      m->gamma = gamma;
      m->nodes.push_back(mul);
      m->last = mul;
      const int bias = v.sole_consumer(v.node(mul).outputs[0]);
      if (v.is(bias, "Add")) {
        const std::string beta = v.other_input(bias, v.node(mul).outputs[0]);
        const Tensor* b = constant_tensor(g, beta);
        if (b && affine_shape_ok(*b, k, x_dims)) {
          m->beta = beta;
          m->nodes.push_back(bias);
          m->last = bias;
        }
      }
    }
  }
  m->x = x;
  m->eps = eps->data<float>()[0];
  m->k = k;
  return true;
}

// Ones of the normalized shape when the pattern had no Mul (needs the last K dims known).
bool ones_scale(Graph& g, const ShapeFacts& facts, const LnMatch& m, int64_t max_bytes, std::string* name) {
  const std::vector<Dim>* dims = facts.dims(m.x);
  if (!dims || dims->size() < static_cast<size_t>(m.k)) return false;
  Shape shape;
  for (size_t i = dims->size() - static_cast<size_t>(m.k); i < dims->size(); ++i) {
    if (!(*dims)[i].known()) return false;
    shape.push_back((*dims)[i].value);
  }
  *name = add_ones_initializer(g, m.x + "_ln_scale", shape, max_bytes);
  return !name->empty();
}

// `any_opset`: below opset 17 the LayerNormalization node carries opset 17 itself.
Result<bool> fuse(Model& model, PassContext& ctx, bool any_opset) {
  Graph& g = model.graph;
  const bool any = std::any_of(g.nodes.begin(), g.nodes.end(), [&](const Node& n) {
    return n.op_type == "ReduceMean" && n.domain.empty() && (any_opset || opset_of(model, n) >= 17);
  });
  if (!any) return false;  // spares the shape inference
  const ShapeFacts& facts = ctx.shape_facts(model);
  FusionView view(g);
  int fused = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    LnMatch m;
    if (!match(view, model, facts, any_opset, static_cast<int>(i), &m)) continue;
    if (!view.claim(m.nodes)) continue;
    std::string gamma = m.gamma;
    if (gamma.empty() && !ones_scale(g, facts, m, ctx.options.fold_size_limit_bytes, &gamma)) continue;
    Node ln;
    ln.op_type = "LayerNormalization";
    ln.name = view.node(m.last).name;
    const int64_t opset = opset_of(model, view.node(m.nodes[0]));  // the first ReduceMean's
    ln.opset = opset < 17 ? 17 : view.node(m.nodes[0]).opset;
    ln.inputs = {m.x, gamma};
    if (!m.beta.empty()) ln.inputs.push_back(m.beta);
    ln.outputs = {view.node(m.last).outputs[0]};
    Attribute axis;
    axis.name = "axis";
    axis.type = AttrType::kInt;
    axis.i = -m.k;
    Attribute epsilon;
    epsilon.name = "epsilon";
    epsilon.type = AttrType::kFloat;
    epsilon.f = m.eps;
    ln.attributes = {axis, epsilon};
    view.replace(m.nodes, m.last, std::move(ln));
    ++fused;
  }
  if (fused == 0) return false;
  view.commit();
  ctx.note("fused " + std::to_string(fused) + " decomposed LayerNorms into LayerNormalization");
  return true;
}

}  // namespace

Result<bool> fuse_layernorm(Model& model, PassContext& ctx) { return fuse(model, ctx, false); }

Result<bool> fuse_layernorm_any_opset(Model& model, PassContext& ctx) { return fuse(model, ctx, true); }

}  // namespace passes
}  // namespace xonnx
