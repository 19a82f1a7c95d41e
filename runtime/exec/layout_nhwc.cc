#include "runtime/exec/layout_nhwc.h"

#include "runtime/exec/pass_util.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <queue>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace xonnx {

namespace {

// Element-wise ops with one data input: their result does not depend on the layout.
bool is_layout_agnostic_unary(const std::string& op) {
  static const std::unordered_set<std::string> ops = {
      "Relu", "Clip", "Sigmoid", "HardSigmoid", "HardSwish", "LeakyRelu", "Tanh", "Elu", "Selu",
      "Softplus", "Swish", "Abs", "Neg", "Exp", "Identity", "Erf", "Sqrt", "Reciprocal", "Floor", "Ceil"};
  return ops.count(op) != 0;
}

bool is_binary(const std::string& op) { return op == "Add" || op == "Sub" || op == "Mul" || op == "Div"; }

bool is_qlinear_binary(const Node& n) {
  return n.domain == "com.microsoft" && (n.op_type == "QLinearAdd" || n.op_type == "QLinearMul") &&
         n.inputs.size() >= 7 && n.inputs.size() <= 8;
}

bool is_conv(const Node& n) { return n.domain.empty() && (n.op_type == "Conv" || n.op_type == "QLinearConv"); }

// The inputs that carry activations (the layout's concern); the others are parameters.
std::vector<size_t> data_inputs(const Node& n) {
  if (is_qlinear_binary(n)) return {0, 3};
  if (n.domain.empty() && (is_binary(n.op_type) || n.op_type == "Concat")) {
    std::vector<size_t> all(n.inputs.size());
    for (size_t k = 0; k < all.size(); ++k) all[k] = k;
    return all;
  }
  return {0};
}

const Attribute* attr_of(const Node& n, const char* name, AttrType type) {
  const Attribute* a = n.find_attr(name);
  return a && a->type == type ? a : nullptr;
}

bool has_graph_attr(const Node& n) {
  for (const Attribute& a : n.attributes) {
    if (a.g || !a.graphs.empty()) return true;
  }
  return false;
}

// x * Sigmoid(x) -> Swish(x) (opset 24) and x * HardSigmoid(x) with alpha 1/6, beta 1/2 ->
// HardSwish(x) (opset 14), when the gate has no other reader: one XNNPACK op instead of two
// passes over memory. Both are exactly the ONNX definitions of the fused ops.
int fuse_gated_activations(Graph& g, int64_t opset) {
  std::unordered_map<std::string, size_t> producer;
  std::unordered_map<std::string, int> readers;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (const std::string& o : g.nodes[i].outputs) producer[o] = i;
    for (const std::string& in : g.nodes[i].inputs) ++readers[in];
    if (has_graph_attr(g.nodes[i])) return 0;  // captures are not counted: stay simple
  }
  for (const ValueInfo& v : g.outputs) ++readers[v.name];
  std::vector<bool> drop(g.nodes.size(), false);
  int fused = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& mul = g.nodes[i];
    if (!mul.domain.empty() || mul.op_type != "Mul" || mul.inputs.size() != 2 || mul.outputs.size() != 1) continue;
    for (size_t k = 0; k < 2; ++k) {
      auto it = producer.find(mul.inputs[k]);
      if (it == producer.end() || drop[it->second] || readers[mul.inputs[k]] != 1) continue;
      const Node& gate = g.nodes[it->second];
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
      drop[it->second] = true;
      const std::string x = mul.inputs[1 - k];
      mul.op_type = fused_op;
      mul.inputs = {x};
      mul.opset = std::max(fused_opset, opset);
      ++fused;
      break;
    }
  }
  if (fused == 0) return 0;
  std::vector<Node> kept;
  kept.reserve(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (!drop[i]) kept.push_back(std::move(g.nodes[i]));
  }
  g.nodes = std::move(kept);
  return fused;
}

class NhwcPass {
 public:
  NhwcPass(Graph& g, int64_t onnx_opset, const NhwcLayoutOptions& options) : g_(g), opset_(onnx_opset), options_(options) {}
  Result<NhwcLayoutStats> run();

