// CausalConvWithState (opset 27) against a naive concat + depthwise conv reference.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace {

using testing::attr_string;
using testing::run_op;

std::vector<float> rand_vec(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<float> v(n);
  for (float& f : v) f = static_cast<float>(static_cast<int>(gen() % 2001) - 1000) / 500.0f;
  return v;
}

// Expected output and present_state for (B, C, L) input, (C, 1, K) weight.
void reference(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>* bias,
               const std::vector<float>* past, int64_t B, int64_t C, int64_t L, int64_t K, bool silu,
               std::vector<float>* y, std::vector<float>* state) {
  y->assign(static_cast<size_t>(B * C * L), 0.0f);
  state->assign(static_cast<size_t>(B * C * (K - 1)), 0.0f);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t c = 0; c < C; ++c) {
      std::vector<double> padded;
      for (int64_t j = 0; j < K - 1; ++j) padded.push_back(past ? (*past)[(b * C + c) * (K - 1) + j] : 0.0);
      for (int64_t j = 0; j < L; ++j) padded.push_back(x[(b * C + c) * L + j]);
      for (int64_t t = 0; t < L; ++t) {
        double acc = bias ? (*bias)[c] : 0.0;
        for (int64_t i = 0; i < K; ++i) acc += w[c * K + i] * padded[t + i];
        if (silu) acc = acc / (1.0 + std::exp(-acc));
        (*y)[(b * C + c) * L + t] = static_cast<float>(acc);
      }
      for (int64_t j = 0; j < K - 1; ++j) {
        (*state)[(b * C + c) * (K - 1) + j] = static_cast<float>(padded[L + j]);
      }
    }
  }
}

void expect_near(const Tensor& t, const std::vector<float>& want) {
  ASSERT_EQ(t.numel(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(t.get_as_double(static_cast<int64_t>(i)), want[i], 1e-4 + 1e-4 * std::fabs(want[i])) << i;
  }
}

struct Case {
  int64_t B, C, L, K;
  bool bias, past, silu;
  const char* activation;
};

TEST(CausalConvWithState, MatchesReference) {
  const Case cases[] = {
      {2, 4, 8, 4, false, false, false, nullptr}, {2, 4, 8, 4, true, true, false, "none"},
      {1, 1, 6, 4, false, false, false, nullptr}, {2, 3, 1, 4, true, true, true, "silu"},
      {2, 4, 2, 5, false, false, false, nullptr}, {1, 2, 5, 3, false, true, true, "swish"},
      {2, 3, 4, 1, true, false, false, nullptr},
  };
  uint32_t seed = 1;
  for (const Case& c : cases) {
    auto x = rand_vec(static_cast<size_t>(c.B * c.C * c.L), seed++);
    auto w = rand_vec(static_cast<size_t>(c.C * c.K), seed++);
    auto bias = rand_vec(static_cast<size_t>(c.C), seed++);
    auto past = rand_vec(static_cast<size_t>(c.B * c.C * (c.K - 1)), seed++);
    std::vector<Value> inputs = {Tensor::from_vector<float>(x, {c.B, c.C, c.L}),
                                 Tensor::from_vector<float>(w, {c.C, 1, c.K})};
    inputs.push_back(c.bias ? Value(Tensor::from_vector<float>(bias, {c.C})) : Value());
    inputs.push_back(c.past ? Value(Tensor::from_vector<float>(past, {c.B, c.C, c.K - 1})) : Value());
    std::vector<Attribute> attrs;
    if (c.activation) attrs.push_back(attr_string("activation", c.activation));
    auto r = run_op("CausalConvWithState", inputs, attrs, 27, 2);
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    std::vector<float> y, state;
    reference(x, w, c.bias ? &bias : nullptr, c.past ? &past : nullptr, c.B, c.C, c.L, c.K, c.silu, &y, &state);
    EXPECT_EQ((*r)[0].tensor().shape(), (Shape{c.B, c.C, c.L}));
    EXPECT_EQ((*r)[1].tensor().shape(), (Shape{c.B, c.C, c.K - 1}));
    expect_near((*r)[0].tensor(), y);
    expect_near((*r)[1].tensor(), state);
  }
}

TEST(CausalConvWithState, DecodeStepsEqualPrefill) {
  // Running token by token with the carried state gives the same output as one prefill.
  const int64_t B = 1, C = 2, L = 5, K = 3;
  auto x = rand_vec(B * C * L, 7);
  auto w = rand_vec(C * K, 8);
  auto full = run_op("CausalConvWithState",
                     {Tensor::from_vector<float>(x, {B, C, L}), Tensor::from_vector<float>(w, {C, 1, K})}, {}, 27, 2);
  ASSERT_TRUE(full.is_ok()) << full.status().to_string();
  Tensor state = Tensor::from_vector<float>(std::vector<float>(B * C * (K - 1), 0.0f), {B, C, K - 1});
  for (int64_t t = 0; t < L; ++t) {
    std::vector<float> step = {x[t], x[L + t]};
    auto r =
        run_op("CausalConvWithState",
               {Tensor::from_vector<float>(step, {B, C, 1}), Tensor::from_vector<float>(w, {C, 1, K}), Value(), state},
               {}, 27, 2);
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    const Tensor& y = (*r)[0].tensor();
    EXPECT_NEAR(y.data<float>()[0], (*full)[0].tensor().data<float>()[t], 1e-5);
    EXPECT_NEAR(y.data<float>()[1], (*full)[0].tensor().data<float>()[L + t], 1e-5);
    state = (*r)[1].tensor();
  }
  expect_near(state, std::vector<float>((*full)[1].tensor().data<float>(),
                                        (*full)[1].tensor().data<float>() + B * C * (K - 1)));
}

TEST(CausalConvWithState, Float16AndDouble) {
  const int64_t B = 1, C = 2, L = 3, K = 2;
  auto x = rand_vec(B * C * L, 11);
  auto w = rand_vec(C * K, 12);
  std::vector<Float16> xh, wh;
  for (float f : x) xh.push_back(from_compute<Float16>(f));
  for (float f : w) wh.push_back(from_compute<Float16>(f));
  std::vector<float> xr, wr;  // the fp16-rounded values
  for (auto h : xh) xr.push_back(to_compute(h));
  for (auto h : wh) wr.push_back(to_compute(h));
  std::vector<float> y, state;
  reference(xr, wr, nullptr, nullptr, B, C, L, K, true, &y, &state);
  auto r = run_op("CausalConvWithState",
                  {Tensor::from_vector<Float16>(xh, {B, C, L}), Tensor::from_vector<Float16>(wh, {C, 1, K})},
                  {attr_string("activation", "silu")}, 27, 2);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().dtype(), DataType::kFloat16);
  for (size_t i = 0; i < y.size(); ++i) {
    EXPECT_NEAR((*r)[0].tensor().get_as_double(i), y[i], 4e-3 + 2e-3 * std::fabs(y[i]));
  }
  std::vector<double> xd(x.begin(), x.end()), wd(w.begin(), w.end());
  reference(x, w, nullptr, nullptr, B, C, L, K, false, &y, &state);
  auto rd = run_op("CausalConvWithState",
                   {Tensor::from_vector<double>(xd, {B, C, L}), Tensor::from_vector<double>(wd, {C, 1, K})}, {}, 27, 2);
  ASSERT_TRUE(rd.is_ok()) << rd.status().to_string();
  EXPECT_EQ((*rd)[0].tensor().dtype(), DataType::kDouble);
  expect_near((*rd)[0].tensor(), y);
}

