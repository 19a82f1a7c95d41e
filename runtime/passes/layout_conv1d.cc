// 1-D convolutions and pools as 2-D ones of height 1, so that the NHWC layout pass takes them
// into its regions (Whisper's and Conformer's Conv1d stems, keyword spotters, TCNs, vocoders'
// upsampling): a Conv with a 3-D weight [M, C/g, k] becomes Unsqueeze(X, 2) -> Conv with W
// [M, C/g, 1, k] -> Squeeze(2), and likewise ConvTranspose with a 3-D weight [C, M/g, k],
// QLinearConv with a 3-D 8-bit weight (the QDQ pass's int8 Conv1d) and MaxPool / AveragePool
// with a 1-D kernel. [N, C, 1, W] holds the
// memory of [N, C, W], and the attributes gain a height axis of size 1, stride 1, no padding:
// the same values, the same order of summation.
// The Squeezes then move past the element-wise ops that read them (the layout-agnostic unary
// ops, BatchNormalization and InstanceNormalization with per-channel constants, per-tensor
// QuantizeLinear / DequantizeLinear, and Add / Sub / Mul / Div / com.microsoft QLinearAdd /
// QLinearMul of two lifted values, of a lifted value and a constant, or of a lifted value and a
// 3-D value a lifted Conv reads through an Unsqueeze made here: a residual of the graph input),
// and an Unsqueeze of a Squeeze reads the 4-D value itself: a chain of 1-D layers stays one
// region, converted once on the way in and once on the way out.
#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "runtime/ir/graph_edit.h"
#include "runtime/ir/graph_index.h"
#include "runtime/ops/op_list.h"
#include "runtime/ops/registry.h"
#include "runtime/passes/layout_nhwc_pass.h"
#include "runtime/passes/pass_util.h"
#include "runtime/passes/validate.h"

namespace xonnx {
namespace layout_internal {

namespace {

constexpr int64_t kHeightAxis = 2;

// Prepends a height entry to a 1-D spatial attribute (kernel_shape, strides, dilations: `h`)
// or a [begin, end] pads pair ([0, b, 0, e]). False when the attribute has another length.
bool add_height(Node& n, const char* name, int64_t h) {
  Attribute* a = nullptr;
  for (Attribute& x : n.attributes) {
    if (x.name == name) a = &x;
  }
  if (!a) return true;
  if (a->type != AttrType::kInts) return false;
  const bool pads = std::string(name) == "pads";
  if (a->ints.size() != (pads ? 2u : 1u)) return false;
  if (pads) {
    a->ints = {0, a->ints[0], 0, a->ints[1]};
  } else {
    a->ints.insert(a->ints.begin(), h);
  }
  return true;
}

bool lift_attributes(Node& n) {
  return add_height(n, "kernel_shape", 1) && add_height(n, "strides", 1) && add_height(n, "dilations", 1) &&
         add_height(n, "pads", 0) && add_height(n, "output_padding", 0) && add_height(n, "output_shape", 1);
}

class Conv1dLift {
 public:
  Conv1dLift(Graph& g, int64_t opset) : g_(g), opset_(opset), names_(g) {}

  int run() {
    int lifted = 0;
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      if (lift(i)) ++lifted;
    }
    if (lifted == 0) return 0;
    g_.nodes.insert(g_.nodes.end(), added_.begin(), added_.end());
    added_.clear();
    sink_squeezes();
    cancel_pairs();
    for (NamedTensor& t : new_initializers_) g_.initializers.push_back(std::move(t));
    return lifted;
  }

 private:
  // Where a Conv's, ConvTranspose's or QLinearConv's W is, else -1.
  static int weight_input(const Node& n) {
    if (n.op_type == "Conv" || n.op_type == "ConvTranspose") return n.inputs.size() >= 2 ? 1 : -1;
    if (n.op_type == "QLinearConv") return n.inputs.size() >= 8 ? 3 : -1;
    return -1;
  }

