// Images to model inputs, as PaddleOCR prepares them: bilinear resize (OpenCV's INTER_LINEAR
// sampling) and normalised float planes in B, G, R order (PaddleOCR reads images with
// OpenCV, which gives BGR, and its models are trained on that).
#pragma once

#include "sdk/examples/common/image.h"

namespace demo {

struct Normalization {
  float mean[3];  // per plane, in the B, G, R order of the planes
  float std[3];
};
constexpr Normalization kDetNormalization = {{0.485f, 0.456f, 0.406f}, {0.229f, 0.224f, 0.225f}};
constexpr Normalization kRecNormalization = {{0.5f, 0.5f, 0.5f}, {0.5f, 0.5f, 0.5f}};

Image resize_bilinear(const Image& src, int width, int height);
// Writes the RGB image into a 3 x image.height x `tensor_width` float tensor as B, G, R planes
// of (pixel / 255 - mean) / std; columns at and past image.width are left as they are.
void write_bgr_planes(const Image& image, const Normalization& norm, float* tensor, int tensor_width);

}  // namespace demo
