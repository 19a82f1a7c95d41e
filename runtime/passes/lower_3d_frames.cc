// One clip of a video net (X [1, C, D, H, W], every dim known) held from one 3-D op to the
// next in one of two 4-D views of the same NHWC data, so that its 2-D Convs, activations,
// residual Adds and Concats share one NHWC region (the layout pass): lowered one op at a time,
// each 3-D Conv transposed its input to frames and its output back, and S3D spent 41 % of its
// time in those copies and in NHWC conversions around every Conv.
//   frames [D, C, H, W]: each frame an image; pixel windows (kh x kw Convs, pixel pools);
//   image [1, C, D, H W]: frames as rows; temporal windows (kd x 1 x 1 Convs and pools) are
//     2-D windows of kd x 1 here, with no copies. Reshape, Transpose [0, 2, 1, 3, 4], Reshape
//     switch views (an Identity of the NHWC data: layout_relabel.cc).
// A Conv with kd > 1 and a pixel window stacks its temporal taps in frames: Pad axis 0 by
// (p0, whatever the last window needs), per tap t a Slice of frames t l, t l + s, ... (l the
// dilation, s the stride), then with group 1 a Concat of the taps on channels and one 2-D Conv
// of W [M, kd C, kh, kw] (tap-major, as the Concat); with groups one Conv per tap (W[:, :, t])
// summed by Adds, the bias in the first. A MaxPool is a pixel MaxPool in frames then a frame
// MaxPool in image view.
// Between them, nodes with a lowered input run on the same view as they are: element-wise
// unary ops (kLayoutAgnostic) with scalar extra inputs, Add / Sub / Mul / Div of same-shape
// clips, scalars or per-channel constants ([1, C, 1, 1, 1] -> [C, 1, 1]), Concat on channels
// and an inference BatchNormalization. A clip enters as a Reshape (image) or Transpose
// [0, 2, 1, 3, 4] + Reshape (frames) and leaves, where anything else (or a graph output)
// reads it, the same way back.
#include <algorithm>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/ops/op_list.h"
#include "runtime/passes/lower_3d.h"

namespace xonnx {
namespace passes {
namespace lower3d {

namespace {

using Dims5 = std::vector<int64_t>;

enum class Kind { kNone, kConv, kMaxPool, kUnary, kBinary, kConcat, kBatchNorm };
enum Form { kFrames = 0, kImage = 1 };  // [D, C, H, W] / [1, C, D, H W]

// A clip [1, C, D, H, W] (dims) in one of its views.
struct View {
  std::string name;
  Form form = kFrames;
  Dims5 dims;
};

const std::vector<int64_t> kSwapCD = {0, 2, 1, 3, 4};

class FramesPass {
 public:
  FramesPass(Graph& g, const ShapeFacts& facts, Lowering& low) : g_(g), facts_(facts), low_(low) {}

  bool run(int& convs, int& pools) {
    decide();
    int lowered_convs = 0, lowered_pools = 0;
    for (Kind k : kind_) {
      lowered_convs += k == Kind::kConv;
      lowered_pools += k == Kind::kMaxPool;
    }
    if (lowered_convs + lowered_pools == 0) return false;
    emit();
    convs += lowered_convs;
    pools += lowered_pools;
    return true;
  }

 private:
  // The dims of a clip [1, C, D, H, W], all known; empty otherwise.
  Dims5 clip(const std::string& v) const {
    const std::vector<Dim>* d = v.empty() ? nullptr : facts_.dims(v);
    if (!d || d->size() != 5) return {};
    Dims5 out;
    for (const Dim& x : *d) {
      if (!x.known() || x.value < 1) return {};
      out.push_back(x.value);
    }
    return out[0] == 1 ? out : Dims5{};
  }
  bool float_clip(const std::string& v) const {
    const TypeInfo* t = facts_.type(v);
    return t && t->elem_type == DataType::kFloat && !clip(v).empty();
  }
  bool lowered(const std::string& v) const { return lowered_.count(v) != 0; }

  // A constant that broadcasts the same against [1, C, D, H, W] and, reshaped, against
  // [D, C, H, W]: a scalar, or one value per channel.
  bool frames_constant(const std::string& v, int64_t channels, Shape& shape) const {
    const Tensor* t = constant_tensor(g_, v);
    if (!t || t->rank() > 5) return false;
    if (t->numel() == 1) {
      shape = {};
      return true;
    }
    Shape s(5 - t->rank(), 1);
    s.insert(s.end(), t->shape().begin(), t->shape().end());
    if (s[1] != channels || s[0] != 1 || s[2] != 1 || s[3] != 1 || s[4] != 1) return false;
    shape = {channels, 1, 1};
    return true;
  }

