#include "runtime/passes/qdq_fusion.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "runtime/ir/graph_edit.h"
#include "runtime/ir/graph_index.h"
#include "runtime/passes/pass_util.h"
#include "runtime/passes/qdq_fusion_pass.h"
#include "runtime/ops/registry.h"

namespace xonnx {

bool saturation_implies(float lo, float hi, float scale, int32_t zero_point, int32_t qmin, int32_t qmax) {
  if (!(scale > 0) || !std::isfinite(scale)) return false;
  // Q is monotonic, so it ignores the clamp exactly when Q(lo) is already qmin and Q(hi) qmax;
  // computed as QuantizeLinear does (x / scale in float, round half to even, then + zero point).
  const auto code = [&](float x) { return double(std::nearbyint(x / scale)) + zero_point; };
  return code(lo) <= qmin && code(hi) >= qmax;
}

namespace qdq_internal {

bool QdqPass::scalar_params(const Node& n, ScalarQ& q) const {
  if (n.inputs.size() != 3 || n.inputs[0].empty() || n.inputs[2].empty() || n.outputs.size() != 1) return false;
  for (const Attribute& a : n.attributes) {  // opset 21+: blocked or retyped forms
    if ((a.name == "block_size" || a.name == "output_dtype") && a.i != 0) return false;
  }
  const Tensor* s = constant(n.inputs[1]);
  const Tensor* z = constant(n.inputs[2]);
  if (!s || !z || s->dtype() != DataType::kFloat || s->numel() != 1 || z->numel() != 1 ||
      !dtype_is_8bit_int(z->dtype()))
    return false;
  q.scale = s->data<float>()[0];
  q.zero_point = static_cast<int32_t>(z->get_as_int64(0));
  q.type = z->dtype();
  return q.scale > 0 && std::isnormal(q.scale);
}

// The node index of the per-tensor DequantizeLinear producing `value`, or -1.
int QdqPass::dq_producer(const std::string& value, ScalarQ& q) const {
  const int p = index_.producer_of(value);
  if (p < 0 || !is_op(static_cast<size_t>(p), "DequantizeLinear")) return -1;
  return scalar_params(g_.nodes[static_cast<size_t>(p)], q) ? p : -1;
}

int QdqPass::single_reader(const std::string& value) const {
  if (index_.pinned(value)) return -1;
  const auto& r = index_.readers(value);
  return r.size() == 1 && !dead_[r[0]] ? static_cast<int>(r[0]) : -1;
}

// The QuantizeLinear that alone reads `op`'s output, directly or through one Relu / Clip
// that its saturation makes redundant (`act` = that node, else -1). -1 when there is none.
int QdqPass::quantize_after(size_t op, ScalarQ& q, int& act) {
  act = -1;
  int r = single_reader(g_.nodes[op].outputs[0]);
  if (r < 0) return -1;
  float lo = 0, hi = 0;
  const Node& next = g_.nodes[static_cast<size_t>(r)];
  if (activation_bounds(
          next, next.opset ? next.opset : opset_, [&](const std::string& n) { return constant(n); }, lo, hi)) {
    if (next.inputs[0] != g_.nodes[op].outputs[0]) return -1;
    act = r;
    r = single_reader(next.outputs[0]);
    if (r < 0) return -1;
  }
  const Node& qn = g_.nodes[static_cast<size_t>(r)];
  if (!is_op(static_cast<size_t>(r), "QuantizeLinear") || !scalar_params(qn, q)) return -1;
  if (qn.inputs[0] != g_.nodes[act >= 0 ? static_cast<size_t>(act) : op].outputs[0]) return -1;
  if (act >= 0 && !saturation_implies(lo, hi, q.scale, q.zero_point, qmin_of(q.type), qmax_of(q.type))) return -1;
  return r;
}

std::string QdqPass::add_initializer(const std::string& base, Tensor t) {
  std::string name = base;
  for (int k = 1; names_.count(name); ++k) name = base + "_" + std::to_string(k);
  names_.insert(name);
  new_initializers_.push_back({name, std::move(t)});
  index_.initializers[name] = &new_initializers_.back().tensor;
  return name;
}

// uint8 Q -> DQ pairs become int8 (zero point - 128): same real values, signed kernels.
void QdqPass::make_signed_activations() {
  std::unordered_map<std::string, std::string> signed_zp;  // uint8 zero point -> int8 twin
  for (size_t i = 0; i < g_.nodes.size(); ++i) {
    ScalarQ q;
    if (!is_op(i, "QuantizeLinear") || !scalar_params(g_.nodes[i], q) || q.type != DataType::kUint8) continue;
    const std::string& out = g_.nodes[i].outputs[0];
    const auto& readers = index_.readers(out);
    if (index_.pinned(out) || readers.empty()) continue;
    bool all_dq = true;
    for (size_t r : readers) {
      ScalarQ d;
      const Node& n = g_.nodes[r];
      all_dq = all_dq && is_op(r, "DequantizeLinear") && n.inputs[0] == out && scalar_params(n, d) &&
               d.scale == q.scale && d.zero_point == q.zero_point && d.type == q.type;
    }
    if (!all_dq) continue;
    const std::string& zp = g_.nodes[i].inputs[2];
    auto it = signed_zp.find(zp);
    if (it == signed_zp.end()) {
      const Tensor t = Tensor::scalar<int8_t>(static_cast<int8_t>(q.zero_point - 128));
      it = signed_zp.emplace(zp, add_initializer(zp + "_int8", t)).first;
    }
    g_.nodes[i].inputs[2] = it->second;
    for (size_t r : readers) g_.nodes[r].inputs[2] = it->second;
    ++stats_.signed_activations;
  }
}

void QdqPass::replace(size_t q, Node fused, size_t op, int act) {
  fused.outputs = g_.nodes[q].outputs;
  g_.nodes[q] = std::move(fused);  // at the Q's place: every input is produced before it
  dead_[op] = true;
  if (act >= 0) {
    dead_[static_cast<size_t>(act)] = true;
    ++stats_.activations;
  }
}

// The bias `value` (a constant float of m elements, or a DQ of a constant int32 [m]) as int32
// codes at `scale_of(channel)`, added as an initializer; "" when it is neither or does not fit.
std::string QdqPass::int32_bias(const std::string& value, int64_t m, const std::string& base,
                                const std::function<double(int64_t)>& scale_of) {
  std::vector<float> b;
  const Tensor* bt = constant(value);
  if (bt && bt->dtype() == DataType::kFloat && bt->numel() == m &&
      (bt->rank() == 1 || (bt->rank() == 2 && bt->dim(0) == 1))) {
    b.assign(bt->data<float>(), bt->data<float>() + m);
  } else {
    const int db = index_.producer_of(value);
    if (db < 0 || !is_op(static_cast<size_t>(db), "DequantizeLinear")) return "";
    const Node& bn = g_.nodes[static_cast<size_t>(db)];
    const Tensor* bq = constant(bn.inputs[0]);
    const Tensor* bs = bn.inputs.size() > 1 ? constant(bn.inputs[1]) : nullptr;
    const Tensor* bz = bn.inputs.size() > 2 && !bn.inputs[2].empty() ? constant(bn.inputs[2]) : nullptr;
    if (!bq || !bs || bq->dtype() != DataType::kInt32 || bq->rank() != 1 || bq->numel() != m) return "";
    if (bs->dtype() != DataType::kFloat || (bs->numel() != 1 && bs->numel() != m)) return "";
    if (bz && (bz->dtype() != DataType::kInt32 || (bz->numel() != 1 && bz->numel() != m))) return "";
    if (bn.inputs.size() > 2 && !bn.inputs[2].empty() && !bz) return "";
    b.resize(static_cast<size_t>(m));
    for (int64_t c = 0; c < m; ++c) {
      const int64_t zp = bz ? bz->get_as_int64(bz->numel() == 1 ? 0 : c) : 0;
      b[c] = static_cast<float>(double(bq->data<int32_t>()[c] - zp) * bs->data<float>()[bs->numel() == 1 ? 0 : c]);
    }
  }
  std::vector<int32_t> codes(static_cast<size_t>(m));
  for (int64_t c = 0; c < m; ++c) {
    const double v = std::nearbyint(double(b[c]) / scale_of(c));
    if (!std::isfinite(v) || std::fabs(v) > 2147483647.0) return "";
    codes[c] = static_cast<int32_t>(v);
  }
  return add_initializer(base + "_bias_int32", Tensor::from_vector<int32_t>(codes, {m}));
}

// The DequantizeLinear producing `value` when it dequantizes a constant 8-bit tensor of
// `rank` dims per tensor or along `channel_axis` (no blocks), with a constant zero point; else
// nullptr.
const Node* QdqPass::weight_dequantize(const std::string& value, int64_t rank, int64_t channel_axis) const {
  const int d = index_.producer_of(value);
  if (d < 0 || !is_op(static_cast<size_t>(d), "DequantizeLinear")) return nullptr;
  const Node& n = g_.nodes[static_cast<size_t>(d)];
  if (n.inputs.size() != 3 || n.inputs[2].empty()) return nullptr;
  const Tensor* w = constant(n.inputs[0]);
  const Tensor* s = constant(n.inputs[1]);
  const Tensor* z = constant(n.inputs[2]);
  if (!w || !s || !z || !dtype_is_8bit_int(w->dtype()) || w->rank() != static_cast<size_t>(rank) ||
      z->dtype() != w->dtype() || s->dtype() != DataType::kFloat || s->rank() > 1 || z->rank() > 1)
    return nullptr;
  if (s->numel() != 1 || z->numel() != 1) {
    const Attribute* axis_attr = n.find_attr("axis");
    const int64_t axis = axis_attr ? (axis_attr->i < 0 ? axis_attr->i + rank : axis_attr->i) : 1;
    const int64_t channels = w->dim(static_cast<size_t>(channel_axis));
    if (axis != channel_axis || s->numel() != channels || (z->numel() != 1 && z->numel() != channels)) return nullptr;
  }
  for (const Attribute& a : n.attributes) {
    if (a.name == "block_size" && a.i != 0) return nullptr;
  }
  return &n;
}

bool QdqPass::fuse_conv(size_t i) {
  const Node& conv = g_.nodes[i];
  if (conv.inputs.size() < 2 || conv.inputs.size() > 3 || conv.outputs.size() != 1) return false;
  ScalarQ xq, yq;
  const int dx = dq_producer(conv.inputs[0], xq);
  if (dx < 0) return false;
  // The weight, per tensor or per output channel (axis 0); 3-D for a Conv1d, which the layout
  // pass lifts to 2-D (layout_conv1d.cc), as it does float ones.
  const Node* wn = weight_dequantize(conv.inputs[1], 4, 0);
  if (!wn) wn = weight_dequantize(conv.inputs[1], 3, 0);
  if (!wn) return false;
  const Tensor* ws = constant(wn->inputs[1]);
  const int64_t m = constant(wn->inputs[0])->dim(0);
  int act = -1;
  const int q = quantize_after(i, yq, act);
  if (q < 0) return false;
  // The bias, as int32 at x_scale * w_scale.
  std::string bias;
  if (conv.inputs.size() == 3 && !conv.inputs[2].empty()) {
    bias = int32_bias(conv.inputs[2], m, conv.outputs[0],
                      [&](int64_t c) { return double(xq.scale) * ws->data<float>()[ws->numel() == 1 ? 0 : c]; });
    if (bias.empty()) return false;
  }
  const Node& xn = g_.nodes[static_cast<size_t>(dx)];
  const Node& qn = g_.nodes[static_cast<size_t>(q)];
  Node fused;
  fused.name = conv.name.empty() ? qn.name : conv.name;
  fused.op_type = "QLinearConv";
  fused.inputs = {xn.inputs[0],  xn.inputs[1],  xn.inputs[2], wn->inputs[0],
                  wn->inputs[1], wn->inputs[2], qn.inputs[1], qn.inputs[2]};
  if (!bias.empty()) fused.inputs.push_back(bias);
  fused.attributes = conv.attributes;
  fused.opset = std::max<int64_t>(opset_, 10);
  replace(static_cast<size_t>(q), std::move(fused), i, act);
  ++stats_.conv;
  return true;
}

// DQ(A) -> Gemm(B = DQ of a constant 8-bit 2-D weight, per tensor or per output column;
// C = bias) [-> Q] becomes com.microsoft QGemm: with a Q after it the output is quantized,
// without one (a classifier head) QGemm's float output replaces the Gemm's.
bool QdqPass::fuse_gemm(size_t i) {
  const Node& gemm = g_.nodes[i];
  if (gemm.inputs.size() < 2 || gemm.inputs.size() > 3 || gemm.outputs.size() != 1) return false;
  float alpha = 1, beta = 1;
  int64_t trans_a = 0, trans_b = 0;
  for (const Attribute& a : gemm.attributes) {
    if (a.name == "alpha") alpha = a.f;
    if (a.name == "beta") beta = a.f;
    if (a.name == "transA") trans_a = a.i;
    if (a.name == "transB") trans_b = a.i;
  }
  if (trans_a != 0 || !(alpha > 0) || !std::isfinite(alpha) || !(beta != 0) || !std::isfinite(beta)) return false;
  ScalarQ aq, yq;
  const int da = dq_producer(gemm.inputs[0], aq);
  if (da < 0) return false;
  // B per tensor or per output column: axis 0 of a transposed B, else axis 1.
  const int64_t column_axis = trans_b ? 0 : 1;
  const Node* wn = weight_dequantize(gemm.inputs[1], 2, column_axis);
  if (!wn) return false;
  const Tensor* ws = constant(wn->inputs[1]);
  const int64_t n = constant(wn->inputs[0])->dim(static_cast<size_t>(column_axis));
  // Only where a fast integer kernel runs it (the own one needs AVX512-VNNI): elsewhere
  // XNNPACK's float Gemm on the folded weights beats the reference QGemm.
  if (!OpRegistry::global().has_fast_kernel("com.microsoft", "QGemm")) return false;
  int act = -1;
  const int q = quantize_after(i, yq, act);
  std::string bias;
  if (gemm.inputs.size() == 3 && !gemm.inputs[2].empty()) {
    // QGemm adds C to the sums: C's codes are at alpha * a_scale * b_scale / beta.
    bias = int32_bias(gemm.inputs[2], n, gemm.outputs[0], [&](int64_t c) {
      return double(alpha) * aq.scale * ws->data<float>()[ws->numel() == 1 ? 0 : c] / beta;
    });
    if (bias.empty()) return false;
  }
  const Node& an = g_.nodes[static_cast<size_t>(da)];
  Node fused;
  fused.name = gemm.name;
  fused.op_type = "QGemm";
  fused.domain = "com.microsoft";
  fused.opset = 1;
  fused.inputs = {an.inputs[0], an.inputs[1], an.inputs[2], wn->inputs[0], wn->inputs[1], wn->inputs[2], bias};
  for (const Attribute& a : gemm.attributes) {
    if (a.name == "alpha" || a.name == "transB") fused.attributes.push_back(a);
  }
  if (q >= 0) {
    const Node& qn = g_.nodes[static_cast<size_t>(q)];
    fused.inputs.push_back(qn.inputs[1]);
    fused.inputs.push_back(qn.inputs[2]);
    if (fused.name.empty()) fused.name = qn.name;
    replace(static_cast<size_t>(q), std::move(fused), i, act);
  } else {
    if (bias.empty()) fused.inputs.pop_back();
    fused.outputs = gemm.outputs;
    g_.nodes[i] = std::move(fused);
  }
  ++stats_.gemm;
  return true;
}

// DQ(A [..., K]), DQ(int8 W [K, N] const) -> MatMul -> Q: a transformer's projection becomes
// QLinearMatMul where a fast kernel takes it (per-column scales: the own, AVX512-VNNI; per
// tensor: also XNNPACK's); without a Q after it (an LM head) com.microsoft MatMulIntegerToFloat,
// where the own kernel runs; else the float MatMul on the folded weights stays.
bool QdqPass::fuse_matmul(size_t i) {
  const Node& mm = g_.nodes[i];
  if (mm.inputs.size() != 2 || mm.outputs.size() != 1) return false;
  ScalarQ aq, yq;
  const int da = dq_producer(mm.inputs[0], aq);
  if (da < 0) return false;
  const Node* wn = weight_dequantize(mm.inputs[1], 2, 1);
  if (!wn) return false;
  int act = -1;
  const int q = quantize_after(i, yq, act);
  const OpRegistry& registry = OpRegistry::global();
  const Node& an = g_.nodes[static_cast<size_t>(da)];
  Node fused;
  fused.name = mm.name;
  if (q < 0) {  // the output stays float
    if (!registry.has_fast_kernel("com.microsoft", "MatMulIntegerToFloat", Backend::kOptimized)) return false;
    fused.op_type = "MatMulIntegerToFloat";
    fused.domain = "com.microsoft";
    fused.opset = 1;
    fused.inputs = {an.inputs[0], wn->inputs[0], an.inputs[1], wn->inputs[1], an.inputs[2], wn->inputs[2]};
    fused.outputs = mm.outputs;
    g_.nodes[i] = std::move(fused);
    ++stats_.matmul;
    return true;
  }
  // Per-column scales: only the own kernel (AVX512-VNNI) takes them; XNNPACK's per-tensor ones.
  const bool per_column = constant(wn->inputs[1])->numel() > 1;
  if (!registry.has_fast_kernel("", "QLinearMatMul", per_column ? Backend::kOptimized : Backend::kReference))
    return false;
  const Node& qn = g_.nodes[static_cast<size_t>(q)];
  if (fused.name.empty()) fused.name = qn.name;
  fused.op_type = "QLinearMatMul";
  fused.inputs = {an.inputs[0],  an.inputs[1],  an.inputs[2], wn->inputs[0],
                  wn->inputs[1], wn->inputs[2], qn.inputs[1], qn.inputs[2]};
  replace(static_cast<size_t>(q), std::move(fused), i, act);
  ++stats_.matmul;
  return true;
}

bool QdqPass::fuse_binary(size_t i) {
  const Node& op = g_.nodes[i];
  if (op.inputs.size() != 2 || op.outputs.size() != 1) return false;
  ScalarQ aq, bq, yq;
  const int da = dq_producer(op.inputs[0], aq);
  const int db = dq_producer(op.inputs[1], bq);
  if (da < 0 || db < 0) return false;
  int act = -1;
  const int q = quantize_after(i, yq, act);
  if (q < 0 || aq.type != bq.type || aq.type != yq.type) return false;
  const char* fused_op = op.op_type == "Add" ? "QLinearAdd" : "QLinearMul";
  if (!OpRegistry::global().resolve("com.microsoft", fused_op, 1).is_ok()) return false;
  const Node& an = g_.nodes[static_cast<size_t>(da)];
  const Node& bn = g_.nodes[static_cast<size_t>(db)];
  const Node& qn = g_.nodes[static_cast<size_t>(q)];
  Node fused;
  fused.name = op.name.empty() ? qn.name : op.name;
  fused.op_type = fused_op;
  fused.domain = "com.microsoft";
  fused.opset = 1;
  fused.inputs = {an.inputs[0], an.inputs[1], an.inputs[2], bn.inputs[0],
                  bn.inputs[1], bn.inputs[2], qn.inputs[1], qn.inputs[2]};
  replace(static_cast<size_t>(q), std::move(fused), i, act);
  ++stats_.binary;
  return true;
}

// Max commutes with a monotonic Q(DQ(.)) of the same parameters, and Concat only moves values:
// with those parameters on every input and on the Q after it, the op runs on the integers.
bool QdqPass::fuse_on_integers(size_t i) {
  const Node& op = g_.nodes[i];
  const bool pool = op.op_type == "MaxPool";
  if (op.outputs.size() != 1 || op.inputs.empty()) return false;
  if (pool && (op.inputs.size() != 1 || std::max<int64_t>(opset_, op.opset) < 12)) return false;
  ScalarQ yq;
  int act = -1;
  const int q = quantize_after(i, yq, act);
  if (q < 0 || act >= 0) return false;
  Node fused = op;
  for (std::string& in : fused.inputs) {
    ScalarQ xq;
    const int dx = dq_producer(in, xq);
    if (dx < 0 || xq.scale != yq.scale || xq.zero_point != yq.zero_point || xq.type != yq.type) return false;
    in = g_.nodes[static_cast<size_t>(dx)].inputs[0];
  }
  replace(static_cast<size_t>(q), std::move(fused), i, -1);
  ++(pool ? stats_.max_pool : stats_.concat);
  return true;
}

bool dequantize_constant(const Node& n, const Tensor& x, const Tensor& scale, const Tensor* zp, Tensor& out) {
  if (!dtype_is_integer(x.dtype()) || dtype_is_subbyte(x.dtype()) || dtype_bits(x.dtype()) > 32) return false;
  if (scale.dtype() != DataType::kFloat || (zp && zp->numel() != scale.numel())) return false;
  const int64_t channels = scale.numel();
  int64_t inner = 1;
  if (channels != 1) {
    const Attribute* a = n.find_attr("axis");
    const int64_t rank = static_cast<int64_t>(x.rank());
    int64_t axis = a ? a->i : 1;
    if (axis < 0) axis += rank;
    if (scale.rank() != 1 || axis < 0 || axis >= rank || x.dim(axis) != channels) return false;
    for (int64_t d = axis + 1; d < rank; ++d) inner *= x.dim(d);
  }
  auto t = Tensor::allocate(DataType::kFloat, x.shape());
  if (!t.is_ok()) return false;
  out = std::move(t).value();
  float* y = out.data<float>();
  const float* s = scale.data<float>();
  // Runs of one channel's values, its zero point read once per run; 8-bit values (weights) read
  // directly: get_as_int64 per element took seconds on an int8 IS-Net's 44 M weights.
  const int64_t count = x.numel(), run = channels == 1 ? count : inner;
  const bool is_8bit = dtype_is_8bit_int(x.dtype()), is_signed = x.dtype() == DataType::kInt8;
  const auto* bytes = static_cast<const uint8_t*>(x.raw_data());
  for (int64_t k0 = 0; k0 < count; k0 += run) {
    const int64_t c = (k0 / run) % channels;
    const int64_t z = zp ? zp->get_as_int64(c) : 0;
    for (int64_t k = k0; k < std::min(count, k0 + run); ++k) {
      const int64_t v = !is_8bit ? x.get_as_int64(k) : is_signed ? static_cast<int8_t>(bytes[k]) : bytes[k];
      y[k] = static_cast<float>(v - z) * s[c];
    }
  }
  return true;
}

void QdqPass::fold_constant_dequantize() {
  for (size_t i = 0; i < g_.nodes.size(); ++i) {
    const Node& n = g_.nodes[i];
    if (!is_op(i, "DequantizeLinear") || n.inputs.size() < 2 || n.outputs.size() != 1) continue;
    const Attribute* out_type = n.find_attr("output_dtype");  // opset 23: float16 / bfloat16 results
    if (index_.pinned(n.outputs[0]) || n.find_attr("block_size") ||
        (out_type && out_type->i != 0 && out_type->i != static_cast<int64_t>(DataType::kFloat)))
      continue;
    const Tensor* x = constant(n.inputs[0]);
    const Tensor* s = constant(n.inputs[1]);
    const Tensor* z = n.inputs.size() > 2 && !n.inputs[2].empty() ? constant(n.inputs[2]) : nullptr;
    if (!x || !s || (n.inputs.size() > 2 && !n.inputs[2].empty() && !z)) continue;
    bool read = false;
    for (size_t r : index_.readers(n.outputs[0])) read = read || !dead_[r];
    Tensor value;
    if (!read || !dequantize_constant(n, *x, *s, z, value)) continue;
    names_.insert(n.outputs[0]);
    new_initializers_.push_back({n.outputs[0], std::move(value)});  // read by kernels, not by the pass
    dead_[i] = true;
    ++stats_.folded_dequantize;
  }
}

// Q / DQ nodes whose outputs nobody reads any more go, then initializers nobody reads.
void QdqPass::remove_dead() {
  std::unordered_map<std::string, int> reads;
  auto count = [&](int delta) {
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      if (dead_[i]) continue;
      for (const std::string& in : g_.nodes[i].inputs) reads[in] += delta;
    }
  };
  count(1);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = g_.nodes.size(); i-- > 0;) {
      const Node& n = g_.nodes[i];
      if (dead_[i] || !n.domain.empty() || (n.op_type != "QuantizeLinear" && n.op_type != "DequantizeLinear")) continue;
      if (index_.pinned(n.outputs[0]) || reads[n.outputs[0]] > 0) continue;
      dead_[i] = true;
      for (const std::string& in : n.inputs) --reads[in];
      changed = true;
    }
  }
  erase_nodes(g_, dead_);
  std::vector<NamedTensor> inits;
  for (NamedTensor& t : g_.initializers) {
    if (reads[t.name] > 0 || index_.pinned(t.name)) inits.push_back(std::move(t));
  }
  for (NamedTensor& t : new_initializers_) {
    if (reads[t.name] > 0 || index_.pinned(t.name)) inits.push_back(std::move(t));
  }
  g_.initializers = std::move(inits);
}

