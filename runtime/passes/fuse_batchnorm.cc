// Folds an inference BatchNormalization into the Conv, ConvTranspose or 2-D Gemm that feeds it:
// y = (x - mean) * s + bias with s = scale / sqrt(var + eps) per output channel becomes scaled
// weights and a new bias. The producer must have no other reader; all parameters float32
// constants. New initializers are added (the old ones may be shared; DCE drops them if not).
// fuse_conv_scale_bias folds a constant Mul or Add after a Conv (a scalar or one value per output
// channel: PP-LCNet's learnable affine blocks, exported BatchNorms split in two) the same way.
#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>

#include "runtime/ir/graph_edit.h"
#include "runtime/passes/passes.h"

namespace xonnx {
namespace passes {

namespace {

const Tensor* float_constant(const Graph& g, const std::string& name) {
  const Tensor* t = constant_tensor(g, name);
  // storage(), not raw_data(): the latter would copy a weight still in the model file.
  return t && t->dtype() == DataType::kFloat && t->storage() ? t : nullptr;
}

// The pass's new initializers' names, unique in the graph. The allocator is built on the first
// one: building it walks every name of the graph, once per pass run rather than per initializer.
class NewInitializers {
 public:
  explicit NewInitializers(Graph& g) : g_(g) {}
  std::string add(const std::string& base, Tensor tensor) {
    if (!names_) names_.emplace(g_);
    return add_initializer(g_, *names_, base, std::move(tensor));
  }