 private:
  enum class Role { kNone, kNhwcOp, kAgnostic };
  int64_t opset_of(const Node& n) const { return n.opset != 0 ? n.opset : opset_; }
  bool index(std::vector<size_t>& order);
  const Tensor* constant(const std::string& name) const;
  std::string constant_root(const std::string& name) const;
  bool known_non_float(const std::string& name) const;
  bool scalar_constant(const std::string& name) const;
  bool is_region(const std::string& name) const { return region_.count(name) != 0; }
  Role classify(size_t i);
  bool per_channel_constant(const std::string& name, Shape& nhwc_shape) const;
  bool fusable_activation(const Node& act, float& lo, float& hi) const;
  void try_fuse(size_t conv);
  int fuse_pointwise_depthwise(const std::vector<size_t>& order);
  int fuse_concats(const std::vector<size_t>& order);
  int64_t conv_output_channels(const std::string& value) const;
  int read_images_in_nchw();
  Node merged_pointwise_depthwise(const Node& depthwise, size_t pointwise,
                                  const std::unordered_map<std::string, std::string>& nhwc) const;
  std::string fresh(const std::string& base);
  Node boundary(const char* op, const std::string& in, const std::string& out, bool unit) const;

  Graph& g_;
  int64_t opset_;
  NhwcLayoutOptions options_;
  std::unordered_map<std::string, size_t> producer_;
  std::unordered_map<std::string, std::vector<size_t>> consumers_;
  std::set<std::string> graph_outputs_;
  std::set<std::string> subgraph_reads_;
  std::unordered_map<std::string, const Tensor*> initializers_;
  std::unordered_map<std::string, DataType> elem_types_;
  std::unordered_set<std::string> names_;

  std::vector<Role> role_;
  std::vector<bool> fused_away_;
  std::unordered_map<size_t, size_t> pointwise_of_;  // depthwise Conv -> the 1x1 Conv merged into it
  std::unordered_map<size_t, size_t> concat_of_;     // 1x1 Conv / MaxPool -> the Concat merged into it
  std::unordered_set<size_t> merged_;                // nodes merged into another (not activations)
  std::unordered_set<size_t> nchw_input_;            // Convs that read their entering input in NCHW
  std::unordered_set<std::string> region_;  // values produced in NHWC
  std::unordered_set<std::string> unit_;    // region values known to be [N,1,1,C]
  std::unordered_set<std::string> entering_;
  std::unordered_map<std::string, std::string> const_nhwc_;  // constant -> its re-labelled twin
  std::vector<NamedTensor> new_initializers_;
};

bool NhwcPass::index(std::vector<size_t>& order) {
  for (const NamedTensor& t : g_.initializers) {
    initializers_[t.name] = &t.tensor;
    names_.insert(t.name);
  }
  for (const ValueInfo& v : g_.inputs) {
    names_.insert(v.name);
    if (v.type.kind == TypeInfo::Kind::kTensor) elem_types_[v.name] = v.type.elem_type;
  }
  for (const ValueInfo& v : g_.value_info) {
    if (v.type.kind == TypeInfo::Kind::kTensor) elem_types_[v.name] = v.type.elem_type;
  }
  for (const ValueInfo& v : g_.outputs) graph_outputs_.insert(v.name);
  for (size_t i = 0; i < g_.nodes.size(); ++i) {
    const Node& n = g_.nodes[i];
    for (const std::string& o : n.outputs) {
      if (o.empty()) continue;
      if (producer_.count(o) || initializers_.count(o)) return false;  // duplicate: compile reports it
      producer_[o] = i;
      names_.insert(o);
    }
    for (const std::string& in : n.inputs) {
      if (!in.empty()) consumers_[in].push_back(i);
    }
    for (const Attribute& a : n.attributes) {
      if (a.g) collect_reads(*a.g, subgraph_reads_);
      for (const auto& sg : a.graphs) collect_reads(*sg, subgraph_reads_);
    }
  }
  // Topological order, stable (file order where the graph allows it).
  std::vector<int> pending(g_.nodes.size(), 0);
  std::vector<std::vector<size_t>> users(g_.nodes.size());
  for (size_t i = 0; i < g_.nodes.size(); ++i) {
    for (const std::string& in : g_.nodes[i].inputs) {
      auto it = producer_.find(in);
      if (in.empty() || it == producer_.end()) continue;
      ++pending[i];
      users[it->second].push_back(i);
    }
  }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> ready;
  for (size_t i = 0; i < g_.nodes.size(); ++i) {
    if (pending[i] == 0) ready.push(i);
  }
  while (!ready.empty()) {
    const size_t i = ready.top();
    ready.pop();
    order.push_back(i);
    for (size_t u : users[i]) {
      if (--pending[u] == 0) ready.push(u);
    }
  }
  return order.size() == g_.nodes.size();  // a cycle: compile reports it
}

