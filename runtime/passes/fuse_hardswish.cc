// Rewrites the hard-swish decomposition x * Clip(x + 3, 0, 6) / 6 (Paddle's exporter writes it
// for every hardswish: PP-OCRv4's recognizer has 28) as Mul(x, HardSigmoid(x, 1/6, 1/2)): two
// passes over the tensor instead of four, valid in every opset since 6; on the XNNPACK path the
// NHWC pass then makes the pair one HardSwish. Accepted: Add(x, 3) either order; Clip bounds as
// attributes (opset < 11) or constant inputs; Mul(x, clip) either order; then Div(., 6) or
// Mul(., 1/6) either order. Float32 constants; every intermediate has no other reader.
#include "runtime/ir/graph_edit.h"
#include "runtime/passes/fusion_view.h"
#include "runtime/passes/pass_util.h"
#include "runtime/passes/passes.h"

namespace xonnx {
namespace passes {

namespace {

constexpr double kTol = 1e-6;

// The Div(m, 6) or Mul(m, 1/6) that alone reads `m`, else -1.
int divide_by_six(const FusionView& v, const std::string& m) {
  const int s = v.sole_consumer(m);
  if (s < 0) return -1;
  if (v.is(s, "Div") && v.node(s).inputs[0] == m && v.is_const(v.node(s).inputs[1], 6.0, kTol)) return s;
  if (v.is(s, "Mul") && v.other_is_const_given(s, m, 1.0 / 6.0, kTol)) return s;
  return -1;
}

}  // namespace

Result<bool> fuse_hardswish(Model& model, PassContext& ctx) {
  Graph& g = model.graph;
  const int64_t opset = model.opset_imports.count("") ? model.opset_imports.at("") : 0;
  FusionView v(g);
  auto constant = [&](const std::string& name) { return constant_tensor(g, name); };
  int fused = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const int clip = static_cast<int>(i);
    if (!v.is(clip, "Clip")) continue;
    const Node& c = v.node(clip);
    const int64_t node_opset = c.opset != 0 ? c.opset : opset;
    float lo = 0, hi = 0;
    if (node_opset < 6 || !activation_bounds(c, node_opset, constant, lo, hi) || lo != 0.0f || hi != 6.0f) continue;
    const int add = v.sole_producer(c.inputs[0]);
    std::string x;
    if (add < 0 || !v.is(add, "Add") || !v.other_is_const(add, 3.0, kTol, &x)) continue;
    const int mul = v.sole_consumer(c.outputs[0]);
    if (mul < 0 || !v.is(mul, "Mul") || v.other_input(mul, c.outputs[0]) != x) continue;
    const int scale = divide_by_six(v, v.node(mul).outputs[0]);
    if (scale < 0 || !v.claim({add, clip, mul, scale})) continue;
    Node gate;
    gate.op_type = "HardSigmoid";
    gate.name = c.name;
    gate.inputs = {x};
    gate.outputs = {c.outputs[0]};
    gate.attributes = {float_attribute("alpha", 1.0f / 6.0f), float_attribute("beta", 0.5f)};
    Node product;
    product.op_type = "Mul";
    product.name = v.node(scale).name;
    product.inputs = {x, c.outputs[0]};
    product.outputs = {v.node(scale).outputs[0]};
    v.replace({add, clip}, clip, std::move(gate));
    v.replace({mul, scale}, scale, std::move(product));
    ++fused;
  }
  if (fused == 0) return false;
  v.commit();
  ctx.note("rewrote " + std::to_string(fused) + " x * Clip(x + 3, 0, 6) / 6 patterns as x * HardSigmoid(x)");
  return true;
}

}  // namespace passes
}  // namespace xonnx
