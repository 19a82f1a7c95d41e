// ModelBackend over genai::Generator: one sequence at a time on the backend's own thread,
// requests served in arrival order. A prompt that starts with the tokens the generator holds
// (the previous turn of a chat) reuses their KV cache rows.
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <thread>

#include "sdk/genai/generator.h"
#include "sdk/serve/model_backend.h"

namespace xonnx::serve {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

int64_t file_size(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : 0;
}

// Releases generated text while holding back what could still become a stop string.
class StopMatcher {
 public:
  explicit StopMatcher(const std::vector<std::string>& stops) : stops_(stops) {}
  // Appends text; returns what is safe to release. `stopped` is set when a stop string
  // appeared (the text before it is released, the stop string and the rest dropped).
  std::string put(const std::string& text, bool& stopped) {
    pending_ += text;
    for (const std::string& s : stops_) {
      const size_t at = pending_.find(s);
      if (at != std::string::npos) {
        stopped = true;
        std::string out = pending_.substr(0, at);
        pending_.clear();
        return out;
      }
    }
    size_t keep = 0;  // the longest tail that is a proper prefix of a stop string
    for (const std::string& s : stops_) {
      for (size_t n = std::min(s.size() - 1, pending_.size()); n > keep; --n) {
        if (pending_.compare(pending_.size() - n, n, s, 0, n) == 0) {
          keep = n;
          break;
        }
      }
    }
    std::string out = pending_.substr(0, pending_.size() - keep);
    pending_.erase(0, pending_.size() - keep);
    return out;
  }
  std::string flush() { return std::exchange(pending_, std::string()); }

