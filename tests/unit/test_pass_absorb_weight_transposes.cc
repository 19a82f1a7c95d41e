// absorb_weight_transposes (session creation): MatMul / Gemm reading Transpose(W) of a constant
// 2-D float W read W itself with transB (FusedMatMul(transB = 1), Gemm's transB flipped), so no
// transposed copy of the weight is made; fuse-matmul-add then makes a FusedMatMul(transB) with
// a bias a Gemm. Sessions without the optimized kernels keep the Transpose (folded).
#include "runtime/exec/session.h"
#include "runtime/passes/passes.h"
#include "tests/unit/fuse_test_util.h"

namespace xonnx {
namespace testing {
namespace {

Model absorbed(const Model& model, bool* changed, bool own_kernels = true) {
  passes::PassOptions options;
  options.own_kernels = own_kernels;
  return apply_pass(model, passes::absorb_weight_transposes, options, nullptr, changed);
}

// y = op(a, Transpose(w)) [+ c]: a [2, 4, 5] for MatMul, [4, 5] for Gemm; w [6, 5].
Model transposed_weight(const std::string& op, std::vector<Attribute> attrs = {}, bool bias = false,
                        std::vector<int64_t> perm = {1, 0}) {
  Model m = make_model(17);
  m.graph.inputs = {op == "Gemm" ? tensor_info("a", DataType::kFloat, {dim(4), dim(5)})
                                 : tensor_info("a", DataType::kFloat, {dim(2), dim(4), dim(5)})};
  m.graph.outputs = {untyped("y")};
  add_init(m.graph, "w", f32(noise(30, 7), {6, 5}));
  Node t = make_node("Transpose", {"w"}, {"wt"});
  if (!perm.empty()) t.attributes = {attr_ints("perm", perm)};
  m.graph.nodes.push_back(t);
  std::vector<std::string> inputs = {"a", "wt"};
  if (bias) {
    add_init(m.graph, "c", f32(noise(6, 8), {6}));
    if (op == "Gemm") inputs.push_back("c");
  }
  Node n = make_node(op, inputs, {bias && op != "Gemm" ? "p" : "y"});
  n.attributes = std::move(attrs);
  m.graph.nodes.push_back(n);
  if (bias && op != "Gemm") m.graph.nodes.push_back(make_node("Add", {"p", "c"}, {"y"}));
  return m;
}

std::vector<Value> inputs(bool gemm) { return {random_value(gemm ? Shape{4, 5} : Shape{2, 4, 5}, 3)}; }

const Node* find(const Graph& g, const std::string& op) {
  for (const Node& n : g.nodes) {
    if (n.op_type == op) return &n;
  }
  return nullptr;
}

TEST(PassAbsorbWeightTransposes, MatMulReadsTheWeightWithTransB) {
  for (std::vector<int64_t> perm : {std::vector<int64_t>{1, 0}, std::vector<int64_t>{}}) {
    const Model m = transposed_weight("MatMul", {}, false, perm);
    bool changed = false;
    Model out = absorbed(m, &changed);
    ASSERT_TRUE(changed);
    const Node* fused = find(out.graph, "FusedMatMul");
    ASSERT_NE(fused, nullptr);
    EXPECT_EQ(fused->domain, "com.microsoft");
    EXPECT_EQ(fused->inputs, (std::vector<std::string>{"a", "w"}));
    EXPECT_EQ(attr_int_or(*fused, "transB", 0), 1);
    EXPECT_EQ(out.opset_imports.at("com.microsoft"), 1);
    expect_close_outputs(m, out, inputs(false), 1e-5);
  }
}

TEST(PassAbsorbWeightTransposes, GemmFlipsTransB) {
  for (int64_t trans_b : {0, 1}) {
    // a square weight: Gemm(a, Transpose(w)) is valid with either transB
    Model m = make_model(17);
    m.graph.inputs = {tensor_info("a", DataType::kFloat, {dim(4), dim(5)})};
    m.graph.outputs = {untyped("y")};
    add_init(m.graph, "w", f32(noise(25, 9), {5, 5}));
    m.graph.nodes.push_back(make_node("Transpose", {"w"}, {"wt"}));
    Node gemm = make_node("Gemm", {"a", "wt"}, {"y"});
    gemm.attributes = {attr_int("transB", trans_b)};
    m.graph.nodes.push_back(gemm);
    bool changed = false;
    Model out = absorbed(m, &changed);
    ASSERT_TRUE(changed);
    const Node* g = find(out.graph, "Gemm");
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(g->inputs[1], "w");
    EXPECT_EQ(attr_int_or(*g, "transB", 0), 1 - trans_b);
    EXPECT_EQ(out.opset_imports.count("com.microsoft"), 0u);
    expect_close_outputs(m, out, inputs(true), 1e-5);
  }
}

TEST(PassAbsorbWeightTransposes, KeepsWhatIsNoTransposedConstantWeight) {
  bool changed = true;
  absorbed(transposed_weight("MatMul"), &changed, /*own_kernels=*/false);
  EXPECT_FALSE(changed);  // the reference FusedMatMul would transpose on every run
  Model runtime_w = transposed_weight("MatMul");
  runtime_w.graph.initializers.clear();
  runtime_w.graph.inputs.push_back(tensor_info("w", DataType::kFloat, {dim(6), dim(5)}));
  absorbed(runtime_w, &changed);
  EXPECT_FALSE(changed);  // W computed at run time
  Model other_reader = transposed_weight("MatMul");
  other_reader.graph.outputs.push_back(untyped("wt"));
  Model out = absorbed(other_reader, &changed);
  EXPECT_TRUE(changed);  // the MatMul reads W; the Transpose stays for its other reader
  EXPECT_NE(find(out.graph, "Transpose"), nullptr);
  expect_close_outputs(other_reader, out, inputs(false), 1e-5);
}

// The whole session pipeline: a [2, 4, 5] projection with a bias ends as a Gemm with transB
// between Reshapes, no Transpose left, the same values as a session without the own kernels.
TEST(PassAbsorbWeightTransposes, SessionsMakeAGemmWithTransB) {
  const Model m = transposed_weight("MatMul", {}, /*bias=*/true);
  SessionOptions fast, plain;
  plain.disable_optimized = true;
  auto s_fast = Session::create_from_model(clone_model(m), fast);
  auto s_plain = Session::create_from_model(clone_model(m), plain);
  ASSERT_TRUE(s_fast.is_ok()) << s_fast.status().to_string();
  ASSERT_TRUE(s_plain.is_ok()) << s_plain.status().to_string();
  const Node* gemm = find((*s_fast)->model().graph, "Gemm");
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(attr_int_or(*gemm, "transB", 0), 1);
  EXPECT_EQ(find((*s_fast)->model().graph, "Transpose"), nullptr);
  auto got = (*s_fast)->run(inputs(false));
  auto want = (*s_plain)->run(inputs(false));
  ASSERT_TRUE(got.is_ok() && want.is_ok());
  EXPECT_LE(max_abs_diff(*got, *want), 1e-5);
}

}  // namespace
}  // namespace testing
}  // namespace xonnx
