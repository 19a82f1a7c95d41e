// The layout pass's GroupNorm (NhwcPass::fuse_group_norm): torch exports nn.GroupNorm as
// Reshape(x, [0, G, -1]) -> InstanceNormalization(unit scale, zero bias) -> Reshape(., Shape(x))
// -> Mul(gamma) -> Add(beta). The 3-D views took the map out of the NHWC region at every norm
// (a ToNCHW before, a ToNHWC after: 15 % of a GroupNorm ResNet's time). The three nodes become
// one NHWC GroupNorm of x (its twin in ops/ref/nhwc.cc), and the per-channel Mul(gamma) and
// Add(beta) after them, where each alone reads what is before it, its gamma and beta inputs:
// two passes over the map fewer.
#include <algorithm>
#include <string>
#include <vector>

#include "runtime/ops/internal_ops.h"
#include "runtime/passes/layout_nhwc_pass.h"
#include "runtime/passes/pass_util.h"

namespace xonnx {
namespace layout_internal {
namespace {

// A constant float vector of `count` values, all equal to `value`.
bool all_equal(const Tensor* t, int64_t count, float value) {
  if (!t || t->dtype() != DataType::kFloat || t->rank() != 1 || t->numel() != count) return false;
  const float* d = t->data<float>();
  return std::all_of(d, d + count, [value](float v) { return v == value; });
}

}  // namespace

bool NhwcPass::fuse_group_norm(size_t first) {
  const Node& view = g_.nodes[first];
  if (view.inputs.size() != 2 || view.outputs.size() != 1 || !is_region(view.inputs[0])) return false;
  const std::string& x = view.inputs[0];
  auto dims = dims4_.find(x);
  if (dims == dims4_.end() || !dims->second[1].known()) return false;
  const std::vector<Dim>& d = dims->second;
  // [N (0: copied, or N itself), G, -1], G dividing C
  std::vector<int64_t> shape;
  if (!constant_ints(view.inputs[1], shape) || shape.size() != 3 || shape[2] != -1 || shape[1] < 1 ||
      d[1].value % shape[1] != 0 || (shape[0] != 0 && !(d[0].known() && shape[0] == d[0].value)))
    return false;
  const Attribute* allow_zero = view.find_attr("allowzero");
  if (allow_zero && allow_zero->i != 0) return false;
  const int64_t groups = shape[1];

  const int norm_at = sole_reader(view.outputs[0]);
  if (norm_at < 0) return false;
  const Node& norm = g_.nodes[static_cast<size_t>(norm_at)];
  if (!is_default(norm, "InstanceNormalization") || norm.inputs.size() != 3 || norm.outputs.size() != 1 ||
      norm.inputs[0] != view.outputs[0] || !all_equal(constant(norm.inputs[1]), groups, 1.0f) ||
      !all_equal(constant(norm.inputs[2]), groups, 0.0f))
    return false;
  const Attribute* eps = norm.find_attr("epsilon");

  const int back_at = sole_reader(norm.outputs[0]);
  if (back_at < 0) return false;
  Node& back = g_.nodes[static_cast<size_t>(back_at)];
  if (!is_default(back, "Reshape") || back.inputs.size() != 2 || back.outputs.size() != 1 ||
      back.inputs[0] != norm.outputs[0])
    return false;
  // Back to x's shape: Shape(x) (torch's form), or x's dims as a constant.
  bool to_x = false;
  int shape_node = -1;  // the Shape(x) only the shape back reads: it goes too
  auto shape_of = producer_.find(back.inputs[1]);
  if (shape_of != producer_.end()) {
    const Node& s = g_.nodes[shape_of->second];
    to_x = is_default(s, "Shape") && s.inputs.size() == 1 && s.inputs[0] == x && !s.find_attr("start") &&
           !s.find_attr("end");
    if (to_x && sole_reader(back.inputs[1]) == back_at) shape_node = static_cast<int>(shape_of->second);
  }
  std::vector<int64_t> back_shape;
  if (!to_x && constant_ints(back.inputs[1], back_shape) && back_shape.size() == 4) {
    to_x = true;
    for (size_t k = 0; k < 4; ++k) to_x = to_x && d[k].known() && back_shape[k] == d[k].value;
  }
  if (!to_x) return false;

  fused_away_[first] = true;
  fused_away_[static_cast<size_t>(norm_at)] = true;
  merged_.insert(first);
  merged_.insert(static_cast<size_t>(norm_at));
  if (shape_node >= 0) {
    fused_away_[static_cast<size_t>(shape_node)] = true;
    merged_.insert(static_cast<size_t>(shape_node));
  }
  if (back.origin.empty()) back.origin = back.describe();  // errors name the model's node
  back.op_type = kGroupNormOp;
  back.inputs = {x};
  absorb_channel_affine(static_cast<size_t>(back_at), d[1].value);
  back.attributes = {int_attribute("groups", groups), float_attribute("epsilon", eps ? eps->f : 1e-5f)};
  consumers_[x].push_back(static_cast<size_t>(back_at));
  group_norms_.insert(static_cast<size_t>(back_at));
  return true;
}

void NhwcPass::absorb_channel_affine(size_t norm, int64_t channels) {
  // A float constant of C values laid out per channel of an NCHW map ([C, 1, 1], [1, C, 1, 1]).
  const auto channel_vector = [&](const std::string& name) {
    Shape nhwc;
    return per_channel_constant(name, nhwc) && nhwc[3] == channels && constant(name)->numel() == channels;
  };
  const int mul_at = sole_reader(g_.nodes[norm].outputs[0]);
  if (mul_at < 0) return;
  const Node& mul = g_.nodes[static_cast<size_t>(mul_at)];
  if (!is_default(mul, "Mul") || mul.inputs.size() != 2 || mul.outputs.size() != 1) return;
  const std::string& gamma = mul.inputs[0] == g_.nodes[norm].outputs[0] ? mul.inputs[1] : mul.inputs[0];
  const int add_at = sole_reader(mul.outputs[0]);
  if (add_at < 0 || !channel_vector(gamma)) return;
  const Node& add = g_.nodes[static_cast<size_t>(add_at)];
  if (!is_default(add, "Add") || add.inputs.size() != 2 || add.outputs.size() != 1) return;
  const std::string& beta = add.inputs[0] == mul.outputs[0] ? add.inputs[1] : add.inputs[0];
  if (!channel_vector(beta)) return;
  Node& n = g_.nodes[norm];
  const float* g = constant(gamma)->data<float>();
  const float* b = constant(beta)->data<float>();
  std::vector<float> scale(g, g + channels), shift(b, b + channels);
  if (n.inputs.size() == 3) {  // scale s and shift t of its own: s * gamma, t * gamma + beta
    const Tensor* s = constant(n.inputs[1]);
    const Tensor* t = constant(n.inputs[2]);
    if (!s || !t || s->numel() != channels || t->numel() != channels) return;  // [C] (channel_affine)
    for (size_t c = 0; c < scale.size(); ++c) {
      scale[c] = s->data<float>()[c] * g[c];
      shift[c] = t->data<float>()[c] * g[c] + b[c];
    }
  }
  n.inputs.resize(1);
  for (const auto& [v, base] : {std::make_pair(&scale, gamma), std::make_pair(&shift, beta)}) {
    const std::string name = fresh(base);
    new_initializers_.push_back({name, Tensor::from_vector<float>(*v, {channels})});
    n.inputs.push_back(name);
  }
  n.outputs[0] = add.outputs[0];
  producer_[add.outputs[0]] = norm;
  for (const int at : {mul_at, add_at}) {
    fused_away_[static_cast<size_t>(at)] = true;
    merged_.insert(static_cast<size_t>(at));
  }
}

}  // namespace layout_internal
}  // namespace xonnx
