#include "runtime/passes/layout_nhwc.h"

#include "runtime/ir/graph_edit.h"
#include "runtime/ops/internal_ops.h"
#include "runtime/passes/layout_nhwc_pass.h"
#include "runtime/passes/pass_util.h"
#include "runtime/passes/validate.h"
#include "runtime/ops/op_list.h"
#include "runtime/ops/registry.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace xonnx {

namespace {

bool is_qlinear_binary(const Node& n) {
  return n.domain == "com.microsoft" && (n.op_type == "QLinearAdd" || n.op_type == "QLinearMul") &&
         n.inputs.size() >= 7 && n.inputs.size() <= 8;
}

bool is_conv(const Node& n) { return n.domain.empty() && (n.op_type == "Conv" || n.op_type == "QLinearConv"); }

// The inputs that carry activations (the layout's concern); the others are parameters.
std::vector<size_t> data_inputs(const Node& n) {
  if (is_qlinear_binary(n)) return {0, 3};
  if (n.op_type == "Conv" && n.inputs.size() > kConvResidualInput) return {0, kConvResidualInput};  // Z
  if (n.domain.empty() && (is_arithmetic_binary(n.op_type) || n.op_type == "Concat")) {
    std::vector<size_t> all(n.inputs.size());
    for (size_t k = 0; k < all.size(); ++k) all[k] = k;
    return all;
  }
  return {0};
}

bool has_graph_attr(const Node& n) {
  for (const Attribute& a : n.attributes) {
    if (a.g || !a.graphs.empty()) return true;
  }
  return false;
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

}  // namespace

namespace layout_internal {

const Attribute* attr_of(const Node& n, const char* name, AttrType type) {
  const Attribute* a = n.find_attr(name);
  return a && a->type == type ? a : nullptr;
}

bool layout_agnostic_unary(const Node& n) { return op_has_trait(n.domain, n.op_type, kLayoutAgnostic); }

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
    if (v.type.kind != TypeInfo::Kind::kTensor) continue;
    elem_types_[v.name] = v.type.elem_type;
    if (v.type.has_shape && v.type.dims.size() == 4) dims4_[v.name] = v.type.dims;
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
  }
  // Topological order, stable (file order where the graph allows it), as the executor's.
  std::vector<std::vector<std::string>> reads(g_.nodes.size());
  for (size_t i = 0; i < g_.nodes.size(); ++i) reads[i] = node_reads(g_.nodes[i], &subgraph_reads_);
  auto sorted = topological_order(g_, reads, producer_);
  if (!sorted.is_ok()) return false;  // a cycle: compile reports it
  order = std::move(sorted).value();
  return true;
}

