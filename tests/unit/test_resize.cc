// Resize family: Resize, Upsample, GridSample, AffineGrid, RoiAlign, Col2Im.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace {

using testing::attr_float;
using testing::attr_floats;
using testing::attr_int;
using testing::attr_ints;
using testing::attr_string;
using testing::run_op;
using testing::values;

Tensor ftensor(std::vector<float> v, Shape s) { return Tensor::from_vector<float>(v, std::move(s)); }
Tensor i64(std::vector<int64_t> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::from_vector<int64_t>(v, {n});
}
Tensor f1(std::vector<float> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::from_vector<float>(v, {n});
}

void expect_resize_near(const std::vector<float>& got, const std::vector<float>& want, float tol = 1e-5f) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "at " << i;
}

// ---- Resize ------------------------------------------------------------------------------

TEST(ResizeOp, NearestUpsampleScales) {
  auto r = run_op("Resize", {ftensor({1, 2, 3, 4}, {1, 1, 2, 2}), Value(), f1({1, 1, 2, 2})},
                  {attr_string("mode", "nearest")}, 19);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{1, 1, 4, 4}));
  expect_resize_near(values<float>((*r)[0]), {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
}

TEST(ResizeOp, NearestWorksForIntegerStringAndBoolTypes) {
  auto r = run_op("Resize", {Tensor::from_vector<int64_t>({7, -9}, {2}), Value(), Value(), i64({4})},
                  {attr_string("mode", "nearest")}, 19);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<int64_t>((*r)[0]), (std::vector<int64_t>{7, 7, -9, -9}));
  auto s = run_op("Resize", {Tensor::from_vector<std::string>({"a", "b"}, {2}), Value(), f1({1.5f})}, {}, 13);
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  ASSERT_EQ((*s)[0].tensor().numel(), 3);
  EXPECT_EQ((*s)[0].tensor().string_data()[2], "b");
  auto u = run_op("Resize", {Tensor::from_vector<uint8_t>({1, 200}, {1, 2}), Value(), f1({1, 2})}, {}, 19);
  ASSERT_TRUE(u.is_ok()) << u.status().to_string();
  EXPECT_EQ(values<uint8_t>((*u)[0]), (std::vector<uint8_t>{1, 1, 200, 200}));
}

TEST(ResizeOp, LinearAlignCorners) {
  auto r = run_op("Resize", {ftensor({0, 3}, {1, 2}), Value(), f1({1, 2})},
                  {attr_string("mode", "linear"), attr_string("coordinate_transformation_mode", "align_corners")}, 19);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  expect_resize_near(values<float>((*r)[0]), {0, 1, 2, 3});
}

// Over the integer output length, as ONNX Runtime and PyTorch (ONNX's reference would place the
// second of 4 x 0.6 = 2 outputs at 3 / 1.4 and give 3.142857).
TEST(ResizeOp, AlignCornersUsesTheIntegerOutputLength) {
  for (const char* mode : {"linear", "cubic"}) {
    auto r = run_op("Resize", {ftensor({1, 2, 3, 4, 5, 6, 7, 8}, {1, 1, 2, 4}), Value(), f1({1, 1, 0.6f, 0.6f})},
                    {attr_string("mode", mode), attr_string("coordinate_transformation_mode", "align_corners")}, 19);
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    EXPECT_EQ((*r)[0].tensor().shape(), (Shape{1, 1, 1, 2}));
    expect_resize_near(values<float>((*r)[0]), {1, 4});
  }
  // torch's interpolate(scale_factor=0.5, align_corners=True) of 5 values: 2 outputs, the ends.
  auto r = run_op("Resize", {ftensor({0, 1, 2, 3, 4}, {5}), Value(), f1({0.5f})},
                  {attr_string("mode", "linear"), attr_string("coordinate_transformation_mode", "align_corners")}, 13);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  expect_resize_near(values<float>((*r)[0]), {0, 4});
}

TEST(ResizeOp, LinearHalfPixelUpsampleClampsEdges) {
  auto r = run_op("Resize", {ftensor({1, 3}, {2}), Value(), f1({2})}, {attr_string("mode", "linear")}, 19);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  expect_resize_near(values<float>((*r)[0]), {1, 1.5f, 2.5f, 3});
}

