#include "sdk/genai/engine.h"

#include <algorithm>
#include <thread>
#include <unordered_set>

#include "sdk/genai/generator.h"
#include "sdk/genai/model_runner.h"
#include "sdk/genai/stop_strings.h"

namespace xonnx::genai {
namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace

const char* finish_reason_name(FinishReason reason) {
  switch (reason) {
    case FinishReason::kNone: return "";
    case FinishReason::kStop: return "stop";
    case FinishReason::kLength: return "length";
    case FinishReason::kCancelled: return "cancelled";
    case FinishReason::kError: return "error";
  }
  return "";
}

struct Engine::Impl {
  struct Pending {
    uint64_t id = 0;
    GenerationRequest request;
    Clock::time_point submitted;
  };
  enum class Phase { kFree, kPrefill, kDecode };
  struct Slot {
    Phase phase = Phase::kFree;
    uint64_t id = 0;
    GenerationRequest request;
    Clock::time_point submitted, first_token;
    // Tokens whose keys and values the slot's cache rows hold (kept after the request ends,
    // for prefix reuse); `prompt_done` of the prompt are in it.
    std::vector<int32_t> cached;
    size_t prompt_done = 0;
    int32_t pending = -1;  // chosen, not yet run
    Sampler sampler;
    std::unique_ptr<TokenStreamDecoder> stream;
    StopStringMatcher stops;
    Usage usage;
    RequestTimings timings;
  };

  GenaiConfig config;
  std::unique_ptr<Tokenizer> tokenizer;
  std::unique_ptr<ModelRunner> runner;
  EngineOptions options;
  std::vector<Slot> slots;

  mutable std::mutex mutex;
  std::condition_variable wake;
  std::deque<Pending> inbox;             // guarded by mutex
  std::unordered_set<uint64_t> cancels;  // guarded by mutex
  bool stopping = false;                 // guarded by mutex
  EngineStats stats;                     // guarded by mutex
  uint64_t next_id = 1;                  // guarded by mutex
  std::deque<Pending> waiting;           // engine thread only
  std::thread thread;

  // Scratch of a decode step.
  std::vector<int32_t> batch_tokens, batch_lengths;

