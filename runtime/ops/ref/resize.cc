// Reference kernels: resize family. Resize (10..19+), Upsample (7..10); GridSample and AffineGrid
// live in resize_grid.cc, RoiAlign and Col2Im in resize_roi.cc.
//
// Resize follows the ONNX reference evaluator (onnx/reference/ops/op_resize.py): every axis is
// interpolated separably with a 1-D filter whose taps are the n input positions nearest to the
// mapped coordinate (edge-padded), so linear/cubic/antialias over N dims is a sequence of 1-D
// passes. Arithmetic is done in double.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "runtime/ops/ref/common.h"
#include "runtime/ops/ref/resize_internal.h"
#include "runtime/ops/registry.h"

namespace xonnx {

namespace {

enum class Mode { kNearest, kLinear, kCubic };
enum class Coord {
  kHalfPixel,
  kHalfPixelSymmetric,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfCropAndResize,
  kTfHalfPixelForNN
};
// kSimple: Resize-10 / Upsample, which predate nearest_mode (downsampling: ceil, else floor).
enum class Nearest { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil, kSimple };
enum class Policy { kStretch, kNotLarger, kNotSmaller };
enum class Variant { kUpsample7, kUpsample9, kResize10, kResize11 };

struct ResizeParams {
  Variant variant = Variant::kResize11;
  int version = 0;
  Mode mode = Mode::kNearest;
  Coord coord = Coord::kHalfPixel;
  Nearest nearest = Nearest::kRoundPreferFloor;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  double extrapolation = 0.0;
  bool antialias = false;
  bool has_axes = false;
  std::vector<int64_t> axes;
  Policy policy = Policy::kStretch;
  std::vector<float> attr_scales;  // Upsample-7
};

// The 1-D filter of one axis: for each output position, `taps` (input index, weight) pairs.
struct AxisPlan {
  int64_t in = 0;
  int64_t out = 0;
  int64_t taps = 1;
  std::vector<int64_t> idx;
  std::vector<double> w;
  std::vector<uint8_t> extrap;  // tf_crop_and_resize: output position maps outside the input
  bool identity = false;
};

double cubic_kernel(double x, double a) {
  x = std::fabs(x);
  if (x <= 1.0) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2.0) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0.0;
}

// Maps output coordinate x to the input coordinate. `scale` is the effective scale of the
// axis and `out_w` = scale * in, the (fractional) resized length ONNX's reference uses.
// align_corners and pytorch_half_pixel take the integer output length `out` instead, as ONNX
// Runtime and PyTorch do: a torch export of interpolate(scale_factor=0.5, align_corners=True)
// on 25 rows expects rows 0, 24/11, ... 24, not 24/11.5 apart. (ONNX's two "downsample scales
// align_corners" cases expect the fractional length; ONNX Runtime skips them too.)
double original_coord(const ResizeParams& p, double x, int64_t in, int64_t out, double scale, double roi_start,
                      double roi_end) {
  const double out_w = scale * static_cast<double>(in);
  switch (p.coord) {
    case Coord::kHalfPixel: return (x + 0.5) / scale - 0.5;
    case Coord::kHalfPixelSymmetric: {
      const double adjustment = static_cast<double>(out) / out_w;
      const double center = static_cast<double>(in) / 2.0;
      const double offset = center * (1.0 - adjustment);
      return offset + (x + 0.5) / scale - 0.5;
    }
    case Coord::kPytorchHalfPixel: return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
    case Coord::kAlignCorners: return out == 1 ? 0.0 : x * static_cast<double>(in - 1) / static_cast<double>(out - 1);
    case Coord::kAsymmetric: return x / scale;
    case Coord::kTfHalfPixelForNN: return (x + 0.5) / scale;
    case Coord::kTfCropAndResize: {
      const double span = (roi_end - roi_start) * static_cast<double>(in - 1);
      double v = out_w == 1.0 ? span / 2.0 : x * span / (out_w - 1.0);
      return v + roi_start * static_cast<double>(in - 1);
    }
  }
  return x;
}

AxisPlan build_axis(const ResizeParams& p, int64_t in, int64_t out, double scale, double roi_start, double roi_end) {
  AxisPlan a;
  a.in = in;
  a.out = out;
  const bool nearest = p.mode == Mode::kNearest;
  // Filter footprint and offset of the first tap relative to the left neighbour `base`.
  int64_t n = 1;
  int64_t first = 0;
  double aa_scale = 1.0;
  if (!nearest) {
    if (p.antialias) aa_scale = std::min(scale, 1.0);
    if (p.mode == Mode::kLinear) {
      first = p.antialias ? static_cast<int64_t>(std::floor(-1.0 / aa_scale) + 1) : 0;
    } else {
      first = p.antialias ? static_cast<int64_t>(std::floor(-2.0 / aa_scale) + 1) : -1;
    }
    n = 2 - 2 * first;
  }
  a.taps = n;
  a.idx.assign(static_cast<size_t>(out) * n, 0);
  a.w.assign(static_cast<size_t>(out) * n, 0.0);
  if (p.coord == Coord::kTfCropAndResize) a.extrap.assign(static_cast<size_t>(out), 0);
  if (in == 0) return a;
  const int64_t pad = (n + 1) / 2;
  bool identity = (in == out);
  for (int64_t x = 0; x < out; ++x) {
    double xo = original_coord(p, static_cast<double>(x), in, out, scale, roi_start, roi_end);
    int64_t* idx = &a.idx[static_cast<size_t>(x) * n];
    double* w = &a.w[static_cast<size_t>(x) * n];
    if (p.coord == Coord::kTfCropAndResize && (xo < 0.0 || xo > static_cast<double>(in - 1) || std::isnan(xo))) {
      a.extrap[x] = 1;
      identity = false;
      continue;
    }
    if (!std::isfinite(xo)) xo = 0.0;
    if (nearest) {
      const double fl = std::floor(xo);
      const double ratio = xo - fl;
      double pick;
      if (p.nearest == Nearest::kSimple) {
        pick = scale < 1.0 ? std::ceil(xo) : std::trunc(xo);
      } else if (ratio == 0.0) {
        pick = xo;
      } else {
        switch (p.nearest) {
          case Nearest::kRoundPreferFloor: pick = ratio <= 0.5 ? fl : fl + 1; break;
          case Nearest::kRoundPreferCeil: pick = ratio < 0.5 ? fl : fl + 1; break;
          case Nearest::kFloor: pick = fl; break;
          default: pick = fl + 1; break;
        }
      }
      pick = std::min(std::max(pick, 0.0), static_cast<double>(in - 1));
      idx[0] = static_cast<int64_t>(pick);
      w[0] = 1.0;
      if (idx[0] != x) identity = false;
      continue;
    }
    // Left neighbour and ratio in (0, 1]: an integral coordinate takes the pixel on its left.
    double base_d = std::floor(xo);
    double ratio = xo - base_d;
    if (ratio == 0.0) {
      base_d -= 1.0;
      ratio = 1.0;
    }
    // Clamp into a sane range before converting (huge coordinates only hit the edge anyway).
    base_d = std::min(std::max(base_d, -static_cast<double>(pad) - n), static_cast<double>(in + pad + n));
    const int64_t base = static_cast<int64_t>(base_d);
    // The n positions nearest to xo inside the edge-padded range [-pad, in - 1 + pad].
    int64_t lo = base + first;
    lo = std::max(lo, -pad);
    lo = std::min(lo, in + pad - n);
    double sum = 0.0;
    for (int64_t k = 0; k < n; ++k) {
      double c;
      const double t = static_cast<double>(first + k) - ratio;  // tap offset from xo
      if (p.mode == Mode::kLinear) {
        c = p.antialias ? std::min(std::max(1.0 - std::fabs(t * aa_scale), 0.0), 1.0) : (k == 0 ? 1.0 - ratio : ratio);
      } else {
        c = cubic_kernel(p.antialias ? t * aa_scale : t, p.cubic_a);
      }
      w[k] = c;
      sum += c;
    }
    if (p.antialias && sum != 0.0) {
      for (int64_t k = 0; k < n; ++k) w[k] /= sum;
    }
    if (p.exclude_outside) {
      double s2 = 0.0;
      for (int64_t k = 0; k < n; ++k) {
        const int64_t pos = lo + k;
        if (pos < 0 || pos >= in) w[k] = 0.0;
        s2 += w[k];
      }
      if (s2 != 0.0) {
        for (int64_t k = 0; k < n; ++k) w[k] /= s2;
      }
    }
    int unit_taps = 0;
    for (int64_t k = 0; k < n; ++k) {
      const int64_t pos = lo + k;
      idx[k] = std::min(std::max<int64_t>(pos, 0), in - 1);
      if (w[k] == 1.0 && idx[k] == x)
        ++unit_taps;
      else if (w[k] != 0.0)
        identity = false;
    }
    if (unit_taps != 1) identity = false;
  }
  a.identity = identity;
  return a;
}

// Clamped truncation to an integer type (numpy astype semantics without UB on overflow).
template <typename T>
T saturate_int(double v) {
  if (std::isnan(v)) return T(0);
  v = std::trunc(v);
  if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
  if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

template <typename T>
T from_double(double v) {
  if constexpr (std::is_integral_v<T>) {
    return saturate_int<T>(v);
  } else {
    return from_compute<T>(static_cast<compute_t<T>>(v));
  }
}

Status run_resize_core(KernelContext& ctx, const ResizeParams& p, const Tensor& x, const Shape& out_shape,
                       const std::vector<double>& scales, const std::vector<double>& roi) {
  const size_t rank = x.rank();
  XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), out_shape));
  if (y->numel() == 0) return Status::ok();
  if (x.numel() == 0)
    return invalid_argument("input X is empty but the output ", shape_to_string(out_shape), " is not");
  std::vector<AxisPlan> plans(rank);
  for (size_t d = 0; d < rank; ++d) {
    plans[d] =
        build_axis(p, x.dim(d), out_shape[d], scales[d], roi.empty() ? 0.0 : roi[d], roi.empty() ? 1.0 : roi[rank + d]);
  }
  const Shape& in_shape = x.shape();
  const int64_t total = y->numel();
  // Output positions that extrapolate (tf_crop_and_resize) in any axis.
  auto extrapolated = [&](const std::vector<int64_t>& oi) {
    for (size_t d = 0; d < rank; ++d) {
      if (!plans[d].extrap.empty() && plans[d].extrap[oi[d]]) return true;
    }
    return false;
  };

  if (p.mode == Mode::kNearest) {
    // Gather: works for every element type, no arithmetic.
    const std::vector<int64_t> in_strides = ref::contiguous_strides(in_shape);
    auto gather = [&](auto copy, auto fill) {
      std::vector<int64_t> oi(rank, 0);
      for (int64_t o = 0; o < total; ++o) {
        if (extrapolated(oi)) {
          fill(o);
        } else {
          int64_t off = 0;
          for (size_t d = 0; d < rank; ++d) off += plans[d].idx[oi[d]] * in_strides[d];
          copy(o, off);
        }
        for (size_t d = rank; d-- > 0;) {
          if (++oi[d] < out_shape[d]) break;
          oi[d] = 0;
        }
      }
    };
    const DataType dt = x.dtype();
    if (dt == DataType::kString) {
      const std::string* src = x.string_data();
      std::string* dst = y->string_data();
      gather([&](int64_t o, int64_t i) { dst[o] = src[i]; }, [&](int64_t o) { dst[o].clear(); });
      return Status::ok();
    }
    if (dtype_is_subbyte(dt)) {
      const void* src = x.raw_data();
      void* dst = y->raw_data();
      gather([&](int64_t o, int64_t i) { subbyte_set(dst, dt, o, subbyte_get(src, dt, i)); }, [&](int64_t) {});
      return Status::ok();
    }
    if (dt == DataType::kFloat8E4M3FN || dt == DataType::kFloat8E4M3FNUZ || dt == DataType::kFloat8E5M2 ||
        dt == DataType::kFloat8E5M2FNUZ || dt == DataType::kFloat8E8M0) {
      const uint8_t* src = x.data<uint8_t>();
      uint8_t* dst = y->data<uint8_t>();
      const uint8_t ev = float_to_float8(dt, static_cast<float>(p.extrapolation), true);
      gather([&](int64_t o, int64_t i) { dst[o] = src[i]; }, [&](int64_t o) { dst[o] = ev; });
      return Status::ok();
    }
    XONNX_DISPATCH_ALL_BYTES(dt, return unsupported("Resize: element type ", dtype_name(dt)), {
      const T* src = x.data<T>();
      T* dst = y->data<T>();
      T ev{};
      if constexpr (!std::is_same_v<T, bool>) ev = from_double<T>(p.extrapolation);
      gather([&](int64_t o, int64_t i) { dst[o] = src[i]; }, [&](int64_t o) { dst[o] = ev; });
    });
    return Status::ok();
  }

  // linear / cubic: separable passes in double, innermost axis first (as the reference).
  std::vector<double> cur(static_cast<size_t>(x.numel()));
  XONNX_DISPATCH_NUMERIC(x.dtype(),
                         return unsupported("Resize ", p.mode == Mode::kLinear ? "linear" : "cubic", ": element type ",
                                            dtype_name(x.dtype())),
                         {
                           const T* src = x.data<T>();
                           for (size_t i = 0; i < cur.size(); ++i) cur[i] = static_cast<double>(to_compute(src[i]));
                         });
  Shape cur_shape = in_shape;
  std::vector<double> next;
  for (size_t d = rank; d-- > 0;) {
    const AxisPlan& a = plans[d];
    if (a.identity) continue;
    int64_t outer = 1, inner = 1;
    for (size_t k = 0; k < d; ++k) outer *= cur_shape[k];
    for (size_t k = d + 1; k < rank; ++k) inner *= cur_shape[k];
    next.assign(static_cast<size_t>(outer * a.out * inner), 0.0);
    for (int64_t o = 0; o < outer; ++o) {
      const double* s = cur.data() + o * a.in * inner;
      double* t = next.data() + o * a.out * inner;
      for (int64_t xo = 0; xo < a.out; ++xo) {
        double* trow = t + xo * inner;
        if (!a.extrap.empty() && a.extrap[xo]) continue;  // overwritten below
        for (int64_t k = 0; k < a.taps; ++k) {
          const double wk = a.w[static_cast<size_t>(xo) * a.taps + k];
          const double* srow = s + a.idx[static_cast<size_t>(xo) * a.taps + k] * inner;
          for (int64_t i = 0; i < inner; ++i) trow[i] += wk * srow[i];
        }
      }
    }
    cur.swap(next);
    cur_shape[d] = a.out;
  }
  bool any_extrap = false;
  for (const auto& a : plans) any_extrap = any_extrap || !a.extrap.empty();
  if (any_extrap) {
    std::vector<int64_t> oi(rank, 0);
    for (int64_t o = 0; o < total; ++o) {
      if (extrapolated(oi)) cur[o] = p.extrapolation;
      for (size_t d = rank; d-- > 0;) {
        if (++oi[d] < out_shape[d]) break;
        oi[d] = 0;
      }
    }
  }
  XONNX_DISPATCH_NUMERIC(y->dtype(), return unsupported("Resize: element type ", dtype_name(y->dtype())), {
    T* dst = y->data<T>();
    for (int64_t i = 0; i < total; ++i) dst[i] = from_double<T>(cur[i]);
  });
  return Status::ok();
}

