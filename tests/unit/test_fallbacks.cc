// Decline vs fail, and the fallbacks the profiler reports per node: a fast factory that cannot
// take a node declines with a reason (kept in Profiler::Entry::declined); a run a fast kernel
// hands to the reference kernel is marked as uncovered (an input its code does not cover) or
// nonfinite (a result redone with the reference's NaN/inf semantics).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "runtime/exec/session.h"
#include "tests/unit/graph_builder.h"

namespace xonnx {
namespace {

using testing::GraphBuilder;

// One session over `b`'s model with the own kernels off, so the XNNPACK candidate is the
// first one tried; nullptr (and a test failure) when creation fails.
std::unique_ptr<Session> xnnpack_session(GraphBuilder& b) {
  SessionOptions options;
  options.disable_optimized = true;
  auto s = Session::create_from_model(b.model, options);
  EXPECT_TRUE(s.is_ok()) << s.status().to_string();
  return s.is_ok() ? std::move(s).value() : nullptr;
}

// The one entry of the node `op` in a profiled run of `session` on `inputs`.
Profiler::Entry run_profiled(Session& session, const std::vector<Value>& inputs, const std::string& op) {
  Profiler profiler;
  session.set_profiler(&profiler);
  auto out = session.run(inputs);
  session.set_profiler(nullptr);
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  for (const Profiler::Entry& e : profiler.entries()) {
    if (e.op_type == op) return e;
  }
  ADD_FAILURE() << "no profile entry for " << op;
  return {};
}

GraphBuilder relu_model() {
  GraphBuilder b;
  b.input("x", 2);
  b.output(b.node("Relu", {"x"}, {}, "y"));
  return b;
}

TEST(FallbackTest, FactoryDeclineKeepsItsReason) {
  // A Gemm whose B is a graph input: XNNPACK's fully-connected kernel needs a constant B.
  GraphBuilder b;
  b.input("a", 2);
  b.input("b", 2);
  b.output(b.node("Gemm", {"a", "b"}, {}, "y"));
  auto session = xnnpack_session(b);
  ASSERT_TRUE(session);
  const Tensor a = Tensor::from_vector<float>({1, 2, 3, 4}, {2, 2});
  const Profiler::Entry e = run_profiled(*session, {Value(a), Value(a)}, "Gemm");
  EXPECT_EQ(e.backend, Backend::kReference);
  EXPECT_EQ(e.declined.rfind("xnnpack: ", 0), 0u) << e.declined;
  EXPECT_NE(e.declined.find("B"), std::string::npos) << e.declined;  // the reason names what
  EXPECT_FALSE(e.uncovered);
  EXPECT_FALSE(e.nonfinite);
}

TEST(FallbackTest, NonFiniteRerunIsReported) {
  GraphBuilder b = relu_model();
  auto session = xnnpack_session(b);
  ASSERT_TRUE(session);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor finite = Tensor::from_vector<float>({-1, 2, -3, 4}, {2, 2});
  const Tensor with_nan = Tensor::from_vector<float>({-1, nan, -3, 4}, {2, 2});

  Profiler::Entry e = run_profiled(*session, {Value(finite)}, "Relu");
  ASSERT_EQ(e.backend, Backend::kXnnpack);
  EXPECT_TRUE(e.declined.empty()) << e.declined;
  EXPECT_FALSE(e.nonfinite);
  EXPECT_FALSE(e.uncovered);

  e = run_profiled(*session, {Value(with_nan)}, "Relu");
  EXPECT_EQ(e.backend, Backend::kXnnpack);  // the node's kernel; this run went to the reference
  EXPECT_TRUE(e.nonfinite);
  EXPECT_FALSE(e.uncovered);
  auto out = session->run({Value(with_nan)});
  ASSERT_TRUE(out.is_ok());
  EXPECT_TRUE(std::isnan((*out)[0].tensor().data<float>()[1]));  // the reference's NaN rule
}

TEST(FallbackTest, UncoveredInputIsReported) {
  GraphBuilder b = relu_model();
  auto session = xnnpack_session(b);
  ASSERT_TRUE(session);
  const Tensor empty = Tensor::from_vector<float>({}, {0, 3});  // XNNPACK's path takes no empty tensor
  const Profiler::Entry e = run_profiled(*session, {Value(empty)}, "Relu");
  EXPECT_EQ(e.backend, Backend::kXnnpack);
  EXPECT_TRUE(e.uncovered);
  EXPECT_FALSE(e.nonfinite);
}

}  // namespace
}  // namespace xonnx
