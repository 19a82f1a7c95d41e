// converter/passes/constants_to_initializers: every Constant form, graph outputs kept, Constants
// inside Loop bodies and main-graph Constants read by a body.
#include <gtest/gtest.h>

#include "converter/passes/passes.h"
#include "tests/unit/fold_test_util.h"

namespace xonnx {
namespace testing {
namespace {

using passes::constants_to_initializers;

TEST(PassConstants, LiftsEveryAttributeForm) {
  Model m = make_model();
  m.graph.inputs = {tensor_info("x", DataType::kFloat, {dim(2)})};
  m.graph.outputs = {untyped("y"), untyped("k")};
  m.graph.nodes = {make_node("Constant", {}, {"a"}, {attr_tensor("value", tensor_of<float>({1, 2}, {2}))}),
                   make_node("Constant", {}, {"b"}, {attr_float("value_float", 3.0f)}),
                   make_node("Constant", {}, {"c"}, {attr_floats("value_floats", {4, 5})}),
                   make_node("Constant", {}, {"i"}, {attr_ints("value_ints", {2})}),
                   make_node("Add", {"x", "a"}, {"s1"}),
                   make_node("Mul", {"s1", "b"}, {"s2"}),
                   make_node("Sub", {"s2", "c"}, {"s3"}),
                   make_node("Reshape", {"s3", "i"}, {"y"}),
                   make_node("Constant", {}, {"k"}, {attr_int("value_int", 7)})};
  bool changed = false;
  Model out = apply_pass(m, constants_to_initializers, {}, nullptr, &changed);
  EXPECT_TRUE(changed);
  EXPECT_EQ(count_op(out.graph, "Constant"), 1);  // 'k' is a graph output: stays a node
  EXPECT_EQ(out.graph.initializers.size(), 4u);
  ASSERT_NE(out.graph.find_initializer("b"), nullptr);
  EXPECT_EQ(out.graph.find_initializer("b")->tensor.rank(), 0u);
  EXPECT_EQ(out.graph.find_initializer("i")->tensor.dtype(), DataType::kInt64);
  expect_same_outputs(m, out, {tv<float>({1, 2}, {2})});

  bool again = true;
  apply_pass(out, constants_to_initializers, {}, nullptr, &again);
  EXPECT_FALSE(again);
}

// A Loop adding a body Constant and a main-graph Constant (read from the outer scope) each step.
Model loop_model() {
  Model m = make_model(17);
  m.graph.inputs = {tensor_info("n", DataType::kInt64, {}), tensor_info("x", DataType::kFloat, {dim(2)})};
  m.graph.outputs = {untyped("y")};
  auto body = std::make_shared<Graph>();
  body->name = "body";
  body->inputs = {tensor_info("iter", DataType::kInt64, {}), tensor_info("cond", DataType::kBool, {}),
                  tensor_info("v", DataType::kFloat, {dim(2)})};
  body->outputs = {untyped("cond_out"), untyped("v_out")};
  body->nodes = {make_node("Constant", {}, {"inner"}, {attr_tensor("value", tensor_of<float>({1, 10}, {2}))}),
                 make_node("Add", {"v", "inner"}, {"v1"}), make_node("Mul", {"v1", "outer"}, {"v_out"}),
                 make_node("Identity", {"cond"}, {"cond_out"})};
  Attribute b;
  b.name = "body";
  b.type = AttrType::kGraph;
  b.g = body;
  m.graph.nodes = {make_node("Constant", {}, {"outer"}, {attr_tensor("value", tensor_of<float>({2, 3}, {2}))}),
                   make_node("Loop", {"n", "", "x"}, {"y"}, {b})};
  return m;
}

TEST(PassConstants, LiftsInsideLoopBodyAndKeepsOuterCaptures) {
  const Model before = loop_model();
  Model after = loop_model();  // Graph attributes are shared pointers: build a second copy
  convert::ConvertOptions options;
  convert::PassContext ctx(options);
  auto changed = constants_to_initializers(after, ctx);
  ASSERT_TRUE(changed.is_ok()) << changed.status().to_string();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(count_op(after.graph, "Constant"), 0);
  ASSERT_NE(after.graph.find_initializer("outer"), nullptr);
  const Graph& body = *after.graph.nodes[0].attributes[0].g;
  EXPECT_EQ(count_op(body, "Constant"), 0);
  ASSERT_NE(body.find_initializer("inner"), nullptr);
  expect_same_outputs(before, after, {Value(Tensor::scalar<int64_t>(3)), tv<float>({1, 2}, {2})});
}

}  // namespace
}  // namespace testing
}  // namespace xonnx
