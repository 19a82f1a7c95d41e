// Signal ops: DFT, STFT, Hann/Hamming/Blackman windows, MelWeightMatrix.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace {

using testing::attr_int;
using testing::doubles;
using testing::run_op;
using testing::tv;

constexpr double kPi = 3.14159265358979323846;

template <typename T>
Value scalar(T v) {
  return Value(Tensor::scalar<T>(v));
}
void expect_near(const std::vector<double>& got, const std::vector<double>& want, double tol = 1e-5) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "at " << i;
}

TEST(SignalOps, DftOfImpulseAndConstant) {
  // opset 20, default axis -2 on [1, 4, 1]
  auto r = run_op("DFT", {tv<float>({1, 0, 0, 0}, {1, 4, 1})}, {}, 20);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{1, 4, 2}));
  expect_near(doubles((*r)[0]), {1, 0, 1, 0, 1, 0, 1, 0});
  r = run_op("DFT", {tv<float>({1, 1, 1, 1}, {1, 4, 1})}, {}, 20);
  ASSERT_TRUE(r.is_ok());
  expect_near(doubles((*r)[0]), {4, 0, 0, 0, 0, 0, 0, 0});
  // x = [0, 1, 0, 0]: X[k] = exp(-2 pi i k / 4) = 1, -i, -1, i
  r = run_op("DFT", {tv<float>({0, 1, 0, 0}, {1, 4, 1})}, {}, 20);
  ASSERT_TRUE(r.is_ok());
  expect_near(doubles((*r)[0]), {1, 0, 0, -1, -1, 0, 0, 1});
}

TEST(SignalOps, DftOnesidedLengthAndInverseRoundTrip) {
  std::vector<float> x = {1, 2, 3, 4, 5};
  auto r = run_op("DFT", {tv<float>(x, {1, 5, 1})}, {attr_int("onesided", 1)}, 20);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{1, 3, 2}));
  // full complex forward then inverse gives back x with zero imaginary parts
  auto f = run_op("DFT", {tv<float>(x, {1, 5, 1})}, {}, 20);
  ASSERT_TRUE(f.is_ok());
  auto spec = doubles((*f)[0]);
  std::vector<float> specf(spec.begin(), spec.end());
  auto b = run_op("DFT", {tv<float>(specf, {1, 5, 2})}, {attr_int("inverse", 1)}, 20);
  ASSERT_TRUE(b.is_ok());
  expect_near(doubles((*b)[0]), {1, 0, 2, 0, 3, 0, 4, 0, 5, 0}, 1e-4);
  // inverse + onesided is irfft: [1, 3, 2] half spectrum of a length-4 signal -> [1, 4, 1]
  auto h = run_op("DFT", {tv<float>({1, 2, 3, 4}, {1, 4, 1})}, {attr_int("onesided", 1)}, 20);
  ASSERT_TRUE(h.is_ok());
  auto hs = doubles((*h)[0]);
  std::vector<float> hsf(hs.begin(), hs.end());
  auto ir = run_op("DFT", {tv<float>(hsf, {1, 3, 2})}, {attr_int("inverse", 1), attr_int("onesided", 1)}, 20);
  ASSERT_TRUE(ir.is_ok()) << ir.status().to_string();
  EXPECT_EQ((*ir)[0].tensor().shape(), (Shape{1, 4, 1}));
  expect_near(doubles((*ir)[0]), {1, 2, 3, 4}, 1e-4);
}

TEST(SignalOps, DftLengthAndAxisAcrossVersions) {
  // [1, 2, 2, 1]; opset 17 axis attribute 2 vs opset 20 axis input 2 / -2
  std::vector<float> x = {1, 2, 3, 4};
  auto a = run_op("DFT", {tv<float>(x, {1, 2, 2, 1})}, {attr_int("axis", 2)}, 17);
  auto b = run_op("DFT", {tv<float>(x, {1, 2, 2, 1}), Value(), scalar<int64_t>(2)}, {}, 20);
  auto c = run_op("DFT", {tv<float>(x, {1, 2, 2, 1}), Value(), scalar<int64_t>(-2)}, {}, 20);
  ASSERT_TRUE(a.is_ok()) << a.status().to_string();
  ASSERT_TRUE(b.is_ok()) << b.status().to_string();
  ASSERT_TRUE(c.is_ok());
  expect_near(doubles((*a)[0]), {3, 0, -1, 0, 7, 0, -1, 0});
  expect_near(doubles((*b)[0]), doubles((*a)[0]));
  expect_near(doubles((*c)[0]), doubles((*a)[0]));
  // dft_length zero-pads: [1] padded to 3 -> all ones
  auto d = run_op("DFT", {tv<float>({1}, {1, 1, 1}), scalar<int64_t>(3)}, {}, 20);
  ASSERT_TRUE(d.is_ok()) << d.status().to_string();
  expect_near(doubles((*d)[0]), {1, 0, 1, 0, 1, 0});
  // double input keeps its type
  auto e = run_op("DFT", {tv<double>({1, 1}, {1, 2, 1})}, {}, 20);
  ASSERT_TRUE(e.is_ok());
  EXPECT_EQ((*e)[0].tensor().dtype(), DataType::kDouble);
}

