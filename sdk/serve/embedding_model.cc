#include "sdk/serve/embedding_model.h"

#include <sys/stat.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <fstream>
#include <numeric>
#include <sstream>

#include <nlohmann/json.hpp>

#include "runtime/exec/session.h"

namespace xonnx::serve {

using json = nlohmann::json;

namespace {

// Inputs run together at most (the attention scores grow with batch x seq x seq).
constexpr size_t kMaxBatch = 16;

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

Result<json> read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) return io_error("cannot read ", path);
  std::stringstream text;
  text << in.rdbuf();
  json j = json::parse(text.str(), nullptr, false);
  if (j.is_discarded()) return invalid_argument(path, ": not valid JSON");
  return j;
}

// Fields read without throwing: a wrong type reads as absent.
bool flag(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_boolean() && j[key].get<bool>();
}
std::string text(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}
int64_t integer(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number_integer() ? j[key].get<int64_t>() : 0;
}

bool is_int(DataType t) { return t == DataType::kInt64 || t == DataType::kInt32; }

}  // namespace

int64_t onnx_file_bytes(const std::string& path) {
  int64_t bytes = 0;
  for (const std::string& file : {path, path + ".data"}) {
    struct stat st {};
    if (::stat(file.c_str(), &st) == 0) bytes += static_cast<int64_t>(st.st_size);
  }
  return bytes;
}

bool is_embedding_model_dir(const std::string& dir) {
  return exists(dir + "/modules.json") && !exists(dir + "/genai_config.json");
}

Result<EmbeddingConfig> load_embedding_config(const std::string& dir) {
  EmbeddingConfig c;
  const std::string modules_path = dir + "/modules.json";
  XONNX_ASSIGN_OR_RETURN(json modules, read_json(modules_path));
  if (!modules.is_array()) return invalid_argument(modules_path, ": expected an array of modules");
  std::string pooling_dir;
  for (size_t i = 0; i < modules.size(); ++i) {
    const json& m = modules[i];
    const std::string type = text(m, "type");
    const std::string where = modules_path + ": [" + std::to_string(i) + "]";
    if (type == "sentence_transformers.models.Transformer") continue;
    if (type == "sentence_transformers.models.Pooling") {
      pooling_dir = text(m, "path");
    } else if (type == "sentence_transformers.models.Normalize") {
      c.normalize = true;
    } else {
      return unsupported(where, ".type '", type, "': supported modules are Transformer, Pooling and Normalize");
    }
  }
  if (!pooling_dir.empty()) {
    const std::string pooling_path = dir + "/" + pooling_dir + "/config.json";
    XONNX_ASSIGN_OR_RETURN(json p, read_json(pooling_path));
    struct Mode {
      const char* key;
      Pooling pooling;
    };
    static const Mode kModes[] = {{"pooling_mode_mean_tokens", Pooling::kMean},
                                  {"pooling_mode_cls_token", Pooling::kCls},
                                  {"pooling_mode_max_tokens", Pooling::kMax},
                                  {"pooling_mode_lasttoken", Pooling::kLastToken},
                                  {"pooling_mode_mean_sqrt_len_tokens", Pooling::kMeanSqrtLen}};
    int chosen = 0;
    for (const Mode& mode : kModes) {
      if (flag(p, mode.key)) {
        c.pooling = mode.pooling;
        ++chosen;
      }
    }
    if (flag(p, "pooling_mode_weightedmean_tokens")) {
      return unsupported(pooling_path, ": pooling_mode_weightedmean_tokens is not supported");
    }
    if (chosen != 1) {
      return unsupported(pooling_path, ": exactly one pooling_mode_* must be true (", chosen,
                         " are); concatenated poolings are not supported");
    }
  }
  const std::string st_config = dir + "/sentence_bert_config.json";
  if (exists(st_config)) {
    XONNX_ASSIGN_OR_RETURN(json s, read_json(st_config));
    const int64_t max = integer(s, "max_seq_length");
    if (max > 0 && max <= INT32_MAX) c.max_tokens = static_cast<int32_t>(max);
  }
  c.model_path = exists(dir + "/model.onnx") ? dir + "/model.onnx" : dir + "/onnx/model.onnx";
  if (!exists(c.model_path)) return not_found(dir, ": no model.onnx (nor onnx/model.onnx)");
  return c;
}

