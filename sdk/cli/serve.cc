// xonnx serve: the OpenAI-compatible local server (docs/serve.md).
#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <thread>

#include "sdk/cli/commands.h"
#include "sdk/serve/model_cache.h"
#include "sdk/serve/server.h"

namespace xonnx {
namespace cli {

namespace {

struct ServeOptions {
  std::vector<std::string> models;
  std::string host = "127.0.0.1";
  int port = 5273;
  std::string api_key;
  int max_queue = 64;
  int parallel = 1;
  std::string keep_alive = "5m";
  int threads = 0;
  int context = 0;
  int64_t kv_budget_mib = 0;
  int http_threads = 0;
  size_t max_body_kib = 8192;
};

// "30s", "5m", "1h", "250ms", a bare number of seconds, or a negative value (forever).
bool parse_duration(const std::string& text, std::chrono::milliseconds& out) {
  if (text.empty()) return false;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  const std::string unit = end ? end : "";
  if (end == text.c_str()) return false;
  if (value < 0) {
    out = std::chrono::milliseconds(-1);
    return true;
  }
  double ms = 0;
  if (unit.empty() || unit == "s")
    ms = value * 1000;
  else if (unit == "ms")
    ms = value;
  else if (unit == "m")
    ms = value * 60000;
  else if (unit == "h")
    ms = value * 3600000;
  else
    return false;
  out = std::chrono::milliseconds(static_cast<int64_t>(ms));
  return true;
}

std::string model_name(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  const size_t slash = dir.find_last_of('/');
  return slash == std::string::npos ? dir : dir.substr(slash + 1);
}

int run_serve(const ServeOptions& o) {
  std::chrono::milliseconds keep_alive{};
  if (!parse_duration(o.keep_alive, keep_alive)) {
    std::fprintf(stderr, "error: --keep-alive %s: expected a duration such as 30s, 5m, 1h, or -1 (never)\n",
                 o.keep_alive.c_str());
    return 2;
  }
  serve::BackendOptions backend;
  backend.parallel = o.parallel;
  backend.max_queue = o.max_queue;
  backend.threads = o.threads;
  backend.context_length = o.context;
  backend.kv_budget_bytes = o.kv_budget_mib << 20;
  serve::ModelRegistry registry(
      [backend](const std::string& dir) {
        std::fprintf(stderr, "[serve] loading %s\n", dir.c_str());
        return serve::load_model_backend(dir, backend);
      },
      keep_alive);
  // Folders given are loaded at start; without any, the cache's models load on first request.
  std::vector<std::pair<std::string, std::string>> models;
  for (const std::string& dir : o.models) models.emplace_back(model_name(dir), dir);
  if (models.empty()) {
    auto cached = serve::list_cached_models(serve::model_cache_dir());
    if (!cached.is_ok() || cached.value().empty()) {
      std::fprintf(stderr, "error: give model folders, or add models to the cache %s (xonnx models add DIR)\n",
                   serve::model_cache_dir().c_str());
      return 2;
    }
    for (const auto& m : cached.value()) models.emplace_back(m.name, m.path);
  }
  for (const auto& [name, dir] : models) {
    const Status added = registry.add(name, dir);
    if (!added.is_ok()) {
      std::fprintf(stderr, "error: %s\n", added.message().c_str());
      return 2;
    }
  }
  serve::ServerOptions so;
  so.host = o.host;
  so.port = o.port;
  so.api_key = o.api_key;
  so.max_body_bytes = o.max_body_kib * 1024;
  // Each waiting or streaming request holds an HTTP thread: room for every slot and the queue.
  so.http_threads = o.http_threads > 0 ? o.http_threads : std::min(256, o.parallel + o.max_queue + 8);

  // SIGINT / SIGTERM are taken by a thread of ours (blocked everywhere else, before any thread
  // starts): it stops the server, which cancels running generations and returns from run().
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  ::signal(SIGPIPE, SIG_IGN);

  serve::Server server(so, registry);
  const Status bound = server.bind();
  if (!bound.is_ok()) {
    std::fprintf(stderr, "error: %s\n", bound.message().c_str());
    return 1;
  }
  if (o.host != "127.0.0.1" && o.host != "localhost" && o.host != "::1" && o.api_key.empty()) {
    std::fprintf(stderr, "[serve] warning: listening on %s without --api-key: anyone who can reach it may use it\n",
                 o.host.c_str());
  }
  std::fprintf(stderr, "[serve] http://%s:%d/v1  models:", o.host.c_str(), server.port());
  for (const auto& m : registry.list()) std::fprintf(stderr, " %s", m.name.c_str());
  std::fprintf(stderr, "  (Ctrl-C stops)\n");

  std::thread signal_waiter([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    if (sig == SIGINT || sig == SIGTERM) {
      std::fprintf(stderr, "[serve] %s: stopping\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
      server.stop();
    }
  });
  // Load the models given now, so that the first request does not wait (/health says 503 meanwhile).
  std::thread preload([&] {
    if (o.models.empty()) return;
    for (const auto& m : registry.list()) {
      auto loaded = registry.acquire(m.name);
      if (!loaded.is_ok()) std::fprintf(stderr, "[serve] %s: %s\n", m.name.c_str(), loaded.status().message().c_str());
    }
  });
  server.run();
  preload.join();
  pthread_kill(signal_waiter.native_handle(), SIGTERM);  // wakes sigwait if no signal came
  signal_waiter.join();
  registry.unload_all();
  std::fprintf(stderr, "[serve] stopped\n");
  return 0;
}

}  // namespace

Runner add_serve_command(CLI::App& app) {
  auto o = std::make_shared<ServeOptions>();
  CLI::App* cmd = app.add_subcommand("serve", "Serve models over an OpenAI-compatible HTTP API (docs/serve.md)");
  cmd->add_option("models", o->models,
                  "model folders (genai_config.json, model, tokenizer), named by folder name; none: the model cache");
  cmd->add_option("--host", o->host, "address to listen on (default: loopback only)")->capture_default_str();
  cmd->add_option("--port", o->port, "TCP port (0: any free port)")->capture_default_str();
  cmd->add_option("--api-key", o->api_key, "require 'Authorization: Bearer KEY' on every request but /health");
  cmd->add_option("--max-queue", o->max_queue, "requests that may wait per model; more get 429")->capture_default_str();
  cmd->add_option("--parallel", o->parallel, "sequences generated at once per model")->capture_default_str();
  cmd->add_option("--keep-alive", o->keep_alive, "unload a model idle this long (30s, 5m, 1h; -1: never)")
      ->capture_default_str();
  cmd->add_option("--threads", o->threads, "threads per model (0: all cores)")->capture_default_str();
  cmd->add_option("--ctx-size", o->context, "tokens per sequence (0: the model's max_length)")->capture_default_str();
  cmd->add_option("--kv-budget-mib", o->kv_budget_mib, "cap of each model's KV cache (slots shrink to fit; 0: none)")
      ->capture_default_str();
  cmd->add_option("--http-threads", o->http_threads, "connections served at once (0: parallel + max-queue + 8)");
  cmd->add_option("--max-body-kib", o->max_body_kib, "largest request body; larger get 413")->capture_default_str();
  return [o]() { return run_serve(*o); };
}

}  // namespace cli
}  // namespace xonnx
