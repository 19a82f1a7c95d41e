// 3-D Convs and MaxPools as 2-D ones, which run on the fast kernels (in NHWC regions); the
// reference kernels ran video classifiers (R3D, MC3, R(2+1)D, S3D) at ~16x ONNX Runtime's time.
// One clip (N = 1, every dim known) goes first, whole, through lower_3d_frames.cc; what it
// leaves (a batch of clips, a symbolic N) is lowered here one op at a time:
//
// Conv, X [N, C, D, H, W], W [M, C / group, kd, kh, kw]: the kd temporal taps of an output frame
// become input channels c kd + dt, which is W's own layout read as [M, C / group kd, kh, kw] (no
// copy; each group's channels stay together, so the 2-D Conv keeps the group count):
//   Transpose(X) [N, D, C, H, W] -> Pad the frames (temporal pads) -> per tap dt a Slice of the
//   frames dt * dilation, step stride, as [N, D', C, 1, H, W] -> Concat on axis 3 -> Reshape
//   [N D', C kd, H, W] -> Conv 2-D -> Reshape [N, D', M, H', W'] -> Transpose [N, M, D', H', W'].
// MaxPool: the max over a window of frames of the max over a window of pixels, each window's
// padding ignored as before: MaxPool 2-D over X as [N, C D, H, W] (kernel kh x kw), then over
// [N, C, D, H' W'] with kernel kd x 1 -> [N, C, D', H', W']. ceil_mode applies per axis.
//
// Taken (opset >= 11: Pad and Slice with inputs): X of rank 5 whose C, D, H and W are known (N
// may be symbolic), explicit pads (auto_pad NOTSET or VALID), valid strides and dilations; a
// Conv of a constant float W (any group count: X3D's depthwise 3-D Convs too); a MaxPool with
// one output and storage_order 0.
#include <algorithm>
#include <string>
#include <vector>

#include "runtime/ir/graph_edit.h"
#include "runtime/passes/fusion_view.h"
#include "runtime/passes/lower_3d.h"
#include "runtime/passes/pass_util.h"
#include "runtime/passes/passes.h"
#include "runtime/passes/shape_inference.h"

