#include "sdk/genai/sampling.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace xonnx::genai {

Status SamplingParams::validate(int32_t vocab_size) const {
  if (!std::isfinite(temperature) || temperature < 0)
    return invalid_argument("temperature: must be >= 0, got ", temperature);
  if (top_k < 0) return invalid_argument("top_k: must be >= 0, got ", top_k);
  if (!(top_p > 0 && top_p <= 1)) return invalid_argument("top_p: must be in (0, 1], got ", top_p);
  if (!(min_p >= 0 && min_p <= 1)) return invalid_argument("min_p: must be in [0, 1], got ", min_p);
  if (!(repetition_penalty > 0) || !std::isfinite(repetition_penalty)) {
    return invalid_argument("repetition_penalty: must be > 0, got ", repetition_penalty);
  }
  if (!(presence_penalty >= -2 && presence_penalty <= 2)) {
    return invalid_argument("presence_penalty: must be in [-2, 2], got ", presence_penalty);
  }
  if (!(frequency_penalty >= -2 && frequency_penalty <= 2)) {
    return invalid_argument("frequency_penalty: must be in [-2, 2], got ", frequency_penalty);
  }
  for (const auto& [token, bias] : logit_bias) {
    if (token < 0 || token >= vocab_size) {
      return invalid_argument("logit_bias: token ", token, " is outside the vocabulary [0, ", vocab_size, ")");
    }
    if (!std::isfinite(bias)) return invalid_argument("logit_bias: the bias of token ", token, " is not finite");
  }
  return Status::ok();
}

void Sampler::reset(const SamplingParams& params, int32_t vocab, const int32_t* prompt, size_t prompt_len) {
  params_ = params;
  vocab_ = vocab;
  if (params.seed >= 0) {
    rng_.seed(static_cast<uint64_t>(params.seed));
  } else {
    std::random_device device;
    rng_.seed((static_cast<uint64_t>(device()) << 32) ^ device());
  }
  // Clears what the previous sequence touched (O(touched), not O(vocab), when sizes agree).
  if (output_count_.size() != static_cast<size_t>(vocab)) {
    output_count_.assign(vocab, 0);
    in_prompt_.assign(vocab, 0);
    touched_.clear();
    touched_.reserve(vocab);
    probs_.reserve(vocab);
    order_.reserve(vocab);
  } else {
    for (int32_t t : touched_) {
      output_count_[t] = 0;
      in_prompt_[t] = 0;
    }
    touched_.clear();
  }
  for (size_t i = 0; i < prompt_len; ++i) {
    const int32_t t = prompt[i];
    if (t < 0 || t >= vocab || in_prompt_[t]) continue;
    in_prompt_[t] = 1;
    touched_.push_back(t);
  }
}

void Sampler::record(int32_t token) {
  if (token < 0 || token >= vocab_) return;
  if (output_count_[token] == 0 && !in_prompt_[token]) touched_.push_back(token);
  ++output_count_[token];
}

void Sampler::apply_penalties(float* logits) const {
  for (const auto& [token, bias] : params_.logit_bias) {
    if (token >= 0 && token < vocab_) logits[token] += bias;
  }
  const float rep = params_.repetition_penalty;
  const bool openai = params_.presence_penalty != 0 || params_.frequency_penalty != 0;
  if (rep == 1.0f && !openai) return;
  for (int32_t t : touched_) {
    float& l = logits[t];
    if (rep != 1.0f) l = l > 0 ? l / rep : l * rep;
    if (const uint32_t n = output_count_[t]; n > 0) {
      l -= params_.presence_penalty + params_.frequency_penalty * static_cast<float>(n);
    }
  }
}

Result<int32_t> Sampler::choose(float* logits, LogitsProcessor* processor) {
  apply_penalties(logits);
  if (processor) {
    Status s = processor->process(logits, vocab_);
    if (!s.is_ok()) return s;
  }
  if (params_.temperature <= 0) {
    int32_t best = -1;
    float best_logit = -std::numeric_limits<float>::infinity();
    for (int32_t i = 0; i < vocab_; ++i) {
      if (logits[i] > best_logit) {  // strict: ties go to the lowest id; NaN never wins
        best_logit = logits[i];
        best = i;
      }
    }
    if (best < 0) return invalid_argument("no token has a finite logit (all were masked)");
    return best;
  }
  const int32_t token = sample(logits);
  if (token < 0) return invalid_argument("no token has a finite logit (all were masked)");
  return token;
}

int32_t Sampler::sample(const float* logits) {
  // Candidates: every token with a finite logit, most likely first (only the top k sorted).
  order_.clear();
  for (int32_t i = 0; i < vocab_; ++i) {
    if (std::isfinite(logits[i])) order_.push_back(i);
  }
  if (order_.empty()) return -1;
  auto more_likely = [logits](int32_t a, int32_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  };
  size_t keep = order_.size();
  if (params_.top_k > 0 && static_cast<size_t>(params_.top_k) < keep) {
    keep = static_cast<size_t>(params_.top_k);
    std::nth_element(order_.begin(), order_.begin() + (keep - 1), order_.end(), more_likely);
    order_.resize(keep);
  }
  const bool needs_order = params_.top_p < 1.0f || params_.min_p > 0.0f;
  if (needs_order) {
    std::sort(order_.begin(), order_.end(), more_likely);
  }
  // Softmax over the candidates at the temperature (max subtracted for range).
  float max_logit = -std::numeric_limits<float>::infinity();
  for (int32_t t : order_) max_logit = std::max(max_logit, logits[t]);
  const float inv_t = 1.0f / params_.temperature;
  probs_.resize(order_.size());
  double total = 0;
  for (size_t i = 0; i < order_.size(); ++i) {
    probs_[i] = std::exp((logits[order_[i]] - max_logit) * inv_t);
    total += probs_[i];
  }
  if (needs_order) {
    // min-p: relative to the top token (probs_[0] is the largest, exp(0) = 1 before scaling).
    if (params_.min_p > 0) {
      const float floor = params_.min_p * probs_[0];
      while (keep > 1 && probs_[keep - 1] < floor) total -= probs_[--keep];
    }
    // top-p: the smallest prefix whose probability reaches top_p of the whole.
    if (params_.top_p < 1.0f) {
      const double target = params_.top_p * total;
      double sum = 0;
      size_t n = 0;
      while (n < keep) {
        sum += probs_[n++];
        if (sum >= target) break;
      }
      keep = n;
      total = sum;
    }
  }
  keep = std::min(keep, order_.size());
  // u in [0, total) from the top 53 bits of one 64-bit draw.
  const double u = static_cast<double>(rng_() >> 11) * (1.0 / 9007199254740992.0) * total;
  double acc = 0;
  for (size_t i = 0; i < keep; ++i) {
    acc += probs_[i];
    if (u < acc) return order_[i];
  }
  return order_[keep - 1];  // rounding left u at the very end
}

}  // namespace xonnx::genai
