// Crops the kernel taps of a Conv that only ever read padding. A dilated Conv on a small map
// has them: DeepLabV3's ASPP runs 3x3 kernels with dilations 24 and 36 on a 20x20 map, where
// every tap but the centre lands in the zero padding for every output, so the 3x3 Conv is a
// 1x1 Conv in disguise at 9x the work. With the input's spatial dims known (shape inference;
// the session checks inputs against the declared dims), the leading and trailing taps of each
// axis that read no input row for any output are dropped and the pads shrink by what they
// covered, so the output shape and every sum stay the same (a dropped tap only added
// 0 * w). Skipped: auto_pad other than NOTSET, non-float32 or non-finite dropped weights (their
// 0 * w is not 0), a crop that would need negative pads.
#include <cmath>

#include "runtime/ir/graph_edit.h"
#include "runtime/passes/pass_util.h"
#include "runtime/passes/passes.h"
#include "runtime/passes/shape_inference.h"

namespace xonnx {
namespace passes {

namespace {

// Whether tap i of one axis reads an input row (in [0, in)) for some output row.
bool tap_reads_input(int64_t i, int64_t in, int64_t out, int64_t stride, int64_t dilation, int64_t pad_begin) {
  const int64_t first = i * dilation - pad_begin;  // the row output 0 reads; then + stride per output
  if (first >= in) return false;
  if (first >= 0) return true;
  const int64_t steps = (-first + stride - 1) / stride;  // outputs until the row is >= 0
  return steps < out && first + steps * stride < in;
}

struct AxisCrop {
  int64_t first = 0, last = 0;         // the taps kept
  int64_t pad_begin = 0, pad_end = 0;  // the new pads
};

// The taps of one axis to keep and the pads after the crop, or false (crop untouched) when
// nothing can be dropped or the pads would go negative.
bool crop_axis(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t pad_begin, int64_t pad_end,
               AxisCrop* crop) {
  if (in <= 0 || kernel <= 1 || stride <= 0 || dilation <= 0 || pad_begin < 0 || pad_end < 0) return false;
  // Declared dims may be anything up to 2^63 - 1 (the validator bounds the attributes).
  int64_t span = 0, padded = 0;
  if (__builtin_mul_overflow(kernel - 1, dilation, &span) || __builtin_add_overflow(in, pad_begin, &padded) ||
      __builtin_add_overflow(padded, pad_end, &padded) || padded <= span)
    return false;
  ++span;
  const int64_t out = (padded - span) / stride + 1;
  int64_t first = 0, last = kernel - 1;
  while (first < kernel && !tap_reads_input(first, in, out, stride, dilation, pad_begin)) ++first;
  if (first == kernel) return false;  // no tap reads the input: left alone (bias only, rare)
  while (!tap_reads_input(last, in, out, stride, dilation, pad_begin)) --last;
  if (first == 0 && last == kernel - 1) return false;
  const AxisCrop cropped{first, last, pad_begin - first * dilation, pad_end - (kernel - 1 - last) * dilation};
  if (cropped.pad_begin < 0 || cropped.pad_end < 0) return false;
  *crop = cropped;
  return true;
}

std::vector<int64_t> ints_or(const Node& n, const char* name, std::vector<int64_t> fallback) {
  const Attribute* a = n.find_attr(name);
  return a ? a->ints : fallback;
}

// W [M, C/group, k...] cropped to the kept taps of each spatial axis; false when a dropped
// weight is not finite.
bool crop_weights(const Tensor& w, const std::vector<AxisCrop>& crops, Tensor* out) {
  const size_t spatial = crops.size();
  Shape shape = w.shape();
  for (size_t a = 0; a < spatial; ++a) shape[2 + a] = crops[a].last - crops[a].first + 1;
  // Which taps of one kernel (row-major over the spatial axes) are kept.
  int64_t taps = 1;
  for (size_t a = 0; a < spatial; ++a) taps *= w.dim(2 + a);
  std::vector<char> kept(static_cast<size_t>(taps), 1);
  for (int64_t t = 0; t < taps; ++t) {
    int64_t rest = t;
    for (size_t a = spatial; a-- > 0;) {
      const int64_t i = rest % w.dim(2 + a);
      rest /= w.dim(2 + a);
      if (i < crops[a].first || i > crops[a].last) kept[static_cast<size_t>(t)] = 0;
    }
  }
  auto cropped = Tensor::allocate(DataType::kFloat, shape);
  if (!cropped.is_ok()) return false;
  const float* src = w.data<float>();
  float* dst = cropped.value().data<float>();
  const int64_t kernels = w.numel() / taps;
  for (int64_t k = 0; k < kernels; ++k, src += taps) {
    for (int64_t t = 0; t < taps; ++t) {
      if (kept[static_cast<size_t>(t)]) {
        *dst++ = src[t];
      } else if (!std::isfinite(src[t])) {
        return false;
      }
    }
  }
  *out = std::move(cropped).value();
  return true;
}

}  // namespace

Result<bool> crop_conv_taps(Model& model, PassContext& ctx) {
  Graph& g = model.graph;
  const ShapeFacts& facts = ctx.shape_facts(model);
  int cropped = 0;
  for (Node& n : g.nodes) {
    if (!n.domain.empty() || n.op_type != "Conv" || n.inputs.size() < 2 || n.inputs[0].empty()) continue;
    const Attribute* auto_pad = n.find_attr("auto_pad");
    if (auto_pad && auto_pad->s != "NOTSET") continue;
    const Tensor* w = constant_tensor(g, n.inputs[1]);
    const std::vector<Dim>* x_dims = facts.dims(n.inputs[0]);
    if (!w || w->dtype() != DataType::kFloat || w->rank() < 3 || !x_dims || x_dims->size() != w->rank()) continue;
    const size_t spatial = w->rank() - 2;
    const std::vector<int64_t> strides = ints_or(n, "strides", std::vector<int64_t>(spatial, 1));
    const std::vector<int64_t> dilations = ints_or(n, "dilations", std::vector<int64_t>(spatial, 1));
    const std::vector<int64_t> pads = ints_or(n, "pads", std::vector<int64_t>(2 * spatial, 0));
    if (strides.size() != spatial || dilations.size() != spatial || pads.size() != 2 * spatial) continue;
    std::vector<AxisCrop> crops(spatial);
    bool any = false, valid = true;
    for (size_t a = 0; a < spatial && valid; ++a) {
      const Dim& in = (*x_dims)[2 + a];
      const int64_t k = w->dim(2 + a);
      crops[a] = AxisCrop{0, k - 1, pads[a], pads[spatial + a]};  // kept whole unless cropped below
      valid = in.known();
      if (valid && crop_axis(in.value, k, strides[a], dilations[a], pads[a], pads[spatial + a], &crops[a])) any = true;
    }
    Tensor new_w;
    if (!valid || !any || !crop_weights(*w, crops, &new_w)) continue;
    std::vector<int64_t> new_pads(2 * spatial), new_kernel(spatial), new_dilations = dilations;
    for (size_t a = 0; a < spatial; ++a) {
      new_pads[a] = crops[a].pad_begin;
      new_pads[spatial + a] = crops[a].pad_end;
      new_kernel[a] = new_w.dim(2 + a);
      if (new_kernel[a] == 1) new_dilations[a] = 1;  // one tap: a plain (often 1x1) Conv to the kernels
    }
    n.inputs[1] = add_initializer(g, n.inputs[1] + "_cropped", std::move(new_w));
    set_attribute(n, ints_attribute("pads", new_pads));
    set_attribute(n, ints_attribute("dilations", new_dilations));
    if (n.find_attr("kernel_shape")) set_attribute(n, ints_attribute("kernel_shape", new_kernel));
    ++cropped;
  }
  if (cropped == 0) return false;
  ctx.note("cropped the padding-only taps of " + std::to_string(cropped) + " Conv kernels");
  return true;
}

}  // namespace passes
}  // namespace xonnx
