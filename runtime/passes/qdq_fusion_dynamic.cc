// The QDQ fusion pass's rewrites of int8 dynamic models (ORT's quantize_dynamic, `xonnx convert
// --quantize int8` without calibration): the float epilogue after MatMulInteger / ConvInteger
// (qdq_fusion.h has the forms).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "runtime/passes/pass_util.h"
#include "runtime/passes/qdq_fusion_pass.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace qdq_internal {
namespace {

// Whether `t` holds one value, or one per channel of a product whose channel axis has `trailing`
// axes after it ([N] for MatMul's columns; [M, 1, 1] or [1, M, 1, 1] for a 2-D Conv's channels).
bool per_channel_shape(const Tensor& t, int64_t channels, int64_t trailing) {
  if (t.numel() == 1 && (trailing > 0 || t.rank() <= 1)) return true;
  const int64_t rank = static_cast<int64_t>(t.rank());
  if (t.numel() != channels || rank < trailing + 1 || (trailing == 0 && rank != 1)) return false;
  for (int64_t d = 0; d < rank; ++d)
    if (d != rank - 1 - trailing && t.dim(static_cast<size_t>(d)) != 1) return false;
  return true;
}

}  // namespace

// The float epilogue ORT's quantize_dynamic writes after an integer product (MatMulInteger,
// ConvInteger) with `channels` output channels (`trailing` axes after them): Cast(float) ->
// Mul(Mul(a_scale, b_scale const)) [-> Add(bias const, one value per channel)], a_scale a scalar
// (a DynamicQuantizeLinear's scale or a constant), b_scale one or `channels` positive finite floats.
bool QdqPass::integer_epilogue(size_t i, int64_t channels, int64_t trailing, IntegerEpilogue& e) const {
  // The reader of `value` when it is the only one and a two-input `op`; `other` its other input.
  auto binary_reader = [&](const std::string& value, const char* op, std::string& other) {
    const int r = single_reader(value);
    if (r < 0 || !is_op(static_cast<size_t>(r), op)) return -1;
    const Node& rn = g_.nodes[static_cast<size_t>(r)];
    if (rn.inputs.size() != 2 || rn.outputs.size() != 1 || rn.inputs[0] == rn.inputs[1]) return -1;
    other = rn.inputs[0] == value ? rn.inputs[1] : rn.inputs[0];
    return r;
  };
  e.cast = single_reader(g_.nodes[i].outputs[0]);
  if (e.cast < 0 || !is_op(static_cast<size_t>(e.cast), "Cast")) return false;
  const Attribute* to = g_.nodes[static_cast<size_t>(e.cast)].find_attr("to");
  if (!to || to->i != static_cast<int64_t>(DataType::kFloat)) return false;
  std::string scales;
  e.mul = binary_reader(g_.nodes[static_cast<size_t>(e.cast)].outputs[0], "Mul", scales);
  if (e.mul < 0) return false;
  e.scales = index_.producer_of(scales);
  if (e.scales < 0 || !is_op(static_cast<size_t>(e.scales), "Mul") ||
      g_.nodes[static_cast<size_t>(e.scales)].inputs.size() != 2)
    return false;
  const Node& sn = g_.nodes[static_cast<size_t>(e.scales)];
  // The fused kernels take positive finite scales only (the reference reports others).
  auto positive_scales = [&](const Tensor* t, int64_t count) {
    if (!t || t->dtype() != DataType::kFloat || !per_channel_shape(*t, count, count == 1 ? 0 : trailing)) return false;
    for (int64_t k = 0; k < t->numel(); ++k)
      if (!(t->data<float>()[k] > 0.0f) || std::isinf(t->data<float>()[k])) return false;
    return true;
  };
  auto b_scale_of = [&](const std::string& v) { return positive_scales(constant(v), channels); };
  auto scalar_scale = [&](const std::string& v) {
    if (const Tensor* t = constant(v)) return positive_scales(t, 1);
    const int p = index_.producer_of(v);
    return p >= 0 && is_op(static_cast<size_t>(p), "DynamicQuantizeLinear") &&
           g_.nodes[static_cast<size_t>(p)].outputs.size() > 1 && g_.nodes[static_cast<size_t>(p)].outputs[1] == v;
  };
  const bool b_second = b_scale_of(sn.inputs[1]) && scalar_scale(sn.inputs[0]);
  if (!b_second && !(b_scale_of(sn.inputs[0]) && scalar_scale(sn.inputs[1]))) return false;
  e.a_scale = sn.inputs[b_second ? 0 : 1];
  e.b_scale = sn.inputs[b_second ? 1 : 0];
  e.add = binary_reader(g_.nodes[static_cast<size_t>(e.mul)].outputs[0], "Add", e.bias);
  const Tensor* bias = e.add >= 0 ? constant(e.bias) : nullptr;
  if (!bias || bias->dtype() != DataType::kFloat || bias->numel() != channels ||
      !per_channel_shape(*bias, channels, trailing))
    e.add = -1;
  if (e.add < 0) e.bias.clear();
  return true;
}

