// Region ops whose constant operands name axes or shapes, re-labelled for NHWC (the layout pass,
// layout_nhwc_pass.h): a channel Slice (ShuffleNet's chunk into two branches) or Split (YOLOv8's)
// cuts the last axis, and a channel shuffle Reshape [N, g, C/g, H, W] -> Transpose [0, 2, 1, 3, 4]
// -> Reshape [N, C, H, W] becomes Reshape [N, H, W, g, C/g] -> Transpose [0, 1, 2, 4, 3] ->
// Reshape [N, H, W, C]: the same channel order, so the blocks stay in one region where each
// shuffle left it and came back (ShuffleNetV2: 33 conversions per run). And torch's permutes to
// and from channels-last run as Identities of the region's NHWC data (ConvNeXt, Swin). A Shape of
// a region value reads its NHWC twin's shape, gathered back into NCHW order; a Reduce* over its
// spatial dims reduces the twin's. A detection head's view + permute of a region value ([N, A * K,
// H, W] -> [N, A, K, H, W] -> [N, H, W, A, K]) reshapes the twin and transposes it with the
// composed perm, an Identity where that is the twin's own order. A video clip's two views
// (passes/lower_3d_frames.cc), frames [D, C, H, W] and image [1, C, D, H W], hold the same NHWC
// data ([D, H, W, C]): the Reshape, Transpose, Reshape between them become Reshapes of the twin
// around an Identity.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "runtime/passes/layout_nhwc_pass.h"
#include "runtime/passes/pass_util.h"

