// Recurrent ops: RNN, GRU, LSTM.
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
using testing::attr_string;
using testing::attr_strings;
using testing::doubles;
using testing::run_op;
using testing::tv;

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

TEST(RnnOps, SimpleRnnForwardMatchesHandComputation) {
  // hidden 1, input 1, seq 2, batch 1: h1 = tanh(w*x1 + b), h2 = tanh(w*x2 + r*h1 + b)
  const float w = 0.5f, r = -0.3f, wb = 0.1f, rb = 0.2f;
  auto res = run_op(
      "RNN",
      {tv<float>({1, 2}, {2, 1, 1}), tv<float>({w}, {1, 1, 1}), tv<float>({r}, {1, 1, 1}), tv<float>({wb, rb}, {1, 2})},
      {attr_int("hidden_size", 1)}, 14, 2);
  ASSERT_TRUE(res.is_ok()) << res.status().to_string();
  const double h1 = std::tanh(w * 1 + wb + rb);
  const double h2 = std::tanh(w * 2 + r * h1 + wb + rb);
  EXPECT_EQ((*res)[0].tensor().shape(), (Shape{2, 1, 1, 1}));
  auto y = doubles((*res)[0]);
  EXPECT_NEAR(y[0], h1, 1e-6);
  EXPECT_NEAR(y[1], h2, 1e-6);
  EXPECT_EQ((*res)[1].tensor().shape(), (Shape{1, 1, 1}));
  EXPECT_NEAR(doubles((*res)[1])[0], h2, 1e-6);
}

TEST(RnnOps, BidirectionalReverseHalfSeesReversedSequence) {
  const std::vector<float> x = {1, 2, 3};
  auto res =
      run_op("RNN", {tv<float>(x, {3, 1, 1}), tv<float>({0.7f, 0.7f}, {2, 1, 1}), tv<float>({0.2f, 0.2f}, {2, 1, 1})},
             {attr_int("hidden_size", 1), attr_string("direction", "bidirectional")}, 14, 2);
  ASSERT_TRUE(res.is_ok()) << res.status().to_string();
  EXPECT_EQ((*res)[0].tensor().shape(), (Shape{3, 2, 1, 1}));
  auto fwd =
      run_op("RNN", {tv<float>({3, 2, 1}, {3, 1, 1}), tv<float>({0.7f}, {1, 1, 1}), tv<float>({0.2f}, {1, 1, 1})},
             {attr_int("hidden_size", 1)}, 14, 2);
  ASSERT_TRUE(fwd.is_ok());
  auto y = doubles((*res)[0]);
  auto yf = doubles((*fwd)[0]);
  // reverse direction output at time t equals forward-on-reversed output at time 2-t
  for (int t = 0; t < 3; ++t) EXPECT_NEAR(y[t * 2 + 1], yf[2 - t], 1e-6);
  EXPECT_NEAR(doubles((*res)[1])[1], yf[2], 1e-6);
}

TEST(RnnOps, LayoutOneTransposesBatchAndSequence) {
  // batch 2, seq 3 in layout 1; W = 1, R = 0, Relu: Y equals X.
  std::vector<float> x = {1, 2, 3, 4, 5, 6};
  auto res = run_op("RNN", {tv<float>(x, {2, 3, 1}), tv<float>({1}, {1, 1, 1}), tv<float>({0}, {1, 1, 1})},
                    {attr_int("hidden_size", 1), attr_int("layout", 1), attr_strings("activations", {"Relu"})}, 14, 2);
  ASSERT_TRUE(res.is_ok()) << res.status().to_string();
  EXPECT_EQ((*res)[0].tensor().shape(), (Shape{2, 3, 1, 1}));
  auto y = doubles((*res)[0]);
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(y[i], x[i], 1e-6);
  EXPECT_EQ((*res)[1].tensor().shape(), (Shape{2, 1, 1}));
  auto yh = doubles((*res)[1]);
  EXPECT_NEAR(yh[0], 3, 1e-6);
  EXPECT_NEAR(yh[1], 6, 1e-6);
}