// The one reader of `value` when it has exactly one and is no graph output nor captured.
int NhwcPass::sole_reader(const std::string& value) const {
  if (graph_outputs_.count(value) || subgraph_reads_.count(value)) return -1;
  auto it = consumers_.find(value);
  return it != consumers_.end() && it->second.size() == 1 ? static_cast<int>(it->second[0]) : -1;
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

const Tensor* NhwcPass::conv_weight(const Node& n) const {
  return n.op_type == "Conv" && n.domain.empty() && n.inputs.size() > 1 ? constant(n.inputs[1]) : nullptr;
}

bool NhwcPass::float_2d_conv(const Node& n) const {
  if (n.inputs.size() < 2 || n.inputs.size() > 3 || n.outputs.size() != 1) return false;
  if (n.inputs[0].empty() || known_non_float(n.inputs[0])) return false;
  const Tensor* w = constant(n.inputs[1]);
  if (!w || w->dtype() != DataType::kFloat || w->rank() != 4) return false;
  if (n.inputs.size() == 3 && !n.inputs[2].empty()) {
    const Tensor* b = constant(n.inputs[2]);
    if (!b || b->dtype() != DataType::kFloat || b->rank() != 1) return false;
  }
  const Attribute* ks = n.find_attr("kernel_shape");
  return !ks || ks->ints.size() == 2;
}

bool NhwcPass::scalar_constant(const std::string& name) const {
  const Tensor* t = constant(name);
  return t && t->numel() == 1;
}

// A DynamicQuantizeLinear's scale or zero point: scalars, whatever the layout of what it read.
bool NhwcPass::dynamic_quantization_param(const std::string& name) const {
  auto p = producer_.find(name);
  if (p == producer_.end()) return false;
  const Node& n = g_.nodes[p->second];
  return is_default(n, "DynamicQuantizeLinear") && n.outputs.size() == 3 && n.outputs[0] != name;
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
  if (group_norms_.count(i)) return Role::kNhwcOp;  // rewritten when its first Reshape was seen
  const std::string& op = n.op_type;
  if (n.domain == "com.microsoft" && is_qlinear_binary(n)) {  // (qdq_fusion.h) int8 residual adds
    if (n.outputs.size() != 1 || !is_region(n.inputs[0]) || !is_region(n.inputs[3])) return Role::kNone;
    for (size_t k : {1, 2, 4, 5, 6, 7}) {
      if (k < n.inputs.size() && !n.inputs[k].empty() && !scalar_constant(n.inputs[k])) return Role::kNone;
    }
    return Role::kAgnostic;
  }
  // Other domains: their layout-agnostic ops only (com.microsoft Gelu, below).
  if (!n.domain.empty() && !layout_agnostic_unary(n)) return Role::kNone;
  if (op == "QLinearConv") {  // constant W, scales, zero points and bias; 2-D
    if (n.inputs.size() < 8 || n.inputs.size() > 9 || n.outputs.size() != 1 || n.inputs[0].empty()) return Role::kNone;
    for (size_t k = 1; k < n.inputs.size(); ++k) {
      if (n.inputs[k].empty() || !constant(n.inputs[k])) return Role::kNone;
    }
    const Attribute* ks = n.find_attr("kernel_shape");
    if (constant(n.inputs[3])->rank() != 4 || (ks && ks->ints.size() != 2)) return Role::kNone;
    return Role::kNhwcOp;
  }
  if (op == "Conv") return float_2d_conv(n) ? Role::kNhwcOp : Role::kNone;
  if (op == "ConvTranspose") {  // U-Net's and DB heads' upsampling, where a fast NHWC kernel exists
    if (!options_.nhwc_conv_transpose || !float_2d_conv(n)) return Role::kNone;
    // output_shape and auto_pad SAME leave the fast kernel: they stay outside, in NCHW.
    const Attribute* pad = attr_of(n, "auto_pad", AttrType::kString);
    const bool same = pad && pad->s.rfind("SAME", 0) == 0;
    return n.find_attr("output_shape") || same ? Role::kNone : Role::kNhwcOp;
  }
  if (op == "MaxPool" || op == "AveragePool") {
    if (n.inputs.size() != 1 || n.inputs[0].empty() || known_non_float(n.inputs[0])) return Role::kNone;
    if (n.outputs.size() > 2 || (n.outputs.size() == 2 && !n.outputs[1].empty())) return Role::kNone;
    const Attribute* ks = attr_of(n, "kernel_shape", AttrType::kInts);
    return ks && ks->ints.size() == 2 ? Role::kNhwcOp : Role::kNone;
  }
  if (channels_last_entry(i)) {
    identities_.insert(i);
    return Role::kAgnostic;
  }
  if (n.inputs.empty() || !is_region(n.inputs[0])) {  // joins through another operand, or not at all
    const bool binary = is_arithmetic_binary(op) && n.inputs.size() == 2 && is_region(n.inputs[1]);
    const bool concat = op == "Concat" && std::any_of(n.inputs.begin(), n.inputs.end(),
                                                      [&](const std::string& in) { return is_region(in); });
    if (!binary && !concat) return Role::kNone;
  }
  if (op == "GlobalAveragePool") return n.inputs.size() == 1 && n.outputs.size() == 1 ? Role::kNhwcOp : Role::kNone;
  // Resize of a region value (4-D): its roi / scales / sizes keep their NCHW order, which the
  // twin (ONNX Resize on the transposed input) and the own kernel read as such (unless its
  // output leaves the region: keep_widening_exits_nchw).
  if (op == "Resize") return is_region(n.inputs[0]) && n.outputs.size() == 1 ? Role::kNhwcOp : Role::kNone;
  if (op == "BatchNormalization") return inference_batch_norm(n) ? Role::kNhwcOp : Role::kNone;
  // InstanceNorm2d (style-transfer and GAN generators), or nn.GroupNorm with one channel per
  // group (wav2vec2's feature extractor) once its identity reshapes are gone: per channel, over
  // the pixels, which NHWC holds as a column.
  if (op == "InstanceNormalization") {
    if (!channel_affine(n, 3)) return Role::kNone;
    absorb_channel_affine(i, constant(n.inputs[1])->numel());  // torch's GroupNorm(C, C): its gamma, beta
    return Role::kNhwcOp;
  }
  // PixelShuffle / PixelUnshuffle (super-resolution nets) of float maps: blocks of pixels <->
  // channels, runs of channels in NHWC.
  if (op == "DepthToSpace" || op == "SpaceToDepth")
    return n.outputs.size() == 1 && !known_non_float(n.inputs[0]) ? Role::kNhwcOp : Role::kNone;
  if (op == "QuantizeLinear" || op == "DequantizeLinear") {  // per tensor only: the axis would move
    const auto scalar = [&](const std::string& v) { return scalar_constant(v) || dynamic_quantization_param(v); };
    if (n.inputs.size() < 2 || n.outputs.size() != 1 || !scalar(n.inputs[1])) return Role::kNone;
    if (n.inputs.size() > 2 && !n.inputs[2].empty() && !scalar(n.inputs[2])) return Role::kNone;
    return Role::kAgnostic;
  }
  // Element-wise over a range of the whole tensor: any layout. Its scale and zero point are
  // scalars and stay outside the region (region_outputs); ConvInteger's rewrite (qdq_fusion.h)
  // dequantizes y for the Conv after it.
  if (op == "DynamicQuantizeLinear") return n.outputs.size() == 3 ? Role::kAgnostic : Role::kNone;
  if (layout_agnostic_unary(n)) {
    if (n.outputs.size() != 1) return Role::kNone;
    for (size_t k = 1; k < n.inputs.size(); ++k) {
      if (is_region(n.inputs[k])) return Role::kNone;  // Clip bounds are scalars, never regions
    }
    return Role::kAgnostic;
  }
  // The other operand may also be a per-channel constant, or an entering value (4-D: an NHWC op
  // reads it) whose twin it reads: a residual Add of a block's input from outside the region
  // (a graph input) would otherwise leave the region at every block after it, each block's
  // sum going back to NCHW and into the next block's Convs again (channel Concats likewise).
  if (is_arithmetic_binary(op)) {
    if (n.inputs.size() != 2 || n.outputs.size() != 1 || opset_of(n) < 7) return Role::kNone;
    for (const std::string& in : n.inputs) {
      Shape s;
      if (!has_twin(in) && !per_channel_constant(in, s)) return Role::kNone;
    }
    return Role::kAgnostic;
  }
  if (op == "Reshape" && fuse_group_norm(i)) return Role::kNone;  // fused away into the last Reshape
  if (op == "Slice" || op == "Split" || op == "Reshape" || op == "Transpose")
    return relabeled(i) ? Role::kAgnostic : Role::kNone;
  if (op == "Pad") return pads_batch_only(n) || relabel_pad(i) ? Role::kAgnostic : Role::kNone;
  if (op == "Concat") {
    const Attribute* axis = attr_of(n, "axis", AttrType::kInt);
    if (!axis || (axis->i != 1 && axis->i != -3) || n.outputs.size() != 1) return Role::kNone;
    for (const std::string& in : n.inputs) {  // an entering part (the input image) reads its twin
      if (!has_twin(in)) return Role::kNone;
    }
    return Role::kAgnostic;
  }
  return Role::kNone;
}

// An op that widens what it reads, whose output only leaves the region, would move the boundary
// after it onto more bytes: an upsampling (LR-ASPP's 40x40 -> 320x320 logits: 64 times the
// values; a ConvTranspose) or a DequantizeLinear (float from 8-bit: an int8 U-Net's skip connections, read by a
// float ConvTranspose / Concat, left as float at 4 times the bytes). Last consumers first, so
// a chain of them goes back whole. One that a region node also reads stays, graph output or
// not (the calibration session exposes LR-ASPP's inner Resize, which a Conv reads).
void NhwcPass::keep_widening_exits_nchw(const std::vector<size_t>& order) {
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Node& n = g_.nodes[*it];
    const bool widening = (role_[*it] == Role::kNhwcOp && (n.op_type == "Resize" || n.op_type == "ConvTranspose")) ||
                          (role_[*it] == Role::kAgnostic && n.op_type == "DequantizeLinear");
    if (!widening || !n.domain.empty()) continue;
    const std::string& out = n.outputs[0];
    auto readers = consumers_.find(out);
    if (readers != consumers_.end() &&
        std::any_of(readers->second.begin(), readers->second.end(), [&](size_t c) { return role_[c] != Role::kNone; }))
      continue;
    role_[*it] = Role::kNone;
    region_.erase(out);
  }
}

