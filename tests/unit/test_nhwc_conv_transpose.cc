// The layout pass's com.xonnx.nhwc ConvTranspose: XNNPACK's deconvolution on the NHWC tensors
// (ops/xnnpack/deconv.cc) and the own kernel for kernel == stride (ops/optimized/
// conv_transpose.cc) against their reference twin (ops/ref/nhwc.cc: ONNX ConvTranspose on the
// transposed input), over strides, pads, output_padding, dilations, groups, odd channel
// counts, and NaN / inf in the input (the twin's results).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/ops/internal_ops.h"
#include "runtime/ops/optimized/fconv.h"
#include "tests/unit/backend_test_util.h"

namespace xonnx {
namespace {

using backendtest::Check;
using backendtest::cst;
using backendtest::diff_all;
using backendtest::In;
using backendtest::rand_tensor;
using backendtest::Runs;
using backendtest::var;
using testing::attr_int;
using testing::attr_ints;

const backendtest::Op kNhwcConvTranspose("ConvTranspose", kNhwcDomain, 11);
const backendtest::Tolerance kTol{1e-4, 1e-5};

struct Case {
  Shape x;  // [N, H, W, C]
  int64_t m, k, group;
  std::vector<Attribute> attrs;
  std::string what;
};

// X [N, H, W, C], W [C, M / group, k, k] (constant), B [M].
std::vector<In> inputs(const Case& p, uint32_t seed, bool bias = true) {
  const int64_t c = p.x[3];
  std::vector<In> in = {var(rand_tensor(p.x, seed)),
                        cst(rand_tensor({c, p.m / p.group, p.k, p.k}, seed + 1, -0.5f, 0.5f))};
  if (bias) in.push_back(cst(rand_tensor({p.m}, seed + 2)));
  return in;
}

// The case with a bias, without one, and with NaN / inf in X (where either kernel may decline).
void check_case(const Case& p, uint32_t seed, Runs own, Runs xnnpack) {
  diff_all(kNhwcConvTranspose, inputs(p, seed), p.attrs, Check(own, xnnpack, kTol), p.what);
  diff_all(kNhwcConvTranspose, inputs(p, seed + 5, false), p.attrs, Check(own, xnnpack, kTol), p.what + ", no bias");
  std::vector<In> specials = inputs(p, seed + 10);
  specials[0].t = backendtest::with_specials(specials[0].t);
  diff_all(kNhwcConvTranspose, specials, p.attrs, Check(own, Runs::kMay, kTol), p.what + ", NaN / inf in X");
}

TEST(NhwcConvTranspose, XnnpackAgreesWithTheTwin) {
  const std::vector<Case> cases = {
      {{1, 5, 7, 8}, 4, 2, 1, {attr_ints("strides", {2, 2})}, "2x2 stride 2 (U-Net's upsampling)"},
      {{2, 4, 3, 13}, 7, 2, 1, {attr_ints("strides", {2, 2})}, "odd channels, 2 images"},
      {{1, 6, 6, 16},
       16,
       4,
       1,
       {attr_ints("strides", {2, 2}), attr_ints("pads", {1, 1, 1, 1})},
       "4x4 stride 2 pads 1 (a DB head)"},
      {{1, 5, 4, 3},
       5,
       3,
       1,
       {attr_ints("strides", {2, 3}), attr_ints("pads", {1, 0, 0, 2}), attr_ints("output_padding", {1, 2})},
       "asymmetric pads, output_padding"},
      {{1, 7, 7, 3}, 4, 3, 1, {attr_ints("dilations", {2, 2}), attr_ints("strides", {2, 2})}, "dilated"},
      {{1, 5, 5, 6}, 6, 3, 3, {attr_int("group", 3), attr_ints("strides", {2, 2})}, "group 3"},
      {{1, 9, 11, 33}, 40, 3, 1, {attr_ints("pads", {1, 1, 1, 1})}, "3x3 stride 1"},
  };
  uint32_t seed = 1;
  for (const Case& p : cases) {
    // The first two (kernel == stride) take the own kernel where the CPU has AVX-512.
    check_case(p, seed, p.k == 2 && p.group == 1 && p.attrs.size() == 1 ? Runs::kMay : Runs::kNot, Runs::kMust);
    seed += 20;
  }
}

// The own kernel (kernel == stride, no pads, dilation or output_padding, one group): blocks of
// 96 input pixels that cross rows and images, panels past M's multiple of 32, kernels of 1 to 3
// and unequal ones, NaN / inf in X; the tiles' AVX-512 only.
TEST(NhwcConvTranspose, OwnKernelWhereTheKernelTilesTheOutput) {
  const Runs own = opt::fconv_tile_fast() ? Runs::kMust : Runs::kNot;
  const std::vector<Case> cases = {
      {{1, 14, 14, 64}, 32, 2, 1, {attr_ints("strides", {2, 2})}, "U-Net's 2x2, 14 x 14"},
      {{2, 5, 13, 40}, 20, 2, 1, {attr_ints("strides", {2, 2})}, "2 images, M = 20 (one part panel)"},
      {{1, 9, 11, 33}, 70, 2, 1, {attr_ints("strides", {2, 2})}, "odd C, M = 70 (three panels)"},
      {{1, 6, 7, 16}, 16, 3, 1, {attr_ints("strides", {3, 3})}, "3x3 stride 3"},
      {{1, 8, 8, 24}, 8, 1, 1, {}, "1x1 stride 1"},
  };
  uint32_t seed = 100;
  for (const Case& p : cases) {
    check_case(p, seed, own, Runs::kMay);
    seed += 20;
  }
  // 2 x 1 kernel, stride 2 x 1: rows of the output block are one pixel wide.
  std::vector<In> tall = {var(rand_tensor({1, 6, 5, 12}, 7)), cst(rand_tensor({12, 40, 2, 1}, 8, -0.5f, 0.5f)),
                          cst(rand_tensor({40}, 9))};
  diff_all(kNhwcConvTranspose, tall, {attr_ints("strides", {2, 1})}, Check(own, Runs::kMay, kTol), "2 x 1 kernel");
  // Geometries it leaves to XNNPACK: pads, output_padding, a stride other than the kernel.
  const Case padded{{1, 6, 6, 16}, 16, 2, 1, {}, ""};
  diff_all(kNhwcConvTranspose, inputs(padded, 30), {attr_ints("strides", {2, 2}), attr_ints("pads", {1, 1, 0, 0})},
           Check(Runs::kNot, Runs::kMust, kTol), "pads");
  diff_all(kNhwcConvTranspose, inputs(padded, 31), {attr_ints("strides", {2, 2}), attr_ints("output_padding", {1, 1})},
           Check(Runs::kNot, Runs::kMust, kTol), "output_padding");
  diff_all(kNhwcConvTranspose, inputs(padded, 32), {attr_ints("strides", {1, 1})}, Check(Runs::kNot, Runs::kMust, kTol),
           "2x2 stride 1");
}

TEST(NhwcConvTranspose, WhatXnnpackDeclinesRunsTheTwin) {
  const Case p{{1, 5, 5, 3}, 4, 3, 1, {}, ""};
  diff_all(kNhwcConvTranspose, inputs(p, 3), {attr_ints("strides", {2, 2}), attr_ints("output_shape", {10, 10})},
           Check(Runs::kNot, Runs::kNot, kTol), "output_shape");
  diff_all(kNhwcConvTranspose, inputs(p, 4), {attr_ints("output_padding", {1, 1})}, Check(Runs::kNot, Runs::kNot, kTol),
           "output_padding not below the stride");
  // X of other channels than W says: the twin's error, from every backend.
  std::vector<In> bad = inputs(p, 5);
  bad[0] = var(rand_tensor({1, 5, 5, 4}, 6));
  diff_all(kNhwcConvTranspose, bad, {}, Check(Runs::kNot, Runs::kNot, kTol), "4 channels for 3");
}

}  // namespace
}  // namespace xonnx
