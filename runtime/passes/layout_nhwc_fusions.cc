// The layout pass's rewrites for the own kernels (NhwcLayoutOptions, layout_nhwc.h): each
// merges nodes the own AVX-512 kernels run as one, where memory traffic would otherwise
// dominate. Each merged op has a reference twin (runtime/ops/ref/nhwc.cc).
#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/ops/internal_ops.h"
#include "runtime/passes/layout_nhwc_pass.h"
#include "runtime/passes/pass_util.h"

namespace xonnx {
namespace layout_internal {
namespace {

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

// A Conv the depthwise layer runs (fdw_layer.h; its groups: fdw_group_supported, which this
// layer may not include): depthwise (W [M, 1, kh, kw], group M), or groups of G = 4, 8 or 16
// input and as many output channels (ResNeXt's and RegNet's grouped 3x3 layers: W [M, G, kh,
// kw], group M / G).
bool is_depthwise_layer_conv(const Node& n, const Tensor* w) {
  const Attribute* group = n.find_attr("group");
  if (!w || w->rank() != 4 || !group || group->i < 2) return false;
  const int64_t g = w->dim(1);  // no product: a file's group may be near 2^63
  return (g == 1 || g == 4 || g == 8 || g == 16) && w->dim(0) % g == 0 && group->i == w->dim(0) / g;
}

// A depthwise Conv: W [M, 1, kh, kw] with group M.
bool is_depthwise_conv(const Node& n, const Tensor* w) { return is_depthwise_layer_conv(n, w) && w->dim(1) == 1; }

// A Conv over an image (W [M, C <= 4, kh, kw > 1], group 1, dilations 1): the own kernel's
// zero-padded copy with merged kernel rows.
bool is_image_conv(const Node& n, const Tensor* w) {
  if (n.op_type != "Conv" || !n.domain.empty()) return false;
  const Attribute* group = n.find_attr("group");
  const Attribute* dilations = n.find_attr("dilations");
  return w && w->rank() == 4 && w->dim(1) <= 4 && w->dim(3) > 1 && (!group || group->i == 1) &&
         (!dilations || std::all_of(dilations->ints.begin(), dilations->ints.end(), [](int64_t d) { return d == 1; }));
}

// Copies of `from` named prefix + name, appended to `to` (a merged node's part).
void append_prefixed(const std::vector<Attribute>& from, const std::string& prefix, std::vector<Attribute>& to) {
  for (Attribute a : from) {
    a.name = prefix + a.name;
    to.push_back(std::move(a));
  }
}

}  // namespace

void NhwcPass::merge_for_own_kernels(const std::vector<size_t>& order, NhwcLayoutStats& stats) {
  if (options_.fuse_pointwise_depthwise) stats.pointwise_depthwise = fuse_pointwise_depthwise(order);
  if (options_.nchw_input_conv) stats.nchw_input = read_images_in_nchw();
  if (options_.fuse_concat) stats.concat = fuse_concats(order);
  if (options_.fuse_stem_pool) stats.stem_pool = fuse_stem_pools(order);                // after nchw_input_ is known
  if (options_.fuse_stem_depthwise) stats.stem_depthwise = fuse_stem_depthwise(order);  // as well
  if (options_.fuse_norm_conv) stats.norm_conv = fuse_norm_convs(order);                // after the Concats
  if (options_.fuse_residual_add) stats.residual = fuse_residual_adds(order);           // Convs no other merge took
}

// Node i, already renamed for the region as `n`, with what was merged into it:
//  - a depthwise Conv's 1x1 Conv: inputs X, W_pw, B_pw, W_dw, B_dw; the 1x1 Conv's fused range /
//    activation as pointwise_*;
//  - an image's Conv: reads the NCHW value;
//  - a Concat: ConcatConv (part 0, W, B or "", parts 1..), ConcatMaxPool (the parts) or
//    ConcatBatchNorm (part 0, scale, B, mean, var, parts 1..);
//  - an image's Conv into its MaxPool: ConvMaxPool (X, W, B; the pool's attributes as pool_*);
//  - an image's Conv into its depthwise Conv: StemDepthwiseConv (X, W, B, W_dw, B_dw; the
//    image Conv's attributes, with its fused range / activation, as stem_*);
//  - a BatchNormalization (or ConcatBatchNorm) into its 1x1 Conv: BatchNormConv (part 0, scale,
//    B, mean, var, W, B_conv or "", parts 1..; the BatchNorm's attributes, with its fused range,
//    as norm_*).
// (A residual Add is rewritten in place by fuse_residual_adds: it needs nothing here.)
void NhwcPass::rewrite_merged(size_t i, Node& n, const std::unordered_map<std::string, std::string>& nhwc) const {
  auto pointwise = pointwise_of_.find(i);
  if (pointwise != pointwise_of_.end()) {
    const Node& pw = g_.nodes[pointwise->second];
    const Node depthwise = n;
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
  }
  if (nchw_input_.count(i)) n.op_type = kConvNchwInputOp;
  auto concat = concat_of_.find(i);
  if (concat != concat_of_.end()) {
    const std::vector<std::string>& parts = g_.nodes[concat->second].inputs;
    const bool conv = n.op_type == "Conv", batch_norm = n.op_type == "BatchNormalization";
    n.op_type = conv ? kConcatConvOp : batch_norm ? kConcatBatchNormOp : kConcatMaxPoolOp;
    n.inputs.resize(conv ? 3 : batch_norm ? 5 : 1);
    n.inputs[0] = nhwc.at(parts[0]);
    for (size_t k = 1; k < parts.size(); ++k) n.inputs.push_back(nhwc.at(parts[k]));
  }
  auto stem = stem_of_.find(i);
  if (stem != stem_of_.end()) {
    const std::vector<Attribute> pool = std::move(n.attributes);
    n.attributes = g_.nodes[stem->second].attributes;  // with its fused output range / activation
    take_image_conv(stem->second, nhwc, kConvMaxPoolOp, n);
    append_prefixed(pool, "pool_", n.attributes);
  }
  auto norm = norm_of_.find(i);
  if (norm != norm_of_.end()) {
    const Node& bn = g_.nodes[norm->second];
    auto concat = concat_of_.find(norm->second);
    std::vector<std::string> parts = {bn.inputs[0]};
    if (concat != concat_of_.end()) parts = g_.nodes[concat->second].inputs;
    n.name = bn.name + "+" + n.name;
    n.op_type = kBatchNormConvOp;
    n.inputs = {nhwc.at(parts[0]),
                bn.inputs[1],
                bn.inputs[2],
                bn.inputs[3],
                bn.inputs[4],
                n.inputs[1],
                n.inputs.size() > 2 ? n.inputs[2] : std::string()};
    for (size_t k = 1; k < parts.size(); ++k) n.inputs.push_back(nhwc.at(parts[k]));
    append_prefixed(bn.attributes, "norm_", n.attributes);
  }
  auto stem_dw = stem_dw_of_.find(i);
  if (stem_dw != stem_dw_of_.end()) {
    const std::vector<std::string> depthwise = n.inputs;
    take_image_conv(stem_dw->second, nhwc, kStemDepthwiseOp, n);
    n.inputs.resize(3);  // X, W, B ("" when absent), then W_dw, B_dw
    n.inputs.insert(n.inputs.end(), depthwise.begin() + 1, depthwise.end());
    while (n.inputs.back().empty()) n.inputs.pop_back();
    append_prefixed(g_.nodes[stem_dw->second].attributes, "stem_", n.attributes);
  }
}

// Node n (renamed for the region) as `op` with the image Conv c merged into it: named after
// both, c's inputs X (still NCHW, or the region's value), W and B (when present), and
// nchw_input = 1 among n's attributes when X is NCHW.
void NhwcPass::take_image_conv(size_t c, const std::unordered_map<std::string, std::string>& nhwc, const char* op,
                               Node& n) const {
  const Node& conv = g_.nodes[c];
  const bool nchw = nchw_input_.count(c) != 0;  // else X entered the region renamed
  n.name = conv.name + "+" + n.name;
  n.op_type = op;
  n.inputs = {nchw ? conv.inputs[0] : nhwc.at(conv.inputs[0]), constant_root(conv.inputs[1])};
  if (conv.inputs.size() > 2 && !conv.inputs[2].empty()) n.inputs.push_back(constant_root(conv.inputs[2]));
  if (nchw) n.attributes.push_back(int_attribute("nchw_input", 1));
}

// A 1x1 Conv whose output (after its fused activation) only a depthwise Conv, or a grouped
// one the depthwise layer runs, reads is merged into it
// (runtime/ops/optimized/conv_pointwise_depthwise.cc). Returns how many.
int NhwcPass::fuse_pointwise_depthwise(const std::vector<size_t>& order) {
  int merged = 0;
  for (size_t d : order) {
    const Node& dw = g_.nodes[d];
    if (role_[d] != Role::kNhwcOp || fused_away_[d] || dw.op_type != "Conv" || !dw.domain.empty()) continue;
    const Tensor* dw_w = conv_weight(dw);
    if (!is_depthwise_layer_conv(dw, dw_w)) continue;
    const std::string& mid = dw.inputs[0];
    auto p = producer_.find(mid);
    if (p == producer_.end() || graph_outputs_.count(mid) || subgraph_reads_.count(mid)) continue;
    const size_t pw_index = p->second;
    const Node& pw = g_.nodes[pw_index];
    if (role_[pw_index] != Role::kNhwcOp || fused_away_[pw_index] || pw.op_type != "Conv" || !pw.domain.empty() ||
        pw.outputs[0] != mid)
      continue;
    const Tensor* w = conv_weight(pw);
    // Input rows 4 KB apart (C a multiple of 1024) alias in L1: the plain Conv reads copies of
    // them (fconv.h, fconv_rows_alias), the merged expansion does not (ResNeXt-50's 14 x 14
    // blocks, 1024 -> 512 -> groups of 16: 13 % slower merged).
    if (!is_pointwise_conv(pw, w) || w->dim(0) != dw_w->dim(0) || w->dim(1) % 1024 == 0) continue;
    auto readers = consumers_.find(mid);
    if (readers == consumers_.end() || readers->second.size() != 1) continue;
    pointwise_of_[d] = pw_index;
    merge_into_reader(pw_index);
    ++merged;
  }
  return merged;
}

// An inference BatchNormalization (with its fused Relu; a ConcatBatchNorm too) whose output
// only a float 1x1 Conv reads is merged into that Conv (BatchNormConv,
// runtime/ops/optimized/conv_batch_norm.cc): DenseNet's pre-activation layers, whose normalized
// maps (up to 1024 channels) were written whole and read back from L3. Returns how many.
int NhwcPass::fuse_norm_convs(const std::vector<size_t>& order) {
  int merged = 0;
  for (size_t c : order) {
    const Node& conv = g_.nodes[c];
    if (role_[c] != Role::kNhwcOp || fused_away_[c] || conv.op_type != "Conv" || !conv.domain.empty() ||
        pointwise_of_.count(c) || concat_of_.count(c) || nchw_input_.count(c))
      continue;
    const Tensor* w = conv_weight(conv);
    if (!is_pointwise_conv(conv, w) || w->dtype() != DataType::kFloat) continue;
    const std::string& in = conv.inputs[0];
    auto p = producer_.find(in);
    if (p == producer_.end() || sole_reader(in) != static_cast<int>(c)) continue;
    const size_t b = p->second;
    const Node& bn = g_.nodes[b];
    if (role_[b] != Role::kNhwcOp || fused_away_[b] || bn.op_type != "BatchNormalization" || !bn.domain.empty() ||
        bn.outputs[0] != in || known_non_float(bn.inputs[0]))
      continue;
    norm_of_[c] = b;
    merge_into_reader(b);
    ++merged;
  }
  return merged;
}

// Channels of a region value, or 0 when unknown: a Conv's (its W's M), followed back through
// the ops that keep their input's channels (pools, BatchNorms, element-wise ops) and into the
// parts of a channel Split of constant sizes (YOLOv8's C2f concatenates its Split's parts and
// its bottlenecks' sums). The kernels check the shapes they get; this only decides a fusion.
int64_t NhwcPass::region_channels(const std::string& value, int depth) const {
  constexpr int kMaxWalk = 16;
  auto p = producer_.find(value);
  if (depth > kMaxWalk || p == producer_.end() || role_[p->second] == Role::kNone) return 0;
  const Node& n = g_.nodes[p->second];
  if (const Tensor* w = conv_weight(n)) return n.outputs[0] == value && w->rank() == 4 ? w->dim(0) : 0;
  if (is_default(n, "Split")) {
    const Attribute* axis = attr_of(n, "axis", AttrType::kInt);
    const Attribute* split = attr_of(n, "split", AttrType::kInts);  // before opset 13
    std::vector<int64_t> sizes;
    if (n.inputs.size() == 2) {
      if (!constant_ints(n.inputs[1], sizes)) return 0;
    } else if (split) {
      sizes = split->ints;
    }
    if (!axis || (axis->i != 1 && axis->i != -3) || sizes.size() != n.outputs.size()) return 0;
    for (size_t k = 0; k < sizes.size(); ++k)
      if (n.outputs[k] == value) return std::max<int64_t>(0, sizes[k]);
    return 0;
  }
  if (n.outputs.size() != 1 || n.outputs[0] != value || n.inputs.empty()) return 0;
  const bool keeps_channels = n.op_type == "MaxPool" || n.op_type == "AveragePool" ||
                              n.op_type == "BatchNormalization" || layout_agnostic_unary(n);
  if (keeps_channels) return region_channels(n.inputs[0], depth + 1);
  if (!n.domain.empty() || !is_arithmetic_binary(n.op_type)) return 0;
  int64_t c = 0;  // every region operand's, the same; constants of one value or one per channel
  for (const std::string& in : n.inputs) {
    if (!is_region(in)) continue;
    const int64_t k = region_channels(in, depth + 1);
    if (k <= 0 || (c > 0 && k != c)) return 0;
    c = k;
  }
  for (const std::string& in : n.inputs) {
    if (is_region(in)) continue;
    const Tensor* t = constant(in);
    if (!t || (t->numel() != 1 && t->numel() != c)) return 0;
  }
  return c;
}

// A channel Concat of region values of known channels (region_channels) read only by a 1x1 Conv
// (the parts of equal channels) or by a MaxPool, or a channel Concat read only by an inference
// BatchNormalization, is merged into that node (ConcatConv, runtime/ops/optimized/conv.cc; ConcatMaxPool, pool.cc;
// ConcatBatchNorm, batch_norm.cc), which reads the parts where they are: the concatenation is
// never written. The Conv reads each part as one tap of its channels; the pool and the
// BatchNorm write each part into its channels of the output. SqueezeNet's fire modules end so;
// each DenseNet layer starts so (its BatchNorm over all earlier layers' outputs). Returns how many.
int NhwcPass::fuse_concats(const std::vector<size_t>& order) {
  constexpr size_t kMaxParts = 16;  // ConcatConv's and ConcatMaxPool's kernels hold this many
  int merged = 0;
  for (size_t c : order) {
    const Node& concat = g_.nodes[c];
    if (role_[c] != Role::kAgnostic || fused_away_[c] || concat.op_type != "Concat" || !concat.domain.empty()) continue;
    const std::string& out = concat.outputs[0];
    const int only = sole_reader(out);
    if (only < 0 || concat.inputs.size() < 2) continue;
    const size_t j = static_cast<size_t>(only);
    const Node& reader = g_.nodes[j];
    if (role_[j] != Role::kNhwcOp || fused_away_[j] || !reader.domain.empty() || reader.inputs[0] != out ||
        pointwise_of_.count(j) || nchw_input_.count(j))
      continue;
    const auto reader_takes_parts = [&] {
      if (reader.op_type == "BatchNormalization")  // its kernel takes any number of parts, of any channels
        return reader.outputs.size() == 1 && reader.inputs.size() == 5;
      if (concat.inputs.size() > kMaxParts) return false;
      // Parts of known channels (a float Conv's input: float tensors).
      const int64_t part = region_channels(concat.inputs[0]);
      bool equal = part > 0, known = true;
      for (const std::string& in : concat.inputs) {
        const int64_t channels = region_channels(in);
        known = known && channels > 0;
        equal = equal && channels == part;
      }
      if (!known) return false;
      if (reader.op_type == "Conv") {
        const Tensor* w = conv_weight(reader);
        return is_pointwise_conv(reader, w) && equal && part * static_cast<int64_t>(concat.inputs.size()) == w->dim(1);
      }
      return reader.op_type == "MaxPool" && reader.outputs.size() == 1;
    };
    if (!reader_takes_parts()) continue;
    concat_of_[j] = c;
    merge_into_reader(c);
    ++merged;
  }
  return merged;
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
    if (!is_image_conv(conv, conv_weight(conv)) || conv.inputs[0] != *it) {
      ++it;
      continue;
    }
    nchw_input_.insert(readers[0]);
    it = entering_.erase(it);
    ++converted;
  }
  return converted;
}

// The image Conv (is_image_conv) whose output (after its fused activation) only node j reads,
// as its input 0, or -1.
int NhwcPass::image_conv_read_only_by(size_t j) const {
  const std::string& mid = g_.nodes[j].inputs[0];
  auto p = producer_.find(mid);
  if (p == producer_.end() || sole_reader(mid) != static_cast<int>(j)) return -1;
  const size_t c = p->second;
  const Node& conv = g_.nodes[c];
  if (role_[c] != Role::kNhwcOp || fused_away_[c] || conv.outputs[0] != mid || concat_of_.count(c) ||
      !is_image_conv(conv, conv_weight(conv)))
    return -1;
  return static_cast<int>(c);
}

// An image's Conv (is_image_conv) whose output (after its fused activation) only a 2-D MaxPool
// without Indices reads is merged into that pool: ConvMaxPool (conv.cc) pools each band of
// the Conv's rows as it computes them. Returns how many.
int NhwcPass::fuse_stem_pools(const std::vector<size_t>& order) {
  int merged = 0;
  for (size_t j : order) {
    const Node& pool = g_.nodes[j];
    if (role_[j] != Role::kNhwcOp || fused_away_[j] || pool.op_type != "MaxPool" || !pool.domain.empty() ||
        concat_of_.count(j) || (pool.outputs.size() > 1 && !pool.outputs[1].empty()))
      continue;
    const int c = image_conv_read_only_by(j);
    if (c < 0) continue;
    stem_of_[j] = static_cast<size_t>(c);
    merge_into_reader(static_cast<size_t>(c));
    ++merged;
  }
  return merged;
}

// An image's Conv (is_image_conv) whose output (after its fused activation) only a depthwise
// Conv reads is merged into it: StemDepthwiseConv (conv_stem_depthwise.cc) computes the stem's
// rows into the depthwise layer's ring as it needs them. Returns how many.
int NhwcPass::fuse_stem_depthwise(const std::vector<size_t>& order) {
  int merged = 0;
  for (size_t d : order) {
    const Node& dw = g_.nodes[d];
    if (role_[d] != Role::kNhwcOp || fused_away_[d] || dw.op_type != "Conv" || !dw.domain.empty() ||
        pointwise_of_.count(d) || concat_of_.count(d) || !is_depthwise_conv(dw, conv_weight(dw)))
      continue;
    const int c = image_conv_read_only_by(d);
    if (c < 0) continue;
    stem_dw_of_[d] = static_cast<size_t>(c);
    merge_into_reader(static_cast<size_t>(c));
    ++merged;
  }
  return merged;
}

// A group-1 Conv without a fused activation whose output only an Add reads, the Add's other
// input a region value Z: the Add becomes Conv(X, W, B, Z) (common/residual.h), at the Add's
// place (Z may be computed after the Conv), with the Relu / Clip that alone reads the sum as
// its output range. ResNet blocks end so: the sum is never written before its activation.
// Returns how many.
int NhwcPass::fuse_residual_adds(const std::vector<size_t>& order) {
  int merged = 0;
  for (size_t a : order) {
    const Node& add = g_.nodes[a];
    if (role_[a] != Role::kAgnostic || fused_away_[a] || add.op_type != "Add" || !add.domain.empty() ||
        add.inputs.size() != 2 || add.inputs[0] == add.inputs[1] || !has_twin(add.inputs[0]) ||
        !has_twin(add.inputs[1]))
      continue;
    int conv = -1, side = -1;
    for (int k = 0; k < 2 && conv < 0; ++k) {
      const std::string& in = add.inputs[static_cast<size_t>(k)];
      auto p = producer_.find(in);
      if (p == producer_.end() || sole_reader(in) != static_cast<int>(a)) continue;
      const size_t c = p->second;
      const Node& n = g_.nodes[c];
      const Attribute* group = n.find_attr("group");
      if (role_[c] != Role::kNhwcOp || fused_away_[c] || n.op_type != "Conv" || !n.domain.empty() ||
          n.outputs[0] != in || (group && group->i != 1) || pointwise_of_.count(c) || concat_of_.count(c) ||
          norm_of_.count(c) || nchw_input_.count(c) || n.find_attr("activation") || n.find_attr("activation_min") ||
          n.find_attr("activation_max"))
        continue;
      conv = static_cast<int>(c);
      side = k;
    }
    if (conv < 0) continue;
    const Node& c = g_.nodes[static_cast<size_t>(conv)];
    Node fused = c;
    fused.name = c.name + "+" + add.name;
    fused.opset = opset_of(c);
    fused.inputs.resize(kConvResidualInput);  // X, W, B ("" when absent)
    fused.inputs.push_back(add.inputs[static_cast<size_t>(1 - side)]);
    fused.outputs = add.outputs;
    fused.origin = add.origin.empty() ? add.describe() : add.origin;
    const int act = sole_reader(add.outputs[0]);
    float lo = 0, hi = 0;
    if (act >= 0 && !fused_away_[static_cast<size_t>(act)] && role_[static_cast<size_t>(act)] != Role::kNone) {
      const Node& a_node = g_.nodes[static_cast<size_t>(act)];
      if (a_node.inputs[0] == add.outputs[0] && fusable_activation(a_node, lo, hi)) {
        fused.attributes.push_back(float_attribute("activation_min", lo));
        fused.attributes.push_back(float_attribute("activation_max", hi));
        fused.outputs[0] = a_node.outputs[0];
        producer_[fused.outputs[0]] = a;
        fused_away_[static_cast<size_t>(act)] = true;
      }
    }
    g_.nodes[a] = std::move(fused);
    role_[a] = Role::kNhwcOp;
    merge_into_reader(static_cast<size_t>(conv));
    ++merged;
  }
  return merged;
}

}  // namespace layout_internal
}  // namespace xonnx
