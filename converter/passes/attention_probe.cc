#include "converter/passes/attention_probe.h"

#include <array>
#include <sstream>

namespace xonnx {
namespace convert {
namespace {

bool is_int_type(DataType t) { return t == DataType::kInt64 || t == DataType::kInt32; }

std::string case_name(int64_t batch, int64_t past, int64_t seq) {
  std::ostringstream os;
  os << "batch " << batch << ", " << past << " cached + " << seq << " new tokens";
  return os.str();
}

std::string dims_text(const std::vector<int64_t>& v) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
  os << "]";
  return os.str();
}

// A Reshape target as the output shape it gives `input` (0 copies, -1 infers; allowzero 0).
Result<std::vector<int64_t>> reshape_result(std::vector<int64_t> target, const std::vector<int64_t>& input) {
  int64_t total = 1, known = 1;
  int infer = -1;
  for (int64_t d : input) total *= d;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == 0) {
      if (i >= input.size()) return invalid_argument("target ", dims_text(target), " copies a dim the input lacks");
      target[i] = input[i];
    }
    if (target[i] == -1) {
      if (infer >= 0) return invalid_argument("target ", dims_text(target), " has two -1");
      infer = static_cast<int>(i);
    } else {
      known *= target[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || total % known) return invalid_argument("target ", dims_text(target), " does not divide ", total);
    target[static_cast<size_t>(infer)] = total / known;
  }
  return target;
}

Tensor zeros_f32(Shape s) {
  const size_t n = static_cast<size_t>(shape_numel(s));  // before the shape is moved away
  return Tensor::from_vector<float>(std::vector<float>(n, 0.0f), std::move(s));
}

}  // namespace

Result<DecoderInputs> decoder_inputs(const Graph& g, const GraphIndex& index, const ShapeFacts& facts,
                                     const std::set<std::string>& past) {
  DecoderInputs io;
  std::vector<const ValueInfo*> other_ints;
  for (const ValueInfo& vi : g.inputs) {
    if (g.find_initializer(vi.name)) continue;
    const std::vector<Dim>* d = facts.dims(vi.name);
    const TypeInfo* t = facts.type(vi.name);
    if (past.count(vi.name)) {
      if (!d || d->size() != 4 || !(*d)[1].known() || !(*d)[3].known()) {
        return invalid_argument("the past K/V input '", vi.name,
                                "' is not declared [B, heads, past, head size] with fixed heads and head size");
      }
      io.past[vi.name] = {(*d)[1].value, (*d)[3].value};
      continue;
    }
    if (t && is_int_type(t->elem_type) && d && d->size() == 2) {
      bool embedding = false;
      for (int r : index.consumers(vi.name)) {
        const Node& n = g.nodes[static_cast<size_t>(r)];
        embedding = embedding || (n.op_type == "Gather" && n.inputs.size() == 2 && n.inputs[1] == vi.name &&
                                  constant_tensor(g, n.inputs[0]));
      }
      if (embedding) {
        if (!io.input_ids.empty())
          return invalid_argument("two token-id inputs: '", io.input_ids, "' and '", vi.name, "'");
        if (t->elem_type != DataType::kInt64) return invalid_argument("the token ids '", vi.name, "' are not int64");
        io.input_ids = vi.name;
      } else {
        other_ints.push_back(&vi);
      }
      continue;
    }
    return invalid_argument("the input '", vi.name,
                            "' has no role in a decoder step (token ids, attention mask, position ids or past K/V)");
  }
  if (io.input_ids.empty()) return invalid_argument("no int64 [B, S] input feeds an embedding Gather (the token ids)");
  const Dim& seq = (*facts.dims(io.input_ids))[1];
  for (const ValueInfo* vi : other_ints) {
    const Dim& d1 = (*facts.dims(vi->name))[1];
    const bool same_length =
        (!seq.param.empty() && d1.param == seq.param) || (seq.known() && d1.known() && seq.value == d1.value);
    std::string& slot = same_length ? io.position_ids : io.attention_mask;
    if (!slot.empty())
      return invalid_argument("two ", same_length ? "position-id" : "attention-mask", " inputs: '", slot, "' and '",
                              vi->name, "'");
    slot = vi->name;
  }
  if (!io.position_ids.empty() && facts.type(io.position_ids)->elem_type != DataType::kInt64) {
    return invalid_argument("the position ids '", io.position_ids, "' are not int64");
  }
  return io;
}

