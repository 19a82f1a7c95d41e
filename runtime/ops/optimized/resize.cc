// Optimized Resize (opset 11+) of float32 tensors over their last two axes (NCHW images), or
// over H and W of the layout pass's NHWC Resize ([N, H, W, C], each pixel's channels blended
// together; scales / sizes keep their NCHW order): nearest (every nearest_mode) and
// linear (bilinear), coordinate modes half_pixel, pytorch_half_pixel, align_corners and
// asymmetric. Torch's F.interpolate / nn.Upsample export exactly these (U-Net, LRASPP, FPN
// and YOLO heads).
//
// The reference (ops/ref/resize.cc) runs every axis as a 1-D pass in double. This kernel maps
// each output column and row to its taps once per shape (the reference's formulas, in double),
// then passes each input row over the width once (two rows kept while consecutive output rows
// read them) and blends the two rows of each output row, in the same order and precision: the
// same bits as the reference, the rows split over the threads.
// Declined at creation: cubic, antialias, exclude_outside, axes, keep_aspect_ratio_policy,
// tf_* modes; at run time (to the reference): other dtypes or ranks, scales / sizes that
// touch the leading axes.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "runtime/core/thread_pool.h"
#include "runtime/ops/internal_ops.h"
#include "runtime/ops/optimized/opt_util.h"
#include "runtime/ops/optimized/resize_plan.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace opt {
namespace {

class ResizeKernel final : public FastKernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    ResizeMode mode;
    XONNX_ASSIGN_OR_RETURN(std::string m, init.get_string("mode", "nearest"));
    if (m == "nearest")
      mode.linear = false;
    else if (m == "linear")
      mode.linear = true;
    else
      return unsupported("own Resize: mode ", m);
    XONNX_ASSIGN_OR_RETURN(std::string coord, init.get_string("coordinate_transformation_mode", "half_pixel"));
    if (!parse_resize_coord(coord, mode.coord))
      return unsupported("own Resize: coordinate_transformation_mode ", coord);
    XONNX_ASSIGN_OR_RETURN(std::string nm, init.get_string("nearest_mode", "round_prefer_floor"));
    if (!parse_resize_nearest(nm, mode.nearest)) return unsupported("own Resize: nearest_mode ", nm);
    XONNX_ASSIGN_OR_RETURN(int64_t exclude, init.get_int("exclude_outside", 0));
    XONNX_ASSIGN_OR_RETURN(int64_t antialias, init.get_int("antialias", 0));
    XONNX_ASSIGN_OR_RETURN(std::string policy, init.get_string("keep_aspect_ratio_policy", "stretch"));
    if (exclude != 0 || antialias != 0 || init.has_attr("axes") || policy != "stretch")
      return unsupported("own Resize: exclude_outside, antialias, axes or a keep_aspect_ratio_policy");
    auto k = std::unique_ptr<ResizeKernel>(new ResizeKernel());
    XONNX_RETURN_IF_ERROR(init_own_kernel(*k, init));
    k->mode_ = mode;
    k->nhwc_ = is_nhwc_node(init);
    return std::unique_ptr<Kernel>(std::move(k));
  }

 private:
  Status run_fast(KernelContext& ctx, bool& handled) override {
    const Tensor& x = ctx.input(0);
    if (!is_f32(x) || x.rank() < (nhwc_ ? 4u : 2u)) return Status::ok();
    // NCHW: planes of [H, W]; NHWC: images of [H, W, C] (scales / sizes still in NCHW order).
    const size_t rank = x.rank(), h_axis = nhwc_ ? 1 : rank - 2, w_axis = h_axis + 1;
    const int64_t in_h = x.dim(h_axis), in_w = x.dim(w_axis), c = nhwc_ ? x.dim(3) : 1;
    int64_t out_h = 0, out_w = 0;
    double scale_h = 1.0, scale_w = 1.0;
    if (!resize_output_hw(ctx, x, nhwc_, out_h, out_w, scale_h, scale_w)) return Status::ok();
    if (c <= 0) return Status::ok();
    if (in_h <= 0 || in_w <= 0 || out_h <= 0 || out_w <= 0) return Status::ok();
    // The output first: its allocation checks out_h x out_w against the cap before the plans,
    // a table per output row and column, take memory of their size.
    Shape out_shape = x.shape();
    out_shape[h_axis] = out_h;
    out_shape[w_axis] = out_w;
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DataType::kFloat, out_shape));
    if (out_h != plan_h_.out || in_h != plan_h_.in || scale_h != scale_h_) {
      plan_h_ = plan_resize_axis(mode_, in_h, out_h, scale_h);
      scale_h_ = scale_h;
    }
    if (out_w != plan_w_.out || in_w != plan_w_.in || scale_w != scale_w_) {
      plan_w_ = plan_resize_axis(mode_, in_w, out_w, scale_w);
      scale_w_ = scale_w;
    }
    const int64_t planes = x.numel() / (in_h * in_w * c);
    const float* src = x.data<float>();
    float* dst = y->data<float>();
    const ResizeAxis& ph = plan_h_;
    const ResizeAxis& pw = plan_w_;
    const size_t rows = static_cast<size_t>(planes * out_h);
    const size_t min_chunk = chunk_for(out_w * c * 8);
    scratch_.prepare(*pool_, rows, min_chunk, static_cast<size_t>(2 * out_w * c));
    pool_->parallel_for(rows, min_chunk, [&](size_t r0, size_t r1) {
      double* scratch = scratch_.of(r0);
      // The chunk's rows, one plane at a time.
      for (size_t r = r0; r < r1;) {
        const int64_t plane = static_cast<int64_t>(r) / out_h, oy = static_cast<int64_t>(r) % out_h;
        const int64_t oy1 = std::min<int64_t>(out_h, oy + static_cast<int64_t>(r1 - r));
        resize_rows(ph, pw, src + plane * in_h * in_w * c, in_w, c, oy, oy1, dst + static_cast<int64_t>(r) * out_w * c,
                    scratch);
        r += static_cast<size_t>(oy1 - oy);
      }
    });
    handled = true;
    return Status::ok();
  }

  ResizeMode mode_;
  bool nhwc_ = false;           // the layout pass's com.xonnx.nhwc Resize: X is [N, H, W, C]
  ResizeAxis plan_h_, plan_w_;  // cached for the last shape
  double scale_h_ = 0.0, scale_w_ = 0.0;
  ChunkScratch<double> scratch_;  // two width-passed input rows per chunk (bilinear)
};

}  // namespace

void register_opt_resize(OpRegistry& registry) {
  // XNNPACK 2022's bilinear resize has no nearest mode nor ONNX's scales semantics: own only.
  XONNX_REGISTER(registry, "", "Resize", 11, kLatestVersion, ResizeKernel::create, Backend::kOptimized);
  // The NHWC node carries the model's opset; below 11 Resize has no scales / sizes at inputs 2 /
  // 3, so every run goes to the twin.
  XONNX_REGISTER(registry, kNhwcDomain, "Resize", 1, kLatestVersion, ResizeKernel::create, Backend::kOptimized);
}

}  // namespace opt
}  // namespace xonnx
