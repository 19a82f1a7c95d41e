#include "sdk/examples/common/draw.h"

#include <algorithm>
#include <cmath>

namespace demo {

void blend_rect(Image* image, int x0, int y0, int x1, int y1, Rgb color, float alpha) {
  if (image->channels != 3) return;
  x0 = std::max(x0, 0);
  y0 = std::max(y0, 0);
  x1 = std::min(x1, image->width);
  y1 = std::min(y1, image->height);
  const float keep = 1.0f - alpha;
  for (int y = y0; y < y1; ++y) {
    for (int x = x0; x < x1; ++x) {
      uint8_t* p = image->at(x, y);
      p[0] = static_cast<uint8_t>(std::lround(p[0] * keep + color.r * alpha));
      p[1] = static_cast<uint8_t>(std::lround(p[1] * keep + color.g * alpha));
      p[2] = static_cast<uint8_t>(std::lround(p[2] * keep + color.b * alpha));
    }
  }
}

void draw_line(Image* image, PointF a, PointF b, Rgb color, int thickness) {
  // Stamps a thickness x thickness square every half pixel along the line.
  const float dx = b.x - a.x, dy = b.y - a.y;
  const int steps = std::max(1, static_cast<int>(std::ceil(2.0f * std::max(std::fabs(dx), std::fabs(dy)))));
  const int lo = -(thickness - 1) / 2, hi = thickness / 2;
  for (int s = 0; s <= steps; ++s) {
    const float t = static_cast<float>(s) / steps;
    const int x = static_cast<int>(std::lround(a.x + t * dx));
    const int y = static_cast<int>(std::lround(a.y + t * dy));
    blend_rect(image, x + lo, y + lo, x + hi + 1, y + hi + 1, color);
  }
}

void draw_polygon(Image* image, const std::vector<PointF>& points, Rgb color, int thickness) {
  for (size_t i = 0; i < points.size(); ++i) {
    draw_line(image, points[i], points[(i + 1) % points.size()], color, thickness);
  }
}

}  // namespace demo