  // Conv or ConvTranspose with a constant 3-D float W, QLinearConv with a constant 3-D 8-bit W,
  // or a 1-D MaxPool / AveragePool with one output.
  bool liftable(const Node& n) const {
    if (!n.domain.empty() || n.inputs.empty() || n.inputs[0].empty() || n.outputs.size() != 1) return false;
    if (n.op_type == "Conv" || n.op_type == "ConvTranspose" || n.op_type == "QLinearConv") {
      const int wi = weight_input(n);
      if (wi < 0) return false;
      const Tensor* w = constant_tensor(g_, n.inputs[static_cast<size_t>(wi)]);
      const bool typed =
          n.op_type == "QLinearConv" ? w && dtype_is_8bit_int(w->dtype()) : w && w->dtype() == DataType::kFloat;
      return typed && w->rank() == 3;
    }
    if (n.op_type == "MaxPool" || n.op_type == "AveragePool") {
      const Attribute* ks = n.find_attr("kernel_shape");
      return ks && ks->type == AttrType::kInts && ks->ints.size() == 1;
    }
    return false;
  }

  bool lift(size_t i) {
    if (!liftable(g_.nodes[i])) return false;
    Node n = g_.nodes[i];
    if (!lift_attributes(n)) return false;  // malformed: the op reports it as it was
    const int wi = weight_input(n);
    if (wi >= 0) {
      std::string& w_name = n.inputs[static_cast<size_t>(wi)];
      const Tensor* w = constant_tensor(g_, w_name);
      const Shape& s = w->shape();
      if (!n.find_attr("kernel_shape")) n.attributes.push_back(ints_attribute("kernel_shape", {1, s[2]}));
      const std::string w4 = names_.fresh(w_name + "_2d");
      new_initializers_.push_back({w4, w->reshaped({s[0], s[1], 1, s[2]})});
      w_name = w4;
    }
    if (n.origin.empty()) n.origin = g_.nodes[i].describe();  // errors name the model's node
    const std::string y = n.outputs[0];
    n.inputs[0] = unsqueezed(n.inputs[0]);
    n.outputs[0] = names_.fresh(y + "_2d");
    added_.push_back(squeeze(n.outputs[0], y));
    g_.nodes[i] = std::move(n);
    return true;
  }

  std::string axes_input() {
    if (axes_.empty()) {
      axes_ = names_.fresh("conv1d_height_axis");
      new_initializers_.push_back({axes_, Tensor::from_vector<int64_t>({kHeightAxis}, {1})});
    }
    return axes_;
  }

  Node reshaping(const char* op, const std::string& in, const std::string& out) {
    Node n;
    n.op_type = op;
    n.name = out + "/" + op;
    n.inputs = {in};
    n.outputs = {out};
    if (opset_ >= 13) {
      n.inputs.push_back(axes_input());
    } else {
      n.attributes.push_back(ints_attribute("axes", {kHeightAxis}));
    }
    return n;
  }

  Node squeeze(const std::string& in, const std::string& out) {
    squeezes_.insert(out);
    return reshaping("Squeeze", in, out);
  }

  std::string unsqueezed(const std::string& x) {
    auto it = unsqueezed_.find(x);
    if (it != unsqueezed_.end()) return it->second;
    const std::string x4 = names_.fresh(x + "_2d");
    added_.push_back(reshaping("Unsqueeze", x, x4));
    unsqueezes_.insert(x4);
    return unsqueezed_[x] = x4;
  }