// Follows Identity nodes back to an initializer or a Constant node's tensor.
std::string NhwcPass::constant_root(const std::string& name) const {
  std::string cur = name;
  for (int hops = 0; hops < 16; ++hops) {
    if (initializers_.count(cur)) return cur;
    auto it = producer_.find(cur);
    if (it == producer_.end()) return "";
    const Node& n = g_.nodes[it->second];
    if (!n.domain.empty() || n.inputs.size() != 1 || n.op_type != "Identity") {
      return n.domain.empty() && n.op_type == "Constant" && attr_of(n, "value", AttrType::kTensor) ? cur : "";
    }
    cur = n.inputs[0];
  }
  return "";
}

const Tensor* NhwcPass::constant(const std::string& name) const {
  const std::string root = constant_root(name);
  if (root.empty()) return nullptr;
  auto it = initializers_.find(root);
  if (it != initializers_.end()) return it->second;
  return &attr_of(g_.nodes[producer_.at(root)], "value", AttrType::kTensor)->t;
}

bool NhwcPass::scalar_constant(const std::string& name) const {
  const Tensor* t = constant(name);
  return t && t->numel() == 1;
}

bool NhwcPass::known_non_float(const std::string& name) const {
  auto it = elem_types_.find(name);
  return it != elem_types_.end() && it->second != DataType::kUndefined && it->second != DataType::kFloat;
}

// A constant that broadcasts against an NCHW tensor the same way its re-labelled twin
// broadcasts against the NHWC one: NCHW-aligned [a,b,c,d] with c*d == 1 or b == 1 has the
// memory of [a,c,d,b].
bool NhwcPass::per_channel_constant(const std::string& name, Shape& nhwc_shape) const {
  const Tensor* t = constant(name);
  if (!t || t->dtype() != DataType::kFloat || t->rank() > 4) return false;
  Shape s(4 - t->rank(), 1);
  s.insert(s.end(), t->shape().begin(), t->shape().end());
  if (s[2] * s[3] != 1 && s[1] != 1) return false;
  nhwc_shape = {s[0], s[2], s[3], s[1]};
  return true;
}

