// The layout pass's com.xonnx.nhwc ConvTranspose: XNNPACK's deconvolution on the NHWC tensors
// (ops/xnnpack/deconv.cc) against its reference twin (ops/ref/nhwc.cc: ONNX ConvTranspose on
// the transposed input), over strides, pads, output_padding, dilations, groups, odd channel
// counts, and NaN / inf in the input (the twin's results).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/ops/internal_ops.h"
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
    diff_all(kNhwcConvTranspose, inputs(p, seed), p.attrs, Check(Runs::kNot, Runs::kMust, kTol), p.what);
    diff_all(kNhwcConvTranspose, inputs(p, seed + 5, false), p.attrs, Check(Runs::kNot, Runs::kMust, kTol),
             p.what + ", no bias");
    std::vector<In> specials = inputs(p, seed + 10);
    specials[0].t = backendtest::with_specials(specials[0].t);
    diff_all(kNhwcConvTranspose, specials, p.attrs, Check(Runs::kNot, Runs::kMay, kTol), p.what + ", NaN / inf in X");
    seed += 20;
  }
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
