// Decline vs fail, and the fallbacks the profiler reports per node: a fast factory that cannot
// take a node declines with a reason (kept in Profiler::Entry::declined); a run a fast kernel
// hands to the reference kernel is marked as uncovered (an input its code does not cover) or
// nonfinite (a result redone with the reference's NaN/inf semantics).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "converter/writer.h"
#include "runtime/core/log.h"
#include "runtime/exec/session.h"
#include "runtime/ops/op_families.h"
#include "tests/unit/graph_builder.h"
#include "xonnx/xonnx.h"

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

// The Gemm of FactoryDeclineKeepsItsReason: XNNPACK declines it (B is not a constant).
GraphBuilder gemm_with_input_b() {
  GraphBuilder b;
  b.input("a", 2);
  b.input("b", 2);
  b.output(b.node("Gemm", {"a", "b"}, {}, "y"));
  return b;
}

struct LogRecord {
  std::vector<std::pair<int, std::string>> messages;
};

// Whether XNNPACK kernels are registered (not in an XONNX_WITH_XNNPACK=OFF build).
bool have_xnnpack_gemm() {
  const std::vector<std::string> families = families_of_op("", "Gemm");
  return std::find(families.begin(), families.end(), "xnnpack") != families.end();
}

TEST(FallbackTest, DeclineToReferenceIsLoggedAsAWarning) {
  if (!have_xnnpack_gemm()) GTEST_SKIP() << "no XNNPACK kernels in this build";
  LogRecord record;
  set_log_sink(
      [](LogLevel level, const char* message, void* user) {
        static_cast<LogRecord*>(user)->messages.emplace_back(static_cast<int>(level), message);
      },
      &record, LogLevel::kInfo);
  GraphBuilder b = gemm_with_input_b();
  auto session = xnnpack_session(b);
  set_log_sink(nullptr, nullptr, LogLevel::kInfo);
  ASSERT_TRUE(session);
  ASSERT_EQ(record.messages.size(), 1u);
  EXPECT_EQ(record.messages[0].first, static_cast<int>(LogLevel::kWarning));
  const std::string& m = record.messages[0].second;
  EXPECT_NE(m.find("(Gemm)"), std::string::npos) << m;
  EXPECT_NE(m.find("runs on the reference kernel; declined by xnnpack: "), std::string::npos) << m;
  // No sink: nothing is recorded.
  auto quiet = xnnpack_session(b);
  EXPECT_EQ(record.messages.size(), 1u);
}

TEST(FallbackTest, CApiLogCallbackReceivesTheWarning) {
  if (!have_xnnpack_gemm()) GTEST_SKIP() << "no XNNPACK kernels in this build";
  GraphBuilder b = gemm_with_input_b();
  auto bytes = convert::serialize_model(b.model);
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  LogRecord record;
  auto callback = [](xonnx_log_level level, const char* message, void* user) {
    static_cast<LogRecord*>(user)->messages.emplace_back(static_cast<int>(level), message);
  };
  // Above the warning's level: not called.
  xonnx_set_log_callback(callback, &record, XONNX_LOG_ERROR);
  auto create = [&] {
    xonnx_session* s = nullptr;
    xonnx_status* st = xonnx_session_create_from_memory(bytes->data(), bytes->size(), nullptr, &s);
    EXPECT_EQ(st, nullptr) << xonnx_status_get_message(st);
    xonnx_status_release(st);
    xonnx_session_release(s);
  };
  // XNNPACK is the first candidate with the own kernels off (as in xnnpack_session).
  ASSERT_EQ(setenv("XONNX_DISABLE_OPTIMIZED", "1", 1), 0);
  create();
  EXPECT_TRUE(record.messages.empty());
  xonnx_set_log_callback(callback, &record, XONNX_LOG_WARNING);
  create();
  xonnx_set_log_callback(nullptr, nullptr, XONNX_LOG_DEBUG);
  create();  // removed: not called
  unsetenv("XONNX_DISABLE_OPTIMIZED");
  ASSERT_EQ(record.messages.size(), 1u);
  EXPECT_EQ(record.messages[0].first, XONNX_LOG_WARNING);
  EXPECT_NE(record.messages[0].second.find("(Gemm)"), std::string::npos) << record.messages[0].second;
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
