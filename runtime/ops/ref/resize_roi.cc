// Reference kernels: RoiAlign (10, 16, 22) and Col2Im (18). Part of the resize family
// (registered from register_resize_ops). Semantics follow the ONNX reference evaluator
// (op_roi_align.py, op_col2im.py).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "runtime/core/thread_pool.h"
#include "runtime/ops/ref/common.h"
#include "runtime/ops/ref/resize_internal.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace {

struct RoiAlignParams {
  bool max_mode = false;
  bool half_pixel = false;
  int64_t out_h = 1;
  int64_t out_w = 1;
  int64_t sampling_ratio = 0;
  double spatial_scale = 1.0;
};

struct PreCalc {
  int64_t pos[4];
  double w[4];
};

Status run_roi_align(KernelContext& ctx, const RoiAlignParams& p, const ThreadPool& pool) {
  const Tensor& x = ctx.input(0);
  const Tensor& rois = ctx.input(1);
  const Tensor& bidx = ctx.input(2);
  if (x.rank() != 4) return invalid_argument("input X must be 4-D (N, C, H, W), got ", shape_to_string(x.shape()));
  if (!dtype_is_float(x.dtype())) return invalid_argument("input X must be float, got ", dtype_name(x.dtype()));
  if (rois.rank() != 2 || rois.dim(1) != 4) {
    return invalid_argument("input rois must have shape (num_rois, 4), got ", shape_to_string(rois.shape()));
  }
  if (!dtype_is_float(rois.dtype()))
    return invalid_argument("input rois must be float, got ", dtype_name(rois.dtype()));
  if (bidx.rank() != 1 || bidx.dim(0) != rois.dim(0)) {
    return invalid_argument("input batch_indices must have shape (", rois.dim(0), "), got ",
                            shape_to_string(bidx.shape()));
  }
  if (!dtype_is_integer(bidx.dtype())) {
    return invalid_argument("input batch_indices must be int64, got ", dtype_name(bidx.dtype()));
  }
  const int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
  const int64_t R = rois.dim(0);
  XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), {R, C, p.out_h, p.out_w}));
  if (y->numel() == 0) return Status::ok();
  std::vector<double> out(static_cast<size_t>(y->numel()), 0.0);
  std::vector<double> xin(static_cast<size_t>(x.numel()));
  for (size_t i = 0; i < xin.size(); ++i) xin[i] = x.get_as_double(static_cast<int64_t>(i));
  const double offset = p.half_pixel ? 0.5 : 0.0;
  // Each RoI's batch image, corner, bin size and sampling grid, validated before the RoIs are
  // split over the threads (they write disjoint outputs, so the values do not depend on it).
  struct Roi {
    int64_t b, gh, gw;
    double x1, y1, bin_h, bin_w;
  };
  std::vector<Roi> roi_of(static_cast<size_t>(R));
  for (int64_t n = 0; n < R; ++n) {
    const int64_t b = bidx.get_as_int64(n);
    if (b < 0 || b >= N) return invalid_argument("batch_indices[", n, "] = ", b, " is out of range [0, ", N, ")");
    const double x1 = rois.get_as_double(n * 4 + 0) * p.spatial_scale - offset;
    const double y1 = rois.get_as_double(n * 4 + 1) * p.spatial_scale - offset;
    const double x2 = rois.get_as_double(n * 4 + 2) * p.spatial_scale - offset;
    const double y2 = rois.get_as_double(n * 4 + 3) * p.spatial_scale - offset;
    double roi_w = x2 - x1, roi_h = y2 - y1;
    if (!p.half_pixel) {
      roi_w = std::max(roi_w, 1.0);
      roi_h = std::max(roi_h, 1.0);
    }
    auto grid_count = [&](double v) -> int64_t {
      if (p.sampling_ratio > 0) return p.sampling_ratio;
      const double c = std::ceil(v);
      if (!(c > 0.0)) return 0;
      return static_cast<int64_t>(std::min(c, 1.0e6));
    };
    const int64_t gh = grid_count(roi_h / static_cast<double>(p.out_h));
    const int64_t gw = grid_count(roi_w / static_cast<double>(p.out_w));
    if (gh * gw > (int64_t{1} << 24) / (p.out_h * p.out_w) + 1) {
      return invalid_argument("RoiAlign: too many sampling points per bin (", gh, " x ", gw, ") for roi ", n);
    }
    roi_of[static_cast<size_t>(n)] = {
        b, gh, gw, x1, y1, roi_h / static_cast<double>(p.out_h), roi_w / static_cast<double>(p.out_w)};
  }
  const size_t per_roi = static_cast<size_t>(C * p.out_h * p.out_w * 16);  // ~operations of one RoI at 2 x 2 samples
  pool.parallel_for(
      static_cast<size_t>(R), std::max<size_t>(1, 262144 / std::max<size_t>(per_roi, 1)), [&](size_t r0, size_t r1) {
        std::vector<PreCalc> pre;
        for (int64_t n = static_cast<int64_t>(r0); n < static_cast<int64_t>(r1); ++n) {
          const Roi& roi = roi_of[static_cast<size_t>(n)];
          const int64_t b = roi.b, gh = roi.gh, gw = roi.gw;
          const double x1 = roi.x1, y1 = roi.y1, bin_h = roi.bin_h, bin_w = roi.bin_w;
          const double count = static_cast<double>(std::max<int64_t>(gh * gw, 1));
          pre.assign(static_cast<size_t>(p.out_h * p.out_w * gh * gw), PreCalc{{0, 0, 0, 0}, {0, 0, 0, 0}});
          size_t k = 0;
          for (int64_t ph = 0; ph < p.out_h; ++ph) {
            for (int64_t pw = 0; pw < p.out_w; ++pw) {
              for (int64_t iy = 0; iy < gh; ++iy) {
                const double yy = y1 + static_cast<double>(ph) * bin_h +
                                  (static_cast<double>(iy) + 0.5) * bin_h / static_cast<double>(gh);
                for (int64_t ix = 0; ix < gw; ++ix, ++k) {
                  double xx = x1 + static_cast<double>(pw) * bin_w +
                              (static_cast<double>(ix) + 0.5) * bin_w / static_cast<double>(gw);
                  double yv = yy;
                  if (!(yv >= -1.0 && yv <= static_cast<double>(H) && xx >= -1.0 && xx <= static_cast<double>(W))) {
                    continue;  // outside the feature map: zero weights
                  }
                  yv = std::max(yv, 0.0);
                  xx = std::max(xx, 0.0);
                  int64_t y_low = static_cast<int64_t>(yv), x_low = static_cast<int64_t>(xx), y_high, x_high;
                  if (y_low >= H - 1) {
                    y_high = y_low = H - 1;
                    yv = static_cast<double>(y_low);
                  } else {
                    y_high = y_low + 1;
                  }
                  if (x_low >= W - 1) {
                    x_high = x_low = W - 1;
                    xx = static_cast<double>(x_low);
                  } else {
                    x_high = x_low + 1;
                  }
                  const double ly = yv - static_cast<double>(y_low), lx = xx - static_cast<double>(x_low);
                  const double hy = 1.0 - ly, hx = 1.0 - lx;
                  PreCalc& pc = pre[k];
                  pc.pos[0] = y_low * W + x_low;
                  pc.pos[1] = y_low * W + x_high;
                  pc.pos[2] = y_high * W + x_low;
                  pc.pos[3] = y_high * W + x_high;
                  pc.w[0] = hy * hx;
                  pc.w[1] = hy * lx;
                  pc.w[2] = ly * hx;
                  pc.w[3] = ly * lx;
                }
              }
            }
          }
          for (int64_t c = 0; c < C; ++c) {
            const double* plane = xin.data() + (b * C + c) * H * W;
            size_t pi = 0;
            for (int64_t ph = 0; ph < p.out_h; ++ph) {
              for (int64_t pw = 0; pw < p.out_w; ++pw) {
                double v = 0.0;
                bool first = true;
                for (int64_t s = 0; s < gh * gw; ++s, ++pi) {
                  const PreCalc& pc = pre[pi];
                  if (!p.max_mode) {
                    v += pc.w[0] * plane[pc.pos[0]] + pc.w[1] * plane[pc.pos[1]] + pc.w[2] * plane[pc.pos[2]] +
                         pc.w[3] * plane[pc.pos[3]];
                  } else {
                    const double m = std::max(std::max(pc.w[0] * plane[pc.pos[0]], pc.w[1] * plane[pc.pos[1]]),
                                              std::max(pc.w[2] * plane[pc.pos[2]], pc.w[3] * plane[pc.pos[3]]));
                    v = first ? m : std::max(v, m);
                    first = false;
                  }
                }
                if (!p.max_mode) v /= count;
                out[static_cast<size_t>(((n * C + c) * p.out_h + ph) * p.out_w + pw)] = v;
              }
            }
          }
        }
      });
  XONNX_DISPATCH_FLOAT(y->dtype(), return unsupported("RoiAlign: element type ", dtype_name(y->dtype())), {
    T* dst = y->data<T>();
    for (size_t i = 0; i < out.size(); ++i) dst[i] = from_compute<T>(static_cast<compute_t<T>>(out[i]));
  });
  return Status::ok();
}