TEST(ResizeOp, CubicAndAntialiasPreserveConstants) {
  std::vector<float> ones(36, 5.0f);
  for (int aa = 0; aa < 2; ++aa) {
    for (const char* mode : {"linear", "cubic"}) {
      auto r = run_op("Resize", {ftensor(ones, {1, 1, 6, 6}), Value(), f1({1, 1, 0.5f, 0.7f})},
                      {attr_string("mode", mode), attr_int("antialias", aa)}, 19);
      ASSERT_TRUE(r.is_ok()) << r.status().to_string();
      EXPECT_EQ((*r)[0].tensor().shape(), (Shape{1, 1, 3, 4}));
      for (float v : values<float>((*r)[0])) EXPECT_NEAR(v, 5.0f, 1e-5f) << mode << aa;
    }
  }
}

TEST(ResizeOp, CubicMatchesKeysKernel) {
  // Upsample 4 -> 8, asymmetric: output 1 sits at x = 0.5 (taps -1..2 with edge padding).
  auto r = run_op("Resize", {ftensor({1, 2, 4, 8}, {4}), Value(), f1({2})},
                  {attr_string("mode", "cubic"), attr_string("coordinate_transformation_mode", "asymmetric")}, 19);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  const float a = -0.75f;
  auto k = [&](float x) {
    x = std::fabs(x);
    if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
    return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  };
  const float want = k(1.5f) * 1 + k(0.5f) * 1 + k(0.5f) * 2 + k(1.5f) * 4;
  EXPECT_NEAR(values<float>((*r)[0])[1], want, 1e-5f);
  EXPECT_NEAR(values<float>((*r)[0])[0], 1.0f, 1e-6f);
}

TEST(ResizeOp, SizesWithAxesAndKeepAspectRatio) {
  std::vector<float> x(2 * 4 * 6);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  auto r = run_op("Resize", {ftensor(x, {2, 4, 6}), Value(), Value(), i64({2, 9})},
                  {attr_ints("axes", {1, -1}), attr_string("keep_aspect_ratio_policy", "not_larger")}, 19);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{2, 2, 3}));
  auto s = run_op("Resize", {ftensor(x, {2, 4, 6}), Value(), Value(), i64({2, 9})},
                  {attr_ints("axes", {1, 2}), attr_string("keep_aspect_ratio_policy", "not_smaller")}, 19);
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  EXPECT_EQ((*s)[0].tensor().shape(), (Shape{2, 6, 9}));
}

TEST(ResizeOp, NearestModesAndCoordinateModes) {
  // 3 -> 2 with asymmetric: x_orig = 0, 1.5
  auto run = [](const char* nm) {
    return run_op("Resize", {ftensor({10, 20, 30}, {3}), Value(), Value(), i64({2})},
                  {attr_string("coordinate_transformation_mode", "asymmetric"), attr_string("nearest_mode", nm)}, 19);
  };
  auto a = run("round_prefer_floor");
  auto b = run("round_prefer_ceil");
  auto c = run("floor");
  auto d = run("ceil");
  ASSERT_TRUE(a.is_ok() && b.is_ok() && c.is_ok() && d.is_ok());
  EXPECT_EQ(values<float>((*a)[0]), (std::vector<float>{10, 20}));
  EXPECT_EQ(values<float>((*b)[0]), (std::vector<float>{10, 30}));
  EXPECT_EQ(values<float>((*c)[0]), (std::vector<float>{10, 20}));
  EXPECT_EQ(values<float>((*d)[0]), (std::vector<float>{10, 30}));
}

TEST(ResizeOp, TfCropAndResizeExtrapolates) {
  auto r = run_op("Resize", {ftensor({1, 2, 3, 4}, {4}), f1({0.5f, 1.5f}), Value(), i64({3})},
                  {attr_string("mode", "linear"), attr_string("coordinate_transformation_mode", "tf_crop_and_resize"),
                   attr_float("extrapolation_value", -1.0f)},
                  19);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  expect_resize_near(values<float>((*r)[0]), {2.5f, 4.0f, -1.0f});
}

