#include "sdk/genai/model_runner.h"

#include <algorithm>
#include <cstring>

#include "runtime/exec/session.h"
#include "runtime/onnx/loader.h"

namespace xonnx::genai {
namespace {

// A [d0, d1] id tensor of the input's dtype, reused while its shape stays.
Status ensure_ids(Value& v, bool int32, int64_t d0, int64_t d1) {
  const DataType t = int32 ? DataType::kInt32 : DataType::kInt64;
  if (v.is_tensor() && v.tensor().dtype() == t && v.tensor().rank() == 2 && v.tensor().dim(0) == d0 &&
      v.tensor().dim(1) == d1) {
    return Status::ok();
  }
  XONNX_ASSIGN_OR_RETURN(Tensor tensor, Tensor::allocate(t, {d0, d1}));
  v = Value(std::move(tensor));
  return Status::ok();
}

void put_id(Value& v, int64_t i, int64_t id) {
  Tensor* t = v.mutable_tensor();
  if (t->dtype() == DataType::kInt32) {
    t->data<int32_t>()[i] = static_cast<int32_t>(id);
  } else {
    t->data<int64_t>()[i] = id;
  }
}

bool is_int32(const ValueInfo& info) { return info.type.elem_type == DataType::kInt32; }

}  // namespace

ModelRunner::~ModelRunner() = default;

Result<std::unique_ptr<ModelRunner>> ModelRunner::create(const GenaiConfig& config, const RunnerOptions& options) {
  std::unique_ptr<ModelRunner> r(new ModelRunner());
  r->config_ = config;
  const DecoderConfig& d = config.decoder;
  const std::string cfg = (config.dir.empty() ? std::string() : config.dir + "/") + "genai_config.json";
  SessionOptions so;
  so.num_threads = std::max(1, options.threads);
  so.disable_xnnpack = options.reference_kernels;
  so.disable_optimized = options.reference_kernels;
  const std::string model = config.model_path();
  XONNX_ASSIGN_OR_RETURN(Model graph, load_model(model, so.load));
  const auto& graph_outputs = graph.graph.outputs;
  r->last_position_only_ =
      !options.every_position_logits && std::any_of(graph_outputs.begin(), graph_outputs.end(),
                                                    [&](const ValueInfo& v) { return v.name == d.outputs.logits; });
  if (r->last_position_only_) so.output_ranges.push_back({d.outputs.logits, 1, -1, INT64_MAX});
  XONNX_ASSIGN_OR_RETURN(r->session_, Session::create_from_model(std::move(graph), so));

  r->shared_ = config.search.past_present_share_buffer;
  r->rows_ = std::max(1, options.rows);
  if (!r->shared_ && r->rows_ > 1) {
    return invalid_argument(cfg, ": search.past_present_share_buffer is false: one sequence at a time (", r->rows_,
                            " requested)");
  }
  r->row_length_ = options.row_length > 0 ? options.row_length : config.search.max_length;
  r->row_length_ = std::min(r->row_length_, config.context_length);
  if (r->row_length_ < 2) return invalid_argument(cfg, ": a sequence of ", r->row_length_, " tokens is too short");
  r->kv_heads_ = d.num_key_value_heads;
  r->head_size_ = d.head_size;

  const auto& inputs = r->session_->inputs();
  const int32_t layers = d.num_hidden_layers;
  r->past_inputs_.assign(static_cast<size_t>(layers) * 2, -1);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string& name = inputs[i].name;
    const int index = static_cast<int>(i);
    if (name == d.inputs.input_ids) {
      r->input_ids_ = index;
      r->ids_int32_ = is_int32(inputs[i]);
      continue;
    }
    if (name == d.inputs.attention_mask) {
      r->attention_mask_ = index;
      r->mask_int32_ = is_int32(inputs[i]);
      continue;
    }
    if (name == d.inputs.position_ids) {
      r->position_ids_ = index;
      r->positions_int32_ = is_int32(inputs[i]);
      continue;
    }
    bool matched = false;
    for (int32_t l = 0; l < layers && !matched; ++l) {
      for (int kind = 0; kind < 2 && !matched; ++kind) {
        const std::string& tpl = kind == 0 ? d.inputs.past_key_names : d.inputs.past_value_names;
        if (name != GenaiConfig::layer_name(tpl, l)) continue;
        const TypeInfo& t = inputs[i].type;
        if (t.elem_type != DataType::kFloat) {
          return unsupported(model, ": KV cache input '", name, "' is ", dtype_name(t.elem_type),
                             "; float32 caches are supported");
        }
        if (t.has_shape && (t.dims.size() != 4 || (t.dims[1].value > 0 && t.dims[1].value != r->kv_heads_) ||
                            (t.dims[3].value > 0 && t.dims[3].value != r->head_size_))) {
          return invalid_model(model, ": KV cache input '", name, "' is not [batch, ", r->kv_heads_, ", length, ",
                               r->head_size_, "] as ", cfg, " (model.decoder num_key_value_heads, head_size) says");
        }
        r->past_inputs_[static_cast<size_t>(l) * 2 + kind] = index;
        matched = true;
      }
    }
    if (!matched) {
      return invalid_model(model, ": graph input '", name, "' is none of the inputs ", cfg,
                           " names (model.decoder.inputs)");
    }
  }
  if (r->input_ids_ < 0) {
    return invalid_model(model, ": no graph input '", d.inputs.input_ids, "' (", cfg,
                         ": model.decoder.inputs.input_ids)");
  }
  for (int32_t l = 0; l < layers; ++l) {
    for (int kind = 0; kind < 2; ++kind) {
      if (r->past_inputs_[static_cast<size_t>(l) * 2 + kind] >= 0) continue;
      const std::string& tpl = kind == 0 ? d.inputs.past_key_names : d.inputs.past_value_names;
      return invalid_model(model, ": no graph input '", GenaiConfig::layer_name(tpl, l), "' (", cfg,
                           ": model.decoder.inputs.", kind == 0 ? "past_key_names" : "past_value_names", ", ", layers,
                           " layers)");
    }
  }
  if (r->shared_ && r->attention_mask_ < 0 && r->position_ids_ < 0) {
    return invalid_model(model, ": a shared KV buffer needs the '", d.inputs.attention_mask,
                         "' input to tell the valid length (", cfg, ": model.decoder.inputs.attention_mask)");
  }

