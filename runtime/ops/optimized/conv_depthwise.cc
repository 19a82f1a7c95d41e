// Own float32 depthwise convolution for the layout pass's NHWC Conv (group = channels, one
// output channel per input channel) on the AVX-512 rows of fdwconv.h (the layer: fdw_layer.h),
// tried before XNNPACK: XNNPACK 2022's f32 depthwise kernels were ~3x slower than our int8 one
// on MobileNetV2's layers, and needed finiteness scans for the fused range's NaN semantics
// (ours need none). It also takes grouped Convs of 4 input and 4 output channels per group
// (ResNeXt-50 32x4d's first stage), on the same rows (fdwconv.h). Other CPUs, a channel
// multiplier above 1, other groups and non-finite weights stay with XNNPACK or the twin.
#include <array>

#include "runtime/ops/internal_ops.h"
#include "runtime/ops/optimized/fdw_layer.h"
#include "runtime/ops/optimized/opt_util.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace opt {
namespace {

class ConvDwF32NhwcKernel final : public FastKernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    if (init.has_input(kConvResidualInput)) return unsupported("own depthwise Conv: a residual input");
    auto k = std::unique_ptr<ConvDwF32NhwcKernel>(new ConvDwF32NhwcKernel());
    XONNX_ASSIGN_OR_RETURN(k->layer_, FdwLayer::create(init, 1, 2, "own depthwise Conv"));
    XONNX_RETURN_IF_ERROR(init_own_kernel(*k, init));
    return std::unique_ptr<Kernel>(std::move(k));
  }

 private:
  Status run_fast(KernelContext& ctx, bool& handled) override {
    const Tensor& x = ctx.input(0);
    const int64_t c = layer_.channels();
    if (!is_f32(x) || x.rank() != 4 || x.dim(3) != c) return Status::ok();
    const int64_t n = x.dim(0), h = x.dim(1), w = x.dim(2);
    std::array<int64_t, 4> pads;
    if (n <= 0 || h <= 0 || w <= 0 || !layer_.geometry().pads_for(h, w, pads)) return Status::ok();
    const int64_t oh = layer_.geometry().out_h(h, pads), ow = layer_.geometry().out_w(w, pads);
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DataType::kFloat, {n, oh, ow, c}));
    FdwTensorRows rows(x.data<float>(), w * c);
    layer_.run(*pool_, scratch_, rows, n, h, w, pads, y->data<float>());
    handled = true;
    return Status::ok();
  }

  FdwLayer layer_;
  ChunkScratch<float> scratch_;  // per chunk of output rows: the ring of copied input rows
};

}  // namespace

void register_opt_conv_depthwise(OpRegistry& registry) {
  XONNX_REGISTER(registry, kNhwcDomain, "Conv", 1, kLatestVersion, ConvDwF32NhwcKernel::create, Backend::kOptimized,
                 kPriorityBeforeXnnpack, fdw_layer_available);
}

}  // namespace opt
}  // namespace xonnx
