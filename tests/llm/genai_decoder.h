// A Llama-style decoder in ONNX Runtime GenAI's CPU int4 form, built in memory with random
// weights, for tests and benchmarks of the LLM path (no file, no Python):
//   Gather embedding -> per layer: (Skip)SimplifiedLayerNormalization, MatMulNBits packed QKV,
//   GroupQueryAttention (rotary inside, packed QKV), MatMulNBits o_proj,
//   SkipSimplifiedLayerNormalization, MatMulNBits gate / up, SiLU (Sigmoid * x), Mul,
//   MatMulNBits down -> final SkipSimplifiedLayerNormalization -> MatMulNBits lm_head.
// Inputs: input_ids int64 [B, S], seqlens_k int32 [B], total_sequence_length int32 [1],
// past_key_values.L.key / .value float [B, KV, P, H]; outputs: logits [B, S, V],
// present.L.key / .value. (GenAI's graphs derive seqlens_k and total_sequence_length from an
// attention_mask with ReduceSum / Shape; they are inputs here.) MatMulNBits weights are int4,
// block 32, accuracy_level 4, as the GenAI builder writes CPU models.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/ir/graph.h"

namespace xonnx {
namespace llmtest {

struct DecoderShape {
  int64_t layers = 2;
  int64_t hidden = 64;
  int64_t heads = 4;
  int64_t kv_heads = 2;
  int64_t intermediate = 128;
  int64_t vocab = 256;
  int64_t context = 64;  // rows of the rotary tables
  // seqlens_k and total_sequence_length computed in the graph from the shapes of input_ids
  // and past_key_values.0.key (present = past + new: no shared buffer) instead of being inputs:
  // a model any engine runs from shapes alone (bench/compare_ort.sh fills integers with zeros).
  bool lengths_from_shapes = false;
  int64_t head_size() const { return hidden / heads; }
};

class DecoderBuilder {
 public:
  explicit DecoderBuilder(const DecoderShape& s) : s_(s) {}

  Model build() {
    Model m;
    m.ir_version = 8;
    m.opset_imports[""] = 17;
    m.opset_imports["com.microsoft"] = 1;
    Graph& g = m.graph;
    const int64_t H = s_.head_size();
    input(g, "input_ids", DataType::kInt64, {"batch_size", "sequence_length"});
    if (s_.lengths_from_shapes) {
      lengths_from_shapes(g);
    } else {
      input(g, "seqlens_k", DataType::kInt32, {"batch_size"});
      input(g, "total_sequence_length", DataType::kInt32, {"1"});
    }
    const std::vector<std::string> cache = {"batch_size", std::to_string(s_.kv_heads), "past_sequence_length",
                                            std::to_string(H)};
    for (int64_t l = 0; l < s_.layers; ++l) {
      input(g, past(l, "key"), DataType::kFloat, cache);
      input(g, past(l, "value"), DataType::kFloat, cache);
    }
    output(g, "logits");
    for (int64_t l = 0; l < s_.layers; ++l) {
      output(g, present(l, "key"));
      output(g, present(l, "value"));
    }
    g.initializers.push_back({"embed", random({s_.vocab, s_.hidden}, 0.5f)});
    rope_tables(g, H);
    node(g, "Gather", "", {"embed", "input_ids"}, {"x0"});
    std::string hidden_in = "x0", residual;
    for (int64_t l = 0; l < s_.layers; ++l) {
      const std::string p = "l" + std::to_string(l) + ".";
      g.initializers.push_back({p + "ln1", random({s_.hidden}, 0.2f, 1.0f)});
      g.initializers.push_back({p + "ln2", random({s_.hidden}, 0.2f, 1.0f)});
      if (l == 0) {
        node(g, "SimplifiedLayerNormalization", "", {hidden_in, p + "ln1"}, {p + "h"}, {attr_f("epsilon", 1e-6f)});
        residual = hidden_in;
      } else {
        node(g, "SkipSimplifiedLayerNormalization", "com.microsoft", {hidden_in, residual, p + "ln1"},
             {p + "h", "", "", p + "res1"}, {attr_f("epsilon", 1e-6f)});
        residual = p + "res1";
      }
      matmul_nbits(g, p + "qkv", p + "h", s_.hidden, (s_.heads + 2 * s_.kv_heads) * H);
      node(g, "GroupQueryAttention", "com.microsoft",
           {p + "qkv", "", "", past(l, "key"), past(l, "value"), "seqlens_k", "total_sequence_length", "cos", "sin"},
           {p + "attn", present(l, "key"), present(l, "value")},
           {attr_i("num_heads", s_.heads), attr_i("kv_num_heads", s_.kv_heads), attr_i("do_rotary", 1)});
      matmul_nbits(g, p + "o", p + "attn", s_.heads * H, s_.hidden);
      node(g, "SkipSimplifiedLayerNormalization", "com.microsoft", {p + "o", residual, p + "ln2"},
           {p + "h2", "", "", p + "res2"}, {attr_f("epsilon", 1e-6f)});
      residual = p + "res2";
      matmul_nbits(g, p + "gate", p + "h2", s_.hidden, s_.intermediate);
      matmul_nbits(g, p + "up", p + "h2", s_.hidden, s_.intermediate);
      node(g, "Sigmoid", "", {p + "gate"}, {p + "sig"});
      node(g, "Mul", "", {p + "gate", p + "sig"}, {p + "silu"});
      node(g, "Mul", "", {p + "silu", p + "up"}, {p + "act"});
      matmul_nbits(g, p + "down", p + "act", s_.intermediate, s_.hidden);
      hidden_in = p + "down";
    }
    g.initializers.push_back({"final_ln", random({s_.hidden}, 0.2f, 1.0f)});
    node(g, "SkipSimplifiedLayerNormalization", "com.microsoft", {hidden_in, residual, "final_ln"}, {"hf"},
         {attr_f("epsilon", 1e-6f)});
    matmul_nbits(g, "lm_head", "hf", s_.hidden, s_.vocab);
    g.nodes.back().outputs[0] = "logits";
    return m;
  }

