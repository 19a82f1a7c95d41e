#include "sdk/examples/ocr/geometry.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace demo {
namespace {

float cross(PointF o, PointF a, PointF b) { return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x); }

}  // namespace

float distance(PointF a, PointF b) { return std::hypot(a.x - b.x, a.y - b.y); }

std::vector<PointF> convex_hull(std::vector<PointF> p) {
  std::sort(p.begin(), p.end(), [](PointF a, PointF b) { return a.x < b.x || (a.x == b.x && a.y < b.y); });
  p.erase(std::unique(p.begin(), p.end(), [](PointF a, PointF b) { return a.x == b.x && a.y == b.y; }), p.end());
  if (p.size() < 3) return p;
  std::vector<PointF> hull(2 * p.size());
  size_t k = 0;
  for (size_t i = 0; i < p.size(); ++i) {  // lower chain
    while (k >= 2 && cross(hull[k - 2], hull[k - 1], p[i]) <= 0) --k;
    hull[k++] = p[i];
  }
  for (size_t i = p.size() - 1, lower = k + 1; i-- > 0;) {  // upper chain
    while (k >= lower && cross(hull[k - 2], hull[k - 1], p[i]) <= 0) --k;
    hull[k++] = p[i];
  }
  hull.resize(k - 1);  // the last point repeats the first
  return hull;
}

RotatedRect min_area_rect(const std::vector<PointF>& points) {
  const std::vector<PointF> hull = convex_hull(points);
  RotatedRect best;
  if (hull.empty()) return best;
  if (hull.size() == 1) {
    best.center = hull[0];
    return best;
  }
  // The minimum-area rectangle has a side on one of the hull's edges.
  float best_area = std::numeric_limits<float>::infinity();
  for (size_t i = 0; i < hull.size(); ++i) {
    const PointF a = hull[i], b = hull[(i + 1) % hull.size()];
    const float len = distance(a, b);
    if (len == 0) continue;
    const PointF u{(b.x - a.x) / len, (b.y - a.y) / len};
    float u_lo = std::numeric_limits<float>::infinity(), u_hi = -u_lo, v_lo = u_lo, v_hi = -u_lo;
    for (PointF p : hull) {
      const float pu = p.x * u.x + p.y * u.y, pv = -p.x * u.y + p.y * u.x;
      u_lo = std::min(u_lo, pu);
      u_hi = std::max(u_hi, pu);
      v_lo = std::min(v_lo, pv);
      v_hi = std::max(v_hi, pv);
    }
    const float area = (u_hi - u_lo) * (v_hi - v_lo);
    if (area < best_area) {
      best_area = area;
      const float cu = 0.5f * (u_lo + u_hi), cv = 0.5f * (v_lo + v_hi);
      best.center = {cu * u.x - cv * u.y, cu * u.y + cv * u.x};
      best.axis_u = u;
      best.width = u_hi - u_lo;
      best.height = v_hi - v_lo;
    }
  }
  return best;
}

RotatedRect expand(const RotatedRect& rect, float distance) {
  RotatedRect r = rect;
  r.width += 2 * distance;
  r.height += 2 * distance;
  return r;
}

Quad ordered_corners(const RotatedRect& r) {
  const PointF u{r.axis_u.x * r.width / 2, r.axis_u.y * r.width / 2};
  const PointF v{-r.axis_u.y * r.height / 2, r.axis_u.x * r.height / 2};
  std::array<PointF, 4> p = {
      PointF{r.center.x - u.x - v.x, r.center.y - u.y - v.y}, PointF{r.center.x + u.x - v.x, r.center.y + u.y - v.y},
      PointF{r.center.x + u.x + v.x, r.center.y + u.y + v.y}, PointF{r.center.x - u.x + v.x, r.center.y - u.y + v.y}};
  std::stable_sort(p.begin(), p.end(), [](PointF a, PointF b) { return a.x < b.x; });
  const bool left_first = p[1].y > p[0].y, right_first = p[3].y > p[2].y;
  return {left_first ? p[0] : p[1], right_first ? p[2] : p[3], right_first ? p[3] : p[2], left_first ? p[1] : p[0]};
}

bool inside_quad(const Quad& q, PointF p) {
  constexpr float kEdge = 1e-3f;  // points on an edge count as inside
  bool has_pos = false, has_neg = false;
  for (int i = 0; i < 4; ++i) {
    const PointF a = q[i], b = q[(i + 1) % 4];
    const float len = std::max(distance(a, b), 1e-6f);
    const float c = cross(a, b, p) / len;
    has_pos |= c > kEdge;
    has_neg |= c < -kEdge;
  }
  return !(has_pos && has_neg);
}

}  // namespace demo
