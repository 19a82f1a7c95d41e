// Differential tests of the optimized Concat (runtime/ops/optimized/layout_concat.cc) against the
// reference kernel: every axis (negative too), element sizes 1, 4 and 8, empty inputs, one
// input, and mismatched inputs, whose error the reference kernel reports.
#include "tests/unit/test_optimized_common.h"

namespace xonnx {
namespace {

using namespace opttest;

Tensor int8_tensor(const Shape& shape) {
  std::vector<int8_t> v(static_cast<size_t>(shape_numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int8_t>(i * 37);
  return Tensor::from_vector<int8_t>(v, shape);
}

TEST(OptimizedConcat, EveryAxisAndElementSize) {
  for (int64_t axis : {0, 1, 2, 3, -1}) {
    const std::string what = "axis " + std::to_string(axis);
    Shape a{2, 3, 5, 4}, b{2, 3, 5, 4};
    const int64_t d = axis < 0 ? 3 : axis;
    b[static_cast<size_t>(d)] = 7;
    diff_test({"Concat", "", 13},
              {var(rand_tensor(a, 1)), var(with_specials(rand_tensor(b, 2))), var(rand_tensor(a, 3))},
              {attr_int("axis", axis)}, true, what, 0, 0);
    diff_test({"Concat", "", 13}, {var(int8_tensor(a)), var(int8_tensor(b))}, {attr_int("axis", axis)}, true,
              what + " int8", 0, 0);
  }
  diff_test({"Concat", "", 13},
            {var(Tensor::from_vector<int64_t>({1, 2}, {2})), cst(Tensor::from_vector<int64_t>({-1}, {1}))},
            {attr_int("axis", 0)}, true, "int64 shape", 0, 0);
}

TEST(OptimizedConcat, LargeChannelConcatSplitsOverThreads) {
  // SqueezeNet's fire module in NHWC: two [1, 55, 55, 64] expands along the channels.
  diff_test({"Concat", "", 13}, {var(rand_tensor({1, 55, 55, 64}, 1)), var(rand_tensor({1, 55, 55, 64}, 2))},
            {attr_int("axis", 3)}, true, "fire module", 0, 0);
}

TEST(OptimizedConcat, WholeCacheLineSlicesOfManyInputs) {
  // DenseNet's layer inputs in NHWC: slices of whole 64-byte lines, copied line by line, and a
  // concatenation where one slice is not (8 channels: 32 bytes), copied slice by slice.
  std::vector<In> dense;
  int seed = 1;
  for (int64_t c : {64, 32, 32, 16, 48}) dense.push_back(var(rand_tensor({2, 7, 5, c}, seed++)));
  diff_test({"Concat", "", 13}, dense, {attr_int("axis", 3)}, true, "line slices", 0, 0);
  std::vector<In> mixed = dense;
  mixed.push_back(var(rand_tensor({2, 7, 5, 8}, seed++)));
  diff_test({"Concat", "", 13}, mixed, {attr_int("axis", -1)}, true, "a 32-byte slice", 0, 0);
  diff_test({"Concat", "", 13}, {var(int8_tensor({3, 4, 64})), var(int8_tensor({3, 4, 128}))}, {attr_int("axis", 2)},
            true, "int8 line slices", 0, 0);
}

TEST(OptimizedConcat, EmptyAndSingleInputs) {
  diff_test({"Concat", "", 13}, {var(rand_tensor({2, 0, 3}, 1)), var(rand_tensor({2, 4, 3}, 2))}, {attr_int("axis", 1)},
            true, "an empty input", 0, 0);
  diff_test({"Concat", "", 13}, {var(rand_tensor({3, 5}, 1))}, {attr_int("axis", 1)}, true, "one input", 0, 0);
}

TEST(OptimizedConcat, MismatchesGoToTheReference) {
  diff_test({"Concat", "", 13}, {var(rand_tensor({2, 3}, 1)), var(rand_tensor({3, 3}, 2))}, {attr_int("axis", 1)},
            false, "other dims differ", 0, 0);
  diff_test({"Concat", "", 13}, {var(rand_tensor({2, 3}, 1)), var(rand_tensor({2, 3, 1}, 2))}, {attr_int("axis", 1)},
            false, "ranks differ", 0, 0);
  diff_test({"Concat", "", 13}, {var(rand_tensor({2, 3}, 1)), var(int8_tensor({2, 3}))}, {attr_int("axis", 1)}, false,
            "types differ", 0, 0);
  diff_test({"Concat", "", 13}, {var(rand_tensor({2, 3}, 1))}, {attr_int("axis", 2)}, false, "axis out of range", 0, 0);
}

}  // namespace
}  // namespace xonnx
