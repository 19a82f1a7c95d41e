#include "sdk/serve/model_backend.h"

#include <algorithm>
#include <thread>

#include "sdk/serve/embedding_model.h"
#include "sdk/serve/json_matcher.h"

namespace xonnx::serve {

std::shared_ptr<const VocabTrie> ModelBackend::vocab_trie() const {
  std::lock_guard<std::mutex> lock(trie_mutex_);
  if (!trie_) {
    const genai::Tokenizer& tok = tokenizer();
    std::vector<std::string> bytes;
    std::vector<int32_t> special;
    bytes.reserve(static_cast<size_t>(tok.vocab_size()));
    for (int32_t id = 0; id < tok.vocab_size(); ++id) {
      bytes.push_back(tok.token_bytes(id));
      if (tok.is_special(id)) special.push_back(id);
    }
    trie_ = std::make_shared<VocabTrie>(bytes, special);
  }
  return trie_;
}

namespace {

class EngineBackend : public ModelBackend {
 public:
  EngineBackend(std::unique_ptr<genai::Engine> engine, int64_t weight_bytes)
      : engine_(std::move(engine)), weight_bytes_(weight_bytes) {}
  const genai::Tokenizer& tokenizer() const override { return engine_->tokenizer(); }
  std::vector<int32_t> eos_ids() const override { return engine_->config().eos_token_ids; }
  int32_t context_length() const override { return engine_->slot_length(); }
  genai::SamplingParams default_sampling() const override { return engine_->default_sampling(); }
  Result<uint64_t> submit(genai::GenerationRequest request) override { return engine_->submit(std::move(request)); }
  void cancel(uint64_t request_id) override { engine_->cancel(request_id); }
  genai::EngineStats stats() const override { return engine_->stats(); }
  int64_t memory_bytes() const override { return weight_bytes_ + engine_->stats().kv_bytes; }

 private:
  std::unique_ptr<genai::Engine> engine_;
  int64_t weight_bytes_;
};

// An embedding model behind the backend interface: /v1/embeddings reaches the encoder through
// embedding_model(); the generation endpoints check that first and never submit.
class EmbeddingBackend : public ModelBackend {
 public:
  explicit EmbeddingBackend(std::unique_ptr<EmbeddingModel> model) : model_(std::move(model)) {}
  const genai::Tokenizer& tokenizer() const override { return model_->tokenizer(); }
  std::vector<int32_t> eos_ids() const override { return {}; }
  int32_t context_length() const override { return model_->config().max_tokens; }
  genai::SamplingParams default_sampling() const override { return {}; }
  Result<uint64_t> submit(genai::GenerationRequest) override {
    return invalid_argument("an embedding model does not generate text");
  }
  void cancel(uint64_t) override {}
  genai::EngineStats stats() const override { return {}; }
  int64_t memory_bytes() const override { return model_->weight_bytes(); }
  EmbeddingModel* embedding_model() const override { return model_.get(); }

 private:
  std::unique_ptr<EmbeddingModel> model_;
};

class JsonProcessor : public genai::LogitsProcessor {
 public:
  JsonProcessor(std::shared_ptr<const CompiledSchema> schema, std::shared_ptr<const VocabTrie> trie,
                std::vector<int32_t> eos)
      : constraint_(std::make_shared<JsonMatcher>(std::move(schema)), std::move(trie), eos), eos_(std::move(eos)) {}

  Status process(float* logits, int32_t vocab) override {
    if (constraint_.mask_logits(logits, static_cast<size_t>(vocab)) == 0) {
      return Status(StatusCode::kInternal, "response_format: no token of the vocabulary continues the JSON output");
    }
    return Status::ok();
  }
  Status accept(int32_t token) override {
    if (!constraint_.accept(token)) {
      return Status(StatusCode::kInternal,
                    "response_format: token " + std::to_string(token) + " breaks the JSON output");
    }
    return Status::ok();
  }
  // Complete when the document is whole and nothing but end-of-sequence may follow (a number
  // at the top level could still take digits).
  bool is_complete() const override {
    if (!constraint_.complete()) return false;
    const size_t allowed = constraint_.fill_mask(mask_);
    size_t ends = 0;
    for (int32_t id : eos_) ends += id >= 0 && static_cast<size_t>(id) < mask_.size() && mask_[static_cast<size_t>(id)];
    return allowed == ends;
  }

 private:
  mutable JsonConstraint constraint_;
  std::vector<int32_t> eos_;
  mutable std::vector<uint8_t> mask_;
};

}  // namespace

Result<std::unique_ptr<ModelBackend>> load_model_backend(const std::string& model_dir, const BackendOptions& options) {
  const int32_t threads =
      options.threads > 0 ? options.threads : static_cast<int32_t>(std::max(1u, std::thread::hardware_concurrency()));
  if (is_embedding_model_dir(model_dir)) {
    auto model = EmbeddingModel::load(model_dir, threads);
    if (!model.is_ok()) return model.status();
    return std::unique_ptr<ModelBackend>(new EmbeddingBackend(std::move(model.value())));
  }
  genai::EngineOptions eo;
  eo.parallel = options.parallel;
  eo.max_queue = options.max_queue;
  eo.threads = threads;
  eo.slot_length = options.context_length;
  eo.kv_budget_bytes = options.kv_budget_bytes;
  auto engine = genai::Engine::create(model_dir, eo);
  if (!engine.is_ok()) return engine.status();
  const std::string model_path = engine.value()->config().model_path();
  const int64_t weights = onnx_file_bytes(model_path);
  return std::unique_ptr<ModelBackend>(new EngineBackend(std::move(engine.value()), weights));
}

std::shared_ptr<genai::LogitsProcessor> make_json_processor(std::shared_ptr<const CompiledSchema> schema,
                                                            const ModelBackend& backend) {
  return std::make_shared<JsonProcessor>(std::move(schema), backend.vocab_trie(), backend.eos_ids());
}

}  // namespace xonnx::serve