Result<std::vector<double>> read_floats(const Tensor& t, const char* what) {
  if (!dtype_is_float(t.dtype())) {
    return invalid_argument(what, " must be a float tensor, got ", dtype_name(t.dtype()));
  }
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = t.get_as_double(static_cast<int64_t>(i));
  return v;
}

Status run_resize(KernelContext& ctx, const ResizeParams& p) {
  const Tensor& x = ctx.input(0);
  if (!x.defined()) return invalid_argument("input X is missing");
  const size_t rank = x.rank();
  const Shape& in_shape = x.shape();

  // Which axes scales/sizes/roi refer to.
  std::vector<int64_t> axes;
  if (p.has_axes) {
    std::vector<bool> seen(rank, false);
    for (int64_t ax : p.axes) {
      XONNX_ASSIGN_OR_RETURN(int64_t a, normalize_axis(ax, static_cast<int64_t>(rank), "axes"));
      if (seen[a]) return invalid_argument("axes contains axis ", a, " twice");
      seen[a] = true;
      axes.push_back(a);
    }
  } else {
    for (size_t d = 0; d < rank; ++d) axes.push_back(static_cast<int64_t>(d));
  }
  const size_t na = axes.size();

  std::vector<double> scale_in;  // per entry of axes
  std::vector<int64_t> sizes_in;
  std::vector<double> roi_in;
  if (p.variant == Variant::kUpsample7) {
    scale_in.assign(p.attr_scales.begin(), p.attr_scales.end());
  } else if (p.variant == Variant::kUpsample9 || p.variant == Variant::kResize10) {
    if (!ctx.has_input(1)) return invalid_argument("input 'scales' is required");
    XONNX_ASSIGN_OR_RETURN(scale_in, read_floats(ctx.input(1), "input 'scales'"));
  } else {
    if (ctx.has_input(2) && ctx.input(2).numel() > 0) {
      XONNX_ASSIGN_OR_RETURN(scale_in, read_floats(ctx.input(2), "input 'scales'"));
    }
    if (ctx.has_input(3) && ctx.input(3).numel() > 0) {
      const Tensor& s = ctx.input(3);
      if (s.dtype() != DataType::kInt64) {
        return invalid_argument("input 'sizes' must be int64, got ", dtype_name(s.dtype()));
      }
      XONNX_ASSIGN_OR_RETURN(sizes_in, s.to_int64_vector());
    }
    if (!scale_in.empty() && !sizes_in.empty()) {
      return invalid_argument("only one of 'scales' and 'sizes' may be given (got both non-empty)");
    }
    if (scale_in.empty() && sizes_in.empty()) {
      return invalid_argument("one of 'scales' and 'sizes' must be given and non-empty");
    }
    if (p.coord == Coord::kTfCropAndResize) {
      if (!ctx.has_input(1) || ctx.input(1).numel() == 0) {
        return invalid_argument("input 'roi' is required when coordinate_transformation_mode is tf_crop_and_resize");
      }
      XONNX_ASSIGN_OR_RETURN(roi_in, read_floats(ctx.input(1), "input 'roi'"));
      if (roi_in.size() != 2 * na) {
        return invalid_argument("input 'roi' must have ", 2 * na, " elements (2 * ", p.has_axes ? "len(axes)" : "rank",
                                "), got ", roi_in.size());
      }
    }
  }
  const char* count_what = p.has_axes ? "len(axes)" : "the rank of X";
  if (sizes_in.empty() && scale_in.size() != na) {  // no sizes: the scales, of every axis
    return invalid_argument("'scales' must have ", na, " elements (", count_what, "), got ", scale_in.size());
  }
  if (!sizes_in.empty() && sizes_in.size() != na) {
    return invalid_argument("input 'sizes' must have ", na, " elements (", count_what, "), got ", sizes_in.size());
  }

  std::vector<double> scales(rank, 1.0);
  Shape out_shape = in_shape;
  std::vector<double> roi;
  if (!roi_in.empty()) {
    roi.assign(2 * rank, 0.0);
    for (size_t d = 0; d < rank; ++d) roi[rank + d] = 1.0;
    for (size_t i = 0; i < na; ++i) {
      roi[axes[i]] = roi_in[i];
      roi[rank + axes[i]] = roi_in[na + i];
    }
  }
  if (!scale_in.empty()) {
    for (size_t i = 0; i < na; ++i) {
      const double s = scale_in[i];
      if (!(s > 0.0) || !std::isfinite(s)) {
        return invalid_argument("scales[", i, "] = ", s, " must be a positive finite number");
      }
      if ((p.variant == Variant::kUpsample7 || p.variant == Variant::kUpsample9) && s < 1.0) {
        return invalid_argument("Upsample scales must be >= 1, got scales[", i, "] = ", s);
      }
      const int64_t a = axes[i];
      scales[a] = s;
      double len = static_cast<double>(in_shape[a]) * s;
      if (!roi.empty()) len *= (roi[rank + a] - roi[a]);
      if (!(len < 9.0e15)) return invalid_argument("output dimension ", a, " is too large");
      out_shape[a] = static_cast<int64_t>(std::floor(std::max(len, 0.0)));
    }
  } else {
    for (size_t i = 0; i < na; ++i) {
      if (sizes_in[i] < 0) return invalid_argument("sizes[", i, "] = ", sizes_in[i], " is negative");
      if (sizes_in[i] > 0 && in_shape[axes[i]] == 0) {
        return invalid_argument("cannot resize empty dimension ", axes[i], " to ", sizes_in[i]);
      }
    }
    if (p.policy == Policy::kStretch) {
      for (size_t i = 0; i < na; ++i) {
        const int64_t a = axes[i];
        out_shape[a] = sizes_in[i];
        scales[a] = in_shape[a] == 0 ? 1.0 : static_cast<double>(sizes_in[i]) / static_cast<double>(in_shape[a]);
      }
    } else {
      double s = p.policy == Policy::kNotLarger ? std::numeric_limits<double>::infinity() : 0.0;
      for (size_t i = 0; i < na; ++i) {
        const int64_t a = axes[i];
        if (in_shape[a] == 0) continue;
        const double r = static_cast<double>(sizes_in[i]) / static_cast<double>(in_shape[a]);
        s = p.policy == Policy::kNotLarger ? std::min(s, r) : std::max(s, r);
      }
      if (!std::isfinite(s)) s = 1.0;
      for (size_t i = 0; i < na; ++i) {
        const int64_t a = axes[i];
        scales[a] = s;
        const double len = s * static_cast<double>(in_shape[a]) + 0.5;
        if (!(len < 9.0e15)) return invalid_argument("output dimension ", a, " is too large");
        out_shape[a] = static_cast<int64_t>(len);
      }
    }
    for (size_t d = 0; d < rank; ++d) {
      if (out_shape[d] > 0 && !(scales[d] > 0.0)) {
        return invalid_argument("cannot resize dimension ", d, " of size ", in_shape[d], " to ", out_shape[d]);
      }
    }
  }
  return run_resize_core(ctx, p, x, out_shape, scales, roi);
}