DecoderProbes::DecoderProbes(const Model& model, const ShapeFacts& facts, const DecoderInputs& io)
    : model_(model), facts_(facts) {
  const Graph& g = model.graph;
  for (const auto& [batch, past, seq] : std::vector<std::array<int64_t, 3>>{{2, 0, 5}, {1, 4, 1}, {2, 3, 2}}) {
    Case c{batch, past, seq, Probe(), nullptr};
    const int64_t total = past + seq;
    auto bind_dims = [&c, &g](const std::string& name, const std::vector<int64_t>& sizes) {
      const ValueInfo* vi = find_value_info(g, name);
      if (!vi) return;
      for (size_t i = 0; i < vi->type.dims.size() && i < sizes.size(); ++i) {
        const Dim& d = vi->type.dims[i];
        if (!d.known() && !d.param.empty() && sizes[i] >= 0) c.probe.symbols.emplace(d.param, sizes[i]);
      }
    };
    c.probe.pinned[io.input_ids] = probe_filled_i64({batch, seq}, 0);
    bind_dims(io.input_ids, {batch, seq});
    if (!io.attention_mask.empty()) {
      Tensor ones = probe_filled_i64({batch, total}, 1);
      if (facts.type(io.attention_mask)->elem_type == DataType::kInt32) {
        ones =
            Tensor::from_vector<int32_t>(std::vector<int32_t>(static_cast<size_t>(batch * total), 1), {batch, total});
      }
      c.probe.pinned[io.attention_mask] = ones;
      bind_dims(io.attention_mask, {batch, total});
    }
    if (!io.position_ids.empty()) {
      c.probe.pinned[io.position_ids] = probe_ranges_i64(batch, past, seq);
      bind_dims(io.position_ids, {batch, seq});
    }
    for (const auto& [name, kv] : io.past) {
      c.probe.pinned[name] = zeros_f32({batch, kv.first, past, kv.second});
      bind_dims(name, {batch, -1, past, -1});
    }
    // Presents declare the total length (the one place it is named when there is no mask input).
    for (const ValueInfo& out : g.outputs) {
      if (out.type.dims.size() == 4) bind_dims(out.name, {batch, -1, total, -1});
    }
    c.values = std::make_unique<ValueProbe>(model_, &facts_);
    cases_.push_back(std::move(c));
  }
}

Result<std::vector<int64_t>> DecoderProbes::ints(Case& c, const std::string& value) {
  auto t = c.values->evaluate(value, c.probe);
  if (!t.is_ok()) return t.status().with_context("'" + value + "': ");
  auto v = t->to_int64_vector();
  if (!v.is_ok()) return v.status().with_context("'" + value + "': ");
  return v;
}

Status DecoderProbes::check_mask(Case& c, const AttentionMatch& m, int64_t heads) {
  auto t = c.values->evaluate(m.mask, c.probe);
  if (!t.is_ok()) return t.status().with_context("the mask '" + m.mask + "': ");
  const Tensor& mask = *t;
  const bool additive = m.mask_kind == AttentionMatch::Mask::kAdditive;
  if (additive ? mask.dtype() != DataType::kFloat : mask.dtype() != DataType::kBool) {
    return invalid_argument("the mask '", m.mask, "' is ", dtype_name(mask.dtype()), ", not ",
                            additive ? "float32" : "bool");
  }
  const int64_t total = c.past + c.seq;
  const int64_t want[4] = {c.batch, heads, c.seq, total};
  if (mask.rank() > 4) return invalid_argument("the mask is ", shape_to_string(mask.shape()), ", more than 4-D");
  int64_t stride[4] = {0, 0, 0, 0};
  int64_t step = 1;
  for (int k = 3; k >= 0; --k) {
    const int64_t from_end = 3 - k;
    const int64_t md =
        from_end < static_cast<int64_t>(mask.rank()) ? mask.dim(mask.rank() - 1 - static_cast<size_t>(from_end)) : 1;
    if (md != 1 && md != want[k]) {
      return invalid_argument("the mask is ", shape_to_string(mask.shape()), ", which does not broadcast to [", c.batch,
                              ", ", heads, ", ", c.seq, ", ", total, "]");
    }
    stride[k] = md == 1 ? 0 : step;
    step *= md;
  }
  for (int64_t b = 0; b < c.batch; ++b) {
    for (int64_t h = 0; h < heads; ++h) {
      for (int64_t i = 0; i < c.seq; ++i) {
        for (int64_t j = 0; j < total; ++j) {
          const int64_t at = b * stride[0] + h * stride[1] + i * stride[2] + j * stride[3];
          const bool visible = j <= c.past + i;
          bool ok;
          if (additive) {
            const float v = mask.data<float>()[at];
            ok = visible ? v == 0.0f : v <= -1e4f;
          } else {
            const bool set = mask.data<bool>()[at];
            ok = (m.mask_kind == AttentionMatch::Mask::kVisibleWhereTrue) == (set == visible);
          }
          if (!ok) {
            return invalid_argument("the mask '", m.mask, "' is not causal: for query ", i, " key ", j, " (batch ", b,
                                    ", head ", h, ") it ", visible ? "hides" : "shows", " the key");
          }
        }
      }
    }
  }
  return Status::ok();
}

Status DecoderProbes::check_positions(Case& c, const RotaryUse& r) {
  XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> pos, ints(c, r.position_ids));
  if (pos.size() == 1) {
    if (pos[0] != c.past)
      return invalid_argument("the rotary position offset is ", pos[0], ", not the ", c.past, " cached tokens");
    return Status::ok();
  }
  if (static_cast<int64_t>(pos.size()) != c.batch * c.seq) {
    return invalid_argument("the rotary positions have ", pos.size(), " elements, not [", c.batch, ", ", c.seq, "]");
  }
  for (int64_t b = 0; b < c.batch; ++b) {
    for (int64_t i = 0; i < c.seq; ++i) {
      if (pos[static_cast<size_t>(b * c.seq + i)] != c.past + i) {
        return invalid_argument("the rotary position of token ", i, " is ", pos[static_cast<size_t>(b * c.seq + i)],
                                ", not ", c.past + i, " (past + index)");
      }
    }
  }
  return Status::ok();
}

