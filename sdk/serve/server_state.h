// State the server's handlers share (sdk/serve/server.cc, completions.cc): request metrics
// for /metrics and the generations in flight (cancelled on shutdown). Internal to xonnx_serve.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sdk/serve/api_request.h"
#include "sdk/serve/model_registry.h"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace xonnx::serve {

// Counters since start, rendered in the Prometheus text format.
class ServerMetrics {
 public:
  void count_request(const std::string& path, int status);
  // A generation's final event: its token counts and time to first token.
  void count_generation(const genai::TokenEvent& final_event);
  // An answered /v1/embeddings request.
  void count_embeddings(uint64_t inputs, uint64_t tokens);
  std::string render(const std::vector<ModelStatus>& models, uint64_t keep_alive_wakeups) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;
  std::map<std::string, uint64_t> finish_reasons_;
  uint64_t prompt_tokens_ = 0, cached_prompt_tokens_ = 0, completion_tokens_ = 0;
  uint64_t embedding_inputs_ = 0, embedding_tokens_ = 0;
  std::vector<uint64_t> ttft_buckets_;  // cumulative counts per kTtftBoundsMs
  double ttft_sum_s_ = 0;
  uint64_t ttft_count_ = 0;
};

// Generations running now, so that shutdown can cancel them.
class ActiveRequests {
 public:
  void add(const std::shared_ptr<ModelBackend>& backend, uint64_t id);
  void remove(const std::shared_ptr<ModelBackend>& backend, uint64_t id);
  void cancel_all();
  size_t size() const;

 private:
  mutable std::mutex mutex_;
  std::set<std::pair<std::shared_ptr<ModelBackend>, uint64_t>> running_;
};

struct ServerContext {
  ModelRegistry& registry;
  ServerMetrics& metrics;
  ActiveRequests& active;
  const std::atomic<bool>& stopping;
};

// Writes an OpenAI error response.
void send_error(httplib::Response& res, const ApiError& error);

// POST /v1/chat/completions and /v1/completions.
void handle_completion(const httplib::Request& req, httplib::Response& res, Endpoint endpoint, ServerContext& ctx);

// Resolves a request's model name (empty: the first model); 404 when unknown.
Result<std::shared_ptr<ModelBackend>> acquire_model(ServerContext& ctx, std::string& name, ApiError& error);

// The prompt's token ids: the chat template over the messages, or the completion prompt.
bool build_prompt(const ModelBackend& backend, const CompletionRequest& request, std::vector<int32_t>& ids,
                  ApiError& error);

}  // namespace xonnx::serve
