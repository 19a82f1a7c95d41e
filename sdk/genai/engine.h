// Engine: many generations over one model at once (continuous batching), for servers.
//
// One Engine loads a GenAI model folder (genai_config.json, model.onnx, tokenizer files) into
// one session and a KV cache of `parallel` slots, each holding one sequence's keys and values
// ([slots, kv_heads, slot_length, head_size] per layer). Requests (prompt token ids + sampling
// + stop conditions) are queued; a free slot takes the oldest, its prompt is prefilled in
// chunks, and from the next step on it decodes together with every other active sequence:
// each decode step runs all of them as one batch (one row per slot, per-row lengths), so the
// weights are read once per step for all streams. A prompt that starts with tokens a slot
// already holds (a finished chat turn, a shared system prompt) reuses those rows instead of
// computing them again.
//
// Threads: the engine runs the model on its own thread. submit(), cancel(), stats() and the
// destructor are safe from any thread (also from inside a callback). Callbacks run on the
// engine's thread, one request's events in order; they must return quickly (copy the event,
// hand it to another thread) and must not destroy the Engine. EventQueue is a ready-made
// callback that another thread reads.
//
// Lifetime: the destructor cancels what is queued or running (each gets its final event with
// FinishReason::kCancelled) and joins the thread. A LogitsProcessor is kept until its
// request's final event.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "runtime/core/status.h"
#include "sdk/genai/genai_config.h"
#include "sdk/genai/sampling.h"
#include "sdk/genai/tokenizer.h"

