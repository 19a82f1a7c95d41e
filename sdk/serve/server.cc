#include "sdk/serve/server.h"

#include <httplib.h>

#include <thread>

#include "sdk/genai/chat_template.h"
#include "sdk/serve/embeddings.h"
#include "sdk/serve/server_state.h"

namespace xonnx::serve {

using json = nlohmann::json;

namespace {

// Constant-time comparison, so that response times do not reveal how much of a key matched.
bool same_secret(const std::string& a, const std::string& b) {
  unsigned diff = a.size() == b.size() ? 0u : 1u;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned>(a[i] ^ (i < b.size() ? b[i] : 0));
  return diff == 0;
}

void send_json(httplib::Response& res, const json& body) {
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

json model_json(const ModelStatus& m) {
  return {{"id", m.name},
          {"object", "model"},
          {"created", m.created},
          {"owned_by", "xonnx"},
          {"status", m.loaded    ? "loaded"
                     : m.loading ? "loading"
                                 : "available"}};
}

}  // namespace

Server::Server(ServerOptions options, ModelRegistry& registry)
    : options_(std::move(options)),
      registry_(registry),
      http_(std::make_unique<httplib::Server>()),
      metrics_(std::make_unique<ServerMetrics>()),
      active_(std::make_unique<ActiveRequests>()) {
  install_routes();
}

Server::~Server() { stop(); }

Status Server::bind() {
  const int threads = std::max(2, options_.http_threads);
  http_->new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  http_->set_payload_max_length(options_.max_body_bytes);
  http_->set_keep_alive_timeout(5);
  http_->set_read_timeout(30);
  if (options_.port == 0) {
    port_ = http_->bind_to_any_port(options_.host);
    if (port_ <= 0) return io_error("cannot listen on ", options_.host, " (any port)");
  } else {
    if (!http_->bind_to_port(options_.host, options_.port)) {
      return io_error("cannot listen on ", options_.host, ":", options_.port,
                      " (in use, or not an address of this host)");
    }
    port_ = options_.port;
  }
  return Status::ok();
}

void Server::run() {
  std::thread unloader([this] { registry_.run_unloader(); });  // sleeps until a keep-alive runs out
  http_->listen_after_bind();
  stopping_ = true;
  registry_.stop_unloader();
  unloader.join();
}

void Server::stop() {
  if (stopping_.exchange(true) && !http_->is_running()) return;
  active_->cancel_all();  // streams end with their final events; waiting handlers return
  http_->stop();
}

void Server::install_routes() {
  auto ctx = std::make_shared<ServerContext>(ServerContext{registry_, *metrics_, *active_, stopping_});
  httplib::Server& http = *http_;

  http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (options_.api_key.empty() || req.path == "/health") return httplib::Server::HandlerResponse::Unhandled;
    const std::string auth = req.get_header_value("Authorization");
    const std::string bearer = "Bearer ";
    if (auth.compare(0, bearer.size(), bearer) != 0 || !same_secret(auth.substr(bearer.size()), options_.api_key)) {
      send_error(res,
                 {401, "invalid_request_error",
                  auth.empty() ? "missing API key: send 'Authorization: Bearer KEY'" : "incorrect API key provided", "",
                  "invalid_api_key"});
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  // Statuses httplib sets itself (unknown path 404, oversized body 413, ...) get OpenAI's shape.
  http.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    if (res.status == 404)
      send_error(res, {404, "invalid_request_error", "unknown endpoint: " + req.method + " " + req.path, "", ""});
    else if (res.status == 413)
      send_error(res, {413, "invalid_request_error", "the request body is too large", "", ""});
    else
      send_error(res, {res.status, "invalid_request_error",
                       "the request failed (HTTP " + std::to_string(res.status) + ")", "", ""});
  });
  http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    send_error(res, {500, "server_error", "internal error: " + what, "", ""});
  });
  // Counted after routing (error handler included) but before the response is written: a
  // logger runs after the client has its answer, so a client reading /metrics right after
  // could miss its own request.
  http.set_post_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    // Paths as routed (unknown ones pooled), so that the label set stays small.
    std::string path = req.matches.empty() ? "other" : req.path;
    if (path.rfind("/v1/models/", 0) == 0) path = "/v1/models/{id}";
    metrics_->count_request(path, res.status);
  });

  http.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
    const bool loading = registry_.loading();
    res.status = stopping_ ? 503 : loading ? 503 : 200;
    send_json(res, {{"status", stopping_ ? "stopping" : loading ? "loading" : "ok"}});
  });
  http.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics_->render(registry_.list(), registry_.unloader_wakeups()), "text/plain; version=0.0.4");
  });
  http.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
    json data = json::array();
    for (const ModelStatus& m : registry_.list()) data.push_back(model_json(m));
    send_json(res, {{"object", "list"}, {"data", data}});
  });
  http.Get(R"(/v1/models/(.+))", [this](const httplib::Request& req, httplib::Response& res) {
    for (const ModelStatus& m : registry_.list()) {
      if (m.name == req.matches[1].str()) return send_json(res, model_json(m));
    }
    send_error(res, {404, "invalid_request_error", "The model '" + req.matches[1].str() + "' does not exist", "model",
                     "model_not_found"});
  });
  http.Post("/v1/chat/completions", [ctx](const httplib::Request& req, httplib::Response& res) {
    handle_completion(req, res, Endpoint::kChat, *ctx);
  });
  http.Post("/v1/completions", [ctx](const httplib::Request& req, httplib::Response& res) {
    handle_completion(req, res, Endpoint::kCompletion, *ctx);
  });
  http.Post("/v1/embeddings",
            [ctx](const httplib::Request& req, httplib::Response& res) { handle_embeddings(req, res, *ctx); });
  http.Post("/tokenize", [ctx](const httplib::Request& req, httplib::Response& res) {
    TokenizeParse parsed = parse_tokenize_request(req.body, false);
    if (!parsed.request) return send_error(res, parsed.error);
    ApiError error;
    auto backend = acquire_model(*ctx, parsed.request->model, error);
    if (!backend.is_ok()) return send_error(res, error);
    std::vector<int32_t> ids;
    if (!parsed.request->messages.is_null()) {
      CompletionRequest chat;
      chat.messages = parsed.request->messages;
      if (!build_prompt(*backend.value(), chat, ids, error)) return send_error(res, error);
    } else {
      ids = backend.value()->tokenizer().encode(parsed.request->text, parsed.request->add_special);
    }
    send_json(res, {{"model", parsed.request->model}, {"tokens", ids}, {"count", ids.size()}});
  });
  http.Post("/detokenize", [ctx](const httplib::Request& req, httplib::Response& res) {
    TokenizeParse parsed = parse_tokenize_request(req.body, true);
    if (!parsed.request) return send_error(res, parsed.error);
    ApiError error;
    auto backend = acquire_model(*ctx, parsed.request->model, error);
    if (!backend.is_ok()) return send_error(res, error);
    const genai::Tokenizer& tok = backend.value()->tokenizer();
    for (int32_t id : parsed.request->tokens) {
      if (id >= tok.vocab_size()) {
        return send_error(res, bad_request("token id " + std::to_string(id) + " is outside the vocabulary (" +
                                               std::to_string(tok.vocab_size()) + " tokens)",
                                           "tokens"));
      }
    }
    send_json(res, {{"model", parsed.request->model}, {"content", tok.decode(parsed.request->tokens)}});
  });
}

}  // namespace xonnx::serve
