// Sampler: greedy, temperature, top-k, top-p, min-p, penalties, logit bias, seeds, processors,
// and parameter validation.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <vector>

#include "sdk/genai/sampling.h"

namespace xonnx::genai {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

int32_t choose(Sampler& s, std::vector<float> logits, LogitsProcessor* p = nullptr) {
  auto t = s.choose(logits.data(), p);
  EXPECT_TRUE(t.is_ok()) << t.status().message();
  return t.is_ok() ? *t : -1;
}

// Frequencies of `draws` samples from logits under params (one sampler, one seed).
std::map<int32_t, int> histogram(const SamplingParams& params, const std::vector<float>& logits, int draws) {
  Sampler s;
  s.reset(params, static_cast<int32_t>(logits.size()), nullptr, 0);
  std::map<int32_t, int> h;
  for (int i = 0; i < draws; ++i) ++h[choose(s, logits)];
  return h;
}

TEST(Sampling, GreedyTakesArgmaxLowestIdOnTies) {
  Sampler s;
  s.reset({}, 5, nullptr, 0);
  EXPECT_EQ(choose(s, {0.1f, 3.0f, -1.0f, 3.0f, 2.0f}), 1);
  EXPECT_EQ(choose(s, {kNegInf, kNegInf, -5.0f, kNegInf, kNegInf}), 2);
  std::vector<float> all_masked(5, kNegInf);
  EXPECT_FALSE(s.choose(all_masked.data(), nullptr).is_ok());
}

TEST(Sampling, TemperatureFollowsSoftmax) {
  SamplingParams p;
  p.temperature = 1.0f;
  p.seed = 7;
  const std::vector<float> logits = {0.0f, std::log(3.0f), kNegInf};  // probabilities 1/4, 3/4, 0
  auto h = histogram(p, logits, 20000);
  EXPECT_EQ(h.count(2), 0u);
  EXPECT_NEAR(h[1] / 20000.0, 0.75, 0.015);
  p.temperature = 0.5f;  // squares the odds: 1/10, 9/10
  h = histogram(p, logits, 20000);
  EXPECT_NEAR(h[1] / 20000.0, 0.9, 0.01);
}

TEST(Sampling, TopKTopPMinP) {
  const std::vector<float> logits = {std::log(0.1f), std::log(0.4f), std::log(0.3f), std::log(0.2f)};
  SamplingParams p;
  p.temperature = 1.0f;
  p.seed = 1;
  p.top_k = 2;  // tokens 1 and 2, renormalised 4:3
  auto h = histogram(p, logits, 14000);
  EXPECT_EQ(h.size(), 2u);
  EXPECT_NEAR(h[1] / 14000.0, 4.0 / 7.0, 0.02);
  p.top_k = 0;
  p.top_p = 0.75f;  // 0.4 + 0.3 = 0.7 < 0.75: token 3 (0.2) is needed too
  h = histogram(p, logits, 9000);
  EXPECT_EQ(h.size(), 3u);
  EXPECT_EQ(h.count(0), 0u);
  p.top_p = 0.4f;  // the top token alone reaches it
  h = histogram(p, logits, 100);
  EXPECT_EQ(h.size(), 1u);
  EXPECT_EQ(h.begin()->first, 1);
  p.top_p = 1.0f;
  p.min_p = 0.6f;  // keeps p >= 0.24: tokens 1 and 2
  h = histogram(p, logits, 2000);
  EXPECT_EQ(h.size(), 2u);
  EXPECT_EQ(h.count(3), 0u);
}

TEST(Sampling, SeedsReproduce) {
  SamplingParams p;
  p.temperature = 1.2f;
  p.top_p = 0.95f;
  p.seed = 1234;
  std::vector<float> logits(100);
  for (int i = 0; i < 100; ++i) logits[i] = std::sin(i * 0.37f) * 3.0f;
  Sampler a, b, c;
  a.reset(p, 100, nullptr, 0);
  b.reset(p, 100, nullptr, 0);
  p.seed = 4321;
  c.reset(p, 100, nullptr, 0);
  std::vector<int32_t> ta, tb, tc;
  for (int i = 0; i < 50; ++i) {
    ta.push_back(choose(a, logits));
    tb.push_back(choose(b, logits));
    tc.push_back(choose(c, logits));
  }
  EXPECT_EQ(ta, tb);
  EXPECT_NE(ta, tc);
}

TEST(Sampling, RepetitionPenaltyAndBias) {
  SamplingParams p;
  p.repetition_penalty = 2.0f;
  const int32_t prompt[] = {0};
  Sampler s;
  s.reset(p, 3, prompt, 1);
  // Token 0 (in the prompt): 3 / 2 = 1.5 < 2 (token 1) -> 1 wins.
  EXPECT_EQ(choose(s, {3.0f, 2.0f, -1.0f}), 1);
  // Negative logits are multiplied: token 0 at -1 becomes -2 < -1.5.
  EXPECT_EQ(choose(s, {-1.0f, -3.0f, -1.5f}), 2);
  s.record(2);                                     // generated tokens count too
  EXPECT_EQ(choose(s, {-1.0f, -1.6f, -0.9f}), 1);  // -2, -1.6, -1.8

  SamplingParams f;
  f.frequency_penalty = 1.0f;
  f.presence_penalty = 0.5f;
  s.reset(f, 3, prompt, 1);  // the prompt does not count for OpenAI's penalties
  EXPECT_EQ(choose(s, {2.0f, 1.0f, 0.0f}), 0);
  s.record(0);
  s.record(0);  // 2 - 0.5 - 2 = -0.5
  EXPECT_EQ(choose(s, {2.0f, 1.0f, 0.0f}), 1);

  SamplingParams b;
  b.logit_bias = {{2, 10.0f}, {0, -100.0f}};
  s.reset(b, 3, nullptr, 0);
  EXPECT_EQ(choose(s, {5.0f, 1.0f, 0.0f}), 2);
  // A reset forgets the previous sequence's tokens.
  s.reset(p, 3, nullptr, 0);
  EXPECT_EQ(choose(s, {3.0f, 2.0f, -1.0f}), 0);
}

class MaskAllBut : public LogitsProcessor {
 public:
  explicit MaskAllBut(int32_t keep) : keep_(keep) {}
  Status process(float* logits, int32_t vocab) override {
    for (int32_t i = 0; i < vocab; ++i)
      if (i != keep_) logits[i] = kNegInf;
    return Status::ok();
  }
  Status accept(int32_t) override { return Status::ok(); }

