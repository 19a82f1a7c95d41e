// Reference kernel: FlexAttention (domain ai.onnx.preview, version 1).
//
//   scores = (Q @ K^T) * scale            scale defaults to 1/sqrt(head_size)
//   scores = score_mod(scores)            optional GRAPH attribute, one input, one output
//   scores = mask_mod(scores)             optional GRAPH attribute (early drafts of the op)
//   probs  = Softmax(scores, axis=-1)
//   probs  = prob_mod(probs)              optional GRAPH attribute
//   Y      = probs @ V
//
// Q: (B, Hq, L, E), K: (B, Hkv, S, E), V: (B, Hkv, S, Ev), Y: (B, Hq, L, Ev) in V's type.
// Query head h reads K/V head h / (Hq / Hkv). Scores and probabilities are handed to the
// subgraphs in the softmax precision of the function body: double for double Q/K, float
// otherwise. Arithmetic is in double.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "runtime/ops/ref/common.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace {

using ref::check_scratch;
using ref::is_float_type;
using ref::load_float_doubles;
using ref::store_doubles;

struct FlexConfig {
  bool has_scale = false;
  double scale = 0.0;
  std::shared_ptr<GraphBody> score_mod;
  std::shared_ptr<GraphBody> mask_mod;
  std::shared_ptr<GraphBody> prob_mod;
};

Result<std::shared_ptr<GraphBody>> optional_subgraph(const KernelInit& init, const char* name) {
  const Attribute* a = init.attr(name);
  if (a == nullptr) return std::shared_ptr<GraphBody>();
  if (a->type != AttrType::kGraph || !a->g) {
    return invalid_model("attribute '", name, "' must be a graph, got ", attr_type_name(a->type));
  }
  if (a->g->inputs.size() != 1 || a->g->outputs.empty()) {
    return invalid_model("the ", name, " graph must take one input and give one output; it takes ", a->g->inputs.size(),
                         " and gives ", a->g->outputs.size());
  }
  return init.subgraph(name);
}

// Runs a modifier subgraph on `values` (shape `shape`), handing it a tensor of `dtype`;
// replaces `values` with the graph's output converted to double.
Status apply_mod(KernelContext& ctx, const GraphBody& graph, const char* name, DataType dtype, const Shape& shape,
                 std::vector<double>* values) {
  XONNX_ASSIGN_OR_RETURN(Tensor in, Tensor::allocate(dtype, shape));
  store_doubles(&in, *values);
  XONNX_ASSIGN_OR_RETURN(std::vector<Value> outs, ctx.run_subgraph(graph, {Value(in)}));
  if (outs.empty() || !outs[0].is_tensor()) {
    return invalid_model("the ", name, " graph did not produce a tensor");
  }
  const Tensor& out = outs[0].tensor();
  if (out.shape() != shape) {
    return invalid_model("the ", name, " graph must keep the shape ", shape_to_string(shape), ", got ",
                         shape_to_string(out.shape()));
  }
  XONNX_ASSIGN_OR_RETURN(*values, load_float_doubles(out, name));
  return Status::ok();
}

