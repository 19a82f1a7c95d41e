// Silero VAD v5 run frame by frame, as the reference wrapper (silero-vad's OnnxWrapper) runs
// it: each frame (512 samples at 16 kHz, 256 at 8 kHz) goes in after the previous frame's last
// 64 (32) samples, the context, with the recurrent state from the previous run and the sample
// rate; out comes the probability that the frame is speech.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sdk/examples/common/model_runner.h"

namespace demo {

class SileroVad {
 public:
  // The model's two rates: 16 kHz for wide-band audio, 8 kHz for telephone audio.
  static int rate_for(int input_rate) { return input_rate <= 8000 ? 8000 : 16000; }

  // Checks the model's inputs (input float32[N, samples], state float32[2, N, H], sr int64
  // scalar) and outputs (probability float32[N, 1], new state). `sample_rate` is 8000 or 16000.
  Status open(const std::string& model_path, int sample_rate, int threads, InputRecorder* recorder = nullptr);
  // Zero state and context: the start of a new stream.
  void reset();
  int sample_rate() const { return static_cast<int>(sample_rate_[0]); }
  int frame_samples() const { return frame_; }  // 32 ms
  // `frame` holds frame_samples() samples at sample_rate().
  Status process(const float* frame, float* speech_probability);

  const ModelRunner& model() const { return model_; }
  void reset_stats() { model_.reset_stats(); }

 private:
  ModelRunner model_;
  std::vector<float> window_;  // context + frame
  std::vector<float> state_;
  std::vector<int64_t> state_shape_;
  std::vector<int64_t> sample_rate_{16000};
  int frame_ = 512;
  int context_ = 64;
  size_t input_slot_ = 0, state_slot_ = 0, sr_slot_ = 0;
  size_t prob_slot_ = 0, new_state_slot_ = 0;
};

}  // namespace demo