 private:
  Graph& g_;
  std::optional<NameAllocator> names_;
};

// Per-channel s and shift = bias - mean * s, in double; false when BN is not foldable.
bool bn_coefficients(const Graph& g, const Node& bn, int64_t channels, std::vector<double>* s,
                     std::vector<double>* shift) {
  if (bn.inputs.size() < 5) return false;
  const Tensor* scale = float_constant(g, bn.inputs[1]);
  const Tensor* bias = float_constant(g, bn.inputs[2]);
  const Tensor* mean = float_constant(g, bn.inputs[3]);
  const Tensor* var = float_constant(g, bn.inputs[4]);
  if (!scale || !bias || !mean || !var) return false;
  for (const Tensor* t : {scale, bias, mean, var}) {
    if (t->rank() != 1 || t->dim(0) != channels) return false;
  }
  const double eps = attr_float_or(bn, "epsilon", 1e-5f);
  s->resize(static_cast<size_t>(channels));
  shift->resize(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c) {
    const double sc = scale->data<float>()[c] / std::sqrt(var->data<float>()[c] + eps);
    (*s)[static_cast<size_t>(c)] = sc;
    (*shift)[static_cast<size_t>(c)] = bias->data<float>()[c] - mean->data<float>()[c] * sc;
  }
  return true;
}

// Inference form with only Y used (training_mode 0, spatial 1 in old opsets).
bool is_inference_bn(const Node& bn) {
  if (bn.op_type != "BatchNormalization" || !bn.domain.empty() || bn.outputs.empty() || bn.outputs[0].empty()) {
    return false;
  }
  for (size_t k = 1; k < bn.outputs.size(); ++k) {
    if (!bn.outputs[k].empty()) return false;
  }
  return attr_int_or(bn, "training_mode", 0) == 0 && attr_int_or(bn, "spatial", 1) == 1;
}

// Scales W along its output-channel axis. Conv: W[M, C/g, k...], channel = index along dim 0.
// ConvTranspose: W[C_in, M/g, k...], channel = group * M/g + j. The scaled weights are made when
// read (Storage::derived_floats): the kernels pack them straight from the model's
// bytes, so no scaled copy is allocated and faulted in (mnasnet1_0's 52 folds took 39 of its 88 ms
// session creation, most of it in page faults).
Tensor scaled_weights(const Tensor& w, const std::vector<double>& s, bool transpose, int64_t group) {
  const int64_t d0 = w.dim(0), d1 = w.dim(1);
  const int64_t inner = d0 * d1 == 0 ? 0 : w.numel() / (d0 * d1);
  const size_t row_floats = static_cast<size_t>(d1 * inner);
  // Runs of one factor: a row of W for a Conv, `inner` values for a ConvTranspose.
  const size_t run = transpose ? static_cast<size_t>(inner) : row_floats;
  const size_t per_group = static_cast<size_t>(d0 / group);
  auto fill = [w, s, transpose, inner, d1, row_floats, run, per_group](size_t first, size_t n, float* out) {
    w.read_bytes(first * sizeof(float), n * sizeof(float), out);
    for (size_t p = first; p < first + n;) {
      const size_t end = std::min(first + n, (p / run + 1) * run), row = p / row_floats;
      const size_t channel =
          transpose ? row / per_group * static_cast<size_t>(d1) + p % row_floats / static_cast<size_t>(inner) : row;
      const double sc = s[channel];
      for (size_t i = p; i < end; ++i) out[i - first] = static_cast<float>(out[i - first] * sc);
      p = end;
    }
  };
  return Tensor(DataType::kFloat, w.shape(),
                Storage::derived_floats(static_cast<size_t>(w.numel()), std::move(fill), w.storage()));
}

// bias' = bias * s + shift (bias absent: 0), as a [channels] tensor.
Tensor fused_bias(const Tensor* bias, const std::vector<double>& s, const std::vector<double>& shift) {
  std::vector<float> v(s.size());
  for (size_t c = 0; c < s.size(); ++c) {
    const double b = bias ? bias->data<float>()[bias->numel() == 1 ? 0 : c] : 0.0;
    v[c] = static_cast<float>(b * s[c] + shift[c]);
  }
  return Tensor::from_vector<float>(v, {static_cast<int64_t>(v.size())});
}

// Per-channel s and shift of the node after a Conv, given its output channels; false when the
// node's parameters do not fit.
using Coefficients =
    std::function<bool(int64_t channels, int64_t rank, std::vector<double>* s, std::vector<double>* shift)>;

// Conv/ConvTranspose -> node with coefficients `coefficients` (y = conv * s + shift per output
// channel). Returns false when the pattern does not apply.
Result<bool> fold_into_conv(Graph& g, NewInitializers& added, Node& conv, const Coefficients& coefficients) {
  const bool transpose = conv.op_type == "ConvTranspose";
  if (conv.inputs.size() < 2) return false;
  const Tensor* w = float_constant(g, conv.inputs[1]);
  if (!w || w->rank() < 3) return false;
  const int64_t group = attr_int_or(conv, "group", 1);
  if (group < 1 || (transpose && w->dim(0) % group != 0)) return false;
  const int64_t channels = transpose ? w->dim(1) * group : w->dim(0);
  const Tensor* bias = nullptr;
  if (conv.inputs.size() > 2 && !conv.inputs[2].empty()) {
    bias = float_constant(g, conv.inputs[2]);
    if (!bias || bias->rank() != 1 || bias->dim(0) != channels) return false;
  }
  std::vector<double> s, shift;
  if (!coefficients(channels, w->rank(), &s, &shift)) return false;
  // Both tensors are made before add_initializer, which may move `w` and `bias` (they point into
  // g.initializers). A shift alone (Add) leaves W as it is: no copy of an unchanged weight.
  Tensor new_b = fused_bias(bias, s, shift);
  std::string w_name = conv.inputs[1];
  if (std::any_of(s.begin(), s.end(), [](double v) { return v != 1.0; })) {
    w_name = added.add(conv.inputs[1] + "_bn", scaled_weights(*w, s, transpose, group));
  }
  const std::string b_name = added.add(bias ? conv.inputs[2] + "_bn" : conv.inputs[1] + "_bn_bias", std::move(new_b));
  conv.inputs.resize(3);
  conv.inputs[1] = w_name;
  conv.inputs[2] = b_name;
  return true;
}

// Gemm -> BN on a 2-D output [N, M]: scale B's output columns, fold C into the new C.
Result<bool> fold_into_gemm(Graph& g, NewInitializers& added, Node& gemm, const Node& bn) {
  if (gemm.inputs.size() < 2) return false;
  const Tensor* b = float_constant(g, gemm.inputs[1]);
  if (!b || b->rank() != 2) return false;
  const bool trans_b = attr_int_or(gemm, "transB", 0) != 0;
  const int64_t channels = trans_b ? b->dim(0) : b->dim(1);
  const Tensor* c = nullptr;
  if (gemm.inputs.size() > 2 && !gemm.inputs[2].empty()) {
    c = float_constant(g, gemm.inputs[2]);
    // Only a C shared by every row ([], [1], [M], [1, M]) folds into a per-channel bias.
    if (!c || c->rank() > 2 || (c->rank() == 2 && c->dim(0) != 1) || (c->numel() != 1 && c->numel() != channels)) {
      return false;
    }
  }
  std::vector<double> s, shift;
  if (!bn_coefficients(g, bn, channels, &s, &shift)) return false;
  XONNX_ASSIGN_OR_RETURN(Tensor new_b, Tensor::allocate(DataType::kFloat, b->shape()));
  const float* src = b->data<float>();
  float* dst = new_b.data<float>();
  const int64_t rows = b->dim(0), cols = b->dim(1);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t k = 0; k < cols; ++k) {
      const double sc = s[static_cast<size_t>(trans_b ? r : k)];
      dst[r * cols + k] = static_cast<float>(src[r * cols + k] * sc);
    }
  }
  const double beta = attr_float_or(gemm, "beta", 1.0f);
  std::vector<double> scaled_c(s.size(), 0.0);
  if (c) {
    for (size_t m = 0; m < s.size(); ++m) {
      scaled_c[m] = beta * c->data<float>()[c->numel() == 1 ? 0 : m];
    }
  }
  std::vector<float> new_c(s.size());
  for (size_t m = 0; m < s.size(); ++m) {
    new_c[m] = static_cast<float>(scaled_c[m] * s[m] + shift[m]);
  }
  const std::string b_name = added.add(gemm.inputs[1] + "_bn", std::move(new_b));
  const std::string c_name =
      added.add((c ? gemm.inputs[2] : gemm.inputs[1]) + "_bn_bias", Tensor::from_vector<float>(new_c, {channels}));
  gemm.inputs.resize(3);
  gemm.inputs[1] = b_name;
  gemm.inputs[2] = c_name;
  std::vector<Attribute> attrs;
  for (const Attribute& a : gemm.attributes) {
    if (a.name != "beta") attrs.push_back(a);
  }
  gemm.attributes = std::move(attrs);  // beta is folded into C (default 1)
  return true;
}

}  // namespace