// A Pad (opset 11+) of constant pads on axis 0 only, with a scalar constant value: the frames
// of a lowered 3-D Conv or MaxPool (passes/lower_3d_frames.cc). Axis 0 is N in both layouts.
bool NhwcPass::pads_batch_only(const Node& n) const {
  std::vector<int64_t> pads;
  if (opset_of(n) < 11 || n.inputs.size() < 2 || n.inputs.size() > 3 || n.outputs.size() != 1 ||
      !constant_ints(n.inputs[1], pads) || pads.size() != 8)
    return false;
  if (n.inputs.size() == 3 && !n.inputs[2].empty() && !scalar_constant(n.inputs[2])) return false;
  for (size_t k = 0; k < pads.size(); ++k) {
    if (k % 4 != 0 && pads[k] != 0) return false;
  }
  return true;
}

// An inference BatchNormalization (opset 9+) with constant float per-channel parameters and
// no running-statistics outputs: a per-channel affine map, as cheap in NHWC as in NCHW.
bool NhwcPass::inference_batch_norm(const Node& n) const {
  if (opset_of(n) < 9) return false;
  const Attribute* training = n.find_attr("training_mode");
  return (!training || training->i == 0) && channel_affine(n, 5);
}

bool NhwcPass::channel_affine(const Node& n, size_t inputs) const {
  if (n.inputs.size() != inputs || known_non_float(n.inputs[0])) return false;
  for (size_t k = 1; k < n.outputs.size(); ++k) {
    if (!n.outputs[k].empty()) return false;
  }
  for (size_t k = 1; k < inputs; ++k) {
    const Tensor* t = n.inputs[k].empty() ? nullptr : constant(n.inputs[k]);
    if (!t || t->dtype() != DataType::kFloat || t->rank() != 1) return false;
  }
  return true;
}

