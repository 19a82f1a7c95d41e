#include "sdk/examples/vad/plot.h"

#include <algorithm>
#include <cmath>

#include "sdk/examples/common/draw.h"

namespace demo {
namespace {

constexpr Rgb kSpeech{60, 200, 90};
constexpr Rgb kWave{70, 70, 90};
constexpr Rgb kProbability{40, 90, 220};
constexpr Rgb kThreshold{230, 120, 40};
constexpr Rgb kTruth{60, 60, 60};
constexpr Rgb kGrid{200, 200, 200};

}  // namespace

Image plot_segments(const PlotData& d, int width, int height) {
  Image img(width, height, 3, 255);
  // Top to bottom: waveform, speech probability, true segments (when given).
  const int truth_h = d.truth ? 12 : 0;
  const int prob_h = height / 4;
  const int wave_h = height - prob_h - truth_h - (d.truth ? 4 : 0) - 4;
  const int prob_top = wave_h + 4, truth_top = prob_top + prob_h + 4;
  const int mid = wave_h / 2;
  const size_t n = d.samples->size();
  const double per_column = std::max<double>(1.0, static_cast<double>(n) / width);
  auto column = [&](int64_t sample) { return static_cast<int>(sample / per_column); };

  for (const Segment& s : *d.detected)
    blend_rect(&img, column(s.start), 0, column(s.end) + 1, prob_top + prob_h, kSpeech, 0.28f);
  blend_rect(&img, 0, mid, width, mid + 1, kGrid);
  blend_rect(&img, 0, prob_top + prob_h - 1, width, prob_top + prob_h, kGrid);
  for (int64_t second = 1; second * d.sample_rate < static_cast<int64_t>(n); ++second) {  // ticks
    const int x = column(second * d.sample_rate), len = second % 10 == 0 ? 10 : second % 5 == 0 ? 6 : 3;
    blend_rect(&img, x, wave_h - len, x + 1, wave_h, kTruth);
  }
  // Peak-normalised waveform: min and max of each column.
  float peak = 1e-6f;
  for (float v : *d.samples) peak = std::max(peak, std::fabs(v));
  const float scale = 0.45f * wave_h / peak;
  for (int x = 0; x < width; ++x) {
    const size_t a = static_cast<size_t>(x * per_column), b = std::min(n, static_cast<size_t>((x + 1) * per_column));
    if (a >= b) continue;
    const auto [lo, hi] = std::minmax_element(d.samples->begin() + a, d.samples->begin() + b);
    blend_rect(&img, x, mid - static_cast<int>(std::lround(*hi * scale)), x + 1,
               mid - static_cast<int>(std::lround(*lo * scale)) + 1, kWave);
  }
  // Speech probability per frame, with the threshold dashed.
  auto prob_y = [&](float p) { return static_cast<float>(prob_top) + (prob_h - 2) * (1.0f - p); };
  const int threshold_y = static_cast<int>(std::lround(prob_y(d.threshold)));
  for (int x = 0; x < width; x += 6) blend_rect(&img, x, threshold_y, x + 3, threshold_y + 1, kThreshold);
  const std::vector<float>& p = *d.probabilities;
  for (size_t i = 1; i < p.size(); ++i) {
    const float x0 = static_cast<float>((i - 0.5) * d.frame_samples / per_column);
    const float x1 = static_cast<float>((i + 0.5) * d.frame_samples / per_column);
    draw_line(&img, {x0, prob_y(p[i - 1])}, {x1, prob_y(p[i])}, kProbability, 1);
  }
  if (d.truth) {
    for (const Segment& s : *d.truth) blend_rect(&img, column(s.start), truth_top, column(s.end) + 1, height, kTruth);
  }
  return img;
}

}  // namespace demo
