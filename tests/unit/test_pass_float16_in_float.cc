// compute_float16_in_float (session creation): a float16 model's values become float32 inside
// the graph, its float16 inputs and outputs keep their types, and the session computes what the
// float32 model computes.
#include <cstring>

#include "runtime/exec/session.h"
#include "runtime/passes/passes.h"
#include "runtime/passes/shape_inference.h"
#include "tests/unit/fuse_test_util.h"
#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace testing {
namespace {

Tensor f16(const std::vector<float>& v, Shape s) {
  Tensor t = Tensor::allocate(DataType::kFloat16, std::move(s)).value();
  for (size_t i = 0; i < v.size(); ++i) t.data<Float16>()[i].bits = float_to_half(v[i]);
  return t;
}

// The values of `v` rounded to float16 and back.
std::vector<float> halves(const std::vector<float>& v) {
  std::vector<float> out;
  for (float f : v) out.push_back(half_to_float(float_to_half(f)));
  return out;
}

Node cast(const std::string& in, const std::string& out, DataType to) {
  Node n = make_node("Cast", {in}, {out});
  n.attributes = {attr_int("to", static_cast<int64_t>(to))};
  return n;
}

// onnxconverter-common's form: x (float) -> Cast -> Conv -> Relu "r" -> Mul by a scalar -> Cast
// -> y (float); "r" is also a float16 output that the Mul reads. `half`: float16 weights and
// values; else the float32 model it stands for (the weights are the float16 ones, widened).
Model conv_block(bool half) {
  Model m = make_model(17);
  const DataType t = half ? DataType::kFloat16 : DataType::kFloat;
  m.graph.inputs = {tensor_info("x", DataType::kFloat, {dim(1), dim(4), dim(6), dim(6)})};
  m.graph.outputs = {tensor_info("y", DataType::kFloat, {}), tensor_info("r", t, {})};
  const auto weight = [&](const std::vector<float>& v, Shape s) { return half ? f16(v, s) : f32(halves(v), s); };
  add_init(m.graph, "w", weight(noise(8 * 4 * 9, 1, -0.5f, 0.5f), {8, 4, 3, 3}));
  add_init(m.graph, "b", weight(noise(8, 2), {8}));
  add_init(m.graph, "s", weight({0.75f}, {}));
  std::string in = "x";
  if (half) {
    m.graph.nodes.push_back(cast("x", "xh", DataType::kFloat16));
    in = "xh";
  }
  Node conv = make_node("Conv", {in, "w", "b"}, {"c"});
  conv.attributes = {attr_ints("pads", {1, 1, 1, 1})};
  m.graph.nodes.push_back(conv);
  m.graph.nodes.push_back(make_node("Relu", {"c"}, {"r"}));
  m.graph.nodes.push_back(make_node("Mul", {"r", "s"}, {half ? "m" : "y"}));
  if (half) m.graph.nodes.push_back(cast("m", "y", DataType::kFloat));
  return m;
}

std::vector<float> floats(const Value& v) {
  const std::vector<double> d = doubles(v);
  return std::vector<float>(d.begin(), d.end());
}

TEST(Float16InFloat, ComputesTheFloatModelAndKeepsTheDeclaredTypes) {
  const std::vector<Value> in = {random_value({1, 4, 6, 6}, 5)};
  const std::vector<Value> want = run_model(conv_block(false), in);  // float32, reference kernels
  ASSERT_EQ(want.size(), 2u);
  for (int threads : {1, 2}) {
    SessionOptions o;
    o.num_threads = threads;
    auto s = Session::create_from_model(conv_block(true), o);
    ASSERT_TRUE(s.is_ok()) << s.status().to_string();
    auto got = (*s)->run(in);
    ASSERT_TRUE(got.is_ok()) << got.status().to_string();
    ASSERT_EQ(got->size(), 2u);
    EXPECT_EQ((*got)[0].tensor().dtype(), DataType::kFloat);
    EXPECT_EQ((*got)[1].tensor().dtype(), DataType::kFloat16);
    const std::vector<float> y = floats((*got)[0]), y_want = floats(want[0]);
    for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], y_want[i], 1e-5) << i;
    // The float16 output is the float32 value rounded once.
    EXPECT_EQ(floats((*got)[1]), halves(floats(want[1])));
    // Nothing inside the graph is float16 now but the final Cast's output.
    const passes::ShapeFacts facts = passes::infer_shapes((*s)->model());
    for (const Node& n : (*s)->model().graph.nodes)
      for (const std::string& v : n.outputs) {
        const TypeInfo* type = facts.type(v);
        if (type && type->elem_type == DataType::kFloat16) {
          EXPECT_EQ(v, "r") << n.op_type;
        }
      }
  }
  // --optimize none keeps float16 arithmetic: within float16's precision of the float model.
  const std::vector<Value> strict = run_model(conv_block(true), in);
  ASSERT_EQ(strict.size(), 2u);
  EXPECT_LE(max_abs_diff({strict[0]}, {want[0]}), 2e-2);
  EXPECT_GT(max_abs_diff({strict[0]}, {want[0]}), 0.0);  // the rounding the rewrite removes
}

TEST(Float16InFloat, ASecondRunFindsNothingToDo) {
  bool changed = false;
  std::vector<std::string> warnings;
  Model once = apply_pass(conv_block(true), passes::compute_float16_in_float, {}, &warnings, &changed);
  EXPECT_TRUE(changed);
  apply_pass(once, passes::compute_float16_in_float, {}, &warnings, &changed);
  EXPECT_FALSE(changed);
  // A float model is not touched.
  apply_pass(conv_block(false), passes::compute_float16_in_float, {}, &warnings, &changed);
  EXPECT_FALSE(changed);
}

