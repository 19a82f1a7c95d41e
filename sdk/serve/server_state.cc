#include "sdk/serve/server_state.h"

#include <httplib.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace xonnx::serve {

namespace {

// Time-to-first-token histogram bounds, in milliseconds.
constexpr double kTtftBoundsMs[] = {25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000};
constexpr size_t kTtftBuckets = sizeof(kTtftBoundsMs) / sizeof(kTtftBoundsMs[0]);

int64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0, resident = 0;
  if (!(statm >> pages >> resident)) return 0;
  return resident * static_cast<int64_t>(::sysconf(_SC_PAGESIZE));
}

std::string label(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace

void ServerMetrics::count_request(const std::string& path, int status) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++requests_[{path, status}];
}

void ServerMetrics::count_generation(const genai::TokenEvent& e) {
  std::lock_guard<std::mutex> lock(mutex_);
  prompt_tokens_ += static_cast<uint64_t>(e.usage.prompt_tokens);
  cached_prompt_tokens_ += static_cast<uint64_t>(e.usage.cached_prompt_tokens);
  completion_tokens_ += static_cast<uint64_t>(e.usage.completion_tokens);
  ++finish_reasons_[genai::finish_reason_name(e.finish)];
  if (e.usage.completion_tokens > 0 && e.timings.first_token_ms > 0) {
    if (ttft_buckets_.empty()) ttft_buckets_.assign(kTtftBuckets, 0);
    for (size_t i = 0; i < kTtftBuckets; ++i) ttft_buckets_[i] += e.timings.first_token_ms <= kTtftBoundsMs[i];
    ttft_sum_s_ += e.timings.first_token_ms / 1000.0;
    ++ttft_count_;
  }
}

void ServerMetrics::count_embeddings(uint64_t inputs, uint64_t tokens) {
  std::lock_guard<std::mutex> lock(mutex_);
  embedding_inputs_ += inputs;
  embedding_tokens_ += tokens;
}

