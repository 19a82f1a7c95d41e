// POST /v1/chat/completions and /v1/completions: request -> prompt ids -> engine -> response
// (one JSON body, or server-sent events).
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <random>

#include "sdk/genai/chat_template.h"
#include "sdk/serve/connection_probe.h"
#include "sdk/serve/server_state.h"

namespace xonnx::serve {

using json = nlohmann::json;

namespace {

std::string new_id(const char* prefix) {
  static std::atomic<uint64_t> counter{0};
  static const uint64_t salt = std::random_device{}();
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%s%08llx%08llx", prefix, static_cast<unsigned long long>(salt & 0xffffffffULL),
                static_cast<unsigned long long>(++counter));
  return buf;
}

int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

json usage_json(const genai::Usage& u) {
  return {{"prompt_tokens", u.prompt_tokens},
          {"completion_tokens", u.completion_tokens},
          {"total_tokens", u.prompt_tokens + u.completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", u.cached_prompt_tokens}}}};
}

// llama-server's names, plus the queue wait and time to first token.
json timings_json(const genai::TokenEvent& e) {
  const genai::RequestTimings& t = e.timings;
  const int32_t predicted = e.usage.completion_tokens;
  const int32_t computed = e.usage.prompt_tokens - e.usage.cached_prompt_tokens;
  return {{"queue_ms", t.queue_ms},
          {"prompt_n", computed},
          {"cache_n", e.usage.cached_prompt_tokens},
          {"prompt_ms", t.prompt_ms},
          {"prompt_per_second", t.prompt_ms > 0 ? computed * 1000.0 / t.prompt_ms : 0.0},
          {"first_token_ms", t.first_token_ms},
          {"predicted_n", predicted},
          {"predicted_ms", t.decode_ms},
          {"predicted_per_second", t.decode_ms > 0 && predicted > 1 ? (predicted - 1) * 1000.0 / t.decode_ms : 0.0}};
}

const char* finish_name(genai::FinishReason reason) {
  // OpenAI knows "stop" and "length"; a cancelled generation (shutdown) reads as "stop" there.
  return reason == genai::FinishReason::kLength ? "length" : "stop";
}

// The sampling of a request: the model's defaults, overridden by what the request set.
genai::SamplingParams merge_sampling(const genai::SamplingParams& defaults, const CompletionRequest& r) {
  genai::SamplingParams s = defaults;
  const genai::SamplingParams& q = r.sampling;
  if (r.temperature_set) s.temperature = q.temperature;
  if (r.top_p_set) s.top_p = q.top_p;
  if (r.top_k_set) s.top_k = q.top_k;
  if (q.min_p != 0) s.min_p = q.min_p;
  if (q.repetition_penalty != 1) s.repetition_penalty = q.repetition_penalty;
  s.presence_penalty = q.presence_penalty;
  s.frequency_penalty = q.frequency_penalty;
  s.logit_bias = q.logit_bias;
  if (q.seed >= 0) s.seed = q.seed;
  return s;
}

// The field a SamplingParams::validate message names, as the request spells it.
std::string sampling_field(const std::string& message) {
  for (const char* f : {"temperature", "top_p", "top_k", "min_p", "repetition_penalty", "presence_penalty",
                        "frequency_penalty", "logit_bias", "seed"}) {
    if (message.find(f) != std::string::npos) return f;
  }
  return {};
}

struct Generation {
  std::string id, model;
  int64_t created = 0;
  Endpoint endpoint = Endpoint::kChat;
  std::shared_ptr<ModelBackend> backend;
  std::shared_ptr<genai::EventQueue> events;
  uint64_t request_id = 0;
  bool finished = false;
};

json choice_chunk(const Generation& g, const json& content_or_null, const char* finish, bool role) {
  json choice = {{"index", 0}, {"logprobs", nullptr}, {"finish_reason", finish ? json(finish) : json(nullptr)}};
  if (g.endpoint == Endpoint::kChat) {
    json delta = json::object();
    if (role) delta["role"] = "assistant";
    if (!content_or_null.is_null()) delta["content"] = content_or_null;
    choice["delta"] = delta;
  } else {
    choice["text"] = content_or_null.is_null() ? json("") : content_or_null;
  }
  return {{"id", g.id},
          {"object", g.endpoint == Endpoint::kChat ? "chat.completion.chunk" : "text_completion"},
          {"created", g.created},
          {"model", g.model},
          {"system_fingerprint", "xonnx"},
          {"choices", json::array({choice})}};
}

std::string sse(const json& j) { return "data: " + j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n\n"; }

}  // namespace

Result<std::shared_ptr<ModelBackend>> acquire_model(ServerContext& ctx, std::string& name, ApiError& error) {
  if (name.empty()) name = ctx.registry.first_name();
  auto backend = ctx.registry.acquire(name);
  if (!backend.is_ok()) {
    if (backend.status().code() == StatusCode::kNotFound) {
      error = {404, "invalid_request_error", backend.status().message(), "model", "model_not_found"};
    } else {
      error = {500, "server_error", "model '" + name + "' failed to load: " + backend.status().message(), "model", ""};
    }
  }
  return backend;
}

bool build_prompt(const ModelBackend& backend, const CompletionRequest& request, std::vector<int32_t>& ids,
                  ApiError& error) {
  const genai::Tokenizer& tok = backend.tokenizer();
  if (request.endpoint == Endpoint::kChat) {
    genai::ChatOptions options;
    options.extra = request.template_extra;
    auto text = genai::apply_chat_template(tok.config(), request.messages, options);
    if (!text.is_ok()) {
      error = bad_request("messages: the model's chat template failed: " + text.status().message(), "messages");
      return false;
    }
    ids = tok.encode(text.value(), /*add_special_tokens=*/false);
  } else if (!request.prompt_ids.empty()) {
    for (int32_t id : request.prompt_ids) {
      if (id >= tok.vocab_size()) {
        error = bad_request("prompt: token id " + std::to_string(id) + " is outside the vocabulary (" +
                                std::to_string(tok.vocab_size()) + " tokens)",
                            "prompt");
        return false;
      }
    }
    ids = request.prompt_ids;
  } else {
    ids = tok.encode(request.prompt, /*add_special_tokens=*/true);
  }
  if (ids.empty()) {
    error = bad_request("the prompt is empty", request.endpoint == Endpoint::kChat ? "messages" : "prompt");
    return false;
  }
  if (static_cast<int64_t>(ids.size()) >= backend.context_length()) {
    ApiError e = bad_request("the prompt is " + std::to_string(ids.size()) + " tokens; this model's context holds " +
                                 std::to_string(backend.context_length()) + " (prompt and output)",
                             request.endpoint == Endpoint::kChat ? "messages" : "prompt");
    e.code = "context_length_exceeded";
    error = e;
    return false;
  }
  return true;
}

void handle_completion(const httplib::Request& http_req, httplib::Response& res, Endpoint endpoint,
                       ServerContext& ctx) {
  ParseResult parsed = parse_completion_request(http_req.body, endpoint);
  if (!parsed.request) return send_error(res, parsed.error);
  CompletionRequest& request = *parsed.request;

  ApiError error;
  auto backend_or = acquire_model(ctx, request.model, error);
  if (!backend_or.is_ok()) return send_error(res, error);
  std::shared_ptr<ModelBackend> backend = backend_or.value();
  if (backend->embedding_model()) {
    return send_error(
        res, bad_request("the model '" + request.model + "' is an embedding model: use /v1/embeddings", "model"));
  }

  genai::GenerationRequest gen;
  if (!build_prompt(*backend, request, gen.prompt, error)) return send_error(res, error);
  gen.sampling = merge_sampling(backend->default_sampling(), request);
  const Status valid = gen.sampling.validate(backend->tokenizer().vocab_size());
  if (!valid.is_ok()) return send_error(res, bad_request(valid.message(), sampling_field(valid.message())));
  gen.max_tokens = request.max_tokens.value_or(0);
  gen.stop = request.stop;
  if (request.schema) gen.logits_processor = make_json_processor(request.schema, *backend);

  auto g = std::make_shared<Generation>();
  g->id = new_id(endpoint == Endpoint::kChat ? "chatcmpl-" : "cmpl-");
  g->model = request.model;
  g->created = unix_now();
  g->endpoint = endpoint;
  g->backend = backend;
  g->events = genai::EventQueue::create();
  gen.on_event = g->events->callback();
  if (ctx.stopping) return send_error(res, {503, "server_error", "the server is shutting down", "", ""});
  auto id = backend->submit(std::move(gen));
  if (!id.is_ok()) {
    if (id.status().code() == StatusCode::kResourceExhausted) {
      return send_error(
          res, {429, "rate_limit_exceeded", "the request queue is full: " + id.status().message(), "", "queue_full"});
    }
    return send_error(res, bad_request(id.status().message()));
  }
  g->request_id = id.value();
  ctx.active.add(backend, g->request_id);

  if (!request.stream) {
    // Nothing is written until the end, so a client that leaves is seen on its socket.
    const ConnectionProbe probe(http_req);
    std::string text;
    genai::TokenEvent e;
    bool cancelled = false;
    auto next_probe = std::chrono::steady_clock::now();
    bool got = false;
    do {
      got = g->events->pop(e, std::chrono::milliseconds(200));
      if (!cancelled && std::chrono::steady_clock::now() >= next_probe) {
        next_probe = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
        if (probe.closed()) {
          backend->cancel(g->request_id);  // the final (cancelled) event follows
          cancelled = true;
        }
      }
      if (got) text += e.text;
    } while (!got || e.finish == genai::FinishReason::kNone);
    ctx.active.remove(backend, g->request_id);
    ctx.registry.touch(request.model);
    ctx.metrics.count_generation(e);
    if (e.finish == genai::FinishReason::kError) {
      return send_error(res, {500, "server_error", "generation failed: " + e.error, "", ""});
    }
    json choice = {{"index", 0}, {"logprobs", nullptr}, {"finish_reason", finish_name(e.finish)}};
    if (endpoint == Endpoint::kChat) {
      choice["message"] = {{"role", "assistant"}, {"content", text}, {"refusal", nullptr}};
    } else {
      choice["text"] = text;
    }
    const json body = {{"id", g->id},
                       {"object", endpoint == Endpoint::kChat ? "chat.completion" : "text_completion"},
                       {"created", g->created},
                       {"model", g->model},
                       {"system_fingerprint", "xonnx"},
                       {"choices", json::array({choice})},
                       {"usage", usage_json(e.usage)},
                       {"timings", timings_json(e)}};
    res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
    return;
  }

  // Streaming: the provider runs on this HTTP thread after the headers went out; every token
  // is written as it comes, and a failed write (the client left) cancels the generation.
  const bool include_usage = request.include_usage;
  const std::string model_name = request.model;
  auto first = std::make_shared<bool>(true);
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");
  res.set_chunked_content_provider(
      "text/event-stream",
      [g, first, include_usage, &ctx](size_t, httplib::DataSink& sink) {
        auto write = [&](const std::string& s) { return sink.write(s.data(), s.size()); };
        auto with_usage = [&](json chunk) {
          if (include_usage) chunk["usage"] = nullptr;
          return chunk;
        };
        if (*first) {
          *first = false;
          if (g->endpoint == Endpoint::kChat && !write(sse(with_usage(choice_chunk(*g, "", nullptr, true))))) {
            return false;
          }
        }
        genai::TokenEvent e;
        if (!g->events->pop(e, std::chrono::milliseconds(200))) {
          return !sink.is_writable || sink.is_writable();  // keep waiting unless the client left
        }
        if (e.finish == genai::FinishReason::kNone) {
          return e.text.empty() || write(sse(with_usage(choice_chunk(*g, e.text, nullptr, false))));
        }
        g->finished = true;
        ctx.active.remove(g->backend, g->request_id);
        ctx.metrics.count_generation(e);
        if (e.finish == genai::FinishReason::kError) {
          const ApiError err{500, "server_error", "generation failed: " + e.error, "", ""};
          write(sse(err.to_json()));
        } else {
          if (!e.text.empty() && !write(sse(with_usage(choice_chunk(*g, e.text, nullptr, false))))) return false;
          json last = with_usage(choice_chunk(*g, nullptr, finish_name(e.finish), false));
          last["timings"] = timings_json(e);
          if (!write(sse(last))) return false;
          if (include_usage) {
            json usage = choice_chunk(*g, nullptr, nullptr, false);
            usage["choices"] = json::array();
            usage["usage"] = usage_json(e.usage);
            if (!write(sse(usage))) return false;
          }
        }
        write("data: [DONE]\n\n");
        sink.done();
        return true;
      },
      [g, model_name, &ctx](bool) {
        // Runs when the stream ends, also when the client went away mid-stream.
        if (!g->finished) {
          g->backend->cancel(g->request_id);
          genai::TokenEvent e;
          do {
            e = g->events->pop();  // the final (cancelled) event: the slot is free after it
          } while (e.finish == genai::FinishReason::kNone);
          ctx.active.remove(g->backend, g->request_id);
          ctx.metrics.count_generation(e);
        }
        ctx.registry.touch(model_name);
      });
}

}  // namespace xonnx::serve
