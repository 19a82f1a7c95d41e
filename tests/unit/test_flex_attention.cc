// FlexAttention (ai.onnx.preview, version 1) against a naive softmax attention, with
// score_mod / prob_mod subgraphs, GQA, explicit scale, types and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace {

using testing::attr_float;
using testing::run_op;

const char* kPreview = "ai.onnx.preview";

std::vector<float> rand_vec(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& f : v) f = d(gen);
  return v;
}

// Y for (B, Hq, L, E) x (B, Hkv, S, E) x (B, Hkv, S, Ev); `mod` edits the score row
// (b, h, l, scores), `pmod` the probability row.
template <typename ScoreMod, typename ProbMod>
std::vector<double> reference(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                              int64_t B, int64_t Hq, int64_t Hkv, int64_t L, int64_t S, int64_t E, int64_t Ev,
                              double scale, ScoreMod mod, ProbMod pmod) {
  std::vector<double> y(B * Hq * L * Ev, 0.0);
  const int64_t G = Hq / Hkv;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hq; ++h)
      for (int64_t l = 0; l < L; ++l) {
        std::vector<double> s(S);
        for (int64_t j = 0; j < S; ++j) {
          double acc = 0;
          for (int64_t e = 0; e < E; ++e)
            acc += static_cast<double>(q[((b * Hq + h) * L + l) * E + e]) * k[((b * Hkv + h / G) * S + j) * E + e];
          s[j] = acc * scale;
        }
        mod(l, s);
        double mx = -1e300, sum = 0;
        for (double x : s) mx = std::max(mx, x);
        for (double& x : s) sum += (x = std::exp(x - mx));
        for (double& x : s) x /= sum;
        pmod(s);
        for (int64_t j = 0; j < S; ++j)
          for (int64_t e = 0; e < Ev; ++e)
            y[((b * Hq + h) * L + l) * Ev + e] += s[j] * v[((b * Hkv + h / G) * S + j) * Ev + e];
      }
  return y;
}

