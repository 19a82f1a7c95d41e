// Swaps an AveragePool and the 1x1 Conv next to it so that the Conv sees fewer pixels or the pool
// fewer channels. A 1x1 Conv is a linear map of each pixel's channels and an average pool a
// weighted sum of pixels with one divisor per output pixel, so the two commute (zero padding
// stays zero through a Conv without bias):
//  - Conv -> strided AveragePool without padding: pooled first, the Conv runs on the pooled map
//    (DenseNet's transitions: 1x1 Conv, then a 2x2 / stride-2 pool; the Conv does a quarter of
//    its work). Every window holds kernel-size values, so the bias averages to itself and stays
//    in the Conv.
//  - AveragePool of stride 1 keeping the map's size -> Conv to fewer channels: the Conv runs
//    first (same pixels), the pool over its fewer channels (Inception's pool branches: 3x3
//    pools over 192-2048 channels into 32-192). Padding taps count zeros, which a biased Conv
//    would not give: the Conv runs without its bias and an Add of it follows the pool.
// The sums change order, so results move by rounding only.
#include <string>
#include <vector>

#include "runtime/ir/graph_edit.h"
#include "runtime/passes/fusion_view.h"
#include "runtime/passes/pass_util.h"
#include "runtime/passes/passes.h"

namespace xonnx {
namespace passes {

namespace {

bool all_equal(const std::vector<int64_t>& values, int64_t v) {
  for (int64_t x : values)
    if (x != v) return false;
  return true;
}

std::vector<int64_t> ints_or_empty(const Node& n, const char* name) {
  const Attribute* a = n.find_attr(name);
  return a ? a->ints : std::vector<int64_t>{};
}

// Explicit padding: auto_pad absent, NOTSET or VALID (VALID: no pads at all).
bool explicit_padding(const Node& n, bool* valid) {
  const Attribute* auto_pad = n.find_attr("auto_pad");
  *valid = auto_pad && auto_pad->s == "VALID";
  return !auto_pad || auto_pad->s == "NOTSET" || *valid;
}

// The constant float W [M, C / group, 1, ...] of a Conv with 1x1 kernels (any groups), stride 1,
// no padding and a constant bias or none: a per-pixel linear map of the channels. nullptr
// otherwise.
const Tensor* pointwise_conv_weight(const Graph& g, const Node& conv) {
  if (conv.inputs.size() < 2 || conv.inputs.size() > 3 || conv.outputs.size() != 1) return nullptr;
  const Tensor* w = constant_tensor(g, conv.inputs[1]);
  if (!w || w->rank() < 3 || !dtype_is_float(w->dtype())) return nullptr;
  for (size_t d = 2; d < w->rank(); ++d)
    if (w->dim(d) != 1) return nullptr;
  if (conv.inputs.size() == 3 && !conv.inputs[2].empty() && !constant_tensor(g, conv.inputs[2])) return nullptr;
  bool valid = false;
  if (!explicit_padding(conv, &valid) || !all_equal(ints_or_empty(conv, "strides"), 1)) return nullptr;
  if (!valid && !all_equal(ints_or_empty(conv, "pads"), 0)) return nullptr;
  return w;
}

// An AveragePool over the spatial axes of the Conv of weight w, with dilations 1 and ceil_mode 0
// (every window starts and ends inside the padded map).
bool plain_pool(const Node& pool, const Tensor& w) {
  if (pool.outputs.size() != 1 || attr_int_or(pool, "ceil_mode", 0) != 0) return false;
  const std::vector<int64_t> kernel = ints_or_empty(pool, "kernel_shape");
  const std::vector<int64_t> strides = ints_or_empty(pool, "strides");
  return kernel.size() + 2 == w.rank() && (strides.empty() || strides.size() == kernel.size()) &&
         all_equal(ints_or_empty(pool, "dilations"), 1);
}

// Conv -> AveragePool with strides > 1 and no padding: the pool moves before the Conv.
bool pool_first(const Graph& g, FusionView& v, NameAllocator& names, int conv_index) {
  const Node& conv = v.node(conv_index);
  const Tensor* w = pointwise_conv_weight(g, conv);
  const int pool_index = v.sole_consumer(conv.outputs[0]);
  if (!w || !v.is(pool_index, "AveragePool")) return false;
  const Node& pool = v.node(pool_index);
  bool valid = false;
  if (!plain_pool(pool, *w) || !explicit_padding(pool, &valid)) return false;
  if (!valid && !all_equal(ints_or_empty(pool, "pads"), 0)) return false;
  int64_t stride_product = 1;
  for (int64_t s : ints_or_empty(pool, "strides")) stride_product *= s;
  if (stride_product < 2 || !v.claim({conv_index, pool_index})) return false;
  Node pooled = pool;
  pooled.inputs[0] = conv.inputs[0];
  pooled.outputs[0] = names.fresh(conv.inputs[0] + "_pooled");
  Node projected = conv;
  projected.inputs[0] = pooled.outputs[0];
  projected.outputs[0] = pool.outputs[0];
  v.replace({conv_index, pool_index}, pool_index, std::vector<Node>{std::move(pooled), std::move(projected)});
  return true;
}

// AveragePool (stride 1, output as large as its input) -> Conv to fewer channels: the Conv
// moves before the pool, its bias after it.
bool conv_first(Graph& g, FusionView& v, NameAllocator& names, int pool_index) {
  const Node& pool = v.node(pool_index);
  const int conv_index = v.sole_consumer(pool.outputs[0]);
  if (!v.is(conv_index, "Conv")) return false;
  const Node& conv = v.node(conv_index);
  const Tensor* w = pointwise_conv_weight(g, conv);
  if (!w || conv.inputs[0] != pool.outputs[0] || !plain_pool(pool, *w)) return false;
  const int64_t group = attr_int_or(conv, "group", 1);
  if (group < 1 || w->dim(0) >= w->dim(1) * group) return false;  // the pool would not get fewer channels
  // Stride 1 and pads adding up to kernel - 1 on every axis: the Conv sees as many pixels after.
  bool valid = false;
  if (!explicit_padding(pool, &valid) || valid || !all_equal(ints_or_empty(pool, "strides"), 1)) return false;
  const std::vector<int64_t> kernel = ints_or_empty(pool, "kernel_shape");
  std::vector<int64_t> pads = ints_or_empty(pool, "pads");
  if (pads.empty()) pads.assign(2 * kernel.size(), 0);
  if (pads.size() != 2 * kernel.size()) return false;
  for (size_t i = 0; i < kernel.size(); ++i)
    if (pads[i] + pads[i + kernel.size()] != kernel[i] - 1) return false;
  const bool biased = conv.inputs.size() == 3 && !conv.inputs[2].empty();
  const Tensor* bias = biased ? constant_tensor(g, conv.inputs[2]) : nullptr;
  if (biased && (!bias || bias->numel() != w->dim(0))) return false;
  if (!v.claim({pool_index, conv_index})) return false;
  Node projected = conv;
  projected.inputs.resize(2);
  projected.inputs[0] = pool.inputs[0];
  projected.outputs[0] = names.fresh(conv.outputs[0] + "_unpooled");
  Node pooled = pool;
  pooled.inputs[0] = projected.outputs[0];
  std::vector<Node> replacement;
  if (!bias) {
    pooled.outputs[0] = conv.outputs[0];
    replacement = {std::move(projected), std::move(pooled)};
  } else {
    pooled.outputs[0] = names.fresh(conv.outputs[0] + "_pooled");
    // The bias as [M, 1, ...]: it broadcasts over the pixels of [N, M, ...].
    std::vector<int64_t> shape(w->rank() - 1, 1);
    shape[0] = w->dim(0);
    const std::string b = add_initializer(g, names, conv.inputs[2] + "_channels", bias->reshaped(Shape(shape)));
    Node add = make_node("Add", "", conv.name + "_bias", {pooled.outputs[0], b}, {conv.outputs[0]});
    replacement = {std::move(projected), std::move(pooled), std::move(add)};
  }
  v.replace({pool_index, conv_index}, conv_index, std::move(replacement));
  return true;
}

}  // namespace

Result<bool> reorder_avgpool_conv(Model& model, PassContext& ctx) {
  Graph& g = model.graph;
  if (!has_default_node(g, "AveragePool")) return false;
  FusionView v(g);
  NameAllocator names(g);
  int moved_pools = 0, moved_convs = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const int n = static_cast<int>(i);
    if (v.is(n, "Conv") && pool_first(g, v, names, n)) ++moved_pools;
    if (v.is(n, "AveragePool") && conv_first(g, v, names, n)) ++moved_convs;
  }
  if (moved_pools + moved_convs == 0) return false;
  v.commit();
  ctx.note("moved " + std::to_string(moved_pools) + " strided AveragePools before their 1x1 Conv, " +
           std::to_string(moved_convs) + " 1x1 Convs to fewer channels before their AveragePool");
  return true;
}

}  // namespace passes
}  // namespace xonnx
