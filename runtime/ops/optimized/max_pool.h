// The windows of the own NHWC pools (2-D), shared by pool.cc (MaxPool, ConcatMaxPool,
// AveragePool) and conv.cc (ConvMaxPool: a stem Conv's pool over the rows it has just computed,
// in cache). A window tap in the padding reads `pad`: for a max a row of the type's lowest
// value, which never wins; for an average a row of zeros.
#pragma once

#include <cstdint>
#include <string>

#include "runtime/core/status.h"

namespace xonnx {
class KernelInit;
namespace opt {
struct KernelTable;

// One spatial dim of the windows, as the reference kernel computes it.
struct PoolDim {
  int64_t out = 0, pad_begin = 0, pad_end = 0;
};

class MaxPoolWindows {
 public:
  // The 2-D pool attributes, each name with `prefix` ("" for a MaxPool or AveragePool, "pool_"
  // for the pool merged into a ConvMaxPool). Unsupported (not an error) for what the own
  // kernels skip.
  static Result<MaxPoolWindows> parse(const KernelInit& init, const std::string& prefix);

  // Dim i (0: rows, 1: columns) over `in` input values; false where the windows do not fit
  // (the reference reports it) or a row of them would hold over 2^20 taps (other kernels run it).
  bool dim(int i, int64_t in, PoolDim* d) const;
  // Whether the first or last window of dim i holds only padding.
  bool padding_only_window(int i, int64_t in, const PoolDim& d) const;

  int64_t kernel(int i) const { return kernel_[i]; }
  int64_t stride(int i) const { return s_[i]; }
  int64_t dilation(int i) const { return d_[i]; }
  int64_t taps() const { return kernel_[0] * kernel_[1]; }

  // The input rows output row oy's windows read (kernel(0) of them) from an image of h rows,
  // row_stride values apart: null in the padding.
  template <typename T>
  void window_rows(const T* image, int64_t oy, int64_t h, int64_t row_stride, const PoolDim& dy, const T** rows) const {
    for (int64_t ky = 0; ky < kernel_[0]; ++ky) {
      const int64_t iy = oy * s_[0] - dy.pad_begin + ky * d_[0];
      rows[ky] = iy >= 0 && iy < h ? image + iy * row_stride : nullptr;
    }
  }

  // One output row's window pointers, taps() per output pixel: rows[ky] is the input row that
  // window row ky reads (w pixels of c values, pixel_stride apart), or null in the padding.
  template <typename T>
  void row_taps(const T* const* rows, int64_t w, int64_t pixel_stride, const PoolDim& dx, const T* pad,
                const T** taps) const {
    bool rows_inside = true;
    for (int64_t ky = 0; ky < kernel_[0]; ++ky) rows_inside = rows_inside && rows[ky];
    const int64_t span_x = (kernel_[1] - 1) * d_[1];
    for (int64_t ox = 0; ox < dx.out; ++ox) {
      const int64_t ix0 = ox * s_[1] - dx.pad_begin;
      if (rows_inside && ix0 >= 0 && ix0 + span_x < w) {  // no padding tap
        for (int64_t ky = 0; ky < kernel_[0]; ++ky)
          for (int64_t kx = 0; kx < kernel_[1]; ++kx) *taps++ = rows[ky] + (ix0 + kx * d_[1]) * pixel_stride;
        continue;
      }
      for (int64_t ky = 0; ky < kernel_[0]; ++ky) {
        for (int64_t kx = 0; kx < kernel_[1]; ++kx) {
          const int64_t ix = ix0 + kx * d_[1];
          *taps++ = rows[ky] && ix >= 0 && ix < w ? rows[ky] + ix * pixel_stride : pad;
        }
      }
    }
  }

 private:
  int64_t kernel_[2] = {1, 1}, s_[2] = {1, 1}, d_[2] = {1, 1};
  int64_t pads_[4] = {0, 0, 0, 0};  // top, left, bottom, right (auto_pad NOTSET)
  bool same_ = false, same_upper_ = false, ceil_ = false;
};

// `pixels` float windows of `ntaps` taps each (row_taps) into out, out_stride apart: the max
// over c channels, with the reference's rule for windows that come out -inf (all NaN: NaN;
// padding only: the lowest float).
void max_pool_float(const KernelTable& k, const float* const* taps, const float* pad, int64_t ntaps, int64_t pixels,
                    int64_t c, float* out, int64_t out_stride);

}  // namespace opt
}  // namespace xonnx