Result<std::unique_ptr<Kernel>> create_roi_align(const KernelInit& init) {
  RoiAlignParams p;
  XONNX_ASSIGN_OR_RETURN(std::string mode, init.get_string("mode", "avg"));
  if (mode == "avg")
    p.max_mode = false;
  else if (mode == "max")
    p.max_mode = true;
  else
    return invalid_argument("unsupported mode '", mode, "' (expected avg or max)");
  if (init.since_version() >= 16) {
    XONNX_ASSIGN_OR_RETURN(std::string ctm, init.get_string("coordinate_transformation_mode", "half_pixel"));
    if (ctm == "half_pixel")
      p.half_pixel = true;
    else if (ctm == "output_half_pixel")
      p.half_pixel = false;
    else
      return invalid_argument("unsupported coordinate_transformation_mode '", ctm, "'");
  }
  XONNX_ASSIGN_OR_RETURN(p.out_h, init.get_int("output_height", 1));
  XONNX_ASSIGN_OR_RETURN(p.out_w, init.get_int("output_width", 1));
  XONNX_ASSIGN_OR_RETURN(p.sampling_ratio, init.get_int("sampling_ratio", 0));
  XONNX_ASSIGN_OR_RETURN(float ss, init.get_float("spatial_scale", 1.0f));
  p.spatial_scale = ss;
  if (p.out_h <= 0 || p.out_w <= 0) {
    return invalid_argument("output_height and output_width must be positive, got ", p.out_h, " and ", p.out_w);
  }
  if (p.sampling_ratio < 0 || p.sampling_ratio > 4096) {
    return invalid_argument("sampling_ratio must be in [0, 4096], got ", p.sampling_ratio);
  }
  if (p.out_h > (int64_t{1} << 20) || p.out_w > (int64_t{1} << 20)) {
    return invalid_argument("output_height / output_width are too large");
  }
  const ThreadPool* pool = &init.thread_pool();  // the session's: it outlives the kernel
  return make_kernel([p, pool](KernelContext& ctx) -> Status { return run_roi_align(ctx, p, *pool); });
}

