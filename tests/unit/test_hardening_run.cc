// Run-time limits (issue 20): Loop iteration cap, run deadline and cancel, the memory cap on
// the session's buffers and on sequences, RE2 for RegexFullMatch, and errors that name the
// model's node when a session-time rewrite made the failing one. Each test builds its model.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "runtime/exec/session.h"
#include "runtime/ops/internal_ops.h"
#include "runtime/passes/layout_nhwc.h"

namespace xonnx {
namespace {

ValueInfo tensor_info(const std::string& name, DataType dtype) {
  ValueInfo v;
  v.name = name;
  v.type.kind = TypeInfo::Kind::kTensor;
  v.type.elem_type = dtype;
  return v;
}

ValueInfo sequence_info(const std::string& name) {
  ValueInfo v;
  v.name = name;
  v.type.kind = TypeInfo::Kind::kSequence;
  return v;
}

Node node(const std::string& op, std::vector<std::string> inputs, std::vector<std::string> outputs,
          const std::string& name, std::vector<Attribute> attrs = {}) {
  Node n;
  n.op_type = op;
  n.name = name;
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  n.attributes = std::move(attrs);
  return n;
}

Attribute graph_attr(const std::string& name, Graph g) {
  Attribute a;
  a.name = name;
  a.type = AttrType::kGraph;
  a.g = std::make_shared<Graph>(std::move(g));
  return a;
}

Model model_with(Graph g, int64_t opset = 17) {
  Model m;
  m.ir_version = 8;
  m.opset_imports[""] = opset;
  m.graph = std::move(g);
  return m;
}

// y = Loop(M, cond, x) whose body passes x through; `with_m` / `with_cond` leave them out.
Model passthrough_loop(bool with_m, bool with_cond) {
  Graph body;
  body.inputs = {tensor_info("iter", DataType::kInt64), tensor_info("cond_in", DataType::kBool),
                 tensor_info("x_in", DataType::kFloat)};
  body.nodes.push_back(node("Identity", {"cond_in"}, {"cond_out"}, "keep_going"));
  body.nodes.push_back(node("Identity", {"x_in"}, {"x_out"}, "pass"));
  body.outputs = {tensor_info("cond_out", DataType::kBool), tensor_info("x_out", DataType::kFloat)};
  Graph g;
  g.inputs = {tensor_info("m", DataType::kInt64), tensor_info("c", DataType::kBool),
              tensor_info("x", DataType::kFloat)};
  g.nodes.push_back(node("Loop", {with_m ? "m" : "", with_cond ? "c" : "", "x"}, {"y"}, "forever",
                         {graph_attr("body", std::move(body))}));
  g.outputs = {tensor_info("y", DataType::kFloat)};
  return model_with(std::move(g));
}

std::vector<Value> loop_inputs(int64_t m) {
  return {Value(Tensor::scalar<int64_t>(m)), Value(Tensor::scalar<bool>(true)),
          Value(Tensor::from_vector<float>({1.5f}, {1}))};
}

void expect_run_error(const Status& s, StatusCode code, const std::vector<std::string>& needles) {
  ASSERT_FALSE(s.is_ok()) << "expected an error mentioning '" << needles.front() << "'";
  EXPECT_EQ(s.code(), code) << s.to_string();
  for (const std::string& needle : needles) {
    EXPECT_NE(s.message().find(needle), std::string::npos) << "'" << needle << "' not in: " << s.to_string();
  }
}

TEST(HardeningRun, LoopIterationCap) {
  SessionOptions options;
  options.max_loop_iterations = 1000;
  auto session = Session::create_from_model(passthrough_loop(true, true), options);
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  auto ok = (*session)->run(loop_inputs(1000));
  ASSERT_TRUE(ok.is_ok()) << ok.status().to_string();
  EXPECT_EQ((*ok)[0].tensor().data<float>()[0], 1.5f);
  expect_run_error((*session)->run(loop_inputs(INT64_MAX)).status(), StatusCode::kResourceExhausted,
                   {"node 'forever' (Loop", "more than 1000 iterations", "max_loop_iterations"});
}

TEST(HardeningRun, LoopWithNeitherTripCountNorConditionIsAnError) {
  auto session = Session::create_from_model(passthrough_loop(false, false));
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  expect_run_error((*session)->run(loop_inputs(1)).status(), StatusCode::kInvalidModel,
                   {"'forever'", "neither a trip count M nor a condition"});
}

TEST(HardeningRun, DeadlineStopsARunawayLoop) {
  SessionOptions options;
  options.max_loop_iterations = INT64_MAX;
  options.run_timeout_seconds = 0.05;
  auto session = Session::create_from_model(passthrough_loop(true, true), options);
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  expect_run_error((*session)->run(loop_inputs(INT64_MAX)).status(), StatusCode::kCancelled,
                   {"deadline of 0.05 s", "run_timeout_seconds"});
  // The next run gets a fresh deadline.
  EXPECT_TRUE((*session)->run(loop_inputs(3)).is_ok());
}

TEST(HardeningRun, CancelFromAnotherThreadStopsTheRun) {
  SessionOptions options;
  options.max_loop_iterations = INT64_MAX;
  auto session = Session::create_from_model(passthrough_loop(true, true), options);
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  std::atomic<bool> done{false};
  // Cancels until the run ends: a cancel that comes before run() starts is not kept.
  std::thread canceller([&] {
    while (!done.load()) {
      (*session)->cancel();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  auto out = (*session)->run(loop_inputs(INT64_MAX));
  done = true;
  canceller.join();
  expect_run_error(out.status(), StatusCode::kCancelled, {"cancelled", "'forever'"});
}

TEST(HardeningRun, SequenceGrowthIsBoundedByTheMemoryCap) {
  // s = SequenceEmpty(); Loop M times: s = SequenceInsert(s, big) with big a 64 KiB outer tensor.
  Graph body;
  body.inputs = {tensor_info("iter", DataType::kInt64), tensor_info("cond_in", DataType::kBool), sequence_info("s_in")};
  body.nodes.push_back(node("Identity", {"cond_in"}, {"cond_out"}, "keep_going"));
  body.nodes.push_back(node("SequenceInsert", {"s_in", "big"}, {"s_out"}, "grow"));
  body.outputs = {tensor_info("cond_out", DataType::kBool), sequence_info("s_out")};
  Graph g;
  g.inputs = {tensor_info("m", DataType::kInt64)};
  g.initializers.push_back({"big", Tensor::from_vector<float>(std::vector<float>(16384, 1.0f), {16384})});
  g.nodes.push_back(node("SequenceEmpty", {}, {"s0"}, "empty"));
  g.nodes.push_back(node("Loop", {"m", "", "s0"}, {"s"}, "collect", {graph_attr("body", std::move(body))}));
  g.nodes.push_back(node("SequenceLength", {"s"}, {"n"}, "count"));
  g.outputs = {tensor_info("n", DataType::kInt64)};
  SessionOptions options;
  options.load.max_memory_bytes = 4 << 20;  // 64 sequence entries of 64 KiB
  auto session = Session::create_from_model(model_with(std::move(g)), options);
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  auto small = (*session)->run({Value(Tensor::scalar<int64_t>(10))});
  ASSERT_TRUE(small.is_ok()) << small.status().to_string();
  EXPECT_EQ((*small)[0].tensor().data<int64_t>()[0], 10);
  expect_run_error((*session)->run({Value(Tensor::scalar<int64_t>(1'000'000))}).status(),
                   StatusCode::kResourceExhausted, {"node 'grow' (SequenceInsert", "max_memory_bytes"});
}

TEST(HardeningRun, SessionBuffersAreBoundedByTheMemoryCap) {
  // a and b: ConstantOfShape of the input shape, both alive at the Add.
  Graph g;
  g.inputs = {tensor_info("shape", DataType::kInt64)};
  g.nodes.push_back(node("ConstantOfShape", {"shape"}, {"a"}, "fill_a"));
  g.nodes.push_back(node("ConstantOfShape", {"shape"}, {"b"}, "fill_b"));
  g.nodes.push_back(node("Add", {"a", "b"}, {"y"}, "sum"));
  g.outputs = {tensor_info("y", DataType::kFloat)};
  const Model m = model_with(std::move(g));
  SessionOptions options;
  options.load.max_memory_bytes = 2 << 20;
  options.optimization = passes::OptLevel::kNone;  // CSE would merge the two identical fills
  auto session = Session::create_from_model(m, options);
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  const Value small(Tensor::from_vector<int64_t>({1000}, {1}));
  ASSERT_TRUE((*session)->run({small}).is_ok());
  const Value each_fits(Tensor::from_vector<int64_t>({300'000}, {1}));  // 1.2 MB each, 2.4 MB together
  expect_run_error((*session)->run({each_fits}).status(), StatusCode::kResourceExhausted,
                   {"node 'fill_b' (ConstantOfShape", "memory cap", "max_memory_bytes"});
  const Value too_big(Tensor::from_vector<int64_t>({int64_t{1} << 40}, {1}));
  expect_run_error((*session)->run({too_big}).status(), StatusCode::kResourceExhausted,
                   {"node 'fill_a' (ConstantOfShape", "over the memory cap"});
  ASSERT_TRUE((*session)->run({small}).is_ok());  // the session still works
}

TEST(HardeningRun, RegexFullMatchRunsInLinearTime) {
  // (a+)+$ against 65 a's and a b makes a backtracking engine (std::regex) run for hours.
  Attribute pattern;
  pattern.name = "pattern";
  pattern.type = AttrType::kString;
  pattern.s = "(a+)+$";
  Graph g;
  g.inputs = {tensor_info("x", DataType::kString)};
  g.nodes.push_back(node("RegexFullMatch", {"x"}, {"y"}, "re", {pattern}));
  g.outputs = {tensor_info("y", DataType::kBool)};
  auto session = Session::create_from_model(model_with(std::move(g), 20));
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  const std::vector<std::string> text = {std::string(65, 'a') + "b", std::string(65, 'a'), ""};
  auto out = (*session)->run({Value(Tensor::from_vector<std::string>(text, {3}))});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  const bool* y = (*out)[0].tensor().data<bool>();
  EXPECT_FALSE(y[0]);
  EXPECT_TRUE(y[1]);
  EXPECT_FALSE(y[2]);

  pattern.s = "(unclosed";
  Graph bad;
  bad.inputs = {tensor_info("x", DataType::kString)};
  bad.nodes.push_back(node("RegexFullMatch", {"x"}, {"y"}, "re", {pattern}));
  bad.outputs = {tensor_info("y", DataType::kBool)};
  expect_run_error(Session::create_from_model(model_with(std::move(bad), 20)).status(), StatusCode::kInvalidModel,
                   {"'re'", "not a valid RE2 regular expression"});
}

TEST(HardeningRun, RewrittenNodesNameTheModelsNode) {
  // An unnamed Conv: its NHWC rewrite produces 'y__nhwc', but errors must name what the user wrote.
  Graph g;
  ValueInfo x = tensor_info("x", DataType::kFloat);
  x.type.has_shape = true;
  x.type.dims.resize(4);
  g.inputs = {x};
  g.initializers.push_back({"w", Tensor::from_vector<float>(std::vector<float>(12, 0.5f), {4, 3, 1, 1})});
  Attribute kernel;
  kernel.name = "kernel_shape";
  kernel.type = AttrType::kInts;
  kernel.ints = {1, 1};
  g.nodes.push_back(node("Conv", {"x", "w"}, {"c"}, "", {kernel}));
  g.nodes.push_back(node("Relu", {"c"}, {"y"}, "act"));
  g.outputs = {tensor_info("y", DataType::kFloat)};
  Model m = model_with(std::move(g));
  ASSERT_TRUE(apply_nhwc_layout(m.graph, m.opset_imports).is_ok());
  const Node* conv = nullptr;
  for (const Node& n : m.graph.nodes) {
    if (n.domain == kNhwcDomain && n.op_type == "Conv") conv = &n;
  }
  ASSERT_NE(conv, nullptr) << "the layout pass did not rewrite the Conv";
  const std::string d = conv->describe();
  EXPECT_EQ(d.find("node producing '"), 0u) << d;  // the model's unnamed Conv ...
  EXPECT_NE(d.find("(Conv), rewritten by the session as"), std::string::npos) << d;
  EXPECT_NE(d.find(kNhwcDomain), std::string::npos) << d;
}

}  // namespace
}  // namespace xonnx