  Kind classify(const Node& n) const {
    if (!n.domain.empty() && !op_has_trait(n.domain, n.op_type, kLayoutAgnostic)) return Kind::kNone;
    if (n.outputs.size() != 1 || n.inputs.empty() || clip(n.outputs[0]).empty()) return Kind::kNone;
    const std::string& op = n.op_type;
    if (n.domain.empty() && op == "Conv") return conv_taken(n) ? Kind::kConv : Kind::kNone;
    if (n.domain.empty() && op == "MaxPool") return max_pool_taken(n) ? Kind::kMaxPool : Kind::kNone;
    const Dims5 y = clip(n.outputs[0]);
    if (op_has_trait(n.domain, op, kLayoutAgnostic)) {
      if (!lowered(n.inputs[0]) || clip(n.inputs[0]) != y) return Kind::kNone;
      for (size_t k = 1; k < n.inputs.size(); ++k) {
        const Tensor* t = n.inputs[k].empty() ? nullptr : constant_tensor(g_, n.inputs[k]);
        if (!n.inputs[k].empty() && (!t || t->rank() != 0)) return Kind::kNone;  // Clip's bounds
      }
      return Kind::kUnary;
    }
    if (is_arithmetic_binary(op) || op == "Concat") {
      if (op != "Concat" && n.inputs.size() != 2) return Kind::kNone;
      if (op == "Concat") {
        const int64_t axis = attr_int_or(n, "axis", 0);
        if (axis != 1 && axis != -4) return Kind::kNone;
      }
      bool framed = false;
      for (const std::string& in : n.inputs) {
        Shape s;
        const Dims5 x = clip(in);
        if (op == "Concat" ? x.empty() || x[2] != y[2] || x[3] != y[3] || x[4] != y[4] : x != y) {
          if (op == "Concat" || !frames_constant(in, y[1], s)) return Kind::kNone;
        }
        framed |= lowered(in);
      }
      return framed ? (op == "Concat" ? Kind::kConcat : Kind::kBinary) : Kind::kNone;
    }
    if (op == "BatchNormalization" && n.inputs.size() == 5 && lowered(n.inputs[0]) &&
        attr_int_or(n, "training_mode", 0) == 0) {
      for (size_t k = 1; k < 5; ++k) {
        const Tensor* t = constant_tensor(g_, n.inputs[k]);
        if (!t || t->rank() != 1) return Kind::kNone;
      }
      return Kind::kBatchNorm;
    }
    return Kind::kNone;
  }

  bool conv_taken(const Node& conv) const {
    const int64_t group = attr_int_or(conv, "group", 1);
    if (conv.inputs.size() < 2 || group < 1 || !float_clip(conv.inputs[0])) return false;
    const Tensor* w = constant_tensor(g_, conv.inputs[1]);
    if (!w || w->dtype() != DataType::kFloat || w->rank() != 5 || w->dim(0) % group != 0) return false;
    Window3d win;
    const std::vector<int64_t> wk = {w->dim(2), w->dim(3), w->dim(4)};
    return window_of(conv, facts_, wk, false, win) && win.kernel == wk && win.n_dims[1] == w->dim(1) * group &&
           clip(conv.outputs[0]) == Dims5{1, w->dim(0), win.out[0], win.out[1], win.out[2]};
  }

  bool max_pool_taken(const Node& pool) const {
    Window3d win;
    return float_clip(pool.inputs[0]) && attr_int_or(pool, "storage_order", 0) == 0 && pool.find_attr("kernel_shape") &&
           window_of(pool, facts_, {}, attr_int_or(pool, "ceil_mode", 0) != 0, win) &&
           (pixel_window(win) || frame_window(win)) &&
           clip(pool.outputs[0]) == Dims5{1, win.n_dims[1], win.out[0], win.out[1], win.out[2]};
  }

  // Which nodes run on frames (in node order: a node's frames inputs come from nodes before
  // it) and which of their outputs must also exist as clips.
  void decide() {
    kind_.assign(g_.nodes.size(), Kind::kNone);
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      kind_[i] = classify(g_.nodes[i]);
      if (kind_[i] != Kind::kNone) lowered_.insert(g_.nodes[i].outputs[0]);
    }
    for (const ValueInfo& v : g_.outputs) clip_read_.insert(v.name);
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      for_each_subgraph(n, [&](const Graph& sub) {
        for (const std::string& v : outer_scope_reads(sub)) clip_read_.insert(v);
      });
      for (const std::string& in : n.inputs) {
        if (kind_[i] == Kind::kNone) clip_read_.insert(in);
      }
    }
  }

