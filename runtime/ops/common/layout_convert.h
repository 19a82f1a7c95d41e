// Layout conversions between ONNX's NCHW and the NHWC the fast kernels and the layout pass's
// regions use (float tensors blocked and split over the pool; any fixed-size type for whole
// tensors).
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/status.h"
#include "runtime/core/tensor.h"
#include "runtime/core/thread_pool.h"

namespace xonnx {

// Conv weights from ONNX [M][C][kh][kw] to [M][kh][kw][C] (XNNPACK's and the im2col order);
// khw = kh * kw.
template <typename T>
void weights_to_ohwi(const T* src, T* dst, int64_t m, int64_t c, int64_t khw) {
  for (int64_t o = 0; o < m; ++o)
    for (int64_t ci = 0; ci < c; ++ci)
      for (int64_t p = 0; p < khw; ++p) dst[(o * khw + p) * c + ci] = src[(o * c + ci) * khw + p];
}

// src [n][c][hw] -> dst [n][hw][c].
void nchw_to_nhwc(const float* src, float* dst, size_t n, size_t c, size_t hw, const ThreadPool& pool);
// src [n][hw][c] -> dst [n][c][hw].
void nhwc_to_nchw(const float* src, float* dst, size_t n, size_t c, size_t hw, const ThreadPool& pool);
// `count` pixels of c planes `plane_stride` floats apart (src: pixel 0 of plane 0) into
// dst [count][c]: one row of an NCHW image in NHWC.
void interleave_pixels(const float* src, size_t plane_stride, size_t c, size_t count, float* dst);
// src [n][c][h][w] -> dst [n][h + pt + pb][w + pl + pr][c] with zeros in the border.
void nchw_to_nhwc_padded(const float* src, float* dst, size_t n, size_t c, size_t h, size_t w, size_t pt, size_t pl,
                         size_t pb, size_t pr, const ThreadPool& pool);

// Converts a 4-D tensor of any fixed-size type between NCHW and NHWC into `dst`, which has
// the permuted shape and the same type.
Status permute_layout(const Tensor& src, bool to_nhwc, Tensor& dst, const ThreadPool& pool);

}  // namespace xonnx