void expect_values(const Tensor& t, const std::vector<double>& want, double tol = 1e-5) {
  ASSERT_EQ(t.numel(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(t.get_as_double(static_cast<int64_t>(i)), want[i], tol + tol * std::fabs(want[i])) << i;
  }
}

// A one-node graph: out = Op(x, constant).
Attribute binary_graph_attr(const std::string& attr, const std::string& op, float constant) {
  auto g = std::make_shared<Graph>();
  g->name = attr + "_graph";
  ValueInfo in;
  in.name = "x";
  g->inputs.push_back(in);
  ValueInfo out;
  out.name = "y";
  g->outputs.push_back(out);
  g->initializers.push_back({"c", Tensor::scalar<float>(constant)});
  Node n;
  n.op_type = op;
  n.inputs = {"x", "c"};
  n.outputs = {"y"};
  g->nodes.push_back(n);
  Attribute a;
  a.name = attr;
  a.type = AttrType::kGraph;
  a.g = g;
  return a;
}

Result<std::vector<Value>> flex(const std::vector<Value>& in, const std::vector<Attribute>& attrs = {}) {
  return run_op("FlexAttention", in, attrs, 26, 1, kPreview);
}

TEST(FlexAttention, BasicGqaAndHeadSizes) {
  struct C {
    int64_t B, Hq, Hkv, L, S, E, Ev;
  };
  const C cases[] = {{2, 4, 4, 8, 6, 16, 16}, {2, 8, 2, 4, 6, 16, 16}, {1, 2, 2, 3, 5, 4, 7}, {1, 3, 1, 1, 1, 2, 2}};
  uint32_t seed = 3;
  for (const C& c : cases) {
    auto q = rand_vec(c.B * c.Hq * c.L * c.E, seed++);
    auto k = rand_vec(c.B * c.Hkv * c.S * c.E, seed++);
    auto v = rand_vec(c.B * c.Hkv * c.S * c.Ev, seed++);
    auto r = flex({Tensor::from_vector<float>(q, {c.B, c.Hq, c.L, c.E}),
                   Tensor::from_vector<float>(k, {c.B, c.Hkv, c.S, c.E}),
                   Tensor::from_vector<float>(v, {c.B, c.Hkv, c.S, c.Ev})});
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    EXPECT_EQ((*r)[0].tensor().shape(), (Shape{c.B, c.Hq, c.L, c.Ev}));
    expect_values((*r)[0].tensor(), reference(
                                        q, k, v, c.B, c.Hq, c.Hkv, c.L, c.S, c.E, c.Ev, 1.0 / std::sqrt(double(c.E)),
                                        [](int64_t, std::vector<double>&) {}, [](std::vector<double>&) {}));
  }
}

TEST(FlexAttention, ScaleScoreModAndProbMod) {
  const int64_t B = 1, H = 2, L = 3, S = 4, E = 4;
  auto q = rand_vec(B * H * L * E, 21), k = rand_vec(B * H * S * E, 22), v = rand_vec(B * H * S * E, 23);
  std::vector<Value> in = {Tensor::from_vector<float>(q, {B, H, L, E}), Tensor::from_vector<float>(k, {B, H, S, E}),
                           Tensor::from_vector<float>(v, {B, H, S, E})};
  auto none = [](int64_t, std::vector<double>&) {};
  auto pnone = [](std::vector<double>&) {};

  auto scaled = flex(in, {attr_float("scale", 0.1f)});
  ASSERT_TRUE(scaled.is_ok()) << scaled.status().to_string();
  expect_values((*scaled)[0].tensor(), reference(q, k, v, B, H, H, L, S, E, E, 0.1f, none, pnone));

  // score_mod: scores * 3 (a bias would cancel in the softmax).
  auto mul = flex(in, {binary_graph_attr("score_mod", "Mul", 3.0f)});
  ASSERT_TRUE(mul.is_ok()) << mul.status().to_string();
  expect_values((*mul)[0].tensor(), reference(
                                        q, k, v, B, H, H, L, S, E, E, 0.5,
                                        [](int64_t, std::vector<double>& s) {
                                          for (double& x : s) x *= 3;
                                        },
                                        pnone));

  // prob_mod: probs * 0.5.
  auto half = flex(in, {binary_graph_attr("prob_mod", "Mul", 0.5f)});
  ASSERT_TRUE(half.is_ok()) << half.status().to_string();
  expect_values((*half)[0].tensor(), reference(q, k, v, B, H, H, L, S, E, E, 0.5, none, [](std::vector<double>& p) {
                  for (double& x : p) x *= 0.5;
                }));

  // Both at once with an explicit scale (adding 1 to every score leaves the softmax as is).
  auto both = flex(in, {attr_float("scale", 0.25f), binary_graph_attr("score_mod", "Add", 1.0f),
                        binary_graph_attr("prob_mod", "Mul", 2.0f)});
  ASSERT_TRUE(both.is_ok()) << both.status().to_string();
  expect_values((*both)[0].tensor(), reference(q, k, v, B, H, H, L, S, E, E, 0.25, none, [](std::vector<double>& p) {
                  for (double& x : p) x *= 2;
                }));
}

TEST(FlexAttention, DoubleAndFloat16) {
  const int64_t B = 1, H = 2, L = 3, S = 2, E = 4;
  auto q = rand_vec(B * H * L * E, 31), k = rand_vec(B * H * S * E, 32), v = rand_vec(B * H * S * E, 33);
  auto want = reference(
      q, k, v, B, H, H, L, S, E, E, 0.5, [](int64_t, std::vector<double>&) {}, [](std::vector<double>&) {});
  std::vector<double> qd(q.begin(), q.end()), kd(k.begin(), k.end()), vd(v.begin(), v.end());
  auto rd = flex({Tensor::from_vector<double>(qd, {B, H, L, E}), Tensor::from_vector<double>(kd, {B, H, S, E}),
                  Tensor::from_vector<double>(vd, {B, H, S, E})});
  ASSERT_TRUE(rd.is_ok()) << rd.status().to_string();
  EXPECT_EQ((*rd)[0].tensor().dtype(), DataType::kDouble);
  expect_values((*rd)[0].tensor(), want, 1e-9);

  std::vector<Float16> qh, kh, vh;
  for (float f : q) qh.push_back(from_compute<Float16>(f));
  for (float f : k) kh.push_back(from_compute<Float16>(f));
  for (float f : v) vh.push_back(from_compute<Float16>(f));
  auto rh = flex({Tensor::from_vector<Float16>(qh, {B, H, L, E}), Tensor::from_vector<Float16>(kh, {B, H, S, E}),
                  Tensor::from_vector<Float16>(vh, {B, H, S, E})});
  ASSERT_TRUE(rh.is_ok()) << rh.status().to_string();
  EXPECT_EQ((*rh)[0].tensor().dtype(), DataType::kFloat16);
  expect_values((*rh)[0].tensor(), want, 3e-3);
}

TEST(FlexAttention, Errors) {
  Tensor q = Tensor::from_vector<float>(std::vector<float>(16, 0.5f), {1, 2, 2, 4});
  // Rank 3 input.
  EXPECT_FALSE(flex({q.reshaped({2, 2, 4}), q, q}).is_ok());
  // Head size mismatch between Q and K.
  Tensor k3 = Tensor::from_vector<float>(std::vector<float>(12, 0.5f), {1, 2, 2, 3});
  EXPECT_FALSE(flex({q, k3, q}).is_ok());
  // Q heads not a multiple of K/V heads.
  Tensor q3 = Tensor::from_vector<float>(std::vector<float>(24, 0.5f), {1, 3, 2, 4});
  EXPECT_FALSE(flex({q3, q, q}).is_ok());
  // V sequence length differs from K.
  Tensor v3 = Tensor::from_vector<float>(std::vector<float>(24, 0.5f), {1, 2, 3, 4});
  EXPECT_FALSE(flex({q, q, v3}).is_ok());
  // Integer inputs.
  Tensor qi = Tensor::from_vector<int32_t>(std::vector<int32_t>(16, 1), {1, 2, 2, 4});
  EXPECT_FALSE(flex({qi, qi, qi}).is_ok());
  // score_mod that is not a graph.
  EXPECT_FALSE(flex({q, q, q}, {attr_float("score_mod", 1.0f)}).is_ok());
  // A score_mod that changes the shape (Add with a [3] constant broadcasts to a new shape).
  Attribute bad = binary_graph_attr("score_mod", "Add", 0.0f);
  bad.g->initializers[0].tensor = Tensor::from_vector<float>({0, 0, 0}, {3, 1, 1, 1});
  EXPECT_FALSE(flex({q, q, q}, {bad}).is_ok());
}

}  // namespace
}  // namespace xonnx