Result<AttentionShape> DecoderProbes::check(const AttentionMatch& m) {
  AttentionShape shape;
  // The projections' widths (the last dim of q_in / k_in / v_in) must be fixed.
  auto width = [this](const std::string& v) -> int64_t {
    const std::vector<Dim>* d = facts_.dims(v);
    return d && d->size() == 3 && d->back().known() ? d->back().value : -1;
  };
  const int64_t dq = width(m.q.in), dk = width(m.k.in), dv = width(m.v.in);
  if (dq <= 0 || dk <= 0 || dv <= 0)
    return invalid_argument("the Q / K / V projections are not known to be [B, S, fixed width]");
  for (Case& c : cases_) {
    const std::string where = " (" + case_name(c.batch, c.past, c.seq) + ")";
    const int64_t total = c.past + c.seq;
    auto split = [&](const HeadSplit& h, int64_t width_in, const char* what, int64_t* heads,
                     int64_t* head_size) -> Status {
      XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> target, ints(c, h.target));
      XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> out, reshape_result(target, {c.batch, c.seq, width_in}));
      if (out.size() != 4 || out[0] != c.batch || out[1] != c.seq || out[2] * out[3] != width_in) {
        return invalid_argument(what, " is reshaped to ", dims_text(out), ", not [", c.batch, ", ", c.seq,
                                ", heads, head size]", where);
      }
      if ((*heads && *heads != out[2]) || (*head_size && *head_size != out[3])) {
        return invalid_argument(what, " heads ", dims_text(out), " differ from the other probes' or Q's", where);
      }
      *heads = out[2];
      *head_size = out[3];
      return Status::ok();
    };
    int64_t hd_k = shape.head_size, hd_v = shape.head_size, kv_v = shape.kv_heads;
    XONNX_RETURN_IF_ERROR(split(m.q, dq, "Q", &shape.heads, &shape.head_size));
    XONNX_RETURN_IF_ERROR(split(m.k, dk, "K", &shape.kv_heads, &hd_k));
    XONNX_RETURN_IF_ERROR(split(m.v, dv, "V", &kv_v, &hd_v));
    if (hd_k != shape.head_size || hd_v != shape.head_size || kv_v != shape.kv_heads) {
      return invalid_argument("Q, K and V head sizes / K and V heads differ", where);
    }
    if (shape.heads % shape.kv_heads)
      return invalid_argument(shape.heads, " query heads are not a multiple of ", shape.kv_heads, " KV heads");
    const int64_t rep = shape.heads / shape.kv_heads;
    for (const RepeatKv* r : {&m.k_repeat, &m.v_repeat}) {
      const char* what = r == &m.k_repeat ? "K" : "V";
      if (!r->present()) {
        if (rep != 1)
          return invalid_argument(shape.heads, " query heads read ", shape.kv_heads, " ", what,
                                  " heads without repeat_kv");
        continue;
      }
      XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> e, ints(c, r->expand_shape));
      const std::vector<int64_t> in = {c.batch, shape.kv_heads, 1, total, shape.head_size};
      bool ok = e.size() == 5 && e[2] == rep;
      for (size_t i = 0; ok && i < 5; ++i) ok = i == 2 || e[i] == in[i] || e[i] == 1;
      if (!ok)
        return invalid_argument("repeat_kv of ", what, " expands to ", dims_text(e), ", not [", c.batch, ", ",
                                shape.kv_heads, ", ", rep, ", ", total, ", ", shape.head_size, "]", where);
      XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> t, ints(c, r->reshape_shape));
      XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> out,
                             reshape_result(t, {c.batch, shape.kv_heads, rep, total, shape.head_size}));
      if (out != std::vector<int64_t>{c.batch, shape.heads, total, shape.head_size}) {
        return invalid_argument("repeat_kv of ", what, " reshapes to ", dims_text(out), where);
      }
    }
    XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> ot, ints(c, m.out_target));
    XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> out,
                           reshape_result(ot, {c.batch, c.seq, shape.heads, shape.head_size}));
    if (out != std::vector<int64_t>{c.batch, c.seq, shape.heads * shape.head_size}) {
      return invalid_argument("the heads are merged to ", dims_text(out), ", not [", c.batch, ", ", c.seq, ", ",
                              shape.heads * shape.head_size, "]", where);
    }
    Status st = check_mask(c, m, shape.heads);
    if (!st.is_ok()) return Status(st.code(), st.message() + where);
    if (m.q_rotary.present) {
      st = check_positions(c, m.q_rotary);
      if (!st.is_ok()) return Status(st.code(), st.message() + where);
    }
  }
  return shape;
}

}  // namespace convert
}  // namespace xonnx
