// LinearAttention (opset 27): hand-computed recurrences and a naive reference for
// every update rule, GQA/MQA, state carry-over, types and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace {

using testing::attr_float;
using testing::attr_int;
using testing::attr_string;
using testing::run_op;

std::vector<float> rand_vec(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& f : v) f = d(gen);
  return v;
}

std::vector<Attribute> heads(int64_t hq, int64_t hkv, const std::string& rule = "") {
  std::vector<Attribute> a = {attr_int("q_num_heads", hq), attr_int("kv_num_heads", hkv)};
  if (!rule.empty()) a.push_back(attr_string("update_rule", rule));
  return a;
}

Tensor t3(const std::vector<float>& v, int64_t b, int64_t t, int64_t d) {
  return Tensor::from_vector<float>(v, {b, t, d});
}

void expect_values(const Tensor& t, const std::vector<double>& want, double tol = 1e-5) {
  ASSERT_EQ(t.numel(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(t.get_as_double(static_cast<int64_t>(i)), want[i], tol + tol * std::fabs(want[i])) << i;
  }
}

TEST(LinearAttention, HandComputedRules) {
  // B = 1, T = 2, one head, d_k = d_v = 1, scale 1.
  Tensor q = t3({1, 2}, 1, 2, 1), k = t3({1, 1}, 1, 2, 1), v = t3({3, 4}, 1, 2, 1);
  auto attrs = [](const std::string& rule) {
    auto a = heads(1, 1, rule);
    a.push_back(attr_float("scale", 1.0f));
    return a;
  };
  auto lin = run_op("LinearAttention", {q, k, v}, attrs("linear"), 27, 2);
  ASSERT_TRUE(lin.is_ok()) << lin.status().to_string();
  expect_values((*lin)[0].tensor(), {3, 14});
  expect_values((*lin)[1].tensor(), {7});
  EXPECT_EQ((*lin)[1].tensor().shape(), (Shape{1, 1, 1, 1}));

  Tensor decay = t3({0.0f, std::log(0.5f)}, 1, 2, 1);
  auto gated = run_op("LinearAttention", {q, k, v, Value(), decay}, attrs("gated"), 27, 2);
  ASSERT_TRUE(gated.is_ok()) << gated.status().to_string();
  expect_values((*gated)[0].tensor(), {3, 11});
  expect_values((*gated)[1].tensor(), {5.5});

  Tensor beta = t3({1, 1}, 1, 2, 1);
  auto delta = run_op("LinearAttention", {q, k, v, Value(), Value(), beta}, attrs("delta"), 27, 2);
  ASSERT_TRUE(delta.is_ok()) << delta.status().to_string();
  expect_values((*delta)[0].tensor(), {3, 8});
  expect_values((*delta)[1].tensor(), {4});

  // gated_delta (the default rule): S1 = 3; S2 = 0.5*3 + (4 - 0.5*3) = 4.
  auto gd = run_op("LinearAttention", {q, k, v, Value(), decay, beta}, attrs(""), 27, 2);
  ASSERT_TRUE(gd.is_ok()) << gd.status().to_string();
  expect_values((*gd)[0].tensor(), {3, 8});
}

// Naive reference over 4-D unpacked heads (per-key-dim decay, per-head beta).
struct Ref {
  int64_t B, T, Hq, Hkv, dk, dv;
  bool gating, delta;
  std::vector<double> out, state;
  void run(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
           const std::vector<float>* past, const std::vector<float>& g, const std::vector<float>& beta) {
    state.assign(B * Hkv * dk * dv, 0.0);
    if (past) state.assign(past->begin(), past->end());
    out.assign(B * T * Hq * dv, 0.0);
    const double scale = 1.0 / std::sqrt(static_cast<double>(dk));
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < T; ++t)
        for (int64_t h = 0; h < Hkv; ++h) {
          double* S = &state[(b * Hkv + h) * dk * dv];
          auto K = [&](int64_t i) { return static_cast<double>(k[(b * T + t) * Hkv * dk + h * dk + i]); };
          if (gating)
            for (int64_t i = 0; i < dk; ++i)
              for (int64_t m = 0; m < dv; ++m) S[i * dv + m] *= std::exp(g[(b * T + t) * Hkv * dk + h * dk + i]);
          std::vector<double> vt(dv);
          for (int64_t m = 0; m < dv; ++m) vt[m] = v[(b * T + t) * Hkv * dv + h * dv + m];
          if (delta) {
            for (int64_t m = 0; m < dv; ++m) {
              double r = 0;
              for (int64_t i = 0; i < dk; ++i) r += S[i * dv + m] * K(i);
              vt[m] = beta[(b * T + t) * Hkv + h] * (vt[m] - r);
            }
          }
          for (int64_t i = 0; i < dk; ++i)
            for (int64_t m = 0; m < dv; ++m) S[i * dv + m] += K(i) * vt[m];
          for (int64_t hq = 0; hq < Hq; ++hq) {
            if (hq / (Hq / Hkv) != h) continue;
            for (int64_t m = 0; m < dv; ++m) {
              double acc = 0;
              for (int64_t i = 0; i < dk; ++i) acc += q[(b * T + t) * Hq * dk + hq * dk + i] * S[i * dv + m];
              out[(b * T + t) * Hq * dv + hq * dv + m] = scale * acc;
            }
          }
        }
  }
};

