#include "sdk/examples/vad/resample.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

namespace demo {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kZeroCrossings = 16;  // sinc lobes on each side: the filter's length
constexpr double kKaiserBeta = 8.0;    // about 80 dB stop-band attenuation
constexpr double kRolloff = 0.92;      // cutoff as a fraction of the lower Nyquist frequency

double bessel_i0(double x) {
  double sum = 1, term = 1;
  for (int k = 1; k < 50 && term > 1e-12 * sum; ++k) {
    term *= (x / (2 * k)) * (x / (2 * k));
    sum += term;
  }
  return sum;
}

}  // namespace

Status Resampler::init(int in_rate, int out_rate) {
  constexpr int kMaxRate = 10000000;
  if (in_rate < 1 || out_rate < 1 || in_rate > kMaxRate || out_rate > kMaxRate) {
    return Status::error("sample rates must be 1 .. 10000000 Hz, got " + std::to_string(in_rate) + " -> " +
                         std::to_string(out_rate));
  }
  const int64_t g = std::gcd(in_rate, out_rate);
  up_ = out_rate / g;
  down_ = in_rate / g;
  // Cutoff in cycles per input sample; the filter spans kZeroCrossings zeros of the sinc per side.
  const double cutoff = 0.5 * std::min(1.0, static_cast<double>(up_) / down_) * kRolloff;
  const double half_width = kZeroCrossings / (2 * cutoff);
  half_taps_ = static_cast<int>(std::ceil(half_width));
  const int taps = 2 * half_taps_;
  table_.assign(static_cast<size_t>(up_) * taps, 0.0f);
  const double window_norm = bessel_i0(kKaiserBeta);
  for (int64_t phase = 0; phase < up_; ++phase) {
    // Output at input time k + phase/up_ reads inputs k - half_taps_ + 1 .. k + half_taps_.
    float* row = &table_[static_cast<size_t>(phase) * taps];
    double sum = 0;
    for (int j = 0; j < taps; ++j) {
      const double t = static_cast<double>(phase) / up_ - (j - half_taps_ + 1);  // time from tap to output
      const double r = t / half_width;
      double h = 0;
      if (std::fabs(r) < 1) {
        const double x = 2 * cutoff * t;
        const double sinc = x == 0 ? 1 : std::sin(kPi * x) / (kPi * x);
        h = 2 * cutoff * sinc * bessel_i0(kKaiserBeta * std::sqrt(1 - r * r)) / window_norm;
      }
      row[j] = static_cast<float>(h);
      sum += h;
    }
    for (int j = 0; j < taps; ++j) row[j] = static_cast<float>(row[j] / sum);  // unit gain at DC
  }
  history_.clear();
  base_ = consumed_ = next_output_ = 0;
  return Status();
}

void Resampler::produce(int64_t available_until, int64_t output_end, std::vector<float>* out) {
  const int taps = 2 * half_taps_;
  while (next_output_ < output_end) {
    const int64_t k = next_output_ * down_ / up_;  // input sample at or before the output instant
    const int64_t phase = next_output_ * down_ - k * up_;
    const int64_t first = k - half_taps_ + 1;
    if (first + taps > available_until) break;
    const float* row = &table_[static_cast<size_t>(phase) * taps];
    double acc = 0;
    for (int j = 0; j < taps; ++j) {
      const int64_t i = first + j;
      // Before the start and past the end of the input: silence.
      const float x = i < base_ || i - base_ >= static_cast<int64_t>(history_.size()) ? 0.0f : history_[i - base_];
      acc += row[j] * x;
    }
    out->push_back(static_cast<float>(acc));
    ++next_output_;
  }
  // Keep what the next output still reads.
  const int64_t keep_from = std::max(base_, next_output_ * down_ / up_ - half_taps_ + 1);
  history_.erase(history_.begin(), history_.begin() + (keep_from - base_));
  base_ = keep_from;
}

void Resampler::process(const float* in, size_t count, std::vector<float>* out) {
  if (up_ == down_) {  // same rate: nothing to filter
    out->insert(out->end(), in, in + count);
    return;
  }
  history_.insert(history_.end(), in, in + count);
  consumed_ += static_cast<int64_t>(count);
  produce(consumed_, std::numeric_limits<int64_t>::max(), out);
}

void Resampler::finish(std::vector<float>* out) {
  if (up_ == down_) return;
  // Every remaining output reads silence past the end of the input.
  produce(std::numeric_limits<int64_t>::max() / 2, (consumed_ * up_ + down_ - 1) / down_, out);
}

Status resample(const std::vector<float>& in, int in_rate, int out_rate, std::vector<float>* out) {
  out->clear();
  Resampler r;
  Status s = r.init(in_rate, out_rate);
  if (!s.ok()) return s;
  out->reserve(static_cast<size_t>(static_cast<double>(in.size()) * out_rate / in_rate) + 1);
  r.process(in.data(), in.size(), out);
  r.finish(out);
  return Status();
}

}  // namespace demo