namespace {

// value_info for the NHWC twin of each region value whose NCHW type has rank 4: its dims
// permuted to [N, H, W, C]. Kernels read the static ones at creation
// (KernelInit::static_input_shape); a value of another rank (a channel shuffle's 5-D view, a
// lifted 1-D map) gets none.
void add_twin_value_info(Graph& g, const std::unordered_map<std::string, std::string>& twins) {
  std::unordered_map<std::string, const TypeInfo*> nchw;
  for (const auto* list : {&g.inputs, &g.value_info}) {
    for (const ValueInfo& v : *list) {
      if (v.type.kind == TypeInfo::Kind::kTensor && v.type.has_shape && v.type.dims.size() == 4)
        nchw.emplace(v.name, &v.type);
    }
  }
  std::vector<ValueInfo> added;
  for (const auto& [name, twin] : twins) {
    auto it = nchw.find(name);
    if (it == nchw.end()) continue;
    ValueInfo v{twin, *it->second};
    const std::vector<Dim>& d = it->second->dims;
    v.type.dims = {d[0], d[2], d[3], d[1]};
    added.push_back(std::move(v));
  }
  // In name order, not the hash map's: the same graph whatever the library's hashing.
  std::sort(added.begin(), added.end(), [](const ValueInfo& a, const ValueInfo& b) { return a.name < b.name; });
  for (ValueInfo& v : added) g.value_info.push_back(std::move(v));
}

}  // namespace

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
    if (n.op_type == "Conv" || n.op_type == "BatchNormalization") try_fuse(i);
    // A DynamicQuantizeLinear's scale and zero point are scalars: only y is in the region.
    const size_t region_outputs = is_default(n, "DynamicQuantizeLinear") ? 1 : n.outputs.size();
    for (size_t k = 0; k < region_outputs; ++k) {
      if (!n.outputs[k].empty()) region_.insert(n.outputs[k]);
    }
    // Unit spatial size (global pooling and what keeps it) makes the exit conversion free.
    bool unit = n.op_type == "GlobalAveragePool";
    if (role_[i] == Role::kAgnostic || (is_conv(n) && unit_preserving_conv(n))) {
      unit = true;
      for (size_t k : data_inputs(n)) {
        const std::string& in = n.inputs[k];
        if ((is_region(in) && !unit_.count(in)) || entering_.count(in)) unit = false;
      }
      if (!is_region(n.inputs[0]) && !is_arithmetic_binary(n.op_type)) unit = false;
      if (is_default(n, "Pad") && relabel_.count(i)) unit = false;  // spatial pads: no longer 1 x 1
    }
    if (unit) unit_.insert(n.outputs[0]);
    if (role_[i] == Role::kNhwcOp && !is_region(n.inputs[0])) entering_.insert(n.inputs[0]);
  }
  keep_widening_exits_nchw(order);
  stats.group_norms = static_cast<int>(group_norms_.size());
  if (region_.empty()) return stats;
  merge_for_own_kernels(order, stats);  // layout_nhwc_fusions.cc

  // 2. Region values read in NCHW: graph outputs, other nodes, subgraph captures.
  //    A channels-last exit reads the NHWC twin instead (when the region value has one).
  std::unordered_set<std::string> exits;
  for (const std::string& v : region_) {
    if (graph_outputs_.count(v) || subgraph_reads_.count(v)) exits.insert(v);
  }
  std::vector<size_t> exit_transposes;
  std::unordered_set<size_t> region_shapes;
  std::unordered_map<size_t, std::vector<int64_t>> region_reductions;  // node -> its NHWC axes
  for (size_t i = 0; i < g_.nodes.size(); ++i) {
    if (role_[i] != Role::kNone || fused_away_[i]) continue;
    if (channels_last_exit(i)) {
      exit_transposes.push_back(i);
      continue;
    }
    if (shape_of_region(i)) {
      region_shapes.insert(i);
      continue;
    }
    SplitExit split;
    if (channel_split_exit(i, split)) {
      split_exits_.emplace(i, std::move(split));
      continue;
    }
    std::vector<int64_t> nhwc_axes;
    if (reduce_of_region(i, nhwc_axes)) {
      region_reductions.emplace(i, std::move(nhwc_axes));
      continue;
    }
    for (const std::string& in : g_.nodes[i].inputs) {
      if (is_region(in)) exits.insert(in);
    }
  }

  // 3. Names: every region value and every entering value gets an NHWC twin name.
  std::unordered_map<std::string, std::string> nhwc;
  for (size_t i : order) {
    if (role_[i] == Role::kNone || fused_away_[i]) continue;
    for (const std::string& o : g_.nodes[i].outputs) {
      if (!o.empty() && is_region(o)) nhwc[o] = fresh(o);  // not a DynamicQuantizeLinear's scalars
    }
  }
  for (const std::string& v : entering_) nhwc[v] = fresh(v);
  for (size_t i : exit_transposes) {
    const std::string& v = g_.nodes[i].inputs[0];
    if (nhwc.count(v)) {
      identities_.insert(i);
    } else {
      exits.insert(v);
    }
  }
  for (auto it = split_exits_.begin(); it != split_exits_.end();) {
    const std::string& v = g_.nodes[it->first].inputs[0];
    if (nhwc.count(v)) {
      exit_perms_.emplace(it->second.transpose, it->second.perm);
      ++it;
    } else {  // no twin (a fused-away value): the Reshape reads it in NCHW
      exits.insert(v);
      it = split_exits_.erase(it);
    }
  }

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
    if (region_shapes.count(i)) {
      emit_shape_of_twin(g_.nodes[i], nhwc.at(g_.nodes[i].inputs[0]), out);
      ++stats.shapes;
      continue;
    }
    if (auto r = region_reductions.find(i); r != region_reductions.end()) {
      emit_reduce_of_twin(g_.nodes[i], nhwc.at(g_.nodes[i].inputs[0]), r->second, out);
      ++stats.reductions;
      continue;
    }
    Node n = g_.nodes[i];  // copied: the original names are read below
    if (role_[i] != Role::kNone) {
      if (n.origin.empty()) n.origin = g_.nodes[i].describe();  // errors name the model's node
      const bool binary = n.domain.empty() && is_arithmetic_binary(n.op_type);
      const std::vector<size_t> data = data_inputs(n);
      for (size_t k = 0; k < n.inputs.size(); ++k) {
        std::string& in = n.inputs[k];
        if (in.empty()) continue;
        if (std::find(data.begin(), data.end(), k) == data.end()) {
          if (is_conv(n) || n.op_type == "ConvTranspose")
            in = constant_root(in);  // W / B / quantization parameters: the initializer itself
        } else {
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
        if (auto it = nhwc.find(o); it != nhwc.end()) o = it->second;
      }
      if (role_[i] == Role::kNhwcOp) {
        n.opset = opset_of(n);
        n.domain = kNhwcDomain;
        rewrite_merged(i, n, nhwc);
        ++stats.nhwc_ops;
      } else {
        apply_relabel(i, n);
        ++stats.agnostic_ops;
      }
      if (n.op_type == "Concat") {
        for (Attribute& a : n.attributes) {
          if (a.name == "axis") a.i = 3;
        }
      }
    } else if (identities_.count(i)) {  // a channels-last exit: the region value's NHWC twin
      n.inputs[0] = nhwc.at(n.inputs[0]);
    } else if (split_exits_.count(i)) {
      emit_split_exit(i, nhwc.at(n.inputs[0]), n);
      ++stats.split_exits;
    } else if (auto p = exit_perms_.find(i); p != exit_perms_.end()) {
      emit_split_exit_transpose(p->second, n);
    }
    if (identities_.count(i)) {  // a channels-last entry or exit
      n.op_type = "Identity";
      n.attributes.clear();
      ++stats.channels_last;
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
  add_twin_value_info(g_, nhwc);
  return stats;
}

}  // namespace layout_internal

