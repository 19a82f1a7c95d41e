// Own Resize (resize.cc, resize_plan.h), Expand (expand.cc) and Pad (pad.cc) vs the reference
// kernels over odd sizes, every covered mode, and the cases they leave to the reference.
#include <string>
#include <vector>

#include "tests/unit/test_optimized_common.h"

namespace xonnx {
namespace {

using namespace opttest;

Tensor scales_of(std::vector<float> v) { return Tensor::from_vector<float>(v, {static_cast<int64_t>(v.size())}); }
void resize_case(const Shape& x, Tensor scales, Tensor sizes, const std::vector<Attribute>& attrs,
                 const std::string& what, bool expect_fast = true, int64_t opset = 17) {
  std::vector<In> in = {var(rand_tensor(x, 7)), In{}, scales.defined() ? cst(scales) : In{},
                        sizes.defined() ? cst(sizes) : In{}};
  if (!sizes.defined()) in.pop_back();
  // Same taps, same order, in double: the same bits (a target whose compiler contracts the
  // multiply-adds differently in the two kernels may differ in the last bit).
  diff_test(Op("Resize", "", opset), in, attrs, expect_fast, what, 1e-7, 0);
}

TEST(OptimizedResize, LinearAndNearestOverOddSizes) {
  const char* coords[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"};
  for (int64_t h : {1, 3, 13}) {
    for (int64_t w : {1, 3, 13, 127}) {
      for (const char* coord : coords) {
        const std::string at = std::string(coord) + " " + std::to_string(h) + "x" + std::to_string(w);
        resize_case({1, 3, h, w}, scales_of({1, 1, 2, 2}), Tensor(),
                    {attr_string("mode", "linear"), attr_string("coordinate_transformation_mode", coord)},
                    "linear x2 " + at);
        resize_case({1, 2, h, w}, scales_of({1, 1, 0.5f, 1.5f}), Tensor(),  // 13 x 0.5 and 13 x 1.5: fractional
                    {attr_string("mode", "linear"), attr_string("coordinate_transformation_mode", coord)},
                    "linear x0.5 x1.5 " + at, h >= 2);  // h 1 x 0.5 is empty
        resize_case({2, 1, h, w}, Tensor(), ints_of({2, 1, 2 * h + 1, w / 2 + 1}),
                    {attr_string("mode", "linear"), attr_string("coordinate_transformation_mode", coord)},
                    "linear sizes " + at);
        for (const char* nm : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}) {
          resize_case({1, 2, h, w}, scales_of({1, 1, 3, 0.5f}), Tensor(),
                      {attr_string("coordinate_transformation_mode", coord), attr_string("nearest_mode", nm)},
                      std::string("nearest ") + nm + " " + at, w >= 2);  // w 1 x 0.5 is empty
        }
      }
    }
  }
  resize_case({1, 3, 7, 9}, scales_of({1, 1, 1, 1}), Tensor(), {attr_string("mode", "linear")}, "identity");
  resize_case({1, 3, 7, 9}, scales_of({1, 1, 1, 2}), Tensor(), {attr_string("mode", "linear")}, "width only");
  resize_case({5, 7, 9}, scales_of({1, 2, 2}), Tensor(), {attr_string("mode", "linear")}, "3-D");
  resize_case({1, 3, 4, 4}, scales_of({1, 1, 2, 2}), Tensor(), {attr_string("mode", "linear")}, "Resize-11", true, 11);
}

TEST(OptimizedResize, SpecialValuesFollowTheReference) {
  std::vector<In> in = {var(with_specials(rand_tensor({1, 2, 5, 6}, 3))), In{}, cst(scales_of({1, 1, 2, 2}))};
  diff_test(Op("Resize"), in, {attr_string("mode", "linear")}, true, "linear with NaN / inf", 1e-7, 0);
  diff_test(Op("Resize"), in, {}, true, "nearest with NaN / inf");
}

TEST(OptimizedResize, LeavesTheRestToTheReference) {
  resize_case({1, 3, 5, 5}, scales_of({1, 1, 2, 2}), Tensor(), {attr_string("mode", "cubic")}, "cubic", false);
  resize_case({1, 3, 5, 5}, scales_of({1, 2, 2, 2}), Tensor(), {attr_string("mode", "linear")}, "channel axis", false);
  resize_case({1, 3, 5, 5}, scales_of({1, 1, 2, 2}), Tensor(),
              {attr_string("mode", "linear"), attr_string("coordinate_transformation_mode", "tf_half_pixel_for_nn")},
              "tf_half_pixel_for_nn", false, 11);
  resize_case({1, 3, 5, 5}, scales_of({1, 1, 0.5f, 0.5f}), Tensor(),
              {attr_string("mode", "linear"), attr_int("antialias", 1)}, "antialias", false, 18);
  resize_case({1, 3, 5, 5}, Tensor(), ints_of({1, 3, 10}), {attr_string("mode", "linear")}, "bad sizes (reported)",
              false);
}

void expand_case(Tensor x, std::vector<int64_t> shape, const std::string& what, bool expect_fast = true) {
  diff_test(Op("Expand"), {var(std::move(x)), cst(ints_of(std::move(shape)))}, {}, expect_fast, what);
}

TEST(OptimizedExpand, CopiesAndFillsOverOddShapes) {
  for (int64_t n : {1, 3, 13, 127}) {
    const std::string at = " n " + std::to_string(n);
    expand_case(rand_tensor({1, 2, 1, n, 3}, 1), {1, 2, 4, n, 3}, "GQA heads" + at);
    expand_case(rand_tensor({n, 1}, 2), {n, 13}, "column" + at);
    expand_case(rand_tensor({1, n}, 3), {3, 1, n}, "row, higher rank" + at);
    expand_case(rand_tensor({3, 1, n, 1}, 4), {3, 5, n, 2}, "mixed" + at);
  }
  expand_case(Tensor::from_vector<int64_t>({1, 2, 3}, {3, 1}), {2, 3, 4}, "int64");
  expand_case(Tensor::from_vector<uint8_t>({1, 0, 1}, {1, 3}), {5, 3}, "uint8");
  expand_case(rand_tensor({1}, 5), {0, 4}, "empty output");
  expand_case(rand_tensor({2, 3}, 6), {2, 3}, "same shape (the reference passes it on)", false);
  expand_case(rand_tensor({2, 3}, 6), {4, 3}, "does not broadcast (reported)", false);
}

// Own Pad (pad.cc): constant mode with pads as inputs (opset 11+) or attributes (opset 2-10).
void pad_case(Tensor x, std::vector<int64_t> pads, const std::string& what, bool expect_fast = true,
              Tensor value = Tensor(), std::vector<Attribute> attrs = {}, int64_t opset = 13) {
  std::vector<In> in = {var(std::move(x)), cst(ints_of(std::move(pads)))};
  if (value.defined()) in.push_back(cst(std::move(value)));
  diff_test(Op("Pad", "", opset), in, attrs, expect_fast, what, 0, 0);
}

TEST(OptimizedPad, ConstantPadsOverOddShapes) {
  for (int64_t n : {1, 3, 13, 127}) {
    const std::string at = " n " + std::to_string(n);
    pad_case(rand_tensor({1, 2, n, 5}, 1), {0, 0, 1, 2, 0, 0, 2, 1}, "spatial" + at);
    pad_case(rand_tensor({2, n, 3, 4, 5}, 2), {0, 1, 0, 0, 0, 0, 2, 0, 0, 0}, "frames of [N, D, C, H, W]" + at);
    pad_case(rand_tensor({n, 3}, 3), {1, 0, 0, 0}, "leading axis only" + at);
    pad_case(rand_tensor({n}, 4), {3, 0}, "1-D" + at, true, Tensor::scalar<float>(-2.5f));
  }
  pad_case(rand_tensor({2, 3}, 5), {0, 0, 0, 0}, "no padding");
  pad_case(Tensor::from_vector<int64_t>({1, 2, 3, 4}, {2, 2}), {1, 1, 0, 2}, "int64 with a value", true,
           Tensor::scalar<int64_t>(7));
  pad_case(Tensor::from_vector<uint8_t>({1, 2, 3}, {1, 3}), {0, 2, 1, 0}, "uint8");
  pad_case(rand_tensor({0, 3}, 6), {1, 0, 1, 0}, "empty input");
  // Opset 2-10: pads and value are attributes.
  diff_test(Op("Pad", "", 10), {var(rand_tensor({2, 3, 4}, 7))},
            {attr_ints("pads", {0, 1, 2, 1, 0, 3}), attr_float("value", 1.5f)}, true, "opset 10 attributes", 0, 0);
}

// Reflect, edge and wrap (opset 19), pads up to longer than the axis (they repeat).
TEST(OptimizedPad, ReflectEdgeAndWrap) {
  for (const char* mode : {"reflect", "edge", "wrap"}) {
    for (int64_t n : {1, 3, 13, 127}) {
      const std::string at = std::string(mode) + " n " + std::to_string(n);
      pad_case(rand_tensor({1, 2, n, 5}, 1), {0, 0, 1, 2, 0, 0, 2, 1}, "spatial " + at, true, Tensor(),
               {attr_string("mode", mode)}, 19);
      pad_case(rand_tensor({n, 3}, 2), {2, 4, 1, 7}, "longer than the axis " + at, true, Tensor(),
               {attr_string("mode", mode)}, 19);
    }
  }
  pad_case(Tensor::from_vector<int64_t>({1, 2, 3, 4, 5, 6}, {2, 3}), {1, 2, 1, 0}, "int64 reflect", true, Tensor(),
           {attr_string("mode", "reflect")}, 13);
  diff_test(Op("Pad", "", 10), {var(rand_tensor({2, 3, 4}, 7))},
            {attr_ints("pads", {0, 1, 2, 1, 0, 3}), attr_string("mode", "edge")}, true, "opset 10 edge", 0, 0);
}

TEST(OptimizedPad, LeavesTheRestToTheReference) {
  pad_case(rand_tensor({3, 4}, 1), {0, -1, 0, 1}, "negative pads (a crop)", false);
  pad_case(rand_tensor({3, 4}, 1), {0, int64_t{1} << 40, 0, 1}, "pads too large (reported)", false);
  pad_case(rand_tensor({0, 4}, 2), {1, 1, 1, 1}, "reflect of an empty axis (reported)", false, Tensor(),
           {attr_string("mode", "reflect")});
  pad_case(rand_tensor({3, 4}, 3), {1, 1, 1}, "pads of the wrong length (reported)", false);
  diff_test(Op("Pad", "", 18), {var(rand_tensor({3, 4}, 4)), cst(ints_of({1, 1})), In{}, cst(ints_of({1}))}, {}, false,
            "opset 18 axes");
}

}  // namespace
}  // namespace xonnx