  void run();
  bool is_stop_token(const Slot& s, int32_t token) const;
  void assign(Pending p, Slot& slot);
  size_t pick_slot(const std::vector<int32_t>& prompt) const;
  void prefill_step(Slot& slot, size_t row);
  void decode_step();
  // Chooses the next token from `logits`, emits it, and finishes the request when it ends.
  void take_token(Slot& slot, float* logits);
  void finish(Slot& slot, FinishReason reason, TokenEvent event);
  void cancel_everything(FinishReason reason, const std::string& error);
  void emit(const GenerationRequest& request, const TokenEvent& event) { request.on_event(event); }
  void update_phase_counts();
  // Returns the memory an idle engine does not need to the OS (EngineOptions::idle_trim_ms).
  void trim_idle();
};

bool Engine::Impl::is_stop_token(const Slot& s, int32_t token) const {
  const auto& r = s.request;
  if (std::find(r.stop_token_ids.begin(), r.stop_token_ids.end(), token) != r.stop_token_ids.end()) return true;
  if (r.ignore_eos) return false;
  return std::find(config.eos_token_ids.begin(), config.eos_token_ids.end(), token) != config.eos_token_ids.end();
}

// The free slot holding the longest prefix of `prompt`; among equals the lowest (keeps decode
// batches short).
size_t Engine::Impl::pick_slot(const std::vector<int32_t>& prompt) const {
  size_t best = slots.size(), best_common = 0;
  for (size_t i = 0; i < slots.size(); ++i) {
    if (slots[i].phase != Phase::kFree) continue;
    size_t common = 0;
    if (options.prefix_reuse) {
      const auto& c = slots[i].cached;
      while (common < c.size() && common < prompt.size() && c[common] == prompt[common]) ++common;
    }
    if (best == slots.size() || common > best_common) {
      best = i;
      best_common = common;
    }
  }
  return best;
}

void Engine::Impl::assign(Pending p, Slot& slot) {
  const auto& prompt = p.request.prompt;
  size_t common = 0;
  if (options.prefix_reuse) {
    while (common < slot.cached.size() && common < prompt.size() && slot.cached[common] == prompt[common]) ++common;
  }
  common = std::min(common, prompt.size() - 1);  // the last prompt token runs to give logits
  slot.cached.resize(common);
  slot.prompt_done = common;
  slot.phase = Phase::kPrefill;
  slot.id = p.id;
  slot.submitted = p.submitted;
  slot.request = std::move(p.request);
  slot.pending = -1;
  slot.sampler.reset(slot.request.sampling, runner->vocab(), prompt.data(), prompt.size());
  slot.stream = std::make_unique<TokenStreamDecoder>(*tokenizer, slot.request.skip_special_tokens);
  slot.stops = StopStringMatcher(slot.request.stop);
  slot.usage = Usage();
  slot.usage.prompt_tokens = static_cast<int32_t>(slot.request.prompt.size());
  slot.usage.cached_prompt_tokens = static_cast<int32_t>(common);
  slot.timings = RequestTimings();
  slot.timings.queue_ms = ms_between(slot.submitted, Clock::now());
  std::lock_guard<std::mutex> lock(mutex);
  stats.cached_prompt_tokens += common;
}

void Engine::Impl::finish(Slot& slot, FinishReason reason, TokenEvent event) {
  event.request_id = slot.id;
  event.finish = reason;
  event.usage = slot.usage;
  event.timings = slot.timings;
  if (slot.usage.completion_tokens > 0) event.timings.decode_ms = ms_between(slot.first_token, Clock::now());
  GenerationRequest request = std::move(slot.request);
  slot.request = GenerationRequest();
  slot.phase = Phase::kFree;
  slot.pending = -1;
  {
    std::lock_guard<std::mutex> lock(mutex);
    ++stats.requests_finished;
    if (reason == FinishReason::kCancelled) ++stats.requests_cancelled;
    if (reason == FinishReason::kError) ++stats.requests_failed;
  }
  update_phase_counts();  // before the event: a caller that saw it sees the stats after it
  emit(request, event);
}

void Engine::Impl::take_token(Slot& slot, float* logits) {
  LogitsProcessor* processor = slot.request.logits_processor.get();
  const auto now = Clock::now();
  auto chosen = slot.sampler.choose(logits, processor);
  TokenEvent event;
  if (!chosen.is_ok()) {
    event.error = chosen.status().message();
    finish(slot, FinishReason::kError, std::move(event));
    return;
  }
  const int32_t token = *chosen;
  slot.sampler.record(token);
  if (processor) {
    if (Status s = processor->accept(token); !s.is_ok()) {
      event.error = s.message();
      finish(slot, FinishReason::kError, std::move(event));
      return;
    }
  }
  if (slot.usage.completion_tokens == 0) {
    slot.first_token = now;
    slot.timings.first_token_ms = ms_between(slot.submitted, now);
    std::lock_guard<std::mutex> lock(mutex);
    stats.first_token_seconds_sum += slot.timings.first_token_ms / 1000.0;
    ++stats.first_token_count;
  }
  ++slot.usage.completion_tokens;
  {
    std::lock_guard<std::mutex> lock(mutex);
    ++stats.generated_tokens;
  }
  event.request_id = slot.id;
  event.token = token;
  event.usage = slot.usage;
  const int32_t max_tokens = slot.request.max_tokens;
  if (is_stop_token(slot, token)) {
    event.text = slot.stops.put(slot.stream->flush()) + slot.stops.flush();
    finish(slot, FinishReason::kStop, std::move(event));
    return;
  }
  event.text = slot.stops.put(slot.stream->put(token));
  if (slot.stops.stopped()) {
    event.stop_sequence = slot.stops.matched();
    finish(slot, FinishReason::kStop, std::move(event));
    return;
  }
  // The token runs at position cached.size(): the slot needs room for it.
  const bool full = slot.cached.size() + 1 >= static_cast<size_t>(runner->row_length());
  if ((max_tokens > 0 && slot.usage.completion_tokens >= max_tokens) || full) {
    event.text += slot.stops.put(slot.stream->flush()) + slot.stops.flush();
    finish(slot, FinishReason::kLength, std::move(event));
    return;
  }
  if (processor && processor->is_complete()) {
    event.text += slot.stops.put(slot.stream->flush()) + slot.stops.flush();
    finish(slot, FinishReason::kStop, std::move(event));
    return;
  }
  slot.pending = token;
  slot.phase = Phase::kDecode;
  event.timings = slot.timings;
  event.timings.decode_ms = ms_between(slot.first_token, Clock::now());
  emit(slot.request, event);
}

void Engine::Impl::prefill_step(Slot& slot, size_t row) {
  const auto& prompt = slot.request.prompt;
  const size_t n = std::min(prompt.size() - slot.prompt_done, static_cast<size_t>(options.prefill_chunk));
  const auto start = Clock::now();
  Status s = runner->prefill(static_cast<int32_t>(row), prompt.data() + slot.prompt_done, static_cast<int32_t>(n),
                             static_cast<int32_t>(slot.prompt_done));
  const double ms = ms_between(start, Clock::now());
  slot.timings.prompt_ms += ms;
  {
    std::lock_guard<std::mutex> lock(mutex);
    stats.prefill_seconds += ms / 1000.0;
    if (s.is_ok()) stats.prompt_tokens += n;
  }
  if (!s.is_ok()) {
    slot.cached.clear();  // its rows may hold part of the failed run
    TokenEvent event;
    event.error = s.message();
    finish(slot, FinishReason::kError, std::move(event));
    return;
  }
  slot.cached.insert(slot.cached.end(), prompt.begin() + slot.prompt_done, prompt.begin() + slot.prompt_done + n);
  slot.prompt_done += n;
  if (slot.prompt_done == prompt.size()) take_token(slot, runner->last_logits(0));
}

void Engine::Impl::decode_step() {
  // Rows [0, last decoding slot]; rows in between that do not decode run a dummy token at their
  // own length, which writes one cache position past what they hold and touches nothing else.
  size_t batch = 0;
  for (size_t i = 0; i < slots.size(); ++i)
    if (slots[i].phase == Phase::kDecode) batch = i + 1;
  if (batch == 0) return;
  const int32_t last = runner->row_length() - 1;
  batch_tokens.resize(batch);
  batch_lengths.resize(batch);
  for (size_t i = 0; i < batch; ++i) {
    Slot& s = slots[i];
    if (s.phase == Phase::kDecode) {
      batch_tokens[i] = s.pending;
    } else {
      if (s.cached.size() > static_cast<size_t>(last)) s.cached.resize(static_cast<size_t>(last));
      batch_tokens[i] = 0;
    }
    batch_lengths[i] = static_cast<int32_t>(s.cached.size());
  }
  const auto start = Clock::now();
  Status status = runner->decode(batch_tokens.data(), batch_lengths.data(), static_cast<int32_t>(batch));
  {
    std::lock_guard<std::mutex> lock(mutex);
    stats.decode_seconds += ms_between(start, Clock::now()) / 1000.0;
    ++stats.decode_steps;
  }
  for (size_t i = 0; i < batch; ++i) {
    Slot& s = slots[i];
    if (s.phase != Phase::kDecode) continue;
    if (!status.is_ok()) {
      s.cached.clear();
      TokenEvent event;
      event.error = status.message();
      finish(s, FinishReason::kError, std::move(event));
      continue;
    }
    s.cached.push_back(s.pending);
    s.pending = -1;
    take_token(s, runner->last_logits(static_cast<int32_t>(i)));
  }
}

void Engine::Impl::cancel_everything(FinishReason reason, const std::string& error) {
  for (Slot& s : slots) {
    if (s.phase == Phase::kFree) continue;
    TokenEvent event;
    event.error = error;
    finish(s, reason, std::move(event));
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    stats.requests_finished += waiting.size();
    if (reason == FinishReason::kCancelled) stats.requests_cancelled += waiting.size();
  }
  std::deque<Pending> dropped;
  dropped.swap(waiting);
  update_phase_counts();
  for (Pending& p : dropped) {
    TokenEvent event;
    event.request_id = p.id;
    event.finish = reason;
    event.error = error;
    event.usage.prompt_tokens = static_cast<int32_t>(p.request.prompt.size());
    event.timings.queue_ms = ms_between(p.submitted, Clock::now());
    emit(p.request, event);
  }
}

void Engine::Impl::update_phase_counts() {
  int32_t prefilling = 0, decoding = 0;
  for (const Slot& s : slots) {
    prefilling += s.phase == Phase::kPrefill;
    decoding += s.phase == Phase::kDecode;
  }
  std::lock_guard<std::mutex> lock(mutex);
  stats.queued = static_cast<int32_t>(waiting.size() + inbox.size());
  stats.prefilling = prefilling;
  stats.decoding = decoding;
}

void Engine::Impl::trim_idle() {
  std::vector<int32_t> keep(slots.size());
  for (size_t i = 0; i < slots.size(); ++i) keep[i] = static_cast<int32_t>(slots[i].cached.size());
  runner->trim(keep.data());
  std::lock_guard<std::mutex> lock(mutex);
  ++stats.idle_trims;
}

void Engine::Impl::run() {
  std::unordered_set<uint64_t> cancelled;
  bool trimmed = false;  // also once after loading: what the load freed goes back to the OS
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mutex);
      auto busy = [&] {
        if (!waiting.empty()) return true;
        for (const Slot& s : slots)
          if (s.phase != Phase::kFree) return true;
        return false;
      };
      auto ready = [&] { return stopping || !inbox.empty() || !cancels.empty() || busy(); };
      if (!trimmed && options.idle_trim_ms >= 0 && !ready() &&
          !wake.wait_for(lock, std::chrono::milliseconds(options.idle_trim_ms), ready)) {
        lock.unlock();
        trim_idle();
        trimmed = true;
        continue;
      }
      wake.wait(lock, ready);
      trimmed = false;
      for (Pending& p : inbox) waiting.push_back(std::move(p));
      inbox.clear();
      if (stopping) break;
      cancelled.swap(cancels);
      cancels.clear();
    }
    if (!cancelled.empty()) {
      for (Slot& s : slots) {
        if (s.phase != Phase::kFree && cancelled.count(s.id)) finish(s, FinishReason::kCancelled, TokenEvent());
      }
      for (auto it = waiting.begin(); it != waiting.end();) {
        if (!cancelled.count(it->id)) {
          ++it;
          continue;
        }
        Pending p = std::move(*it);
        it = waiting.erase(it);
        TokenEvent event;
        event.request_id = p.id;
        event.finish = FinishReason::kCancelled;
        event.usage.prompt_tokens = static_cast<int32_t>(p.request.prompt.size());
        event.timings.queue_ms = ms_between(p.submitted, Clock::now());
        {
          std::lock_guard<std::mutex> lock(mutex);
          ++stats.requests_finished;
          ++stats.requests_cancelled;
        }
        update_phase_counts();
        emit(p.request, event);
      }
      cancelled.clear();
    }
    while (!waiting.empty()) {
      const size_t row = pick_slot(waiting.front().request.prompt);
      if (row == slots.size()) break;
      Pending p = std::move(waiting.front());
      waiting.pop_front();
      assign(std::move(p), slots[row]);
    }
    update_phase_counts();
    // One prefill chunk (the longest-waiting prompt), then one decode step of every stream.
    size_t first = slots.size();
    for (size_t i = 0; i < slots.size(); ++i) {
      if (slots[i].phase == Phase::kPrefill && (first == slots.size() || slots[i].submitted < slots[first].submitted)) {
        first = i;
      }
    }
    if (first < slots.size()) prefill_step(slots[first], first);
    decode_step();
    update_phase_counts();
  }
  cancel_everything(FinishReason::kCancelled, "");
  update_phase_counts();
}

