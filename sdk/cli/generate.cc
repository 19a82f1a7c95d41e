// xonnx generate: text from a GenAI model folder, streamed to stdout as it comes, and a
// llama-bench style summary (prompt and generation tokens/s, time to first token) on stderr.
// --prompt TEXT continues raw text; --chat applies the folder's chat template, to one message
// (--prompt) or to a conversation read from stdin line by line, reusing the KV cache of the
// previous turns (sdk/cli/chat.h).
#include <cstdio>

#include "sdk/cli/chat.h"
#include "sdk/cli/commands.h"

namespace xonnx {
namespace cli {
namespace {

struct GenerateOptions {
  std::string dir;
  std::string prompt;
  bool chat = false;
  std::string system;
  bool quiet = false;
  GenerationOptions gen;
};

int fail(const Status& s) {
  std::fprintf(stderr, "error: %s\n", s.to_string().c_str());
  return 1;
}

int run_generate(GenerateOptions& o) {
  o.gen.summary = !o.quiet;
  auto created = open_generator(o.dir, o.gen);
  if (!created.is_ok()) return fail(created.status());
  genai::Generator& g = **created;
  if (o.chat) {
    std::optional<std::string> single;
    if (!o.prompt.empty()) single = o.prompt;
    const Status s = run_chat(g, o.gen, o.system, single);
    return s.is_ok() ? 0 : fail(s);
  }
  const std::vector<int32_t> ids = g.tokenizer().encode(o.prompt, /*add_special_tokens=*/true);
  if (ids.empty()) return fail(invalid_argument("the prompt encodes to no tokens"));
  if (Status s = g.append_tokens(ids.data(), ids.size()); !s.is_ok()) return fail(s);
  auto out = answer(g, o.gen);
  return out.is_ok() ? 0 : fail(out.status());
}

}  // namespace

Runner add_generate_command(CLI::App& app) {
  auto o = std::make_shared<GenerateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "generate", "Generate text with a GenAI model folder (genai_config.json, model.onnx, tokenizer.json)");
  cmd->add_option("dir", o->dir, "the model folder")->required()->check(CLI::ExistingDirectory);
  cmd->add_option("--prompt,-p", o->prompt, "text to continue; with --chat, the user's message");
  cmd->add_flag("--chat", o->chat,
                "apply the chat template: to --prompt, or to lines read from stdin (a conversation; "
                "/exit ends it)");
  cmd->add_option("--system", o->system, "a system message (with --chat)");
  add_generation_options(*cmd, o->gen);
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
