// The VAD demo's picture: the waveform (per-column min/max), the speech probability per frame,
// the detected segments as shaded bands, and optionally the true segments as a strip below.
#pragma once

#include <vector>

#include "sdk/examples/common/image.h"
#include "sdk/examples/vad/segmenter.h"

namespace demo {

struct PlotData {
  const std::vector<float>* samples = nullptr;  // mono
  int sample_rate = 0;
  const std::vector<float>* probabilities = nullptr;  // one per frame
  int frame_samples = 0;
  float threshold = 0.5f;
  const std::vector<Segment>* detected = nullptr;  // in samples
  const std::vector<Segment>* truth = nullptr;     // may be null
};

Image plot_segments(const PlotData& data, int width = 1200, int height = 260);

}  // namespace demo
