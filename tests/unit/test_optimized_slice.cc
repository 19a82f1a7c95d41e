// Own Slice (slice.cc) vs the reference kernel over odd shapes, axes and steps, and the cases
// it leaves to the reference.
#include <string>
#include <vector>

#include "tests/unit/test_optimized_common.h"

namespace xonnx {
namespace {

using namespace opttest;

void slice_case(Tensor x, std::vector<int64_t> starts, std::vector<int64_t> ends, std::vector<int64_t> axes,
                std::vector<int64_t> steps, const std::string& what, bool expect_fast = true) {
  std::vector<In> in = {var(std::move(x)), cst(ints_of(std::move(starts))), cst(ints_of(std::move(ends)))};
  if (!axes.empty()) in.push_back(cst(ints_of(std::move(axes))));
  if (!steps.empty()) in.push_back(cst(ints_of(std::move(steps))));
  diff_test(Op("Slice", "", 13), in, {}, expect_fast, what);
}

TEST(OptimizedSlice, RunsOverOddShapes) {
  for (int64_t n : kSizes) {
    const std::string at = " n " + std::to_string(n);
    slice_case(rand_tensor({1, 2 * n, 3, 5}, 1), {0}, {n}, {1}, {}, "channel half" + at);
    slice_case(rand_tensor({1, 2 * n, 3, 5}, 1), {n}, {INT64_MAX}, {1}, {}, "second half, open end" + at);
    slice_case(rand_tensor({3, n, 7}, 2), {1, -3}, {-1, 100}, {0, 2}, {}, "negative starts / ends" + at);
    slice_case(rand_tensor({3, n, 7}, 3), {0, 0}, {n, 7}, {1, 2}, {2, 3}, "steps" + at);
    slice_case(rand_tensor({n, 4}, 4), {0}, {4}, {-1}, {1}, "whole (a copy)" + at);
  }
  slice_case(Tensor::from_vector<int64_t>({1, 2, 3, 4, 5, 6}, {2, 3}), {1}, {3}, {1}, {}, "int64");
  slice_case(rand_tensor({4, 5}, 5), {3}, {1}, {0}, {}, "empty");
}

TEST(OptimizedSlice, LeavesTheRestToTheReference) {
  slice_case(rand_tensor({4, 5}, 6), {3}, {0}, {0}, {-1}, "negative step", false);
  slice_case(rand_tensor({4, 5}, 6), {0, 0}, {2, 2}, {0, 0}, {}, "duplicate axis (reported)", false);
  slice_case(rand_tensor({4, 5}, 6), {0}, {2}, {0}, {0}, "step 0 (reported)", false);
}

}  // namespace
}  // namespace xonnx
