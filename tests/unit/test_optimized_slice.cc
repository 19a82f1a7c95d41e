// Own Slice and Split (slice.cc) vs the reference kernel over odd shapes, axes, steps, sizes
// and opsets, and the cases they leave to the reference; a contiguous slice of at least half its input is a view of it,
// which an in-place kernel reading the view must not write through.
#include <string>
#include <vector>

#include "tests/unit/graph_builder.h"
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
    slice_case(rand_tensor({n, 4}, 4), {0}, {4}, {-1}, {1}, "whole (a view)" + at);
    slice_case(rand_tensor({n + 2, 3, 5}, 7), {1}, {n + 2}, {0}, {}, "outer frames (a view)" + at);
    slice_case(rand_tensor({1, n + 2, 3, 5}, 8), {2}, {n + 2}, {1}, {}, "a block past the first (a view if half)" + at);
  }
  slice_case(Tensor::from_vector<int64_t>({1, 2, 3, 4, 5, 6}, {2, 3}), {1}, {3}, {1}, {}, "int64");
  slice_case(rand_tensor({4, 5}, 5), {3}, {1}, {0}, {}, "empty");
}

// r = Relu(x); v = r[1:] (a view); Add(v, 1) may write over what it reads only where no other
// value holds the buffer, and r is read again afterwards.
TEST(OptimizedSlice, AViewIsNeverWrittenThrough) {
  testing::GraphBuilder b(13);
  b.input("x", 3);
  const std::string r = b.node("Relu", {"x"});
  const std::string v =
      b.node("Slice", {r, b.constant(ints_of({1})), b.constant(ints_of({8})), b.constant(ints_of({0}))});
  b.node("Add", {v, b.constant(Tensor::scalar<float>(1.0f))}, {}, "y0");
  b.node("Mul", {r, b.constant(Tensor::scalar<float>(2.0f))}, {}, "y1");
  b.output("y0");
  b.output("y1");
  SessionOptions reference;
  reference.disable_optimized = reference.disable_xnnpack = true;
  const Tensor x = rand_tensor({8, 3, 5}, 11);
  auto reference_session = Session::create_from_model(b.model, reference);
  ASSERT_TRUE(reference_session.is_ok()) << reference_session.status().to_string();
  auto want = (*reference_session)->run({Value(x)});
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  auto session = Session::create_from_model(b.model);
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  for (int run = 0; run < 2; ++run) {  // the second on the pool's buffers of the first
    auto got = (*session)->run({Value(x)});
    ASSERT_TRUE(got.is_ok()) << got.status().to_string();
    for (size_t k = 0; k < 2; ++k) {
      const Tensor& g = (*got)[k].tensor();
      const Tensor& w = (*want)[k].tensor();
      EXPECT_TRUE(same_bits(std::vector<float>(g.data<float>(), g.data<float>() + g.numel()),
                            std::vector<float>(w.data<float>(), w.data<float>() + w.numel())))
          << "output " << k << ", run " << run;
    }
  }
}

void split_case(int64_t opset, size_t outputs, Tensor x, int64_t axis, std::vector<int64_t> sizes,
                const std::string& what, bool expect_fast = true) {
  std::vector<In> in = {var(std::move(x))};
  std::vector<Attribute> attrs = {attr_int("axis", axis)};
  if (!sizes.empty() && opset >= 13) in.push_back(cst(ints_of(std::move(sizes))));
  if (!sizes.empty() && opset < 13) attrs.push_back(testing::attr_ints("split", sizes));
  diff_test(Op("Split", "", opset, outputs), in, attrs, expect_fast, what);
}

TEST(OptimizedSlice, SplitRunsOverOddShapesAndOpsets) {
  for (int64_t n : kSizes) {
    const std::string at = " n " + std::to_string(n);
    split_case(13, 2, rand_tensor({1, 5, 3, 2 * n}, 1), 3, {n, n}, "NHWC channel halves" + at);
    split_case(13, 3, rand_tensor({2, n + 3, 4}, 2), 1, {1, n, 2}, "three sizes" + at);
    split_case(18, 2, rand_tensor({2 * n, 3}, 3), 0, {}, "equal halves of the outer axis" + at);
    split_case(11, 2, rand_tensor({3, n + 1, 2}, 4), -2, {n, 1}, "attribute sizes, negative axis" + at);
  }
  split_case(13, 2, Tensor::from_vector<int64_t>({1, 2, 3, 4, 5, 6}, {2, 3}), 1, {1, 2}, "int64");
  split_case(13, 2, rand_tensor({4, 3}, 5), 1, {0, 3}, "an empty part");
}

TEST(OptimizedSlice, LeavesTheRestToTheReference) {
  split_case(18, 3, rand_tensor({7, 2}, 7), 0, {}, "uneven chunks (num_outputs)", false);
  split_case(13, 2, rand_tensor({4, 5}, 8), 1, {2, 2}, "sizes short of the axis (reported)", false);
  split_case(13, 2, rand_tensor({4, 5}, 8), 1, {6, -1}, "a negative size (reported)", false);
  split_case(13, 2, rand_tensor({4, 5}, 8), 2, {2, 3}, "axis past the rank (reported)", false);
  slice_case(rand_tensor({4, 5}, 6), {3}, {0}, {0}, {-1}, "negative step", false);
  slice_case(rand_tensor({4, 5}, 6), {0, 0}, {2, 2}, {0, 0}, {}, "duplicate axis (reported)", false);
  slice_case(rand_tensor({4, 5}, 6), {0}, {2}, {0}, {0}, "step 0 (reported)", false);
}

}  // namespace
}  // namespace xonnx
