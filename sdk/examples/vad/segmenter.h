// Speech segments from per-frame speech probabilities, with the rules of silero-vad's
// get_speech_timestamps: speech starts at a frame >= threshold and ends after at least
// min_silence of frames below threshold - 0.15 (hysteresis); segments shorter than min_speech
// are dropped; each segment is padded by speech_pad on both sides (half the gap when two
// segments are closer than twice that). Fed one frame at a time.
#pragma once

#include <cstdint>
#include <vector>

namespace demo {

struct SegmenterParams {
  float threshold = 0.5f;
  float negative_threshold = -1;  // below this speech may end; < 0: max(threshold - 0.15, 0.01)
  int min_speech_ms = 250;
  int min_silence_ms = 100;
  int speech_pad_ms = 30;
};

struct Segment {
  int64_t start = 0;  // samples
  int64_t end = 0;    // samples, exclusive
};

class SpeechSegmenter {
 public:
  SpeechSegmenter(const SegmenterParams& params, int sample_rate, int frame_samples);
  // The probability of the next frame.
  void push(float speech_probability);
  // Ends the stream of `total_samples` samples and returns its segments (padded).
  std::vector<Segment> finish(int64_t total_samples);

 private:
  float threshold_, negative_threshold_;
  int64_t min_speech_, min_silence_, pad_, frame_;
  int64_t frame_index_ = 0;
  bool triggered_ = false;
  int64_t start_ = 0;
  int64_t silence_start_ = 0;  // 0: not in a silence (as in the reference, sample 0 cannot start one)
  std::vector<Segment> segments_;
};

}  // namespace demo
