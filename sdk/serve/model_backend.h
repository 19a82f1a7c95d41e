// What the server needs of a loaded model: a tokenizer (with its chat template) and a queue of
// generations. load_model_backend() puts the batching genai::Engine behind it, or, for an
// embedding model's folder (embedding_model.h), an EmbeddingModel that only embeds (its
// generation methods fail); the tests give the HTTP layer a scripted backend instead.
//
// Threads: every method may be called from any thread (the HTTP workers); submit()'s callback
// runs on the backend's own thread (genai::TokenCallback's rules).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <mutex>

#include "runtime/core/status.h"

#include "sdk/genai/engine.h"
#include "sdk/genai/tokenizer.h"
#include "sdk/serve/token_mask.h"

namespace xonnx::serve {

class EmbeddingModel;

class ModelBackend {
 public:
  virtual ~ModelBackend() = default;
  virtual const genai::Tokenizer& tokenizer() const = 0;
  virtual std::vector<int32_t> eos_ids() const = 0;
  virtual int32_t context_length() const = 0;  // tokens per sequence (prompt + output)
  virtual genai::SamplingParams default_sampling() const = 0;
  virtual Result<uint64_t> submit(genai::GenerationRequest request) = 0;
  virtual void cancel(uint64_t request_id) = 0;
  virtual genai::EngineStats stats() const = 0;
  // Bytes the model holds (weights + KV cache), for /metrics and `models info`.
  virtual int64_t memory_bytes() const = 0;
  // The encoder of an embedding model (POST /v1/embeddings); nullptr for a generator.
  virtual EmbeddingModel* embedding_model() const { return nullptr; }

  // The vocabulary trie for constrained decoding, built on first use (thread-safe).
  std::shared_ptr<const VocabTrie> vocab_trie() const;

 private:
  mutable std::mutex trie_mutex_;
  mutable std::shared_ptr<const VocabTrie> trie_;
};

struct BackendOptions {
  int32_t parallel = 1;         // sequences decoded together (engine slots)
  int32_t max_queue = 0;        // requests waiting for a slot; 0: unlimited; over it submit() fails
  int32_t threads = 0;          // the model's threads; 0: the machine's cores
  int32_t context_length = 0;   // tokens per slot; 0: the model's search.max_length
  int64_t kv_budget_bytes = 0;  // the KV cache's cap (slots shrink to fit); 0: none
};

// Loads a GenAI model folder (genai_config.json, model, tokenizer files) onto genai::Engine, or
// an embedding model's folder (is_embedding_model_dir) onto an EmbeddingModel.
Result<std::unique_ptr<ModelBackend>> load_model_backend(const std::string& model_dir, const BackendOptions& options);

// genai::LogitsProcessor over a JsonConstraint: the token mask of response_format.
std::shared_ptr<genai::LogitsProcessor> make_json_processor(std::shared_ptr<const CompiledSchema> schema,
                                                            const ModelBackend& backend);

}  // namespace xonnx::serve