Engine::Engine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Engine::~Engine() {
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->stopping = true;
  }
  impl_->wake.notify_all();
  if (impl_->thread.joinable()) impl_->thread.join();
}

Result<std::unique_ptr<Engine>> Engine::create(const std::string& model_dir, const EngineOptions& options) {
  auto impl = std::make_unique<Impl>();
  XONNX_ASSIGN_OR_RETURN(impl->config, load_genai_config(model_dir));
  XONNX_ASSIGN_OR_RETURN(impl->tokenizer, Tokenizer::load(model_dir));
  const GenaiConfig& c = impl->config;
  if (options.parallel < 1) return invalid_argument("parallel: must be >= 1, got ", options.parallel);
  if (options.prefill_chunk < 1) return invalid_argument("prefill_chunk: must be >= 1, got ", options.prefill_chunk);
  RunnerOptions ro;
  ro.threads = options.threads;
  // Separate past / present buffers cannot batch sequences of different lengths: one slot.
  ro.rows = c.search.past_present_share_buffer ? options.parallel : 1;
  ro.row_length = std::min(options.slot_length > 0 ? options.slot_length : c.search.max_length, c.context_length);
  ro.reference_kernels = options.reference_kernels;
  if (options.kv_budget_bytes > 0) {
    const int64_t per_token = int64_t{2} * c.decoder.num_hidden_layers * c.decoder.num_key_value_heads *
                              c.decoder.head_size * static_cast<int64_t>(sizeof(float)) *
                              (c.search.past_present_share_buffer ? 1 : 2);
    const int64_t fit = options.kv_budget_bytes / (per_token * ro.rows);
    if (fit < 16) {
      return resource_exhausted("kv_budget_bytes: ", options.kv_budget_bytes, " bytes hold ", fit,
                                " tokens per slot for ", ro.rows, " slots (", per_token,
                                " bytes per token); at least 16 are needed");
    }
    ro.row_length = static_cast<int32_t>(std::min<int64_t>(ro.row_length, fit));
  }
  XONNX_ASSIGN_OR_RETURN(impl->runner, ModelRunner::create(c, ro));
  impl->options = options;
  impl->options.parallel = ro.rows;
  impl->slots.resize(static_cast<size_t>(ro.rows));
  impl->stats.slots = ro.rows;
  impl->stats.slot_length = impl->runner->row_length();
  impl->stats.kv_bytes = impl->runner->kv_bytes();
  std::unique_ptr<Engine> engine(new Engine(std::move(impl)));
  Impl* raw = engine->impl_.get();
  engine->impl_->thread = std::thread([raw] { raw->run(); });
  return engine;
}

