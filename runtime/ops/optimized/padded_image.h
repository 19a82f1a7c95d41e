// The zero-padded NHWC copy of an image that a stem's merged kernel rows read (the own Conv's
// stem path in conv.cc, StemDepthwiseConv): on the copy, the kw taps of a kernel row are kw * C
// contiguous values, one tap of the tiles. Not thread-safe: one per kernel.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "runtime/core/thread_pool.h"
#include "runtime/ops/common/layout_convert.h"
#include "runtime/ops/optimized/opt_util.h"

namespace xonnx {
namespace opt {

class PaddedImage {
 public:
  // Copies x ([n, c, h, w] when nchw, else [n, h, w, c]) into the interior of the copy,
  // [n, h + pads[0] + pads[2], w + pads[1] + pads[3], c], on the pool's threads. The zero border
  // is written only when the geometry changes; `reshaped` (if given) says whether it did.
  // Returns the copy, valid until the next call.
  const float* copy(const ThreadPool& pool, const float* x, bool nchw, int64_t n, int64_t c, int64_t h, int64_t w,
                    const std::array<int64_t, 4>& pads, bool* reshaped = nullptr) {
    const int64_t ph = h + pads[0] + pads[2], pw = w + pads[1] + pads[3];
    const size_t need = static_cast<size_t>(n * ph * pw * c);
    if (padded_.size() < need) padded_.resize(need);  // grows only
    const std::array<int64_t, 8> geometry{n, c, h, w, pads[0], pads[1], pads[2], pads[3]};
    const bool changed = geometry != geometry_;
    if (changed) {
      std::fill(padded_.begin(), padded_.begin() + static_cast<int64_t>(need), 0.0f);
      geometry_ = geometry;
    }
    if (reshaped) *reshaped = changed;
    float* const padded = padded_.data();
    pool.parallel_for(static_cast<size_t>(n * h), chunk_for(w * c, 65536), [&](size_t r0, size_t r1) {
      for (size_t r = r0; r < r1; ++r) {
        const int64_t img = static_cast<int64_t>(r) / h, iy = static_cast<int64_t>(r) % h;
        float* const dst = padded + ((img * ph + iy + pads[0]) * pw + pads[1]) * c;
        if (nchw) {
          interleave_pixels(x + (img * c * h + iy) * w, static_cast<size_t>(h * w), static_cast<size_t>(c),
                            static_cast<size_t>(w), dst);
        } else {
          std::copy(x + (img * h + iy) * w * c, x + (img * h + iy + 1) * w * c, dst);
        }
      }
    });
    return padded;
  }

 private:
  std::vector<float> padded_;
  std::array<int64_t, 8> geometry_{};  // n, c, h, w and pads the zero border is for
};

}  // namespace opt
}  // namespace xonnx
