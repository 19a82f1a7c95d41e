// Reference kernels: GridSample (16, 20, 22) and AffineGrid (20). Part of the resize family
// (registered from register_resize_ops). Semantics follow the ONNX reference evaluator
// (op_grid_sample.py / op_affine_grid.py), which mirrors PyTorch's grid_sampler.
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

enum class GsMode { kLinear, kNearest, kCubic };
enum class GsPad { kZeros, kBorder, kReflection };

// Reflects x by the nearest border until it lies within [lo, hi].
double gs_reflect(double x, double lo, double hi) {
  const double rng = hi - lo;
  if (!(rng > 0.0)) return lo;
  if (x < lo) {
    const double dx = lo - x;
    const double n = std::trunc(dx / rng);
    const double r = dx - n * rng;
    return std::fmod(n, 2.0) == 0.0 ? lo + r : hi - r;
  }
  if (x > hi) {
    const double dx = x - hi;
    const double n = std::trunc(dx / rng);
    const double r = dx - n * rng;
    return std::fmod(n, 2.0) == 0.0 ? hi - r : lo + r;
  }
  return x;
}

// Index of tap i along a dimension of length len after padding; -1 means "zero".
int64_t gs_pixel_index(int64_t i, int64_t len, GsPad pad, double lo, double hi) {
  switch (pad) {
    case GsPad::kZeros: return (i >= 0 && i < len) ? i : -1;
    case GsPad::kBorder: return std::min<int64_t>(std::max<int64_t>(i, 0), len - 1);
    case GsPad::kReflection: {
      int64_t r = static_cast<int64_t>(gs_reflect(static_cast<double>(i), lo, hi));
      return std::min<int64_t>(std::max<int64_t>(r, 0), len - 1);
    }
  }
  return -1;
}

