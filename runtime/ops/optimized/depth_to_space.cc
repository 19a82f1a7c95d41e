// Optimized DepthToSpace and SpaceToDepth (float32), in NCHW and as the layout pass's NHWC ops.
// A super-resolution net's PixelShuffle (torch exports it as DepthToSpace, CRD) ran on the
// reference kernel's element-wise strided copy and left the NHWC region around it: an
// EDSR-like x4 net spent 22 % of its time in the two DepthToSpace nodes and 16 % in the
// conversions around them. In NHWC a DCR block (and every SpaceToDepth block) is a run of C
// contiguous values; CRD gathers every b*b-th. Output rows split over the pool. Shapes the
// ONNX op rejects go to the reference kernel, which reports them.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "runtime/ops/internal_ops.h"
#include "runtime/ops/optimized/opt_util.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace opt {
namespace {

// b x b blocks of pixels <-> channels. kToSpace: DepthToSpace, else SpaceToDepth.
template <bool kToSpace>
class BlockRearrangeKernel final : public FastKernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    XONNX_RETURN_IF_ERROR(require_f32_if_constant(init, 0, init.node().op_type.c_str()));
    auto k = std::unique_ptr<BlockRearrangeKernel>(new BlockRearrangeKernel());
    XONNX_RETURN_IF_ERROR(init_own_kernel(*k, init));
    XONNX_ASSIGN_OR_RETURN(k->b_, init.get_int("blocksize", 0));
    XONNX_ASSIGN_OR_RETURN(const std::string mode, init.get_string("mode", "DCR"));
    k->crd_ = kToSpace && mode == "CRD";
    k->nhwc_ = is_nhwc_node(init);
    return std::unique_ptr<Kernel>(std::move(k));
  }

 private:
  Status run_fast(KernelContext& ctx, bool& handled) override {
    const Tensor& x = ctx.input(0);
    const int64_t b = b_;
    if (!is_f32(x) || x.rank() != 4 || b < 1 || b > 64) return Status::ok();
    // [N, C, H, W] dims whatever the layout (NHWC data: [N, H, W, C]).
    const int64_t n = x.dim(0), c = nhwc_ ? x.dim(3) : x.dim(1), h = nhwc_ ? x.dim(1) : x.dim(2),
                  w = nhwc_ ? x.dim(2) : x.dim(3);
    if (kToSpace ? c % (b * b) != 0 : h % b != 0 || w % b != 0) return Status::ok();
    const int64_t oc = kToSpace ? c / (b * b) : c * b * b, oh = kToSpace ? h * b : h / b, ow = kToSpace ? w * b : w / b;
    const Shape shape = nhwc_ ? Shape{n, oh, ow, oc} : Shape{n, oc, oh, ow};
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DataType::kFloat, shape));
    if (y->numel() == 0) {
      handled = true;
      return Status::ok();
    }
    const float* in = x.data<float>();
    float* out = y->data<float>();
    const int64_t rows = nhwc_ ? n * oh : n * oc * oh, row_floats = nhwc_ ? ow * oc : ow;
    pool_->parallel_for(static_cast<size_t>(rows), chunk_for(row_floats), [&](size_t r0, size_t r1) {
      for (size_t r = r0; r < r1; ++r) {
        if (nhwc_) {
          nhwc_row(in, out, static_cast<int64_t>(r), c, h, w, oc, oh, ow);
        } else {
          nchw_row(in, out, static_cast<int64_t>(r), c, h, w, oc, oh, ow);
        }
      }
    });
    handled = true;
    return Status::ok();
  }

  // Output row r = img * oh + oy of [N, OH, OW, OC] from [N, H, W, C].
  void nhwc_row(const float* in, float* out, int64_t r, int64_t c, int64_t h, int64_t w, int64_t oc, int64_t oh,
                int64_t ow) const {
    const int64_t b = b_, img = r / oh, oy = r % oh;
    float* dst = out + r * ow * oc;
    if (kToSpace) {  // out[oy = y b + i][ox = x b + j][k] = in[y][x][DCR: (i b + j) oc + k, CRD: k b b + i b + j]
      const int64_t i = oy % b;
      const float* src_row = in + (img * h + oy / b) * w * c;
      for (int64_t ox = 0; ox < ow; ++ox, dst += oc) {
        const int64_t j = ox % b;
        const float* src = src_row + (ox / b) * c;
        if (crd_) {
          const float* s = src + i * b + j;
          for (int64_t k = 0; k < oc; ++k) dst[k] = s[k * b * b];
        } else {
          std::memcpy(dst, src + (i * b + j) * oc, static_cast<size_t>(oc) * sizeof(float));
        }
      }
    } else {  // out[y][x][(i b + j) c + k] = in[y b + i][x b + j][k]
      for (int64_t ox = 0; ox < ow; ++ox)
        for (int64_t i = 0; i < b; ++i)
          for (int64_t j = 0; j < b; ++j, dst += c)
            std::memcpy(dst, in + ((img * h + oy * b + i) * w + ox * b + j) * c,
                        static_cast<size_t>(c) * sizeof(float));
    }
  }

  // Output row r = (img * oc + k) * oh + oy of [N, OC, OH, OW] from [N, C, H, W].
  void nchw_row(const float* in, float* out, int64_t r, int64_t c, int64_t h, int64_t w, int64_t oc, int64_t oh,
                int64_t ow) const {
    const int64_t b = b_, oy = r % oh, k = r / oh % oc, img = r / (oh * oc);
    float* dst = out + r * ow;
    if (kToSpace) {  // out[k][y b + i][x b + j] = in[DCR: (i b + j) oc + k, CRD: k b b + i b + j][y][x]
      const int64_t i = oy % b, y = oy / b;
      for (int64_t j = 0; j < b; ++j) {
        const int64_t channel = crd_ ? k * b * b + i * b + j : (i * b + j) * oc + k;
        const float* src = in + ((img * c + channel) * h + y) * w;
        for (int64_t x = 0; x < w; ++x) dst[x * b + j] = src[x];
      }
    } else {  // out[(i b + j) c + ch][y][x] = in[ch][y b + i][x b + j]
      const int64_t ch = k % c, i = k / c / b, j = k / c % b;
      const float* src = in + ((img * c + ch) * h + oy * b + i) * w + j;
      for (int64_t x = 0; x < ow; ++x) dst[x] = src[x * b];
    }
  }

  int64_t b_ = 0;
  bool crd_ = false, nhwc_ = false;
};

}  // namespace

void register_opt_depth_to_space(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "DepthToSpace", 1, kLatestVersion, BlockRearrangeKernel<true>::create,
                 Backend::kOptimized);
  XONNX_REGISTER(registry, "", "SpaceToDepth", 1, kLatestVersion, BlockRearrangeKernel<false>::create,
                 Backend::kOptimized);
  XONNX_REGISTER(registry, kNhwcDomain, "DepthToSpace", 1, kLatestVersion, BlockRearrangeKernel<true>::create,
                 Backend::kOptimized);
  XONNX_REGISTER(registry, kNhwcDomain, "SpaceToDepth", 1, kLatestVersion, BlockRearrangeKernel<false>::create,
                 Backend::kOptimized);
}

}  // namespace opt
}  // namespace xonnx