TEST(RnnOps, SequenceLensStopsEarlyAndZeroFills) {
  std::vector<float> x = {1, 10, 2, 20};  // [seq 2, batch 2, 1]
  auto res = run_op("RNN",
                    {tv<float>(x, {2, 2, 1}), tv<float>({1}, {1, 1, 1}), tv<float>({1}, {1, 1, 1}), Value(),
                     tv<int32_t>({1, 2}, {2})},
                    {attr_int("hidden_size", 1), attr_strings("activations", {"Affine"}),
                     attr_floats("activation_alpha", {1.0f}), attr_floats("activation_beta", {0.0f})},
                    14, 2);
  ASSERT_TRUE(res.is_ok()) << res.status().to_string();
  auto y = doubles((*res)[0]);  // [2,1,2,1]
  EXPECT_NEAR(y[0], 1, 1e-6);
  EXPECT_NEAR(y[1], 10, 1e-6);
  EXPECT_NEAR(y[2], 0, 1e-6);   // batch 0 stopped after 1 step
  EXPECT_NEAR(y[3], 30, 1e-6);  // 20 + 10
  auto yh = doubles((*res)[1]);
  EXPECT_NEAR(yh[0], 1, 1e-6);
  EXPECT_NEAR(yh[1], 30, 1e-6);
}

TEST(RnnOps, GruZeroWeightsHalvesState) {
  // z = sigmoid(0) = 0.5, candidate = tanh(0) = 0 -> h = 0.5 * h_prev
  auto res = run_op("GRU",
                    {tv<float>({0, 0}, {2, 1, 1}), tv<float>({0, 0, 0}, {1, 3, 1}), tv<float>({0, 0, 0}, {1, 3, 1}),
                     Value(), Value(), tv<float>({1}, {1, 1, 1})},
                    {attr_int("hidden_size", 1)}, 7, 2);
  ASSERT_TRUE(res.is_ok()) << res.status().to_string();
  auto y = doubles((*res)[0]);
  EXPECT_NEAR(y[0], 0.5, 1e-6);
  EXPECT_NEAR(y[1], 0.25, 1e-6);
}

TEST(RnnOps, GruLinearBeforeResetDiffers) {
  // x = 1, W = [z 0, r 0, h 1], R = [0, 0, 1], Rbh = 1, h0 = 1.
  std::vector<float> W = {0, 0, 1}, R = {0, 0, 1}, B = {0, 0, 0, 0, 0, 1};
  auto run = [&](int lbr) {
    return run_op("GRU",
                  {tv<float>({1}, {1, 1, 1}), tv<float>(W, {1, 3, 1}), tv<float>(R, {1, 3, 1}), tv<float>(B, {1, 6}),
                   Value(), tv<float>({1}, {1, 1, 1})},
                  {attr_int("hidden_size", 1), attr_int("linear_before_reset", lbr)}, 14, 2);
  };
  auto a = run(0), b = run(1);
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  // r = z = 0.5. lbr=0: h~ = tanh(1 + 0.5*1*1 + 1); lbr=1: h~ = tanh(1 + 0.5*(1*1 + 1))
  const double h0 = 0.5 * std::tanh(2.5) + 0.5, h1 = 0.5 * std::tanh(2.0) + 0.5;
  EXPECT_NEAR(doubles((*a)[1])[0], h0, 1e-6);
  EXPECT_NEAR(doubles((*b)[1])[0], h1, 1e-6);
}

TEST(RnnOps, LstmZeroWeightsWithInitialCell) {
  // all gates 0.5, candidate 0: C1 = 0.5*C0, H1 = 0.5*tanh(C1)
  auto res =
      run_op("LSTM",
             {tv<float>({0}, {1, 1, 1}), tv<float>(std::vector<float>(4, 0), {1, 4, 1}),
              tv<float>(std::vector<float>(4, 0), {1, 4, 1}), Value(), Value(), Value(), tv<float>({1}, {1, 1, 1})},
             {attr_int("hidden_size", 1)}, 14, 3);
  ASSERT_TRUE(res.is_ok()) << res.status().to_string();
  EXPECT_NEAR(doubles((*res)[2])[0], 0.5, 1e-6);
  EXPECT_NEAR(doubles((*res)[1])[0], 0.5 * std::tanh(0.5), 1e-6);
}

TEST(RnnOps, LstmPeepholesAndInputForget) {
  // P = [pi, po, pf]; with C0 = 1: i = sig(pi), f = sig(pf) (or 1-i), C = f, o = sig(po*C)
  std::vector<float> P = {1.0f, 2.0f, -1.0f};
  auto run = [&](int input_forget) {
    return run_op("LSTM",
                  {tv<float>({0}, {1, 1, 1}), tv<float>(std::vector<float>(4, 0), {1, 4, 1}),
                   tv<float>(std::vector<float>(4, 0), {1, 4, 1}), Value(), Value(), Value(), tv<float>({1}, {1, 1, 1}),
                   tv<float>(P, {1, 3})},
                  {attr_int("hidden_size", 1), attr_int("input_forget", input_forget)}, 14, 3);
  };
  auto a = run(0), b = run(1);
  ASSERT_TRUE(a.is_ok()) << a.status().to_string();
  ASSERT_TRUE(b.is_ok());
  const double c_a = sigmoid(-1.0), c_b = 1.0 - sigmoid(1.0);
  EXPECT_NEAR(doubles((*a)[2])[0], c_a, 1e-6);
  EXPECT_NEAR(doubles((*a)[1])[0], sigmoid(2.0 * c_a) * std::tanh(c_a), 1e-6);
  EXPECT_NEAR(doubles((*b)[2])[0], c_b, 1e-6);
}