  static std::string past(int64_t l, const char* kv) { return "past_key_values." + std::to_string(l) + "." + kv; }
  static std::string present(int64_t l, const char* kv) { return "present." + std::to_string(l) + "." + kv; }

 private:
  static Attribute attr_i(const char* n, int64_t v) {
    Attribute a;
    a.name = n;
    a.type = AttrType::kInt;
    a.i = v;
    return a;
  }
  static Attribute attr_f(const char* n, float v) {
    Attribute a;
    a.name = n;
    a.type = AttrType::kFloat;
    a.f = v;
    return a;
  }
  // dims: a number, or a symbol such as "batch_size".
  static void input(Graph& g, const std::string& name, DataType t, std::vector<std::string> dims) {
    ValueInfo v;
    v.name = name;
    v.type.kind = TypeInfo::Kind::kTensor;
    v.type.elem_type = t;
    v.type.has_shape = true;
    for (const std::string& d : dims) {
      Dim dim;
      if (!d.empty() && d[0] >= '0' && d[0] <= '9') {
        dim.value = std::stoll(d);
      } else {
        dim.param = d;
      }
      v.type.dims.push_back(dim);
    }
    g.inputs.push_back(v);
  }
  static void output(Graph& g, const std::string& name) {
    ValueInfo v;
    v.name = name;
    g.outputs.push_back(v);
  }
  void node(Graph& g, const char* op, const char* domain, std::vector<std::string> in, std::vector<std::string> out,
            std::vector<Attribute> attrs = {}) {
    Node n;
    n.op_type = op;
    n.domain = domain;
    n.name = std::string(op) + "_" + std::to_string(g.nodes.size());
    n.inputs = std::move(in);
    n.outputs = std::move(out);
    n.attributes = std::move(attrs);
    g.nodes.push_back(std::move(n));
  }
  // total = past_key_values.0.key's length + input_ids' length; seqlens_k = total - 1 ([1]).
  void lengths_from_shapes(Graph& g) {
    g.initializers.push_back({"len.axis1", Tensor::from_vector<int64_t>({1}, {1})});
    g.initializers.push_back({"len.axis2", Tensor::from_vector<int64_t>({2}, {1})});
    g.initializers.push_back({"len.one", Tensor::from_vector<int32_t>({1}, {1})});
    node(g, "Shape", "", {"input_ids"}, {"len.ids_shape"});
    node(g, "Gather", "", {"len.ids_shape", "len.axis1"}, {"len.new"});
    node(g, "Shape", "", {past(0, "key")}, {"len.past_shape"});
    node(g, "Gather", "", {"len.past_shape", "len.axis2"}, {"len.past"});
    node(g, "Add", "", {"len.past", "len.new"}, {"len.total64"});
    Attribute to;
    to.name = "to";
    to.type = AttrType::kInt;
    to.i = static_cast<int64_t>(DataType::kInt32);
    node(g, "Cast", "", {"len.total64"}, {"total_sequence_length"}, {to});
    node(g, "Sub", "", {"total_sequence_length", "len.one"}, {"seqlens_k"});
  }