TEST(CausalConvWithState, OnlyOutputWanted) {
  auto r = run_op("CausalConvWithState",
                  {Tensor::from_vector<float>({1, 2, 3}, {1, 1, 3}), Tensor::from_vector<float>({1, 1}, {1, 1, 2})}, {},
                  27, 1);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  expect_near((*r)[0].tensor(), {1, 3, 5});
}

TEST(CausalConvWithState, Errors) {
  Tensor x = Tensor::from_vector<float>(std::vector<float>(8, 1.0f), {1, 2, 4});
  Tensor w = Tensor::from_vector<float>(std::vector<float>(6, 1.0f), {2, 1, 3});
  // Unknown activation.
  EXPECT_FALSE(run_op("CausalConvWithState", {x, w}, {attr_string("activation", "relu")}, 27, 2).is_ok());
  // Input of rank 2.
  EXPECT_FALSE(run_op("CausalConvWithState", {x.reshaped({2, 4}), w}, {}, 27, 2).is_ok());
  // Weight channels differ from input channels.
  EXPECT_FALSE(
      run_op("CausalConvWithState", {x, Tensor::from_vector<float>(std::vector<float>(9, 1.0f), {3, 1, 3})}, {}, 27, 2)
          .is_ok());
  // Weight middle dim not 1.
  EXPECT_FALSE(run_op("CausalConvWithState", {x, w.reshaped({1, 2, 3})}, {}, 27, 2).is_ok());
  // Bias of the wrong length.
  EXPECT_FALSE(run_op("CausalConvWithState", {x, w, Tensor::from_vector<float>({1, 2, 3}, {3})}, {}, 27, 2).is_ok());
  // past_state of the wrong length (k - 1 = 2 expected).
  EXPECT_FALSE(run_op("CausalConvWithState",
                      {x, w, Value(), Tensor::from_vector<float>(std::vector<float>(6, 0.0f), {1, 2, 3})}, {}, 27, 2)
                   .is_ok());
  // Mixed types.
  EXPECT_FALSE(
      run_op("CausalConvWithState", {x, Tensor::from_vector<double>(std::vector<double>(6, 1.0), {2, 1, 3})}, {}, 27, 2)
          .is_ok());
  // Integer input.
  EXPECT_FALSE(run_op("CausalConvWithState",
                      {Tensor::from_vector<int32_t>(std::vector<int32_t>(8, 1), {1, 2, 4}),
                       Tensor::from_vector<int32_t>(std::vector<int32_t>(6, 1), {2, 1, 3})},
                      {}, 27, 2)
                   .is_ok());
  // Not in opset 26.
  EXPECT_FALSE(run_op("CausalConvWithState", {x, w}, {}, 26, 2).is_ok());
}

}  // namespace
}  // namespace xonnx