TEST(ResizeOp, Float16Linear) {
  std::vector<Float16> x{Float16{float_to_half(0.0f)}, Float16{float_to_half(2.0f)}};
  auto r = run_op("Resize", {Tensor::from_vector<Float16>(x, {2}), Value(), f1({2})},
                  {attr_string("mode", "linear"), attr_string("coordinate_transformation_mode", "align_corners")}, 19);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  const Tensor& y = (*r)[0].tensor();
  ASSERT_EQ(y.dtype(), DataType::kFloat16);
  EXPECT_NEAR(y.get_as_double(1), 2.0 / 3.0, 1e-3);
}

TEST(ResizeOp, Opset10AndUpsampleUseAsymmetricLegacyNearest) {
  auto r = run_op("Resize", {ftensor({1, 2, 3, 4}, {4}), f1({0.5f})}, {}, 10);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{1, 3}));
  auto u7 = run_op("Upsample", {ftensor({1, 2}, {1, 2})}, {attr_floats("scales", {2, 1.5f})}, 7);
  ASSERT_TRUE(u7.is_ok()) << u7.status().to_string();
  EXPECT_EQ((*u7)[0].tensor().shape(), (Shape{2, 3}));
  EXPECT_EQ(values<float>((*u7)[0]), (std::vector<float>{1, 1, 2, 1, 1, 2}));
  auto u9 = run_op("Upsample", {ftensor({1, 3}, {2}), f1({2})}, {attr_string("mode", "linear")}, 9);
  ASSERT_TRUE(u9.is_ok()) << u9.status().to_string();
  expect_resize_near(values<float>((*u9)[0]), {1, 2, 3, 3});
}

TEST(ResizeOp, Errors) {
  const Tensor x = ftensor({1, 2, 3, 4}, {2, 2});
  // both scales and sizes
  EXPECT_FALSE(run_op("Resize", {x, Value(), f1({1, 2}), i64({2, 4})}, {}, 19).is_ok());
  // neither
  EXPECT_FALSE(run_op("Resize", {x}, {}, 19).is_ok());
  // wrong length, non-positive scale
  EXPECT_FALSE(run_op("Resize", {x, Value(), f1({2})}, {}, 19).is_ok());
  EXPECT_FALSE(run_op("Resize", {x, Value(), f1({1, 0})}, {}, 19).is_ok());
  EXPECT_FALSE(run_op("Resize", {x, Value(), f1({1, -2})}, {}, 19).is_ok());
  EXPECT_FALSE(run_op("Resize", {x, Value(), Value(), i64({2, -1})}, {}, 19).is_ok());
  // bad attributes
  EXPECT_FALSE(run_op("Resize", {x, Value(), f1({1, 2})}, {attr_string("mode", "area")}, 19).is_ok());
  EXPECT_FALSE(
      run_op("Resize", {x, Value(), f1({1, 2})}, {attr_string("coordinate_transformation_mode", "x")}, 19).is_ok());
  EXPECT_FALSE(run_op("Resize", {x, Value(), f1({1, 2})}, {attr_ints("axes", {1, 1})}, 19).is_ok());
  EXPECT_FALSE(run_op("Resize", {x, Value(), f1({2})}, {attr_ints("axes", {5})}, 19).is_ok());
  // tf_crop_and_resize without roi
  EXPECT_FALSE(run_op("Resize", {x, Value(), f1({1, 2})},
                      {attr_string("coordinate_transformation_mode", "tf_crop_and_resize")}, 19)
                   .is_ok());
  // Upsample scales < 1, string data with linear
  EXPECT_FALSE(run_op("Upsample", {x, f1({1, 0.5f})}, {}, 9).is_ok());
  EXPECT_FALSE(run_op("Resize", {Tensor::from_vector<std::string>({"a", "b"}, {2}), Value(), f1({2})},
                      {attr_string("mode", "linear")}, 13)
                   .is_ok());
}

// ---- GridSample / AffineGrid ---------------------------------------------------------------