QdqFusionStats QdqPass::run() {
  if (index_.has_duplicate_outputs || opset_ < 10) return stats_;
  dead_.assign(g_.nodes.size(), false);
  for (const NamedTensor& t : g_.initializers) names_.insert(t.name);
  for (const auto& [name, i] : index_.producer) names_.insert(name);
  for (const ValueInfo& v : g_.inputs) names_.insert(v.name);
  make_signed_activations();
  for (size_t i = 0; i < g_.nodes.size(); ++i) {
    if (is_op(i, "Conv")) {
      fuse_conv(i);
    } else if (is_op(i, "Gemm")) {
      fuse_gemm(i);
    } else if (is_op(i, "MatMul")) {
      fuse_matmul(i);
    } else if (is_op(i, "MatMulInteger")) {
      fuse_matmul_integer(i);
    } else if (is_op(i, "ConvInteger")) {
      fuse_conv_integer(i);
    } else if (is_op(i, "Add") || is_op(i, "Mul")) {
      fuse_binary(i);
    } else if (is_op(i, "MaxPool") || is_op(i, "Concat")) {
      fuse_on_integers(i);
    }
  }
  fold_constant_dequantize();
  if (stats_.total() == 0) return stats_;
  remove_dead();
  return stats_;
}

}  // namespace qdq_internal

Result<QdqFusionStats> apply_qdq_fusion(Graph& graph, const std::map<std::string, int64_t>& opset_imports) {
  auto it = opset_imports.find("");
  if (it == opset_imports.end()) return QdqFusionStats{};
  qdq_internal::QdqPass pass(graph, it->second);
  return pass.run();
}

}  // namespace xonnx