Result<std::unique_ptr<Kernel>> create_resize_common(const KernelInit& init, Variant variant) {
  ResizeParams p;
  p.variant = variant;
  p.version = init.since_version();
  XONNX_ASSIGN_OR_RETURN(std::string mode, init.get_string("mode", "nearest"));
  if (mode == "nearest") {
    p.mode = Mode::kNearest;
  } else if (mode == "linear" || (variant == Variant::kUpsample7 && mode == "bilinear")) {
    p.mode = Mode::kLinear;
  } else if (mode == "cubic" && variant == Variant::kResize11) {
    p.mode = Mode::kCubic;
  } else {
    return invalid_argument("unsupported mode '", mode, "'");
  }
  if (variant != Variant::kResize11) {
    // Resize-10 and Upsample: asymmetric coordinates, legacy nearest rounding.
    p.coord = Coord::kAsymmetric;
    p.nearest = Nearest::kSimple;
    if (variant == Variant::kUpsample7) {
      XONNX_ASSIGN_OR_RETURN(p.attr_scales, init.get_floats("scales"));
      if (!init.has_attr("scales")) return invalid_argument("attribute 'scales' is required");
    }
    return make_kernel([p](KernelContext& ctx) -> Status { return run_resize(ctx, p); });
  }
  XONNX_ASSIGN_OR_RETURN(std::string coord, init.get_string("coordinate_transformation_mode", "half_pixel"));
  if (coord == "half_pixel")
    p.coord = Coord::kHalfPixel;
  else if (coord == "half_pixel_symmetric" && p.version >= 19)
    p.coord = Coord::kHalfPixelSymmetric;
  else if (coord == "pytorch_half_pixel")
    p.coord = Coord::kPytorchHalfPixel;
  else if (coord == "align_corners")
    p.coord = Coord::kAlignCorners;
  else if (coord == "asymmetric")
    p.coord = Coord::kAsymmetric;
  else if (coord == "tf_crop_and_resize")
    p.coord = Coord::kTfCropAndResize;
  else if (coord == "tf_half_pixel_for_nn" && p.version == 11)
    p.coord = Coord::kTfHalfPixelForNN;
  else
    return invalid_argument("unsupported coordinate_transformation_mode '", coord, "'");
  XONNX_ASSIGN_OR_RETURN(std::string nm, init.get_string("nearest_mode", "round_prefer_floor"));
  if (nm == "round_prefer_floor")
    p.nearest = Nearest::kRoundPreferFloor;
  else if (nm == "round_prefer_ceil")
    p.nearest = Nearest::kRoundPreferCeil;
  else if (nm == "floor")
    p.nearest = Nearest::kFloor;
  else if (nm == "ceil")
    p.nearest = Nearest::kCeil;
  else
    return invalid_argument("unsupported nearest_mode '", nm, "'");
  XONNX_ASSIGN_OR_RETURN(float a, init.get_float("cubic_coeff_a", -0.75f));
  p.cubic_a = a;
  XONNX_ASSIGN_OR_RETURN(int64_t eo, init.get_int("exclude_outside", 0));
  p.exclude_outside = eo != 0;
  XONNX_ASSIGN_OR_RETURN(float ev, init.get_float("extrapolation_value", 0.0f));
  p.extrapolation = ev;
  if (p.version >= 18) {
    XONNX_ASSIGN_OR_RETURN(int64_t aa, init.get_int("antialias", 0));
    p.antialias = aa != 0;
    p.has_axes = init.has_attr("axes");
    XONNX_ASSIGN_OR_RETURN(p.axes, init.get_ints("axes"));
    XONNX_ASSIGN_OR_RETURN(std::string pol, init.get_string("keep_aspect_ratio_policy", "stretch"));
    if (pol == "stretch")
      p.policy = Policy::kStretch;
    else if (pol == "not_larger")
      p.policy = Policy::kNotLarger;
    else if (pol == "not_smaller")
      p.policy = Policy::kNotSmaller;
    else
      return invalid_argument("unsupported keep_aspect_ratio_policy '", pol, "'");
  }
  return make_kernel([p](KernelContext& ctx) -> Status { return run_resize(ctx, p); });
}

Result<std::unique_ptr<Kernel>> create_resize(const KernelInit& init) {
  return create_resize_common(init, init.since_version() == 10 ? Variant::kResize10 : Variant::kResize11);
}

Result<std::unique_ptr<Kernel>> create_upsample(const KernelInit& init) {
  return create_resize_common(init, init.since_version() >= 9 ? Variant::kUpsample9 : Variant::kUpsample7);
}

}  // namespace

void register_resize_ops(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "Resize", 10, kLatestVersion, create_resize);
  XONNX_REGISTER(registry, "", "Upsample", 7, 10, create_upsample);
  register_resize_grid_ops(registry);
  register_resize_roi_ops(registry);
}

}  // namespace xonnx
