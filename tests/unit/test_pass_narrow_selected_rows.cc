// narrow_selected_rows (session creation): a Gather of one index or a Slice of one range moves
// above the row-wise ops that computed its input, which then compute only those rows, with the
// same outputs; a climb stops at a value something else reads, and is not taken when no product
// or attention gets fewer rows.
#include <functional>

#include "runtime/passes/passes.h"
#include "runtime/passes/pass_util.h"
#include "runtime/passes/shape_inference.h"
#include "tests/unit/fuse_test_util.h"

namespace xonnx {
namespace testing {
namespace {

constexpr int64_t kRows = 5, kWidth = 8, kHidden = 16;

Model run(const Model& m, bool* changed) { return apply_pass(m, passes::narrow_selected_rows, {}, nullptr, changed); }

// The rows dim (axis 1) every MatMul of `m` with a 3-D output computes.
std::vector<int64_t> matmul_rows(const Model& m) {
  const passes::ShapeFacts facts = passes::infer_shapes(m);
  std::vector<int64_t> rows;
  for (const Node& n : m.graph.nodes) {
    if (n.op_type != "MatMul") continue;
    const std::vector<Dim>* d = facts.dims(n.outputs[0]);
    if (d && d->size() == 3) rows.push_back((*d)[1].value);
  }
  return rows;
}

std::string weight(Model& m, const std::string& name, int64_t k, int64_t n, uint32_t seed) {
  add_init(m.graph, name, f32(noise(static_cast<size_t>(k * n), seed, -0.5f, 0.5f), {k, n}));
  return name;
}

// A transformer's last block in torch's spelling: x [1, rows, 8] -> LayerNorm -> MatMul + bias
// -> erf GELU (its input read twice) -> MatMul -> residual Add -> `select` -> a classifier.
Model encoder_tail(const std::vector<Dim>& x_dims,
                   const std::function<std::string(Model&, const std::string&)>& select) {
  Model m = make_model(17);
  m.graph.inputs = {tensor_info("x", DataType::kFloat, x_dims)};
  add_init(m.graph, "ln_w", f32(noise(kWidth, 3, 0.5f, 1.5f), {kWidth}));
  add_init(m.graph, "ln_b", f32(noise(kWidth, 4), {kWidth}));
  add_init(m.graph, "b1", f32(noise(kHidden, 5), {kHidden}));
  add_init(m.graph, "half", f32({0.5f}, {}));
  add_init(m.graph, "one", f32({1.0f}, {}));
  add_init(m.graph, "sqrt2", f32({1.4142135f}, {}));
  auto& n = m.graph.nodes;
  n.push_back(make_node("LayerNormalization", {"x", "ln_w", "ln_b"}, {"ln"}));
  n.push_back(make_node("MatMul", {"ln", weight(m, "w1", kWidth, kHidden, 1)}, {"h0"}));
  n.push_back(make_node("Add", {"h0", "b1"}, {"h"}));
  n.push_back(make_node("Div", {"h", "sqrt2"}, {"g0"}));
  n.push_back(make_node("Erf", {"g0"}, {"g1"}));
  n.push_back(make_node("Add", {"g1", "one"}, {"g2"}));
  n.push_back(make_node("Mul", {"h", "half"}, {"g3"}));
  n.push_back(make_node("Mul", {"g3", "g2"}, {"gelu"}));
  n.push_back(make_node("MatMul", {"gelu", weight(m, "w2", kHidden, kWidth, 2)}, {"f"}));
  n.push_back(make_node("Add", {"x", "f"}, {"y"}));
  const std::string picked = select(m, "y");
  n.push_back(make_node("MatMul", {picked, weight(m, "head", kWidth, 3, 6)}, {"logits"}));
  m.graph.outputs = {untyped("logits")};
  return m;
}

std::string gather_row(Model& m, const std::string& x, int64_t index) {
  add_init(m.graph, "index", Tensor::scalar<int64_t>(index));
  m.graph.nodes.push_back(make_node("Gather", {x, "index"}, {"picked"}, {int_attribute("axis", 1)}));
  return "picked";
}

std::string slice_rows(Model& m, const std::string& x, int64_t start, int64_t end) {
  add_init(m.graph, "starts", i64({start}));
  add_init(m.graph, "ends", i64({end}));
  add_init(m.graph, "axes", i64({1}));
  m.graph.nodes.push_back(make_node("Slice", {x, "starts", "ends", "axes"}, {"picked"}));
  return "picked";
}

const std::vector<Dim> kStatic = {dim(1), dim(kRows), dim(kWidth)};

TEST(PassNarrowSelectedRows, ClassTokenOfAnEncoderBlockComputesOneRow) {
  for (const int64_t index : {0, 3, -1}) {
    Model m = encoder_tail(kStatic, [index](Model& g, const std::string& y) { return gather_row(g, y, index); });
    bool changed = false;
    const Model out = run(m, &changed);
    ASSERT_TRUE(changed) << index;
    // Both MatMuls of the block run one row (the GELU's two reads of h merged); the head reads
    // the one row as before.
    EXPECT_EQ(matmul_rows(out), (std::vector<int64_t>{1, 1})) << index;
    expect_close_outputs(m, out, {random_value({1, kRows, kWidth}, 11)}, 1e-5);
  }
}

TEST(PassNarrowSelectedRows, DecomposedLayerNormBeforeAGemm) {
  // Opset 14's LayerNorm: ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div (x and x - mean
  // each read twice), then a 2-D Gemm over the rows of a Reshape; row 3 selected.
  Model m = make_model(14);
  m.graph.inputs = {tensor_info("x", DataType::kFloat, kStatic)};
  add_init(m.graph, "two", f32({2.0f}, {}));
  add_init(m.graph, "eps", f32({1e-5f}, {}));
  add_init(m.graph, "flat", i64({kRows, kWidth}));
  add_init(m.graph, "bias", f32(noise(kHidden, 8), {kHidden}));
  auto& n = m.graph.nodes;
  n.push_back(make_node("ReduceMean", {"x"}, {"mean"}, {ints_attribute("axes", {-1})}));
  n.push_back(make_node("Sub", {"x", "mean"}, {"d"}));
  n.push_back(make_node("Pow", {"d", "two"}, {"d2"}));
  n.push_back(make_node("ReduceMean", {"d2"}, {"var"}, {ints_attribute("axes", {-1})}));
  n.push_back(make_node("Add", {"var", "eps"}, {"var_eps"}));
  n.push_back(make_node("Sqrt", {"var_eps"}, {"std"}));
  n.push_back(make_node("Div", {"d", "std"}, {"ln"}));
  n.push_back(make_node("Reshape", {"ln", "flat"}, {"rows"}));
  n.push_back(
      make_node("Gemm", {"rows", weight(m, "w", kHidden, kWidth, 4), "bias"}, {"g"}, {int_attribute("transB", 1)}));
  add_init(m.graph, "index", Tensor::scalar<int64_t>(3));
  n.push_back(make_node("Gather", {"g", "index"}, {"picked"}, {int_attribute("axis", 0)}));
  m.graph.outputs = {untyped("picked")};
  bool changed = false;
  const Model out = run(m, &changed);
  ASSERT_TRUE(changed);
  // Every node of the norm computes one row: one Slice of the graph input feeds its two readers.
  EXPECT_EQ(count_op(out.graph, "Slice"), 1);
  for (const Node& node : out.graph.nodes) {
    if (node.op_type == "Slice") {
      EXPECT_EQ(node.inputs[0], "x");
    }
  }
  expect_close_outputs(m, out, {random_value({1, kRows, kWidth}, 18)}, 1e-5);
}

TEST(PassNarrowSelectedRows, OrtFusedSkipNormBeforeTheSelection) {
  // x W, then com.microsoft SkipSimplifiedLayerNormalization(x W, x, gamma): the form of models
  // optimized for ORT. Its residual-sum output is unread (the last layer).
  Model m = make_model(17);
  m.opset_imports["com.microsoft"] = 1;
  m.graph.inputs = {tensor_info("x", DataType::kFloat, kStatic)};
  add_init(m.graph, "gamma", f32(noise(kWidth, 9, 0.5f, 1.5f), {kWidth}));
  auto& n = m.graph.nodes;
  n.push_back(make_node("MatMul", {"x", weight(m, "w", kWidth, kWidth, 5)}, {"mm"}));
  Node norm = make_node("SkipSimplifiedLayerNormalization", {"mm", "x", "gamma"}, {"y", "", "", "sum"},
                        {float_attribute("epsilon", 1e-5f)});
  norm.domain = "com.microsoft";
  n.push_back(norm);
  m.graph.outputs = {untyped(gather_row(m, "y", 0))};
  bool changed = false;
  const Model out = run(m, &changed);
  ASSERT_TRUE(changed);
  EXPECT_EQ(matmul_rows(out), (std::vector<int64_t>{1}));
  expect_close_outputs(m, out, {random_value({1, kRows, kWidth}, 19)}, 1e-5);
  // The sum read by a next layer: the norm computes every row.
  m.graph.outputs.push_back(untyped("sum"));
  run(m, &changed);
  EXPECT_FALSE(changed);
}

TEST(PassNarrowSelectedRows, AValueAnotherNodeReadsWholeIsComputedWhole) {
  Model m = encoder_tail(kStatic, [](Model& g, const std::string& y) { return gather_row(g, y, 1); });
  m.graph.nodes.push_back(make_node("Relu", {"h0"}, {"other"}));
  m.graph.outputs.push_back(untyped("other"));
  bool changed = false;
  const Model out = run(m, &changed);
  ASSERT_TRUE(changed);
  // The first MatMul's product is read whole by the Relu: a Slice takes the selected row after it.
  EXPECT_EQ(matmul_rows(out), (std::vector<int64_t>{kRows, 1}));
  expect_close_outputs(m, out, {random_value({1, kRows, kWidth}, 16)}, 1e-5);
}

TEST(PassNarrowSelectedRows, SliceOfRowsThroughTransposeAndReshape) {
  // y [1, rows, 8] -> Reshape [1, rows, 2, 4] -> Transpose [1, 2, rows, 4] -> Slice 1..3 of axis 2.
  // With a symbolic row count the Reshapes copy the leading dims (0) and the climb writes them so.
  for (const bool symbolic : {false, true}) {
    Model m = encoder_tail(
        {dim(1), symbolic ? sym("seq") : dim(kRows), dim(kWidth)}, [symbolic](Model& g, const std::string& y) {
          add_init(g.graph, "heads", i64({symbolic ? 0 : 1, symbolic ? 0 : kRows, 2, 4}));
          add_init(g.graph, "back", i64({symbolic ? 0 : 1, symbolic ? 0 : 2, 8}));
          add_init(g.graph, "starts", i64({1}));
          add_init(g.graph, "ends", i64({3}));
          add_init(g.graph, "axes", i64({2}));
          auto& n = g.graph.nodes;
          n.push_back(make_node("Reshape", {y, "heads"}, {"split"}));
          n.push_back(make_node("Transpose", {"split"}, {"t"}, {ints_attribute("perm", {0, 2, 1, 3})}));
          n.push_back(make_node("Slice", {"t", "starts", "ends", "axes"}, {"rows"}));
          n.push_back(make_node("Transpose", {"rows"}, {"t2"}, {ints_attribute("perm", {0, 2, 1, 3})}));
          n.push_back(make_node("Reshape", {"t2", "back"}, {"picked"}));
          return "picked";
        });
    bool changed = false;
    const Model out = run(m, &changed);
    ASSERT_TRUE(changed) << symbolic;
    // The Slice now reads the block's input, before its first MatMul.
    ASSERT_FALSE(out.graph.nodes.empty());
    EXPECT_EQ(out.graph.nodes[0].op_type, "Slice") << symbolic;
    if (!symbolic) {
      EXPECT_EQ(matmul_rows(out), (std::vector<int64_t>{2, 2, 2}));
    }
    expect_close_outputs(m, out, {random_value({1, kRows, kWidth}, 12)}, 1e-5);
  }
}

TEST(PassNarrowSelectedRows, QueriesOfAnAttentionNarrowKeysAndValuesStayWhole) {
  // q, k, v projections of one x; softmax(q k^T / 2) v; the last row.
  Model m = make_model(17);
  m.graph.inputs = {tensor_info("x", DataType::kFloat, kStatic)};
  add_init(m.graph, "scale", f32({2.0f}, {}));
  auto& n = m.graph.nodes;
  n.push_back(make_node("MatMul", {"x", weight(m, "wq", kWidth, kWidth, 1)}, {"q"}));
  n.push_back(make_node("MatMul", {"x", weight(m, "wk", kWidth, kWidth, 2)}, {"k"}));
  n.push_back(make_node("MatMul", {"x", weight(m, "wv", kWidth, kWidth, 3)}, {"v"}));
  n.push_back(make_node("Transpose", {"k"}, {"kt"}, {ints_attribute("perm", {0, 2, 1})}));
  n.push_back(make_node("MatMul", {"q", "kt"}, {"s"}));
  n.push_back(make_node("Div", {"s", "scale"}, {"s2"}));
  n.push_back(make_node("Softmax", {"s2"}, {"p"}, {int_attribute("axis", -1)}));
  n.push_back(make_node("MatMul", {"p", "v"}, {"o"}));
  const std::string picked = gather_row(m, "o", -1);
  m.graph.outputs = {untyped(picked)};
  bool changed = false;
  const Model out = run(m, &changed);
  ASSERT_TRUE(changed);
  // q, k, v, scores, p v: q and the two attention products take one row.
  EXPECT_EQ(matmul_rows(out), (std::vector<int64_t>{1, kRows, kRows, 1, 1}));
  expect_close_outputs(m, out, {random_value({1, kRows, kWidth}, 13)}, 1e-5);
}

// q = x Wq, Attention(q, x, x) over 2 heads (ONNX opset 23's 3-D form), one row selected.
Model attention_op(bool causal) {
  Model m = make_model(17);
  m.graph.inputs = {tensor_info("x", DataType::kFloat, kStatic)};
  auto& n = m.graph.nodes;
  n.push_back(make_node("MatMul", {"x", weight(m, "wq", kWidth, kWidth, 1)}, {"q"}));
  Node attention = make_node(
      "Attention", {"q", "x", "x"}, {"o"},
      {int_attribute("q_num_heads", 2), int_attribute("kv_num_heads", 2), int_attribute("is_causal", causal ? 1 : 0)});
  attention.opset = 23;
  n.push_back(attention);
  m.graph.outputs = {untyped(gather_row(m, "o", 2))};
  return m;
}

TEST(PassNarrowSelectedRows, AttentionOpComputesTheSelectedQueriesUnlessCausal) {
  bool changed = false;
  const Model m = attention_op(false);
  const Model out = run(m, &changed);
  ASSERT_TRUE(changed);
  EXPECT_EQ(matmul_rows(out), (std::vector<int64_t>{1}));
  expect_close_outputs(m, out, {random_value({1, kRows, kWidth}, 17)}, 1e-5);
  // A causal mask depends on each query's position.
  run(attention_op(true), &changed);
  EXPECT_FALSE(changed);
}

TEST(PassNarrowSelectedRows, SymbolicRowsAndAnIndexOutOfRangeStillFails) {
  Model m = encoder_tail({dim(1), sym("seq"), dim(kWidth)},
                         [](Model& g, const std::string& y) { return gather_row(g, y, 2); });
  bool changed = false;
  const Model out = run(m, &changed);
  ASSERT_TRUE(changed);
  expect_close_outputs(m, out, {random_value({1, 4, kWidth}, 14)}, 1e-5);
  // Two rows: index 2 is out of range in both graphs.
  for (const Model* model : std::vector<const Model*>{&m, &out}) {
    SessionOptions options;
    options.optimization = passes::OptLevel::kNone;
    auto session = Session::create_from_model(*model, options);
    ASSERT_TRUE(session.is_ok()) << session.status().to_string();
    EXPECT_FALSE((*session)->run({random_value({1, 2, kWidth}, 15)}).is_ok());
  }
}

// torch's x[:, -k:] over a symbolic axis (Slice from -k to INT64_MAX) keeps the last k rows at
// any length; from a negative start to a non-negative end the count depends on the length, and
// nothing moves.
TEST(PassNarrowSelectedRows, LastRowsOfASymbolicAxis) {
  for (const int64_t k : {1, 2}) {
    Model m = encoder_tail({dim(1), sym("seq"), dim(kWidth)},
                           [k](Model& g, const std::string& y) { return slice_rows(g, y, -k, INT64_MAX); });
    bool changed = false;
    const Model out = run(m, &changed);
    ASSERT_TRUE(changed) << k;
    EXPECT_EQ(out.graph.nodes[0].op_type, "Slice") << k;
    for (const int64_t rows : {k, int64_t{7}})
      expect_close_outputs(m, out, {random_value({1, rows, kWidth}, 16 + static_cast<uint32_t>(rows))}, 1e-5);
  }
  // From a negative start to a non-negative end: a count that depends on the length.
  bool changed = true;
  run(encoder_tail({dim(1), sym("seq"), dim(kWidth)},
                   [](Model& g, const std::string& y) { return slice_rows(g, y, -2, 5); }),
      &changed);
  EXPECT_FALSE(changed);
}

// x.view(1, seq, 4, 4)[:, -2:]: a selection right after a reshape starts a climb, and an input of
// fewer rows than the selection's count gives them all, as the Slice does before the pass (the
// narrowed Reshape infers the count, -1, instead of writing 2).
TEST(PassNarrowSelectedRows, LastRowsThroughAReshapeOfFewerRows) {
  Model m = make_model(17);
  m.graph.inputs = {tensor_info("x", DataType::kFloat, {dim(1), sym("seq"), dim(kWidth)})};
  add_init(m.graph, "heads", i64({0, 0, 4, 4}));
  auto& n = m.graph.nodes;
  n.push_back(make_node("MatMul", {"x", weight(m, "w1", kWidth, kHidden, 1)}, {"h"}));
  n.push_back(make_node("Reshape", {"h", "heads"}, {"r"}));
  const std::string picked = slice_rows(m, "r", -2, INT64_MAX);
  n.push_back(make_node("MatMul", {picked, weight(m, "w2", 4, 3, 2)}, {"logits"}));
  m.graph.outputs = {untyped("logits")};
  bool changed = false;
  const Model out = run(m, &changed);
  ASSERT_TRUE(changed);
  EXPECT_EQ(out.graph.nodes[0].op_type, "Slice");
  for (const int64_t rows : {1, 2, 5})
    expect_close_outputs(m, out, {random_value({1, rows, kWidth}, 30 + static_cast<uint32_t>(rows))}, 1e-5);
}

TEST(PassNarrowSelectedRows, KeepsWhatItCannotNarrow) {
  const auto expect_kept = [](const Model& m, const char* why) {
    bool changed = true;
    run(m, &changed);
    EXPECT_FALSE(changed) << why;
  };
  // The block's output is also a graph output: all its rows are needed.
  Model output = encoder_tail(kStatic, [](Model& g, const std::string& y) { return gather_row(g, y, 0); });
  output.graph.outputs.push_back(untyped("y"));
  expect_kept(output, "the selected value is a graph output");
  // A selection of every row, of a column (the MatMul's contraction side) and a Softmax over
  // the selected axis.
  expect_kept(encoder_tail(kStatic, [](Model& g, const std::string& y) { return slice_rows(g, y, 0, kRows); }),
              "all rows");
  Model column = encoder_tail(kStatic, [](Model& g, const std::string& y) {
    add_init(g.graph, "starts", i64({0}));
    add_init(g.graph, "ends", i64({kWidth / 2}));
    add_init(g.graph, "axes", i64({2}));
    g.graph.nodes.push_back(make_node("Slice", {y, "starts", "ends", "axes"}, {"cols"}));
    g.graph.nodes.push_back(make_node("Concat", {"cols", "cols"}, {"picked"}, {int_attribute("axis", 2)}));
    return "picked";
  });
  expect_kept(column, "columns, which the MatMul before them sums over");
  Model softmax = encoder_tail(kStatic, [](Model& g, const std::string& y) {
    g.graph.nodes.push_back(make_node("Softmax", {y}, {"p"}, {int_attribute("axis", 1)}));
    return gather_row(g, "p", 0);
  });
  expect_kept(softmax, "a softmax over the rows");
  // Element-wise ops alone: nothing to gain.
  Model relu = make_model(17);
  relu.graph.inputs = {tensor_info("x", DataType::kFloat, kStatic)};
  relu.graph.nodes.push_back(make_node("Relu", {"x"}, {"r"}));
  add_init(relu.graph, "w", f32(noise(kWidth * 3, 1), {kWidth, 3}));
  relu.graph.nodes.push_back(make_node("MatMul", {gather_row(relu, "r", 0), "w"}, {"out"}));
  relu.graph.outputs = {untyped("out")};
  expect_kept(relu, "no product before the selection");
}

}  // namespace
}  // namespace testing
}  // namespace xonnx
