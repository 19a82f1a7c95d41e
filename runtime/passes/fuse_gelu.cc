// Fuses the exact (erf) GELU decomposition 0.5 * x * (1 + erf(x / sqrt(2))) into one node:
// Gelu at opset >= 20, else com.microsoft Gelu (xonnx and ORT both implement it; the import is
// added). Accepted forms: Div(x, sqrt2) or Mul(x, 1/sqrt2); Add(erf, 1) either order; then
// Mul(Mul(x, a), 0.5), Mul(Mul(x, 0.5), a) or Mul(x, Mul(a, 0.5)), operands in any order.
// Float32 constants only; every intermediate must have no other reader.
#include <algorithm>
#include <cmath>

#include "runtime/ir/graph_edit.h"
#include "runtime/passes/fusion_view.h"
#include "runtime/passes/passes.h"

namespace xonnx {
namespace passes {

namespace {

constexpr double kSqrt2 = 1.4142135623730951;
constexpr double kTol = 1e-6;

struct GeluMatch {
  std::string x;
  std::vector<int> nodes;  // every matched node; the last one writes the output
};

// From the Erf node: x and the nodes up to `a` = 1 + erf(x / sqrt2).
bool match_erf_part(const FusionView& v, int erf, GeluMatch* m, int* add_one) {
  const Node& e = v.node(erf);
  if (!v.is(erf, "Erf") || e.inputs.size() != 1) return false;
  const int scale = v.sole_producer(e.inputs[0]);
  if (scale < 0) return false;
  std::string x;
  if (v.is(scale, "Div") && v.is_const(v.node(scale).inputs[1], kSqrt2, kTol)) {
    x = v.node(scale).inputs[0];
  } else if (v.is(scale, "Mul")) {
    if (!v.other_is_const(scale, 1.0 / kSqrt2, kTol, &x)) return false;
  } else {
    return false;
  }
  const int add = v.sole_consumer(e.outputs[0]);
  if (add < 0 || !v.is(add, "Add") || !v.other_is_const_given(add, e.outputs[0], 1.0, kTol)) {
    return false;
  }
  m->x = x;
  m->nodes = {scale, erf, add};
  *add_one = add;
  return true;
}

// The multiplications by x and 0.5 after `a`; appends them to m->nodes.
bool match_tail(const FusionView& v, int add_one, GeluMatch* m) {
  const std::string& a = v.node(add_one).outputs[0];
  const int first = v.sole_consumer(a);
  if (first < 0 || !v.is(first, "Mul")) return false;
  const std::string other = v.other_input(first, a);
  if (other == m->x) {
    // Mul(x, a) then Mul(., 0.5).
    const int second = v.sole_consumer(v.node(first).outputs[0]);
    if (second < 0 || !v.is(second, "Mul") || !v.other_is_const_given(second, v.node(first).outputs[0], 0.5, kTol)) {
      return false;
    }
    m->nodes.push_back(first);
    m->nodes.push_back(second);
    return true;
  }
  if (v.is_const(other, 0.5, kTol)) {
    // Mul(a, 0.5) then Mul(x, .).
    const int second = v.sole_consumer(v.node(first).outputs[0]);
    if (second < 0 || !v.is(second, "Mul") || v.other_input(second, v.node(first).outputs[0]) != m->x) {
      return false;
    }
    m->nodes.push_back(first);
    m->nodes.push_back(second);
    return true;
  }
  // Mul(h, a) where h = Mul(x, 0.5) is read only here.
  const int half = v.sole_producer(other);
  if (half < 0 || !v.is(half, "Mul") || v.other_input(half, m->x) == "" ||
      !v.is_const(v.other_input(half, m->x), 0.5, kTol)) {
    return false;
  }
  m->nodes.push_back(half);
  m->nodes.push_back(first);
  return true;
}

}  // namespace

Result<bool> fuse_gelu(Model& model, PassContext& ctx) {
  Graph& g = model.graph;
  const int64_t opset = model.opset_imports.count("") ? model.opset_imports.at("") : 0;
  FusionView view(g);
  int fused = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    GeluMatch m;
    int add_one = -1;
    if (!match_erf_part(view, static_cast<int>(i), &m, &add_one)) continue;
    if (!match_tail(view, add_one, &m) || !view.claim(m.nodes)) continue;
    const int last = *std::max_element(m.nodes.begin(), m.nodes.end());
    Node gelu;
    gelu.op_type = "Gelu";
    gelu.name = view.node(last).name;  // the node it replaces is gone
    gelu.inputs = {m.x};
    gelu.outputs = {view.node(last).outputs[0]};
    if (opset < 20) gelu.domain = "com.microsoft";
    view.replace(m.nodes, last, std::move(gelu));
    ++fused;
  }
  if (fused == 0) return false;
  view.commit();
  if (opset < 20 && !model.opset_imports.count("com.microsoft")) {
    model.opset_imports["com.microsoft"] = 1;
  }
  ctx.note("fused " + std::to_string(fused) + " erf-GELU patterns into " +
           (opset < 20 ? "com.microsoft:Gelu" : "Gelu"));
  return true;
}

}  // namespace passes
}  // namespace xonnx