  static bool pixel_window(const Window3d& w) {
    return w.kernel[1] * w.kernel[2] > 1 || w.strides[1] * w.strides[2] > 1 ||
           w.pads[1] + w.pads[2] + w.pads[4] + w.pads[5] > 0;
  }
  static bool frame_window(const Window3d& w) {
    return w.kernel[0] > 1 || w.strides[0] > 1 || w.pads[0] + w.pads[3] > 0;
  }

  // 2-D window attributes: the pixel window (frames view, `temporal` false) or the frame
  // window as kd x 1 (image view); a group for a Conv (group > 0), ceil_mode for a pool.
  static std::vector<Attribute> window_2d(const Window3d& w, bool temporal, int64_t group, bool ceil) {
    const auto pick = [&](const std::vector<int64_t>& v, int64_t unit) {
      return temporal ? std::vector<int64_t>{v[0], unit} : std::vector<int64_t>{v[1], v[2]};
    };
    std::vector<Attribute> a = {ints_attribute("kernel_shape", pick(w.kernel, 1)),
                                ints_attribute("strides", pick(w.strides, 1))};
    a.push_back(ints_attribute("pads", temporal ? std::vector<int64_t>{w.pads[0], 0, w.pads[3], 0}
                                                : std::vector<int64_t>{w.pads[1], w.pads[2], w.pads[4], w.pads[5]}));
    const std::vector<int64_t> dilations = pick(w.dilations, 1);
    if (dilations != std::vector<int64_t>{1, 1}) a.push_back(ints_attribute("dilations", dilations));
    if (group > 0) a.push_back(int_attribute("group", group));
    if (ceil) a.push_back(int_attribute("ceil_mode", 1));
    return a;
  }

  bool has_view(const std::string& v, Form form) const { return views_[form].count(v) != 0; }

  // The other view of `x`: Reshape to 5-D, Transpose [0, 2, 1, 3, 4], Reshape.
  View switch_view(const View& x, std::vector<Node>& out) {
    const Dims5& d = x.dims;
    const bool to_image = x.form == kFrames;
    const std::string base = x.name + (to_image ? "_image" : "_frames");
    const std::string five = low_.reshape(out, x.name, to_image ? Dims5{1, d[2], d[1], d[3], d[4]} : d, base + "_5d");
    const std::string t = low_.add(out, "Transpose", {five}, base + "_swapped", {ints_attribute("perm", kSwapCD)});
    if (to_image) return {low_.reshape(out, t, {1, d[1], d[2], d[3] * d[4]}, base), kImage, d};
    return {low_.reshape(out, t, {d[2], d[1], d[3], d[4]}, base), kFrames, d};
  }
  View as(const View& x, Form form, std::vector<Node>& out) { return x.form == form ? x : switch_view(x, out); }

  // The clip `v` in `form`: a view made before, the other one switched, or an entry.
  View view_of(const std::string& v, Form form, std::vector<Node>& out) {
    const Dims5 d = clip(v);
    auto it = views_[form].find(v);
    if (it != views_[form].end()) return {it->second, form, d};
    View made;
    auto other = views_[1 - form].find(v);
    if (other != views_[1 - form].end()) {
      made = switch_view({other->second, static_cast<Form>(1 - form), d}, out);
    } else if (form == kImage) {
      clip_read_.insert(v);  // read as a clip: a producer later in node order leaves it too
      made = {low_.reshape(out, v, {1, d[1], d[2], d[3] * d[4]}, v + "_image"), kImage, d};
    } else {
      clip_read_.insert(v);
      const std::string t = low_.add(out, "Transpose", {v}, v + "_swapped", {ints_attribute("perm", kSwapCD)});
      made = {low_.reshape(out, t, {d[2], d[1], d[3], d[4]}, v + "_frames"), kFrames, d};
    }
    views_[form][v] = made.name;
    return made;
  }
  // The view a lowered `v` was made in (frames for a clip from outside).
  Form form_of(const std::string& v) const {
    auto it = produced_form_.find(v);
    return it != produced_form_.end() ? it->second : kFrames;
  }