NhwcPass::Role NhwcPass::classify(size_t i) {
  const Node& n = g_.nodes[i];
  if (has_graph_attr(n) || n.outputs.empty() || n.outputs[0].empty()) return Role::kNone;
  const std::string& op = n.op_type;
  if (n.domain == "com.microsoft" && is_qlinear_binary(n)) {  // (qdq_fusion.h) int8 residual adds
    if (n.outputs.size() != 1 || !is_region(n.inputs[0]) || !is_region(n.inputs[3])) return Role::kNone;
    for (size_t k : {1, 2, 4, 5, 6, 7}) {
      if (k < n.inputs.size() && !n.inputs[k].empty() && !scalar_constant(n.inputs[k])) return Role::kNone;
    }
    return Role::kAgnostic;
  }
  if (!n.domain.empty()) return Role::kNone;
  if (op == "QLinearConv") {  // constant W, scales, zero points and bias; 2-D
    if (n.inputs.size() < 8 || n.inputs.size() > 9 || n.outputs.size() != 1 || n.inputs[0].empty()) return Role::kNone;
    for (size_t k = 1; k < n.inputs.size(); ++k) {
      if (n.inputs[k].empty() || !constant(n.inputs[k])) return Role::kNone;
    }
    const Attribute* ks = n.find_attr("kernel_shape");
    if (constant(n.inputs[3])->rank() != 4 || (ks && ks->ints.size() != 2)) return Role::kNone;
    return Role::kNhwcOp;
  }
  if (op == "Conv") {
    if (n.inputs.size() < 2 || n.inputs.size() > 3 || n.outputs.size() != 1) return Role::kNone;
    if (n.inputs[0].empty() || known_non_float(n.inputs[0])) return Role::kNone;
    const Tensor* w = constant(n.inputs[1]);
    if (!w || w->dtype() != DataType::kFloat || w->rank() != 4) return Role::kNone;
    if (n.inputs.size() == 3 && !n.inputs[2].empty()) {
      const Tensor* b = constant(n.inputs[2]);
      if (!b || b->dtype() != DataType::kFloat || b->rank() != 1) return Role::kNone;
    }
    const Attribute* ks = n.find_attr("kernel_shape");
    if (ks && ks->ints.size() != 2) return Role::kNone;
    return Role::kNhwcOp;
  }
  if (op == "MaxPool" || op == "AveragePool") {
    if (n.inputs.size() != 1 || n.inputs[0].empty() || known_non_float(n.inputs[0])) return Role::kNone;
    if (n.outputs.size() > 2 || (n.outputs.size() == 2 && !n.outputs[1].empty())) return Role::kNone;
    const Attribute* ks = attr_of(n, "kernel_shape", AttrType::kInts);
    return ks && ks->ints.size() == 2 ? Role::kNhwcOp : Role::kNone;
  }
  if (n.inputs.empty() || !is_region(n.inputs[0])) {
    if (!is_binary(op) || n.inputs.size() != 2 || !is_region(n.inputs[1])) return Role::kNone;
  }
  if (op == "GlobalAveragePool") return n.inputs.size() == 1 && n.outputs.size() == 1 ? Role::kNhwcOp : Role::kNone;
  if (op == "QuantizeLinear" || op == "DequantizeLinear") {  // per tensor only: the axis would move
    if (n.inputs.size() < 2 || n.outputs.size() != 1 || !scalar_constant(n.inputs[1])) return Role::kNone;
    if (n.inputs.size() > 2 && !n.inputs[2].empty() && !scalar_constant(n.inputs[2])) return Role::kNone;
    return Role::kAgnostic;
  }
  if (is_layout_agnostic_unary(op)) {
    if (n.outputs.size() != 1) return Role::kNone;
    for (size_t k = 1; k < n.inputs.size(); ++k) {
      if (is_region(n.inputs[k])) return Role::kNone;  // Clip bounds are scalars, never regions
    }
    return Role::kAgnostic;
  }
  if (is_binary(op)) {
    if (n.inputs.size() != 2 || n.outputs.size() != 1 || opset_of(n) < 7) return Role::kNone;
    for (const std::string& in : n.inputs) {
      Shape s;
      if (!is_region(in) && !per_channel_constant(in, s)) return Role::kNone;
    }
    return Role::kAgnostic;
  }
  if (op == "Concat") {
    const Attribute* axis = attr_of(n, "axis", AttrType::kInt);
    if (!axis || (axis->i != 1 && axis->i != -3) || n.outputs.size() != 1) return Role::kNone;
    for (const std::string& in : n.inputs) {
      if (!is_region(in)) return Role::kNone;
    }
    return Role::kAgnostic;
  }
  return Role::kNone;
}

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

