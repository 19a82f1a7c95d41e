#include "runtime/passes/qdq_fusion.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <list>
#include <unordered_map>
#include <unordered_set>

#include "runtime/ir/graph_edit.h"
#include "runtime/ir/graph_index.h"
#include "runtime/passes/pass_util.h"
#include "runtime/ops/registry.h"

namespace xonnx {

bool saturation_implies(float lo, float hi, float scale, int32_t zero_point, int32_t qmin, int32_t qmax) {
  if (!(scale > 0) || !std::isfinite(scale)) return false;
  // Q is monotonic, so it ignores the clamp exactly when Q(lo) is already qmin and Q(hi) qmax;
  // computed as QuantizeLinear does (x / scale in float, round half to even, then + zero point).
  const auto code = [&](float x) { return double(std::nearbyint(x / scale)) + zero_point; };
  return code(lo) <= qmin && code(hi) >= qmax;
}

namespace {

int32_t qmin_of(DataType t) { return t == DataType::kInt8 ? -128 : 0; }
int32_t qmax_of(DataType t) { return t == DataType::kInt8 ? 127 : 255; }

bool dequantize_constant(const Node& n, const Tensor& x, const Tensor& scale, const Tensor* zp, Tensor& out);

// The per-tensor parameters of a QuantizeLinear / DequantizeLinear node.
struct ScalarQ {
  float scale = 0;
  int32_t zero_point = 0;
  DataType type = DataType::kUndefined;  // the 8-bit side's type (from the zero point)
};

class QdqPass {
 public:
  QdqPass(Graph& g, int64_t opset) : g_(g), opset_(opset), index_(g) {}
  QdqFusionStats run();

 private:
  bool is_op(size_t i, const char* op) const {
    return !dead_[i] && g_.nodes[i].domain.empty() && g_.nodes[i].op_type == op;
  }
  const Tensor* constant(const std::string& name) const { return index_.constant(name); }
  bool scalar_params(const Node& n, ScalarQ& q) const;
  int dq_producer(const std::string& value, ScalarQ& q) const;
  int single_reader(const std::string& value) const;
  int quantize_after(size_t op, ScalarQ& q, int& act);
  void make_signed_activations();
  const Node* weight_dequantize(const std::string& value, int64_t rank, int64_t channel_axis) const;
  bool fuse_conv(size_t i);
  bool fuse_gemm(size_t i);
  bool fuse_matmul(size_t i);
  struct IntegerEpilogue {
    int cast = -1, mul = -1, scales = -1, add = -1;  // node indices (add: -1 without a bias)
    std::string a_scale, b_scale, bias;
  };
  bool integer_epilogue(size_t i, int64_t channels, int64_t trailing, IntegerEpilogue& e) const;
  void replace_epilogue(size_t i, const IntegerEpilogue& e, Node fused);
  bool fuse_matmul_integer(size_t i);
  bool fuse_conv_integer(size_t i);
  bool fuse_binary(size_t i);
  std::string int32_bias(const std::string& value, int64_t m, const std::string& base,
                         const std::function<double(int64_t)>& scale_of);
  bool fuse_on_integers(size_t i);
  std::string add_initializer(const std::string& base, Tensor t);
  void replace(size_t q, Node fused, size_t op, int act);
  void fold_constant_dequantize();
  void remove_dead();

  Graph& g_;
  int64_t opset_;
  ValueIndex index_;  // of the graph as loaded; fused nodes replace their Q in place
  std::vector<bool> dead_;
  std::unordered_set<std::string> names_;
  std::list<NamedTensor> new_initializers_;  // stable addresses: index_ points at them
  QdqFusionStats stats_;
};

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

// (x - zero_point) * scale per tensor or per axis, for integer x of up to 32 bits.
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

}  // namespace

Result<QdqFusionStats> apply_qdq_fusion(Graph& graph, const std::map<std::string, int64_t>& opset_imports) {
  auto it = opset_imports.find("");
  if (it == opset_imports.end()) return QdqFusionStats{};
  QdqPass pass(graph, it->second);
  return pass.run();
}

}  // namespace xonnx
