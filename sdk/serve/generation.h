// The server's view of generation: a request (prompt ids, sampling, stop conditions, a logits
// processor for constrained decoding) queued on a model backend, answered by TokenEvents on
// a callback. The shapes follow sdk/genai/engine.h (genai::Engine's contract) so that a
// backend over the batching engine maps them one to one.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "sdk/genai/sampling.h"

namespace xonnx::serve {

enum class FinishReason {
  kNone = 0,   // still running
  kStop,       // end-of-sequence token, stop string, or the logits processor completed
  kLength,     // max_tokens reached, or the context is full
  kCancelled,  // cancel() or shutdown
  kError,      // the model or the logits processor failed (TokenEvent::error)
};
// "stop", "length", "cancelled", "error" ("" for kNone).
const char* finish_reason_name(FinishReason reason);

struct Usage {
  int32_t prompt_tokens = 0;
  int32_t cached_prompt_tokens = 0;  // of prompt_tokens, reused from the KV cache
  int32_t completion_tokens = 0;
};

// Milliseconds on a steady clock.
struct RequestTimings {
  double queue_ms = 0;        // submit() to the start of the prompt's prefill
  double prompt_ms = 0;       // the prefill
  double first_token_ms = 0;  // submit() to the first token
  double decode_ms = 0;       // first token to this event
};

struct TokenEvent {
  uint64_t request_id = 0;
  int32_t token = -1;  // -1 when the event only finishes the request
  std::string text;    // complete UTF-8 released by this token (stop-string prefixes held back)
  FinishReason finish = FinishReason::kNone;  // set on the last event only
  std::string error;                          // for kError
  Usage usage;
  RequestTimings timings;
};

using TokenCallback = std::function<void(const TokenEvent&)>;

struct GenerationRequest {
  std::vector<int32_t> prompt;  // token ids (chat template applied), not empty
  genai::SamplingParams sampling;
  int32_t max_tokens = 0;       // 0: until the context is full
  std::vector<std::string> stop;
  std::shared_ptr<genai::LogitsProcessor> logits_processor;  // optional, one per request
  TokenCallback on_event;       // required
};

struct BackendStats {
  int32_t slots = 0;    // sequences generated at once
  int32_t queued = 0;   // waiting
  int32_t running = 0;
  int64_t kv_bytes = 0;
  uint64_t generated_tokens = 0;
  uint64_t decode_steps = 0;
  double prefill_seconds = 0, decode_seconds = 0;
};

// A callback target another thread reads: events are queued and popped in order.
class EventQueue : public std::enable_shared_from_this<EventQueue> {
 public:
  static std::shared_ptr<EventQueue> create() { return std::shared_ptr<EventQueue>(new EventQueue()); }
  TokenCallback callback();  // pushes into this queue (and keeps it alive)
  bool pop(TokenEvent& event, std::chrono::milliseconds timeout);  // false on timeout
  TokenEvent pop();

 private:
  EventQueue() = default;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<TokenEvent> events_;
};

}  // namespace xonnx::serve
