#include "sdk/examples/ocr/db_postprocess.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace demo {
namespace {

// 8-connected regions of the thresholded map. Each region is given by its points on the
// left and right end of every row it covers: enough for its convex hull (and so for its
// minimum-area rectangle), which is all the boxes need.
std::vector<std::vector<PointF>> region_outlines(const std::vector<uint8_t>& mask, int w, int h, int max_regions) {
  std::vector<int32_t> label(mask.size(), -1);
  std::vector<std::vector<PointF>> regions;
  std::vector<int32_t> stack;
  std::vector<int> row_lo(h, w), row_hi(h, -1);  // per row of the current region; reset after it
  for (int start = 0; start < w * h && static_cast<int>(regions.size()) < max_regions; ++start) {
    if (!mask[start] || label[start] >= 0) continue;
    const int32_t id = static_cast<int32_t>(regions.size());
    int y_lo = start / w, y_hi = y_lo;
    label[start] = id;
    stack.assign(1, start);
    while (!stack.empty()) {
      const int32_t p = stack.back();
      stack.pop_back();
      const int x = p % w, y = p / w;
      row_lo[y] = std::min(row_lo[y], x);
      row_hi[y] = std::max(row_hi[y], x);
      y_lo = std::min(y_lo, y);
      y_hi = std::max(y_hi, y);
      for (int dy = -1; dy <= 1; ++dy) {
        for (int dx = -1; dx <= 1; ++dx) {
          const int nx = x + dx, ny = y + dy;
          if (nx < 0 || ny < 0 || nx >= w || ny >= h) continue;
          const int32_t q = ny * w + nx;
          if (mask[q] && label[q] < 0) {
            label[q] = id;
            stack.push_back(q);
          }
        }
      }
    }
    std::vector<PointF> outline;
    for (int y = y_lo; y <= y_hi; ++y) {
      if (row_hi[y] < 0) continue;
      outline.push_back({static_cast<float>(row_lo[y]), static_cast<float>(y)});
      if (row_hi[y] != row_lo[y]) outline.push_back({static_cast<float>(row_hi[y]), static_cast<float>(y)});
      row_lo[y] = w;
      row_hi[y] = -1;
    }
    regions.push_back(std::move(outline));
  }
  return regions;
}

// Mean probability over the pixels whose centres lie in the quad (PaddleOCR's "fast" score).
float mean_inside(const float* prob, int w, int h, const Quad& q) {
  float x_lo = q[0].x, x_hi = q[0].x, y_lo = q[0].y, y_hi = q[0].y;
  for (const PointF& p : q) {
    x_lo = std::min(x_lo, p.x);
    x_hi = std::max(x_hi, p.x);
    y_lo = std::min(y_lo, p.y);
    y_hi = std::max(y_hi, p.y);
  }
  const int x0 = std::clamp(static_cast<int>(std::floor(x_lo)), 0, w - 1);
  const int x1 = std::clamp(static_cast<int>(std::ceil(x_hi)), 0, w - 1);
  const int y0 = std::clamp(static_cast<int>(std::floor(y_lo)), 0, h - 1);
  const int y1 = std::clamp(static_cast<int>(std::ceil(y_hi)), 0, h - 1);
  double sum = 0;
  int64_t count = 0;
  for (int y = y0; y <= y1; ++y) {
    for (int x = x0; x <= x1; ++x) {
      if (!inside_quad(q, {static_cast<float>(x), static_cast<float>(y)})) continue;
      sum += prob[static_cast<size_t>(y) * w + x];
      ++count;
    }
  }
  return count ? static_cast<float>(sum / count) : 0.0f;
}

}  // namespace

std::vector<TextBox> db_boxes(const float* prob, int map_width, int map_height, int image_width, int image_height,
                              const DbParams& params) {
  std::vector<TextBox> boxes;
  if (map_width <= 0 || map_height <= 0) return boxes;
  std::vector<uint8_t> mask(static_cast<size_t>(map_width) * map_height);
  for (size_t i = 0; i < mask.size(); ++i) mask[i] = prob[i] > params.threshold;
  const float sx = static_cast<float>(image_width) / map_width;
  const float sy = static_cast<float>(image_height) / map_height;
  for (const std::vector<PointF>& outline : region_outlines(mask, map_width, map_height, params.max_candidates)) {
    const RotatedRect rect = min_area_rect(outline);
    if (std::min(rect.width, rect.height) < params.min_size) continue;
    const float score = mean_inside(prob, map_width, map_height, ordered_corners(rect));
    if (score < params.box_threshold) continue;
    // PaddleOCR offsets the box polygon by this distance with round joins (pyclipper) and
    // takes the minimum-area rectangle of the result: for a rectangle that is the rectangle
    // grown by the distance on every side.
    const float area = rect.width * rect.height, perimeter = 2 * (rect.width + rect.height);
    const RotatedRect grown = expand(rect, area * params.unclip_ratio / perimeter);
    if (std::min(grown.width, grown.height) < params.min_size + 2) continue;
    TextBox box;
    box.corners = ordered_corners(grown);
    box.score = score;
    for (PointF& p : box.corners) {
      p.x = std::clamp(std::round(p.x * sx), 0.0f, static_cast<float>(image_width));
      p.y = std::clamp(std::round(p.y * sy), 0.0f, static_cast<float>(image_height));
    }
    boxes.push_back(box);
  }
  return boxes;
}

}  // namespace demo
