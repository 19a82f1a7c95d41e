// Text boxes from a DB (Differentiable Binarization) text detector's probability map, as
// PaddleOCR's DBPostProcess computes them: threshold the map, take each connected region,
// its minimum-area rectangle, the region's mean probability inside it as the score, and grow
// the rectangle by the "unclip" distance (the model is trained on shrunk text regions).
#pragma once

#include <vector>

#include "sdk/examples/ocr/geometry.h"

namespace demo {

struct DbParams {
  float threshold = 0.3f;      // probability above which a pixel is text
  float box_threshold = 0.6f;  // minimum mean probability inside a box
  float unclip_ratio = 1.5f;   // grow distance = area * ratio / perimeter
  int max_candidates = 1000;   // regions considered, in scan order
  int min_size = 3;            // regions whose rectangle is thinner than this are dropped
};

struct TextBox {
  Quad corners;  // top-left, top-right, bottom-right, bottom-left
  float score = 0;
};

// `prob` is the map (map_width x map_height, row-major); the boxes come out scaled to
// image_width x image_height and rounded to whole pixels like PaddleOCR's.
std::vector<TextBox> db_boxes(const float* prob, int map_width, int map_height, int image_width, int image_height,
                              const DbParams& params = {});

}  // namespace demo