  // W [M, C / group, kd, kh, kw] as 2-D weights: tap `t`'s [M, C / group, kh, kw], or every tap
  // (t < 0) as [M, kd C, kh, kw], tap-major as the Concat of the taps. Made from W row by row
  // when read (Storage::derived): the kernels pack it, and no permuted copy of R3D's 133 MB
  // stays resident beside the packed weights.
  static Tensor weights_2d(const Tensor& w, int64_t t) {
    const int64_t m = w.dim(0), c = w.dim(1), kd = w.dim(2), hw = w.dim(3) * w.dim(4);
    const int64_t taps = t < 0 ? kd : 1;
    const size_t in_row = static_cast<size_t>(c * kd * hw), out_row = static_cast<size_t>(taps * c * hw);
    auto fill = [w, t, c, kd, hw, taps, in_row, out_row](size_t offset, size_t n, void* dst) {
      std::vector<float> in(in_row), out(out_row);
      char* to = static_cast<char*>(dst);
      const size_t row_bytes = out_row * sizeof(float);
      for (size_t at = offset; at < offset + n;) {
        const size_t o = at / row_bytes, skip = at - o * row_bytes, len = std::min(row_bytes - skip, offset + n - at);
        w.read_bytes(o * in_row * sizeof(float), in_row * sizeof(float), in.data());
        for (int64_t tap = 0; tap < taps; ++tap) {
          for (int64_t ci = 0; ci < c; ++ci) {
            const float* from = in.data() + (ci * kd + (t < 0 ? tap : t)) * hw;
            std::copy(from, from + hw, out.data() + (tap * c + ci) * hw);
          }
        }
        std::memcpy(to + (at - offset), reinterpret_cast<const char*>(out.data()) + skip, len);
        at += len;
      }
    };
    return Tensor(DataType::kFloat, {m, taps * c, w.dim(3), w.dim(4)},
                  Storage::derived(static_cast<size_t>(m) * out_row * sizeof(float), std::move(fill), w.storage()));
  }

  View lower_conv(const Node& conv, const std::string& y, std::vector<Node>& out) {
    const Tensor& w = *constant_tensor(g_, conv.inputs[1]);
    const int64_t group = attr_int_or(conv, "group", 1), m = w.dim(0), kd = w.dim(2);
    Window3d win;
    window_of(conv, facts_, {kd, w.dim(3), w.dim(4)}, false, win);
    const Dims5 yd = clip(y);
    const std::string bias = conv.inputs.size() > 2 ? conv.inputs[2] : "";
    const auto conv_2d = [&](const std::string& in, Tensor weights, bool with_bias, const std::string& name,
                             bool temporal) {
      std::vector<std::string> inputs = {in, low_.constant(conv.inputs[1] + "_2d", std::move(weights))};
      if (with_bias && !bias.empty()) inputs.push_back(bias);
      return low_.add(out, "Conv", std::move(inputs), name, window_2d(win, temporal, group, false));
    };
    const std::string& x = conv.inputs[0];
    if (!pixel_window(win) && (frame_window(win) || !has_view(x, kFrames) || has_view(x, kImage))) {
      // kd x 1 x 1 (and 1 x 1 x 1 where the input has its image view): no copies in image view
      const View in = view_of(x, kImage, out);
      return {conv_2d(in.name, w.reshaped({m, w.dim(1), kd, 1}), true, y + "_image", true), kImage, yd};
    }
    const View in = view_of(x, kFrames, out);
    const std::vector<std::string> tap = low_.frame_taps(out, in.name, 0, 4, in.dims[2], win, y);
    if (kd == 1)
      return {conv_2d(tap[0], w.reshaped({m, w.dim(1), w.dim(3), w.dim(4)}), true, y + "_frames", false), kFrames, yd};
    if (group == 1) {
      const std::string stacked = low_.add(out, "Concat", tap, y + "_taps", {int_attribute("axis", 1)});
      return {conv_2d(stacked, weights_2d(w, -1), true, y + "_frames", false), kFrames, yd};
    }
    // Each group's channels of every tap would interleave: one Conv per tap, summed.
    std::string sum;
    for (int64_t t = 0; t < kd; ++t) {
      const std::string part =
          conv_2d(tap[t], weights_2d(w, t), t == 0, y + "_tap" + std::to_string(t) + "_conv", false);
      sum = t == 0 ? part : low_.add(out, "Add", {sum, part}, y + "_sum" + std::to_string(t));
    }
    return {sum, kFrames, yd};
  }