  // The element-wise ops whose result on [N, C, 1, W] is that on [N, C, W] with the height
  // axis inserted: `inputs` are the ones a lifted value may take.
  bool elementwise(const Node& n, std::vector<size_t>& inputs) const {
    if (n.outputs.size() != 1 || n.inputs.empty()) return false;
    if (layout_agnostic_unary(n)) {
      inputs = {0};
      return true;
    }
    // Per-channel constants: BatchNormalization's, and InstanceNormalization's scale and B (its
    // statistics over the width are those over height 1 x width).
    const size_t channel_inputs = is_default(n, "BatchNormalization")      ? 5
                                  : is_default(n, "InstanceNormalization") ? 3
                                                                           : 0;
    if (channel_inputs > 0 && n.inputs.size() == channel_inputs) {
      for (size_t k = 1; k < channel_inputs; ++k) {
        const Tensor* t = constant_tensor(g_, n.inputs[k]);
        if (!t || t->rank() != 1) return false;
      }
      inputs = {0};
      return true;
    }
    if ((is_default(n, "QuantizeLinear") || is_default(n, "DequantizeLinear")) && n.inputs.size() >= 2) {
      for (size_t k = 1; k < n.inputs.size(); ++k)
        if (!scalar(n.inputs[k])) return false;  // per axis: the axis would move
      inputs = {0};
      return true;
    }
    if (n.domain == "com.microsoft" && (n.op_type == "QLinearAdd" || n.op_type == "QLinearMul") &&
        (n.inputs.size() == 7 || n.inputs.size() == 8)) {
      for (size_t k = 1; k < n.inputs.size(); ++k)
        if (k != 3 && !scalar(n.inputs[k])) return false;
      inputs = {0, 3};
      return true;
    }
    const bool binary = n.domain.empty() && is_arithmetic_binary(n.op_type);
    if (!binary || n.inputs.size() != 2) return false;
    inputs = {0, 1};
    return true;
  }

  // An absent optional input or a constant of one element.
  bool scalar(const std::string& name) const {
    if (name.empty()) return true;
    const Tensor* t = constant_tensor(g_, name);
    return t && t->numel() == 1;
  }

  // A binary op's constant operand (rank <= 3) as it reads against the lifted value: with a
  // height axis of 1 inserted before its last axis (ranks 2 and 3).
  std::string lifted_constant(const std::string& name) {
    const Tensor* t = constant_tensor(g_, name);
    if (t->rank() <= 1) return name;
    Shape s = t->shape();
    s.insert(s.end() - 1, 1);
    const std::string lifted = names_.fresh(name + "_2d");
    new_initializers_.push_back({lifted, t->reshaped(s)});
    return lifted;
  }

  // Moves each Squeeze past the element-wise op that alone reads its output, while one does.
  void sink_squeezes() {
    for (bool moved = true; moved;) {
      moved = false;
      GraphIndex index(g_);
      std::unordered_set<int> touched;
      for (size_t s = 0; s < g_.nodes.size(); ++s) {
        const Node& sq = g_.nodes[s];
        if (!is_default(sq, "Squeeze") || !squeezes_.count(sq.outputs[0])) continue;
        const std::string& y = sq.outputs[0];
        if (index.use_count(y) != 1 || index.consumers(y).size() != 1) continue;
        const int c = index.consumers(y)[0];
        if (touched.count(c) || touched.count(static_cast<int>(s))) continue;
        if (try_sink(index, c, touched)) moved = true;
      }
      if (moved) erase_dead_squeezes();
    }
  }