 private:
  const std::vector<std::string>& stops_;
  std::string pending_;
};

class GeneratorBackend : public ModelBackend {
 public:
  GeneratorBackend(std::unique_ptr<genai::Generator> generator, int64_t weight_bytes, int32_t max_queue)
      : gen_(std::move(generator)), weight_bytes_(weight_bytes), max_queue_(max_queue) {
    worker_ = std::thread([this] { work(); });
  }
  ~GeneratorBackend() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
      cancel_current_ = true;
    }
    wake_.notify_all();
    worker_.join();
  }

  const genai::Tokenizer& tokenizer() const override { return gen_->tokenizer(); }
  std::vector<int32_t> eos_ids() const override { return gen_->config().eos_token_ids; }
  int32_t context_length() const override { return gen_->max_length(); }
  genai::SamplingParams default_sampling() const override { return gen_->default_sampling(); }
  int64_t memory_bytes() const override { return weight_bytes_; }

  Result<uint64_t> submit(GenerationRequest request) override {
    if (!request.on_event) return invalid_argument("a generation request needs a callback");
    if (request.prompt.empty()) return invalid_argument("the prompt is empty");
    if (static_cast<int64_t>(request.prompt.size()) >= gen_->max_length()) {
      return invalid_argument("the prompt is ", request.prompt.size(), " tokens; the context holds ", gen_->max_length());
    }
    for (int32_t id : request.prompt) {
      if (id < 0 || id >= gen_->vocab()) return invalid_argument("prompt token id ", id, " is outside the vocabulary");
    }
    XONNX_RETURN_IF_ERROR(request.sampling.validate(gen_->vocab()));
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return resource_exhausted("the model is shutting down");
    if (max_queue_ > 0 && static_cast<int32_t>(queue_.size()) >= max_queue_) {
      return resource_exhausted(queue_.size(), " requests are waiting (--max-queue ", max_queue_, ")");
    }
    const uint64_t id = ++next_id_;
    queue_.push_back({id, std::move(request), Clock::now()});
    wake_.notify_one();
    return id;
  }

  void cancel(uint64_t id) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (id == current_) cancel_current_ = true;
    for (Pending& p : queue_) {
      if (p.id == id) p.cancelled = true;
    }
  }

  BackendStats stats() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    BackendStats s = stats_;
    s.slots = 1;
    s.queued = static_cast<int32_t>(queue_.size());
    s.running = current_ != 0;
    return s;
  }

 private:
  struct Pending {
    uint64_t id;
    GenerationRequest request;
    Clock::time_point submitted;
    bool cancelled = false;
  };

  void work() {
    for (;;) {
      Pending p;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stopping with nothing queued
        p = std::move(queue_.front());
        queue_.pop_front();
        current_ = p.id;
        cancel_current_ = p.cancelled || stopping_;
      }
      run(p);
      std::lock_guard<std::mutex> lock(mutex_);
      current_ = 0;
    }
  }

  void run(Pending& p) {
    GenerationRequest& r = p.request;
    TokenEvent e;
    e.request_id = p.id;
    e.usage.prompt_tokens = static_cast<int32_t>(r.prompt.size());
    e.timings.queue_ms = ms_since(p.submitted);
    auto finish = [&](FinishReason reason, std::string error = {}) {
      e.token = -1;
      e.finish = reason;
      e.error = std::move(error);
      if (e.usage.completion_tokens > 0) e.timings.decode_ms = ms_since(first_token_at_);
      r.on_event(e);
    };
    if (cancel_current_) return finish(FinishReason::kCancelled);

    // Reuse the cached rows the prompt starts with; the last prompt token always runs, for its logits.
    const std::vector<int32_t>& held = gen_->tokens();
    size_t common = 0;
    while (common < held.size() && common + 1 < r.prompt.size() && held[common] == r.prompt[common]) ++common;
    gen_->rewind(common);
    e.usage.cached_prompt_tokens = static_cast<int32_t>(common);
    Status s = gen_->append_tokens(r.prompt.data() + common, r.prompt.size() - common);
    if (!s.is_ok()) return finish(FinishReason::kError, s.message());

    sampler_.reset(r.sampling, gen_->vocab(), r.prompt.data(), r.prompt.size());
    genai::TokenStreamDecoder decoder(gen_->tokenizer(), /*skip_special_tokens=*/true);
    StopMatcher stops(r.stop);
    const Clock::time_point prefill_start = Clock::now();
    for (;;) {
      if (cancel_current_) return finish(FinishReason::kCancelled);
      if (r.max_tokens > 0 && e.usage.completion_tokens >= r.max_tokens) return finish(FinishReason::kLength, {});
      if (gen_->is_full()) return finish(FinishReason::kLength);
      const Clock::time_point step_start = Clock::now();
      auto logits = gen_->next_logits();
      if (!logits.is_ok()) return finish(FinishReason::kError, logits.status().message());
      logits_.assign(logits.value(), logits.value() + gen_->vocab());
      auto token = sampler_.choose(logits_.data(), r.logits_processor.get());
      if (!token.is_ok()) return finish(FinishReason::kError, token.status().message());
      if (r.logits_processor) {
        s = r.logits_processor->accept(token.value());
        if (!s.is_ok()) return finish(FinishReason::kError, s.message());
      }
      sampler_.record(token.value());
      s = gen_->append_tokens(&token.value(), 1);
      if (!s.is_ok()) return finish(FinishReason::kError, s.message());
      const double step_s = std::chrono::duration<double>(Clock::now() - step_start).count();
      ++e.usage.completion_tokens;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        ++stats_.generated_tokens;
        if (e.usage.completion_tokens == 1) {
          stats_.prefill_seconds += step_s;
        } else {
          stats_.decode_seconds += step_s;
          ++stats_.decode_steps;
        }
      }
      if (e.usage.completion_tokens == 1) {
        first_token_at_ = Clock::now();
        e.timings.prompt_ms = ms_since(prefill_start);
        e.timings.first_token_ms = ms_since(p.submitted);
      }
      if (gen_->is_eos(token.value())) {
        e.text = stops.flush();
        return finish(FinishReason::kStop);
      }
      bool stopped = false;
      e.token = token.value();
      e.text = stops.put(decoder.put(token.value()), stopped);
      if (stopped) return finish(FinishReason::kStop);
      if (r.logits_processor && r.logits_processor->is_complete()) {
        e.text += stops.flush();
        return finish(FinishReason::kStop);
      }
      e.timings.decode_ms = ms_since(first_token_at_);
      r.on_event(e);
      e.text.clear();
    }
  }

  std::unique_ptr<genai::Generator> gen_;  // used by the worker thread only (tokenizer(): const)
  const int64_t weight_bytes_;
  const int32_t max_queue_;
  genai::Sampler sampler_;
  std::vector<float> logits_;
  Clock::time_point first_token_at_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Pending> queue_;
  uint64_t next_id_ = 0, current_ = 0;
  std::atomic<bool> cancel_current_{false};
  bool stopping_ = false;
  BackendStats stats_;
  std::thread worker_;
};

}  // namespace

Result<std::unique_ptr<ModelBackend>> load_model_backend(const std::string& model_dir, const BackendOptions& options) {
  if (options.parallel > 1) {
    return unsupported("--parallel ", options.parallel, ": this build generates one sequence at a time (use 1)");
  }
  genai::GeneratorOptions go;
  go.threads = options.threads > 0 ? options.threads : static_cast<int32_t>(std::max(1u, std::thread::hardware_concurrency()));
  go.max_length = options.context_length;
  auto gen = genai::Generator::create(model_dir, go);
  if (!gen.is_ok()) return gen.status();
  const std::string model_path = gen.value()->config().model_path();
  const int64_t weights = file_size(model_path) + file_size(model_path + ".data");
  return std::unique_ptr<ModelBackend>(new GeneratorBackend(std::move(gen.value()), weights, options.max_queue));
}

}  // namespace xonnx::serve
