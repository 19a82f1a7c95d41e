// WAV reading: every sample format the demo accepts, built byte by byte, and bad files.
#include <gtest/gtest.h>

#include <cstring>

#include "sdk/examples/vad/wav.h"

namespace demo {
namespace {

void put16(std::vector<uint8_t>* b, uint32_t v) {
  b->push_back(v & 0xFF);
  b->push_back((v >> 8) & 0xFF);
}
void put32(std::vector<uint8_t>* b, uint32_t v) {
  put16(b, v & 0xFFFF);
  put16(b, v >> 16);
}
void tag(std::vector<uint8_t>* b, const char* t) {
  for (int i = 0; i < 4; ++i) b->push_back(static_cast<uint8_t>(t[i]));
}

// A RIFF/WAVE file; `subformat` != 0 writes WAVE_FORMAT_EXTENSIBLE with that subformat.
std::vector<uint8_t> wav(uint16_t format, uint16_t channels, uint32_t rate, uint16_t bits,
                         const std::vector<uint8_t>& data, uint16_t subformat = 0, bool extra_chunk = false) {
  std::vector<uint8_t> b;
  tag(&b, "RIFF");
  put32(&b, 0);  // patched below
  tag(&b, "WAVE");
  if (extra_chunk) {  // an odd-sized chunk before fmt: padded to an even size
    tag(&b, "LIST");
    put32(&b, 3);
    b.insert(b.end(), {'a', 'b', 'c', 0});
  }
  tag(&b, "fmt ");
  put32(&b, subformat ? 40 : 16);
  put16(&b, subformat ? 0xFFFE : format);
  put16(&b, channels);
  put32(&b, rate);
  put32(&b, rate * channels * bits / 8);
  put16(&b, channels * bits / 8);
  put16(&b, bits);
  if (subformat) {
    put16(&b, 22);
    put16(&b, bits);
    put32(&b, 0);
    put16(&b, subformat);
    const uint8_t tail[14] = {0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71};
    b.insert(b.end(), tail, tail + 14);
  }
  tag(&b, "data");
  put32(&b, static_cast<uint32_t>(data.size()));
  b.insert(b.end(), data.begin(), data.end());
  const uint32_t riff = static_cast<uint32_t>(b.size() - 8);
  std::memcpy(&b[4], &riff, 4);
  return b;
}

Status decode(const std::vector<uint8_t>& bytes, Audio* out) {
  return decode_wav(bytes.data(), bytes.size(), "test.wav", out);
}

TEST(Wav, Pcm16Stereo) {
  std::vector<uint8_t> d;
  for (int16_t v : {0, 16384, -32768, 32767}) put16(&d, static_cast<uint16_t>(v));
  Audio a;
  ASSERT_TRUE(decode(wav(1, 2, 22050, 16, d), &a).ok());
  EXPECT_EQ(a.sample_rate, 22050);
  EXPECT_EQ(a.channels, 2);
  ASSERT_EQ(a.frames(), 2u);
  EXPECT_FLOAT_EQ(a.samples[1], 0.5f);
  EXPECT_FLOAT_EQ(a.samples[2], -1.0f);
  EXPECT_NEAR(a.samples[3], 1.0f, 1e-4);
  const std::vector<float> mono = mix_to_mono(a);
  EXPECT_FLOAT_EQ(mono[0], 0.25f);
}

TEST(Wav, Pcm24ExtensibleThreeChannels) {
  // sox writes this for more than two channels: WAVE_FORMAT_EXTENSIBLE, PCM subformat.
  std::vector<uint8_t> d;
  for (int32_t v : {0x400000, -0x800000, 0x000001}) {
    d.push_back(v & 0xFF);
    d.push_back((v >> 8) & 0xFF);
    d.push_back((v >> 16) & 0xFF);
  }
  Audio a;
  ASSERT_TRUE(decode(wav(0, 3, 48000, 24, d, /*subformat=*/1), &a).ok());
  EXPECT_EQ(a.channels, 3);
  ASSERT_EQ(a.frames(), 1u);
  EXPECT_FLOAT_EQ(a.samples[0], 0.5f);
  EXPECT_FLOAT_EQ(a.samples[1], -1.0f);
  EXPECT_FLOAT_EQ(a.samples[2], 1.0f / 8388608.0f);
}

TEST(Wav, Float32PlainAndExtensible) {
  std::vector<uint8_t> d(8);
  const float v[2] = {0.25f, -0.75f};
  std::memcpy(d.data(), v, 8);
  for (uint16_t sub : {0, 3}) {
    Audio a;
    ASSERT_TRUE(decode(wav(3, 1, 16000, 32, d, sub, /*extra_chunk=*/true), &a).ok());
    ASSERT_EQ(a.samples.size(), 2u);
    EXPECT_EQ(a.samples[0], 0.25f);
    EXPECT_EQ(a.samples[1], -0.75f);
  }
}

TEST(Wav, Pcm8AndPcm32AndFloat64) {
  Audio a;
  ASSERT_TRUE(decode(wav(1, 1, 8000, 8, {128, 0, 255}), &a).ok());
  EXPECT_FLOAT_EQ(a.samples[0], 0.0f);
  EXPECT_FLOAT_EQ(a.samples[1], -1.0f);
  std::vector<uint8_t> d;
  put32(&d, 0x40000000u);
  ASSERT_TRUE(decode(wav(1, 1, 8000, 32, d), &a).ok());
  EXPECT_FLOAT_EQ(a.samples[0], 0.5f);
  std::vector<uint8_t> f(8);
  const double x = -0.125;
  std::memcpy(f.data(), &x, 8);
  ASSERT_TRUE(decode(wav(3, 1, 8000, 64, f), &a).ok());
  EXPECT_FLOAT_EQ(a.samples[0], -0.125f);
}

TEST(Wav, DataSizePastTheEndTakesWholeFrames) {
  std::vector<uint8_t> b = wav(1, 2, 8000, 16, {1, 0, 2, 0, 3, 0, 4, 0, 5});  // 2 frames and a stray byte
  const size_t data_size_at = b.size() - 9 - 4;
  const uint32_t huge = 0xFFFFFFFFu;
  std::memcpy(&b[data_size_at], &huge, 4);
  Audio a;
  ASSERT_TRUE(decode(b, &a).ok());
  EXPECT_EQ(a.frames(), 2u);
}

TEST(Wav, BadFilesAreErrorsNamingTheProblem) {
  Audio a;
  Status s = decode({'R', 'I', 'F', 'F'}, &a);
  EXPECT_NE(s.message().find("not a RIFF/WAVE"), std::string::npos) << s.message();
  s = decode(wav(2, 1, 8000, 4, {0, 0}), &a);  // ADPCM
  EXPECT_NE(s.message().find("unsupported sample format 2"), std::string::npos) << s.message();
  s = decode(wav(1, 1, 8000, 12, {0, 0}), &a);
  EXPECT_NE(s.message().find("12-bit"), std::string::npos) << s.message();
  s = decode(wav(1, 0, 8000, 16, {0, 0}), &a);
  EXPECT_NE(s.message().find("inconsistent format"), std::string::npos) << s.message();
  std::vector<uint8_t> ext = wav(0, 1, 8000, 16, {0, 0}, 1);
  ext[50] ^= 0xFF;  // corrupt the subformat GUID (after its 2-byte format code at 44)
  s = decode(ext, &a);
  EXPECT_NE(s.message().find("GUID"), std::string::npos) << s.message();
  std::vector<uint8_t> no_data = wav(1, 1, 8000, 16, {});
  no_data.resize(no_data.size() - 8);
  s = decode(no_data, &a);
  EXPECT_NE(s.message().find("no 'data' chunk"), std::string::npos) << s.message();
  s = read_wav("/nonexistent/x.wav", &a);
  EXPECT_NE(s.message().find("cannot open"), std::string::npos);
}

}  // namespace
}  // namespace demo