void pool_embeddings(const float* hidden, const int64_t* mask, int64_t batch, int64_t seq, int64_t dim, Pooling pooling,
                     bool normalize, float* out) {
  for (int64_t b = 0; b < batch; ++b) {
    const float* h = hidden + b * seq * dim;
    const int64_t* m = mask + b * seq;
    float* o = out + b * dim;
    int64_t count = 0, last = 0;
    for (int64_t t = 0; t < seq; ++t) {
      if (m[t]) {
        ++count;
        last = t;
      }
    }
    switch (pooling) {
      case Pooling::kCls: std::copy(h, h + dim, o); break;
      case Pooling::kLastToken: std::copy(h + last * dim, h + (last + 1) * dim, o); break;
      case Pooling::kMax:
        std::fill(o, o + dim, -INFINITY);
        for (int64_t t = 0; t < seq; ++t) {
          if (!m[t]) continue;
          for (int64_t d = 0; d < dim; ++d) o[d] = std::max(o[d], h[t * dim + d]);
        }
        break;
      case Pooling::kMean:
      case Pooling::kMeanSqrtLen: {
        std::vector<double> sum(static_cast<size_t>(dim), 0.0);
        for (int64_t t = 0; t < seq; ++t) {
          if (!m[t]) continue;
          for (int64_t d = 0; d < dim; ++d) sum[static_cast<size_t>(d)] += h[t * dim + d];
        }
        const double n = std::max<int64_t>(count, 1);
        const double div = pooling == Pooling::kMean ? n : std::sqrt(n);
        for (int64_t d = 0; d < dim; ++d) o[d] = static_cast<float>(sum[static_cast<size_t>(d)] / div);
        break;
      }
    }
    if (normalize) {
      double norm = 0;
      for (int64_t d = 0; d < dim; ++d) norm += static_cast<double>(o[d]) * o[d];
      norm = std::max(std::sqrt(norm), 1e-12);  // as torch.nn.functional.normalize
      for (int64_t d = 0; d < dim; ++d) o[d] = static_cast<float>(o[d] / norm);
    }
  }
}

EmbeddingModel::~EmbeddingModel() = default;

Result<std::unique_ptr<EmbeddingModel>> EmbeddingModel::load(const std::string& dir, int32_t threads) {
  std::unique_ptr<EmbeddingModel> m(new EmbeddingModel());
  XONNX_ASSIGN_OR_RETURN(m->config_, load_embedding_config(dir));
  XONNX_ASSIGN_OR_RETURN(m->tokenizer_, genai::Tokenizer::load(dir));
  SessionOptions so;
  so.num_threads = std::max(1, threads);
  XONNX_ASSIGN_OR_RETURN(m->session_, Session::create(m->config_.model_path, so));
  const std::string& path = m->config_.model_path;
  m->weight_bytes_ = onnx_file_bytes(path);

  const auto& inputs = m->session_->inputs();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ValueInfo& in = inputs[i];
    int* slot = in.name == "input_ids"        ? &m->input_ids_
                : in.name == "attention_mask" ? &m->attention_mask_
                : in.name == "token_type_ids" ? &m->token_type_ids_
                                              : nullptr;
    if (!slot) {
      return unsupported(path, ": graph input '", in.name,
                         "': an embedding model takes input_ids, attention_mask and token_type_ids");
    }
    if (!is_int(in.type.elem_type)) return invalid_model(path, ": graph input '", in.name, "' is not int64 or int32");
    *slot = static_cast<int>(i);
    m->int32_inputs_ = in.type.elem_type == DataType::kInt32;
  }
  if (m->input_ids_ < 0) return invalid_model(path, ": no graph input 'input_ids'");
  const auto& outputs = m->session_->outputs();
  for (const char* name : {"sentence_embedding", "last_hidden_state", "token_embeddings"}) {
    for (size_t i = 0; i < outputs.size() && m->output_ < 0; ++i) {
      if (outputs[i].name == name) {
        m->output_ = static_cast<int>(i);
        m->pooled_output_ = outputs[i].name == "sentence_embedding";
      }
    }
  }
  if (m->output_ < 0) {
    return invalid_model(path, ": no graph output named sentence_embedding, last_hidden_state or token_embeddings");
  }
  if (auto pad = m->tokenizer_->config().pad_token; !pad.empty()) {
    if (auto id = m->tokenizer_->token_to_id(pad)) m->pad_id_ = *id;
  }
  return m;
}

