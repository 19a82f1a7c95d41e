#include "sdk/examples/common/image.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>

namespace demo {
namespace {

constexpr int64_t kMaxPixels = int64_t{1} << 28;  // 16k x 16k: larger is a corrupt header here

// Reads the next header number, skipping whitespace and '#' comments.
bool header_number(const uint8_t* data, size_t size, size_t* pos, int64_t* value) {
  size_t p = *pos;
  while (p < size) {
    if (data[p] == '#') {
      while (p < size && data[p] != '\n') ++p;
    } else if (data[p] == ' ' || data[p] == '\t' || data[p] == '\n' || data[p] == '\r') {
      ++p;
    } else {
      break;
    }
  }
  if (p >= size || data[p] < '0' || data[p] > '9') return false;
  int64_t v = 0;
  while (p < size && data[p] >= '0' && data[p] <= '9') {
    v = v * 10 + (data[p] - '0');
    if (v > kMaxPixels) return false;
    ++p;
  }
  *value = v;
  *pos = p;
  return true;
}

}  // namespace

Status decode_pnm(const uint8_t* data, size_t size, const std::string& what, Image* out, bool want_rgb) {
  if (size < 2 || data[0] != 'P' || (data[1] != '6' && data[1] != '5')) {
    return Status::error(what + ": not a binary PPM/PGM (P6/P5) file");
  }
  const int channels = data[1] == '6' ? 3 : 1;
  size_t pos = 2;
  int64_t w = 0, h = 0, maxval = 0;
  if (!header_number(data, size, &pos, &w) || !header_number(data, size, &pos, &h) ||
      !header_number(data, size, &pos, &maxval)) {
    return Status::error(what + ": malformed PNM header");
  }
  if (w <= 0 || h <= 0 || w * h > kMaxPixels) {
    return Status::error(what + ": bad image size " + std::to_string(w) + "x" + std::to_string(h));
  }
  if (maxval < 1 || maxval > 65535) return Status::error(what + ": bad maxval " + std::to_string(maxval));
  ++pos;  // the single whitespace byte that ends the header
  const size_t bytes_per_sample = maxval > 255 ? 2 : 1;
  const size_t samples = static_cast<size_t>(w * h) * channels;
  if (pos > size || size - pos < samples * bytes_per_sample) {
    return Status::error(what + ": pixel data truncated (" + std::to_string(size - std::min(pos, size)) +
                         " bytes, need " + std::to_string(samples * bytes_per_sample) + ")");
  }
  const int out_channels = channels == 1 && want_rgb ? 3 : channels;
  Image img(static_cast<int>(w), static_cast<int>(h), out_channels);
  const uint8_t* src = data + pos;
  for (size_t i = 0; i < samples; ++i) {
    uint32_t v = bytes_per_sample == 2 ? (uint32_t{src[2 * i]} << 8) | src[2 * i + 1] : src[i];
    if (v > static_cast<uint32_t>(maxval)) v = static_cast<uint32_t>(maxval);
    const auto byte = static_cast<uint8_t>((v * 255 + static_cast<uint32_t>(maxval) / 2) / maxval);
    if (out_channels == channels) {
      img.pixels[i] = byte;
    } else {
      img.pixels[3 * i] = img.pixels[3 * i + 1] = img.pixels[3 * i + 2] = byte;
    }
  }
  *out = std::move(img);
  return Status();
}

Status read_pnm(const std::string& path, Image* out, bool want_rgb) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status::error("cannot open image '" + path + "'");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return decode_pnm(bytes.data(), bytes.size(), "image '" + path + "'", out, want_rgb);
}

std::vector<uint8_t> encode_pnm(const Image& image) {
  const std::string header = std::string(image.channels == 3 ? "P6" : "P5") + "\n" + std::to_string(image.width) + " " +
                             std::to_string(image.height) + "\n255\n";
  std::vector<uint8_t> out(header.begin(), header.end());
  out.insert(out.end(), image.pixels.begin(), image.pixels.end());
  return out;
}

Status write_pnm(const std::string& path, const Image& image) {
  if (image.channels != 1 && image.channels != 3) {
    return Status::error("cannot write '" + path + "': " + std::to_string(image.channels) + " channels");
  }
  const std::vector<uint8_t> bytes = encode_pnm(image);
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!f) return Status::error("cannot write image '" + path + "'");
  return Status();
}

}  // namespace demo