Result<std::unique_ptr<Kernel>> create_col2im(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> dil_a, init.get_ints("dilations"));
  XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> pads_a, init.get_ints("pads"));
  XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> strides_a, init.get_ints("strides"));
  return make_kernel([=](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> image, ctx.input(1).to_int64_vector());
    XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> block, ctx.input(2).to_int64_vector());
    const size_t nd = image.size();
    if (nd == 0) return invalid_argument("input image_shape must not be empty");
    if (block.size() != nd) {
      return invalid_argument("input block_shape has ", block.size(), " elements but image_shape has ", nd);
    }
    std::vector<int64_t> dil = dil_a.empty() ? std::vector<int64_t>(nd, 1) : dil_a;
    std::vector<int64_t> strides = strides_a.empty() ? std::vector<int64_t>(nd, 1) : strides_a;
    std::vector<int64_t> pads = pads_a.empty() ? std::vector<int64_t>(2 * nd, 0) : pads_a;
    if (dil.size() != nd) return invalid_argument("attribute dilations must have ", nd, " values, got ", dil.size());
    if (strides.size() != nd)
      return invalid_argument("attribute strides must have ", nd, " values, got ", strides.size());
    if (pads.size() != 2 * nd)
      return invalid_argument("attribute pads must have ", 2 * nd, " values, got ", pads.size());
    if (x.rank() != 3)
      return invalid_argument("input must be 3-D (N, C * prod(block_shape), L), got ", shape_to_string(x.shape()));
    int64_t kernel = 1, blocks = 1;
    std::vector<int64_t> ncol(nd);
    for (size_t i = 0; i < nd; ++i) {
      if (image[i] <= 0) return invalid_argument("image_shape[", i, "] = ", image[i], " must be positive");
      if (block[i] <= 0) return invalid_argument("block_shape[", i, "] = ", block[i], " must be positive");
      if (dil[i] <= 0 || strides[i] <= 0) return invalid_argument("dilations and strides must be positive");
      if (pads[i] < 0 || pads[nd + i] < 0) return invalid_argument("pads must be non-negative");
      kernel *= block[i];
      ncol[i] = (image[i] + pads[i] + pads[nd + i] - (dil[i] * (block[i] - 1) + 1)) / strides[i] + 1;
      if (ncol[i] <= 0) return invalid_argument("block_shape does not fit the padded image along dimension ", i);
      blocks *= ncol[i];
    }
    if (x.dim(1) % kernel != 0) {
      return invalid_argument("input dimension 1 (", x.dim(1), ") is not a multiple of prod(block_shape) = ", kernel);
    }
    if (x.dim(2) != blocks) {
      return invalid_argument("input dimension 2 (", x.dim(2), ") must equal the number of sliding blocks ", blocks);
    }
    const int64_t N = x.dim(0), C = x.dim(1) / kernel;
    Shape out_shape{N, C};
    int64_t img = 1;
    for (int64_t v : image) {
      out_shape.push_back(v);
      img *= v;
    }
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), out_shape));
    if (y->numel() == 0) return Status::ok();
    std::vector<int64_t> koff(nd), coff(nd);
    XONNX_DISPATCH_NUMERIC(x.dtype(), return unsupported("Col2Im: element type ", dtype_name(x.dtype())), {
      const T* src = x.data<T>();
      std::vector<compute_t<T>> acc(static_cast<size_t>(y->numel()), compute_t<T>(0));
      for (int64_t nc = 0; nc < N * C; ++nc) {
        compute_t<T>* dst = acc.data() + nc * img;
        for (int64_t k = 0; k < kernel; ++k) {
          int64_t rem = k;
          for (size_t i = nd; i-- > 0;) {
            koff[i] = rem % block[i];
            rem /= block[i];
          }
          const T* col = src + (nc * kernel + k) * blocks;
          for (int64_t b = 0; b < blocks; ++b) {
            int64_t r2 = b, off = 0;
            bool inside = true;
            for (size_t i = nd; i-- > 0;) {
              coff[i] = r2 % ncol[i];
              r2 /= ncol[i];
            }
            for (size_t i = 0; i < nd; ++i) {
              const int64_t pos = coff[i] * strides[i] - pads[i] + koff[i] * dil[i];
              if (pos < 0 || pos >= image[i]) {
                inside = false;
                break;
              }
              off = off * image[i] + pos;
            }
            if (inside) dst[off] += to_compute(col[b]);
          }
        }
      }
      T* out = y->data<T>();
      for (size_t i = 0; i < acc.size(); ++i) out[i] = from_compute<T>(acc[i]);
    });
    return Status::ok();
  });
}

}  // namespace

void register_resize_roi_ops(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "RoiAlign", 10, kLatestVersion, create_roi_align);
  XONNX_REGISTER(registry, "", "Col2Im", 18, kLatestVersion, create_col2im);
}

}  // namespace xonnx
