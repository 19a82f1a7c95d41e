// Plane geometry of text boxes: convex hull, minimum-area rectangle (OpenCV's minAreaRect),
// and PaddleOCR's corner order. Points are pixel centres (x right, y down).
#pragma once

#include <array>
#include <vector>

#include "sdk/examples/common/draw.h"

namespace demo {

// Corners top-left, top-right, bottom-right, bottom-left (PaddleOCR's order).
using Quad = std::array<PointF, 4>;

struct RotatedRect {
  PointF center;
  PointF axis_u{1, 0};  // unit vector along `width`
  float width = 0;
  float height = 0;  // along the perpendicular of axis_u
};

// Andrew's monotone chain; counter-clockwise in a y-up frame, without collinear points.
std::vector<PointF> convex_hull(std::vector<PointF> points);
// The smallest-area rectangle enclosing the points (rotating calipers over the hull's edges).
RotatedRect min_area_rect(const std::vector<PointF>& points);
// The rectangle with `distance` added on every side.
RotatedRect expand(const RotatedRect& rect, float distance);
// The corners ordered as PaddleOCR's get_mini_boxes does: the two leftmost (by x) give the
// top-left and bottom-left (smaller y first), the two rightmost the top-right and bottom-right.
Quad ordered_corners(const RotatedRect& rect);
// Whether p lies inside or on the edge of the convex quad q (either winding).
bool inside_quad(const Quad& q, PointF p);
float distance(PointF a, PointF b);

}  // namespace demo