  const auto& outputs = r->session_->outputs();
  auto output_index = [&](const std::string& name) {
    for (size_t i = 0; i < outputs.size(); ++i)
      if (outputs[i].name == name) return static_cast<int>(i);
    return -1;
  };
  r->logits_output_ = output_index(d.outputs.logits);
  if (r->logits_output_ < 0) {
    return invalid_model(model, ": no graph output '", d.outputs.logits, "' (", cfg, ": model.decoder.outputs.logits)");
  }
  for (int32_t l = 0; l < layers; ++l) {
    for (int kind = 0; kind < 2; ++kind) {
      const std::string name =
          GenaiConfig::layer_name(kind == 0 ? d.outputs.present_key_names : d.outputs.present_value_names, l);
      if (output_index(name) < 0) {
        return invalid_model(model, ": no graph output '", name, "' (", cfg, ": model.decoder.outputs.",
                             kind == 0 ? "present_key_names" : "present_value_names", ")");
      }
      r->present_names_.push_back(name);
    }
  }
  r->vocab_ = config.vocab_size;
  const TypeInfo& lt = outputs[r->logits_output_].type;
  if (lt.has_shape && lt.dims.size() == 3 && lt.dims[2].value > 0) {
    if (r->vocab_ > 0 && lt.dims[2].value != r->vocab_) {
      return invalid_model(model, ": logits have ", lt.dims[2].value, " entries per token, ", cfg,
                           " model.vocab_size says ", r->vocab_);
    }
    r->vocab_ = static_cast<int32_t>(lt.dims[2].value);
  }
  if (r->vocab_ <= 0) {
    return invalid_model(model, ": the vocabulary size is unknown (neither ", cfg,
                         " model.vocab_size nor the logits' shape gives it)");
  }

  const int sets = r->shared_ ? 1 : 2;
  const size_t bytes = static_cast<size_t>(r->rows_) * r->kv_heads_ * r->row_length_ * r->head_size_ * sizeof(float);
  for (int s = 0; s < sets; ++s) {
    for (int32_t i = 0; i < layers * 2; ++i) {
      std::shared_ptr<Storage> storage = Storage::allocate(bytes);
      if (!storage) return resource_exhausted("cannot allocate the KV cache (", r->kv_bytes(), " bytes)");
      r->cache_[s].push_back(std::move(storage));
    }
  }
  r->inputs_.assign(inputs.size(), Value());
  return r;
}

