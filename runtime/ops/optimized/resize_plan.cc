#include "runtime/ops/optimized/resize_plan.h"

#include <algorithm>
#include <cmath>

namespace xonnx {
namespace opt {

bool parse_resize_coord(const std::string& name, ResizeCoord& coord) {
  if (name == "half_pixel")
    coord = ResizeCoord::kHalfPixel;
  else if (name == "pytorch_half_pixel")
    coord = ResizeCoord::kPytorchHalfPixel;
  else if (name == "align_corners")
    coord = ResizeCoord::kAlignCorners;
  else if (name == "asymmetric")
    coord = ResizeCoord::kAsymmetric;
  else
    return false;
  return true;
}

bool parse_resize_nearest(const std::string& name, ResizeNearest& nearest) {
  if (name == "round_prefer_floor")
    nearest = ResizeNearest::kRoundPreferFloor;
  else if (name == "round_prefer_ceil")
    nearest = ResizeNearest::kRoundPreferCeil;
  else if (name == "floor")
    nearest = ResizeNearest::kFloor;
  else if (name == "ceil")
    nearest = ResizeNearest::kCeil;
  else
    return false;
  return true;
}

namespace {

// The input coordinate of output position x of `out` (ops/ref/resize.cc original_coord).
double input_coord(ResizeCoord coord, double x, int64_t in, int64_t out, double scale) {
  switch (coord) {
    case ResizeCoord::kHalfPixel: return (x + 0.5) / scale - 0.5;
    case ResizeCoord::kPytorchHalfPixel: return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
    case ResizeCoord::kAlignCorners:
      return out == 1 ? 0.0 : x * static_cast<double>(in - 1) / static_cast<double>(out - 1);
    case ResizeCoord::kAsymmetric: return x / scale;
  }
  return x;
}

int64_t nearest_pick(ResizeNearest mode, double xo, int64_t in) {
  if (!std::isfinite(xo)) xo = 0.0;
  const double fl = std::floor(xo), ratio = xo - fl;
  double pick = xo;
  if (ratio != 0.0) {
    switch (mode) {
      case ResizeNearest::kRoundPreferFloor: pick = ratio <= 0.5 ? fl : fl + 1; break;
      case ResizeNearest::kRoundPreferCeil: pick = ratio < 0.5 ? fl : fl + 1; break;
      case ResizeNearest::kFloor: pick = fl; break;
      case ResizeNearest::kCeil: pick = fl + 1; break;
    }
  }
  return static_cast<int64_t>(std::min(std::max(pick, 0.0), static_cast<double>(in - 1)));
}

}  // namespace

ResizeAxis plan_resize_axis(const ResizeMode& mode, int64_t in, int64_t out, double scale) {
  ResizeAxis a;
  a.in = in;
  a.out = out;
  a.linear = mode.linear;
  const size_t n = static_cast<size_t>(out);
  a.i0.resize(n);
  if (!mode.linear) {
    for (int64_t x = 0; x < out; ++x)
      a.i0[x] = nearest_pick(mode.nearest, input_coord(mode.coord, double(x), in, out, scale), in);
    return a;
  }
  a.i1.resize(n);
  a.w0.resize(n);
  a.w1.resize(n);
  bool identity = in == out;
  for (int64_t x = 0; x < out; ++x) {
    double xo = input_coord(mode.coord, double(x), in, out, scale);
    if (!std::isfinite(xo)) xo = 0.0;
    // The left neighbour and a ratio in (0, 1]; the two taps inside the edge-padded range
    // [-1, in] (the reference's two-tap filter), clamped to the input.
    double base = std::floor(xo), ratio = xo - base;
    if (ratio == 0.0) {
      base -= 1.0;
      ratio = 1.0;
    }
    const double lo = std::min(std::max(base, -1.0), static_cast<double>(in - 1));
    const int64_t l = static_cast<int64_t>(lo);
    a.i0[x] = std::min<int64_t>(std::max<int64_t>(l, 0), in - 1);
    a.i1[x] = std::min<int64_t>(std::max<int64_t>(l + 1, 0), in - 1);
    a.w0[x] = 1.0 - ratio;
    a.w1[x] = ratio;
    // The reference's identity test: one tap of weight 1 on x itself, the other of weight 0.
    const int unit = (a.w0[x] == 1.0 && a.i0[x] == x) + (a.w1[x] == 1.0 && a.i1[x] == x);
    const bool other_zero = (a.w0[x] == 1.0 && a.i0[x] == x) ? a.w1[x] == 0.0 : a.w0[x] == 0.0;
    if (unit != 1 || !other_zero) identity = false;
  }
  a.identity = identity;
  return a;
}

bool resize_output_hw(KernelContext& ctx, const Tensor& x, bool nhwc, int64_t& out_h, int64_t& out_w, double& scale_h,
                      double& scale_w) {
  const size_t rank = x.rank();
  if (nhwc && rank != 4) return false;
  // Dim d of the NCHW tensor the scales / sizes describe.
  const auto dim = [&](size_t d) { return nhwc ? x.dim(d == 0 ? 0 : d == 1 ? 3 : d - 1) : x.dim(d); };
  const bool has_scales = ctx.has_input(2) && ctx.input(2).numel() > 0;
  const bool has_sizes = ctx.has_input(3) && ctx.input(3).numel() > 0;
  if (has_scales == has_sizes) return false;
  if (has_scales) {
    const Tensor& s = ctx.input(2);
    if (!is_f32(s) || s.numel() != static_cast<int64_t>(rank)) return false;
    const float* v = s.data<float>();
    for (size_t d = 0; d + 2 < rank; ++d)
      if (v[d] != 1.0f) return false;
    scale_h = v[rank - 2];
    scale_w = v[rank - 1];
    if (!(scale_h > 0.0 && scale_w > 0.0 && std::isfinite(scale_h) && std::isfinite(scale_w))) return false;
    const double h = std::floor(static_cast<double>(dim(rank - 2)) * scale_h);
    const double w = std::floor(static_cast<double>(dim(rank - 1)) * scale_w);
    if (!(h < 1e9 && w < 1e9)) return false;
    out_h = static_cast<int64_t>(h);
    out_w = static_cast<int64_t>(w);
    return true;
  }
  const Tensor& s = ctx.input(3);
  if (s.dtype() != DataType::kInt64 || s.numel() != static_cast<int64_t>(rank)) return false;
  const int64_t* v = s.data<int64_t>();
  for (size_t d = 0; d + 2 < rank; ++d)
    if (v[d] != dim(d)) return false;
  out_h = v[rank - 2];
  out_w = v[rank - 1];
  if (out_h <= 0 || out_w <= 0 || dim(rank - 2) <= 0 || dim(rank - 1) <= 0) return false;
  scale_h = static_cast<double>(out_h) / static_cast<double>(dim(rank - 2));
  scale_w = static_cast<double>(out_w) / static_cast<double>(dim(rank - 1));
  return true;
}

namespace {

// The width pass of input row `row` (pw.out pixels of `c` channels, in double), as the
// reference sums it (from 0).
void width_pass(const ResizeAxis& pw, const float* row, int64_t c, double* out) {
  const int64_t ow = pw.out;
  if (pw.identity) {
    for (int64_t o = 0; o < ow * c; ++o) out[o] = static_cast<double>(row[o]);
    return;
  }
  const int64_t* i0 = pw.i0.data();
  const int64_t* i1 = pw.i1.data();
  const double* w0 = pw.w0.data();
  const double* w1 = pw.w1.data();
  if (c == 1) {
    for (int64_t o = 0; o < ow; ++o) {
      double t = 0.0;
      t += w0[o] * static_cast<double>(row[i0[o]]);
      t += w1[o] * static_cast<double>(row[i1[o]]);
      out[o] = t;
    }
    return;
  }
  for (int64_t o = 0; o < ow; ++o) {
    const float* a = row + i0[o] * c;
    const float* b = row + i1[o] * c;
    double* d = out + o * c;
    for (int64_t k = 0; k < c; ++k) {
      double t = 0.0;
      t += w0[o] * static_cast<double>(a[k]);
      t += w1[o] * static_cast<double>(b[k]);
      d[k] = t;
    }
  }
}

}  // namespace

void resize_rows(const ResizeAxis& ph, const ResizeAxis& pw, const float* in, int64_t in_w, int64_t c, int64_t oy0,
                 int64_t oy1, float* out, double* scratch) {
  const int64_t ow = pw.out, row_in = in_w * c, row_out = ow * c;
  if (!ph.linear) {
    const int64_t* ix = pw.i0.data();
    for (int64_t oy = oy0; oy < oy1; ++oy, out += row_out) {
      const float* row = in + ph.i0[oy] * row_in;
      if (c == 1) {
        for (int64_t o = 0; o < ow; ++o) out[o] = row[ix[o]];
      } else {
        for (int64_t o = 0; o < ow; ++o) std::copy(row + ix[o] * c, row + (ix[o] + 1) * c, out + o * c);
      }
    }
    return;
  }
  // Two width-passed input rows, kept while consecutive output rows read them (an upsampling
  // by k reads each input row for about k output rows).
  double* buf[2] = {scratch, scratch + row_out};
  int64_t tag[2] = {-1, -1};
  auto row_of = [&](int64_t iy, int64_t keep) -> const double* {
    for (int b = 0; b < 2; ++b)
      if (tag[b] == iy) return buf[b];
    const int b = tag[0] == keep ? 1 : 0;  // never evict the other row this output needs
    width_pass(pw, in + iy * row_in, c, buf[b]);
    tag[b] = iy;
    return buf[b];
  };
  for (int64_t oy = oy0; oy < oy1; ++oy, out += row_out) {
    if (ph.identity) {
      const double* h = row_of(oy, -1);
      for (int64_t o = 0; o < row_out; ++o) out[o] = static_cast<float>(h[o]);
      continue;
    }
    const double* h0 = row_of(ph.i0[oy], ph.i1[oy]);
    const double* h1 = row_of(ph.i1[oy], ph.i0[oy]);
    const double wy0 = ph.w0[oy], wy1 = ph.w1[oy];
    for (int64_t o = 0; o < row_out; ++o) {
      double v = 0.0;
      v += wy0 * h0[o];
      v += wy1 * h1[o];
      out[o] = static_cast<float>(v);
    }
  }
}

}  // namespace opt
}  // namespace xonnx