  View lower_max_pool(const Node& pool, const std::string& y, std::vector<Node>& out) {
    const bool ceil = attr_int_or(pool, "ceil_mode", 0) != 0;
    Window3d win;
    window_of(pool, facts_, {}, ceil, win);
    const Dims5 yd = clip(y);
    View x = view_of(pool.inputs[0], pixel_window(win) ? kFrames : kImage, out);
    if (pixel_window(win)) {
      const Dims5 pixels = {1, yd[1], x.dims[2], yd[3], yd[4]};
      x = {low_.add(out, "MaxPool", {x.name}, y + "_pixels", window_2d(win, false, 0, ceil)), kFrames, pixels};
    }
    if (!frame_window(win)) return x;
    x = as(x, kImage, out);
    return {low_.add(out, "MaxPool", {x.name}, y + "_image", window_2d(win, true, 0, ceil)), kImage, yd};
  }

  View lower_other(const Node& n, Kind kind, std::vector<Node>& out) {
    Node copy = n;
    const Dims5 yd = clip(n.outputs[0]);
    Form form = kFrames;
    for (const std::string& in : n.inputs) {
      if (lowered(in)) {
        form = form_of(in);
        break;
      }
    }
    for (size_t k = 0; k < copy.inputs.size(); ++k) {
      std::string& in = copy.inputs[k];
      if (in.empty() || (kind != Kind::kConcat && kind != Kind::kBinary && k > 0)) continue;
      Shape s;
      if (kind == Kind::kBinary && clip(in) != yd && frames_constant(in, yd[1], s)) {
        in = low_.constant(in + "_per_channel", constant_tensor(g_, in)->reshaped(s));
      } else {
        in = view_of(in, form, out).name;
      }
    }
    for (Attribute& a : copy.attributes) {
      if (a.name == "axis") a.i = 1;  // a Concat's channels, axis 1 in both views
    }
    copy.outputs = {low_.fresh(n.outputs[0] + (form == kFrames ? "_frames" : "_image"))};
    out.push_back(std::move(copy));
    return {out.back().outputs[0], form, yd};
  }

  void emit() {
    std::vector<Node> nodes;
    nodes.reserve(g_.nodes.size() * 2);
    std::unordered_map<std::string, std::string> clip_of;  // a lowered node's output -> the clip it is
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      if (kind_[i] == Kind::kNone) {
        nodes.push_back(n);
        continue;
      }
      const std::string& y = n.outputs[0];
      const View v = kind_[i] == Kind::kConv      ? lower_conv(n, y, nodes)
                     : kind_[i] == Kind::kMaxPool ? lower_max_pool(n, y, nodes)
                                                  : lower_other(n, kind_[i], nodes);
      Node& last = nodes.back();
      last.name = n.name;
      if (last.origin.empty())
        last.origin = n.origin.empty() ? n.describe() : n.origin;  // errors name the model's node
      views_[v.form][y] = v.name;
      produced_form_[y] = v.form;
      clip_of[v.name] = y;
    }
    // Clips leave right after their producer, where something else reads them.
    std::vector<Node> with_exits;
    with_exits.reserve(nodes.size() + 16);
    for (Node& n : nodes) {
      with_exits.push_back(std::move(n));
      const std::vector<std::string>& outs = with_exits.back().outputs;
      auto it = outs.empty() ? clip_of.end() : clip_of.find(outs[0]);
      if (it == clip_of.end() || !clip_read_.count(it->second)) continue;
      const std::string view = outs[0], y = it->second;
      const Dims5 d = clip(y);
      if (produced_form_.at(y) == kImage) {
        low_.reshape(with_exits, view, d, "", y);
      } else {
        const std::string r = low_.reshape(with_exits, view, {1, d[2], d[1], d[3], d[4]}, y + "_clip");
        low_.add(with_exits, "Transpose", {r}, "", {ints_attribute("perm", kSwapCD)}, y);
      }
    }
    g_.nodes = std::move(with_exits);
  }

  Graph& g_;
  const ShapeFacts& facts_;
  Lowering& low_;
  std::vector<Kind> kind_;
  std::set<std::string> lowered_;                          // clips a lowered node makes
  std::set<std::string> clip_read_;                        // clips read as such: graph outputs, kept nodes, subgraphs
  std::unordered_map<std::string, std::string> views_[2];  // clip -> its value in frames / image view
  std::unordered_map<std::string, Form> produced_form_;    // lowered clip -> the view it was made in
};

}  // namespace

bool lower_clips_in_frames(Graph& g, const ShapeFacts& facts, Lowering& low, int& convs, int& pools) {
  return FramesPass(g, facts, low).run(convs, pools);
}

}  // namespace lower3d
}  // namespace passes
}  // namespace xonnx