int64_t ModelRunner::kv_bytes() const {
  return int64_t{2} * config_.decoder.num_hidden_layers * rows_ * kv_heads_ * row_length_ * head_size_ *
         static_cast<int64_t>(sizeof(float)) * (shared_ ? 1 : 2);
}

Status ModelRunner::bind_cache(int32_t first_row, int32_t batch, int32_t past, int32_t count) {
  if (shared_ && bound_key_[0] == first_row && bound_key_[1] == batch) return Status::ok();
  const size_t row_bytes = static_cast<size_t>(kv_heads_ * row_length_ * head_size_) * sizeof(float);
  for (size_t i = 0; i < past_inputs_.size(); ++i) {
    if (shared_) {
      Tensor view(DataType::kFloat, {batch, kv_heads_, row_length_, head_size_}, cache_[0][i], first_row * row_bytes);
      inputs_[past_inputs_[i]] = Value(view);
      XONNX_RETURN_IF_ERROR(session_->bind_output(present_names_[i], std::move(view)));
    } else {
      inputs_[past_inputs_[i]] = Value(Tensor(DataType::kFloat, {1, kv_heads_, past, head_size_}, cache_[current_][i]));
      XONNX_RETURN_IF_ERROR(session_->bind_output(
          present_names_[i],
          Tensor(DataType::kFloat, {1, kv_heads_, past + count, head_size_}, cache_[1 - current_][i])));
    }
  }
  bound_key_[0] = first_row;
  bound_key_[1] = batch;
  return Status::ok();
}

Status ModelRunner::fill_inputs(int32_t batch, int32_t sequence, const int32_t* tokens, const int32_t* lengths,
                                int32_t past_for_prefill) {
  XONNX_RETURN_IF_ERROR(ensure_ids(inputs_[input_ids_], ids_int32_, batch, sequence));
  for (int64_t i = 0; i < int64_t{batch} * sequence; ++i) {
    if (tokens[i] < 0 || tokens[i] >= vocab_) {
      return invalid_argument("token id ", tokens[i], " is outside the vocabulary [0, ", vocab_, ")");
    }
    put_id(inputs_[input_ids_], i, tokens[i]);
  }
  auto length_of = [&](int32_t b) { return lengths ? lengths[b] : past_for_prefill; };
  if (attention_mask_ >= 0) {
    // Shared buffer: the buffer's width, so the shape stays; else exactly past + new.
    const int64_t width = shared_ ? row_length_ : past_for_prefill + sequence;
    Value& mask = inputs_[attention_mask_];
    XONNX_RETURN_IF_ERROR(ensure_ids(mask, mask_int32_, batch, width));
    for (int32_t b = 0; b < batch; ++b) {
      const int64_t valid = length_of(b) + sequence;
      for (int64_t t = 0; t < width; ++t) put_id(mask, b * width + t, t < valid ? 1 : 0);
    }
  }
  if (position_ids_ >= 0) {
    Value& pos = inputs_[position_ids_];
    XONNX_RETURN_IF_ERROR(ensure_ids(pos, positions_int32_, batch, sequence));
    for (int32_t b = 0; b < batch; ++b)
      for (int32_t s = 0; s < sequence; ++s) put_id(pos, int64_t{b} * sequence + s, length_of(b) + s);
  }
  return Status::ok();
}

Status ModelRunner::prefill(int32_t row, const int32_t* tokens, int32_t count, int32_t past) {
  if (row < 0 || row >= rows_) return invalid_argument("row ", row, " is outside [0, ", rows_, ")");
  if (count <= 0) return invalid_argument("no tokens to run");
  if (past < 0 || int64_t{past} + count > row_length_) {
    return invalid_argument(past, " cached + ", count, " new tokens exceed the context of ", row_length_, " tokens");
  }
  if (!shared_ && past < stored_length_) {
    // Rewound: the cache of past' > past rows is [kv, past', h]; compact every head to past rows.
    for (auto& storage : cache_[current_]) {
      float* base = static_cast<float*>(storage->data());
      for (int64_t kh = 1; kh < kv_heads_; ++kh) {
        std::memmove(base + kh * past * head_size_, base + kh * stored_length_ * head_size_,
                     static_cast<size_t>(past * head_size_) * sizeof(float));
      }
    }
  } else if (!shared_ && past > stored_length_) {
    return invalid_argument("row 0 holds ", stored_length_, " cached tokens, not ", past);
  }
  XONNX_RETURN_IF_ERROR(bind_cache(row, 1, past, count));
  XONNX_RETURN_IF_ERROR(fill_inputs(1, count, tokens, nullptr, past));
  XONNX_RETURN_IF_ERROR(session_->run(inputs_, outputs_));
  if (!shared_) {
    current_ ^= 1;
    stored_length_ = past + count;
  }
  const Tensor& l = logits();
  const int32_t positions = last_position_only_ ? 1 : count;
  if (l.rank() != 3 || l.dim(0) != 1 || l.dim(1) != positions || l.dim(2) != vocab_ || l.dtype() != DataType::kFloat) {
    return invalid_model(config_.model_path(), ": logits are ", dtype_name(l.dtype()), " ", shape_to_string(l.shape()),
                         ", expected float [1, ", positions, ", ", vocab_, "]");
  }
  return Status::ok();
}

