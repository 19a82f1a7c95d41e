// Own BatchNormalization (batch_norm.cc) vs the reference kernel over odd shapes, special
// values, and the cases it leaves to the reference.
#include <string>
#include <vector>

#include "tests/unit/test_optimized_common.h"

namespace xonnx {
namespace {

using namespace opttest;

std::vector<In> bn_inputs(const Shape& x, int64_t c, bool constant_params, uint32_t seed) {
  auto param = [&](Tensor t) { return constant_params ? cst(std::move(t)) : var(std::move(t)); };
  return {var(rand_tensor(x, seed)), param(rand_tensor({c}, seed + 1)), param(rand_tensor({c}, seed + 2)),
          param(rand_tensor({c}, seed + 3)), param(rand_tensor({c}, seed + 4, 0.1f, 2.0f))};
}

TEST(OptimizedBatchNorm, SameAsTheReferenceOverOddShapes) {
  for (int64_t c : {1, 3, 13, 127}) {
    for (int64_t sp : {1, 3, 13, 129}) {
      const std::string at = "c " + std::to_string(c) + " spatial " + std::to_string(sp);
      diff_test(Op("BatchNormalization", "", 15), bn_inputs({2, c, sp, 1}, c, true, 1), {attr_float("epsilon", 1e-3f)},
                true, "4-D " + at, 0, 0);
      diff_test(Op("BatchNormalization", "", 9), bn_inputs({1, c, sp}, c, false, 2), {}, true,
                "3-D, runtime params " + at, 0, 0);
    }
  }
  diff_test(Op("BatchNormalization", "", 15), bn_inputs({3, 5}, 5, true, 3), {}, true, "2-D", 0, 0);
  std::vector<In> specials = bn_inputs({1, 3, 7, 5}, 3, true, 4);
  specials[0].t = with_specials(specials[0].t);
  diff_test(Op("BatchNormalization", "", 15), specials, {}, true, "NaN / inf", 0, 0);
}

// The layout pass's NHWC BatchNormalization ([N, H, W, C]) against its twin (transpose, the
// ONNX reference, the fused range, transpose back): the same bits, NaN kept by the range.
TEST(OptimizedBatchNorm, NhwcSameAsItsTwin) {
  const Op nhwc("BatchNormalization", kNhwcDomain, 15);
  for (int64_t c : {1, 3, 13, 127}) {
    const std::string at = "c " + std::to_string(c);
    diff_test(nhwc, bn_inputs({2, 5, 3, c}, c, true, 7), {}, true, "NHWC " + at, 0, 0);
    diff_test(nhwc, bn_inputs({1, 4, 7, c}, c, true, 8),
              {attr_float("activation_min", 0.0f), attr_float("activation_max", 6.0f)}, true, "NHWC ReLU6 " + at, 0, 0);
  }
  std::vector<In> specials = bn_inputs({1, 7, 5, 3}, 3, true, 9);
  specials[0].t = with_specials(specials[0].t);
  diff_test(nhwc, specials, {attr_float("activation_min", 0.0f)}, true, "NHWC NaN / inf, ReLU", 0, 0);
}

TEST(OptimizedBatchNorm, LeavesTheRestToTheReference) {
  diff_test(Op("BatchNormalization", "", 15), bn_inputs({1, 3, 4, 4}, 4, true, 5), {}, false,
            "params of the wrong size");
  diff_test(Op("BatchNormalization", "", 15, 3), bn_inputs({2, 3, 4, 4}, 3, true, 6), {attr_int("training_mode", 1)},
            false, "training mode");
}

}  // namespace
}  // namespace xonnx
