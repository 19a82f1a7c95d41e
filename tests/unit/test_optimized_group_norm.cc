// Own NHWC GroupNorm (optimized/group_norm.cc, the layout pass's form of torch's GroupNorm) and
// InstanceNormalization vs their reference twins (ops/ref/nhwc.cc) over group counts, odd sizes,
// batches and a large mean; NaN / inf and shapes they do not take go to the twins.
#include <string>
#include <vector>

#include "runtime/ops/internal_ops.h"
#include "tests/unit/test_optimized_common.h"

namespace xonnx {
namespace {

using namespace opttest;

const Op kGroupNorm(kGroupNormOp, kNhwcDomain, 1);
const Op kInstanceNorm("InstanceNormalization", kNhwcDomain, 1);

TEST(OptimizedGroupNorm, SameAsTheTwin) {
  uint32_t seed = 1;
  for (const Shape& s : {Shape{1, 7, 5, 32}, Shape{2, 3, 13, 12}, Shape{1, 1, 1, 8}, Shape{1, 64, 64, 128}}) {
    for (int64_t groups : {int64_t{1}, int64_t{4}, s[3]}) {
      const std::string at = shape_to_string(s) + " groups " + std::to_string(groups);
      diff_test(kGroupNorm, {var(rand_tensor(s, seed++))}, {attr_int("groups", groups), attr_float("epsilon", 1e-5f)},
                true, at, 1e-4, 1e-5);
    }
  }
  // With gamma and beta (the Mul and Add after torch's GroupNorm, absorbed by the layout pass).
  for (int64_t groups : {int64_t{1}, int64_t{8}}) {
    diff_test(kGroupNorm,
              {var(rand_tensor({2, 5, 7, 32}, seed++)), cst(rand_tensor({32}, seed++)), cst(rand_tensor({32}, seed++))},
              {attr_int("groups", groups)}, true, "gamma and beta, groups " + std::to_string(groups), 1e-4, 1e-5);
  }
  // A map far from zero: the variance from sums of squares keeps its digits (in double).
  Tensor offset = rand_tensor({1, 9, 11, 16}, 50);
  for (int64_t i = 0; i < offset.numel(); ++i) offset.data<float>()[i] = 300.0f + offset.data<float>()[i] * 0.01f;
  diff_test(kGroupNorm, {var(offset)}, {attr_int("groups", 8), attr_float("epsilon", 1e-6f)}, true, "mean 300", 1e-3,
            1e-4);
}

// Per channel over the pixels, then its scale and B (given as constants, or at run time).
TEST(OptimizedGroupNorm, InstanceNormalizationSameAsTheTwin) {
  uint32_t seed = 70;
  for (const Shape& s : {Shape{1, 7, 5, 32}, Shape{2, 3, 13, 12}, Shape{1, 1, 3199, 64}, Shape{1, 1, 1, 8}}) {
    for (const bool constant : {true, false}) {
      const Tensor scale = rand_tensor({s[3]}, seed++), bias = rand_tensor({s[3]}, seed++);
      const std::vector<In> in = {var(rand_tensor(s, seed++)), constant ? cst(scale) : var(scale),
                                  constant ? cst(bias) : var(bias)};
      diff_test(kInstanceNorm, in, {attr_float("epsilon", 1e-3f)}, true,
                shape_to_string(s) + (constant ? " constant" : " inputs"), 1e-4, 1e-5);
    }
  }
}

TEST(OptimizedGroupNorm, LeavesWhatItDoesNotTakeToTheTwin) {
  diff_test(kGroupNorm, {var(with_specials(rand_tensor({1, 4, 5, 16}, 60)))}, {attr_int("groups", 4)}, false,
            "NaN / inf", 0, 0);
  diff_test(kGroupNorm, {var(rand_tensor({1, 4, 5, 10}, 61))}, {attr_int("groups", 4)}, false,
            "10 channels in 4 groups");
  diff_test(kGroupNorm, {var(rand_tensor({4, 5, 16}, 62))}, {attr_int("groups", 4)}, false, "3-D");
  diff_test(
      kInstanceNorm,
      {var(with_specials(rand_tensor({1, 4, 5, 16}, 63))), cst(rand_tensor({16}, 64)), cst(rand_tensor({16}, 65))}, {},
      false, "InstanceNormalization NaN / inf", 0, 0);
  diff_test(kInstanceNorm, {var(rand_tensor({1, 4, 5, 16}, 66)), cst(rand_tensor({8}, 67)), cst(rand_tensor({16}, 68))},
            {}, false, "InstanceNormalization scale of 8 for 16 channels");
}

}  // namespace
}  // namespace xonnx
