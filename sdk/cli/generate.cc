// xonnx generate: text from a GenAI model folder, streamed to stdout as it comes, and a
// llama-bench style summary (prompt and generation tokens/s, time to first token) on stderr.
// --prompt TEXT continues raw text; --chat applies the folder's chat template, to one message
// (--prompt) or to a conversation read from stdin line by line, reusing the KV cache of the
// previous turns.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "sdk/cli/commands.h"
#include "sdk/genai/chat_template.h"
#include "sdk/genai/generator.h"
#include "sdk/genai/stop_strings.h"

namespace xonnx {
namespace cli {
namespace {

struct GenerateOptions {
  std::string dir;
  std::string prompt;
  bool chat = false;
  std::string system;
  int max_tokens = 256;
  std::optional<float> temperature, top_p, repetition_penalty;
  std::optional<int> top_k;
  std::optional<int64_t> seed;
  std::vector<std::string> stop;
  bool ignore_eos = false;
  bool show_special = false;
  int threads = 1;
  int max_length = 0;
  bool quiet = false;
};

struct Turn {
  int64_t prompt_tokens = 0;  // computed (not reused from the cache)
  int64_t generated = 0;
  double prompt_seconds = 0, first_token_seconds = 0, total_seconds = 0;
};

// Generates after the tokens already appended, streaming the text; returns the text.
Result<std::string> generate_turn(genai::Generator& g, const GenerateOptions& o, Turn& turn) {
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
  g.reset_timings();
  const auto start = Clock::now();
  for (int i = 0; i < o.max_tokens && !g.is_full(); ++i) {
    XONNX_ASSIGN_OR_RETURN(int32_t token, g.next_token());
    if (i == 0) turn.first_token_seconds = std::chrono::duration<double>(Clock::now() - start).count();
    ++turn.generated;
    if (!o.ignore_eos && g.is_eos(token)) break;
    emit(stops.put(stream.put(token)));
    if (stops.stopped()) break;
  }
  if (!stops.stopped()) emit(stops.put(stream.flush()) + stops.flush());
  turn.total_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  turn.prompt_tokens = g.timings().prompt_tokens;
  turn.prompt_seconds = g.timings().prompt_seconds;
  return output;
}

void print_summary(const genai::Generator& g, const Turn& t, const GenerateOptions& o) {
  if (o.quiet) return;
  const auto& tm = g.timings();
  // Generation speed counts the tokens after the first (each needed one decode run).
  const double decode_s = tm.decode_seconds + tm.sample_seconds;
  const int64_t decoded = tm.decode_tokens;
  std::fprintf(stderr,
               "\n[xonnx generate] prompt %lld tok, %.1f tok/s | generated %lld tok, %.1f tok/s | "
               "time to first token %.1f ms | total %.2f s | %d thread%s\n",
               static_cast<long long>(t.prompt_tokens), t.prompt_seconds > 0 ? t.prompt_tokens / t.prompt_seconds : 0.0,
               static_cast<long long>(t.generated), decode_s > 0 ? decoded / decode_s : 0.0, 1000 * t.first_token_seconds,
               t.total_seconds, o.threads, o.threads == 1 ? "" : "s");
}

Status apply_options(genai::Generator& g, const GenerateOptions& o) {
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

int fail(const Status& s) {
  std::fprintf(stderr, "error: %s\n", s.to_string().c_str());
  return 1;
}

int run_generate(const GenerateOptions& o) {
  genai::GeneratorOptions go;
  go.threads = o.threads;
  go.max_length = o.max_length;
  auto created = genai::Generator::create(o.dir, go);
  if (!created.is_ok()) return fail(created.status());
  genai::Generator& g = **created;
  if (Status s = apply_options(g, o); !s.is_ok()) return fail(s);

  if (!o.chat) {
    const std::vector<int32_t> ids = g.tokenizer().encode(o.prompt, /*add_special_tokens=*/true);
    if (ids.empty()) return fail(invalid_argument("the prompt encodes to no tokens"));
    if (Status s = g.append_tokens(ids.data(), ids.size()); !s.is_ok()) return fail(s);
    Turn turn;
    auto out = generate_turn(g, o, turn);
    if (!out.is_ok()) return fail(out.status());
    std::printf("\n");
    print_summary(g, turn, o);
    return 0;
  }

  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  if (!o.system.empty()) messages.push_back({{"role", "system"}, {"content", o.system}});
  const bool interactive = o.prompt.empty();
  std::string line;
  while (true) {
    if (interactive) {
      std::fprintf(stderr, "> ");
      if (!std::getline(std::cin, line)) break;
      if (line.empty()) continue;
    } else {
      line = o.prompt;
    }
    messages.push_back({{"role", "user"}, {"content", line}});
    auto rendered = genai::apply_chat_template(g.tokenizer().config(), messages);
    if (!rendered.is_ok()) return fail(rendered.status());
    const std::vector<int32_t> ids = g.tokenizer().encode(*rendered, /*add_special_tokens=*/false);
    if (Status s = append_reusing(g, ids); !s.is_ok()) return fail(s);
    Turn turn;
    auto out = generate_turn(g, o, turn);
    if (!out.is_ok()) return fail(out.status());
    std::printf("\n");
    std::fflush(stdout);
    print_summary(g, turn, o);
    messages.push_back({{"role", "assistant"}, {"content", *out}});
    if (!interactive) break;
  }
  return 0;
}

}  // namespace

Runner add_generate_command(CLI::App& app) {
  auto o = std::make_shared<GenerateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "generate", "Generate text with a GenAI model folder (genai_config.json, model.onnx, tokenizer.json)");
  cmd->add_option("dir", o->dir, "the model folder")->required()->check(CLI::ExistingDirectory);
  cmd->add_option("--prompt,-p", o->prompt, "text to continue; with --chat, the user's message");
  cmd->add_flag("--chat", o->chat,
                "apply the chat template: to --prompt, or to lines read from stdin (a conversation)");
  cmd->add_option("--system", o->system, "a system message (with --chat)");
  cmd->add_option("--max-tokens,-n", o->max_tokens, "tokens to generate at most (default 256)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--temperature", o->temperature, "0: greedy; default: genai_config.json's search")
      ->check(CLI::Range(0.0f, 100.0f));
  cmd->add_option("--top-k", o->top_k, "sample from the k most likely tokens (0: all)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--top-p", o->top_p, "sample from the smallest set reaching this probability")
      ->check(CLI::Range(0.0f, 1.0f));
  cmd->add_option("--repetition-penalty", o->repetition_penalty, "> 1 discourages tokens seen before");
  cmd->add_option("--seed", o->seed, "seed of the sampler (reproducible output)");
  cmd->add_option("--stop", o->stop, "stop at this text (repeatable); the model's end tokens always stop");
  cmd->add_flag("--ignore-eos", o->ignore_eos, "do not stop at the model's end-of-sequence tokens");
  cmd->add_flag("--special", o->show_special, "print special tokens");
  cmd->add_option("--threads,-t", o->threads, "threads (default 1)")->check(CLI::PositiveNumber);
  cmd->add_option("--max-length", o->max_length, "KV cache length in tokens (default: search.max_length)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--quiet,-q", o->quiet, "no summary line");
  return [o, cmd]() {
    if (!o->chat && o->prompt.empty()) {
      std::fprintf(stderr, "error: give --prompt TEXT or --chat\n%s", cmd->help().c_str());
      return 2;
    }
    return run_generate(*o);
  };
}

}  // namespace cli
}  // namespace xonnx
