#include "sdk/examples/vad/wav.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>

namespace demo {
namespace {

constexpr uint16_t kFormatPcm = 1;
constexpr uint16_t kFormatFloat = 3;
constexpr uint16_t kFormatExtensible = 0xFFFE;
// KSDATAFORMAT_SUBTYPE_* GUIDs share these 14 bytes after the 2-byte format code.
constexpr uint8_t kGuidTail[14] = {0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71};

uint16_t u16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
uint32_t u32(const uint8_t* p) { return u16(p) | (static_cast<uint32_t>(u16(p + 2)) << 16); }

float sample_at(const uint8_t* p, uint16_t format, int bytes) {
  if (format == kFormatFloat) {
    if (bytes == 4) {
      float f;
      std::memcpy(&f, p, 4);  // little-endian hosts (x86-64, ARM Linux)
      return f;
    }
    double d;
    std::memcpy(&d, p, 8);
    return static_cast<float>(d);
  }
  switch (bytes) {
    case 1: return (p[0] - 128) / 128.0f;
    case 2: return static_cast<int16_t>(u16(p)) / 32768.0f;
    case 3:
      return static_cast<int32_t>((p[0] << 8) | (p[1] << 16) | (static_cast<uint32_t>(p[2]) << 24)) / 2147483648.0f;
    default: return static_cast<int32_t>(u32(p)) / 2147483648.0f;
  }
}

}  // namespace

Status decode_wav(const uint8_t* data, size_t size, const std::string& what, Audio* out) {
  if (size < 12 || std::memcmp(data, "RIFF", 4) != 0 || std::memcmp(data + 8, "WAVE", 4) != 0) {
    return Status::error(what + ": not a RIFF/WAVE file");
  }
  uint16_t format = 0, channels = 0, bits = 0, block_align = 0;
  uint32_t rate = 0;
  bool have_fmt = false;
  for (size_t pos = 12; pos + 8 <= size;) {
    const uint8_t* chunk = data + pos;
    const uint32_t chunk_size = u32(chunk + 4);
    const uint8_t* body = chunk + 8;
    const size_t available = size - pos - 8;
    if (std::memcmp(chunk, "fmt ", 4) == 0) {
      if (chunk_size < 16 || available < 16) return Status::error(what + ": 'fmt ' chunk too short");
      format = u16(body);
      channels = u16(body + 2);
      rate = u32(body + 4);
      block_align = u16(body + 12);
      bits = u16(body + 14);
      if (format == kFormatExtensible) {
        if (chunk_size < 40 || available < 40)
          return Status::error(what + ": WAVE_FORMAT_EXTENSIBLE 'fmt ' chunk too short");
        if (std::memcmp(body + 26, kGuidTail, sizeof kGuidTail) != 0) {
          return Status::error(what + ": WAVE_FORMAT_EXTENSIBLE with an unknown subformat GUID");
        }
        format = u16(body + 24);
      }
      have_fmt = true;
    } else if (std::memcmp(chunk, "data", 4) == 0) {
      if (!have_fmt) return Status::error(what + ": 'data' chunk before the 'fmt ' chunk");
      if (format != kFormatPcm && format != kFormatFloat) {
        return Status::error(what + ": unsupported sample format " + std::to_string(format) +
                             " (PCM and IEEE float are supported)");
      }
      const bool bits_ok =
          format == kFormatPcm ? (bits == 8 || bits == 16 || bits == 24 || bits == 32) : (bits == 32 || bits == 64);
      if (!bits_ok) {
        return Status::error(what + ": unsupported " + std::to_string(bits) + "-bit " +
                             (format == kFormatPcm ? "PCM" : "float") + " samples");
      }
      const int bytes = bits / 8;
      if (channels == 0 || rate == 0 || block_align != channels * bytes) {
        return Status::error(what + ": inconsistent format (" + std::to_string(channels) + " channels, " +
                             std::to_string(rate) + " Hz, block align " + std::to_string(block_align) + ")");
      }
      // A streamed WAV may give a size past the end (or 0xFFFFFFFF): take the whole frames there are.
      const size_t frames = std::min<size_t>(chunk_size, available) / block_align;
      Audio audio;
      audio.sample_rate = static_cast<int>(rate);
      audio.channels = channels;
      audio.samples.resize(frames * channels);
      for (size_t i = 0; i < audio.samples.size(); ++i) audio.samples[i] = sample_at(body + i * bytes, format, bytes);
      *out = std::move(audio);
      return Status();
    }
    pos += 8 + static_cast<size_t>(chunk_size) + (chunk_size & 1);  // chunks are padded to even sizes
  }
  return Status::error(what + (have_fmt ? ": no 'data' chunk" : ": no 'fmt ' chunk"));
}

Status read_wav(const std::string& path, Audio* out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status::error("cannot open audio file '" + path + "'");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return decode_wav(bytes.data(), bytes.size(), "audio file '" + path + "'", out);
}

std::vector<float> mix_to_mono(const Audio& audio) {
  const size_t frames = audio.frames();
  std::vector<float> mono(frames);
  for (size_t i = 0; i < frames; ++i) {
    float sum = 0;
    for (int c = 0; c < audio.channels; ++c) sum += audio.samples[i * audio.channels + c];
    mono[i] = sum / audio.channels;
  }
  return mono;
}

}  // namespace demo
