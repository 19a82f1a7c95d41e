#include "sdk/genai/generator.h"

#include <algorithm>
#include <chrono>

#include "sdk/genai/model_runner.h"

namespace xonnx::genai {
namespace {
double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}
}  // namespace

SamplingParams sampling_from_config(const SearchConfig& s) {
  SamplingParams p;
  if (s.do_sample) {
    p.temperature = s.temperature;
    p.top_k = s.top_k;
    p.top_p = s.top_p > 0 && s.top_p < 1 ? s.top_p : 1.0f;
  }
  p.repetition_penalty = s.repetition_penalty;
  p.seed = s.random_seed;
  return p;
}

Generator::~Generator() = default;

Result<std::unique_ptr<Generator>> Generator::create(const std::string& model_dir, const GeneratorOptions& options) {
  std::unique_ptr<Generator> g(new Generator());
  XONNX_ASSIGN_OR_RETURN(g->config_, load_genai_config(model_dir));
  XONNX_ASSIGN_OR_RETURN(g->tokenizer_, Tokenizer::load(model_dir));
  RunnerOptions ro;
  ro.threads = options.threads;
  ro.row_length = options.max_length;
  ro.reference_kernels = options.reference_kernels;
  XONNX_ASSIGN_OR_RETURN(g->runner_, ModelRunner::create(g->config_, ro));
  g->options_ = options;
  g->options_.prefill_chunk = std::max(1, options.prefill_chunk);
  g->params_ = g->default_sampling();
  if (Status s = g->params_.validate(g->runner_->vocab()); !s.is_ok()) {
    return invalid_argument(model_dir, "/genai_config.json: search: ", s.message());
  }
  g->tokens_.reserve(static_cast<size_t>(g->runner_->row_length()));
  return g;
}

SamplingParams Generator::default_sampling() const { return sampling_from_config(config_.search); }

Status Generator::set_sampling(const SamplingParams& params) {
  XONNX_RETURN_IF_ERROR(params.validate(runner_->vocab()));
  params_ = params;
  sampler_stale_ = true;
  return Status::ok();
}

int32_t Generator::max_length() const { return runner_->row_length(); }
int32_t Generator::vocab() const { return runner_->vocab(); }
bool Generator::is_full() const { return tokens_.size() >= static_cast<size_t>(runner_->row_length()); }

bool Generator::is_eos(int32_t token) const {
  return std::find(config_.eos_token_ids.begin(), config_.eos_token_ids.end(), token) != config_.eos_token_ids.end();
}

Status Generator::append_tokens(const int32_t* ids, size_t count) {
  if (tokens_.size() + count > static_cast<size_t>(runner_->row_length())) {
    return invalid_argument(tokens_.size(), " + ", count, " tokens exceed the maximum length of ",
                            runner_->row_length());
  }
  for (size_t i = 0; i < count; ++i) {
    if (ids[i] < 0 || ids[i] >= runner_->vocab()) {
      return invalid_argument("token ", i, ": id ", ids[i], " is outside the vocabulary [0, ", runner_->vocab(), ")");
    }
  }
  tokens_.insert(tokens_.end(), ids, ids + count);
  if (count > 0) {
    logits_ready_ = false;
    sampler_stale_ = true;
  }
  return Status::ok();
}

Status Generator::append_text(std::string_view text, bool add_special_tokens) {
  const std::vector<int32_t> ids = tokenizer_->encode(text, add_special_tokens);
  return append_tokens(ids.data(), ids.size());
}

void Generator::rewind(size_t length) {
  if (length >= tokens_.size()) return;
  tokens_.resize(length);
  // The last kept token runs again so that its logits exist (its cache row is rewritten).
  cached_ = std::min(cached_, length == 0 ? 0 : length - 1);
  logits_ready_ = false;
  sampler_stale_ = true;
}

Status Generator::compute_pending() {
  if (logits_ready_) return Status::ok();
  if (tokens_.empty()) return invalid_argument("no tokens: append a prompt first");
  if (cached_ == tokens_.size()) cached_ = tokens_.size() - 1;  // logits lost (only after rewind(n) with n cached)
  while (cached_ < tokens_.size()) {
    const int32_t n = static_cast<int32_t>(std::min<size_t>(tokens_.size() - cached_, options_.prefill_chunk));
    const auto start = std::chrono::steady_clock::now();
    XONNX_RETURN_IF_ERROR(runner_->prefill(0, tokens_.data() + cached_, n, static_cast<int32_t>(cached_)));
    const double t = seconds_since(start);
    if (n > 1) {
      timings_.prompt_tokens += n;
      timings_.prompt_seconds += t;
    } else {
      timings_.decode_tokens += 1;
      timings_.decode_seconds += t;
    }
    cached_ += static_cast<size_t>(n);
  }
  logits_ready_ = true;
  return Status::ok();
}

Result<const float*> Generator::next_logits() {
  XONNX_RETURN_IF_ERROR(compute_pending());
  return runner_->last_logits(0);
}

Result<int32_t> Generator::next_token() {
  if (is_full()) return invalid_argument("the sequence is full (", runner_->row_length(), " tokens)");
  XONNX_ASSIGN_OR_RETURN(const float* row, next_logits());
  const auto start = std::chrono::steady_clock::now();
  if (sampler_stale_) {
    sampler_.reset(params_, runner_->vocab(), tokens_.data(), tokens_.size());
    sampler_stale_ = false;
  }
  XONNX_ASSIGN_OR_RETURN(int32_t token, sampler_.choose(const_cast<float*>(row), nullptr));
  sampler_.record(token);
  tokens_.push_back(token);
  logits_ready_ = false;
  timings_.sample_seconds += seconds_since(start);
  return token;
}

}  // namespace xonnx::genai