namespace xonnx::genai {

enum class FinishReason {
  kNone = 0,   // still running
  kStop,       // an end-of-sequence / stop token, a stop string, or the logits processor completed
  kLength,     // max_tokens reached, or the slot (context) is full
  kCancelled,  // cancel() or the engine shut down
  kError,      // the model, the logits processor or the request failed (TokenEvent::error)
};
// "stop", "length", "cancelled", "error" ("" for kNone): OpenAI's names where it has them.
const char* finish_reason_name(FinishReason reason);

struct Usage {
  int32_t prompt_tokens = 0;
  int32_t cached_prompt_tokens = 0;  // of prompt_tokens, reused from a slot instead of computed
  int32_t completion_tokens = 0;     // tokens generated so far (a stop token counts)
};

// Milliseconds, measured on a steady clock.
struct RequestTimings {
  double queue_ms = 0;        // submit() to a slot taking the request
  double prompt_ms = 0;       // the prompt's prefill runs (the uncached part)
  double first_token_ms = 0;  // submit() to the first token (time to first token)
  double decode_ms = 0;       // first token to this event
};

struct TokenEvent {
  uint64_t request_id = 0;
  int32_t token = -1;  // the generated token; -1 when the event only finishes the request
  // Text released by this token: complete UTF-8 only, text that may start a stop string held
  // back until it is clear, special tokens left out unless the request keeps them. May be
  // empty. Concatenating every event's text gives the output.
  std::string text;
  FinishReason finish = FinishReason::kNone;  // set on the request's last event only
  std::string stop_sequence;                  // for kStop by a stop string: which one
  std::string error;                          // for kError: what failed
  Usage usage;
  RequestTimings timings;
};

using TokenCallback = std::function<void(const TokenEvent&)>;

struct GenerationRequest {
  std::vector<int32_t> prompt;  // token ids, the chat template applied and encoded; not empty
  SamplingParams sampling;
  // Tokens to generate at most; 0: until the slot is full. The request finishes with kLength
  // at whichever comes first.
  int32_t max_tokens = 0;
  std::vector<std::string> stop;                      // stop strings, matched on the output text
  std::vector<int32_t> stop_token_ids;                // besides the model's eos ids
  bool ignore_eos = false;                            // do not stop at the model's eos ids
  bool skip_special_tokens = true;                    // leave special tokens out of TokenEvent::text
  std::shared_ptr<LogitsProcessor> logits_processor;  // optional; one per request
  TokenCallback on_event;                             // required: every event of the request
};

struct EngineOptions {
  int32_t threads = 1;   // the session's threads
  int32_t parallel = 1;  // slots: sequences decoded together
  // Tokens per slot (prompt + output); 0: the config's search.max_length (which defaults to
  // its context_length). Capped by the model's context_length.
  int32_t slot_length = 0;
  // Bytes the KV cache may take (all slots); 0: no cap. When parallel x slot_length would
  // exceed it, slot_length shrinks to fit; creation fails if fewer than 16 tokens would fit.
  int64_t kv_budget_bytes = 0;
  int32_t prefill_chunk = 256;  // prompt tokens per prefill run
  int32_t max_queue = 0;        // requests waiting for a slot; 0: no limit; over it submit() fails
  bool prefix_reuse = true;
  // After this long with nothing queued or running, the engine returns the memory it holds
  // for later requests to the OS (ModelRunner::trim: the KV positions past what the slots keep
  // for prefix reuse, the session's idle buffers, malloc's free pages); the next request pays
  // the page faults. One wake-up per idle period; -1: never.
  int32_t idle_trim_ms = 1000;
  bool reference_kernels = false;  // tests: the reference kernels only
};

struct EngineStats {
  int32_t slots = 0;
  int32_t slot_length = 0;
  int64_t kv_bytes = 0;  // the KV cache's size (all slots)
  int32_t queued = 0;    // waiting for a slot
  int32_t prefilling = 0;
  int32_t decoding = 0;
  uint64_t requests_submitted = 0;
  uint64_t requests_finished = 0;  // every final event (any reason)
  uint64_t requests_cancelled = 0;
  uint64_t requests_failed = 0;       // kError
  uint64_t prompt_tokens = 0;         // prefilled (computed)
  uint64_t cached_prompt_tokens = 0;  // reused from slots
  uint64_t generated_tokens = 0;
  uint64_t decode_steps = 0;           // decode runs; generated_tokens / decode_steps = mean batch
  double prefill_seconds = 0;          // time in prefill runs
  double decode_seconds = 0;           // time in decode runs (incl. sampling)
  double first_token_seconds_sum = 0;  // sum of time to first token over requests that had one
  uint64_t first_token_count = 0;
  uint64_t idle_trims = 0;  // times the idle engine returned memory (EngineOptions::idle_trim_ms)
};

class Engine {
 public:
  // Loads the folder; errors name the file and field, or the graph input / output.
  static Result<std::unique_ptr<Engine>> create(const std::string& model_dir, const EngineOptions& options = {});
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Queues a request; returns its id (> 0). Fails without queueing (and without calling the
  // callback) on an empty prompt, a prompt of slot_length tokens or more, an id outside the
  // vocabulary, invalid sampling parameters (the field named), no callback, or a full queue
  // (StatusCode::kResourceExhausted).
  Result<uint64_t> submit(GenerationRequest request);
  // Stops a request: its final event (kCancelled) follows from the engine's thread unless it
  // finished already. Unknown or finished ids are ignored.
  void cancel(uint64_t request_id);
  EngineStats stats() const;

  const Tokenizer& tokenizer() const;
  const GenaiConfig& config() const;
  // The sampling defaults of genai_config.json's search section (greedy unless do_sample).
  SamplingParams default_sampling() const;
  int32_t slot_length() const;

 private:
  struct Impl;  // engine.cc: the scheduler, the inbox and the thread
  explicit Engine(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// A callback target for another thread: events are queued and popped in order.
class EventQueue : public std::enable_shared_from_this<EventQueue> {
 public:
  static std::shared_ptr<EventQueue> create() { return std::shared_ptr<EventQueue>(new EventQueue()); }
  // A callback that pushes into this queue (it keeps the queue alive).
  TokenCallback callback();
  // Waits up to `timeout` for an event; false on timeout.
  bool pop(TokenEvent& event, std::chrono::milliseconds timeout);
  // Waits for the next event.
  TokenEvent pop();

 private:
  EventQueue() = default;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<TokenEvent> events_;
};

}  // namespace xonnx::genai
