// XNNPACK 1-D Conv ([N, C, L] as [N, C, 1, L], conv.cc) and ConvTranspose (deconv.cc) vs the
// reference kernels over odd channel counts, lengths and geometries.
#include <algorithm>
#include <cmath>
#include <string>

#include "runtime/ops/registry.h"
#include "runtime/passes/layout_nhwc.h"
#include "tests/unit/test_xnnpack_common.h"

namespace xonnx {
namespace {

using namespace xnntest;

void run_case(const char* op, const Shape& x, const Shape& w, int64_t bias_len, const std::vector<Attribute>& attrs,
              const std::string& what, bool expect_fast = true) {
  std::vector<In> in = {var(rand_tensor(x, 11)), cst(rand_tensor(w, 12))};
  if (bias_len > 0) in.push_back(cst(rand_tensor({bias_len}, 13)));
  // Rounding error grows with the dot product's length: atol scales with sqrt(K).
  const double k = static_cast<double>(shape_numel(w) / w[0]);
  diff_test(op, in, attrs, 17, expect_fast, what, 1e-4, 1e-5 * std::max(1.0, std::sqrt(k / 16)));
}

TEST(XnnpackConv1d, ChannelsLengthsDilations) {
  for (int64_t c : {1, 3, 13, 127}) {
    for (int64_t len : {1, 3, 13, 127}) {
      for (int64_t d : {1, 2, 8}) {
        const int64_t pad = d;  // "same" length for k 3
        run_case("Conv", {1, c, len}, {13, c, 3}, 13, {attr_ints("dilations", {d}), attr_ints("pads", {pad, pad})},
                 "c " + std::to_string(c) + " len " + std::to_string(len) + " dilation " + std::to_string(d));
      }
    }
  }
}

TEST(XnnpackConv1d, StridesPadsGroupsAutoPad) {
  run_case("Conv", {2, 13, 127}, {3, 13, 3}, 3, {attr_ints("strides", {2}), attr_ints("pads", {1, 2})}, "stride 2");
  run_case("Conv", {1, 12, 13}, {6, 4, 5}, 6, {attr_int("group", 3), attr_ints("kernel_shape", {5})}, "group 3");
  run_case("Conv", {1, 13, 31}, {13, 1, 3}, 0,
           {attr_int("group", 13), attr_ints("dilations", {4}), attr_ints("pads", {4, 4})},
           "depthwise dilated, no bias");
  run_case("Conv", {1, 3, 13}, {5, 3, 1}, 5, {}, "k 1");
  for (const char* ap : {"SAME_UPPER", "SAME_LOWER", "VALID"})
    for (int64_t s : {1, 2})
      run_case("Conv", {1, 3, 13}, {4, 3, 4}, 4, {attr_string("auto_pad", ap), attr_ints("strides", {s})},
               std::string(ap) + " s" + std::to_string(s));
  // The dilated kernel is longer than the padded input: the reference reports it.
  run_case("Conv", {1, 3, 3}, {4, 3, 3}, 4, {attr_ints("dilations", {4})}, "degenerate", false);
}

TEST(XnnpackConv1d, DeclinesRuntimeWeights) {
  diff_test("Conv", {var(rand_tensor({1, 3, 13}, 1)), var(rand_tensor({2, 3, 3}, 2))}, {}, 17, false, "runtime W");
}

TEST(XnnpackConvTranspose, ChannelsStridesPads) {
  for (int64_t cin : {1, 3, 13, 127}) {
    for (int64_t cout : {1, 3, 13}) {
      run_case("ConvTranspose", {1, cin, 5, 7}, {cin, cout, 2, 2}, cout, {attr_ints("strides", {2, 2})},
               "2x2 s2 cin " + std::to_string(cin) + " cout " + std::to_string(cout));
      run_case("ConvTranspose", {2, cin, 3, 4}, {cin, cout, 3, 3}, 0, {attr_ints("pads", {1, 1, 1, 1})},
               "3x3 s1 p1 cin " + std::to_string(cin) + " cout " + std::to_string(cout));
    }
  }
  run_case("ConvTranspose", {1, 13, 13, 9}, {13, 3, 3, 3}, 3,
           {attr_ints("strides", {2, 3}), attr_ints("pads", {1, 0, 0, 2}), attr_ints("output_padding", {1, 2})},
           "asymmetric pads, output_padding");
  run_case("ConvTranspose", {1, 3, 7, 7}, {3, 4, 3, 3}, 4,
           {attr_ints("dilations", {2, 2}), attr_ints("strides", {2, 2})}, "dilated");
  run_case("ConvTranspose", {1, 6, 5, 5}, {6, 2, 3, 3}, 6, {attr_int("group", 3), attr_ints("strides", {2, 2})},
           "group 3");
  run_case("ConvTranspose", {1, 3, 1, 1}, {3, 5, 4, 4}, 5,
           {attr_ints("strides", {2, 2}), attr_string("auto_pad", "VALID")}, "1x1 input, VALID");
}

// A 1-D ConvTranspose runs as a 2-D one of height 1 when the layout pass lifts it
// (passes/layout_conv1d.cc); the kernel itself takes 2-D only.
TEST(XnnpackConvTranspose, OneDWhenLifted) {
  const bool lifted = fast_layout_fusions(OpRegistry::global()).lift_1d;
  for (int64_t len : {1, 9, 50}) {
    run_case("ConvTranspose", {1, 3, len}, {3, 4, 3}, 4, {attr_ints("strides", {2})}, "1-D len " + std::to_string(len),
             lifted);
    run_case("ConvTranspose", {2, 4, len}, {4, 3, 8}, 6,
             {attr_ints("strides", {4}), attr_ints("pads", {2, 2}), attr_int("group", 2)},
             "1-D group 2 len " + std::to_string(len), lifted);
  }
}

TEST(XnnpackConvTranspose, DeclinesWhatItDoesNotCover) {
  run_case("ConvTranspose", {1, 3, 5, 5}, {3, 4, 3, 3}, 4,
           {attr_ints("strides", {2, 2}), attr_ints("output_shape", {10, 10})}, "output_shape", false);
  run_case("ConvTranspose", {1, 3, 5, 5}, {3, 4, 3, 3}, 4,
           {attr_ints("strides", {2, 2}), attr_string("auto_pad", "SAME_UPPER")}, "SAME_UPPER", false);
  run_case("ConvTranspose", {1, 3, 5, 5}, {3, 4, 3, 3}, 4, {attr_ints("output_padding", {1, 1})},
           "output_padding >= stride", false);
  diff_test("ConvTranspose", {var(rand_tensor({1, 3, 5, 5}, 1)), var(rand_tensor({3, 2, 3, 3}, 2))}, {}, 17, false,
            "runtime W");
}

}  // namespace
}  // namespace xonnx
