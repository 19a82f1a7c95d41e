// Drawing on RGB images for the demos' pictures: lines, closed polygons, filled rectangles.
// Coordinates are in pixels (x right, y down); everything is clipped to the image.
#pragma once

#include <cstdint>
#include <vector>

#include "sdk/examples/common/image.h"

namespace demo {

struct Rgb {
  uint8_t r, g, b;
};

struct PointF {
  float x = 0, y = 0;
};

// A line `thickness` pixels wide with square ends.
void draw_line(Image* image, PointF a, PointF b, Rgb color, int thickness = 1);
// The outline of a closed polygon.
void draw_polygon(Image* image, const std::vector<PointF>& points, Rgb color, int thickness = 1);
// Pixels x0 <= x < x1, y0 <= y < y1 mixed with `color`: alpha 1 paints, 0 keeps the image.
void blend_rect(Image* image, int x0, int y0, int x1, int y1, Rgb color, float alpha = 1.0f);

}  // namespace demo
