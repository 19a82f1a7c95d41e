// Resampling: lengths, pass band, stop band (no aliasing), streaming equals one shot.
#include <gtest/gtest.h>

#include <cmath>

#include "sdk/examples/vad/resample.h"

namespace demo {
namespace {

constexpr double kPi = 3.14159265358979323846;

std::vector<float> tone(double hz, int rate, double seconds, double amplitude = 0.5) {
  std::vector<float> x(static_cast<size_t>(seconds * rate));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(amplitude * std::sin(2 * kPi * hz * i / rate));
  return x;
}

// Amplitude of the `hz` component over the middle of x (edges skipped: the filter's ramp).
double amplitude_at(const std::vector<float>& x, double hz, int rate) {
  const size_t lo = x.size() / 4, hi = 3 * x.size() / 4;
  double re = 0, im = 0;
  for (size_t i = lo; i < hi; ++i) {
    re += x[i] * std::cos(2 * kPi * hz * i / rate);
    im += x[i] * std::sin(2 * kPi * hz * i / rate);
  }
  return 2 * std::hypot(re, im) / static_cast<double>(hi - lo);
}

TEST(Resample, OutputLengthIsCeilOfTheRatio) {
  for (auto [in, out] :
       {std::pair{44100, 16000}, {48000, 16000}, {8000, 16000}, {16000, 16000}, {22050, 16000}, {11025, 16000}}) {
    for (size_t n : {size_t{0}, size_t{1}, size_t{441}, size_t{1000}, size_t{12345}}) {
      std::vector<float> y;
      ASSERT_TRUE(resample(std::vector<float>(n, 0.1f), in, out, &y).ok());
      EXPECT_EQ(y.size(), (n * out + in - 1) / in) << in << " -> " << out << ", " << n << " samples";
    }
  }
}

TEST(Resample, PassBandKeepsATone) {
  for (int in : {8000, 22050, 44100, 48000}) {
    std::vector<float> y;
    ASSERT_TRUE(resample(tone(1000, in, 0.5), in, 16000, &y).ok());
    EXPECT_NEAR(amplitude_at(y, 1000, 16000), 0.5, 0.005) << in << " Hz";
  }
  std::vector<float> same;
  const std::vector<float> x = tone(3000, 16000, 0.25);
  ASSERT_TRUE(resample(x, 16000, 16000, &same).ok());
  EXPECT_EQ(same, x);
}

TEST(Resample, StopBandRemovesWhatWouldAlias) {
  // 10 kHz at 44.1 kHz would fold to 6 kHz at 16 kHz without the low-pass filter.
  std::vector<float> y;
  ASSERT_TRUE(resample(tone(10000, 44100, 0.5), 44100, 16000, &y).ok());
  EXPECT_LT(amplitude_at(y, 6000, 16000), 0.5 * 1e-3);  // below -60 dB
  ASSERT_TRUE(resample(tone(9000, 48000, 0.5), 48000, 16000, &y).ok());
  EXPECT_LT(amplitude_at(y, 7000, 16000), 0.5 * 1e-3);
}

TEST(Resample, StreamingInChunksEqualsOneShot) {
  const std::vector<float> x = tone(440, 44100, 0.3);
  std::vector<float> whole;
  ASSERT_TRUE(resample(x, 44100, 16000, &whole).ok());
  Resampler r;
  ASSERT_TRUE(r.init(44100, 16000).ok());
  std::vector<float> streamed;
  for (size_t at = 0, step = 1; at < x.size(); at += step, step = step * 3 % 1001 + 1) {
    r.process(x.data() + at, std::min(step, x.size() - at), &streamed);
  }
  r.finish(&streamed);
  ASSERT_EQ(streamed.size(), whole.size());
  for (size_t i = 0; i < whole.size(); ++i) ASSERT_EQ(streamed[i], whole[i]) << i;
}

TEST(Resample, BadRatesAreErrors) {
  std::vector<float> y;
  EXPECT_FALSE(resample({1, 2}, 0, 16000, &y).ok());
  EXPECT_FALSE(resample({1, 2}, 44100, -1, &y).ok());
}

}  // namespace
}  // namespace demo
