// Choosing the next token from a sequence's logits: logit bias, repetition / presence /
// frequency penalties, a caller's logits processor (constrained decoding), then greedy or
// temperature sampling restricted by top-k, top-p and min-p, from a seeded RNG.
//
// Order of the steps (each optional): logit_bias -> repetition_penalty (prompt and generated
// tokens, CTRL / Hugging Face rule: positive logits divided, negative multiplied) ->
// presence / frequency penalties (generated tokens, OpenAI rule) -> LogitsProcessor::process ->
// greedy argmax when temperature <= 0, else softmax(logits / temperature) -> top-k -> top-p ->
// min-p -> a draw from the renormalised distribution. The same seed, parameters and logits give
// the same tokens on every platform this builds for (the RNG is std::mt19937_64 and the draw
// uses only its raw output).
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "runtime/core/status.h"

namespace xonnx::genai {

struct SamplingParams {
  float temperature = 0.0f;                           // <= 0: greedy (argmax; ties go to the lowest id)
  int32_t top_k = 0;                                  // keep the k most likely tokens; 0: all
  float top_p = 1.0f;                                 // keep the smallest set whose probability reaches top_p; 1: all
  float min_p = 0.0f;                                 // drop tokens below min_p * the top token's probability; 0: none
  float repetition_penalty = 1.0f;                    // > 1 discourages tokens of the prompt and the output
  float presence_penalty = 0.0f;                      // OpenAI: subtracted once from every generated token's logit
  float frequency_penalty = 0.0f;                     // OpenAI: subtracted per occurrence in the output
  std::vector<std::pair<int32_t, float>> logit_bias;  // added to the token's logit
  int64_t seed = -1;                                  // >= 0: reproducible draws; -1: seeded from the OS

  // Errors name the field: temperature < 0 or not finite, top_p outside (0, 1], min_p outside
  // [0, 1], repetition_penalty <= 0, penalties outside [-2, 2], top_k < 0, a logit_bias token
  // outside [0, vocab_size) or a bias that is not finite.
  Status validate(int32_t vocab_size) const;
};

// Constrained decoding and other logit rewrites (a JSON-schema state machine's token mask).
// Called on the thread that generates (the engine's own thread), once per generated token of
// the sequence it was given to; one instance serves one sequence.
class LogitsProcessor {
 public:
  virtual ~LogitsProcessor() = default;
  // May change logits[0 .. vocab) in place, typically -infinity for forbidden tokens, before
  // the token is chosen. An error ends the sequence with FinishReason::kError.
  virtual Status process(float* logits, int32_t vocab) = 0;
  // The token that was chosen (after process); an error ends the sequence with kError.
  virtual Status accept(int32_t token) = 0;
  // True once the output is complete (the JSON value closed): the sequence finishes with
  // reason "stop" instead of sampling another token.
  virtual bool is_complete() const { return false; }
};

// Per-sequence sampling state: the RNG and the token counts the penalties need. Reusable
// buffers make choose() allocation-free after the first calls.
class Sampler {
 public:
  Sampler() = default;
  // `prompt` feeds the repetition penalty's token set.
  void reset(const SamplingParams& params, int32_t vocab, const int32_t* prompt, size_t prompt_len);
  // Chooses from logits [vocab] (modified in place by the penalties and the processor).
  // Fails when the processor fails or leaves no token with a finite logit.
  Result<int32_t> choose(float* logits, LogitsProcessor* processor);
  // Records a token of the output (for the penalties); choose() does not.
  void record(int32_t token);
  const SamplingParams& params() const { return params_; }

 private:
  void apply_penalties(float* logits) const;
  int32_t sample(const float* logits);

  SamplingParams params_;
  int32_t vocab_ = 0;
  std::mt19937_64 rng_;
  // Tokens seen, for the penalties: count in the output, and whether in the prompt.
  std::vector<uint32_t> output_count_;
  std::vector<uint8_t> in_prompt_;
  std::vector<int32_t> touched_;  // ids with a count or in the prompt, each once
  // Scratch of sample().
  std::vector<float> probs_;
  std::vector<int32_t> order_;
};

}  // namespace xonnx::genai
