// WAV (RIFF/WAVE) reading: integer PCM (8-bit unsigned, 16, 24, 32-bit), IEEE float (32, 64-bit)
// and WAVE_FORMAT_EXTENSIBLE with either subformat (what sox writes for more than two channels
// or more than 16 bits), any sample rate and channel count.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sdk/examples/common/status.h"

namespace demo {

struct Audio {
  int sample_rate = 0;
  int channels = 0;
  std::vector<float> samples;  // interleaved frames, full scale = [-1, 1]
  size_t frames() const { return channels ? samples.size() / channels : 0; }
  double seconds() const { return sample_rate ? static_cast<double>(frames()) / sample_rate : 0; }
};

Status read_wav(const std::string& path, Audio* out);
// The same from memory; `what` names the source in error messages.
Status decode_wav(const uint8_t* data, size_t size, const std::string& what, Audio* out);
// The channels' mean, one sample per frame.
std::vector<float> mix_to_mono(const Audio& audio);

}  // namespace demo