  // Node c reads one or two lifted values through their Squeezes: it reads the 4-D values
  // instead, writes a 4-D value, and a new Squeeze gives its old output.
  bool try_sink(const GraphIndex& index, int c, std::unordered_set<int>& touched) {
    const Node& n = g_.nodes[static_cast<size_t>(c)];
    std::vector<size_t> data;
    if (!elementwise(n, data) || n.outputs[0].empty()) return false;
    std::vector<int> squeezes;
    std::vector<size_t> constants;
    std::vector<std::pair<size_t, std::string>> unsqueezed;  // operands a lifted Conv reads as 4-D too
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const bool is_data = std::find(data.begin(), data.end(), k) != data.end();
      const int p = index.producer(n.inputs[k]);
      const bool lifted =
          p >= 0 && squeezes_.count(n.inputs[k]) && is_default(g_.nodes[static_cast<size_t>(p)], "Squeeze");
      if (lifted && (!is_data || touched.count(p))) return false;
      if (lifted) {
        squeezes.push_back(p);
      } else if (auto u = unsqueezed_.find(n.inputs[k]); is_data && u != unsqueezed_.end()) {
        // A residual Add of the block's input from outside (the graph input): its Unsqueeze for
        // the block's first Conv is its 4-D form, so the chain stays lifted.
        unsqueezed.emplace_back(k, u->second);
      } else if (is_data) {
        const Tensor* t = constant_tensor(g_, n.inputs[k]);
        if (!t || t->rank() > 3) return false;
        constants.push_back(k);
      }
    }
    Node& sunk = g_.nodes[static_cast<size_t>(c)];
    if (sunk.origin.empty()) sunk.origin = sunk.describe();
    for (int p : squeezes) {
      const Node& sq = g_.nodes[static_cast<size_t>(p)];
      std::replace(sunk.inputs.begin(), sunk.inputs.end(), sq.outputs[0], sq.inputs[0]);
      // A Squeeze others read too (a residual block's input) stays for them: cancel_pairs
      // removes it once its Unsqueezes read the 4-D value.
      if (index.use_count(sq.outputs[0]) == 1) {
        dead_squeezes_.insert(sq.outputs[0]);
        touched.insert(p);
      }
    }
    for (size_t k : constants) sunk.inputs[k] = lifted_constant(sunk.inputs[k]);
    for (const auto& [k, four_d] : unsqueezed) sunk.inputs[k] = four_d;
    touched.insert(c);
    const std::string y = sunk.outputs[0];
    sunk.outputs[0] = names_.fresh(y + "_2d");
    Node sq = squeeze(sunk.outputs[0], y);
    g_.nodes.push_back(std::move(sq));  // appended: the indices above stay valid
    return true;
  }

  void erase_dead_squeezes() {
    std::vector<bool> dead(g_.nodes.size(), false);
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      dead[i] = is_default(n, "Squeeze") && dead_squeezes_.count(n.outputs[0]);
    }
    dead_squeezes_.clear();
    erase_nodes(g_, dead);
  }

  // Unsqueeze(Squeeze(v4)) is v4: readers of the Unsqueeze read v4; a Squeeze left unread goes.
  void cancel_pairs() {
    std::unordered_map<std::string, std::string> squeezed_from;  // 3-D value -> its 4-D source
    for (const Node& n : g_.nodes) {
      if (is_default(n, "Squeeze") && squeezes_.count(n.outputs[0])) squeezed_from[n.outputs[0]] = n.inputs[0];
    }
    std::unordered_map<std::string, std::string> renames;
    std::vector<bool> dead(g_.nodes.size(), false);
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      if (!is_default(n, "Unsqueeze") || !unsqueezes_.count(n.outputs[0])) continue;
      auto it = squeezed_from.find(n.inputs[0]);
      if (it == squeezed_from.end()) continue;
      renames[n.outputs[0]] = it->second;
      dead[i] = true;
    }
    if (renames.empty()) return;
    erase_nodes(g_, dead);
    replace_uses(g_, renames);
    const GraphIndex index(g_);
    dead.assign(g_.nodes.size(), false);
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      dead[i] = is_default(n, "Squeeze") && squeezes_.count(n.outputs[0]) && index.use_count(n.outputs[0]) == 0;
    }
    erase_nodes(g_, dead);
  }

  Graph& g_;
  int64_t opset_;
  NameAllocator names_;
  std::string axes_;
  std::vector<Node> added_;
  std::vector<NamedTensor> new_initializers_;
  std::unordered_map<std::string, std::string> unsqueezed_;  // 3-D input -> its Unsqueeze
  std::unordered_set<std::string> squeezes_;                 // outputs of the Squeezes made here
  std::unordered_set<std::string> unsqueezes_;               // outputs of the Unsqueezes made here
  std::unordered_set<std::string> dead_squeezes_;
};

}  // namespace

int lift_1d_convolutions(Graph& g, int64_t opset) {
  const OpRegistry& registry = OpRegistry::global();
  if (opset < 1 || !registry.resolve("", "Squeeze", opset).is_ok() || !registry.resolve("", "Unsqueeze", opset).is_ok())
    return 0;  // a selective build without them
  const int lifted = Conv1dLift(g, opset).run();
  if (lifted > 0) (void)sort_topologically(g);  // added nodes were appended
  return lifted;
}

}  // namespace layout_internal
}  // namespace xonnx