Result<std::unique_ptr<Kernel>> create_flex_attention(const KernelInit& init) {
  FlexConfig cfg;
  if (init.has_attr("scale")) {
    XONNX_ASSIGN_OR_RETURN(float s, init.get_float("scale", 1.0f));
    cfg.has_scale = true;
    cfg.scale = s;
  }
  XONNX_ASSIGN_OR_RETURN(cfg.score_mod, optional_subgraph(init, "score_mod"));
  XONNX_ASSIGN_OR_RETURN(cfg.mask_mod, optional_subgraph(init, "mask_mod"));
  XONNX_ASSIGN_OR_RETURN(cfg.prob_mod, optional_subgraph(init, "prob_mod"));

  return make_kernel([cfg](KernelContext& ctx) -> Status {
    const Tensor& q = ctx.input(0);
    const Tensor& k = ctx.input(1);
    const Tensor& v = ctx.input(2);
    if (!q.defined() || !k.defined() || !v.defined()) {
      return invalid_argument("Q, K and V are required");
    }
    if (q.rank() != 4 || k.rank() != 4 || v.rank() != 4) {
      return invalid_argument("Q, K and V must be rank 4, got ", shape_to_string(q.shape()), ", ",
                              shape_to_string(k.shape()), ", ", shape_to_string(v.shape()));
    }
    if (k.dtype() != q.dtype()) {
      return invalid_argument("K type ", dtype_name(k.dtype()), " differs from Q type ", dtype_name(q.dtype()));
    }
    const int64_t B = q.dim(0), Hq = q.dim(1), L = q.dim(2), E = q.dim(3);
    const int64_t Hkv = k.dim(1), S = k.dim(2), Ev = v.dim(3);
    if (k.dim(0) != B || v.dim(0) != B) {
      return invalid_argument("Q, K and V must share the batch size, got ", B, ", ", k.dim(0), ", ", v.dim(0));
    }
    if (k.dim(3) != E) {
      return invalid_argument("K head size ", k.dim(3), " differs from Q head size ", E);
    }
    if (v.dim(1) != Hkv || v.dim(2) != S) {
      return invalid_argument("V shape ", shape_to_string(v.shape()), " must match K heads and sequence length (", Hkv,
                              ", ", S, ")");
    }
    if (Hkv <= 0 || Hq % Hkv != 0) {
      return invalid_argument("Q heads (", Hq, ") must be a multiple of K/V heads (", Hkv, ")");
    }
    const int64_t G = Hq / Hkv;
    const DataType softmax_type = q.dtype() == DataType::kDouble ? DataType::kDouble : DataType::kFloat;
    XONNX_ASSIGN_OR_RETURN(std::vector<double> qd, load_float_doubles(q, "Q"));
    XONNX_ASSIGN_OR_RETURN(std::vector<double> kd, load_float_doubles(k, "K"));
    XONNX_ASSIGN_OR_RETURN(std::vector<double> vd, load_float_doubles(v, "V"));
    const double scale = cfg.has_scale ? cfg.scale : 1.0 / std::sqrt(static_cast<double>(E));

    const Shape score_shape{B, Hq, L, S};
    XONNX_RETURN_IF_ERROR(check_scratch(ctx, "the attention scores", sizeof(double), {B, Hq, L, S}));
    XONNX_RETURN_IF_ERROR(check_scratch(ctx, "the attention output", sizeof(double), {B, Hq, L, Ev}));
    std::vector<double> scores(static_cast<size_t>(B * Hq * L * S));
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t h = 0; h < Hq; ++h) {
        const double* kh = kd.data() + (b * Hkv + h / G) * S * E;
        for (int64_t l = 0; l < L; ++l) {
          const double* ql = qd.data() + ((b * Hq + h) * L + l) * E;
          double* row = scores.data() + ((b * Hq + h) * L + l) * S;
          for (int64_t s = 0; s < S; ++s) {
            double acc = 0.0;
            for (int64_t e = 0; e < E; ++e) acc += ql[e] * kh[s * E + e];
            row[s] = acc * scale;
          }
        }
      }
    }
    if (cfg.score_mod) {
      XONNX_RETURN_IF_ERROR(apply_mod(ctx, *cfg.score_mod, "score_mod", softmax_type, score_shape, &scores));
    }
    if (cfg.mask_mod) {
      XONNX_RETURN_IF_ERROR(apply_mod(ctx, *cfg.mask_mod, "mask_mod", softmax_type, score_shape, &scores));
    }
    // Softmax over the last axis (a row of all -inf gives NaN, as exp(x - max) does).
    for (int64_t r = 0; r < B * Hq * L; ++r) {
      double* row = scores.data() + r * S;
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t s = 0; s < S; ++s) mx = std::max(mx, row[s]);
      double sum = 0.0;
      for (int64_t s = 0; s < S; ++s) {
        row[s] = std::exp(row[s] - mx);
        sum += row[s];
      }
      for (int64_t s = 0; s < S; ++s) row[s] /= sum;
    }
    if (cfg.prob_mod) {
      XONNX_RETURN_IF_ERROR(apply_mod(ctx, *cfg.prob_mod, "prob_mod", softmax_type, score_shape, &scores));
    }
    std::vector<double> out(static_cast<size_t>(B * Hq * L * Ev), 0.0);
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t h = 0; h < Hq; ++h) {
        const double* vh = vd.data() + (b * Hkv + h / G) * S * Ev;
        for (int64_t l = 0; l < L; ++l) {
          const double* p = scores.data() + ((b * Hq + h) * L + l) * S;
          double* o = out.data() + ((b * Hq + h) * L + l) * Ev;
          for (int64_t s = 0; s < S; ++s) {
            const double w = p[s];
            for (int64_t e = 0; e < Ev; ++e) o[e] += w * vh[s * Ev + e];
          }
        }
      }
    }
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, v.dtype(), {B, Hq, L, Ev}));
    store_doubles(y, out);
    return Status::ok();
  });
}

}  // namespace

void register_flex_attention_ops(OpRegistry& registry) {
  XONNX_REGISTER(registry, "ai.onnx.preview", "FlexAttention", 1, 1, create_flex_attention);
}

}  // namespace xonnx