// Constant folding turns a float16 weight's Cast to float into floats made when read: nothing
// resident after the pass, and any byte range (unaligned, across the pieces it converts) holds
// the halves widened.
TEST(Float16InFloat, CastWeightsAreWidenedWhenRead) {
  Model m = make_model(17);
  m.graph.inputs = {tensor_info("x", DataType::kFloat, {dim(1), dim(9000)})};
  m.graph.outputs = {tensor_info("y", DataType::kFloat, {})};
  const std::vector<float> v = halves(noise(9000, 4, -3.0f, 3.0f));
  add_init(m.graph, "wh", f16(v, {1, 9000}));
  m.graph.nodes.push_back(cast("wh", "w", DataType::kFloat));
  m.graph.nodes.push_back(make_node("Add", {"x", "w"}, {"y"}));
  Model out = apply_pass(m, passes::constant_folding);
  ASSERT_EQ(out.graph.nodes.size(), 1u);
  const std::string& name = out.graph.nodes[0].inputs[1];
  const Tensor* w = constant_tensor(out.graph, name);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->dtype(), DataType::kFloat);
  EXPECT_EQ(w->shape(), (Shape{1, 9000}));
  EXPECT_FALSE(w->storage()->resident());
  const size_t bytes = v.size() * sizeof(float);
  for (const auto& [offset, n] :
       std::vector<std::pair<size_t, size_t>>{{0, bytes}, {3, 17}, {16381, 9}, {bytes - 6, 6}}) {
    std::vector<char> got(n);
    w->read_bytes(offset, n, got.data());
    EXPECT_EQ(std::memcmp(got.data(), reinterpret_cast<const char*>(v.data()) + offset, n), 0) << offset << " + " << n;
  }
  EXPECT_FALSE(w->storage()->resident());
  expect_same_outputs(m, out, {random_value({1, 9000}, 6)});
}

// x (float16) + c (float16) -> ConstantOfShape(float16 value) * ... -> y (float16): float16
// inputs, outputs and attribute-made values.
Model half_io() {
  Model m = make_model(17);
  m.graph.inputs = {tensor_info("x", DataType::kFloat16, {dim(2), dim(3)})};
  m.graph.outputs = {tensor_info("y", DataType::kFloat16, {})};
  add_init(m.graph, "c", f16({0.5f, -1.25f, 3.0f}, {3}));
  add_init(m.graph, "shape", i64({2, 3}));
  Node fill = make_node("ConstantOfShape", {"shape"}, {"ones"});
  Attribute value;
  value.name = "value";
  value.type = AttrType::kTensor;
  value.t = f16({2.0f}, {1});
  fill.attributes = {value};
  m.graph.nodes.push_back(fill);
  m.graph.nodes.push_back(make_node("Add", {"x", "c"}, {"a"}));
  m.graph.nodes.push_back(make_node("Mul", {"a", "ones"}, {"y"}));
  return m;
}

TEST(Float16InFloat, Float16InputsOutputsAndAttributes) {
  const std::vector<float> x = halves(noise(6, 9, -4.0f, 4.0f));
  const std::vector<Value> in = {Value(f16(x, {2, 3}))};
  auto s = Session::create_from_model(half_io());
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  auto got = s.value()->run(in);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  ASSERT_EQ((*got)[0].tensor().dtype(), DataType::kFloat16);
  const float c[3] = {0.5f, -1.25f, 3.0f};
  std::vector<float> want;
  for (size_t i = 0; i < x.size(); ++i) want.push_back((x[i] + c[i % 3]) * 2.0f);
  EXPECT_EQ(floats((*got)[0]), halves(want));
  bool changed = false;
  Model once = apply_pass(half_io(), passes::compute_float16_in_float, {}, nullptr, &changed);
  ASSERT_TRUE(changed);
  const passes::ShapeFacts facts = passes::infer_shapes(once);
  for (const char* v : {"a", "ones"}) {
    ASSERT_NE(facts.type(v), nullptr) << v;
    EXPECT_EQ(facts.type(v)->elem_type, DataType::kFloat) << v;
  }
}

TEST(Float16InFloat, LeavesGraphsWithSubgraphsAlone) {
  Model m = half_io();
  auto branch = std::make_shared<Graph>();
  branch->outputs = {tensor_info("z", DataType::kFloat16, {})};
  branch->nodes.push_back(make_node("Identity", {"x"}, {"z"}));
  m.graph.inputs.push_back(tensor_info("cond", DataType::kBool, {}));
  Node if_node = make_node("If", {"cond"}, {"z_out"});
  Attribute then_branch, else_branch;
  then_branch.name = "then_branch";
  else_branch.name = "else_branch";
  then_branch.type = else_branch.type = AttrType::kGraph;
  then_branch.g = else_branch.g = branch;
  if_node.attributes = {then_branch, else_branch};
  m.graph.nodes.push_back(if_node);
  m.graph.outputs.push_back(untyped("z_out"));
  bool changed = true;
  Model after = apply_pass(m, passes::compute_float16_in_float, {}, nullptr, &changed);
  EXPECT_FALSE(changed);
  EXPECT_EQ(op_list(after.graph), op_list(m.graph));
}

}  // namespace
}  // namespace testing
}  // namespace xonnx
