#include "sdk/cli/chat.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "sdk/genai/chat_template.h"
#include "sdk/genai/stop_strings.h"

namespace xonnx {
namespace cli {
namespace {

struct Turn {
  int64_t prompt_tokens = 0;  // computed (not reused from the cache)
  int64_t generated = 0;
  double prompt_seconds = 0, first_token_seconds = 0, total_seconds = 0;
};

void print_summary(const genai::Generator& g, const Turn& t, const GenerationOptions& o) {
  const auto& tm = g.timings();
  // Generation speed counts the tokens after the first (each needed one decode run).
  const double decode_s = tm.decode_seconds + tm.sample_seconds;
  const int64_t decoded = tm.decode_tokens;
  std::fprintf(stderr,
               "\n[%s] prompt %lld tok, %.1f tok/s | generated %lld tok, %.1f tok/s | "
               "time to first token %.1f ms | total %.2f s | %d thread%s\n",
               o.summary_tag.c_str(), static_cast<long long>(t.prompt_tokens),
               t.prompt_seconds > 0 ? t.prompt_tokens / t.prompt_seconds : 0.0, static_cast<long long>(t.generated),
               decode_s > 0 ? decoded / decode_s : 0.0, 1000 * t.first_token_seconds, t.total_seconds, o.threads,
               o.threads == 1 ? "" : "s");
}

Status apply_sampling(genai::Generator& g, const GenerationOptions& o) {
  genai::SamplingParams p = g.sampling();
  if (o.temperature) p.temperature = *o.temperature;
  if (o.top_k) p.top_k = *o.top_k;
  if (o.top_p) p.top_p = *o.top_p;
  if (o.repetition_penalty) p.repetition_penalty = *o.repetition_penalty;
  if (o.seed) p.seed = *o.seed;
  return g.set_sampling(p);
}

// Appends `ids` after the longest prefix the generator already holds (the earlier turns).
Status append_reusing(genai::Generator& g, const std::vector<int32_t>& ids) {
  const std::vector<int32_t>& have = g.tokens();
  size_t common = 0;
  while (common < have.size() && common < ids.size() && have[common] == ids[common]) ++common;
  if (common == ids.size() && common > 0) --common;  // the last token must run to give logits
  g.rewind(common);
  return g.append_tokens(ids.data() + common, ids.size() - common);
}

// The conversation rendered with the chat template and encoded. When it leaves less room than
// an answer needs (max_tokens, at most a quarter of the cache), the oldest exchanges are
// forgotten, as ollama does; the system message and the new user message stay.
Result<std::vector<int32_t>> render_fitting(const genai::Generator& g, const GenerationOptions& o,
                                            nlohmann::ordered_json& messages, size_t first_exchange) {
  const size_t capacity = static_cast<size_t>(g.max_length());
  const size_t room = std::max<size_t>(1, std::min<size_t>(o.max_tokens, capacity / 4));
  while (true) {
    XONNX_ASSIGN_OR_RETURN(std::string rendered, genai::apply_chat_template(g.tokenizer().config(), messages));
    std::vector<int32_t> ids = g.tokenizer().encode(rendered, /*add_special_tokens=*/false);
    if (ids.size() + room <= capacity) return ids;
    if (messages.size() < first_exchange + 3) {  // only the new message left
      if (ids.size() < capacity) return ids;
      return invalid_argument("the message takes ", ids.size(), " tokens with the chat template: more than the ",
                              capacity, " of the KV cache (raise --max-length)");
    }
    messages.erase(messages.begin() + first_exchange, messages.begin() + first_exchange + 2);
    std::fprintf(stderr, "(the conversation outgrew the %zu-token KV cache: its oldest exchange is forgotten)\n",
                 capacity);
  }
}

}  // namespace

void add_generation_options(CLI::App& cmd, GenerationOptions& o) {
  cmd.add_option("--max-tokens,-n", o.max_tokens, "tokens to generate at most (default 256)")
      ->check(CLI::PositiveNumber);
  cmd.add_option("--temperature", o.temperature, "0: greedy; default: genai_config.json's search")
      ->check(CLI::Range(0.0f, 100.0f));
  cmd.add_option("--top-k", o.top_k, "sample from the k most likely tokens (0: all)")->check(CLI::NonNegativeNumber);
  cmd.add_option("--top-p", o.top_p, "sample from the smallest set reaching this probability")
      ->check(CLI::Range(0.0f, 1.0f));
  cmd.add_option("--repetition-penalty", o.repetition_penalty, "> 1 discourages tokens seen before");
  cmd.add_option("--seed", o.seed, "seed of the sampler (reproducible output)");
  cmd.add_option("--stop", o.stop, "stop at this text (repeatable); the model's end tokens always stop");
  cmd.add_flag("--ignore-eos", o.ignore_eos, "do not stop at the model's end-of-sequence tokens");
  cmd.add_flag("--special", o.show_special, "print special tokens");
  cmd.add_flag("--ids", o.show_ids,
               "print the generated token ids (space-separated, an end token included) instead of their text");
  cmd.add_option("--threads,-t", o.threads, "threads (default 1)")->check(CLI::PositiveNumber);
  cmd.add_option("--max-length", o.max_length, "KV cache length in tokens (default: search.max_length)")
      ->check(CLI::NonNegativeNumber);
}

Result<std::unique_ptr<genai::Generator>> open_generator(const std::string& dir, const GenerationOptions& o) {
  genai::GeneratorOptions go;
  go.threads = o.threads;
  go.max_length = o.max_length;
  XONNX_ASSIGN_OR_RETURN(std::unique_ptr<genai::Generator> g, genai::Generator::create(dir, go));
  XONNX_RETURN_IF_ERROR(apply_sampling(*g, o));
  return g;
}

Result<std::string> answer(genai::Generator& g, const GenerationOptions& o) {
  using Clock = std::chrono::steady_clock;
  genai::TokenStreamDecoder stream(g.tokenizer(), !o.show_special);
  genai::StopStringMatcher stops(o.stop);
  std::string output;
  auto emit = [&](const std::string& text) {
    if (text.empty()) return;
    output += text;
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  };
  Turn turn;
  g.reset_timings();
  const auto start = Clock::now();
  for (int i = 0; i < o.max_tokens && !g.is_full(); ++i) {
    XONNX_ASSIGN_OR_RETURN(int32_t token, g.next_token());
    if (i == 0) turn.first_token_seconds = std::chrono::duration<double>(Clock::now() - start).count();
    ++turn.generated;
    if (o.show_ids) {
      emit((i > 0 ? " " : "") + std::to_string(token));
      if (!o.ignore_eos && g.is_eos(token)) break;
      continue;
    }
    if (!o.ignore_eos && g.is_eos(token)) break;
    emit(stops.put(stream.put(token)));
    if (stops.stopped()) break;
  }
  if (!o.show_ids && !stops.stopped()) emit(stops.put(stream.flush()) + stops.flush());
  turn.total_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  turn.prompt_tokens = g.timings().prompt_tokens;
  turn.prompt_seconds = g.timings().prompt_seconds;
  std::printf("\n");
  std::fflush(stdout);
  if (o.summary) print_summary(g, turn, o);
  return output;
}

Status run_chat(genai::Generator& g, const GenerationOptions& o, const std::string& system,
                const std::optional<std::string>& single_message) {
  // The answers are the conversation's next turns: they must be text.
  if (o.show_ids) return invalid_argument("--ids: not with a chat conversation (--chat, models run)");
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  if (!system.empty()) messages.push_back({{"role", "system"}, {"content", system}});
  const size_t first_exchange = messages.size();
  const bool terminal = !single_message && isatty(STDIN_FILENO);
  std::string line;
  while (true) {
    if (single_message) {
      line = *single_message;
    } else {
      if (terminal) std::fprintf(stderr, "> ");
      if (!std::getline(std::cin, line) || line == "/exit") break;
      if (line.empty()) continue;
    }
    messages.push_back({{"role", "user"}, {"content", line}});
    XONNX_ASSIGN_OR_RETURN(std::vector<int32_t> ids, render_fitting(g, o, messages, first_exchange));
    XONNX_RETURN_IF_ERROR(append_reusing(g, ids));
    XONNX_ASSIGN_OR_RETURN(std::string text, answer(g, o));
    messages.push_back({{"role", "assistant"}, {"content", text}});
    if (single_message) break;
  }
  return Status::ok();
}

}  // namespace cli
}  // namespace xonnx
