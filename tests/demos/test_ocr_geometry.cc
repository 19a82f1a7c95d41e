// Text-box geometry and DB post-processing on hand-made probability maps.
#include <gtest/gtest.h>

#include <cmath>

#include "sdk/examples/ocr/db_postprocess.h"

namespace demo {
namespace {

constexpr float kPi = 3.14159265f;

TEST(Geometry, ConvexHullDropsInteriorAndCollinearPoints) {
  const std::vector<PointF> hull =
      convex_hull({{0, 0}, {2, 0}, {4, 0}, {4, 4}, {0, 4}, {2, 2}, {1, 3}, {0, 2}, {4, 0}});
  EXPECT_EQ(hull.size(), 4u);
}

TEST(Geometry, MinAreaRectOfARotatedRectangle) {
  const float a = 20 * kPi / 180;
  const PointF u{std::cos(a), std::sin(a)}, v{-std::sin(a), std::cos(a)};
  std::vector<PointF> pts;
  for (float s = -20; s <= 20; s += 2.5f) {
    for (float t = -5; t <= 5; t += 2.5f) pts.push_back({50 + s * u.x + t * v.x, 50 + s * u.y + t * v.y});
  }
  const RotatedRect r = min_area_rect(pts);
  EXPECT_NEAR(r.center.x, 50, 1e-3);
  EXPECT_NEAR(r.center.y, 50, 1e-3);
  EXPECT_NEAR(std::max(r.width, r.height), 40, 1e-3);
  EXPECT_NEAR(std::min(r.width, r.height), 10, 1e-3);
  // The long side runs at 20 degrees.
  const Quad q = ordered_corners(r);
  EXPECT_NEAR(std::atan2(q[1].y - q[0].y, q[1].x - q[0].x), a, 1e-4);
}

TEST(Geometry, CornersInPaddleOrder) {
  RotatedRect r;
  r.center = {20, 10};
  r.width = 10;
  r.height = 4;
  const Quad q = ordered_corners(r);
  const PointF want[4] = {{15, 8}, {25, 8}, {25, 12}, {15, 12}};
  for (int i = 0; i < 4; ++i) {
    EXPECT_FLOAT_EQ(q[i].x, want[i].x) << i;
    EXPECT_FLOAT_EQ(q[i].y, want[i].y) << i;
  }
  EXPECT_TRUE(inside_quad(q, {20, 10}));
  EXPECT_TRUE(inside_quad(q, {15, 9}));  // on an edge
  EXPECT_FALSE(inside_quad(q, {26, 10}));
}

TEST(Geometry, DegenerateInputs) {
  EXPECT_EQ(min_area_rect({}).width, 0);
  const RotatedRect one = min_area_rect({{3, 4}, {3, 4}});
  EXPECT_EQ(one.width, 0);
  EXPECT_EQ(one.center.x, 3);
  const RotatedRect line = min_area_rect({{0, 0}, {10, 0}, {5, 0}});
  EXPECT_FLOAT_EQ(line.width, 10);
  EXPECT_FLOAT_EQ(line.height, 0);
}

std::vector<float> map_with(int w, int h, int x0, int y0, int x1, int y1, float p, std::vector<float> m = {}) {
  if (m.empty()) m.assign(static_cast<size_t>(w) * h, 0.0f);
  for (int y = y0; y <= y1; ++y) {
    for (int x = x0; x <= x1; ++x) m[static_cast<size_t>(y) * w + x] = p;
  }
  return m;
}

TEST(DbPostprocess, BoxGrowsByTheUnclipDistance) {
  // Pixel centres 20..69 x 10..19: a 49 x 9 rectangle; distance 49*9*1.5 / (2*(49+9)) = 5.703.
  const std::vector<float> m = map_with(100, 60, 20, 10, 69, 19, 0.9f);
  std::vector<TextBox> boxes = db_boxes(m.data(), 100, 60, 100, 60);
  ASSERT_EQ(boxes.size(), 1u);
  EXPECT_NEAR(boxes[0].score, 0.9f, 1e-6);
  const PointF want[4] = {{14, 4}, {75, 4}, {75, 25}, {14, 25}};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(boxes[0].corners[i].x, want[i].x) << i;
    EXPECT_EQ(boxes[0].corners[i].y, want[i].y) << i;
  }
  // Scaled to a page twice the map's size, then rounded.
  boxes = db_boxes(m.data(), 100, 60, 200, 120);
  ASSERT_EQ(boxes.size(), 1u);
  EXPECT_EQ(boxes[0].corners[0].x, 29);
  EXPECT_EQ(boxes[0].corners[0].y, 9);
  EXPECT_EQ(boxes[0].corners[2].x, 149);
  EXPECT_EQ(boxes[0].corners[2].y, 49);
}

TEST(DbPostprocess, WeakTinyAndSeparateRegions) {
  std::vector<float> m = map_with(100, 60, 5, 5, 40, 12, 0.9f);
  m = map_with(100, 60, 50, 5, 90, 12, 0.5f, m);   // above 0.3, mean below 0.6: dropped
  m = map_with(100, 60, 5, 40, 6, 41, 0.95f, m);   // 2 x 2: thinner than min_size
  m = map_with(100, 60, 30, 30, 90, 50, 0.8f, m);  // a second text region
  const std::vector<TextBox> boxes = db_boxes(m.data(), 100, 60, 100, 60);
  ASSERT_EQ(boxes.size(), 2u);
  EXPECT_NEAR(boxes[0].score, 0.9f, 1e-6);
  EXPECT_NEAR(boxes[1].score, 0.8f, 1e-6);
  DbParams strict;
  strict.box_threshold = 0.85f;
  EXPECT_EQ(db_boxes(m.data(), 100, 60, 100, 60, strict).size(), 1u);
}

TEST(DbPostprocess, RotatedRegionGivesARotatedBox) {
  const int w = 120, h = 80;
  std::vector<float> m(static_cast<size_t>(w) * h, 0.0f);
  const float a = -10 * kPi / 180;  // rising to the right
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const float dx = x - 60.0f, dy = y - 40.0f;
      const float s = dx * std::cos(a) + dy * std::sin(a), t = -dx * std::sin(a) + dy * std::cos(a);
      if (std::fabs(s) <= 40 && std::fabs(t) <= 6) m[static_cast<size_t>(y) * w + x] = 0.95f;
    }
  }
  const std::vector<TextBox> boxes = db_boxes(m.data(), w, h, w, h);
  ASSERT_EQ(boxes.size(), 1u);
  const Quad& q = boxes[0].corners;
  EXPECT_NEAR(std::atan2(q[1].y - q[0].y, q[1].x - q[0].x), a, 0.03);
  EXPECT_LT(q[0].x, q[1].x);  // top-left is left of top-right
  EXPECT_LT(q[0].y, q[3].y);  // and above bottom-left
}

}  // namespace
}  // namespace demo