TEST(RnnOps, ClipBoundsPreActivation) {
  auto res =
      run_op("RNN", {tv<float>({100}, {1, 1, 1}), tv<float>({1}, {1, 1, 1}), tv<float>({0}, {1, 1, 1})},
             {attr_int("hidden_size", 1), attr_float("clip", 2.0f), attr_strings("activations", {"Relu"})}, 14, 2);
  ASSERT_TRUE(res.is_ok());
  EXPECT_NEAR(doubles((*res)[1])[0], 2.0, 1e-6);
}

TEST(RnnOps, DoubleAndHalfInputs) {
  auto d = run_op("RNN", {tv<double>({1}, {1, 1, 1}), tv<double>({0.5}, {1, 1, 1}), tv<double>({0}, {1, 1, 1})},
                  {attr_int("hidden_size", 1)}, 14, 2);
  ASSERT_TRUE(d.is_ok()) << d.status().to_string();
  EXPECT_EQ((*d)[1].tensor().dtype(), DataType::kDouble);
  EXPECT_NEAR(doubles((*d)[1])[0], std::tanh(0.5), 1e-12);
  auto h = run_op(
      "RNN",
      {tv<Float16>({Float16{float_to_half(1.0f)}}, {1, 1, 1}), tv<Float16>({Float16{float_to_half(0.5f)}}, {1, 1, 1}),
       tv<Float16>({Float16{float_to_half(0.0f)}}, {1, 1, 1})},
      {attr_int("hidden_size", 1)}, 14, 2);
  ASSERT_TRUE(h.is_ok()) << h.status().to_string();
  EXPECT_EQ((*h)[1].tensor().dtype(), DataType::kFloat16);
  EXPECT_NEAR(doubles((*h)[1])[0], std::tanh(0.5), 1e-3);
}

TEST(RnnOps, RejectsBadInputs) {
  // W with the wrong gate count
  auto r = run_op("GRU", {tv<float>({1}, {1, 1, 1}), tv<float>({1}, {1, 1, 1}), tv<float>({1}, {1, 1, 1})},
                  {attr_int("hidden_size", 1)}, 14, 2);
  EXPECT_FALSE(r.is_ok());
  // X of rank 2
  r = run_op("RNN", {tv<float>({1}, {1, 1}), tv<float>({1}, {1, 1, 1}), tv<float>({1}, {1, 1, 1})},
             {attr_int("hidden_size", 1)}, 14, 2);
  EXPECT_FALSE(r.is_ok());
  // unknown activation
  r = run_op("RNN", {tv<float>({1}, {1, 1, 1}), tv<float>({1}, {1, 1, 1}), tv<float>({1}, {1, 1, 1})},
             {attr_int("hidden_size", 1), attr_strings("activations", {"Gelu"})}, 14, 2);
  EXPECT_FALSE(r.is_ok());
  // bad direction
  r = run_op("LSTM",
             {tv<float>({1}, {1, 1, 1}), tv<float>({1, 1, 1, 1}, {1, 4, 1}), tv<float>({1, 1, 1, 1}, {1, 4, 1})},
             {attr_int("hidden_size", 1), attr_string("direction", "sideways")}, 14, 2);
  EXPECT_FALSE(r.is_ok());
  // sequence_lens out of range
  r = run_op(
      "RNN",
      {tv<float>({1}, {1, 1, 1}), tv<float>({1}, {1, 1, 1}), tv<float>({1}, {1, 1, 1}), Value(), tv<int32_t>({5}, {1})},
      {attr_int("hidden_size", 1)}, 14, 2);
  EXPECT_FALSE(r.is_ok());
  // integer X
  r = run_op("RNN", {tv<int32_t>({1}, {1, 1, 1}), tv<int32_t>({1}, {1, 1, 1}), tv<int32_t>({1}, {1, 1, 1})},
             {attr_int("hidden_size", 1)}, 14, 2);
  EXPECT_FALSE(r.is_ok());
}

}  // namespace
}  // namespace xonnx