void gs_cubic_coeffs(double x, double* c) {
  const double a = -0.75;
  x = std::fabs(x);
  c[0] = ((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a;
  c[1] = ((a + 2) * x - (a + 3)) * x * x + 1;
  c[2] = ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1;
  c[3] = ((a * (2 - x) - 5 * a) * (2 - x) + 8 * a) * (2 - x) - 4 * a;
}

// Converts a computed value to the output type (integers: round to nearest, saturate).
template <typename T>
T gs_store(double v) {
  if constexpr (std::is_integral_v<T>) {
    v = std::nearbyint(v);
    const double lo_v = static_cast<double>(std::numeric_limits<T>::lowest());
    const double hi_v = static_cast<double>(std::numeric_limits<T>::max());
    return static_cast<T>(std::isnan(v) ? 0.0 : std::min(std::max(v, lo_v), hi_v));
  } else {
    return from_compute<T>(static_cast<compute_t<T>>(v));
  }
}

Result<std::unique_ptr<Kernel>> create_grid_sample(const KernelInit& init) {
  const int version = init.since_version();
  XONNX_ASSIGN_OR_RETURN(int64_t align_i, init.get_int("align_corners", 0));
  XONNX_ASSIGN_OR_RETURN(std::string mode_s, init.get_string("mode", version >= 20 ? "linear" : "bilinear"));
  XONNX_ASSIGN_OR_RETURN(std::string pad_s, init.get_string("padding_mode", "zeros"));
  GsMode mode;
  if (mode_s == "nearest")
    mode = GsMode::kNearest;
  else if (mode_s == (version >= 20 ? "linear" : "bilinear"))
    mode = GsMode::kLinear;
  else if (mode_s == (version >= 20 ? "cubic" : "bicubic"))
    mode = GsMode::kCubic;
  else
    return invalid_argument("unsupported mode '", mode_s, "' for GridSample-", version);
  GsPad pad;
  if (pad_s == "zeros")
    pad = GsPad::kZeros;
  else if (pad_s == "border")
    pad = GsPad::kBorder;
  else if (pad_s == "reflection")
    pad = GsPad::kReflection;
  else
    return invalid_argument("unsupported padding_mode '", pad_s, "'");
  const bool align = align_i != 0;
  return make_kernel([=](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    const Tensor& grid = ctx.input(1);
    if (x.rank() < 3) return invalid_argument("input X must have rank >= 3, got ", shape_to_string(x.shape()));
    if (version < 20 && x.rank() != 4) {
      return invalid_argument("GridSample-", version, " supports only 4-D input X, got ", shape_to_string(x.shape()));
    }
    const size_t r = x.rank() - 2;
    if (grid.rank() != r + 2 || grid.dim(0) != x.dim(0) || grid.dim(r + 1) != static_cast<int64_t>(r)) {
      return invalid_argument("input grid must have shape (N, D1_out, ..., D", r, "_out, ", r, ") with N = ", x.dim(0),
                              ", got ", shape_to_string(grid.shape()));
    }
    if (!dtype_is_float(grid.dtype()))
      return invalid_argument("input grid must be float, got ", dtype_name(grid.dtype()));
    const int64_t N = x.dim(0), C = x.dim(1);
    Shape out_shape{N, C};
    int64_t out_spatial = 1, in_spatial = 1;
    std::vector<int64_t> dims(r);
    for (size_t i = 0; i < r; ++i) {
      out_shape.push_back(grid.dim(i + 1));
      out_spatial *= grid.dim(i + 1);
      dims[i] = x.dim(i + 2);
      in_spatial *= dims[i];
    }
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), out_shape));
    if (y->numel() == 0) return Status::ok();
    if (in_spatial == 0) return invalid_argument("input X has an empty spatial dimension");
    std::vector<double> lo(r), hi(r);
    for (size_t i = 0; i < r; ++i) {
      lo[i] = align ? 0.0 : -0.5;
      hi[i] = align ? static_cast<double>(dims[i]) - 1.0 : static_cast<double>(dims[i]) - 0.5;
    }
    std::vector<int64_t> in_strides(r);
    {
      int64_t s = 1;
      for (size_t i = r; i-- > 0;) {
        in_strides[i] = s;
        s *= dims[i];
      }
    }
    std::vector<double> xin(static_cast<size_t>(x.numel()));
    XONNX_DISPATCH_NUMERIC(x.dtype(), return unsupported("GridSample: element type ", dtype_name(x.dtype())), {
      const T* src = x.data<T>();
      for (size_t i = 0; i < xin.size(); ++i) xin[i] = static_cast<double>(to_compute(src[i]));
    });
    std::vector<double> yout(static_cast<size_t>(y->numel()), 0.0);
    const int ntaps = mode == GsMode::kNearest ? 1 : (mode == GsMode::kLinear ? 2 : 4);
    // Per dimension: tap offsets into the plane (-1: zero) and weights.
    std::vector<int64_t> tap_idx(r * 4);
    std::vector<double> tap_w(r * 4);
    std::vector<float> coord(r);
    int64_t combos = 1;
    for (size_t i = 0; i < r; ++i) combos *= ntaps;
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t o = 0; o < out_spatial; ++o) {
        const int64_t g = (n * out_spatial + o) * static_cast<int64_t>(r);
        for (size_t i = 0; i < r; ++i) {
          // grid's last dimension is in reverse spatial order (x, y, z ...)
          const double nv = grid.get_as_double(g + static_cast<int64_t>(r - 1 - i));
          const double len = static_cast<double>(dims[i]);
          double v = align ? (nv + 1.0) / 2.0 * (len - 1.0) : ((nv + 1.0) * len - 1.0) / 2.0;
          float fv = static_cast<float>(v);
          if (mode == GsMode::kNearest) {
            fv = std::nearbyint(fv);  // round half to even (the suite's expected data)
          }
          if (fv < lo[i] || fv > hi[i]) {
            if (pad == GsPad::kBorder) {
              fv = static_cast<float>(std::min(std::max(static_cast<double>(fv), 0.0), len - 1.0));
            } else if (pad == GsPad::kReflection) {
              fv = static_cast<float>(gs_reflect(fv, lo[i], hi[i]));
            }
          }
          coord[i] = fv;
        }
        for (size_t i = 0; i < r; ++i) {
          const double v = coord[i];
          int64_t* ti = &tap_idx[i * 4];
          double* tw = &tap_w[i * 4];
          if (mode == GsMode::kNearest) {
            const double t = std::isfinite(v) ? std::trunc(v) : -1.0;
            const int64_t iv = static_cast<int64_t>(std::min(std::max(t, -2.0), static_cast<double>(dims[i]) + 1));
            ti[0] = gs_pixel_index(iv, dims[i], pad, lo[i], hi[i]);
            tw[0] = 1.0;
            continue;
          }
          const double f = std::isfinite(v) ? std::floor(v) : -10.0;
          const double fc = std::min(std::max(f, -10.0), static_cast<double>(dims[i]) + 10.0);
          const int64_t x0 = static_cast<int64_t>(fc);
          const double frac = std::isfinite(v) ? static_cast<float>(v - f) : 0.0;
          if (mode == GsMode::kLinear) {
            tw[0] = 1.0 - frac;
            tw[1] = frac;
            ti[0] = gs_pixel_index(x0, dims[i], pad, lo[i], hi[i]);
            ti[1] = gs_pixel_index(x0 + 1, dims[i], pad, lo[i], hi[i]);
          } else {
            gs_cubic_coeffs(frac, tw);
            for (int k = 0; k < 4; ++k) ti[k] = gs_pixel_index(x0 - 1 + k, dims[i], pad, lo[i], hi[i]);
          }
        }
        for (int64_t c = 0; c < C; ++c) {
          const double* plane = xin.data() + (n * C + c) * in_spatial;
          double acc = 0.0;
          for (int64_t cb = 0; cb < combos; ++cb) {
            int64_t rem = cb, off = 0;
            double w = 1.0;
            bool zero = false;
            for (size_t i = r; i-- > 0;) {
              const int k = static_cast<int>(rem % ntaps);
              rem /= ntaps;
              const int64_t ix = tap_idx[i * 4 + k];
              w *= tap_w[i * 4 + k];
              if (ix < 0)
                zero = true;
              else
                off += ix * in_strides[i];
            }
            if (!zero) acc += w * plane[off];
          }
          yout[static_cast<size_t>((n * C + c) * out_spatial + o)] = acc;
        }
      }
    }
    XONNX_DISPATCH_NUMERIC(y->dtype(), return unsupported("GridSample: element type ", dtype_name(y->dtype())), {
      T* dst = y->data<T>();
      for (size_t i = 0; i < yout.size(); ++i) dst[i] = gs_store<T>(yout[i]);
    });
    return Status::ok();
  });
}

