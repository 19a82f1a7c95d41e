// Session::set_profiler: one entry per executed node (subgraph nodes tagged with their scope),
// nothing recorded when detached.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include "runtime/exec/session.h"
#include "runtime/onnx/loader.h"

namespace xonnx {
namespace {

const std::string kModels = XONNX_TEST_MODELS_DIR;

Tensor read_pb(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string bytes = ss.str();
  auto t = parse_tensor_proto(bytes.data(), bytes.size(), path);
  EXPECT_TRUE(t.is_ok()) << t.status().to_string();
  return t.is_ok() ? std::move(t).value() : Tensor();
}

std::unique_ptr<Session> open_model(const std::string& name) {
  auto s = Session::create(kModels + "/" + name + "/model.onnx");
  EXPECT_TRUE(s.is_ok()) << s.status().to_string();
  return s.is_ok() ? std::move(s).value() : nullptr;
}

TEST(ProfileTest, OneEntryPerNode) {
  auto session = open_model("mlp");
  ASSERT_TRUE(session);
  const Tensor x = read_pb(kModels + "/mlp/test_data_set_0/input_0.pb");
  Profiler profiler;
  session->set_profiler(&profiler);
  ASSERT_TRUE(session->run({Value(x)}).is_ok());
  const auto& nodes = session->model().graph.nodes;
  ASSERT_EQ(profiler.entries().size(), nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Profiler::Entry& e = profiler.entries()[i];
    EXPECT_EQ(e.node, nodes[i].name);  // the mlp's nodes are named and already in order
    EXPECT_EQ(e.op_type, nodes[i].op_type);
    EXPECT_EQ(e.scope, "");
    EXPECT_GE(e.us, 0.0);
    EXPECT_DOUBLE_EQ(e.self_us, e.us);  // no subgraphs
    EXPECT_TRUE(e.backend == Backend::kReference || e.backend == Backend::kXnnpack || e.backend == Backend::kOptimized);
  }
  // A second run appends; clear() empties.
  ASSERT_TRUE(session->run({Value(x)}).is_ok());
  EXPECT_EQ(profiler.entries().size(), 2 * nodes.size());
  profiler.clear();
  EXPECT_TRUE(profiler.entries().empty());
}

TEST(ProfileTest, DetachedRecordsNothing) {
  auto session = open_model("mlp");
  ASSERT_TRUE(session);
  const Tensor x = read_pb(kModels + "/mlp/test_data_set_0/input_0.pb");
  Profiler profiler;
  session->set_profiler(&profiler);
  session->set_profiler(nullptr);
  ASSERT_TRUE(session->run({Value(x)}).is_ok());
  EXPECT_TRUE(profiler.entries().empty());
}

TEST(ProfileTest, LoopBodyNodesAreScopedAndSelfTimed) {
  auto session = open_model("loop_model");
  ASSERT_TRUE(session);
  const Tensor x = read_pb(kModels + "/loop_model/test_data_set_0/input_0.pb");  // [5,2,8]: 5 iterations
  ASSERT_EQ(x.dim(0), 5);
  const Graph& g = session->model().graph;
  const Node* loop = nullptr;
  for (const Node& n : g.nodes) {
    if (n.op_type == "Loop") loop = &n;
  }
  ASSERT_NE(loop, nullptr);
  const Attribute* body = loop->find_attr("body");
  ASSERT_TRUE(body && body->g);
  // Constant nodes are evaluated at session creation, so they are not profiled.
  auto executed = [](const Graph& graph) {
    size_t n = 0;
    for (const Node& node : graph.nodes) n += node.op_type == "Constant" ? 0 : 1;
    return n;
  };
  const size_t body_nodes = executed(*body->g);

  Profiler profiler;
  session->set_profiler(&profiler);
  ASSERT_TRUE(session->run({Value(x)}).is_ok());
  size_t top = 0, inner = 0;
  double top_us = 0, self_us = 0;
  for (const Profiler::Entry& e : profiler.entries()) {
    if (e.scope.empty()) {
      ++top;
      top_us += e.us;
    } else {
      EXPECT_EQ(e.scope, loop->name);
      ++inner;
    }
    self_us += e.self_us;
    EXPECT_LE(e.self_us, e.us + 1e-9);
  }
  EXPECT_EQ(top, executed(g));
  EXPECT_EQ(inner, 5 * body_nodes);
  // Self times partition the run (less the profiler's own recording time): body nodes are
  // not counted twice.
  EXPECT_GT(self_us, 0.0);
  EXPECT_LE(self_us, top_us * (1 + 1e-9) + 1e-9);
}

}  // namespace
}  // namespace xonnx
