// What the registry tells the passes and the backends about each other, so that neither
// includes the other: OpRegistry::has_fast_kernel (OpDef::available), the layout fusions it
// enables, and the row functions one backend provides to another.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "runtime/ops/internal_ops.h"
#include "runtime/ops/optimized/fconv.h"
#include "runtime/ops/optimized/fdw_layer.h"
#include "runtime/ops/optimized/opt_util.h"
#include "runtime/ops/optimized/qgemm.h"
#include "runtime/ops/registry.h"
#include "runtime/passes/layout_nhwc.h"

namespace xonnx {
namespace {

TEST(RegistryCapabilitiesTest, FastKernelFollowsTheKernelsGate) {
  const OpRegistry& r = OpRegistry::global();
  // The own int8 GEMM needs AVX512-VNNI; XNNPACK registers no QGemm.
  EXPECT_EQ(r.has_fast_kernel("com.microsoft", "QGemm"), opt::qgemm_fast() != nullptr);
  EXPECT_EQ(r.has_fast_kernel(kNhwcDomain, kConvNchwInputOp), opt::fconv_tile_fast() != nullptr);
  // Ops with only a reference kernel, and unknown ops.
  EXPECT_FALSE(r.has_fast_kernel("", "Einsum"));
  EXPECT_FALSE(r.has_fast_kernel("", "NoSuchOp"));
  // An XNNPACK kernel without an `available` gate counts everywhere.
  EXPECT_TRUE(r.has_fast_kernel("", "Conv"));
}

TEST(RegistryCapabilitiesTest, SwitchingTheOwnKernelsOffWithdrawsTheirFusions) {
  const OpRegistry& r = OpRegistry::global();
  opt::set_enabled(false);
  const NhwcLayoutOptions off = fast_layout_fusions(r);
  const bool qgemm_off = r.has_fast_kernel("com.microsoft", "QGemm");
  opt::set_enabled(true);
  EXPECT_FALSE(off.fuse_pointwise_depthwise);
  EXPECT_FALSE(off.nchw_input_conv);
  EXPECT_FALSE(off.fuse_concat);
  EXPECT_FALSE(off.fuse_stem_pool);
  EXPECT_FALSE(qgemm_off);
  const NhwcLayoutOptions on = fast_layout_fusions(r);
  const bool tiles = opt::fconv_tile_fast() != nullptr;
  EXPECT_EQ(on.nchw_input_conv, tiles);
  EXPECT_EQ(on.fuse_concat, tiles);
  EXPECT_EQ(on.fuse_stem_pool, tiles);
}

Result<std::unique_ptr<Kernel>> declining_factory(const KernelInit& /*init*/) { return unsupported("a test kernel"); }

OpDef nhwc_kernel(const char* op, Backend backend, bool (*available)()) {
  OpDef d{kNhwcDomain, op, 1, kLatestVersion, declining_factory};
  d.backend = backend;
  d.available = available;
  return d;
}

TEST(RegistryCapabilitiesTest, TheLayoutPaysOnlyWithAFastNhwcConvolution) {
  OpRegistry none;  // reference kernels only: every NHWC Conv would run on its twin
  EXPECT_FALSE(nhwc_layout_pays(none, true));
  OpRegistry other_isa;  // an own kernel for an ISA this CPU lacks (AVX-512 on ARM)
  other_isa.add(nhwc_kernel("Conv", Backend::kOptimized, [] { return false; }));
  EXPECT_FALSE(nhwc_layout_pays(other_isa, true));
  OpRegistry own;
  own.add(nhwc_kernel("Conv", Backend::kOptimized, [] { return true; }));
  EXPECT_TRUE(nhwc_layout_pays(own, true));
  EXPECT_FALSE(nhwc_layout_pays(own, false)) << "the session switched its own kernels off";
  OpRegistry xnnpack;
  xnnpack.add(nhwc_kernel("QLinearConv", Backend::kXnnpack, nullptr));
  EXPECT_TRUE(nhwc_layout_pays(xnnpack, false));
  OpRegistry pools_only;  // a fast NHWC pool alone does not make a region worth its conversions
  pools_only.add(nhwc_kernel("MaxPool", Backend::kXnnpack, nullptr));
  EXPECT_FALSE(nhwc_layout_pays(pools_only, true));
  // This build links XNNPACK, whose NHWC Conv has no gate; the own depthwise ones follow their ISA.
  EXPECT_TRUE(nhwc_layout_pays(OpRegistry::global(), false));
  EXPECT_EQ(OpRegistry::global().has_fast_kernel(kNhwcDomain, "Conv", Backend::kOptimized),
            opt::fconv_tile_fast() != nullptr || opt::fdw_layer_available());
}

TEST(RegistryCapabilitiesTest, RowFunctionsComputeTheirActivation) {
  const OpRegistry& r = OpRegistry::global();
  EXPECT_EQ(r.row_function("NoSuchActivation"), nullptr);
  const RowFunction swish = r.row_function("Swish");
  const RowFunction hard_swish = r.row_function("HardSwish");
  ASSERT_NE(swish, nullptr);
  ASSERT_NE(hard_swish, nullptr);
  for (int n : {1, 3, 13, 127, 128, 129}) {
    std::vector<float> x(static_cast<size_t>(n)), y(x.size()), z(x.size());
    for (int i = 0; i < n; ++i)
      x[static_cast<size_t>(i)] = -8.0f + 16.0f * static_cast<float>(i) / static_cast<float>(n);
    swish(x.data(), y.data(), n);
    hard_swish(x.data(), z.data(), n);
    for (size_t i = 0; i < x.size(); ++i) {
      const double v = x[i];
      EXPECT_NEAR(y[i], v / (1.0 + std::exp(-v)), 1e-5 * (1 + std::fabs(v))) << "n=" << n << " i=" << i;
      EXPECT_NEAR(z[i], v * std::min(1.0, std::max(0.0, v / 6 + 0.5)), 1e-5 * (1 + std::fabs(v)))
          << "n=" << n << " i=" << i;
    }
    swish(x.data(), x.data(), n);  // in place, as XNNPACK's Conv applies it
    EXPECT_EQ(x, y);
  }
}

}  // namespace
}  // namespace xonnx