TEST(GridSampleOp, IdentityGridReproducesInput) {
  // AffineGrid with the identity theta + GridSample(align_corners) is the identity.
  const std::vector<float> xv{1, 2, 3, 4, 5, 6};
  auto g = run_op("AffineGrid", {ftensor({1, 0, 0, 0, 1, 0}, {1, 2, 3}), i64({1, 1, 2, 3})},
                  {attr_int("align_corners", 1)}, 20);
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();
  EXPECT_EQ((*g)[0].tensor().shape(), (Shape{1, 2, 3, 2}));
  expect_resize_near(values<float>((*g)[0]), {-1, -1, 0, -1, 1, -1, -1, 1, 0, 1, 1, 1});
  for (const char* mode : {"linear", "nearest", "cubic"}) {
    auto r = run_op("GridSample", {ftensor(xv, {1, 1, 2, 3}), (*g)[0]},
                    {attr_int("align_corners", 1), attr_string("mode", mode)}, 20);
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    expect_resize_near(values<float>((*r)[0]), xv, 1e-5f);
  }
}

TEST(GridSampleOp, PaddingModes) {
  const Tensor x = ftensor({1, 2, 3, 4}, {1, 1, 2, 2});
  const Tensor grid = ftensor({-3, -3, 3, 3}, {1, 1, 2, 2});  // far outside
  auto z = run_op("GridSample", {x, grid}, {attr_string("padding_mode", "zeros")}, 16);
  auto b = run_op("GridSample", {x, grid}, {attr_string("padding_mode", "border")}, 16);
  auto r =
      run_op("GridSample", {x, grid}, {attr_string("padding_mode", "reflection"), attr_string("mode", "nearest")}, 16);
  ASSERT_TRUE(z.is_ok() && b.is_ok() && r.is_ok());
  expect_resize_near(values<float>((*z)[0]), {0, 0});
  expect_resize_near(values<float>((*b)[0]), {1, 4});
  EXPECT_EQ((*r)[0].tensor().numel(), 2);
}

TEST(GridSampleOp, Errors) {
  const Tensor x = ftensor({1, 2, 3, 4}, {1, 1, 2, 2});
  EXPECT_FALSE(run_op("GridSample", {x, ftensor({0, 0, 0}, {1, 1, 1, 3})}, {}, 16).is_ok());
  EXPECT_FALSE(run_op("GridSample", {x, ftensor({0, 0}, {1, 1, 1, 2})}, {attr_string("mode", "linear")}, 16).is_ok());
  EXPECT_FALSE(run_op("GridSample", {x, ftensor({0, 0}, {1, 1, 1, 2})}, {attr_string("mode", "bilinear")}, 20).is_ok());
  EXPECT_FALSE(
      run_op("GridSample", {ftensor({1}, {1, 1, 1, 1, 1}), ftensor({0, 0, 0}, {1, 1, 1, 1, 3})}, {}, 16).is_ok());
  EXPECT_FALSE(run_op("AffineGrid", {ftensor({1, 0, 0, 0, 1, 0}, {1, 2, 3}), i64({1, 1, 2, 3, 4})}, {}, 20).is_ok());
  EXPECT_FALSE(run_op("AffineGrid", {ftensor({1, 0, 0, 0, 1, 0}, {1, 2, 3}), i64({1, 1})}, {}, 20).is_ok());
}

// ---- RoiAlign / Col2Im ---------------------------------------------------------------------

TEST(RoiAlignOp, ConstantInputGivesConstantOutput) {
  std::vector<float> x(2 * 3 * 4 * 4, 2.0f);
  const Tensor rois = ftensor({0, 0, 3, 3, 1, 1, 2, 2}, {2, 4});
  const Tensor bi = Tensor::from_vector<int64_t>({0, 1}, {2});
  for (const char* mode : {"avg", "max"}) {
    auto r = run_op("RoiAlign", {ftensor(x, {2, 3, 4, 4}), rois, bi},
                    {attr_int("output_height", 2), attr_int("output_width", 3), attr_string("mode", mode)}, 16);
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    EXPECT_EQ((*r)[0].tensor().shape(), (Shape{2, 3, 2, 3}));
    if (std::string(mode) == "avg") {
      for (float v : values<float>((*r)[0])) EXPECT_NEAR(v, 2.0f, 1e-5f);
    }
  }
}

