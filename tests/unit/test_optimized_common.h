// Differential testing of the optimized kernels (runtime/ops/optimized): the same one-node
// model runs with the optimized kernels switched off (reference kernels) and on, XNNPACK
// disabled in both so the optimized candidate is the one under test. New tests use
// tests/unit/backend_test_util.h, which runs every backend (and each ISA table) at once.
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
#include "tests/unit/backend_test_util.h"
#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace opttest {

using testing::attr_float;
using testing::attr_int;
using testing::attr_ints;
using testing::attr_string;

using backendtest::cst;
using backendtest::In;
using backendtest::kInf;
using backendtest::kNaN;
using backendtest::kSizes;
using backendtest::Op;
using backendtest::rand_tensor;
using backendtest::var;
using backendtest::with_specials;

// A 1-D int64 tensor: the starts, sizes and shapes ops take as inputs.
inline Tensor ints_of(std::vector<int64_t> v) {
  return Tensor::from_vector<int64_t>(v, {static_cast<int64_t>(v.size())});
}

// Equal floats with equal signs, NaN where the other has NaN (payloads aside).
inline bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) != std::isnan(b[i])) return false;
    if (!std::isnan(a[i]) && (a[i] != b[i] || std::signbit(a[i]) != std::signbit(b[i]))) return false;
  }
  return true;
}

// Runs `ref` and `fast` on `inputs` twice (the second time on the pool's buffers of the first):
// every output of `fast` within `tol` of `ref`'s, and the caller's float inputs never written
// (kernels that write over a dead input must not take a caller's).
inline void expect_runs_agree_and_keep_inputs(Session& ref, Session& fast, const std::vector<Value>& inputs,
                                              backendtest::Tolerance tol) {
  const auto values = [](const Value& v) {
    const Tensor& t = v.tensor();
    return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
  };
  std::vector<std::vector<float>> given;
  for (const Value& v : inputs) given.push_back(values(v));
  for (int run = 0; run < 2; ++run) {
    auto want = ref.run(inputs);
    auto got = fast.run(inputs);
    ASSERT_TRUE(want.is_ok() && got.is_ok()) << got.status().to_string();
    ASSERT_EQ(want->size(), got->size());
    for (size_t o = 0; o < got->size(); ++o)
      backendtest::expect_close((*got)[o].tensor(), (*want)[o].tensor(), tol, "output " + std::to_string(o));
    for (size_t i = 0; i < inputs.size(); ++i) EXPECT_TRUE(same_bits(values(inputs[i]), given[i])) << "input " << i;
  }
}

inline Result<std::unique_ptr<Session>> make_session(const Op& op, const std::vector<In>& inputs,
                                                     const std::vector<Attribute>& attrs, bool optimized, int threads) {
  Model model = backendtest::one_node_model(op, inputs, attrs);
  SessionOptions options;
  options.disable_xnnpack = true;
  options.num_threads = threads;
  opt::set_enabled(optimized);
  auto s = Session::create_from_model(std::move(model), options);
  opt::set_enabled(true);
  return s;
}

inline void expect_close(const Tensor& got, const Tensor& want, double rtol, double atol, const std::string& what) {
  backendtest::expect_close(got, want, {rtol, atol}, what);
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