Status ModelRunner::decode(const int32_t* tokens, const int32_t* lengths, int32_t batch) {
  if (!shared_) return prefill(0, tokens, 1, lengths[0]);
  if (batch <= 0 || batch > rows_) return invalid_argument("batch ", batch, " is outside [1, ", rows_, "]");
  for (int32_t b = 0; b < batch; ++b) {
    if (lengths[b] < 0 || lengths[b] >= row_length_) {
      return invalid_argument("row ", b, " holds ", lengths[b], " tokens: no room in ", row_length_);
    }
  }
  XONNX_RETURN_IF_ERROR(bind_cache(0, batch, 0, 1));
  XONNX_RETURN_IF_ERROR(fill_inputs(batch, 1, tokens, lengths, 0));
  XONNX_RETURN_IF_ERROR(session_->run(inputs_, outputs_));
  const Tensor& l = logits();
  if (l.rank() != 3 || l.dim(0) != batch || l.dim(1) != 1 || l.dim(2) != vocab_ || l.dtype() != DataType::kFloat) {
    return invalid_model(config_.model_path(), ": logits are ", dtype_name(l.dtype()), " ", shape_to_string(l.shape()),
                         ", expected float [", batch, ", 1, ", vocab_, "]");
  }
  return Status::ok();
}

const Tensor& ModelRunner::logits() const { return outputs_[logits_output_].tensor(); }

float* ModelRunner::logits_row(int32_t b, int32_t s) {
  Tensor* t = outputs_[logits_output_].mutable_tensor();
  return t->data<float>() + (int64_t{b} * t->dim(1) + s) * vocab_;
}

float* ModelRunner::last_logits(int32_t b) { return logits_row(b, static_cast<int32_t>(logits().dim(1)) - 1); }

void ModelRunner::copy_row(int32_t from, int32_t to, int32_t count) {
  if (!shared_ || from == to || count <= 0) return;
  const int64_t plane = row_length_ * head_size_;
  for (auto& storage : cache_[0]) {
    float* base = static_cast<float*>(storage->data());
    for (int64_t kh = 0; kh < kv_heads_; ++kh) {
      std::memcpy(base + (to * kv_heads_ + kh) * plane, base + (from * kv_heads_ + kh) * plane,
                  static_cast<size_t>(count * head_size_) * sizeof(float));
    }
  }
}

void ModelRunner::trim(const int32_t* keep) {
  const size_t h = static_cast<size_t>(head_size_) * sizeof(float);
  if (shared_) {
    // [rows, kv_heads, row_length, head_size]: each (row, head) plane keeps its first keep[r] positions.
    const size_t plane = static_cast<size_t>(row_length_) * h;
    for (auto& storage : cache_[0]) {
      for (int32_t r = 0; r < rows_; ++r) {
        const size_t kept = static_cast<size_t>(std::clamp(keep[r], 0, row_length_)) * h;
        for (int64_t kh = 0; kh < kv_heads_; ++kh) {
          storage->discard((static_cast<size_t>(r) * kv_heads_ + kh) * plane + kept, plane - kept);
        }
      }
    }
  } else {
    // The past is [1, kv_heads, stored_length_, head_size] at the start of set current_; the
    // other set is written whole by the next run.
    const size_t held = static_cast<size_t>(kv_heads_) * stored_length_ * h;
    for (auto& storage : cache_[current_]) storage->discard(held, storage->bytes() - held);
    for (auto& storage : cache_[1 - current_]) storage->discard(0, storage->bytes());
  }
  session_->trim_memory();
}

}  // namespace xonnx::genai
