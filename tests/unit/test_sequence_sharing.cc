// Sequences are values, but SequenceInsert / SequenceErase update their input in place when
// nobody else holds it (the node is its last reader: KernelContext::take_input_value, and the
// Loop moves its loop-carried values through the body): a Loop that appends is linear, not
// quadratic. These tests check the speed-up and that no other reader ever sees a change.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "runtime/exec/session.h"

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
          std::vector<Attribute> attrs = {}) {
  Node n;
  n.op_type = op;
  n.name = outputs.empty() ? op : outputs[0];
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  n.attributes = std::move(attrs);
  return n;
}

Attribute int_attr(const std::string& name, int64_t value) {
  Attribute a;
  a.name = name;
  a.type = AttrType::kInt;
  a.i = value;
  return a;
}

Attribute graph_attr(const std::string& name, Graph g) {
  Attribute a;
  a.name = name;
  a.type = AttrType::kGraph;
  a.g = std::make_shared<Graph>(std::move(g));
  return a;
}

std::unique_ptr<Session> session_for(Graph g) {
  Model m;
  m.ir_version = 8;
  m.opset_imports[""] = 17;
  m.graph = std::move(g);
  SessionOptions options;
  options.optimization = passes::OptLevel::kNone;  // the graphs as written
  auto s = Session::create_from_model(m, options);
  EXPECT_TRUE(s.is_ok()) << s.status().to_string();
  return s.is_ok() ? std::move(s).value() : nullptr;
}

std::vector<int64_t> ints(const Value& v) {
  const Tensor& t = v.tensor();
  return std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.numel());
}

std::vector<int64_t> items(const Value& v) {
  std::vector<int64_t> out;
  for (const Tensor& t : v.sequence().items) out.push_back(t.get_as_int64(0));
  return out;
}

Value scalar(int64_t x) { return Value(Tensor::scalar<int64_t>(x)); }

// s = SequenceEmpty(int64); Loop m times: s = SequenceInsert(s, iter); out = Concat(s).
Graph appending_loop() {
  Graph body;
  body.inputs = {tensor_info("iter", DataType::kInt64), tensor_info("cond_in", DataType::kBool), sequence_info("s_in")};
  body.nodes.push_back(node("Identity", {"cond_in"}, {"cond_out"}));
  body.nodes.push_back(node("SequenceInsert", {"s_in", "iter"}, {"s_out"}));
  body.outputs = {tensor_info("cond_out", DataType::kBool), sequence_info("s_out")};
  Graph g;
  g.inputs = {tensor_info("m", DataType::kInt64)};
  g.nodes.push_back(node("SequenceEmpty", {}, {"s0"}, {int_attr("dtype", 7)}));
  g.nodes.push_back(node("Loop", {"m", "", "s0"}, {"s"}, {graph_attr("body", std::move(body))}));
  g.nodes.push_back(node("ConcatFromSequence", {"s"}, {"all"}, {int_attr("axis", 0), int_attr("new_axis", 1)}));
  g.outputs = {tensor_info("all", DataType::kInt64)};
  return g;
}