TEST(LinearAttention, MatchesReferenceGqaAndPast) {
  struct C {
    int64_t B, T, Hq, Hkv, dk, dv;
    const char* rule;
    bool past;
  };
  const C cases[] = {{2, 3, 2, 2, 4, 3, "gated_delta", true},
                     {1, 4, 4, 2, 2, 5, "gated_delta", false},
                     {2, 2, 3, 1, 3, 2, "delta", true},
                     {1, 3, 2, 1, 2, 2, "gated", false},
                     {2, 1, 2, 2, 3, 3, "linear", true}};
  uint32_t seed = 10;
  for (const C& c : cases) {
    const std::string rule = c.rule;
    Ref ref{c.B,
            c.T,
            c.Hq,
            c.Hkv,
            c.dk,
            c.dv,
            rule.find("gated") != std::string::npos,
            rule.find("delta") != std::string::npos,
            {},
            {}};
    auto q = rand_vec(c.B * c.T * c.Hq * c.dk, seed++);
    auto k = rand_vec(c.B * c.T * c.Hkv * c.dk, seed++);
    auto v = rand_vec(c.B * c.T * c.Hkv * c.dv, seed++);
    auto g = rand_vec(c.B * c.T * c.Hkv * c.dk, seed++, -0.5f, 0.0f);
    auto beta = rand_vec(c.B * c.T * c.Hkv, seed++, 0.0f, 1.0f);
    auto past = rand_vec(c.B * c.Hkv * c.dk * c.dv, seed++);
    ref.run(q, k, v, c.past ? &past : nullptr, g, beta);
    std::vector<Value> in = {t3(q, c.B, c.T, c.Hq * c.dk), t3(k, c.B, c.T, c.Hkv * c.dk),
                             t3(v, c.B, c.T, c.Hkv * c.dv)};
    in.push_back(c.past ? Value(Tensor::from_vector<float>(past, {c.B, c.Hkv, c.dk, c.dv})) : Value());
    in.push_back(ref.gating ? Value(t3(g, c.B, c.T, c.Hkv * c.dk)) : Value());
    in.push_back(ref.delta ? Value(t3(beta, c.B, c.T, c.Hkv)) : Value());
    auto r = run_op("LinearAttention", in, heads(c.Hq, c.Hkv, rule), 27, 2);
    ASSERT_TRUE(r.is_ok()) << rule << ": " << r.status().to_string();
    EXPECT_EQ((*r)[0].tensor().shape(), (Shape{c.B, c.T, c.Hq * c.dv}));
    expect_values((*r)[0].tensor(), ref.out, 1e-4);
    expect_values((*r)[1].tensor(), ref.state, 1e-4);
  }
}

TEST(LinearAttention, BroadcastDecayAndBeta) {
  // Per-head decay (B, T, H_kv) equals a per-key-dim decay repeated over d_k; scalar beta
  // (B, T, 1) equals a per-head beta repeated over heads.
  const int64_t B = 1, T = 2, H = 2, dk = 2, dv = 2;
  auto q = rand_vec(B * T * H * dk, 1), k = rand_vec(B * T * H * dk, 2), v = rand_vec(B * T * H * dv, 3);
  std::vector<float> g_head = {-0.1f, -0.2f, -0.3f, -0.4f};
  std::vector<float> g_full;
  for (float g : g_head) g_full.insert(g_full.end(), {g, g});
  std::vector<float> beta1 = {0.3f, 0.7f}, beta_full = {0.3f, 0.3f, 0.7f, 0.7f};
  auto a = run_op(
      "LinearAttention",
      {t3(q, B, T, H * dk), t3(k, B, T, H * dk), t3(v, B, T, H * dv), Value(), t3(g_head, B, T, H), t3(beta1, B, T, 1)},
      heads(H, H), 27, 2);
  auto b = run_op("LinearAttention",
                  {t3(q, B, T, H * dk), t3(k, B, T, H * dk), t3(v, B, T, H * dv), Value(), t3(g_full, B, T, H * dk),
                   t3(beta_full, B, T, H)},
                  heads(H, H), 27, 2);
  ASSERT_TRUE(a.is_ok()) << a.status().to_string();
  ASSERT_TRUE(b.is_ok()) << b.status().to_string();
  const Tensor& ya = (*a)[0].tensor();
  std::vector<double> want;
  for (int64_t i = 0; i < (*b)[0].tensor().numel(); ++i) want.push_back((*b)[0].tensor().get_as_double(i));
  expect_values(ya, want);
}

