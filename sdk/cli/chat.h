// Text generation shared by `xonnx generate` and `xonnx models run`: the sampling and length
// options, one answer streamed to stdout with a llama-bench style summary on stderr, and a chat
// conversation that keeps the KV cache of its earlier turns.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/core/status.h"
#include "sdk/genai/generator.h"

namespace xonnx {
namespace cli {

struct GenerationOptions {
  int max_tokens = 256;  // per answer
  std::optional<float> temperature, top_p, repetition_penalty;
  std::optional<int> top_k;
  std::optional<int64_t> seed;
  std::vector<std::string> stop;
  bool ignore_eos = false;
  bool show_special = false;
  bool show_ids = false;  // print the generated token ids instead of their text
  int threads = 1;
  int max_length = 0;   // KV cache length; 0: search.max_length
  bool summary = true;  // the speed line on stderr after each answer
  std::string summary_tag = "xonnx generate";
};

// Registers --max-tokens, --temperature, --top-k, --top-p, --repetition-penalty, --seed, --stop,
// --ignore-eos, --special, --ids, --threads and --max-length on `cmd`, writing into `o` (which must
// outlive the parse).
void add_generation_options(CLI::App& cmd, GenerationOptions& o);

// Loads a GenAI model folder with the options' threads, KV length and sampling.
Result<std::unique_ptr<genai::Generator>> open_generator(const std::string& dir, const GenerationOptions& o);

// Generates after the tokens already appended to `g` until an end token, a stop string,
// max_tokens or a full cache; streams the text (then a newline) to stdout and the summary to
// stderr; returns the text.
Result<std::string> answer(genai::Generator& g, const GenerationOptions& o);

// A conversation with the chat template of the model's tokenizer_config.json: an optional system
// message, then user messages: `single_message` if given, else one per line of stdin (empty
// lines skipped; a "> " prompt on stderr when stdin is a terminal) until end of input or a line
// "/exit". Each turn appends only what differs from the tokens already in the KV cache; when
// the conversation outgrows the cache, its oldest exchanges are forgotten (a note on stderr).
Status run_chat(genai::Generator& g, const GenerationOptions& o, const std::string& system,
                const std::optional<std::string>& single_message = std::nullopt);

}  // namespace cli
}  // namespace xonnx
