// `xonnx serve`: the OpenAI-compatible HTTP server (docs/serve.md) over a ModelRegistry.
//
// Endpoints: GET /v1/models[/ID], POST /v1/chat/completions, POST /v1/completions (both with
// stream: true as server-sent events ending in "data: [DONE]"), POST /v1/embeddings (embedding
// models), GET /health, GET /metrics
// (Prometheus text), POST /tokenize, POST /detokenize. Errors use OpenAI's JSON shape.
//
// Threads: cpp-httplib serves each connection on a pool thread; generation runs on each
// model's engine thread and reaches the HTTP thread through an genai::EventQueue. A client that
// goes away cancels its generation: a streaming one at the next token it would have received, a
// waiting one within 200 ms (connection_probe.h). A thread waits for the next keep-alive
// deadline (ModelRegistry::run_unloader), so an idle server does not wake up.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "runtime/core/status.h"
#include "sdk/serve/model_registry.h"

namespace httplib {
class Server;
}

namespace xonnx::serve {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 5273;                   // 0: any free port (see Server::port())
  std::string api_key;               // non-empty: requests must send "Authorization: Bearer KEY"
  int http_threads = 16;             // connections served at once (each waiting request holds one)
  size_t max_body_bytes = 8u << 20;  // larger request bodies get 413
};

class ServerMetrics;
class ActiveRequests;

class Server {
 public:
  Server(ServerOptions options, ModelRegistry& registry);
  ~Server();

  // Binds the socket (the port is known afterwards); errors name host and port.
  Status bind();
  int port() const { return port_; }
  // Serves until stop(); returns after in-flight requests ended.
  void run();
  // Stops accepting, cancels running generations, and makes run() return. Any thread.
  void stop();

 private:
  void install_routes();

  ServerOptions options_;
  ModelRegistry& registry_;
  std::unique_ptr<httplib::Server> http_;
  std::unique_ptr<ServerMetrics> metrics_;
  std::unique_ptr<ActiveRequests> active_;
  std::atomic<bool> stopping_{false};
  int port_ = 0;
};

}  // namespace xonnx::serve
