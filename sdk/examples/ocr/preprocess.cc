#include "sdk/examples/ocr/preprocess.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace demo {
namespace {

struct Tap {
  int lo, hi;
  float frac;  // weight of hi
};

// OpenCV's INTER_LINEAR source positions: pixel centres aligned, clamped at the borders.
std::vector<Tap> taps(int src, int dst) {
  std::vector<Tap> t(dst);
  const float scale = static_cast<float>(src) / dst;
  for (int i = 0; i < dst; ++i) {
    float s = (i + 0.5f) * scale - 0.5f;
    if (s < 0) s = 0;
    int lo = static_cast<int>(std::floor(s));
    if (lo >= src - 1) {
      t[i] = {src - 1, src - 1, 0.0f};
    } else {
      t[i] = {lo, lo + 1, s - lo};
    }
  }
  return t;
}

}  // namespace

Image resize_bilinear(const Image& src, int width, int height) {
  Image out(width, height, src.channels);
  const std::vector<Tap> tx = taps(src.width, width), ty = taps(src.height, height);
  const int c = src.channels;
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const uint8_t* p00 = src.at(tx[x].lo, ty[y].lo);
      const uint8_t* p01 = src.at(tx[x].hi, ty[y].lo);
      const uint8_t* p10 = src.at(tx[x].lo, ty[y].hi);
      const uint8_t* p11 = src.at(tx[x].hi, ty[y].hi);
      const float fx = tx[x].frac, fy = ty[y].frac;
      uint8_t* o = out.at(x, y);
      for (int k = 0; k < c; ++k) {
        const float top = p00[k] + fx * (p01[k] - p00[k]);
        const float bottom = p10[k] + fx * (p11[k] - p10[k]);
        o[k] = static_cast<uint8_t>(std::clamp(std::lround(top + fy * (bottom - top)), 0L, 255L));
      }
    }
  }
  return out;
}

void write_bgr_planes(const Image& image, const Normalization& norm, float* tensor, int tensor_width) {
  const size_t plane = static_cast<size_t>(image.height) * tensor_width;
  for (int c = 0; c < 3; ++c) {
    const int src_channel = image.channels == 3 ? 2 - c : 0;  // B, G, R from R, G, B
    const float scale = 1.0f / (255.0f * norm.std[c]), shift = norm.mean[c] / norm.std[c];
    float* out = tensor + c * plane;
    for (int y = 0; y < image.height; ++y) {
      for (int x = 0; x < image.width; ++x) {
        out[static_cast<size_t>(y) * tensor_width + x] = image.at(x, y)[src_channel] * scale - shift;
      }
    }
  }
}

}  // namespace demo
