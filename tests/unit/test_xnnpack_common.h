// Differential testing of XNNPACK kernels: the same one-node model (constant inputs as
// initializers) runs with and without XNNPACK, and the outputs must agree. New tests use
// tests/unit/backend_test_util.h, which runs every backend at once.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "runtime/exec/session.h"
#include "runtime/ops/xnnpack/xnnpack_util.h"
#include "tests/unit/backend_test_util.h"
#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace xnntest {

using testing::attr_float;
using testing::attr_int;
using testing::attr_ints;
using testing::attr_string;

using backendtest::cst;
using backendtest::In;
using backendtest::rand_tensor;
using backendtest::runtime_values;
using backendtest::var;

inline Result<std::unique_ptr<Session>> make_session(const std::string& op, const std::vector<In>& inputs,
                                                     const std::vector<Attribute>& attrs, int64_t opset,
                                                     bool disable_xnnpack, size_t num_outputs = 1) {
  SessionOptions options;
  options.disable_xnnpack = disable_xnnpack;
  options.disable_optimized = true;  // XNNPACK's kernels, not the own ones tried before them
  return Session::create_from_model(backendtest::one_node_model({op.c_str(), "", opset, num_outputs}, inputs, attrs),
                                    options);
}

inline void expect_close(const Tensor& got, const Tensor& want, double rtol, double atol, const std::string& what) {
  backendtest::expect_close(got, want, {rtol, atol}, what);
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