namespace xonnx {
namespace layout_internal {

namespace {

constexpr int64_t kNhwcAxisOf[4] = {0, 3, 1, 2};  // NCHW axis -> its NHWC axis

const std::vector<int64_t>* ints_attr(const Node& n, const char* name) {
  const Attribute* a = n.find_attr(name);
  return a && a->type == AttrType::kInts ? &a->ints : nullptr;
}

Tensor ints_tensor(const std::vector<int64_t>& v) {
  return Tensor::from_vector<int64_t>(v, {static_cast<int64_t>(v.size())});
}

bool transpose_with_perm(const Node& n, const std::vector<int64_t>& perm) {
  if (!is_default(n, "Transpose") || n.inputs.size() != 1 || n.inputs[0].empty() || n.outputs.size() != 1) return false;
  const std::vector<int64_t>* p = ints_attr(n, "perm");
  return p && *p == perm;
}

}  // namespace

// A constant int64 / int32 vector, or nothing.
bool NhwcPass::constant_ints(const std::string& name, std::vector<int64_t>& out) const {
  const Tensor* t = name.empty() ? nullptr : constant(name);
  if (!t || (t->dtype() != DataType::kInt64 && t->dtype() != DataType::kInt32) || t->rank() != 1) return false;
  auto v = t->to_int64_vector();
  if (!v.is_ok()) return false;
  out = std::move(v).value();
  return true;
}

bool NhwcPass::relabel_slice(size_t i) {
  const Node& n = g_.nodes[i];
  if (opset_of(n) < 10 || n.inputs.size() < 3 || n.inputs.size() > 5 || n.outputs.size() != 1) return false;
  std::vector<int64_t> starts, ends, axes, steps;
  if (!constant_ints(n.inputs[1], starts) || !constant_ints(n.inputs[2], ends) || starts.size() != ends.size())
    return false;
  if (n.inputs.size() > 3 && !n.inputs[3].empty()) {
    if (!constant_ints(n.inputs[3], axes) || axes.size() != starts.size()) return false;
  } else {
    for (size_t k = 0; k < starts.size(); ++k) axes.push_back(static_cast<int64_t>(k));
  }
  if (n.inputs.size() > 4 && !n.inputs[4].empty() && !constant_ints(n.inputs[4], steps)) return false;
  for (int64_t& a : axes) {
    if (a < -4 || a > 3) return false;
    a = kNhwcAxisOf[a < 0 ? a + 4 : a];
  }
  Relabel r;
  r.input = 3;
  const Shape shape = {static_cast<int64_t>(axes.size())};
  if (constant(n.inputs[1])->dtype() == DataType::kInt32) {  // starts, ends, axes and steps share a type
    r.constant = Tensor::from_vector<int32_t>(std::vector<int32_t>(axes.begin(), axes.end()), shape);
  } else {
    r.constant = Tensor::from_vector<int64_t>(axes, shape);
  }
  relabel_[i] = std::move(r);
  return true;
}

// A Split of a region value (YOLOv8's C2f chunks its first Conv's channels in two) splits the
// twin's matching axis into the same sizes: only its `axis` changes.
bool NhwcPass::relabel_split(size_t i) {
  const Node& n = g_.nodes[i];
  if (n.inputs.empty() || n.inputs.size() > 2 || n.outputs.empty()) return false;
  const Attribute* axis = attr_of(n, "axis", AttrType::kInt);
  const int64_t a = axis ? axis->i : 0;
  if (a < -4 || a > 3) return false;
  Relabel r;
  r.axis = kNhwcAxisOf[a < 0 ? a + 4 : a];
  relabel_[i] = std::move(r);
  return true;
}

// A Pad of the spatial axes (ReflectionPad2d before every Conv of a style-transfer net, any
// mode: each axis is padded on its own) pads the NHWC twin's axes: its pads, in NHWC order.
// Channels stay unpadded; an `axes` input (opset 18) is not taken.
bool NhwcPass::relabel_pad(size_t i) {
  const Node& n = g_.nodes[i];
  std::vector<int64_t> pads;
  if (opset_of(n) < 11 || n.inputs.size() < 2 || n.inputs.size() > 3 || n.outputs.size() != 1 ||
      !constant_ints(n.inputs[1], pads) || pads.size() != 8 || pads[1] != 0 || pads[5] != 0)
    return false;
  if (n.inputs.size() == 3 && !n.inputs[2].empty() && !scalar_constant(n.inputs[2])) return false;
  std::vector<int64_t> nhwc(8);
  for (size_t side = 0; side < 2; ++side)
    for (size_t a = 0; a < 4; ++a) nhwc[side * 4 + static_cast<size_t>(kNhwcAxisOf[a])] = pads[side * 4 + a];
  Relabel r;
  r.input = 1;
  r.constant = Tensor::from_vector<int64_t>(nhwc, {8});
  relabel_[i] = std::move(r);
  return true;
}

bool NhwcPass::swap_chain(size_t first, SwapChain& c) const {
  const Node& split = g_.nodes[first];
  if (split.inputs.size() != 2 || split.outputs.size() != 1 || !constant_ints(split.inputs[1], c.five) ||
      c.five.size() != 5)
    return false;
  c.transpose = sole_reader(split.outputs[0]);
  if (c.transpose < 0 || !transpose_with_perm(g_.nodes[static_cast<size_t>(c.transpose)], {0, 2, 1, 3, 4}))
    return false;
  c.join = sole_reader(g_.nodes[static_cast<size_t>(c.transpose)].outputs[0]);
  if (c.join < 0 || !is_default(g_.nodes[static_cast<size_t>(c.join)], "Reshape")) return false;
  const Node& join = g_.nodes[static_cast<size_t>(c.join)];
  return join.inputs.size() == 2 && join.outputs.size() == 1 && constant_ints(join.inputs[1], c.four) &&
         c.four.size() == 4;
}

bool NhwcPass::relabel_channel_shuffle(size_t first) {
  SwapChain c;
  if (!swap_chain(first, c)) return false;
  const std::vector<int64_t>& grouped = c.five;
  for (int64_t d : grouped) {
    if (d <= 0) return false;  // 0 (copy a dim) and -1 would name NCHW positions
  }
  // [N, g, C / g, H, W] of the region value [N, C, H, W] (its C, H and W known, its N where
  // known): a Reshape that splits N instead (a video's frames [D, C, H, W] -> [1, D, C, H, W],
  // lower_3d_frames.cc) has the same ops and is no shuffle. Without value_info (optimization
  // none) nothing tells them apart, and the shuffle stays outside.
  auto dims = dims4_.find(g_.nodes[first].inputs[0]);
  if (dims == dims4_.end()) return false;
  const int64_t want[4] = {grouped[0], grouped[1] * grouped[2], grouped[3], grouped[4]};
  for (size_t k = 0; k < 4; ++k) {
    const Dim& d = dims->second[k];
    if ((k > 0 && !d.known()) || (d.known() && d.value != want[k])) return false;
  }
  const std::vector<int64_t>& back = c.four;
  for (int64_t d : back) {
    if (d == 0 || d < -1) return false;
  }
  relabel_[first] = {1, ints_tensor({grouped[0], grouped[3], grouped[4], grouped[1], grouped[2]}), {}};
  relabel_[static_cast<size_t>(c.transpose)] = {-1, Tensor(), {0, 1, 2, 4, 3}};
  relabel_[static_cast<size_t>(c.join)] = {1, ints_tensor({back[0], back[2], back[3], back[1]}), {}};
  return true;
}

bool NhwcPass::relabel_clip_view(size_t first) {
  SwapChain c;
  if (!swap_chain(first, c)) return false;
  auto dims = dims4_.find(g_.nodes[first].inputs[0]);
  if (dims == dims4_.end()) return false;
  int64_t x[4];
  for (size_t k = 0; k < 4; ++k) {
    if (!dims->second[k].known()) return false;
    x[k] = dims->second[k].value;
  }
  using V = std::vector<int64_t>;
  const V &five = c.five, &four = c.four;
  V twin5, twin4;
  if (five == V{1, x[0], x[1], x[2], x[3]} && four == V{1, x[1], x[0], x[2] * x[3]}) {  // frames -> image
    twin5 = {1, x[0], x[2], x[3], x[1]};
    twin4 = {1, x[0], x[2] * x[3], x[1]};
  } else if (x[0] == 1 && five[0] == 1 && five[1] == x[1] && five[2] == x[2] && five[3] * five[4] == x[3] &&
             four == V{x[2], x[1], five[3], five[4]}) {  // image -> frames
    twin5 = {1, x[2], five[3], five[4], x[1]};
    twin4 = {x[2], five[3], five[4], x[1]};
  } else {
    return false;
  }
  relabel_[first] = {1, ints_tensor(twin5), {}};
  relabel_[static_cast<size_t>(c.transpose)] = {};
  identities_.insert(static_cast<size_t>(c.transpose));
  relabel_[static_cast<size_t>(c.join)] = {1, ints_tensor(twin4), {}};
  return true;
}

bool NhwcPass::channels_last_entry(size_t i) const {
  const Node& n = g_.nodes[i];
  return transpose_with_perm(n, {0, 3, 1, 2}) && !is_region(n.inputs[0]) && !known_non_float(n.inputs[0]);
}

bool NhwcPass::channels_last_exit(size_t i) const {
  const Node& n = g_.nodes[i];
  return transpose_with_perm(n, {0, 2, 3, 1}) && is_region(n.inputs[0]);
}

bool NhwcPass::shape_of_region(size_t i) const {
  const Node& n = g_.nodes[i];
  return is_default(n, "Shape") && n.inputs.size() == 1 && is_region(n.inputs[0]) && n.outputs.size() == 1 &&
         !n.outputs[0].empty();
}

void NhwcPass::emit_shape_of_twin(const Node& shape, const std::string& twin, std::vector<Node>& out) {
  // Shape's start / end (opset 15) on the NCHW dims, clamped as the operator clamps them.
  int64_t range[2] = {0, 4};
  const char* names[2] = {"start", "end"};
  for (int k = 0; k < 2; ++k) {
    const Attribute* a = shape.find_attr(names[k]);
    if (!a || a->type != AttrType::kInt) continue;
    range[k] = std::clamp<int64_t>(a->i < 0 ? a->i + 4 : a->i, 0, 4);
  }
  constexpr int64_t kNhwcPosition[4] = {0, 3, 1, 2};  // of NCHW dim d in [N, H, W, C]
  std::vector<int64_t> order;
  for (int64_t d = range[0]; d < range[1]; ++d) order.push_back(kNhwcPosition[d]);
  const std::string& result = shape.outputs[0];
  Node of_twin = shape;
  of_twin.attributes.clear();
  of_twin.inputs = {twin};
  of_twin.outputs = {fresh(result)};
  const std::string indices = fresh(result + "_nchw_order");
  new_initializers_.push_back({indices, Tensor::from_vector<int64_t>(order, {static_cast<int64_t>(order.size())})});
  Node gather;
  gather.name = shape.name + "/nchw_order";
  gather.op_type = "Gather";
  gather.opset = opset_of(shape);
  gather.origin = shape.origin.empty() ? shape.describe() : shape.origin;
  gather.inputs = {of_twin.outputs[0], indices};
  gather.outputs = {result};
  out.push_back(std::move(of_twin));
  out.push_back(std::move(gather));
}

bool NhwcPass::reduce_of_region(size_t i, std::vector<int64_t>& nhwc_axes) const {
  const Node& n = g_.nodes[i];
  static const std::set<std::string> kReductions = {"ReduceL1",  "ReduceL2",       "ReduceLogSum", "ReduceLogSumExp",
                                                    "ReduceMax", "ReduceMean",     "ReduceMin",    "ReduceProd",
                                                    "ReduceSum", "ReduceSumSquare"};
  if (!n.domain.empty() || !kReductions.count(n.op_type)) return false;
  if (n.inputs.empty() || !is_region(n.inputs[0]) || n.outputs.size() != 1 || n.outputs[0].empty()) return false;
  // A region value is 4-D unless a channel shuffle's Reshape / Transpose made it (a 5-D view).
  auto p = producer_.find(n.inputs[0]);
  const Node* producer = p == producer_.end() ? nullptr : &g_.nodes[p->second];
  if (producer && (producer->op_type == "Reshape" || producer->op_type == "Transpose") && !dims4_.count(n.inputs[0]))
    return false;
  // ReduceSum takes its axes as input 1 from opset 13, the others from opset 18.
  const bool axes_input = opset_of(n) >= (n.op_type == "ReduceSum" ? 13 : 18);
  std::vector<int64_t> axes;
  if (axes_input) {
    if (n.inputs.size() != 2 || !constant_ints(n.inputs[1], axes)) return false;
  } else {
    const Attribute* a = n.find_attr("axes");
    if (n.inputs.size() != 1 || !a || a->type != AttrType::kInts) return false;
    axes = a->ints;
  }
  bool reduced[4] = {false, false, false, false};
  for (int64_t axis : axes) {
    if (axis < -4 || axis > 3) return false;
    reduced[axis < 0 ? axis + 4 : axis] = true;
  }
  if (axes.empty()) return false;  // all dims or none (noop_with_empty_axes): left as it is
  const Attribute* keepdims = n.find_attr("keepdims");
  if (keepdims && keepdims->type != AttrType::kInt) return false;
  const bool keep = !keepdims || keepdims->i != 0;
  // [N, C, H, W] -> [N, H, W, C]: C moves behind H and W. The kept dims keep their order when C
  // is reduced or H and W are; with keepdims, only N may stay.
  const bool same = keep ? reduced[1] && reduced[2] && reduced[3] : reduced[1] || (reduced[2] && reduced[3]);
  if (!same) return false;
  constexpr int64_t kNhwcPosition[4] = {0, 3, 1, 2};  // of NCHW dim d in [N, H, W, C]
  nhwc_axes.clear();
  for (int64_t d = 0; d < 4; ++d) {
    if (reduced[d]) nhwc_axes.push_back(kNhwcPosition[d]);
  }
  std::sort(nhwc_axes.begin(), nhwc_axes.end());
  return true;
}

void NhwcPass::emit_reduce_of_twin(const Node& reduce, const std::string& twin, const std::vector<int64_t>& nhwc_axes,
                                   std::vector<Node>& out) {
  Node of_twin = reduce;
  if (of_twin.origin.empty()) of_twin.origin = reduce.describe();  // errors name the model's node
  of_twin.inputs[0] = twin;
  if (of_twin.inputs.size() == 2) {
    const std::string axes = fresh(reduce.outputs[0] + "_nhwc_axes");
    new_initializers_.push_back(
        {axes, Tensor::from_vector<int64_t>(nhwc_axes, {static_cast<int64_t>(nhwc_axes.size())})});
    of_twin.inputs[1] = axes;
  } else {
    for (Attribute& a : of_twin.attributes) {
      if (a.name == "axes") a.ints = nhwc_axes;
    }
  }
  out.push_back(std::move(of_twin));
}

bool NhwcPass::channel_split_exit(size_t i, SplitExit& e) const {
  const Node& n = g_.nodes[i];
  std::vector<int64_t> shape;
  if (!is_default(n, "Reshape") || n.inputs.size() != 2 || !is_region(n.inputs[0]) || n.outputs.size() != 1 ||
      !constant_ints(n.inputs[1], shape) || shape.size() < 5)
    return false;
  const Attribute* allowzero = n.find_attr("allowzero");
  if (allowzero && (allowzero->type != AttrType::kInt || allowzero->i != 0)) return false;
  auto dims = dims4_.find(n.inputs[0]);
  if (dims == dims4_.end()) return false;
  const Dim &batch = dims->second[0], &c = dims->second[1], &h = dims->second[2], &w = dims->second[3];
  const size_t k = shape.size() - 3;  // C split into shape[1 .. k]
  if (!c.known() || !h.known() || !w.known() || shape[k + 1] != h.value || shape[k + 2] != w.value) return false;
  // The parts of C: positive, or one -1 (C over the others' product; then N must be the one
  // the shape names, or a batch would flow into it in NCHW order but not in NHWC).
  int64_t product = 1, inferred = 0;
  for (size_t d = 1; d <= k; ++d) {
    if (shape[d] == -1) {
      ++inferred;
    } else if (shape[d] > 0) {
      product *= shape[d];
    } else {
      return false;  // 0 copies the dim at that NCHW position
    }
  }
  if (inferred > 1 || (inferred == 0 ? product != c.value : c.value % product != 0)) return false;
  if (shape[0] < 0 || (shape[0] > 0 && inferred && !(batch.known() && batch.value == shape[0]))) return false;
  const int t = sole_reader(n.outputs[0]);
  if (t < 0) return false;
  const Node& transpose = g_.nodes[static_cast<size_t>(t)];
  const std::vector<int64_t>* perm = ints_attr(transpose, "perm");
  if (!is_default(transpose, "Transpose") || transpose.inputs.size() != 1 || transpose.outputs.size() != 1 || !perm ||
      perm->size() != shape.size())
    return false;
  // Dim d of the NCHW view [N, a..., H, W] is dim `twin_dim[d]` of the twin's [N, H, W, a...].
  std::vector<int64_t> twin_dim(shape.size());
  for (size_t d = 1; d <= k; ++d) twin_dim[d] = static_cast<int64_t>(d) + 2;
  twin_dim[k + 1] = 1;
  twin_dim[k + 2] = 2;
  std::vector<bool> seen(shape.size(), false);
  e.perm.clear();
  for (int64_t p : *perm) {
    if (p < 0 || p >= static_cast<int64_t>(shape.size()) || seen[static_cast<size_t>(p)]) return false;
    seen[static_cast<size_t>(p)] = true;
    e.perm.push_back(twin_dim[static_cast<size_t>(p)]);
  }
  e.twin_shape = {shape[0], h.value, w.value};
  e.twin_shape.insert(e.twin_shape.end(), shape.begin() + 1, shape.begin() + 1 + static_cast<int64_t>(k));
  e.transpose = static_cast<size_t>(t);
  return true;
}

void NhwcPass::emit_split_exit(size_t i, const std::string& twin, Node& n) {
  const std::string name = fresh(n.outputs[0] + "_nhwc_shape");
  new_initializers_.push_back({name, ints_tensor(split_exits_.at(i).twin_shape)});
  if (n.origin.empty()) n.origin = g_.nodes[i].describe();
  n.inputs = {twin, name};
}

void NhwcPass::emit_split_exit_transpose(const std::vector<int64_t>& perm, Node& n) {
  if (is_identity_perm(perm)) {
    n.op_type = "Identity";
    n.attributes.clear();
  } else {
    set_attribute(n, ints_attribute("perm", perm));
  }
}

// Called for a Reshape, Transpose, Slice or Split whose input is a region value.
bool NhwcPass::relabeled(size_t i) {
  if (relabel_.count(i)) return true;  // the Transpose and last Reshape of a shuffle
  const Node& n = g_.nodes[i];
  if (is_default(n, "Slice")) return relabel_slice(i);
  if (is_default(n, "Split")) return relabel_split(i);
  return is_default(n, "Reshape") && (relabel_channel_shuffle(i) || relabel_clip_view(i));
}

void NhwcPass::apply_relabel(size_t i, Node& n) {
  auto it = relabel_.find(i);
  if (it == relabel_.end()) return;
  const Relabel& r = it->second;
  if (r.input >= 0) {
    const std::string name = fresh(n.name.empty() ? n.op_type : n.name);
    new_initializers_.push_back({name, r.constant});
    if (n.inputs.size() <= static_cast<size_t>(r.input)) n.inputs.resize(static_cast<size_t>(r.input) + 1);
    n.inputs[static_cast<size_t>(r.input)] = name;
  }
  if (!r.perm.empty()) {
    for (Attribute& a : n.attributes) {
      if (a.name == "perm") a.ints = r.perm;
    }
  }
  if (r.axis >= 0) {
    n.attributes.erase(
        std::remove_if(n.attributes.begin(), n.attributes.end(), [](const Attribute& a) { return a.name == "axis"; }),
        n.attributes.end());
    n.attributes.push_back(int_attribute("axis", r.axis));
  }
}

}  // namespace layout_internal
}  // namespace xonnx
