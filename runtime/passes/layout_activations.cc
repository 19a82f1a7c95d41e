// The layout pass's activation fusions: x * Sigmoid(x) and x * HardSigmoid(x) into Swish and
// HardSwish before the pass, and an activation into the Conv or BatchNormalization before it
// (NhwcPass::try_fuse) while the pass runs.
#include <algorithm>
#include <string>
#include <vector>

#include "runtime/ir/graph_edit.h"
#include "runtime/passes/layout_nhwc_pass.h"
#include "runtime/passes/pass_util.h"

namespace xonnx {
namespace layout_internal {

// x * Sigmoid(x) -> Swish(x) (opset 24) and x * HardSigmoid(x) with alpha 1/6, beta 1/2 ->
// HardSwish(x) (opset 14), when the gate has no other reader: one XNNPACK op instead of two
// passes over memory. Both are exactly the ONNX definitions of the fused ops.
int fuse_gated_activations(Graph& g, int64_t opset) {
  const GraphIndex index(g);  // reads inside subgraphs count as uses
  std::vector<bool> drop(g.nodes.size(), false);
  int fused = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& mul = g.nodes[i];
    if (!mul.domain.empty() || mul.op_type != "Mul" || mul.inputs.size() != 2 || mul.outputs.size() != 1) continue;
    for (size_t k = 0; k < 2; ++k) {
      const int p = index.producer(mul.inputs[k]);
      if (p < 0 || drop[static_cast<size_t>(p)] || index.use_count(mul.inputs[k]) != 1) continue;
      const Node& gate = g.nodes[static_cast<size_t>(p)];
      if (!gate.domain.empty() || gate.inputs.size() != 1 || gate.inputs[0] != mul.inputs[1 - k]) continue;
      const int64_t gate_opset = gate.opset != 0 ? gate.opset : opset;
      std::string fused_op;
      int64_t fused_opset = 0;
      if (gate.op_type == "Sigmoid") {
        fused_op = "Swish";
        fused_opset = 24;
      } else if (gate.op_type == "HardSigmoid" && gate_opset >= 6) {
        const Attribute* a = attr_of(gate, "alpha", AttrType::kFloat);
        const Attribute* b = attr_of(gate, "beta", AttrType::kFloat);
        if ((a ? a->f : 0.2f) != 1.0f / 6.0f || (b ? b->f : 0.5f) != 0.5f) continue;
        fused_op = "HardSwish";
        fused_opset = 14;
      } else {
        continue;
      }
      drop[static_cast<size_t>(p)] = true;
      const std::string x = mul.inputs[1 - k];
      mul.op_type = fused_op;
      mul.inputs = {x};
      mul.opset = std::max(fused_opset, opset);
      ++fused;
      break;
    }
  }
  if (fused > 0) erase_nodes(g, drop);
  return fused;
}

namespace {

// Swish with alpha 1 (x * sigmoid(x)), as fuse_gated_activations makes it.
bool is_swish(const Node& act) {
  if (!act.domain.empty() || act.op_type != "Swish" || act.inputs.size() != 1 || act.outputs.size() != 1) return false;
  const Attribute* alpha = attr_of(act, "alpha", AttrType::kFloat);
  return !alpha || alpha->f == 1.0f;
}

// HardSwish, as fuse_gated_activations makes it from x * HardSigmoid(x) (MobileNetV3).
bool is_hard_swish(const Node& act) {
  return act.domain.empty() && act.op_type == "HardSwish" && act.inputs.size() == 1 && act.outputs.size() == 1;
}

}  // namespace

// Relu, or Clip with constant scalar float bounds (lo < hi), as an output range.
bool NhwcPass::fusable_activation(const Node& act, float& lo, float& hi) const {
  return activation_bounds(
      act, opset_of(act), [this](const std::string& n) { return constant(n); }, lo, hi);
}

void NhwcPass::try_fuse(size_t conv) {
  Node& c = g_.nodes[conv];
  const std::string& out = c.outputs[0];
  if (graph_outputs_.count(out) || subgraph_reads_.count(out)) return;
  auto it = consumers_.find(out);
  if (it == consumers_.end() || it->second.size() != 1) return;
  const size_t a = it->second[0];
  const Node& act = g_.nodes[a];
  if (act.inputs.empty() || act.inputs[0] != out) return;
  float lo = 0, hi = 0;
  if (c.op_type == "Conv" && (is_swish(act) || is_hard_swish(act))) {  // EfficientNet, MobileNetV3
    c.attributes.push_back(string_attribute("activation", act.op_type));
  } else if (fusable_activation(act, lo, hi)) {
    c.attributes.push_back(float_attribute("activation_min", lo));
    c.attributes.push_back(float_attribute("activation_max", hi));
  } else {
    return;
  }
  c.outputs[0] = act.outputs[0];
  producer_[c.outputs[0]] = conv;
  fused_away_[a] = true;
}

}  // namespace layout_internal
}  // namespace xonnx
