// converter/passes/constant_folding: constant nodes, Shape chains over symbolic dims, the size
// limit, what is never folded, subgraph bodies, and the opset-14 encoder end to end.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "converter/passes/passes.h"
#include "runtime/passes/pipeline.h"
#include "runtime/onnx/loader.h"
#include "tests/unit/fold_test_util.h"

namespace xonnx {
namespace testing {
namespace {

using passes::constant_folding;

TEST(PassConstantFolding, FoldsConstantSubexpressions) {
  Model m = make_model();
  m.graph.inputs = {tensor_info("x", DataType::kFloat, {dim(3)})};
  m.graph.outputs = {untyped("y")};
  add_init(m.graph, "a", tensor_of<float>({1, 2, 3}, {3}));
  add_init(m.graph, "b", tensor_of<float>({0.5f, 0.25f, 2}, {3}));
  m.graph.nodes = {make_node("Mul", {"a", "b"}, {"ab"}), make_node("Sqrt", {"ab"}, {"r"}),
                   make_node("Add", {"x", "r"}, {"y"})};
  bool changed = false;
  Model out = apply_pass(m, constant_folding, {}, nullptr, &changed);
  EXPECT_TRUE(changed);
  ASSERT_EQ(out.graph.nodes.size(), 1u);
  EXPECT_EQ(out.graph.nodes[0].op_type, "Add");
  ASSERT_NE(out.graph.find_initializer("r"), nullptr);
  EXPECT_EQ(out.graph.find_initializer("ab"), nullptr);  // read by folded nodes only: gone with them
  EXPECT_EQ(out.graph.find_initializer("a"), nullptr);
  expect_same_outputs(m, out, {tv<float>({1, 2, 3}, {3})});
}

// Shape -> Gather -> Unsqueeze -> Concat -> Reshape with a symbolic batch: everything that does
// not depend on batch folds.
Model chain_model() {
  Model m = make_model(14);
  m.graph.inputs = {tensor_info("x", DataType::kFloat, {sym("batch"), dim(4), dim(16)})};
  m.graph.outputs = {untyped("y")};
  add_init(m.graph, "i0", Tensor::scalar<int64_t>(0));
  add_init(m.graph, "i1", Tensor::scalar<int64_t>(1));
  add_init(m.graph, "i2", Tensor::scalar<int64_t>(2));
  add_init(m.graph, "ax0", i64({0}));
  m.graph.nodes = {make_node("Shape", {"x"}, {"s"}),
                   make_node("Gather", {"s", "i0"}, {"b"}),
                   make_node("Gather", {"s", "i1"}, {"t"}),
                   make_node("Gather", {"s", "i2"}, {"d"}),
                   make_node("Mul", {"t", "d"}, {"td"}),
                   make_node("Unsqueeze", {"b", "ax0"}, {"ub"}),
                   make_node("Unsqueeze", {"td", "ax0"}, {"utd"}),
                   make_node("Concat", {"ub", "utd"}, {"target"}, {attr_int("axis", 0)}),
                   make_node("Reshape", {"x", "target"}, {"y"})};
  return m;
}

TEST(PassConstantFolding, ShapeChainFoldsAllButBatch) {
  const Model m = chain_model();
  Model out = apply_pass(m, constant_folding);
  // Left: Shape, Gather(batch), Unsqueeze(batch), Concat, Reshape.
  std::vector<std::string> ops;
  for (const Node& n : out.graph.nodes) ops.push_back(n.op_type);
  EXPECT_EQ(ops, (std::vector<std::string>{"Shape", "Gather", "Unsqueeze", "Concat", "Reshape"}));
  const NamedTensor* utd = out.graph.find_initializer("utd");
  ASSERT_NE(utd, nullptr);
  EXPECT_EQ(utd->tensor.shape(), Shape({1}));
  EXPECT_EQ(utd->tensor.get_as_int64(0), 64);
  std::vector<float> data = iota(2 * 64);
  expect_same_outputs(m, out, {tv<float>(data, {2, 4, 16})});
}

TEST(PassConstantFolding, StaticShapeFoldsCompletely) {
  Model m = chain_model();
  m.graph.inputs[0].type.dims[0] = dim(2);
  Model out = apply_pass(m, constant_folding);
  ASSERT_EQ(out.graph.nodes.size(), 1u);
  EXPECT_EQ(out.graph.nodes[0].op_type, "Reshape");
  expect_same_outputs(m, out, {tv<float>(iota(2 * 64), {2, 4, 16})});
}

// A shape computed through a value shape inference does not propagate (a rank-2 Reshape of
// Shape's output) is known only once that value is folded; the Shape of the Reshape it feeds
// then folds in the same walk (inference runs node by node, after the folds before the node),
// not in a later pipeline round.
TEST(PassConstantFolding, FoldsAgainWithTheShapesItsFoldsReveal) {
  Model m = make_model(14);
  m.graph.inputs = {tensor_info("x", DataType::kFloat, {dim(2), dim(6)})};
  m.graph.outputs = {untyped("y")};
  add_init(m.graph, "column", i64({2, 1}));
  add_init(m.graph, "flat", i64({-1}));
  add_init(m.graph, "i0", Tensor::scalar<int64_t>(0));
  m.graph.nodes = {make_node("Shape", {"x"}, {"s"}),
                   make_node("Reshape", {"s", "column"}, {"s2"}),  // [2, 1]: not propagated
                   make_node("Reshape", {"s2", "flat"}, {"target"}),
                   make_node("Reshape", {"x", "target"}, {"x2"}),
                   make_node("Shape", {"x2"}, {"s3"}),
                   make_node("Gather", {"s3", "i0"}, {"rows"}),
                   make_node("Cast", {"rows"}, {"rows_f"}, {attr_int("to", 1)}),
                   make_node("Mul", {"x2", "rows_f"}, {"y"})};
  bool changed = false;
  Model out = apply_pass(m, constant_folding, {}, nullptr, &changed);
  EXPECT_TRUE(changed);
  std::vector<std::string> ops;
  for (const Node& n : out.graph.nodes) ops.push_back(n.op_type);
  EXPECT_EQ(ops, (std::vector<std::string>{"Reshape", "Mul"}));
  // Of the folded values only those the remaining nodes read stay.
  std::vector<std::string> initializers;
  for (const NamedTensor& t : out.graph.initializers) initializers.push_back(t.name);
  std::sort(initializers.begin(), initializers.end());
  EXPECT_EQ(initializers, (std::vector<std::string>{"rows_f", "target"}));
  expect_same_outputs(m, out, {tv<float>(iota(12), {2, 6})});
}

TEST(PassConstantFolding, SizeLimitIsReportedAndRespected) {
  Model m = make_model();
  m.graph.inputs = {tensor_info("x", DataType::kFloat, {dim(256), dim(256)})};
  m.graph.outputs = {untyped("y")};
  add_init(m.graph, "shape", i64({256, 256}));
  m.graph.nodes = {
      make_node("ConstantOfShape", {"shape"}, {"ones"}, {attr_tensor("value", tensor_of<float>({1}, {1}))}),
      make_node("Add", {"x", "ones"}, {"y"})};
  convert::ConvertOptions small;
  small.fold_size_limit_bytes = 64 << 10;  // the 256 KB output is over it
  std::vector<std::string> warnings;
  bool changed = true;
  Model out = apply_pass(m, constant_folding, small, &warnings, &changed);
  EXPECT_FALSE(changed);
  EXPECT_EQ(out.graph.nodes.size(), 2u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("ConstantOfShape"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("limit"), std::string::npos) << warnings[0];

  Model folded = apply_pass(m, constant_folding);  // default 16 MB limit
  EXPECT_EQ(folded.graph.nodes.size(), 1u);
}

TEST(PassConstantFolding, LeavesNondeterministicUnknownAndOutputNodes) {
  Model m = make_model();
  m.graph.inputs = {tensor_info("x", DataType::kFloat, {dim(2)})};
  m.graph.outputs = {untyped("y"), untyped("direct"), untyped("custom")};
  add_init(m.graph, "a", tensor_of<float>({1, 2}, {2}));
  m.graph.nodes = {make_node("RandomUniformLike", {"a"}, {"r"}), make_node("Add", {"x", "r"}, {"y"}),
                   make_node("Neg", {"a"}, {"direct"}),  // a graph output: stays computed
                   make_node("NoSuchOp", {"a"}, {"custom"})};
  std::vector<std::string> warnings;
  bool changed = true;
  apply_pass(m, constant_folding, {}, &warnings, &changed);
  EXPECT_FALSE(changed);
  EXPECT_TRUE(warnings.empty()) << warnings[0];  // the unknown op is skipped quietly
}

TEST(PassConstantFolding, NeverDuplicatesASharedLargeConstant) {
  auto build = [](bool shared) {
    Model m = make_model();
    m.graph.inputs = {tensor_info("x", DataType::kFloat, {dim(2), dim(64)})};
    m.graph.outputs = {untyped("y")};
    std::vector<float> w(64 * 64);
    for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 7) - 3;
    add_init(m.graph, "w", tensor_of<float>(w, {64, 64}));  // 16 KB
    m.graph.nodes = {make_node("Transpose", {"w"}, {"wt"}), make_node("MatMul", {"x", "wt"}, {"y"})};
    if (shared) {
      m.graph.nodes[1].outputs = {"y0"};
      m.graph.nodes.push_back(make_node("MatMul", {"x", "w"}, {"y1"}));
      m.graph.nodes.push_back(make_node("Add", {"y0", "y1"}, {"y"}));
    }
    return m;
  };
  // Only the Transpose reads w: it folds and w goes with it.
  Model alone = apply_pass(build(false), constant_folding);
  EXPECT_EQ(count_op(alone.graph, "Transpose"), 0);
  EXPECT_EQ(alone.graph.find_initializer("w"), nullptr);
  ASSERT_NE(alone.graph.find_initializer("wt"), nullptr);
  std::vector<float> x = iota(128);
  expect_same_outputs(build(false), alone, {tv<float>(x, {2, 64})});
  // w is also read elsewhere: folding would store it twice, so the Transpose stays.
  bool changed = true;
  Model shared = apply_pass(build(true), constant_folding, {}, nullptr, &changed);
  EXPECT_FALSE(changed);
  EXPECT_EQ(count_op(shared.graph, "Transpose"), 1);
}

// A weight stored as float16 and cast to float (xonnx convert --quantize fp16): at session
// creation it folds up to cast_fold_limit_bytes, past the folding limit, since computed it would
// convert the whole weight on every run. A cast constant that another node also reads does not.
TEST(PassConstantFolding, WeightCastsFoldPastTheSizeLimitAtSessionCreation) {
  auto build = [](bool shared) {
    Model m = make_model();
    m.graph.inputs = {tensor_info("x", DataType::kFloat, {dim(2), dim(32)})};
    m.graph.outputs = {untyped("y")};
    std::vector<Float16> w(32 * 32);
    for (size_t i = 0; i < w.size(); ++i) w[i] = from_float<Float16>(static_cast<float>(i % 5) - 2);
    add_init(m.graph, "w16", Tensor::from_vector<Float16>(w, {32, 32}));  // 2 KB; 4 KB as float
    m.graph.nodes = {make_node("Cast", {"w16"}, {"w"}, {attr_int("to", 1)}), make_node("MatMul", {"x", "w"}, {"y"})};
    if (shared) {  // a second reader of the float16 constant
      m.graph.outputs.push_back(untyped("w16_copy"));
      m.graph.nodes.push_back(make_node("Identity", {"w16"}, {"w16_copy"}));
    }
    return m;
  };
  passes::PassOptions session;
  session.fold_size_limit_bytes = 1024;
  session.cast_fold_limit_bytes = 1 << 20;
  Model folded = apply_pass(build(false), constant_folding, session);
  EXPECT_EQ(count_op(folded.graph, "Cast"), 0);
  EXPECT_EQ(folded.graph.find_initializer("w16"), nullptr);
  ASSERT_NE(folded.graph.find_initializer("w"), nullptr);
  expect_same_outputs(build(false), folded, {tv<float>(iota(64), {2, 32})});

  passes::PassOptions converter = session;
  converter.cast_fold_limit_bytes = 0;  // the converter keeps the smaller file
  EXPECT_EQ(count_op(apply_pass(build(false), constant_folding, converter).graph, "Cast"), 1);
  EXPECT_EQ(count_op(apply_pass(build(true), constant_folding, session).graph, "Cast"), 1);
}

TEST(PassConstantFolding, FoldsInsideLoopBody) {
  auto build = [] {
    Model m = make_model(17);
    m.graph.inputs = {tensor_info("n", DataType::kInt64, {}), tensor_info("x", DataType::kFloat, {dim(2)})};
    m.graph.outputs = {untyped("y")};
    auto body = std::make_shared<Graph>();
    body->inputs = {tensor_info("iter", DataType::kInt64, {}), tensor_info("cond", DataType::kBool, {}),
                    tensor_info("v", DataType::kFloat, {dim(2)})};
    body->outputs = {untyped("cond_out"), untyped("v_out")};
    body->initializers = {{"c1", tensor_of<float>({1, 2}, {2})}, {"c2", tensor_of<float>({3, 4}, {2})}};
    body->nodes = {make_node("Mul", {"c1", "c2"}, {"c12"}), make_node("Add", {"v", "c12"}, {"v_out"}),
                   make_node("Identity", {"cond"}, {"cond_out"})};
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
  auto changed = constant_folding(after, ctx);
  ASSERT_TRUE(changed.is_ok());
  EXPECT_TRUE(*changed);
  const Graph& body = *after.graph.nodes[0].attributes[0].g;
  EXPECT_EQ(count_op(body, "Mul"), 0);
  EXPECT_NE(body.find_initializer("c12"), nullptr);
  expect_same_outputs(before, after, {Value(Tensor::scalar<int64_t>(2)), tv<float>({1, 1}, {2})});
}

// torch's LSTM export inside an If branch (silero VAD): the body cuts the gates out of a weight
// of the enclosing graph with Slice and joins them with Concat at every run. The body folds
// them with the outer constants in view; a Slice of a shared weight folds (its part is smaller
// than the whole, which goes once no part is computed any more).
TEST(PassConstantFolding, BodyFoldsSlicesOfAnOuterWeight) {
  auto build = [] {
    Model m = make_model(17);
    m.graph.inputs = {tensor_info("c", DataType::kBool, {}), tensor_info("x", DataType::kFloat, {dim(4), dim(64)})};
    m.graph.outputs = {untyped("y")};
    std::vector<float> w(64 * 64);
    for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 11) - 5;
    add_init(m.graph, "w", tensor_of<float>(w, {64, 64}));  // 16 KB, read by two Slices
    auto branch = [](const std::string& tag) {
      auto g = std::make_shared<Graph>();
      g->outputs = {untyped("out_" + tag)};
      g->initializers = {{"s0_" + tag, tensor_of<int64_t>({0}, {1})},
                         {"e0_" + tag, tensor_of<int64_t>({32}, {1})},
                         {"s1_" + tag, tensor_of<int64_t>({32}, {1})},
                         {"e1_" + tag, tensor_of<int64_t>({64}, {1})}};
      g->nodes = {make_node("Slice", {"w", "s0_" + tag, "e0_" + tag}, {"lo_" + tag}),
                  make_node("Slice", {"w", "s1_" + tag, "e1_" + tag}, {"hi_" + tag}),
                  make_node("Concat", {"hi_" + tag, "lo_" + tag}, {"wr_" + tag}, {attr_int("axis", 0)}),
                  make_node("MatMul", {"x", "wr_" + tag}, {"out_" + tag})};
      return g;
    };
    Attribute then_branch, else_branch;
    then_branch.name = "then_branch";
    then_branch.type = AttrType::kGraph;
    then_branch.g = branch("t");
    else_branch.name = "else_branch";
    else_branch.type = AttrType::kGraph;
    else_branch.g = branch("e");
    m.graph.nodes = {make_node("If", {"c"}, {"y"}, {then_branch, else_branch})};
    return m;
  };
  const Model before = build();
  Model after = apply_pass(build(), constant_folding);
  for (const Attribute& a : after.graph.nodes[0].attributes) {
    EXPECT_EQ(count_op(*a.g, "Slice"), 0) << a.name;
    EXPECT_EQ(count_op(*a.g, "Concat"), 0) << a.name;
  }
  const std::vector<float> x = iota(256);
  for (bool c : {true, false}) {
    expect_same_outputs(before, after, {Value(Tensor::scalar<bool>(c)), tv<float>(x, {4, 64})});
  }
}

// The opset-14 TransformerEncoder export: node counts after this engineer's passes, outputs
// still match torch's.
TEST(PassConstantFolding, EncoderOpset14ShrinksAndStillMatchesTorch) {
  const std::string dir = std::string(XONNX_TEST_MODELS_DIR) + "/transformer_encoder_opset14";
  auto model = load_model(dir + "/model.onnx");
  ASSERT_TRUE(model.is_ok()) << model.status().to_string();
  const size_t before = model->graph.nodes.size();
  const std::vector<convert::PassDef> mine = {{"constants-to-initializers", 1, passes::constants_to_initializers},
                                              {"constant-folding", 2, constant_folding},
                                              {"remove-noop", 1, passes::remove_noop},
                                              {"infer-shapes", 1, convert::infer_shapes_pass}};
  convert::ConvertOptions options;
  auto result = convert::run_pipeline(*model, mine, options);
  ASSERT_TRUE(result.is_ok()) << result.status().to_string();
  const size_t after = model->graph.nodes.size();
  std::printf("[ encoder ] opset-14 encoder nodes: %zu -> %zu with fold passes\n", before, after);
  EXPECT_EQ(before, 262u);
  EXPECT_LE(after, before / 2);                    // 130: Constants lifted, 64-dim chains folded, seq/batch merged
  EXPECT_EQ(count_op(model->graph, "Gather"), 2);  // seq and batch, read once for both layers

  for (int set = 0; set < 2; ++set) {
    const std::string ds = dir + "/test_data_set_" + std::to_string(set);
    auto x = load_value_file(ds + "/input_0.pb", model->graph.inputs[0].type);
    auto want = load_value_file(ds + "/output_0.pb", model->graph.outputs[0].type);
    ASSERT_TRUE(x.is_ok() && want.is_ok());
    std::vector<Value> got = run_model(*model, {*x});
    ASSERT_EQ(got.size(), 1u);
    std::vector<double> g = doubles(got[0]), w = doubles(*want);
    ASSERT_EQ(g.size(), w.size());
    for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], w[i], 1e-4 + 1e-4 * std::fabs(w[i]));
  }
}

}  // namespace
}  // namespace testing
}  // namespace xonnx