// The epilogue's nodes go; the fused node takes the slot of its last one, where its readers
// already follow.
void QdqPass::replace_epilogue(size_t i, const IntegerEpilogue& e, Node fused) {
  const int last = e.add >= 0 ? e.add : e.mul;
  fused.outputs = g_.nodes[static_cast<size_t>(last)].outputs;
  if (single_reader(g_.nodes[static_cast<size_t>(e.scales)].outputs[0]) == e.mul)
    dead_[static_cast<size_t>(e.scales)] = true;
  dead_[i] = dead_[static_cast<size_t>(e.cast)] = true;
  if (last == e.add) dead_[static_cast<size_t>(e.mul)] = true;
  g_.nodes[static_cast<size_t>(last)] = std::move(fused);
}

// int8 dynamic (ORT's quantize_dynamic, `xonnx convert --quantize int8`): MatMulInteger(A, int8
// B [K, N] const) -> Cast(float) -> Mul(Mul(a_scale, b_scale const)) [-> Add(bias const [N])]
// becomes com.microsoft MatMulIntegerToFloat where the own kernel runs: one pass over the output
// instead of four, each operation rounded as before (ref/qgemm.cc). a_scale is a scalar: a
// DynamicQuantizeLinear's scale or a constant.
bool QdqPass::fuse_matmul_integer(size_t i) {
  const Node& mi = g_.nodes[i];
  if (mi.inputs.size() < 2 || mi.inputs.size() > 4 || mi.outputs.size() != 1) return false;
  const Tensor* b = constant(mi.inputs[1]);
  if (!b || b->dtype() != DataType::kInt8 || b->rank() != 2) return false;
  IntegerEpilogue e;
  if (!integer_epilogue(i, b->dim(1), 0, e)) return false;
  if (!OpRegistry::global().has_fast_kernel("com.microsoft", "MatMulIntegerToFloat", Backend::kOptimized)) return false;
  Node fused;
  fused.name = mi.name;
  fused.op_type = "MatMulIntegerToFloat";
  fused.domain = "com.microsoft";
  fused.opset = 1;
  const std::string none;
  fused.inputs = {mi.inputs[0],
                  mi.inputs[1],
                  e.a_scale,
                  e.b_scale,
                  mi.inputs.size() > 2 ? mi.inputs[2] : none,
                  mi.inputs.size() > 3 ? mi.inputs[3] : none};
  if (e.add >= 0) fused.inputs.push_back(e.bias);
  while (!fused.inputs.empty() && fused.inputs.back().empty()) fused.inputs.pop_back();
  replace_epilogue(i, e, std::move(fused));
  ++stats_.matmul;
  return true;
}