  uint32_t next() {
    state_ = state_ * 1664525u + 1013904223u;
    return state_ >> 8;
  }
  Tensor random(Shape shape, float amplitude, float center = 0.0f) {
    std::vector<float> v(static_cast<size_t>(shape_numel(shape)));
    for (float& f : v) f = center + amplitude * (static_cast<float>(next() % 65536) / 32768.0f - 1.0f);
    return Tensor::from_vector<float>(v, std::move(shape));
  }
  void rope_tables(Graph& g, int64_t H) {
    const int64_t half = H / 2;
    std::vector<float> c(static_cast<size_t>(s_.context * half)), s(c.size());
    for (int64_t p = 0; p < s_.context; ++p)
      for (int64_t i = 0; i < half; ++i) {
        const double angle = p / std::pow(10000.0, static_cast<double>(i) / half);
        c[p * half + i] = static_cast<float>(std::cos(angle));
        s[p * half + i] = static_cast<float>(std::sin(angle));
      }
    g.initializers.push_back({"cos", Tensor::from_vector<float>(c, {s_.context, half})});
    g.initializers.push_back({"sin", Tensor::from_vector<float>(s, {s_.context, half})});
  }
  // y = x * W for W [K, N] int4 (block 32, symmetric), scales ~ 1 / sqrt(K).
  void matmul_nbits(Graph& g, const std::string& name, const std::string& x, int64_t K, int64_t N) {
    const int64_t blocks = (K + 31) / 32;
    std::vector<uint8_t> w(static_cast<size_t>(N * blocks * 16));
    for (uint8_t& b : w) b = static_cast<uint8_t>(next());
    std::vector<float> sc(static_cast<size_t>(N * blocks));
    for (float& f : sc) f = (0.5f + static_cast<float>(next() % 1024) / 1024.0f) * 0.25f / std::sqrt(float(K));
    g.initializers.push_back({name + ".w", Tensor::from_vector<uint8_t>(w, {N, blocks, 16})});
    g.initializers.push_back({name + ".s", Tensor::from_vector<float>(sc, {N * blocks})});
    node(g, "MatMulNBits", "com.microsoft", {x, name + ".w", name + ".s"}, {name},
         {attr_i("K", K), attr_i("N", N), attr_i("bits", 4), attr_i("block_size", 32), attr_i("accuracy_level", 4)});
  }

  DecoderShape s_;
  uint32_t state_ = 12345;
};

}  // namespace llmtest
}  // namespace xonnx

#include <memory>

#include "runtime/exec/session.h"

namespace xonnx {
namespace llmtest {

// Drives a DecoderBuilder graph the way ORT GenAI does with past_present_share_buffer: one
// max-length K/V buffer per layer and kind, passed as past and bound as present, so tokens are
// appended in place. step() runs S tokens; inputs and outputs are reused between steps.
class SharedBufferLoop {
 public:
  SharedBufferLoop(Session& session, const DecoderShape& s, int64_t max_length)
      : session_(session), s_(s), max_length_(max_length) {}

  Status init() {
    const Shape cache{1, s_.kv_heads, max_length_, s_.head_size()};
    inputs_.assign(session_.inputs().size(), Value());
    for (size_t i = 0; i < session_.inputs().size(); ++i) {
      const std::string& name = session_.inputs()[i].name;
      if (name.rfind("past_key_values.", 0) != 0) continue;
      XONNX_ASSIGN_OR_RETURN(Tensor buffer, Tensor::allocate(DataType::kFloat, cache));
      const std::string present = "present." + name.substr(16);
      XONNX_RETURN_IF_ERROR(session_.bind_output(present, buffer));
      inputs_[i] = Value(std::move(buffer));
    }
    return Status::ok();
  }

  // Runs `tokens` (appended after the `length()` cached ones); logits() then holds [1, S, V].
  Status step(const std::vector<int64_t>& tokens) {
    const int64_t S = static_cast<int64_t>(tokens.size());
    const int64_t total = length_ + S;
    if (total > max_length_) return invalid_argument("the context of ", max_length_, " tokens is full");
    for (size_t i = 0; i < session_.inputs().size(); ++i) {
      const std::string& name = session_.inputs()[i].name;
      Value& v = inputs_[i];
      if (name == "input_ids") {
        if (!v.is_tensor() || v.tensor().dim(1) != S) v = Value(Tensor::from_vector<int64_t>(tokens, {1, S}));
        std::copy(tokens.begin(), tokens.end(), v.mutable_tensor()->data<int64_t>());
      } else if (name == "seqlens_k" || name == "total_sequence_length") {
        if (!v.is_tensor()) v = Value(Tensor::from_vector<int32_t>({0}, {1}));
        v.mutable_tensor()->data<int32_t>()[0] = static_cast<int32_t>(name == "seqlens_k" ? total - 1 : total);
      }
    }
    XONNX_RETURN_IF_ERROR(session_.run(inputs_, outputs_));
    length_ = total;
    return Status::ok();
  }

  // Forgets the cached tokens past `length` (the next step overwrites them in place).
  void rewind(int64_t length) { length_ = std::min(length, length_); }

  const Tensor& logits() const { return outputs_[0].tensor(); }
  int64_t length() const { return length_; }

 private:
  Session& session_;
  DecoderShape s_;
  int64_t max_length_;
  int64_t length_ = 0;
  std::vector<Value> inputs_, outputs_;
};

}  // namespace llmtest
}  // namespace xonnx