// Relu, or Clip with constant scalar float bounds (lo < hi), as an output range.
bool NhwcPass::fusable_activation(const Node& act, float& lo, float& hi) const {
  return activation_bounds(act, opset_of(act), [this](const std::string& n) { return constant(n); }, lo, hi);
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
    Attribute a;
    a.name = "activation";
    a.type = AttrType::kString;
    a.s = act.op_type;
    c.attributes.push_back(std::move(a));
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

// A Conv the own kernels treat as 1x1 (constant W [M, C, 1, 1], group 1, stride 1, no pads).
bool is_pointwise_conv(const Node& n, const Tensor* w) {
  if (!w || w->rank() != 4 || w->dim(2) != 1 || w->dim(3) != 1) return false;
  const Attribute* group = n.find_attr("group");
  const Attribute* auto_pad = n.find_attr("auto_pad");
  const Attribute* strides = n.find_attr("strides");
  const Attribute* pads = n.find_attr("pads");
  const auto all_equal = [](const Attribute* a, int64_t v) {
    return !a || std::all_of(a->ints.begin(), a->ints.end(), [v](int64_t x) { return x == v; });
  };
  return (!group || group->i == 1) && (!auto_pad || auto_pad->s == "NOTSET" || auto_pad->s == "VALID") &&
         all_equal(strides, 1) && all_equal(pads, 0);
}

// A depthwise Conv: W [M, 1, kh, kw] with group M.
bool is_depthwise_conv(const Node& n, const Tensor* w) {
  const Attribute* group = n.find_attr("group");
  return w && w->rank() == 4 && w->dim(1) == 1 && group && group->i == w->dim(0) && group->i > 1;
}

// A 1x1 Conv whose output (after its fused activation) only a depthwise Conv reads is merged
// into it (runtime/ops/optimized/conv_pw_dw_f32.cc). Returns how many.
int NhwcPass::fuse_pointwise_depthwise(const std::vector<size_t>& order) {
  int merged = 0;
  for (size_t d : order) {
    const Node& dw = g_.nodes[d];
    if (role_[d] != Role::kNhwcOp || fused_away_[d] || dw.op_type != "Conv" || !dw.domain.empty()) continue;
    if (!is_depthwise_conv(dw, constant(dw.inputs[1]))) continue;
    const std::string& mid = dw.inputs[0];
    auto p = producer_.find(mid);
    if (p == producer_.end() || graph_outputs_.count(mid) || subgraph_reads_.count(mid)) continue;
    const size_t pw_index = p->second;
    const Node& pw = g_.nodes[pw_index];
    if (role_[pw_index] != Role::kNhwcOp || fused_away_[pw_index] || pw.op_type != "Conv" || !pw.domain.empty() ||
        pw.outputs[0] != mid)
      continue;
    const Tensor* w = constant(pw.inputs[1]);
    if (!is_pointwise_conv(pw, w) || w->dim(0) != constant(dw.inputs[1])->dim(0)) continue;
    auto readers = consumers_.find(mid);
    if (readers == consumers_.end() || readers->second.size() != 1) continue;
    pointwise_of_[d] = pw_index;
    fused_away_[pw_index] = true;
    merged_.insert(pw_index);
    ++merged;
  }
  return merged;
}

// Output channels of a region value a Conv produces (its W's M), or 0 when unknown.
int64_t NhwcPass::conv_output_channels(const std::string& value) const {
  auto p = producer_.find(value);
  if (p == producer_.end() || role_[p->second] != Role::kNhwcOp) return 0;
  const Node& conv = g_.nodes[p->second];
  if (conv.op_type != "Conv" || !conv.domain.empty() || conv.outputs[0] != value) return 0;
  const Tensor* w = constant(conv.inputs[1]);
  return w && w->rank() == 4 ? w->dim(0) : 0;
}

// A channel Concat of Conv outputs read only by a 1x1 Conv (the parts of equal channels) or
// by a MaxPool is merged into that node (ConcatConv, runtime/ops/optimized/conv_f32.cc;
// ConcatMaxPool, pool.cc), which reads the parts where they are: the concatenation is never
// written. The Conv reads each part as one tap of its channels; the pool pools each part into
// its channels of the output. SqueezeNet's fire modules end so. Returns how many.
int NhwcPass::fuse_concats(const std::vector<size_t>& order) {
  constexpr size_t kMaxParts = 16;
  int merged = 0;
  for (size_t c : order) {
    const Node& concat = g_.nodes[c];
    if (role_[c] != Role::kAgnostic || fused_away_[c] || concat.op_type != "Concat" || !concat.domain.empty()) continue;
    const std::string& out = concat.outputs[0];
    if (graph_outputs_.count(out) || subgraph_reads_.count(out)) continue;
    auto readers = consumers_.find(out);
    if (readers == consumers_.end() || readers->second.size() != 1) continue;
    if (concat.inputs.size() < 2 || concat.inputs.size() > kMaxParts) continue;
    const size_t j = readers->second[0];
    const Node& reader = g_.nodes[j];
    if (role_[j] != Role::kNhwcOp || fused_away_[j] || !reader.domain.empty() || reader.inputs[0] != out ||
        pointwise_of_.count(j) || nchw_input_.count(j))
      continue;
    // Parts made by float Convs: float tensors of known channels.
    const int64_t part = conv_output_channels(concat.inputs[0]);
    bool equal = part > 0, known = true;
    for (const std::string& in : concat.inputs) {
      const int64_t channels = conv_output_channels(in);
      known = known && channels > 0;
      equal = equal && channels == part;
    }
    if (!known) continue;
    if (reader.op_type == "Conv") {
      const Tensor* w = constant(reader.inputs[1]);
      if (!is_pointwise_conv(reader, w) || !equal || part * static_cast<int64_t>(concat.inputs.size()) != w->dim(1))
        continue;
    } else if (reader.op_type != "MaxPool" || reader.outputs.size() != 1) {
      continue;
    }
    concat_of_[j] = c;
    fused_away_[c] = true;
    merged_.insert(c);
    ++merged;
  }
  return merged;
}

// The depthwise Conv node (already renamed for the region) with its merged 1x1 Conv:
// inputs X, W_pw, B_pw, W_dw, B_dw; the 1x1 Conv's fused range / activation as pointwise_*.
Node NhwcPass::merged_pointwise_depthwise(const Node& depthwise, size_t pointwise,
                                          const std::unordered_map<std::string, std::string>& nhwc) const {
  const Node& pw = g_.nodes[pointwise];
  Node n = depthwise;
  n.name = pw.name + "+" + depthwise.name;
  n.op_type = kPointwiseDepthwiseOp;
  const auto nth = [](const Node& node, size_t k) { return k < node.inputs.size() ? node.inputs[k] : std::string(); };
  const std::string bias_pw = nth(pw, 2);
  n.inputs = {nhwc.at(pw.inputs[0]), constant_root(pw.inputs[1]), bias_pw.empty() ? "" : constant_root(bias_pw),
              depthwise.inputs[1], nth(depthwise, 2)};
  while (n.inputs.back().empty()) n.inputs.pop_back();
  for (const Attribute& a : pw.attributes) {
    if (a.name != "activation_min" && a.name != "activation_max" && a.name != "activation") continue;
    Attribute prefixed = a;
    prefixed.name = "pointwise_" + a.name;
    n.attributes.push_back(std::move(prefixed));
  }
  return n;
}

// An entering value whose one region reader is a Conv over few channels (an image: C <= 4,
// the own kernel's zero-padded copy with merged kernel rows) is read in NCHW by that Conv, as
// ConvNchwInput: its padded copy does the conversion, and no ToNHWC is needed. Returns how many.
int NhwcPass::read_images_in_nchw() {
  int converted = 0;
  for (auto it = entering_.begin(); it != entering_.end();) {
    std::vector<size_t> readers;
    auto c = consumers_.find(*it);
    if (c != consumers_.end()) {
      for (size_t r : c->second)
        if (role_[r] != Role::kNone && !fused_away_[r]) readers.push_back(r);
    }
    if (readers.size() != 1 || pointwise_of_.count(readers[0])) {
      ++it;
      continue;
    }
    const Node& conv = g_.nodes[readers[0]];
    const Tensor* w = conv.op_type == "Conv" && conv.domain.empty() ? constant(conv.inputs[1]) : nullptr;
    const Attribute* group = conv.find_attr("group");
    const Attribute* dilations = conv.find_attr("dilations");
    const bool image_stem = w && w->rank() == 4 && w->dim(1) <= 4 && w->dim(3) > 1 && (!group || group->i == 1) &&
                            (!dilations || std::all_of(dilations->ints.begin(), dilations->ints.end(),
                                                       [](int64_t d) { return d == 1; }));
    if (!image_stem || conv.inputs[0] != *it) {
      ++it;
      continue;
    }
    nchw_input_.insert(readers[0]);
    it = entering_.erase(it);
    ++converted;
  }
  return converted;
}

std::string NhwcPass::fresh(const std::string& base) {
  std::string name = base + "__nhwc";
  for (int k = 1; names_.count(name); ++k) name = base + "__nhwc" + std::to_string(k);
  names_.insert(name);
  return name;
}

Node NhwcPass::boundary(const char* op, const std::string& in, const std::string& out, bool unit) const {
  Node n;
  n.name = out + "/" + op;
  n.op_type = op;
  n.domain = kNhwcDomain;
  n.opset = 1;
  n.inputs = {in};
  n.outputs = {out};
  if (unit) n.attributes.push_back(int_attribute("unit_spatial", 1));
  return n;
}

bool unit_preserving_conv(const Node& n) {
  const Attribute* ks = n.find_attr("kernel_shape");
  const Attribute* pads = n.find_attr("pads");
  const Attribute* ap = n.find_attr("auto_pad");
  if (ap && ap->s != "NOTSET" && ap->s != "VALID") return false;
  if (pads) {
    for (int64_t p : pads->ints)
      if (p != 0) return false;
  }
  return ks && ks->ints.size() == 2 && ks->ints[0] == 1 && ks->ints[1] == 1;
}

Result<NhwcLayoutStats> NhwcPass::run() {
  NhwcLayoutStats stats;
  std::vector<size_t> order;
  if (!index(order)) return stats;

  role_.assign(g_.nodes.size(), Role::kNone);
  fused_away_.assign(g_.nodes.size(), false);
  // 1. Classify in topological order: a node joins when its inputs make rank 4 certain.
  for (size_t i : order) {
    if (fused_away_[i]) continue;
    role_[i] = classify(i);
    if (role_[i] == Role::kNone) continue;
    Node& n = g_.nodes[i];
    if (n.op_type == "Conv") try_fuse(i);
    for (const std::string& o : n.outputs) {
      if (!o.empty()) region_.insert(o);
    }
    // Unit spatial size (global pooling and what keeps it) makes the exit conversion free.
    bool unit = n.op_type == "GlobalAveragePool";
    if (role_[i] == Role::kAgnostic || (is_conv(n) && unit_preserving_conv(n))) {
      unit = true;
      for (size_t k : data_inputs(n)) {
        if (is_region(n.inputs[k]) && !unit_.count(n.inputs[k])) unit = false;
      }
      if (!is_region(n.inputs[0]) && !is_binary(n.op_type)) unit = false;
    }
    if (unit) unit_.insert(n.outputs[0]);
    if (role_[i] == Role::kNhwcOp && !is_region(n.inputs[0])) entering_.insert(n.inputs[0]);
  }
  if (region_.empty()) return stats;
  if (options_.fuse_pointwise_depthwise) stats.pointwise_depthwise = fuse_pointwise_depthwise(order);
  if (options_.nchw_input_conv) stats.nchw_input = read_images_in_nchw();
  if (options_.fuse_concat) stats.concat = fuse_concats(order);

  // 2. Region values read in NCHW: graph outputs, other nodes, subgraph captures.
  std::unordered_set<std::string> exits;
  for (const std::string& v : region_) {
    if (graph_outputs_.count(v) || subgraph_reads_.count(v)) exits.insert(v);
  }
  for (size_t i = 0; i < g_.nodes.size(); ++i) {
    if (role_[i] != Role::kNone || fused_away_[i]) continue;
    for (const std::string& in : g_.nodes[i].inputs) {
      if (is_region(in)) exits.insert(in);
    }
  }

  // 3. Names: every region value and every entering value gets an NHWC twin name.
  std::unordered_map<std::string, std::string> nhwc;
  for (size_t i : order) {
    if (role_[i] == Role::kNone || fused_away_[i]) continue;
    for (const std::string& o : g_.nodes[i].outputs) {
      if (!o.empty()) nhwc[o] = fresh(o);
    }
  }
  for (const std::string& v : entering_) nhwc[v] = fresh(v);

  // 4. Emit: region nodes renamed, boundary conversions right after the producer.
  std::vector<Node> out;
  out.reserve(g_.nodes.size() + entering_.size() + exits.size());
  for (const ValueInfo& v : g_.inputs) {
    if (entering_.count(v.name)) {
      out.push_back(boundary("ToNHWC", v.name, nhwc[v.name], false));
      ++stats.to_nhwc;
    }
  }
  for (const NamedTensor& t : g_.initializers) {
    if (entering_.count(t.name)) {
      out.push_back(boundary("ToNHWC", t.name, nhwc[t.name], false));
      ++stats.to_nhwc;
    }
  }
  for (size_t i : order) {
    if (fused_away_[i]) {
      if (!merged_.count(i)) ++stats.fused;  // an activation (merged nodes count above)
      continue;
    }
    Node n = g_.nodes[i];  // copied: the original names are read below
    if (role_[i] != Role::kNone) {
      const bool binary = n.domain.empty() && is_binary(n.op_type);
      const std::vector<size_t> data = data_inputs(n);
      for (size_t k = 0; k < n.inputs.size(); ++k) {
        std::string& in = n.inputs[k];
        if (in.empty()) continue;
        if (is_conv(n) && k > 0) {
          in = constant_root(in);  // W / B / quantization parameters: the initializer itself
        } else if (std::find(data.begin(), data.end(), k) != data.end()) {
          auto it = nhwc.find(in);
          if (it != nhwc.end()) {
            in = it->second;
          } else if (binary) {  // a per-channel constant, re-labelled once
            auto c = const_nhwc_.find(in);
            if (c == const_nhwc_.end()) {
              Shape s;
              per_channel_constant(in, s);
              const std::string name = fresh(in);
              new_initializers_.push_back({name, constant(in)->reshaped(s)});
              c = const_nhwc_.emplace(in, name).first;
            }
            in = c->second;
          }
        }
      }
      for (std::string& o : n.outputs) {
        if (!o.empty()) o = nhwc.at(o);
      }
      if (role_[i] == Role::kNhwcOp) {
        n.opset = opset_of(n);
        n.domain = kNhwcDomain;
        auto merged = pointwise_of_.find(i);
        if (merged != pointwise_of_.end()) n = merged_pointwise_depthwise(n, merged->second, nhwc);
        if (nchw_input_.count(i)) n.op_type = kConvNchwInputOp;
        auto concat = concat_of_.find(i);
        if (concat != concat_of_.end()) {  // ConcatConv: part 0, W, B (or ""), parts 1..; ConcatMaxPool: the parts
          const std::vector<std::string>& parts = g_.nodes[concat->second].inputs;
          const bool conv = n.op_type == "Conv";
          n.op_type = conv ? kConcatConvOp : kConcatMaxPoolOp;
          n.inputs.resize(conv ? 3 : 1);
          n.inputs[0] = nhwc.at(parts[0]);
          for (size_t k = 1; k < parts.size(); ++k) n.inputs.push_back(nhwc.at(parts[k]));
        }
        ++stats.nhwc_ops;
      } else {
        ++stats.agnostic_ops;
      }
      if (n.op_type == "Concat") {
        for (Attribute& a : n.attributes) {
          if (a.name == "axis") a.i = 3;
        }
      }
    }
    const std::vector<std::string> produced = n.outputs;  // renamed for region nodes
    out.push_back(std::move(n));
    const std::vector<std::string>& originals = g_.nodes[i].outputs;
    for (size_t k = 0; k < produced.size(); ++k) {
      if (produced[k].empty()) continue;
      if (role_[i] != Role::kNone) {
        const std::string& orig = originals[k];
        if (exits.count(orig)) {
          const bool unit = unit_.count(orig) != 0;
          out.push_back(boundary("ToNCHW", produced[k], orig, unit));
          ++stats.to_nchw;
          if (unit) ++stats.free_boundaries;
        }
      } else if (entering_.count(produced[k])) {
        out.push_back(boundary("ToNHWC", produced[k], nhwc.at(produced[k]), false));
        ++stats.to_nhwc;
      }
    }
  }
  g_.nodes = std::move(out);
  for (NamedTensor& t : new_initializers_) g_.initializers.push_back(std::move(t));
  return stats;
}

}  // namespace

Result<NhwcLayoutStats> apply_nhwc_layout(Graph& graph, const std::map<std::string, int64_t>& opset_imports,
                                          const NhwcLayoutOptions& options) {
  auto it = opset_imports.find("");
  if (it == opset_imports.end()) return NhwcLayoutStats{};
  const int gated = fuse_gated_activations(graph, it->second);
  NhwcPass pass(graph, it->second, options);
  XONNX_ASSIGN_OR_RETURN(NhwcLayoutStats stats, pass.run());
  stats.gated = gated;
  return stats;
}

}  // namespace xonnx