// RoIs split over two threads give the single thread's values, and an error in the last RoI
// is still reported (Faster R-CNN pools ~1000 RoIs of 256 channels).
TEST(RoiAlignOp, ThreadsGiveTheSameValues) {
  const int64_t rois_n = 300, c = 8;
  std::vector<float> x(static_cast<size_t>(2 * c * 20 * 24)), boxes;
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37) % 101) / 50.0f - 1.0f;
  std::vector<int64_t> batch;
  for (int64_t r = 0; r < rois_n; ++r) {
    const float x1 = static_cast<float>(r % 17), y1 = static_cast<float>(r % 13);
    boxes.insert(boxes.end(), {x1, y1, x1 + 1.5f + static_cast<float>(r % 7), y1 + 0.5f + static_cast<float>(r % 5)});
    batch.push_back(r % 2);
  }
  const std::vector<Attribute> attrs = {attr_int("output_height", 7), attr_int("output_width", 7),
                                        attr_int("sampling_ratio", 2), attr_float("spatial_scale", 0.5f)};
  const std::vector<Value> in = {ftensor(x, {2, c, 20, 24}), ftensor(boxes, {rois_n, 4}),
                                 Tensor::from_vector<int64_t>(batch, {rois_n})};
  auto one = run_op("RoiAlign", in, attrs, 16, 1, "", 1);
  auto two = run_op("RoiAlign", in, attrs, 16, 1, "", 2);
  ASSERT_TRUE(one.is_ok() && two.is_ok()) << two.status().to_string();
  EXPECT_EQ(values<float>((*one)[0]), values<float>((*two)[0]));
  batch.back() = 2;
  auto bad = run_op("RoiAlign", {in[0], in[1], Tensor::from_vector<int64_t>(batch, {rois_n})}, attrs, 16, 1, "", 2);
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().to_string().find("batch_indices[299]"), std::string::npos) << bad.status().to_string();
}

TEST(RoiAlignOp, Errors) {
  const Tensor x = ftensor(std::vector<float>(16, 1.0f), {1, 1, 4, 4});
  EXPECT_FALSE(
      run_op("RoiAlign", {x, ftensor({0, 0, 1, 1}, {1, 4}), Tensor::from_vector<int64_t>({1}, {1})}, {}, 16).is_ok());
  EXPECT_FALSE(
      run_op("RoiAlign", {x, ftensor({0, 0, 1}, {1, 3}), Tensor::from_vector<int64_t>({0}, {1})}, {}, 16).is_ok());
  EXPECT_FALSE(run_op("RoiAlign", {x, ftensor({0, 0, 1, 1}, {1, 4}), Tensor::from_vector<int64_t>({0}, {1})},
                      {attr_string("mode", "sum")}, 16)
                   .is_ok());
}

TEST(Col2ImOp, OverlappingBlocksAccumulate) {
  // 1x3 image, 1x2 blocks, stride 1: two blocks; the middle pixel gets both contributions.
  auto r = run_op("Col2Im", {ftensor({1, 2, 10, 20}, {1, 2, 2}), i64({1, 3}), i64({1, 2})}, {}, 18);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{1, 1, 1, 3}));
  expect_resize_near(values<float>((*r)[0]), {1, 12, 20});
}

TEST(Col2ImOp, Errors) {
  EXPECT_FALSE(run_op("Col2Im", {ftensor({1, 2, 10, 20}, {1, 2, 2}), i64({1, 4}), i64({1, 2})}, {}, 18).is_ok());
  EXPECT_FALSE(run_op("Col2Im", {ftensor({1, 2, 10, 20}, {1, 2, 2}), i64({1, 3}), i64({2})}, {}, 18).is_ok());
  EXPECT_FALSE(run_op("Col2Im", {ftensor({1, 2, 10}, {1, 3, 1}), i64({1, 3}), i64({1, 2})}, {}, 18).is_ok());
}

}  // namespace
}  // namespace xonnx