std::string ServerMetrics::render(const std::vector<ModelStatus>& models, uint64_t keep_alive_wakeups) const {
  std::ostringstream o;
  std::lock_guard<std::mutex> lock(mutex_);
  o << "# HELP xonnx_requests_total HTTP requests by path and status.\n# TYPE xonnx_requests_total counter\n";
  for (const auto& [key, n] : requests_) {
    o << "xonnx_requests_total{path=\"" << label(key.first) << "\",status=\"" << key.second << "\"} " << n << "\n";
  }
  o << "# HELP xonnx_generations_total Generations by finish reason.\n# TYPE xonnx_generations_total counter\n";
  for (const auto& [reason, n] : finish_reasons_)
    o << "xonnx_generations_total{reason=\"" << reason << "\"} " << n << "\n";
  o << "# HELP xonnx_prompt_tokens_total Prompt tokens of finished requests.\n# TYPE xonnx_prompt_tokens_total counter\n"
    << "xonnx_prompt_tokens_total " << prompt_tokens_ << "\n"
    << "# HELP xonnx_prompt_tokens_cached_total Prompt tokens reused from the KV cache.\n"
    << "# TYPE xonnx_prompt_tokens_cached_total counter\nxonnx_prompt_tokens_cached_total " << cached_prompt_tokens_
    << "\n"
    << "# HELP xonnx_completion_tokens_total Generated tokens of finished requests.\n"
    << "# TYPE xonnx_completion_tokens_total counter\nxonnx_completion_tokens_total " << completion_tokens_ << "\n"
    << "# HELP xonnx_embedding_inputs_total Inputs embedded (/v1/embeddings).\n"
    << "# TYPE xonnx_embedding_inputs_total counter\nxonnx_embedding_inputs_total " << embedding_inputs_ << "\n"
    << "# HELP xonnx_embedding_tokens_total Tokens of the inputs embedded.\n"
    << "# TYPE xonnx_embedding_tokens_total counter\nxonnx_embedding_tokens_total " << embedding_tokens_ << "\n";
  o << "# HELP xonnx_time_to_first_token_seconds Time from request to first token.\n"
    << "# TYPE xonnx_time_to_first_token_seconds histogram\n";
  for (size_t i = 0; i < kTtftBuckets; ++i) {
    o << "xonnx_time_to_first_token_seconds_bucket{le=\"" << kTtftBoundsMs[i] / 1000.0 << "\"} "
      << (ttft_buckets_.empty() ? 0 : ttft_buckets_[i]) << "\n";
  }
  o << "xonnx_time_to_first_token_seconds_bucket{le=\"+Inf\"} " << ttft_count_ << "\n"
    << "xonnx_time_to_first_token_seconds_sum " << ttft_sum_s_ << "\n"
    << "xonnx_time_to_first_token_seconds_count " << ttft_count_ << "\n";

  int loaded = 0;
  for (const ModelStatus& m : models) loaded += m.loaded;
  o << "# HELP xonnx_models_loaded Models loaded now.\n# TYPE xonnx_models_loaded gauge\nxonnx_models_loaded " << loaded
    << "\n";
  o << "# HELP xonnx_process_resident_memory_bytes Resident memory of the server.\n"
    << "# TYPE xonnx_process_resident_memory_bytes gauge\nxonnx_process_resident_memory_bytes " << resident_bytes()
    << "\n";
  o << "# HELP xonnx_keep_alive_wakeups_total Wake-ups of the idle-model unloader (none while nothing expires).\n"
    << "# TYPE xonnx_keep_alive_wakeups_total counter\nxonnx_keep_alive_wakeups_total " << keep_alive_wakeups << "\n";
  using Stats = genai::EngineStats;
  struct ModelSeries {
    const char* name;
    const char* type;
    const char* help;
    double (*value)(const ModelStatus&, const Stats&);
  };
  static const ModelSeries kModelSeries[] = {
      {"xonnx_model_queue_depth", "gauge", "Requests waiting for a slot.",
       [](const ModelStatus&, const Stats& s) { return double(s.queued); }},
      {"xonnx_model_requests_running", "gauge", "Sequences prefilling or decoding.",
       [](const ModelStatus&, const Stats& s) { return double(s.prefilling + s.decoding); }},
      {"xonnx_model_slots", "gauge", "Sequences decoded together at most (--parallel).",
       [](const ModelStatus&, const Stats& s) { return double(s.slots); }},
      {"xonnx_model_kv_cache_bytes", "gauge", "Bytes of the KV cache.",
       [](const ModelStatus&, const Stats& s) { return double(s.kv_bytes); }},
      {"xonnx_model_memory_bytes", "gauge", "Weights and KV cache.",
       [](const ModelStatus& m, const Stats&) { return double(m.backend->memory_bytes()); }},
      {"xonnx_model_generated_tokens_total", "counter", "Tokens generated by the engine.",
       [](const ModelStatus&, const Stats& s) { return double(s.generated_tokens); }},
      {"xonnx_model_decode_steps_total", "counter", "Batched decode steps (tokens / steps = mean batch).",
       [](const ModelStatus&, const Stats& s) { return double(s.decode_steps); }},
      {"xonnx_model_decode_seconds_total", "counter", "Time in decode steps.",
       [](const ModelStatus&, const Stats& s) { return s.decode_seconds; }},
      {"xonnx_model_prefill_seconds_total", "counter", "Time in prompt prefill.",
       [](const ModelStatus&, const Stats& s) { return s.prefill_seconds; }},
      {"xonnx_model_decode_tokens_per_second", "gauge", "Generated tokens per decode second, since load.",
       [](const ModelStatus&, const Stats& s) {
         return s.decode_seconds > 0 ? s.generated_tokens / s.decode_seconds : 0.0;
       }},
  };
  std::vector<std::pair<const ModelStatus*, Stats>> loaded_models;
  for (const ModelStatus& m : models) {
    if (m.backend) loaded_models.emplace_back(&m, m.backend->stats());
  }
  for (const ModelSeries& series : kModelSeries) {
    o << "# HELP " << series.name << " " << series.help << "\n# TYPE " << series.name << " " << series.type << "\n";
    for (const auto& [m, stats] : loaded_models) {
      o << series.name << "{model=\"" << label(m->name) << "\"} " << series.value(*m, stats) << "\n";
    }
  }
  return o.str();
}

void ActiveRequests::add(const std::shared_ptr<ModelBackend>& backend, uint64_t id) {
  std::lock_guard<std::mutex> lock(mutex_);
  running_.insert({backend, id});
}

void ActiveRequests::remove(const std::shared_ptr<ModelBackend>& backend, uint64_t id) {
  std::lock_guard<std::mutex> lock(mutex_);
  running_.erase({backend, id});
}

void ActiveRequests::cancel_all() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [backend, id] : running_) backend->cancel(id);
}

size_t ActiveRequests::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return running_.size();
}

void send_error(httplib::Response& res, const ApiError& error) {
  res.status = error.status;
  res.set_content(error.to_json().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), "application/json");
}

}  // namespace xonnx::serve