Result<bool> fuse_batchnorm(Model& model, PassContext& ctx) {
  Graph& g = model.graph;
  int fused = 0;
  std::vector<bool> dead(g.nodes.size(), false);
  GraphIndex index(g);
  NewInitializers added(g);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& bn = g.nodes[i];
    if (!is_inference_bn(bn) || bn.inputs.empty()) continue;
    const std::string& x = bn.inputs[0];
    const int p = index.producer(x);
    if (p < 0 || dead[static_cast<size_t>(p)] || index.use_count(x) != 1) continue;
    Node& producer = g.nodes[static_cast<size_t>(p)];
    if (!producer.domain.empty() || producer.outputs.size() != 1) continue;
    Result<bool> done = false;
    if (producer.op_type == "Conv" || producer.op_type == "ConvTranspose") {
      done = fold_into_conv(g, added, producer,
                            [&](int64_t channels, int64_t, std::vector<double>* s, std::vector<double>* shift) {
                              return bn_coefficients(g, bn, channels, s, shift);
                            });
    } else if (producer.op_type == "Gemm") {
      done = fold_into_gemm(g, added, producer, bn);
    }
    if (!done.is_ok()) return done.status().with_context(bn.describe() + ": ");
    if (!done.value()) continue;
    producer.outputs[0] = bn.outputs[0];
    dead[i] = true;
    ++fused;
  }
  erase_nodes(g, dead);
  if (fused > 0) ctx.note("folded " + std::to_string(fused) + " BatchNormalization nodes");
  return fused > 0;
}

namespace {

// The per-channel values of `t` broadcast against a Conv output [N, channels, spatial...] of
// rank `rank`: a scalar, or `channels` values along axis 1 (shape [channels, 1...] or
// [1, channels, 1...], right-aligned). Empty when `t` broadcasts any other way.
std::vector<double> per_channel(const Tensor& t, int64_t channels, int64_t rank) {
  if (t.numel() == 1) return std::vector<double>(static_cast<size_t>(channels), t.data<float>()[0]);
  const int64_t t_rank = static_cast<int64_t>(t.rank());
  if (t.numel() != channels || t_rank > rank || t_rank < rank - 1) return {};
  const int64_t channel_axis = t_rank - (rank - 1);  // axis 1 of the output, right-aligned
  for (int64_t d = 0; d < t_rank; ++d) {
    if (t.dim(d) != (d == channel_axis ? channels : 1)) return {};
  }
  const float* v = t.data<float>();
  return std::vector<double>(v, v + channels);
}

}  // namespace

Result<bool> fuse_conv_scale_bias(Model& model, PassContext& ctx) {
  Graph& g = model.graph;
  int fused = 0;
  std::vector<bool> dead(g.nodes.size(), false);
  GraphIndex index(g);
  NewInitializers added(g);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (!n.domain.empty() || (n.op_type != "Mul" && n.op_type != "Add") || n.inputs.size() != 2 ||
        n.outputs.size() != 1) {
      continue;
    }
    for (size_t k = 0; k < 2; ++k) {
      const std::string& x = n.inputs[k];
      const int p = index.producer(x);
      if (p < 0 || dead[static_cast<size_t>(p)] || index.use_count(x) != 1) continue;
      Node& producer = g.nodes[static_cast<size_t>(p)];
      if (!producer.domain.empty() || producer.outputs.size() != 1 ||
          (producer.op_type != "Conv" && producer.op_type != "ConvTranspose")) {
        continue;
      }
      const Tensor* c = float_constant(g, n.inputs[1 - k]);
      if (!c) continue;
      const bool scale = n.op_type == "Mul";
      XONNX_ASSIGN_OR_RETURN(bool done, fold_into_conv(g, added, producer,
                                                       [&](int64_t channels, int64_t rank, std::vector<double>* s,
                                                           std::vector<double>* shift) {
                                                         const std::vector<double> v = per_channel(*c, channels, rank);
                                                         if (v.empty()) return false;
                                                         *s = scale ? v : std::vector<double>(v.size(), 1.0);
                                                         *shift = scale ? std::vector<double>(v.size(), 0.0) : v;
                                                         return true;
                                                       }));
      if (!done) continue;
      producer.outputs[0] = n.outputs[0];
      dead[i] = true;
      ++fused;
      break;
    }
  }
  erase_nodes(g, dead);
  if (fused > 0) ctx.note("folded " + std::to_string(fused) + " constant Mul / Add nodes into their Conv");
  return fused > 0;
}

}  // namespace passes
}  // namespace xonnx
