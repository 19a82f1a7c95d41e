// Sentence-embedding models for POST /v1/embeddings: an ONNX encoder in the folder layout
// sentence-transformers writes (docs/serve.md, "Embedding models"):
//   modules.json               [Transformer, Pooling (path 1_Pooling), optional Normalize]
//   1_Pooling/config.json      pooling_mode_{mean_tokens, cls_token, max_tokens, lasttoken,
//                              mean_sqrt_len_tokens}
//   sentence_bert_config.json  max_seq_length (optional; else 512)
//   model.onnx or onnx/model.onnx   inputs input_ids, attention_mask[, token_type_ids] (int64 or
//                              int32 [batch, seq]); output last_hidden_state / token_embeddings
//                              [batch, seq, hidden], or sentence_embedding [batch, hidden]
//   tokenizer.json [+ tokenizer_config.json]
// A folder is an embedding model when it has modules.json and no genai_config.json.
//
// Threads: EmbeddingModel::embed() may be called from any thread; runs are serialized (one
// Session), each batching the inputs of one request.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/core/status.h"
#include "sdk/genai/tokenizer.h"

namespace xonnx {
class Session;
}

namespace xonnx::serve {

enum class Pooling { kMean, kCls, kMax, kLastToken, kMeanSqrtLen };

struct EmbeddingConfig {
  std::string model_path;
  Pooling pooling = Pooling::kMean;
  bool normalize = false;    // modules.json has sentence_transformers.models.Normalize
  int32_t max_tokens = 512;  // tokens per input
};

bool is_embedding_model_dir(const std::string& dir);
// The bytes of an .onnx file and of its external-data file (`path` + ".data", if any): the
// weights a loaded model holds, for the server's memory accounting.
int64_t onnx_file_bytes(const std::string& path);
// Reads the folder's sentence-transformers files; errors name the file and field.
Result<EmbeddingConfig> load_embedding_config(const std::string& dir);

// Pools token vectors `hidden` [batch, seq, dim] over `mask` [batch, seq] (1: a real token;
// padding on the right) into `out` [batch, dim], then L2-normalizes each row when `normalize`.
void pool_embeddings(const float* hidden, const int64_t* mask, int64_t batch, int64_t seq, int64_t dim, Pooling pooling,
                     bool normalize, float* out);

class EmbeddingModel {
 public:
  static Result<std::unique_ptr<EmbeddingModel>> load(const std::string& dir, int32_t threads);
  ~EmbeddingModel();

  const genai::Tokenizer& tokenizer() const { return *tokenizer_; }
  const EmbeddingConfig& config() const { return config_; }
  // One vector per input (token ids, each 1..max_tokens long, ids inside the vocabulary), in
  // order. Inputs are run in batches of similar length, padded on the right.
  Result<std::vector<std::vector<float>>> embed(const std::vector<std::vector<int32_t>>& inputs);
  int64_t weight_bytes() const { return weight_bytes_; }

 private:
  EmbeddingModel() = default;
  Result<std::vector<std::vector<float>>> run_batch(const std::vector<const std::vector<int32_t>*>& inputs);

  EmbeddingConfig config_;
  std::unique_ptr<genai::Tokenizer> tokenizer_;
  std::mutex run_mutex_;
  std::unique_ptr<Session> session_;
  int input_ids_ = -1, attention_mask_ = -1, token_type_ids_ = -1;  // indices in the session's inputs
  bool int32_inputs_ = false;
  int output_ = -1;
  bool pooled_output_ = false;  // the output is [batch, hidden] already (sentence_embedding)
  int32_t pad_id_ = 0;
  int64_t weight_bytes_ = 0;
};

}  // namespace xonnx::serve