namespace xonnx {
namespace passes {

namespace {

// The spatial attribute `name` of 3 (6 for pads) values, `fallback` when absent; false when it
// has another length.
bool spatial_ints(const Node& n, const char* name, std::vector<int64_t> fallback, std::vector<int64_t>& out) {
  const Attribute* a = n.find_attr(name);
  out = a ? a->ints : std::move(fallback);
  return (!a || a->type == AttrType::kInts) && out.size() == (std::string(name) == "pads" ? 6u : 3u);
}

// The output length of one axis, or 0 when it would be empty (ref::pool_output_size's rule:
// with ceil_mode, a last window that would start in the end padding is dropped).
int64_t out_len(int64_t in, int64_t pad_begin, int64_t pad_end, int64_t k, int64_t stride, int64_t dilation,
                bool ceil) {
  const int64_t span = in + pad_begin + pad_end - dilation * (k - 1) - 1;
  if (span < 0) return 0;
  const int64_t n = (ceil ? (span + stride - 1) / stride : span / stride) + 1;
  return ceil && (n - 1) * stride >= in + pad_begin ? n - 1 : n;
}

}  // namespace

namespace lower3d {

bool window_of(const Node& n, const ShapeFacts& facts, std::vector<int64_t> k, bool ceil, Window3d& win) {
  const std::vector<Dim>* xd = facts.dims(n.inputs[0]);
  const Attribute* auto_pad = n.find_attr("auto_pad");
  if (!xd || xd->size() != 5 || (auto_pad && auto_pad->s != "NOTSET" && auto_pad->s != "VALID")) return false;
  for (size_t a = 0; a < 5; ++a) {
    if (a > 0 && !(*xd)[a].known()) return false;
    win.n_dims[a] = (*xd)[a].known() ? (*xd)[a].value : -1;
  }
  if (!spatial_ints(n, "kernel_shape", k, win.kernel) || !spatial_ints(n, "strides", {1, 1, 1}, win.strides) ||
      !spatial_ints(n, "dilations", {1, 1, 1}, win.dilations) || !spatial_ints(n, "pads", {0, 0, 0, 0, 0, 0}, win.pads))
    return false;
  for (size_t a = 0; a < 3; ++a) {
    if (win.kernel[a] < 1 || win.strides[a] < 1 || win.dilations[a] < 1 || win.pads[a] < 0 || win.pads[a + 3] < 0)
      return false;
    win.out[a] =
        out_len(win.n_dims[a + 2], win.pads[a], win.pads[a + 3], win.kernel[a], win.strides[a], win.dilations[a], ceil);
    if (win.out[a] < 1) return false;
  }
  return true;
}

std::vector<std::string> Lowering::frame_taps(std::vector<Node>& nodes, const std::string& x, int64_t axis,
                                              int64_t rank, int64_t d, const Window3d& win, const std::string& base) {
  const int64_t k = win.kernel[0], s = win.strides[0], l = win.dilations[0], front = win.pads[0];
  const int64_t d_out = win.out[0];
  const int64_t back = std::max<int64_t>(0, (d_out - 1) * s + (k - 1) * l + 1 - (d + front));
  std::string padded = x;
  if (front > 0 || back > 0) {
    std::vector<int64_t> pads(static_cast<size_t>(2 * rank), 0);
    pads[static_cast<size_t>(axis)] = front;
    pads[static_cast<size_t>(rank + axis)] = back;
    padded = add(nodes, "Pad", {padded, ints(base + "_frame_pads", std::move(pads))}, base + "_frames_padded");
  }
  const int64_t padded_d = d + front + back;
  std::vector<std::string> taps;
  for (int64_t t = 0; t < k; ++t) {
    const int64_t start = t * l, end = start + s * (d_out - 1) + 1;
    if (start == 0 && end == padded_d && s == 1) {
      taps.push_back(padded);
      continue;
    }
    const std::string b = base + "_tap" + std::to_string(t);
    taps.push_back(add(nodes, "Slice",
                       {padded, ints(b + "_start", {start}), ints(b + "_end", {end}), ints(b + "_axis", {axis}),
                        ints(b + "_step", {s})},
                       b));
  }
  return taps;
}

}  // namespace lower3d

namespace {

using lower3d::Lowering;
using lower3d::Window3d;
using lower3d::window_of;

// The Conv's nodes, or none when it is not taken.
std::vector<Node> lower_conv(const Graph& g, const Node& conv, const ShapeFacts& facts, Lowering& low) {
  const int64_t group = attr_int_or(conv, "group", 1);
  if (conv.inputs.size() < 2 || conv.outputs.size() != 1 || group < 1) return {};
  const Tensor* w = constant_tensor(g, conv.inputs[1]);
  if (!w || w->dtype() != DataType::kFloat || w->rank() != 5 || w->dim(0) % group != 0) return {};
  const std::vector<int64_t> wk = {w->dim(2), w->dim(3), w->dim(4)};
  Window3d win;
  if (!window_of(conv, facts, wk, false, win) || win.kernel != wk || win.n_dims[1] != w->dim(1) * group) return {};
  const std::string& y = conv.outputs[0];
  const int64_t c = win.n_dims[1], d = win.n_dims[2], h = win.n_dims[3], wd = win.n_dims[4];
  const int64_t m = w->dim(0), kd = win.kernel[0], d_out = win.out[0];
  std::vector<Node> nodes;
  const std::string frames = low.add(nodes, "Transpose", {conv.inputs[0]}, y + "_frames",
                                     {ints_attribute("perm", {0, 2, 1, 3, 4})});  // [N, D, C, H, W]
  std::vector<std::string> taps = low.frame_taps(nodes, frames, 1, 5, d, win, y);
  for (size_t dt = 0; kd > 1 && dt < taps.size(); ++dt)
    taps[dt] = low.reshape(nodes, taps[dt], {-1, d_out, c, 1, h, wd}, y + "_tap" + std::to_string(dt) + "_5d");
  const std::string stacked =
      kd > 1 ? low.add(nodes, "Concat", taps, y + "_taps", {int_attribute("axis", 3)}) : taps[0];
  const std::string images = low.reshape(nodes, stacked, {-1, c * kd, h, wd}, y + "_images");
  std::vector<std::string> inputs = {
      images, low.constant(conv.inputs[1] + "_2d", w->reshaped({m, c / group * kd, wk[1], wk[2]}))};
  if (conv.inputs.size() > 2 && !conv.inputs[2].empty()) inputs.push_back(conv.inputs[2]);
  const std::string out2d = low.add(nodes, "Conv", inputs, y + "_2d",
                                    {int_attribute("group", group), ints_attribute("kernel_shape", {wk[1], wk[2]}),
                                     ints_attribute("strides", {win.strides[1], win.strides[2]}),
                                     ints_attribute("dilations", {win.dilations[1], win.dilations[2]}),
                                     ints_attribute("pads", {win.pads[1], win.pads[2], win.pads[4], win.pads[5]})});
  nodes.back().name = conv.name;
  nodes.back().origin = conv.origin.empty() ? conv.describe() : conv.origin;  // errors name the model's Conv
  const std::string out5d = low.reshape(nodes, out2d, {-1, d_out, m, win.out[1], win.out[2]}, y + "_frames_out");
  low.add(nodes, "Transpose", {out5d}, "", {ints_attribute("perm", {0, 2, 1, 3, 4})}, y);
  return nodes;
}

// The MaxPool's nodes, or none when it is not taken.
std::vector<Node> lower_max_pool(const Node& pool, const ShapeFacts& facts, Lowering& low) {
  const bool ceil = attr_int_or(pool, "ceil_mode", 0) != 0;
  Window3d win;
  if (pool.outputs.size() != 1 || attr_int_or(pool, "storage_order", 0) != 0 || !pool.find_attr("kernel_shape") ||
      !window_of(pool, facts, {}, ceil, win))
    return {};
  const std::string& y = pool.outputs[0];
  const int64_t c = win.n_dims[1], d = win.n_dims[2], h = win.n_dims[3], w = win.n_dims[4];
  const int64_t d_out = win.out[0], h_out = win.out[1], w_out = win.out[2];
  const auto attrs = [&](size_t a0, size_t a1, std::vector<int64_t> pads) {
    const auto pick = [&](const std::vector<int64_t>& v) { return std::vector<int64_t>{v[a0], v[a1]}; };
    std::vector<Attribute> out = {
        ints_attribute("kernel_shape", pick(win.kernel)), ints_attribute("strides", pick(win.strides)),
        ints_attribute("dilations", pick(win.dilations)), ints_attribute("pads", std::move(pads))};
    if (ceil) out.push_back(int_attribute("ceil_mode", 1));
    return out;
  };
  std::vector<Node> nodes;
  // Pixels: [N, C D, H, W] -> [N, C D, H', W'].
  const std::string images = low.reshape(nodes, pool.inputs[0], {-1, c * d, h, w}, y + "_images");
  const std::string pooled = low.add(nodes, "MaxPool", {images}, y + "_pixels",
                                     attrs(1, 2, {win.pads[1], win.pads[2], win.pads[4], win.pads[5]}));
  // Frames: [N, C, D, H' W'] with a kd x 1 window -> [N, C, D', H' W'].
  const std::string frames = low.reshape(nodes, pooled, {-1, c, d, h_out * w_out}, y + "_frames");
  std::vector<Attribute> temporal = attrs(0, 0, {win.pads[0], 0, win.pads[3], 0});
  temporal[0].ints[1] = temporal[1].ints[1] = temporal[2].ints[1] = 1;  // kernel, stride, dilation 1 on H' W'
  const std::string pooled_frames = low.add(nodes, "MaxPool", {frames}, y + "_frames_pooled", std::move(temporal));
  nodes.back().origin = pool.origin.empty() ? pool.describe() : pool.origin;
  low.reshape(nodes, pooled_frames, {-1, c, d_out, h_out, w_out}, "", y);
  return nodes;
}

}  // namespace

Result<bool> lower_3d(Model& model, PassContext& ctx) {
  Graph& g = model.graph;
  auto opset = model.opset_imports.find("");
  if (opset == model.opset_imports.end() || opset->second < 11) return false;
  if (!has_default_node(g, "Conv") && !has_default_node(g, "MaxPool")) return false;
  const ShapeFacts& facts = ctx.shape_facts(model);
  Lowering low(g);
  int convs = 0, pools = 0;
  // One clip (N = 1): the video net between its 3-D ops stays in frames, then the rest.
  lower3d::lower_clips_in_frames(g, facts, low, convs, pools);
  FusionView view(g);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const int at = static_cast<int>(i);
    const bool conv = view.is(at, "Conv");
    if (!conv && !view.is(at, "MaxPool")) continue;
    std::vector<Node> nodes =
        conv ? lower_conv(g, view.node(at), facts, low) : lower_max_pool(view.node(at), facts, low);
    if (nodes.empty() || !view.claim({at})) continue;
    view.replace({at}, at, std::move(nodes));
    ++(conv ? convs : pools);
  }
  if (convs + pools == 0) return false;
  view.commit();
  low.commit();
  ctx.note("lowered " + std::to_string(convs) + " 3-D Conv and " + std::to_string(pools) +
           " 3-D MaxPool into 2-D ones over frames");
  return true;
}

}  // namespace passes
}  // namespace xonnx