Result<uint64_t> Engine::submit(GenerationRequest request) {
  Impl& m = *impl_;
  const int32_t vocab = m.runner->vocab();
  if (request.prompt.empty()) return invalid_argument("prompt: empty (at least one token is needed)");
  if (request.prompt.size() >= static_cast<size_t>(m.runner->row_length())) {
    return invalid_argument("prompt: ", request.prompt.size(), " tokens leave no room to generate in a slot of ",
                            m.runner->row_length());
  }
  for (size_t i = 0; i < request.prompt.size(); ++i) {
    if (request.prompt[i] < 0 || request.prompt[i] >= vocab) {
      return invalid_argument("prompt[", i, "]: token id ", request.prompt[i], " is outside the vocabulary [0, ", vocab,
                              ")");
    }
  }
  if (request.max_tokens < 0) return invalid_argument("max_tokens: must be >= 0, got ", request.max_tokens);
  XONNX_RETURN_IF_ERROR(request.sampling.validate(vocab));
  if (!request.on_event) return invalid_argument("on_event: a callback is required");
  std::lock_guard<std::mutex> lock(m.mutex);
  if (m.stopping) return resource_exhausted("the engine is shutting down");
  if (m.options.max_queue > 0 && m.stats.queued >= m.options.max_queue) {
    return resource_exhausted("the queue is full (", m.options.max_queue, " requests wait for a slot)");
  }
  const uint64_t id = m.next_id++;
  m.inbox.push_back({id, std::move(request), Clock::now()});
  ++m.stats.requests_submitted;
  ++m.stats.queued;
  m.wake.notify_one();
  return id;
}