 private:
  int32_t keep_;
};

TEST(Sampling, ProcessorMasks) {
  MaskAllBut only3(3);
  SamplingParams p;
  p.temperature = 1.0f;
  p.top_k = 1;
  p.seed = 3;
  Sampler s;
  s.reset(p, 5, nullptr, 0);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(choose(s, {9, 8, 7, 0, 1}, &only3), 3);
  MaskAllBut none(-1);
  std::vector<float> l = {1, 2, 3, 4, 5};
  EXPECT_FALSE(s.choose(l.data(), &none).is_ok());
}

TEST(Sampling, ValidateNamesTheField) {
  auto err = [](auto edit) {
    SamplingParams p;
    edit(p);
    Status s = p.validate(100);
    return s.is_ok() ? std::string("(ok)") : s.message();
  };
  EXPECT_EQ(err([](SamplingParams&) {}), "(ok)");
  EXPECT_NE(err([](SamplingParams& p) { p.temperature = -1; }).find("temperature"), std::string::npos);
  EXPECT_NE(err([](SamplingParams& p) { p.temperature = NAN; }).find("temperature"), std::string::npos);
  EXPECT_NE(err([](SamplingParams& p) { p.top_k = -2; }).find("top_k"), std::string::npos);
  EXPECT_NE(err([](SamplingParams& p) { p.top_p = 0; }).find("top_p"), std::string::npos);
  EXPECT_NE(err([](SamplingParams& p) { p.min_p = 1.5f; }).find("min_p"), std::string::npos);
  EXPECT_NE(err([](SamplingParams& p) { p.repetition_penalty = 0; }).find("repetition_penalty"), std::string::npos);
  EXPECT_NE(err([](SamplingParams& p) { p.presence_penalty = 3; }).find("presence_penalty"), std::string::npos);
  EXPECT_NE(err([](SamplingParams& p) { p.frequency_penalty = -3; }).find("frequency_penalty"), std::string::npos);
  EXPECT_NE(err([](SamplingParams& p) { p.logit_bias = {{100, 1.0f}}; }).find("logit_bias"), std::string::npos);
  EXPECT_NE(err([](SamplingParams& p) { p.logit_bias = {{1, INFINITY}}; }).find("logit_bias"), std::string::npos);
}

}  // namespace
}  // namespace xonnx::genai
