// Differential testing of the optimized kernels (runtime/ops/optimized): the same one-node
// model runs with the optimized kernels switched off (reference kernels) and on, XNNPACK
// disabled in both so the optimized candidate is the one under test.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "runtime/exec/session.h"
#include "runtime/ops/optimized/opt_util.h"
#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace opttest {

using testing::attr_float;
using testing::attr_int;
using testing::attr_ints;
using testing::attr_string;

// Equal floats with equal signs, NaN where the other has NaN (payloads aside).
inline bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) != std::isnan(b[i])) return false;
    if (!std::isnan(a[i]) && (a[i] != b[i] || std::signbit(a[i]) != std::signbit(b[i]))) return false;
  }
  return true;
}

inline Tensor rand_tensor(const Shape& shape, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(shape_numel(shape)));
  for (float& f : v) f = dist(gen);
  return Tensor::from_vector<float>(v, shape);
}

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();
// The odd sizes every kernel is tested over (vector tails, register-tile edges).
constexpr int64_t kSizes[] = {1, 3, 13, 127, 128, 129};

// NaN first, +inf in the middle, -inf last.
inline Tensor with_specials(Tensor t) {
  float* p = t.data<float>();
  const int64_t n = t.numel();
  if (n > 0) p[0] = kNaN;
  if (n > 2) p[n / 2] = kInf;
  if (n > 3) p[n - 1] = -kInf;
  return t;
}

struct In {
  Tensor t;               // undefined: omitted optional input
  bool constant = false;  // an initializer
};
inline In var(Tensor t) { return {std::move(t), false}; }
inline In cst(Tensor t) { return {std::move(t), true}; }

struct Op {
  Op(const char* t, const char* d = "", int64_t o = 17, size_t outs = 1)
      : type(t), domain(d), opset(o), num_outputs(outs) {}
  std::string type;
  std::string domain;
  int64_t opset;
  size_t num_outputs;
};

inline Result<std::unique_ptr<Session>> make_session(const Op& op, const std::vector<In>& inputs,
                                                     const std::vector<Attribute>& attrs, bool optimized,
                                                     int threads) {
  Model model;
  model.ir_version = 8;
  model.opset_imports[""] = op.opset;
  if (!op.domain.empty()) model.opset_imports[op.domain] = 1;
  Node node;
  node.op_type = op.type;
  node.domain = op.domain;
  node.name = "n0";
  node.attributes = attrs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].t.defined()) {
      node.inputs.push_back("");
      continue;
    }
    const std::string name = "in" + std::to_string(i);
    node.inputs.push_back(name);
    if (inputs[i].constant) {
      model.graph.initializers.push_back({name, inputs[i].t});
    } else {
      ValueInfo vi;
      vi.name = name;
      model.graph.inputs.push_back(vi);
    }
  }
  for (size_t i = 0; i < op.num_outputs; ++i) {
    ValueInfo vi;
    vi.name = "out" + std::to_string(i);
    node.outputs.push_back(vi.name);
    model.graph.outputs.push_back(vi);
  }
  model.graph.nodes.push_back(std::move(node));
  SessionOptions options;
  options.disable_xnnpack = true;
  options.num_threads = threads;
  opt::set_enabled(optimized);
  auto s = Session::create_from_model(std::move(model), options);
  opt::set_enabled(true);
  return s;
}

inline void expect_close(const Tensor& got, const Tensor& want, double rtol, double atol, const std::string& what) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what << ": " << shape_to_string(got.shape()) << " vs "
                                       << shape_to_string(want.shape());
  if (got.dtype() != DataType::kFloat) {  // other fixed-size types: the same bytes
    if (got.dtype() != DataType::kString && got.nbytes() > 0) {
      EXPECT_EQ(std::memcmp(got.raw_data(), want.raw_data(), got.nbytes()), 0) << what;
    }
    return;
  }
  const float* g = got.data<float>();
  const float* w = want.data<float>();
  int bad = 0;
  for (int64_t i = 0; i < got.numel() && bad < 5; ++i) {
    const double d = std::fabs(double(g[i]) - double(w[i]));
    const bool same = g[i] == w[i] || (std::isnan(g[i]) && std::isnan(w[i]));
    if (!same && !(d <= atol + rtol * std::fabs(double(w[i])))) {
      ADD_FAILURE() << what << ": element " << i << " optimized " << g[i] << " reference " << w[i];
      ++bad;
    }
  }
}

// Runs the node through the reference and the optimized kernels (1 and 2 threads) and
// compares every output. `expect_fast`: whether the optimized path must have run (false:
// declined at creation or deferred to the reference at run time).
inline void diff_test(const Op& op, const std::vector<In>& inputs, const std::vector<Attribute>& attrs,
                      bool expect_fast, const std::string& what, double rtol = 1e-5, double atol = 1e-6) {
  SCOPED_TRACE(op.type + " " + what);
  std::vector<Value> given;
  for (const In& in : inputs)
    if (in.t.defined() && !in.constant) given.push_back(in.t);
  auto ref = make_session(op, inputs, attrs, false, 1);
  ASSERT_TRUE(ref.is_ok()) << ref.status().to_string();
  auto want = (*ref)->run(given);
  for (int threads : {1, 2}) {
    auto fast = make_session(op, inputs, attrs, true, threads);
    ASSERT_TRUE(fast.is_ok()) << fast.status().to_string();
    const uint64_t before = opt::run_count();
    auto got = (*fast)->run(given);
    const uint64_t runs = opt::run_count() - before;
    ASSERT_EQ(want.is_ok(), got.is_ok()) << (want.is_ok() ? got.status() : want.status()).to_string();
    EXPECT_EQ(runs > 0, expect_fast) << "optimized runs: " << runs;
    if (!want.is_ok()) {
      EXPECT_EQ(got.status().to_string(), want.status().to_string());
      continue;
    }
    ASSERT_EQ(got->size(), want->size());
    for (size_t i = 0; i < want->size(); ++i) {
      if (!(*want)[i].is_tensor()) continue;
      expect_close((*got)[i].tensor(), (*want)[i].tensor(), rtol, atol,
                   what + " output " + std::to_string(i) + " threads " + std::to_string(threads));
    }
  }
}

}  // namespace opttest
}  // namespace xonnx
