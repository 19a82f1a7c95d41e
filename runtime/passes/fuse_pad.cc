// Folds a zero Pad into the Conv or AveragePool that alone reads it: the consumer's own `pads`
// grow by the Pad's spatial pads, so no padded copy of the activation is written. torch exports
// avg_pool2d(padding=p, count_include_pad=True) and Inception's 3x3 branch pools this way, and
// converted TensorFlow models pad every strided Conv explicitly. Accepted: Pad in constant mode
// (opset >= 2) with value 0 (absent, or a constant scalar), constant non-negative pads, none on
// the batch and channel axes, no `axes` input; Conv with explicit pads (auto_pad NOTSET or
// VALID); AveragePool likewise with ceil_mode 0, which then counts the padding in its divisor
// (count_include_pad 1), as it counted the Pad's zeros.
#include "runtime/ir/graph_edit.h"
#include "runtime/passes/fusion_view.h"
#include "runtime/passes/pass_util.h"
#include "runtime/passes/passes.h"

namespace xonnx {
namespace passes {

namespace {

// The Pad's pads when it pads with zeros only on the axes after the first two, else empty.
std::vector<int64_t> zero_spatial_pads(const Graph& g, const Node& pad, int64_t opset) {
  if (opset < 2) return {};
  const Attribute* mode = pad.find_attr("mode");
  if (mode && mode->s != "constant") return {};
  std::vector<int64_t> pads;
  if (opset < 11) {
    const Attribute* p = pad.find_attr("pads");
    const Attribute* value = pad.find_attr("value");
    if (!p || (value && value->f != 0.0f)) return {};
    pads = p->ints;
  } else {
    if (pad.inputs.size() < 2 || pad.inputs.size() > 3) return {};  // an `axes` input (opset 18): left alone
    const Tensor* p = constant_tensor(g, pad.inputs[1]);
    if (!p) return {};
    auto v = p->to_int64_vector();
    if (!v.is_ok()) return {};
    pads = std::move(v).value();
    if (pad.inputs.size() == 3 && !pad.inputs[2].empty()) {
      const Tensor* value = constant_tensor(g, pad.inputs[2]);
      if (!value || value->numel() != 1 || !dtype_is_float(value->dtype()) || value->get_as_double(0) != 0.0) {
        return {};
      }
    }
  }
  const size_t rank = pads.size() / 2;
  if (pads.size() % 2 != 0 || rank < 3) return {};
  for (int64_t p : pads) {
    if (p < 0) return {};
  }
  if (pads[0] != 0 || pads[1] != 0 || pads[rank] != 0 || pads[rank + 1] != 0) return {};
  return pads;
}

// The consumer's `pads` grown by the Pad's spatial pads, or false when the consumer's padding
// is not explicit (SAME_*) or its pads do not fit the rank.
bool merge_pads(const Node& consumer, const std::vector<int64_t>& pad_pads, std::vector<int64_t>* merged) {
  const Attribute* auto_pad = consumer.find_attr("auto_pad");
  if (auto_pad && auto_pad->s != "NOTSET" && auto_pad->s != "VALID") return false;
  const size_t rank = pad_pads.size() / 2;
  const size_t spatial = rank - 2;
  const Attribute* own = consumer.find_attr("pads");
  std::vector<int64_t> pads(2 * spatial, 0);
  if (own && !(auto_pad && auto_pad->s == "VALID")) {
    if (own->ints.size() != 2 * spatial) return false;
    pads = own->ints;
  }
  for (size_t i = 0; i < spatial; ++i) {
    pads[i] += pad_pads[2 + i];
    pads[spatial + i] += pad_pads[rank + 2 + i];
  }
  *merged = std::move(pads);
  return true;
}

}  // namespace

Result<bool> fuse_pad(Model& model, PassContext& ctx) {
  Graph& g = model.graph;
  FusionView v(g);
  int fused = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const int pad = static_cast<int>(i);
    if (!v.is(pad, "Pad")) continue;
    const Node& p = v.node(pad);
    const std::vector<int64_t> pads = zero_spatial_pads(g, p, opset_of(model, p));
    if (pads.empty()) continue;
    const int consumer = v.sole_consumer(p.outputs[0]);
    const bool conv = v.is(consumer, "Conv");
    if (!conv && !v.is(consumer, "AveragePool")) continue;
    const Node& c = v.node(consumer);
    if (c.inputs[0] != p.outputs[0]) continue;  // the Pad feeds the weight or bias: not a padding
    if (!conv && attr_int_or(c, "ceil_mode", 0) != 0) continue;
    std::vector<int64_t> merged;
    if (!merge_pads(c, pads, &merged) || !v.claim({pad, consumer})) continue;
    Node fused_node = c;
    fused_node.inputs[0] = p.inputs[0];
    set_attribute(fused_node, ints_attribute("pads", std::move(merged)));
    if (c.find_attr("auto_pad")) set_attribute(fused_node, string_attribute("auto_pad", "NOTSET"));
    if (!conv) set_attribute(fused_node, int_attribute("count_include_pad", 1));
    v.replace({pad, consumer}, consumer, std::move(fused_node));
    ++fused;
  }
  if (fused == 0) return false;
  v.commit();
  ctx.note("folded " + std::to_string(fused) + " zero Pads into the Conv / AveragePool reading them");
  return true;
}

}  // namespace passes
}  // namespace xonnx
