// The NHWC layout of an own-kernels build for a CPU family without fast NHWC convolutions (ARM
// with -DXONNX_WITH_XNNPACK=OFF): nothing there runs an NHWC Conv faster than the NCHW kernels,
// so sessions keep the graph in NCHW and the layout pass is not linked (~110 KB on aarch64).
#include "runtime/passes/layout_nhwc.h"

namespace xonnx {

bool nhwc_layout_pays(const OpRegistry& /*registry*/, bool /*own_kernels*/) { return false; }

NhwcLayoutOptions fast_layout_fusions(const OpRegistry& /*registry*/) { return {}; }

Result<NhwcLayoutStats> apply_nhwc_layout(Graph& /*graph*/, const std::map<std::string, int64_t>& /*opset_imports*/,
                                          const NhwcLayoutOptions& /*options*/) {
  return NhwcLayoutStats{};
}

}  // namespace xonnx
