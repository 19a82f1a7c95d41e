#include "sdk/examples/vad/segmenter.h"

#include <algorithm>

namespace demo {

SpeechSegmenter::SpeechSegmenter(const SegmenterParams& p, int sample_rate, int frame_samples)
    : threshold_(p.threshold),
      negative_threshold_(p.negative_threshold >= 0 ? p.negative_threshold : std::max(p.threshold - 0.15f, 0.01f)),
      min_speech_(static_cast<int64_t>(sample_rate) * p.min_speech_ms / 1000),
      min_silence_(static_cast<int64_t>(sample_rate) * p.min_silence_ms / 1000),
      pad_(static_cast<int64_t>(sample_rate) * p.speech_pad_ms / 1000),
      frame_(frame_samples) {}

void SpeechSegmenter::push(float prob) {
  const int64_t now = frame_index_++ * frame_;
  if (prob >= threshold_ && silence_start_) silence_start_ = 0;  // the silence was a pause
  if (prob >= threshold_ && !triggered_) {
    triggered_ = true;
    start_ = now;
    return;
  }
  if (prob < negative_threshold_ && triggered_) {
    if (!silence_start_) silence_start_ = now;
    if (now - silence_start_ < min_silence_) return;
    if (silence_start_ - start_ > min_speech_) segments_.push_back({start_, silence_start_});
    triggered_ = false;
    silence_start_ = 0;
  }
}

std::vector<Segment> SpeechSegmenter::finish(int64_t total) {
  std::vector<Segment> s = segments_;
  if (triggered_ && total - start_ > min_speech_) s.push_back({start_, total});
  for (size_t i = 0; i < s.size(); ++i) {
    if (i == 0) s[i].start = std::max<int64_t>(0, s[i].start - pad_);
    if (i + 1 < s.size()) {
      const int64_t gap = s[i + 1].start - s[i].end;
      if (gap < 2 * pad_) {
        s[i].end += gap / 2;
        s[i + 1].start = std::max<int64_t>(0, s[i + 1].start - gap / 2);
      } else {
        s[i].end = std::min(total, s[i].end + pad_);
        s[i + 1].start = std::max<int64_t>(0, s[i + 1].start - pad_);
      }
    } else {
      s[i].end = std::min(total, s[i].end + pad_);
    }
  }
  return s;
}

}  // namespace demo