TEST(LinearAttention, Float16KeepsStateType) {
  const int64_t B = 1, T = 2, H = 1, d = 2;
  std::vector<Float16> q, k, v;
  for (float f : rand_vec(B * T * H * d, 4)) q.push_back(from_compute<Float16>(f));
  for (float f : rand_vec(B * T * H * d, 5)) k.push_back(from_compute<Float16>(f));
  for (float f : rand_vec(B * T * H * d, 6)) v.push_back(from_compute<Float16>(f));
  auto r = run_op("LinearAttention",
                  {Tensor::from_vector<Float16>(q, {B, T, H * d}), Tensor::from_vector<Float16>(k, {B, T, H * d}),
                   Tensor::from_vector<Float16>(v, {B, T, H * d}),
                   Tensor::from_vector<float>(std::vector<float>(d * d, 0.0f), {B, H, d, d})},
                  heads(1, 1, "linear"), 27, 2);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().dtype(), DataType::kFloat16);
  EXPECT_EQ((*r)[1].tensor().dtype(), DataType::kFloat);  // present_state follows past_state
  auto r2 = run_op("LinearAttention",
                   {Tensor::from_vector<Float16>(q, {B, T, H * d}), Tensor::from_vector<Float16>(k, {B, T, H * d}),
                    Tensor::from_vector<Float16>(v, {B, T, H * d})},
                   heads(1, 1, "linear"), 27, 2);
  ASSERT_TRUE(r2.is_ok()) << r2.status().to_string();
  EXPECT_EQ((*r2)[1].tensor().dtype(), DataType::kFloat16);  // no past_state: query type
}

TEST(LinearAttention, Errors) {
  Tensor q = t3(std::vector<float>(8, 0.5f), 1, 2, 4), kv = q;
  Tensor decay = q, beta = t3({1, 1, 1, 1}, 1, 2, 2);
  // Missing required attributes / bad head counts.
  EXPECT_FALSE(run_op("LinearAttention", {q, kv, kv}, {attr_int("q_num_heads", 2)}, 27, 2).is_ok());
  EXPECT_FALSE(run_op("LinearAttention", {q, kv, kv}, heads(3, 2, "linear"), 27, 2).is_ok());
  EXPECT_FALSE(run_op("LinearAttention", {q, kv, kv}, heads(0, 2, "linear"), 27, 2).is_ok());
  // Unknown rule; gated_delta without decay/beta; linear with decay.
  EXPECT_FALSE(run_op("LinearAttention", {q, kv, kv}, heads(2, 2, "softmax"), 27, 2).is_ok());
  EXPECT_FALSE(run_op("LinearAttention", {q, kv, kv}, heads(2, 2), 27, 2).is_ok());
  EXPECT_FALSE(run_op("LinearAttention", {q, kv, kv, Value(), decay}, heads(2, 2, "linear"), 27, 2).is_ok());
  // Bad shapes: rank 2 query, decay last dim, beta last dim, past_state shape, key width.
  EXPECT_FALSE(run_op("LinearAttention", {q.reshaped({2, 4}), kv, kv}, heads(2, 2, "linear"), 27, 2).is_ok());
  EXPECT_FALSE(
      run_op("LinearAttention", {q, kv, kv, Value(), t3({1, 1, 1, 1, 1, 1}, 1, 2, 3), beta}, heads(2, 2), 27, 2)
          .is_ok());
  EXPECT_FALSE(
      run_op("LinearAttention", {q, kv, kv, Value(), decay, t3({1, 1, 1, 1, 1, 1}, 1, 2, 3)}, heads(2, 2), 27, 2)
          .is_ok());
  EXPECT_FALSE(run_op("LinearAttention",
                      {q, kv, kv, Tensor::from_vector<float>(std::vector<float>(4, 0.0f), {1, 1, 2, 2})},
                      heads(2, 2, "linear"), 27, 2)
                   .is_ok());
  EXPECT_FALSE(
      run_op("LinearAttention", {q, t3(std::vector<float>(6, 1.0f), 1, 2, 3), kv}, heads(2, 2, "linear"), 27, 2)
          .is_ok());
  // Mismatched sequence length.
  EXPECT_FALSE(
      run_op("LinearAttention", {q, t3(std::vector<float>(4, 1.0f), 1, 1, 4), kv}, heads(2, 2, "linear"), 27, 2)
          .is_ok());
}

}  // namespace
}  // namespace xonnx