TEST(SignalOps, DftRejectsBadInputs) {
  // last axis is neither 1 nor 2
  EXPECT_FALSE(run_op("DFT", {tv<float>({1, 2, 3}, {1, 3})}, {}, 20).is_ok());
  // axis pointing at the complex dimension
  EXPECT_FALSE(run_op("DFT", {tv<float>({1, 2}, {1, 2, 1}), Value(), scalar<int64_t>(-1)}, {}, 20).is_ok());
  EXPECT_FALSE(run_op("DFT", {tv<float>({1, 2}, {1, 2, 1}), Value(), scalar<int64_t>(2)}, {}, 20).is_ok());
  // non-positive dft_length
  EXPECT_FALSE(run_op("DFT", {tv<float>({1, 2}, {1, 2, 1}), scalar<int64_t>(0)}, {}, 20).is_ok());
  // integer input
  EXPECT_FALSE(run_op("DFT", {tv<int32_t>({1, 2}, {1, 2, 1})}, {}, 20).is_ok());
}

TEST(SignalOps, StftFramesAndWindow) {
  // signal [1, 6, 1], frame_length 4, step 2 -> 2 frames, onesided 3 bins
  std::vector<float> x = {1, 1, 1, 1, 0, 0};
  auto r = run_op("STFT", {tv<float>(x, {1, 6, 1}), scalar<int64_t>(2), Value(), scalar<int64_t>(4)}, {}, 17);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{1, 2, 3, 2}));
  auto y = doubles((*r)[0]);
  // frame 0 = [1,1,1,1] -> [4, 0, 0]; frame 1 = [1,1,0,0] -> [2, 1-i, 0]
  expect_near(y, {4, 0, 0, 0, 0, 0, 2, 0, 1, -1, 0, 0});
  // window [1, 0, 0, 0] picks the first sample of each frame
  r = run_op("STFT", {tv<float>(x, {1, 6, 1}), scalar<int64_t>(2), tv<float>({1, 0, 0, 0}, {4})},
             {attr_int("onesided", 0)}, 17);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{1, 2, 4, 2}));
  y = doubles((*r)[0]);
  for (int k = 0; k < 4; ++k) EXPECT_NEAR(y[(4 + k) * 2], 1.0, 1e-6);
  // frame_length that disagrees with the window
  EXPECT_FALSE(run_op("STFT",
                      {tv<float>(x, {1, 6, 1}), scalar<int64_t>(2), tv<float>({1, 0, 0, 0}, {4}), scalar<int64_t>(3)},
                      {}, 17)
                   .is_ok());
  // frame longer than the signal
  EXPECT_FALSE(
      run_op("STFT", {tv<float>(x, {1, 6, 1}), scalar<int64_t>(2), Value(), scalar<int64_t>(7)}, {}, 17).is_ok());
}

TEST(SignalOps, WindowFunctions) {
  auto r = run_op("HannWindow", {scalar<int32_t>(4)}, {}, 17);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  expect_near(doubles((*r)[0]), {0, 0.5, 1, 0.5});
  r = run_op("HannWindow", {scalar<int64_t>(3)}, {attr_int("periodic", 0)}, 17);
  ASSERT_TRUE(r.is_ok());
  expect_near(doubles((*r)[0]), {0, 1, 0});
  r = run_op("HammingWindow", {scalar<int32_t>(4)}, {}, 17);
  ASSERT_TRUE(r.is_ok());
  const double a0 = 25.0 / 46.0;
  expect_near(doubles((*r)[0]), {a0 - (1 - a0), a0, a0 + (1 - a0), a0});
  r = run_op("BlackmanWindow", {scalar<int32_t>(4)}, {attr_int("output_datatype", 11)}, 17);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().dtype(), DataType::kDouble);
  std::vector<double> want;
  for (int i = 0; i < 4; ++i) {
    want.push_back(0.42 - 0.5 * std::cos(2 * kPi * i / 4) + 0.08 * std::cos(4 * kPi * i / 4));
  }
  expect_near(doubles((*r)[0]), want, 1e-12);
  r = run_op("HannWindow", {scalar<int32_t>(0)}, {}, 17);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{0}));
  EXPECT_FALSE(run_op("HannWindow", {scalar<int32_t>(-1)}, {}, 17).is_ok());
  EXPECT_FALSE(run_op("HannWindow", {scalar<float>(4)}, {}, 17).is_ok());
  EXPECT_FALSE(run_op("HannWindow", {scalar<int32_t>(4)}, {attr_int("output_datatype", 8)}, 17).is_ok());
}

TEST(SignalOps, MelWeightMatrixTriangles) {
  auto r = run_op(
      "MelWeightMatrix",
      {scalar<int32_t>(8), scalar<int32_t>(16), scalar<int32_t>(8192), scalar<float>(0), scalar<float>(4096)}, {}, 17);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{9, 8}));
  auto m = doubles((*r)[0]);
  for (double v : m) {
    EXPECT_GE(v, 0.0);
    EXPECT_LE(v, 1.0);
  }
  EXPECT_NEAR(m[0], 1.0, 1e-6);  // first filter peaks at bin 0
  EXPECT_FALSE(
      run_op("MelWeightMatrix",
             {scalar<int32_t>(0), scalar<int32_t>(16), scalar<int32_t>(8192), scalar<float>(0), scalar<float>(4096)},
             {}, 17)
          .is_ok());
  EXPECT_FALSE(
      run_op("MelWeightMatrix",
             {scalar<int32_t>(8), scalar<int32_t>(16), scalar<int32_t>(8192), scalar<float>(100), scalar<float>(50)},
             {}, 17)
          .is_ok());
}

}  // namespace
}  // namespace xonnx
