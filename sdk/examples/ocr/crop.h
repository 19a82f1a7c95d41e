// Cutting text lines out of the page: a detected quad warped to an upright image (PaddleOCR's
// get_rotate_crop_image: perspective warp, bicubic, replicated border; tall crops turned a
// quarter), and the half turn the angle classifier asks for.
#pragma once

#include "sdk/examples/common/image.h"
#include "sdk/examples/ocr/geometry.h"

namespace demo {

// The quad (top-left, top-right, bottom-right, bottom-left) as an upright RGB image, turned
// 90 degrees counter-clockwise when it is at least 1.5 times taller than wide.
Image crop_quad(const Image& page, const Quad& quad);
Image rotate_180(const Image& image);
Image rotate_90_ccw(const Image& image);

}  // namespace demo
