// Generator: one sequence generated from a GenAI model folder (genai_config.json, model.onnx,
// tokenizer.json, tokenizer_config.json), the engine behind `xonnx generate` and the C API's
// xonnx_generator_*.
//
// Tokens are appended (a prompt, a chat turn) and computed lazily: next_token() runs what is
// not in the KV cache yet (prefill in chunks of GeneratorOptions::prefill_chunk) and chooses
// the next token with the Sampler. The KV cache is preallocated to max_length tokens and
// written in place; with past_present_share_buffer (GenAI's CPU int4 models) a decode step
// makes no heap allocation after the first few.
//
// Not thread-safe: one thread uses a Generator. It owns its session, tokenizer and cache.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/status.h"
#include "sdk/genai/genai_config.h"
#include "sdk/genai/sampling.h"
#include "sdk/genai/tokenizer.h"

namespace xonnx::genai {

class ModelRunner;

// The sampling defaults of genai_config.json's search section: greedy unless do_sample.
SamplingParams sampling_from_config(const SearchConfig& search);

struct GeneratorOptions {
  int32_t threads = 1;
  int32_t max_length = 0;       // tokens (prompt + output); 0: search.max_length; <= context_length
  int32_t prefill_chunk = 256;  // prompt tokens per model run
  bool reference_kernels = false;
};

// Time spent, for llama-bench style summaries (steady clock).
struct GeneratorTimings {
  int64_t prompt_tokens = 0;  // tokens run as prefill (runs of more than one token)
  double prompt_seconds = 0;
  int64_t decode_tokens = 0;  // tokens run one at a time
  double decode_seconds = 0;
  double sample_seconds = 0;
};

class Generator {
 public:
  static Result<std::unique_ptr<Generator>> create(const std::string& model_dir, const GeneratorOptions& options = {});
  ~Generator();

  // Sampling for the following tokens (validated: errors name the field). The defaults come
  // from genai_config.json's search section (greedy unless do_sample).
  Status set_sampling(const SamplingParams& params);
  const SamplingParams& sampling() const { return params_; }
  SamplingParams default_sampling() const;

  // Appends prompt tokens (ids checked against the vocabulary and the room left).
  Status append_tokens(const int32_t* ids, size_t count);
  // Encodes text with the tokenizer (special tokens in the text are recognised; the
  // tokenizer's post-processor adds BOS etc. only when add_special_tokens) and appends it.
  Status append_text(std::string_view text, bool add_special_tokens = false);
  // Runs the model over the pending tokens and chooses the next token, appends and returns it.
  // Fails when the sequence is full (is_full()) or nothing was appended.
  Result<int32_t> next_token();
  // The model's logits for the token after the last one (computing pending tokens first):
  // vocab() floats, valid until the next call.
  Result<const float*> next_logits();

  // Forgets tokens after the first `length` (the cache keeps the rest).
  void rewind(size_t length);
  const std::vector<int32_t>& tokens() const { return tokens_; }
  // The last token is one of the model's end-of-sequence ids.
  bool is_eos(int32_t token) const;
  bool is_full() const;
  int32_t max_length() const;
  int32_t vocab() const;

  const Tokenizer& tokenizer() const { return *tokenizer_; }
  const GenaiConfig& config() const { return config_; }
  const GeneratorTimings& timings() const { return timings_; }
  void reset_timings() { timings_ = {}; }

 private:
  Generator() = default;
  Status compute_pending();

  GenaiConfig config_;
  GeneratorOptions options_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<ModelRunner> runner_;
  SamplingParams params_;
  Sampler sampler_;
  bool sampler_stale_ = true;  // tokens were appended: the penalties' prompt set changes
  std::vector<int32_t> tokens_;
  size_t cached_ = 0;          // tokens_ in the KV cache
  bool logits_ready_ = false;  // the runner's last logits row follows tokens_
  GeneratorTimings timings_;
};

}  // namespace xonnx::genai
