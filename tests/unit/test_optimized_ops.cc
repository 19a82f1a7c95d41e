// Differential tests of the optimized LayerNorm, InstanceNorm, Erf/Gelu, Tanh, Exp and Relu against the reference kernels (Softmax:
// test_softmax.cc, every backend)
// (tests/unit/test_optimized_common.h): odd sizes, broadcasting, NaN/inf, and cases the
// optimized kernels hand to the reference kernel.
#include "tests/unit/test_optimized_common.h"

namespace xonnx {
namespace {

using namespace opttest;

TEST(OptimizedOps, LayerNormalization) {
  for (int64_t d : kSizes) {
    diff_test({"LayerNormalization"},
              {var(rand_tensor({2, 5, d}, 1, -3, 3)), cst(rand_tensor({d}, 2)), cst(rand_tensor({d}, 3))},
              {attr_float("epsilon", 1e-5f)}, true, "d" + std::to_string(d), 1e-4, 1e-5);
  }
  diff_test({"LayerNormalization"}, {var(rand_tensor({3, 4, 13}, 4)), var(rand_tensor({4, 13}, 5))},
            {attr_int("axis", 1)}, true, "axis 1, no bias", 1e-4, 1e-5);
  diff_test({"LayerNormalization", "", 17, 3},
            {var(with_specials(rand_tensor({7, 33}, 6))), cst(rand_tensor({33}, 7)), cst(rand_tensor({33}, 8))}, {},
            true, "stats + NaN/inf", 1e-4, 1e-5);
  diff_test({"LayerNormalization"}, {var(rand_tensor({3, 4, 13}, 4)), var(rand_tensor({3, 1, 13}, 5))},
            {attr_int("axis", 1)}, false, "scale broadcast over rows: reference");
  diff_test({"LayerNormalization", "", 17, 3}, {var(rand_tensor({3, 8}, 9)), cst(rand_tensor({8}, 10))},
            {attr_int("stash_type", 11)}, false, "double stash: declined", 1e-4, 1e-5);
}

TEST(OptimizedOps, InstanceNormalization) {
  for (const Shape& x : {Shape{1, 3, 5}, Shape{2, 4, 3, 7}, Shape{1, 8, 1, 400}, Shape{2, 3, 2, 3, 5}}) {
    const Tensor scale = rand_tensor({x[1]}, 11), bias = rand_tensor({x[1]}, 12);
    diff_test({"InstanceNormalization"}, {var(rand_tensor(x, 10, -3, 5)), cst(scale), cst(bias)},
              {attr_float("epsilon", 1e-3f)}, true, shape_to_string(x), 1e-4, 1e-5);
    diff_test({"InstanceNormalization"}, {var(rand_tensor(x, 13)), var(scale), var(bias)}, {}, true,
              "runtime scale " + shape_to_string(x), 1e-4, 1e-5);
  }
  // [N, C] has no spatial dims: the reference reports it.
  diff_test({"InstanceNormalization"},
            {var(rand_tensor({2, 3}, 14)), cst(rand_tensor({3}, 1)), cst(rand_tensor({3}, 2))}, {}, false, "rank 2");
}

TEST(OptimizedOps, ErfAndGelu) {
  for (int64_t n : kSizes) {
    diff_test({"Erf"}, {var(with_specials(rand_tensor({n}, 1, -4, 4)))}, {}, true, "n" + std::to_string(n), 1e-5, 1e-6);
    diff_test({"Gelu", "", 20}, {var(with_specials(rand_tensor({2, n}, 2, -6, 6)))}, {}, true, "erf", 1e-5, 1e-6);
    diff_test({"Gelu", "", 20}, {var(rand_tensor({2, n}, 3, -6, 6))}, {attr_string("approximate", "tanh")}, true,
              "tanh", 1e-5, 1e-6);
    diff_test({"Gelu", "com.microsoft"}, {var(rand_tensor({n, 3}, 4, -6, 6))}, {}, true, "ms", 1e-5, 1e-6);
    diff_test({"Swish", "", 24}, {var(with_specials(rand_tensor({n}, 5, -90, 90)))}, {}, true, "swish", 1e-5, 1e-6);
    diff_test({"Tanh"}, {var(with_specials(rand_tensor({n}, 6, -12, 12)))}, {}, true, "tanh", 1e-5, 1e-7);
    // Small |x|, where tanh(x) ~ x: relative accuracy (1 - e^-2|x| would cancel).
    diff_test({"Tanh"}, {var(rand_tensor({n}, 7, -0.2f, 0.2f))}, {}, true, "tanh small", 1e-5, 0);
    // Results under FLT_MIN (x < -87.3) are flushed to 0: denormals slow every FMA that reads them.
    diff_test({"Exp"}, {var(with_specials(rand_tensor({n}, 8, -100, 100)))}, {}, true, "exp", 1e-5, 1.2e-38);
  }
  for (int64_t n : kSizes) {
    Tensor x = with_specials(rand_tensor({n}, 9, -3, 3));
    if (n > 1) x.data<float>()[1] = -0.0f;  // the reference's +0
    diff_test({"Relu", "", 14}, {var(x)}, {}, true, "relu", 0, 0);
  }
  diff_test({"Relu", "", 14}, {var(Tensor::from_vector<int32_t>({-3, 4}, {2}))}, {}, false, "int32: reference");
  diff_test({"Swish", "", 24}, {var(rand_tensor({5}, 6))}, {attr_float("alpha", 0.5f)}, false, "alpha: declined");
  diff_test({"Erf"}, {var(Tensor::from_vector<double>({0.5, -1}, {2}))}, {}, false, "double");
  // A bad attribute: the optimized factory declines and the reference reports the error.
  auto ref = make_session({"Gelu", "", 20}, {var(rand_tensor({4}, 3))}, {attr_string("approximate", "bad")}, false, 1);
  auto fast = make_session({"Gelu", "", 20}, {var(rand_tensor({4}, 3))}, {attr_string("approximate", "bad")}, true, 1);
  ASSERT_FALSE(ref.is_ok());
  ASSERT_FALSE(fast.is_ok());
  EXPECT_EQ(fast.status().to_string(), ref.status().to_string());
}

// Big enough that the work is split over the pool's threads (diff_test runs 1 and 2 threads).
TEST(OptimizedOps, LargeShapesSplitOverThreads) {
  diff_test({"LayerNormalization"},
            {var(rand_tensor({600, 257}, 1)), cst(rand_tensor({257}, 2)), cst(rand_tensor({257}, 3))}, {}, true,
            "layer norm", 1e-4, 1e-5);
  diff_test({"Erf"}, {var(rand_tensor({3, 100001}, 4, -3, 3))}, {}, true, "erf", 1e-5, 1e-6);
  diff_test({"Tanh"}, {var(rand_tensor({3, 100001}, 5, -3, 3))}, {}, true, "tanh", 1e-5, 1e-7);
  diff_test({"Relu"}, {var(rand_tensor({3, 100001}, 9, -3, 3))}, {}, true, "relu", 0, 0);
  diff_test({"InstanceNormalization"},
            {var(rand_tensor({2, 64, 3000}, 6)), cst(rand_tensor({64}, 7)), cst(rand_tensor({64}, 8))}, {}, true,
            "instance norm", 1e-4, 1e-5);
}

}  // namespace
}  // namespace xonnx