Result<std::vector<std::vector<float>>> EmbeddingModel::embed(const std::vector<std::vector<int32_t>>& inputs) {
  // Batches of inputs of similar length waste less on padding: run them sorted by length.
  std::vector<size_t> order(inputs.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return inputs[a].size() < inputs[b].size(); });
  std::vector<std::vector<float>> out(inputs.size());
  std::lock_guard<std::mutex> lock(run_mutex_);
  for (size_t start = 0; start < order.size(); start += kMaxBatch) {
    std::vector<const std::vector<int32_t>*> batch;
    for (size_t i = start; i < std::min(order.size(), start + kMaxBatch); ++i) batch.push_back(&inputs[order[i]]);
    XONNX_ASSIGN_OR_RETURN(auto vectors, run_batch(batch));
    for (size_t i = 0; i < batch.size(); ++i) out[order[start + i]] = std::move(vectors[i]);
  }
  return out;
}

Result<std::vector<std::vector<float>>> EmbeddingModel::run_batch(
    const std::vector<const std::vector<int32_t>*>& inputs) {
  const int64_t batch = static_cast<int64_t>(inputs.size());
  int64_t seq = 0;
  for (const auto* ids : inputs) seq = std::max<int64_t>(seq, static_cast<int64_t>(ids->size()));
  std::vector<int64_t> ids(static_cast<size_t>(batch * seq), pad_id_), mask(ids.size(), 0);
  for (int64_t b = 0; b < batch; ++b) {
    const std::vector<int32_t>& in = *inputs[static_cast<size_t>(b)];
    for (size_t t = 0; t < in.size(); ++t) {
      ids[static_cast<size_t>(b * seq) + t] = in[t];
      mask[static_cast<size_t>(b * seq) + t] = 1;
    }
  }
  auto tensor = [&](const std::vector<int64_t>& v) {
    if (!int32_inputs_) return Tensor::from_vector<int64_t>(v, {batch, seq});
    return Tensor::from_vector<int32_t>(std::vector<int32_t>(v.begin(), v.end()), {batch, seq});
  };
  std::vector<Value> feeds(session_->inputs().size());
  feeds[static_cast<size_t>(input_ids_)] = tensor(ids);
  if (attention_mask_ >= 0) feeds[static_cast<size_t>(attention_mask_)] = tensor(mask);
  if (token_type_ids_ >= 0) feeds[static_cast<size_t>(token_type_ids_)] = tensor(std::vector<int64_t>(ids.size(), 0));
  XONNX_ASSIGN_OR_RETURN(std::vector<Value> results, session_->run(feeds));
  const Value& result = results[static_cast<size_t>(output_)];
  const std::string& name = session_->outputs()[static_cast<size_t>(output_)].name;
  if (!result.is_tensor() || result.tensor().dtype() != DataType::kFloat) {
    return invalid_model(config_.model_path, ": output '", name, "' is not a float tensor");
  }
  const Tensor& t = result.tensor();
  const size_t rank = pooled_output_ ? 2 : 3;
  if (t.rank() != rank || t.dim(0) != batch || (!pooled_output_ && t.dim(1) != seq)) {
    return invalid_model(config_.model_path, ": output '", name, "' has shape ", shape_to_string(t.shape()),
                         "; expected [", batch, pooled_output_ ? "" : ", " + std::to_string(seq), ", hidden]");
  }
  const int64_t dim = t.dim(rank - 1);
  std::vector<float> pooled(static_cast<size_t>(batch * dim));
  if (pooled_output_) {
    // Already pooled by the graph: only normalized here (if the folder asks for it).
    const std::vector<int64_t> one(static_cast<size_t>(batch), 1);
    pool_embeddings(t.data<float>(), one.data(), batch, 1, dim, Pooling::kMean, config_.normalize, pooled.data());
  } else {
    pool_embeddings(t.data<float>(), mask.data(), batch, seq, dim, config_.pooling, config_.normalize, pooled.data());
  }
  std::vector<std::vector<float>> out(static_cast<size_t>(batch));
  for (int64_t b = 0; b < batch; ++b)
    out[static_cast<size_t>(b)].assign(pooled.begin() + b * dim, pooled.begin() + (b + 1) * dim);
  return out;
}

}  // namespace xonnx::serve
