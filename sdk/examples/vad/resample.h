// Sample-rate conversion by a rational factor: a polyphase low-pass filter (Kaiser-windowed
// sinc, cutoff just below the lower of the two Nyquist frequencies), streamed chunk by chunk.
// Equal rates pass the samples through.
#pragma once

#include <cstdint>
#include <vector>

#include "sdk/examples/common/status.h"

namespace demo {

class Resampler {
 public:
  // Rates in Hz, each 1 .. 10 MHz.
  Status init(int in_rate, int out_rate);
  // Appends to *out the output samples that `count` more input samples make computable.
  void process(const float* in, size_t count, std::vector<float>* out);
  // Ends the stream (the input continues with silence): appends the remaining output, so
  // the whole output is ceil(inputs * out_rate / in_rate) samples long.
  void finish(std::vector<float>* out);

  int taps_per_output() const { return 2 * half_taps_; }

 private:
  // Outputs up to index output_end whose inputs are all below available_until.
  void produce(int64_t available_until, int64_t output_end, std::vector<float>* out);

  int64_t up_ = 1, down_ = 1;   // out_rate / in_rate = up_ / down_ in lowest terms
  int half_taps_ = 0;           // input samples on each side of an output instant
  std::vector<float> table_;    // up_ phases x 2*half_taps_ coefficients
  std::vector<float> history_;  // input samples from index base_ on
  int64_t base_ = 0;
  int64_t consumed_ = 0;     // input samples received
  int64_t next_output_ = 0;  // index of the next output sample
};

// The whole signal at once.
Status resample(const std::vector<float>& in, int in_rate, int out_rate, std::vector<float>* out);

}  // namespace demo