void Engine::cancel(uint64_t request_id) {
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->cancels.insert(request_id);
  }
  impl_->wake.notify_one();
}

EngineStats Engine::stats() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->stats;
}

const Tokenizer& Engine::tokenizer() const { return *impl_->tokenizer; }
const GenaiConfig& Engine::config() const { return impl_->config; }
SamplingParams Engine::default_sampling() const { return sampling_from_config(impl_->config.search); }
int32_t Engine::slot_length() const { return impl_->runner->row_length(); }

TokenCallback EventQueue::callback() {
  std::shared_ptr<EventQueue> self = shared_from_this();
  return [self](const TokenEvent& event) {
    {
      std::lock_guard<std::mutex> lock(self->mutex_);
      self->events_.push_back(event);
    }
    self->ready_.notify_all();
  };
}

bool EventQueue::pop(TokenEvent& event, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!ready_.wait_for(lock, timeout, [&] { return !events_.empty(); })) return false;
  event = std::move(events_.front());
  events_.pop_front();
  return true;
}

TokenEvent EventQueue::pop() {
  std::unique_lock<std::mutex> lock(mutex_);
  ready_.wait(lock, [&] { return !events_.empty(); });
  TokenEvent event = std::move(events_.front());
  events_.pop_front();
  return event;
}

}  // namespace xonnx::genai