Result<std::unique_ptr<Kernel>> create_affine_grid(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(int64_t align_i, init.get_int("align_corners", 0));
  const bool align = align_i != 0;
  return make_kernel([align](KernelContext& ctx) -> Status {
    const Tensor& theta = ctx.input(0);
    const Tensor& size_t_ = ctx.input(1);
    if (!dtype_is_float(theta.dtype()))
      return invalid_argument("input theta must be float, got ", dtype_name(theta.dtype()));
    if (size_t_.dtype() != DataType::kInt64)
      return invalid_argument("input size must be int64, got ", dtype_name(size_t_.dtype()));
    XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> size, size_t_.to_int64_vector());
    if (size.size() != 4 && size.size() != 5) {
      return invalid_argument("input size must have 4 (N, C, H, W) or 5 (N, C, D, H, W) elements, got ", size.size());
    }
    const size_t r = size.size() - 2;  // spatial dims
    const int64_t N = size[0];
    for (int64_t s : size) {
      if (s < 0) return invalid_argument("input size has a negative dimension: ", s);
    }
    if (theta.rank() != 3 || theta.dim(0) != N || theta.dim(1) != static_cast<int64_t>(r) ||
        theta.dim(2) != static_cast<int64_t>(r + 1)) {
      return invalid_argument("input theta must have shape (", N, ", ", r, ", ", r + 1, "), got ",
                              shape_to_string(theta.shape()));
    }
    Shape out_shape{N};
    for (size_t i = 0; i < r; ++i) out_shape.push_back(size[2 + i]);
    out_shape.push_back(static_cast<int64_t>(r));
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, theta.dtype(), out_shape));
    if (y->numel() == 0) return Status::ok();
    int64_t spatial = 1;  // fits: the output holds N * spatial * r elements
    for (size_t i = 0; i < r; ++i) spatial *= size[2 + i];
    // Base coordinates per spatial dim (index 0 = outermost = D or H).
    std::vector<std::vector<double>> base(r);
    for (size_t i = 0; i < r; ++i) {
      const int64_t L = size[2 + i];
      base[i].resize(static_cast<size_t>(L));
      for (int64_t k = 0; k < L; ++k) {
        double v;
        if (L == 1)
          v = 0.0;
        else if (align)
          v = -1.0 + static_cast<double>(k) * (2.0 / static_cast<double>(L - 1));
        else {
          const double step = 2.0 / static_cast<double>(L);
          v = -1.0 + step / 2.0 + static_cast<double>(k) * step;
        }
        base[i][k] = v;
      }
    }
    std::vector<double> out(static_cast<size_t>(y->numel()));
    std::vector<double> hom(r + 1);
    std::vector<int64_t> idx(r, 0);
    for (int64_t n = 0; n < N; ++n) {
      std::fill(idx.begin(), idx.end(), 0);
      for (int64_t s = 0; s < spatial; ++s) {
        // homogeneous coordinate (x, y[, z], 1): x is the innermost dim
        for (size_t j = 0; j < r; ++j) hom[j] = base[r - 1 - j][idx[r - 1 - j]];
        hom[r] = 1.0;
        for (size_t row = 0; row < r; ++row) {
          double acc = 0.0;
          for (size_t col = 0; col <= r; ++col) {
            acc += theta.get_as_double(static_cast<int64_t>((n * r + row) * (r + 1) + col)) * hom[col];
          }
          out[static_cast<size_t>((n * spatial + s) * static_cast<int64_t>(r) + static_cast<int64_t>(row))] = acc;
        }
        for (size_t d = r; d-- > 0;) {
          if (++idx[d] < size[2 + d]) break;
          idx[d] = 0;
        }
      }
    }
    XONNX_DISPATCH_FLOAT(y->dtype(), return unsupported("AffineGrid: element type ", dtype_name(y->dtype())), {
      T* dst = y->data<T>();
      for (size_t i = 0; i < out.size(); ++i) dst[i] = from_compute<T>(static_cast<compute_t<T>>(out[i]));
    });
    return Status::ok();
  });
}

}  // namespace

void register_resize_grid_ops(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "GridSample", 16, kLatestVersion, create_grid_sample);
  XONNX_REGISTER(registry, "", "AffineGrid", 20, kLatestVersion, create_affine_grid);
}

}  // namespace xonnx