bool nhwc_layout_pays(const OpRegistry& registry, bool own_kernels) {
  for (const char* op : {"Conv", "QLinearConv"}) {
    if (registry.has_fast_kernel(kNhwcDomain, op, Backend::kXnnpack) ||
        (own_kernels && registry.has_fast_kernel(kNhwcDomain, op, Backend::kOptimized)))
      return true;
  }
  return false;
}

NhwcLayoutOptions fast_layout_fusions(const OpRegistry& registry) {
  auto fast = [&](const char* op) { return registry.has_fast_kernel(kNhwcDomain, op); };
  NhwcLayoutOptions o;
  o.fuse_pointwise_depthwise = fast(kPointwiseDepthwiseOp);
  o.nchw_input_conv = fast(kConvNchwInputOp);
  o.fuse_concat = fast(kConcatConvOp) && fast(kConcatMaxPoolOp) && fast(kConcatBatchNormOp);
  o.fuse_stem_pool = fast(kConvMaxPoolOp);
  o.fuse_stem_depthwise = fast(kStemDepthwiseOp);
  o.fuse_norm_conv = fast(kBatchNormConvOp);
  o.fuse_residual_add = fast("Conv");
  o.nhwc_conv_transpose = fast("ConvTranspose");
  o.lift_1d = fast("Conv");
  return o;
}

Result<NhwcLayoutStats> apply_nhwc_layout(Graph& graph, const std::map<std::string, int64_t>& opset_imports,
                                          const NhwcLayoutOptions& options) {
  auto it = opset_imports.find("");
  if (it == opset_imports.end()) return NhwcLayoutStats{};
  const int lifted = options.lift_1d ? layout_internal::lift_1d_convolutions(graph, it->second) : 0;
  const int gated = layout_internal::fuse_gated_activations(graph, it->second);
  layout_internal::NhwcPass pass(graph, it->second, options);
  XONNX_ASSIGN_OR_RETURN(NhwcLayoutStats stats, pass.run());
  stats.gated = gated;
  stats.lifted_1d = lifted;
  return stats;
}

}  // namespace xonnx
