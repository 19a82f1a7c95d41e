// A scripted ModelBackend for the server's tests: the real tokenizer of the shipped tiny model
// and a "model" that writes a fixed reply token by token (or, under a logits processor, draws
// allowed tokens from a seeded RNG), each request on its own thread, honouring max_tokens,
// cancel() and a queue limit. It lets the HTTP layer be tested without the generation engine.
#pragma once

#include <atomic>
#include <chrono>
#include <cmath>
#include <random>
#include <thread>

#include "sdk/serve/model_backend.h"

namespace xonnx::serve::testing {

class FakeBackend : public ModelBackend {
 public:
  struct Options {
    std::string reply = "Hello from the fake engine.";
    std::chrono::milliseconds per_token{1};
    int32_t max_running = 4;  // more at once: kResourceExhausted (the queue is full)
    int32_t context = 512;
  };

  FakeBackend(std::unique_ptr<genai::Tokenizer> tokenizer, Options options)
      : tokenizer_(std::move(tokenizer)), options_(std::move(options)) {}
  ~FakeBackend() override {
    for (auto& t : threads_) t.join();
  }

  const genai::Tokenizer& tokenizer() const override { return *tokenizer_; }
  std::vector<int32_t> eos_ids() const override { return {*tokenizer_->token_to_id("<|im_end|>")}; }
  int32_t context_length() const override { return options_.context; }
  genai::SamplingParams default_sampling() const override { return {}; }
  int64_t memory_bytes() const override { return 1234; }
  genai::EngineStats stats() const override {
    genai::EngineStats s;
    s.slots = options_.max_running;
    s.decoding = running_;
    return s;
  }
  void cancel(uint64_t id) override {
    std::lock_guard<std::mutex> lock(mutex_);
    cancel_requests_.push_back(id);
  }

  Result<uint64_t> submit(genai::GenerationRequest request) override {
    if (running_.fetch_add(1) >= options_.max_running) {
      --running_;
      return resource_exhausted("queue full (", options_.max_running, " requests)");
    }
    const uint64_t id = ++submitted_;
    last_prompt_ = request.prompt;
    last_sampling_ = request.sampling;
    std::lock_guard<std::mutex> lock(mutex_);
    threads_.emplace_back([this, id, r = std::move(request)]() mutable { generate(id, std::move(r)); });
    return id;
  }

  bool cancelled(uint64_t id) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (uint64_t c : cancel_requests_) {
      if (c == id) return true;
    }
    return false;
  }

  std::atomic<int32_t> running_{0};
  std::atomic<uint64_t> submitted_{0}, cancelled_{0};
  std::vector<int32_t> last_prompt_;
  genai::SamplingParams last_sampling_;

 private:
  void generate(uint64_t id, genai::GenerationRequest r) {
    const auto start = std::chrono::steady_clock::now();
    const std::vector<int32_t> reply = tokenizer_->encode(options_.reply, false);
    std::mt19937 rng(static_cast<uint32_t>(r.sampling.seed >= 0 ? r.sampling.seed : 7));
    std::vector<float> logits(static_cast<size_t>(tokenizer_->vocab_size()));
    genai::TokenEvent e;
    e.request_id = id;
    e.usage.prompt_tokens = static_cast<int32_t>(r.prompt.size());
    genai::TokenStreamDecoder decoder(*tokenizer_);
    const int32_t eos = eos_ids()[0];
    for (int32_t step = 0;; ++step) {
      std::this_thread::sleep_for(options_.per_token);
      if (cancelled(id)) {
        e.finish = genai::FinishReason::kCancelled;
        ++cancelled_;
        break;
      }
      if (r.max_tokens > 0 && step >= r.max_tokens) {
        e.finish = genai::FinishReason::kLength;
        break;
      }
      int32_t token = -1;
      if (r.logits_processor) {
        if (r.logits_processor->is_complete()) {
          e.finish = genai::FinishReason::kStop;
          break;
        }
        // Noise plus a pull towards closing tokens, as a model's prior would have.
        std::normal_distribution<float> noise(0, 2);
        for (size_t i = 0; i < logits.size(); ++i) {
          logits[i] = noise(rng);
          const std::string& b = tokenizer_->token_bytes(static_cast<int32_t>(i));
          if (b.find_first_of("\"}]") != std::string::npos) logits[i] += 2;
        }
        logits[static_cast<size_t>(eos)] += 3;
        Status s = r.logits_processor->process(logits.data(), static_cast<int32_t>(logits.size()));
        if (s.is_ok()) {
          token = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
          s = r.logits_processor->accept(token);
        }
        if (!s.is_ok()) {
          e.finish = genai::FinishReason::kError;
          e.error = s.message();
          break;
        }
      } else {
        token = static_cast<size_t>(step) < reply.size() ? reply[static_cast<size_t>(step)] : eos;
      }
      ++e.usage.completion_tokens;
      if (e.usage.completion_tokens == 1) {
        e.timings.first_token_ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      }
      if (token == eos) {
        e.finish = genai::FinishReason::kStop;
        break;
      }
      e.token = token;
      e.text = decoder.put(token);
      r.on_event(e);
    }
    e.token = -1;
    e.text = decoder.flush();
    e.timings.decode_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    --running_;
    r.on_event(e);
  }

  std::unique_ptr<genai::Tokenizer> tokenizer_;
  Options options_;
  std::mutex mutex_;
  std::vector<uint64_t> cancel_requests_;
  std::vector<std::thread> threads_;
};

}  // namespace xonnx::serve::testing
