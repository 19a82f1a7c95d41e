// 8-bit images and their file format on the device side: binary PNM (PPM colour, PGM grey).
// The demo scripts convert any format to and from PNM with ImageMagick, so the programs that
// run on a board need no image library.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sdk/examples/common/status.h"

namespace demo {

// Interleaved 8-bit pixels, rows top to bottom; channels is 1 (grey) or 3 (R, G, B).
struct Image {
  int width = 0;
  int height = 0;
  int channels = 3;
  std::vector<uint8_t> pixels;

  Image() = default;
  Image(int w, int h, int c, uint8_t fill = 0)
      : width(w), height(h), channels(c), pixels(static_cast<size_t>(w) * h * c, fill) {}
  bool empty() const { return width == 0 || height == 0; }
  uint8_t* at(int x, int y) { return &pixels[(static_cast<size_t>(y) * width + x) * channels]; }
  const uint8_t* at(int x, int y) const { return &pixels[(static_cast<size_t>(y) * width + x) * channels]; }
};

// Reads a binary PPM (P6) or PGM (P5) with maxval 1..65535 (16-bit samples are scaled to 8
// bits); a PGM is returned as RGB when `want_rgb` is true.
Status read_pnm(const std::string& path, Image* out, bool want_rgb = true);
// Writes a PPM (3 channels) or PGM (1 channel).
Status write_pnm(const std::string& path, const Image& image);
// The same from and to memory; `what` names the source in error messages.
Status decode_pnm(const uint8_t* data, size_t size, const std::string& what, Image* out, bool want_rgb = true);
std::vector<uint8_t> encode_pnm(const Image& image);

}  // namespace demo
