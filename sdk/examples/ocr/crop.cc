#include "sdk/examples/ocr/crop.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace demo {
namespace {

// The homography taking dst[i] to src[i] (8 unknowns, h8 = 1), by Gaussian elimination.
std::array<double, 9> homography(const std::array<PointF, 4>& dst, const std::array<PointF, 4>& src) {
  double a[8][9] = {};
  for (int i = 0; i < 4; ++i) {
    const double u = dst[i].x, v = dst[i].y, x = src[i].x, y = src[i].y;
    const double row_x[9] = {u, v, 1, 0, 0, 0, -u * x, -v * x, x};
    const double row_y[9] = {0, 0, 0, u, v, 1, -u * y, -v * y, y};
    std::copy(row_x, row_x + 9, a[2 * i]);
    std::copy(row_y, row_y + 9, a[2 * i + 1]);
  }
  for (int c = 0; c < 8; ++c) {
    int pivot = c;
    for (int r = c + 1; r < 8; ++r) {
      if (std::fabs(a[r][c]) > std::fabs(a[pivot][c])) pivot = r;
    }
    std::swap(a[c], a[pivot]);
    if (std::fabs(a[c][c]) < 1e-12) return {1, 0, 0, 0, 1, 0, 0, 0, 1};  // degenerate quad
    for (int r = 0; r < 8; ++r) {
      if (r == c) continue;
      const double f = a[r][c] / a[c][c];
      for (int k = c; k < 9; ++k) a[r][k] -= f * a[c][k];
    }
  }
  std::array<double, 9> h{};
  for (int i = 0; i < 8; ++i) h[i] = a[i][8] / a[i][i];
  h[8] = 1;
  return h;
}

// OpenCV's bicubic kernel (A = -0.75).
void cubic_weights(float t, float w[4]) {
  constexpr float A = -0.75f;
  const float x0 = 1 + t, x1 = t, x2 = 1 - t;
  w[0] = ((A * x0 - 5 * A) * x0 + 8 * A) * x0 - 4 * A;
  w[1] = ((A + 2) * x1 - (A + 3)) * x1 * x1 + 1;
  w[2] = ((A + 2) * x2 - (A + 3)) * x2 * x2 + 1;
  w[3] = 1 - w[0] - w[1] - w[2];
}

}  // namespace

Image crop_quad(const Image& page, const Quad& q) {
  const int w = std::max(1, static_cast<int>(std::max(distance(q[0], q[1]), distance(q[3], q[2]))));
  const int h = std::max(1, static_cast<int>(std::max(distance(q[0], q[3]), distance(q[1], q[2]))));
  const std::array<PointF, 4> dst = {PointF{0, 0}, PointF{static_cast<float>(w), 0},
                                     PointF{static_cast<float>(w), static_cast<float>(h)},
                                     PointF{0, static_cast<float>(h)}};
  const std::array<double, 9> m = homography(dst, q);
  Image out(w, h, page.channels);
  const int c = page.channels;
  for (int v = 0; v < h; ++v) {
    for (int u = 0; u < w; ++u) {
      const double z = m[6] * u + m[7] * v + m[8];
      const float x = static_cast<float>((m[0] * u + m[1] * v + m[2]) / z);
      const float y = static_cast<float>((m[3] * u + m[4] * v + m[5]) / z);
      const int xi = static_cast<int>(std::floor(x)), yi = static_cast<int>(std::floor(y));
      float wx[4], wy[4];
      cubic_weights(x - xi, wx);
      cubic_weights(y - yi, wy);
      float acc[4] = {0, 0, 0, 0};
      for (int j = 0; j < 4; ++j) {
        const int sy = std::clamp(yi - 1 + j, 0, page.height - 1);
        for (int i = 0; i < 4; ++i) {
          const uint8_t* p = page.at(std::clamp(xi - 1 + i, 0, page.width - 1), sy);
          for (int k = 0; k < c; ++k) acc[k] += wy[j] * wx[i] * p[k];
        }
      }
      uint8_t* o = out.at(u, v);
      for (int k = 0; k < c; ++k) o[k] = static_cast<uint8_t>(std::clamp(std::lround(acc[k]), 0L, 255L));
    }
  }
  return static_cast<float>(h) / w >= 1.5f ? rotate_90_ccw(out) : out;
}

Image rotate_180(const Image& image) {
  Image out(image.width, image.height, image.channels);
  for (int y = 0; y < image.height; ++y) {
    for (int x = 0; x < image.width; ++x) {
      std::copy_n(image.at(x, y), image.channels, out.at(image.width - 1 - x, image.height - 1 - y));
    }
  }
  return out;
}

Image rotate_90_ccw(const Image& image) {
  Image out(image.height, image.width, image.channels);
  for (int y = 0; y < image.height; ++y) {
    for (int x = 0; x < image.width; ++x) std::copy_n(image.at(x, y), image.channels, out.at(y, image.width - 1 - x));
  }
  return out;
}

}  // namespace demo
