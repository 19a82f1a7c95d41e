// Optimization at session creation (SessionOptions::optimization): a raw torch-style export
// gets what `xonnx convert` would do, in memory. Shared parameters reached through Identity
// nodes (TorchScript's export of tied / shared weights) end on a fast Gemm / MatMul kernel;
// a BatchNorm kept by TrainingMode.PRESERVE is folded into its Conv. Outputs match level none.
#include <gtest/gtest.h>

#include <set>

#include "runtime/exec/session.h"
#include "tests/unit/fuse_test_util.h"

namespace xonnx {
namespace testing {
namespace {

// X[8,64] -> MatMul(X, Identity(W)) + bias and MatMul(X, Identity(W)) again: one weight shared
// by two layers, each reading it through its own Identity.
Model shared_weight_model() {
  Model m = make_model(17);
  const int64_t k = 64, n = 48;
  m.graph.inputs = {tensor_info("x", DataType::kFloat, {dim(8), dim(k)})};
  m.graph.outputs = {untyped("y1"), untyped("y2")};
  add_init(m.graph, "w", f32(noise(static_cast<size_t>(k * n), 3), {k, n}));
  add_init(m.graph, "b", f32(noise(static_cast<size_t>(n), 4), {n}));
  m.graph.nodes.push_back(make_node("Identity", {"w"}, {"w_a"}));
  m.graph.nodes.push_back(make_node("Identity", {"w"}, {"w_b"}));
  m.graph.nodes.push_back(make_node("MatMul", {"x", "w_a"}, {"mm_a"}));
  m.graph.nodes.push_back(make_node("Add", {"mm_a", "b"}, {"y1"}));
  m.graph.nodes.push_back(make_node("MatMul", {"x", "w_b"}, {"y2"}));
  return m;
}

// Conv -> BatchNormalization -> Relu, as TrainingMode.PRESERVE exports a ResNet block.
Model preserved_batchnorm_model() {
  Model m = make_model(17);
  const int64_t cin = 3, cout = 8;
  m.graph.inputs = {tensor_info("x", DataType::kFloat, {dim(1), dim(cin), dim(12), dim(12)})};
  m.graph.outputs = {untyped("y")};
  add_init(m.graph, "w", f32(noise(static_cast<size_t>(cout * cin * 9), 7), {cout, cin, 3, 3}));
  add_init(m.graph, "scale", f32(noise(cout, 11, 0.5f, 1.5f), {cout}));
  add_init(m.graph, "bias", f32(noise(cout, 12), {cout}));
  add_init(m.graph, "mean", f32(noise(cout, 13), {cout}));
  add_init(m.graph, "var", f32(noise(cout, 14, 0.2f, 2.0f), {cout}));
  m.graph.nodes.push_back(make_node("Conv", {"x", "w"}, {"c"}, {attr_ints("pads", {1, 1, 1, 1})}));
  m.graph.nodes.push_back(
      make_node("BatchNormalization", {"c", "scale", "bias", "mean", "var"}, {"bn"}, {attr_float("epsilon", 1e-5f)}));
  m.graph.nodes.push_back(make_node("Relu", {"bn"}, {"y"}));
  return m;
}

std::unique_ptr<Session> create(const Model& m, passes::OptLevel level) {
  SessionOptions options;
  options.optimization = level;
  auto s = Session::create_from_model(m, options);
  EXPECT_TRUE(s.is_ok()) << s.status().to_string();
  return s.is_ok() ? std::move(s).value() : nullptr;
}

std::multiset<std::string> ops_of(const Session& s) {
  std::multiset<std::string> ops;
  for (const Node& n : s.model().graph.nodes) ops.insert(n.op_type);
  return ops;
}

TEST(SessionOptimize, SharedWeightsThroughIdentityRunOnFastKernels) {
  const Model m = shared_weight_model();
  auto optimized = create(m, passes::OptLevel::kAll);
  auto plain = create(m, passes::OptLevel::kNone);
  ASSERT_TRUE(optimized && plain);
  const auto ops = ops_of(*optimized);
  EXPECT_EQ(ops.count("Identity"), 0u);
  EXPECT_EQ(ops.count("Gemm"), 1u) << "MatMul + Add fused";
  EXPECT_EQ(ops_of(*plain).count("Identity"), 2u);

  const std::vector<Value> in = {Value(f32(noise(8 * 64, 5), {8, 64}))};
  Profiler profiler;
  optimized->set_profiler(&profiler);
  auto got = optimized->run(in);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  int matrix_nodes = 0;
  for (const Profiler::Entry& e : profiler.entries()) {
    if (e.op_type != "Gemm" && e.op_type != "MatMul") continue;
    ++matrix_nodes;
    EXPECT_NE(e.backend, Backend::kReference) << e.node << " (" << e.op_type << "): " << e.declined;
  }
  EXPECT_EQ(matrix_nodes, 2);
  auto want = plain->run(in);
  ASSERT_TRUE(want.is_ok());
  EXPECT_LE(max_abs_diff(*got, *want), 1e-4);
}

TEST(SessionOptimize, PreservedBatchNormIsFoldedIntoConv) {
  const Model m = preserved_batchnorm_model();
  auto optimized = create(m, passes::OptLevel::kAll);
  auto basic = create(m, passes::OptLevel::kBasic);
  auto plain = create(m, passes::OptLevel::kNone);
  ASSERT_TRUE(optimized && basic && plain);
  EXPECT_EQ(ops_of(*optimized).count("BatchNormalization"), 0u);
  EXPECT_EQ(ops_of(*basic).count("BatchNormalization"), 1u) << "BatchNorm folding is level all";
  EXPECT_EQ(ops_of(*plain).count("BatchNormalization"), 1u);

  const std::vector<Value> in = {Value(f32(noise(3 * 12 * 12, 9), {1, 3, 12, 12}))};
  auto got = optimized->run(in);
  auto want = plain->run(in);
  ASSERT_TRUE(got.is_ok() && want.is_ok());
  EXPECT_LE(max_abs_diff(*got, *want), 1e-4);
}

TEST(SessionOptimize, ReportListsThePassesThatRan) {
  auto optimized = create(preserved_batchnorm_model(), passes::OptLevel::kAll);
  auto plain = create(preserved_batchnorm_model(), passes::OptLevel::kNone);
  ASSERT_TRUE(optimized && plain);
  bool batchnorm_changed = false;
  for (const passes::PassStats& p : optimized->optimization_report().passes) {
    if (p.name == "fuse-batchnorm") batchnorm_changed = p.changed_runs > 0;
    EXPECT_GE(p.ms, 0.0);
  }
  EXPECT_TRUE(batchnorm_changed);
  for (const passes::PassStats& p : plain->optimization_report().passes) {
    EXPECT_TRUE(p.name == "qdq-fusion" || p.name == "layout-nhwc") << p.name << " ran at level none";
  }
}

// Below opset 20 the GELU fusion writes com.microsoft Gelu and imports the domain: the session
// must compile the fused graph with that import (torch exports are opset 14-17).
TEST(SessionOptimize, ErfGeluBelowOpset20RunsAsContribGelu) {
  Model m = make_model(17);
  m.graph.inputs = {tensor_info("x", DataType::kFloat, {dim(4), dim(16)})};
  m.graph.outputs = {untyped("y")};
  add_init(m.graph, "sqrt2", f32({1.41421356f}, {}));
  add_init(m.graph, "one", f32({1.0f}, {}));
  add_init(m.graph, "half", f32({0.5f}, {}));
  m.graph.nodes.push_back(make_node("Div", {"x", "sqrt2"}, {"s"}));
  m.graph.nodes.push_back(make_node("Erf", {"s"}, {"e"}));
  m.graph.nodes.push_back(make_node("Add", {"e", "one"}, {"a"}));
  m.graph.nodes.push_back(make_node("Mul", {"x", "a"}, {"xm"}));
  m.graph.nodes.push_back(make_node("Mul", {"xm", "half"}, {"y"}));
  auto optimized = create(m, passes::OptLevel::kAll);
  auto plain = create(m, passes::OptLevel::kNone);
  ASSERT_TRUE(optimized && plain);
  ASSERT_EQ(optimized->model().graph.nodes.size(), 1u);
  EXPECT_EQ(optimized->model().graph.nodes[0].domain, "com.microsoft");
  const std::vector<Value> in = {Value(f32(noise(64, 21, -3.0f, 3.0f), {4, 16}))};
  auto got = optimized->run(in);
  auto want = plain->run(in);
  ASSERT_TRUE(got.is_ok() && want.is_ok()) << got.status().to_string();
  EXPECT_LE(max_abs_diff(*got, *want), 1e-5);
}

TEST(SessionOptimize, ParsesLevels) {
  EXPECT_EQ(passes::parse_opt_level("none").value(), passes::OptLevel::kNone);
  EXPECT_EQ(passes::parse_opt_level("basic").value(), passes::OptLevel::kBasic);
  EXPECT_EQ(passes::parse_opt_level("all").value(), passes::OptLevel::kAll);
  auto bad = passes::parse_opt_level("fast");
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("none, basic or all"), std::string::npos);
}

}  // namespace
}  // namespace testing
}  // namespace xonnx