// int8 dynamic Conv (ORT's quantize_dynamic quantizes Conv too): ConvInteger(x, 8-bit W const,
// x_zero_point, w_zero_point const) -> Cast(float) -> Mul(Mul(x_scale, w_scale const)) [-> Add(bias
// const [1, M, 1, 1])] becomes DequantizeLinear(x, x_scale, x_zero_point) -> Conv(., W dequantized
// at creation [, bias]): a float Conv on the fast kernels (the layout pass takes it into NHWC with
// its Relu), where ConvInteger has only the reference kernel (an int8 IS-Net at 1024 x 1024: over
// five minutes a run). The activations keep their quantization; the sums are float's, not
// int32's, which differs from ConvInteger's exact sums by float rounding (~1e-7 relative).
bool QdqPass::fuse_conv_integer(size_t i) {
  const Node& ci = g_.nodes[i];
  if (ci.inputs.size() < 2 || ci.inputs.size() > 4 || ci.outputs.size() != 1) return false;
  const Tensor* w = constant(ci.inputs[1]);
  if (!w || !dtype_is_8bit_int(w->dtype()) || w->rank() < 3) return false;
  const Tensor* wz = ci.inputs.size() > 3 && !ci.inputs[3].empty() ? constant(ci.inputs[3]) : nullptr;
  if (ci.inputs.size() > 3 && !ci.inputs[3].empty() && !wz) return false;
  const int64_t m = w->dim(0);
  const OpRegistry& registry = OpRegistry::global();
  if (!registry.has_fast_kernel("", "Conv") || !registry.has_fast_kernel("", "DequantizeLinear")) return false;
  IntegerEpilogue e;
  if (!integer_epilogue(i, m, static_cast<int64_t>(w->rank()) - 2, e)) return false;
  // W's scale and zero point, one or one per output channel each: per channel for both when
  // either is (dequantize_constant takes equal counts).
  const Tensor* ws = constant(e.b_scale);
  if (wz && ((wz->numel() != 1 && wz->numel() != m) || wz->dtype() != w->dtype()))
    return false;  // the reference reports it
  const int64_t groups = std::max(ws->numel(), wz ? wz->numel() : int64_t{1});
  const auto per_group = [&](const Tensor& t) {
    Tensor out = Tensor::allocate(t.dtype(), {groups}).value();
    const size_t bytes = static_cast<size_t>(dtype_bits(t.dtype()) / 8);
    for (int64_t c = 0; c < groups; ++c)
      std::memcpy(static_cast<char*>(out.raw_data()) + c * bytes,
                  static_cast<const char*>(t.raw_data()) + (t.numel() == 1 ? 0 : c) * bytes, bytes);
    return out;
  };
  const Tensor scale = per_group(*ws);
  const Tensor zero_point = wz ? per_group(*wz) : Tensor();
  Node per_channel;  // dequantize_constant reads the channel axis from the node
  per_channel.attributes = {int_attribute("axis", 0)};
  Tensor wf;
  if (!dequantize_constant(per_channel, *w, scale, wz ? &zero_point : nullptr, wf)) return false;
  const std::string weight = add_initializer(ci.inputs[1] + "_dequantized", std::move(wf));
  std::string bias;
  if (e.add >= 0) {
    bias = add_initializer(e.bias + "_row", constant(e.bias)->reshaped({m}));
  }
  Node dq;
  dq.name = ci.name.empty() ? "" : ci.name + "_dequantize";
  dq.op_type = "DequantizeLinear";
  dq.opset = std::max<int64_t>(opset_, 10);
  dq.inputs = {ci.inputs[0], e.a_scale};
  if (ci.inputs.size() > 2 && !ci.inputs[2].empty()) dq.inputs.push_back(ci.inputs[2]);
  std::string x = ci.inputs[0] + "_dequantized";
  for (int k = 1; names_.count(x); ++k) x = ci.inputs[0] + "_dequantized_" + std::to_string(k);
  names_.insert(x);
  dq.outputs = {x};
  Node conv;
  conv.name = ci.name;
  conv.op_type = "Conv";
  conv.opset = std::max<int64_t>(opset_, 11);
  conv.inputs = {x, weight};
  if (!bias.empty()) conv.inputs.push_back(bias);
  conv.attributes = ci.attributes;
  replace_epilogue(i, e, std::move(conv));
  g_.nodes[i] = std::move(dq);  // ConvInteger's slot: after x, x_scale and x_zero_point
  dead_[i] = false;
  ++stats_.conv_integer;
  return true;
}

}  // namespace qdq_internal
}  // namespace xonnx
