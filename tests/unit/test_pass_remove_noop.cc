// converter/passes/remove_noop: each no-op form is removed, each look-alike that changes the
// value is kept, graph outputs keep their names.
#include <gtest/gtest.h>

#include "converter/passes/passes.h"
#include "tests/unit/fold_test_util.h"

namespace xonnx {
namespace testing {
namespace {

using passes::remove_noop;

// x -> op -> Relu -> y, so the op's output is an intermediate.
Model single_op(const std::string& op, std::vector<std::string> extra_inputs, std::vector<Attribute> attrs,
                std::vector<Dim> dims, int64_t opset = 17) {
  Model m = make_model(opset);
  m.graph.inputs = {tensor_info("x", DataType::kFloat, std::move(dims))};
  m.graph.outputs = {untyped("y")};
  std::vector<std::string> inputs = {"x"};
  inputs.insert(inputs.end(), extra_inputs.begin(), extra_inputs.end());
  m.graph.nodes = {make_node(op, inputs, {"t"}, std::move(attrs)), make_node("Relu", {"t"}, {"y"})};
  return m;
}

int nodes_after(const Model& m) { return static_cast<int>(apply_pass(m, remove_noop).graph.nodes.size()); }

TEST(PassRemoveNoop, RemovesNoopsAndKeepsLookAlikes) {
  const std::vector<Dim> d = {sym("batch"), dim(3), dim(4)};
  // Cast to its own type / to another type.
  EXPECT_EQ(nodes_after(single_op("Cast", {}, {attr_int("to", 1)}, d)), 1);
  EXPECT_EQ(nodes_after(single_op("Cast", {}, {attr_int("to", 10)}, d)), 2);
  // Identity permutation / a real one.
  EXPECT_EQ(nodes_after(single_op("Transpose", {}, {attr_ints("perm", {0, 1, 2})}, d)), 1);
  EXPECT_EQ(nodes_after(single_op("Transpose", {}, {attr_ints("perm", {0, 2, 1})}, d)), 2);
  EXPECT_EQ(nodes_after(single_op("Identity", {}, {}, d)), 1);
  EXPECT_EQ(nodes_after(single_op("Concat", {}, {attr_int("axis", 1)}, d)), 1);
}

TEST(PassRemoveNoop, ShapeDependentNoops) {
  auto with_init = [](Model m, const std::string& name, Tensor t) {
    add_init(m.graph, name, std::move(t));
    return m;
  };
  const std::vector<Dim> d = {sym("batch"), dim(3), dim(4)};
  // Reshape to [0, 3, 4] keeps the shape; [0, 12] does not.
  EXPECT_EQ(nodes_after(with_init(single_op("Reshape", {"s"}, {}, d), "s", i64({0, 3, 4}))), 1);
  EXPECT_EQ(nodes_after(with_init(single_op("Reshape", {"s"}, {}, d), "s", i64({0, 12}))), 2);
  // Expand to [1, 4] keeps [batch,3,4]; to [2,1,1,1] does not.
  EXPECT_EQ(nodes_after(with_init(single_op("Expand", {"s"}, {}, d), "s", i64({1, 4}))), 1);
  EXPECT_EQ(nodes_after(with_init(single_op("Expand", {"s"}, {}, d), "s", i64({2, 1, 1, 1}))), 2);
  // A Slice taking everything goes; a reversing one stays.
  Model full = single_op("Slice", {"st", "en", "ax"}, {}, d);
  add_init(full.graph, "st", i64({0}));
  add_init(full.graph, "en", i64({INT64_MAX}));
  add_init(full.graph, "ax", i64({2}));
  EXPECT_EQ(nodes_after(full), 1);
  Model rev = single_op("Slice", {"st", "en", "ax", "step"}, {}, d);
  add_init(rev.graph, "st", i64({-1}));
  add_init(rev.graph, "en", i64({INT64_MIN}));
  add_init(rev.graph, "ax", i64({2}));
  add_init(rev.graph, "step", i64({-1}));
  EXPECT_EQ(nodes_after(rev), 2);
  // Zero pads go, real pads stay.
  EXPECT_EQ(nodes_after(with_init(single_op("Pad", {"p"}, {}, d), "p", i64({0, 0, 0, 0, 0, 0}))), 1);
  EXPECT_EQ(nodes_after(with_init(single_op("Pad", {"p"}, {}, d), "p", i64({0, 0, 1, 0, 0, 0}))), 2);
  // Squeeze of a dim that is not 1 is invalid anyway; Squeeze of [.,1] keeps nothing the same.
  EXPECT_EQ(nodes_after(with_init(single_op("Unsqueeze", {"a"}, {}, d), "a", i64({0}))), 2);
}

// torch writes eval-mode attention dropout as Dropout(x, ratio 0, training_mode true) with a
// named mask nobody reads: nothing is dropped, so it goes; a real ratio or a read mask keeps it.
TEST(PassRemoveNoop, DropoutThatDropsNothing) {
  auto dropout = [](float ratio, bool training, bool read_mask) {
    Model m = make_model(17);
    m.graph.inputs = {tensor_info("x", DataType::kFloat, {dim(2), dim(3)})};
    m.graph.outputs = {untyped("y")};
    m.graph.nodes = {make_node("Dropout", {"x", "ratio", "train"}, {"t", "mask"}), make_node("Relu", {"t"}, {"y"})};
    add_init(m.graph, "ratio", Tensor::from_vector<float>({ratio}, {}));
    add_init(m.graph, "train", Tensor::from_vector<bool>({training}, {}));
    if (read_mask) m.graph.outputs.push_back(untyped("mask"));
    return m;
  };
  EXPECT_EQ(nodes_after(dropout(0.f, true, false)), 1);
  EXPECT_EQ(nodes_after(dropout(0.5f, false, false)), 1);
  EXPECT_EQ(nodes_after(dropout(0.1f, true, false)), 2);
  EXPECT_EQ(nodes_after(dropout(0.f, true, true)), 2);
  const Model m = dropout(0.f, true, false);
  expect_same_outputs(m, apply_pass(m, remove_noop), {tv<float>({-1, 2, -3, 4, 5, -6}, {2, 3})});
}

TEST(PassRemoveNoop, OutputsStayExact) {
  Model m = single_op("Reshape", {"s"}, {}, {dim(2), dim(3), dim(4)});
  add_init(m.graph, "s", i64({2, 3, 4}));
  Model out = apply_pass(m, remove_noop);
  ASSERT_EQ(out.graph.nodes.size(), 1u);
  EXPECT_EQ(out.graph.nodes[0].inputs[0], "x");
  std::vector<float> data = iota(24);
  for (float& v : data) v -= 12;
  expect_same_outputs(m, out, {tv<float>(data, {2, 3, 4})});
}

TEST(PassRemoveNoop, GraphOutputKeepsItsName) {
  Model m = make_model();
  m.graph.inputs = {tensor_info("x", DataType::kFloat, {dim(2), dim(2)})};
  m.graph.outputs = {untyped("y"), untyped("z")};
  m.graph.nodes = {make_node("Relu", {"x"}, {"r"}),
                   make_node("Cast", {"r"}, {"y"}, {attr_int("to", 1)}),  // producer renamed
                   make_node("Identity", {"x"}, {"z"})};                  // reads a graph input: kept
  Model out = apply_pass(m, remove_noop);
  ASSERT_EQ(out.graph.nodes.size(), 2u);
  EXPECT_EQ(out.graph.nodes[0].op_type, "Relu");
  EXPECT_EQ(out.graph.nodes[0].outputs[0], "y");
  EXPECT_EQ(out.graph.nodes[1].op_type, "Identity");
  EXPECT_EQ(out.graph.outputs[0].name, "y");
  expect_same_outputs(m, out, {tv<float>({-1, 2, -3, 4}, {2, 2})});
}

TEST(PassRemoveNoop, IdentityInsideLoopBody) {
  auto build = [] {
    Model m = make_model(17);
    m.graph.inputs = {tensor_info("n", DataType::kInt64, {}), tensor_info("x", DataType::kFloat, {dim(2)})};
    m.graph.outputs = {untyped("y")};
    auto body = std::make_shared<Graph>();
    body->inputs = {tensor_info("iter", DataType::kInt64, {}), tensor_info("cond", DataType::kBool, {}),
                    tensor_info("v", DataType::kFloat, {dim(2)})};
    body->outputs = {untyped("cond_out"), untyped("v_out")};
    body->nodes = {make_node("Identity", {"x"}, {"xi"}),  // outer-scope read
                   make_node("Add", {"v", "xi"}, {"v_out"}),
                   make_node("Identity", {"cond"}, {"cond_out"})};  // body input -> output: kept
    Attribute b;
    b.name = "body";
    b.type = AttrType::kGraph;
    b.g = body;
    m.graph.nodes = {make_node("Loop", {"n", "", "x"}, {"y"}, {b})};
    return m;
  };
  const Model before = build();
  Model after = build();
  convert::ConvertOptions options;
  convert::PassContext ctx(options);
  auto changed = remove_noop(after, ctx);
  ASSERT_TRUE(changed.is_ok());
  EXPECT_TRUE(*changed);
  const Graph& body = *after.graph.nodes[0].attributes[0].g;
  EXPECT_EQ(body.nodes.size(), 2u);
  expect_same_outputs(before, after, {Value(Tensor::scalar<int64_t>(3)), tv<float>({1, 2}, {2})});
}

}  // namespace
}  // namespace testing
}  // namespace xonnx