TEST(SequenceSharing, LoopThatAppendsIsLinear) {
  auto session = session_for(appending_loop());
  ASSERT_TRUE(session);
  auto small = session->run({scalar(5)});
  ASSERT_TRUE(small.is_ok()) << small.status().to_string();
  EXPECT_EQ(ints((*small)[0]), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  // 40,000 appends: copying the list per insert is 8 * 10^8 tensor copies (minutes under
  // ASan); in place it is one body run per iteration.
  constexpr int64_t kN = 40000;
  const auto t0 = std::chrono::steady_clock::now();
  auto big = session->run({scalar(kN)});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(big.is_ok()) << big.status().to_string();
  const std::vector<int64_t> all = ints((*big)[0]);
  ASSERT_EQ(all.size(), static_cast<size_t>(kN));
  for (int64_t i = 0; i < kN; ++i) ASSERT_EQ(all[static_cast<size_t>(i)], i);
  EXPECT_LT(seconds, 20.0);
}

TEST(SequenceSharing, InsertNeverChangesAValueAnotherReaderHolds) {
  // s1 = Insert(s0, 1) and s2 = Insert(s0, 2): the second is s0's last reader and may take it,
  // the first must not have changed it. s0 itself is also an output in the second graph.
  for (bool s0_is_output : {false, true}) {
    Graph g;
    g.nodes.push_back(node("Constant", {}, {"zero"}, {}));
    Attribute v;
    v.name = "value";
    v.type = AttrType::kTensor;
    v.t = Tensor::scalar<int64_t>(0);
    g.nodes.back().attributes.push_back(v);
    g.inputs = {tensor_info("one", DataType::kInt64), tensor_info("two", DataType::kInt64)};
    g.nodes.push_back(node("SequenceConstruct", {"zero"}, {"s0"}));
    g.nodes.push_back(node("SequenceInsert", {"s0", "one"}, {"s1"}));
    g.nodes.push_back(node("SequenceInsert", {"s0", "two"}, {"s2"}));
    g.outputs = {sequence_info("s1"), sequence_info("s2")};
    if (s0_is_output) g.outputs.push_back(sequence_info("s0"));
    auto session = session_for(std::move(g));
    ASSERT_TRUE(session);
    for (int run = 0; run < 2; ++run) {
      auto out = session->run({scalar(1), scalar(2)});
      ASSERT_TRUE(out.is_ok()) << out.status().to_string();
      EXPECT_EQ(items((*out)[0]), (std::vector<int64_t>{0, 1}));
      EXPECT_EQ(items((*out)[1]), (std::vector<int64_t>{0, 2}));
      if (s0_is_output) {
        EXPECT_EQ(items((*out)[2]), (std::vector<int64_t>{0}));
      }
    }
  }
}

TEST(SequenceSharing, RunInputsAreNeverChanged) {
  Graph g;
  g.inputs = {sequence_info("s_in"), tensor_info("x", DataType::kInt64)};
  g.nodes.push_back(node("SequenceInsert", {"s_in", "x"}, {"s_ins"}));
  g.nodes.push_back(node("SequenceErase", {"s_ins"}, {"s_out"}, {}));
  g.nodes.back().inputs.push_back("zero_pos");
  g.initializers.push_back({"zero_pos", Tensor::scalar<int64_t>(0)});
  g.outputs = {sequence_info("s_out")};
  auto session = session_for(std::move(g));
  ASSERT_TRUE(session);
  auto seq = std::make_shared<Sequence>();
  seq->elem_type = DataType::kInt64;
  seq->items = {Tensor::scalar<int64_t>(10), Tensor::scalar<int64_t>(11)};
  const Value input = Value::sequence(seq);
  for (int run = 0; run < 2; ++run) {
    auto out = session->run({input, scalar(12)});
    ASSERT_TRUE(out.is_ok()) << out.status().to_string();
    EXPECT_EQ(items((*out)[0]), (std::vector<int64_t>{11, 12}));
    EXPECT_EQ(items(input), (std::vector<int64_t>{10, 11}));
  }
}

TEST(SequenceSharing, LoopBodyThatReadsTheOuterSequenceSeesItUnchanged) {
  // The Loop carries s0 and its body also reads s0 from the enclosing graph (SequenceLength,
  // a scan output): appending to the carried copy must not change what the body reads.
  Graph body;
  body.inputs = {tensor_info("iter", DataType::kInt64), tensor_info("cond_in", DataType::kBool), sequence_info("s_in")};
  body.nodes.push_back(node("Identity", {"cond_in"}, {"cond_out"}));
  body.nodes.push_back(node("SequenceInsert", {"s_in", "iter"}, {"s_out"}));
  body.nodes.push_back(node("SequenceLength", {"s0"}, {"outer_len"}));
  body.outputs = {tensor_info("cond_out", DataType::kBool), sequence_info("s_out"),
                  tensor_info("outer_len", DataType::kInt64)};
  Graph g;
  g.inputs = {tensor_info("m", DataType::kInt64), tensor_info("x", DataType::kInt64)};
  g.nodes.push_back(node("SequenceConstruct", {"x"}, {"s0"}));
  g.nodes.push_back(node("Loop", {"m", "", "s0"}, {"s", "lens"}, {graph_attr("body", std::move(body))}));
  g.nodes.push_back(node("SequenceLength", {"s"}, {"n"}));
  g.outputs = {tensor_info("n", DataType::kInt64), tensor_info("lens", DataType::kInt64)};
  auto session = session_for(std::move(g));
  ASSERT_TRUE(session);
  auto out = session->run({scalar(3), scalar(7)});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ(ints((*out)[0]), (std::vector<int64_t>{4}));
  EXPECT_EQ(ints((*out)[1]), (std::vector<int64_t>{1, 1, 1}));
}

TEST(SequenceSharing, SequenceGrowthStillHitsTheMemoryCap) {
  // The in-place path keeps the byte count (Sequence::held_bytes) the cap is checked against.
  auto session_g = appending_loop();
  Model m;
  m.ir_version = 8;
  m.opset_imports[""] = 17;
  m.graph = std::move(session_g);
  SessionOptions options;
  options.load.max_memory_bytes = 1 << 20;
  auto session = Session::create_from_model(m, options);
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  const int64_t entry = static_cast<int64_t>(sizeof(int64_t) + sizeof(Tensor));
  EXPECT_TRUE((*session)->run({scalar((1 << 20) / entry - 1)}).is_ok());
  auto over = (*session)->run({scalar((1 << 20) / entry + 1)});
  ASSERT_FALSE(over.is_ok());
  EXPECT_EQ(over.status().code(), StatusCode::kResourceExhausted) << over.status().to_string();
}

}  // namespace
}  // namespace xonnx
