// Speech segments from frame probabilities: silero-vad's get_speech_timestamps rules, worked
// out by hand (16 kHz, 512-sample frames: frame i starts at sample 512 i).
#include <gtest/gtest.h>

#include "sdk/examples/vad/segmenter.h"

namespace demo {
namespace {

// Frames given as runs of (count, probability).
std::vector<Segment> segments(const std::vector<std::pair<int, float>>& runs, SegmenterParams params = {}) {
  SpeechSegmenter s(params, 16000, 512);
  int64_t frames = 0;
  for (auto [count, p] : runs) {
    for (int i = 0; i < count; ++i, ++frames) s.push(p);
  }
  return s.finish(frames * 512);
}

void expect_segments(const std::vector<Segment>& got, const std::vector<Segment>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].start, want[i].start) << "segment " << i;
    EXPECT_EQ(got[i].end, want[i].end) << "segment " << i;
  }
}

TEST(Segmenter, OneUtterancePaddedBy30ms) {
  // Speech frames 10..29: 5120..15360, padded by 480 samples each side.
  expect_segments(segments({{10, 0.0f}, {20, 0.9f}, {10, 0.0f}}), {{4640, 15840}});
}

TEST(Segmenter, PauseShorterThanMinSilenceDoesNotSplit) {
  // Two frames (64 ms < 100 ms) of silence inside; speech ends at frame 32.
  expect_segments(segments({{10, 0.0f}, {10, 0.9f}, {2, 0.1f}, {10, 0.9f}, {10, 0.0f}}), {{4640, 16864}});
}

TEST(Segmenter, HysteresisKeepsSpeechAboveTheNegativeThreshold) {
  // 0.4 is below the threshold (0.5) but above threshold - 0.15: it neither starts nor ends speech.
  expect_segments(segments({{10, 0.0f}, {10, 0.9f}, {10, 0.4f}, {10, 0.0f}}), {{4640, 15840}});
  EXPECT_TRUE(segments({{10, 0.0f}, {20, 0.4f}, {10, 0.0f}}).empty());
}

TEST(Segmenter, ShorterThanMinSpeechIsDropped) {
  // 7 frames = 3584 samples, not more than 250 ms = 4000.
  EXPECT_TRUE(segments({{10, 0.0f}, {7, 0.9f}, {10, 0.0f}}).empty());
  expect_segments(segments({{10, 0.0f}, {8, 0.9f}, {10, 0.0f}}), {{4640, 9696}});
}

TEST(Segmenter, CloseSegmentsMeetHalfwayInTheGap) {
  // Padding 100 ms (1600 samples): the 2560-sample gap is under twice that, split in halves.
  SegmenterParams p;
  p.speech_pad_ms = 100;
  expect_segments(segments({{10, 0.0f}, {10, 0.9f}, {5, 0.0f}, {10, 0.9f}, {10, 0.0f}}, p),
                  {{3520, 11520}, {11520, 19520}});
}

TEST(Segmenter, SpeechAtTheEndRunsToTheEnd) { expect_segments(segments({{10, 0.0f}, {20, 0.9f}}), {{4640, 15360}}); }

TEST(Segmenter, ThresholdsAreParameters) {
  SegmenterParams p;
  p.threshold = 0.3f;
  p.negative_threshold = 0.2f;
  expect_segments(segments({{10, 0.0f}, {20, 0.4f}, {10, 0.25f}, {10, 0.0f}}, p), {{4640, 20960}});
}

}  // namespace
}  // namespace demo
