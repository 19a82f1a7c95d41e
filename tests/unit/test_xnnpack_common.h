// Differential testing of XNNPACK kernels: the same one-node model (constant inputs as
// initializers) runs with and without XNNPACK, and the outputs must agree.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "runtime/exec/session.h"
#include "runtime/ops/xnnpack/xnnpack_util.h"
#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace xnntest {

using testing::attr_float;
using testing::attr_int;
using testing::attr_ints;
using testing::attr_string;

inline Tensor rand_tensor(const Shape& shape, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(shape_numel(shape)));
  for (float& f : v) f = dist(gen);
  return Tensor::from_vector<float>(v, shape);
}

struct In {
  Tensor t;               // undefined: omitted optional input
  bool constant = false;  // an initializer (the XNNPACK kernels need constant weights)
};
inline In var(Tensor t) { return {std::move(t), false}; }
inline In cst(Tensor t) { return {std::move(t), true}; }

inline Result<std::unique_ptr<Session>> make_session(const std::string& op, const std::vector<In>& inputs,
                                                     const std::vector<Attribute>& attrs, int64_t opset,
                                                     bool disable_xnnpack, size_t num_outputs = 1) {
  Model model;
  model.ir_version = 8;
  model.opset_imports[""] = opset;
  Node node;
  node.op_type = op;
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
  for (size_t i = 0; i < num_outputs; ++i) {
    ValueInfo vi;
    vi.name = "out" + std::to_string(i);
    node.outputs.push_back(vi.name);
    model.graph.outputs.push_back(vi);
  }
  model.graph.nodes.push_back(std::move(node));
  SessionOptions options;
  options.disable_xnnpack = disable_xnnpack;
  options.disable_optimized = true;  // XNNPACK's kernels, not the own ones tried before them
  return Session::create_from_model(std::move(model), options);
}

inline std::vector<Value> runtime_values(const std::vector<In>& inputs) {
  std::vector<Value> given;
  for (const In& in : inputs)
    if (in.t.defined() && !in.constant) given.push_back(in.t);
  return given;
}

inline void expect_close(const Tensor& got, const Tensor& want, double rtol, double atol,
                         const std::string& what) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what << ": " << shape_to_string(got.shape()) << " vs "
                                       << shape_to_string(want.shape());
  const float* g = got.data<float>();
  const float* w = want.data<float>();
  int bad = 0;
  for (int64_t i = 0; i < got.numel() && bad < 5; ++i) {
    const double d = std::fabs(double(g[i]) - double(w[i]));
    const bool same = g[i] == w[i] || (std::isnan(g[i]) && std::isnan(w[i]));
    if (!same && !(d <= atol + rtol * std::fabs(double(w[i])))) {
      ADD_FAILURE() << what << ": element " << i << " xnnpack " << g[i] << " reference " << w[i];
      ++bad;
    }
  }
}

// Runs `op` with and without XNNPACK; `expect_fast` says whether the XNNPACK kernel must
// have run (false: it must have declined or deferred to the reference kernel). Each session
// runs twice to exercise the cached-setup path.
inline void diff_test(const std::string& op, const std::vector<In>& inputs, const std::vector<Attribute>& attrs,
                      int64_t opset, bool expect_fast, const std::string& what, double rtol = 1e-4,
                      double atol = 1e-5) {
  SCOPED_TRACE(op + " " + what);
  auto ref = make_session(op, inputs, attrs, opset, true);
  ASSERT_TRUE(ref.is_ok()) << ref.status().to_string();
  auto fast = make_session(op, inputs, attrs, opset, false);
  ASSERT_TRUE(fast.is_ok()) << fast.status().to_string();
  const std::vector<Value> given = runtime_values(inputs);
  auto want = (*ref)->run(given);
  const uint64_t before = xnn::run_count();
  auto got = (*fast)->run(given);
  const uint64_t runs = xnn::run_count() - before;
  ASSERT_EQ(want.is_ok(), got.is_ok()) << (want.is_ok() ? got.status() : want.status()).to_string();
  EXPECT_EQ(runs > 0, expect_fast) << "XNNPACK operator runs: " << runs;
  if (!want.is_ok()) return;
  expect_close((*got)[0].tensor(), (*want)[0].tensor(), rtol, atol, what);
  auto again = (*fast)->run(given);
  ASSERT_TRUE(again.is_ok());
  expect_close((*again)[0].tensor(), (*got)[0].tensor(), 0, 0, what + " (second run)");
}

}  // namespace xnntest
}  // namespace xonnx
