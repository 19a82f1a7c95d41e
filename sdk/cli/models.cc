// xonnx models list | add DIR | remove NAME | info NAME | run NAME: the local model cache that
// `xonnx serve` serves when no folder is given (docs/serve.md), and a terminal chat with one of
// its models (the conversation loop of `xonnx generate --chat`, sdk/cli/chat.h).
#include <cstdio>

#include "sdk/cli/chat.h"
#include "sdk/cli/commands.h"
#include "sdk/serve/model_cache.h"

namespace xonnx {
namespace cli {

namespace {

struct ModelsOptions {
  std::string dir, name;
  std::string system;  // models run
  bool verbose = false;
  GenerationOptions gen;
};

void print_model(const serve::CachedModel& m) {
  std::printf("%-24s %-8s %8.1f MiB  context %-6d vocab %-7d layers %d\n", m.name.c_str(), m.type.c_str(),
              m.bytes / 1048576.0, m.context_length, m.vocab_size, m.layers);
}

int fail(const Status& s) {
  std::fprintf(stderr, "error: %s\n", s.message().c_str());
  return 1;
}

}  // namespace

Runner add_models_command(CLI::App& app) {
  auto o = std::make_shared<ModelsOptions>();
  CLI::App* cmd = app.add_subcommand("models", "The local model cache (" + serve::model_cache_dir() + ")");
  cmd->require_subcommand(1);
  CLI::App* list = cmd->add_subcommand("list", "list the cached models");
  CLI::App* add = cmd->add_subcommand("add", "copy a GenAI model folder into the cache");
  add->add_option("dir", o->dir, "model folder (genai_config.json, model, tokenizer)")->required();
  add->add_option("--name", o->name, "name in the cache (default: the folder's name)");
  CLI::App* remove = cmd->add_subcommand("remove", "delete a model from the cache");
  remove->add_option("name", o->name, "model name")->required();
  CLI::App* info = cmd->add_subcommand("info", "show a cached model");
  info->add_option("name", o->name, "model name")->required();
  CLI::App* run = cmd->add_subcommand(
      "run", "chat with a cached model in the terminal: one message per line, /exit or end of input ends");
  run->add_option("name", o->name, "model name")->required();
  run->add_option("--system", o->system, "a system message");
  add_generation_options(*run, o->gen);
  run->add_flag("--verbose,-v", o->verbose, "print the speed summary after each answer");
  return [o, list, add, remove, run]() {
    const std::string cache = serve::model_cache_dir();
    if (list->parsed()) {
      auto models = serve::list_cached_models(cache);
      if (!models.is_ok()) return fail(models.status());
      if (models.value().empty()) std::printf("no models in %s (xonnx models add DIR)\n", cache.c_str());
      for (const auto& m : models.value()) print_model(m);
      return 0;
    }
    if (add->parsed()) {
      auto m = serve::add_cached_model(cache, o->dir, o->name);
      if (!m.is_ok()) return fail(m.status());
      print_model(m.value());
      return 0;
    }
    if (remove->parsed()) {
      const Status s = serve::remove_cached_model(cache, o->name);
      if (!s.is_ok()) return fail(s);
      std::printf("removed %s\n", o->name.c_str());
      return 0;
    }
    auto m = serve::find_cached_model(cache, o->name);
    if (!m.is_ok()) return fail(m.status());
    if (run->parsed()) {
      o->gen.summary = o->verbose;
      o->gen.summary_tag = "xonnx models run";
      auto g = open_generator(m.value().path, o->gen);
      if (!g.is_ok()) return fail(g.status());
      const Status s = run_chat(**g, o->gen, o->system);
      return s.is_ok() ? 0 : fail(s);
    }
    print_model(m.value());
    std::printf("path %s\n", m.value().path.c_str());
    return 0;
  };
}

}  // namespace cli
}  // namespace xonnx
