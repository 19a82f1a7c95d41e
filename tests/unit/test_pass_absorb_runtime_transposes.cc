// absorb_runtime_transposes (session creation): MatMul / FusedMatMul(alpha) reading
// Transpose(X) of a float X computed at run time, whose perm swaps only the last two axes, read X
// with transB; other Transposes, other types, products that already transpose, and sessions
// without the optimized kernels are left alone.
#include "runtime/exec/session.h"
#include "runtime/passes/passes.h"
#include "tests/unit/fuse_test_util.h"

namespace xonnx {
namespace testing {
namespace absorb_runtime_transposes_test {  // named: the unity build shares anonymous namespaces

Model absorbed(const Model& model, bool* changed, bool own_kernels = true) {
  passes::PassOptions options;
  options.own_kernels = own_kernels;
  return apply_pass(model, passes::absorb_runtime_transposes, options, nullptr, changed);
}

// y = product(a, Transpose(x, perm)): a [2, 3, 4, 5], x [2, 3, 6, 5] (both graph inputs; x of
// `x_type`); product "MatMul" or com.microsoft "FusedMatMul" with `attrs`.
Model transposed_operand(const std::string& product, std::vector<Attribute> attrs = {},
                         std::vector<int64_t> perm = {0, 1, 3, 2}, DataType x_type = DataType::kFloat) {
  Model m = make_model(17);
  m.graph.inputs = {tensor_info("a", x_type, {dim(2), dim(3), dim(4), dim(5)}),
                    tensor_info("x", x_type, {dim(2), dim(3), dim(6), dim(5)})};
  m.graph.outputs = {untyped("y")};
  Node t = make_node("Transpose", {"x"}, {"xt"});
  if (!perm.empty()) t.attributes = {attr_ints("perm", perm)};
  m.graph.nodes.push_back(t);
  Node n = make_node(product, {"a", "xt"}, {"y"});
  if (product == "FusedMatMul") {
    n.domain = "com.microsoft";
    m.opset_imports["com.microsoft"] = 1;
  }
  n.attributes = std::move(attrs);
  m.graph.nodes.push_back(n);
  return m;
}

std::vector<Value> inputs() { return {random_value({2, 3, 4, 5}, 3), random_value({2, 3, 6, 5}, 4)}; }

const Node* find(const Graph& g, const std::string& op) {
  for (const Node& n : g.nodes) {
    if (n.op_type == op) return &n;
  }
  return nullptr;
}

TEST(PassAbsorbRuntimeTransposes, MatMulReadsXWithTransB) {
  const Model m = transposed_operand("MatMul");
  bool changed = false;
  Model out = absorbed(m, &changed);
  ASSERT_TRUE(changed);
  const Node* fused = find(out.graph, "FusedMatMul");
  ASSERT_NE(fused, nullptr);
  EXPECT_EQ(fused->domain, "com.microsoft");
  EXPECT_EQ(fused->inputs, (std::vector<std::string>{"a", "x"}));
  EXPECT_EQ(attr_int_or(*fused, "transB", 0), 1);
  EXPECT_EQ(find(out.graph, "Transpose"), nullptr);
  EXPECT_EQ(out.opset_imports.at("com.microsoft"), 1);
  expect_close_outputs(m, out, inputs(), 1e-5);
}

TEST(PassAbsorbRuntimeTransposes, FusedMatMulKeepsItsAlpha) {
  const Model m = transposed_operand("FusedMatMul", {attr_float("alpha", 0.25f)});
  bool changed = false;
  Model out = absorbed(m, &changed);
  ASSERT_TRUE(changed);
  const Node* fused = find(out.graph, "FusedMatMul");
  ASSERT_NE(fused, nullptr);
  EXPECT_EQ(attr_int_or(*fused, "transB", 0), 1);
  EXPECT_EQ(attr_float_or(*fused, "alpha", 1.0f), 0.25f);
  expect_close_outputs(m, out, inputs(), 1e-5);
}

TEST(PassAbsorbRuntimeTransposes, LeavesOtherTransposesTypesAndProducts) {
  bool changed = true;
  absorbed(transposed_operand("MatMul"), &changed, /*own_kernels=*/false);
  EXPECT_FALSE(changed);  // the reference FusedMatMul would transpose on every run
  // perms that move other axes, and none (all axes reversed): not a matrix transpose
  for (std::vector<int64_t> perm :
       {std::vector<int64_t>{1, 0, 2, 3}, std::vector<int64_t>{0, 3, 2, 1}, std::vector<int64_t>{}}) {
    absorbed(transposed_operand("MatMul", {}, perm), &changed);
    EXPECT_FALSE(changed) << "perm of " << perm.size() << " axes";
  }
  absorbed(transposed_operand("MatMul", {}, {0, 1, 3, 2}, DataType::kInt32), &changed);
  EXPECT_FALSE(changed);  // the own FusedMatMul is float only
  absorbed(transposed_operand("FusedMatMul", {attr_int("transB", 1)}), &changed);
  EXPECT_FALSE(changed);  // already transposes B
  Model other_reader = transposed_operand("MatMul");
  other_reader.graph.outputs.push_back(untyped("xt"));
  Model out = absorbed(other_reader, &changed);
  EXPECT_TRUE(changed);  // the product reads X; the Transpose stays for its other reader
  EXPECT_NE(find(out.graph, "Transpose"), nullptr);
  expect_close_outputs(other_reader, out, inputs(), 1e-5);
}

// The whole session pipeline on a hand-written product with K^T (no softmax: no attention to
// fuse): the own FusedMatMul reads X, no Transpose runs, values as a session without the own
// kernels, at 1 and 2 threads.
TEST(PassAbsorbRuntimeTransposes, SessionsRunTheProductWithoutTheTranspose) {
  const Model m = transposed_operand("MatMul");
  SessionOptions plain;
  plain.disable_optimized = true;
  auto s_plain = Session::create_from_model(clone_model(m), plain);
  ASSERT_TRUE(s_plain.is_ok()) << s_plain.status().to_string();
  auto want = (*s_plain)->run(inputs());
  ASSERT_TRUE(want.is_ok());
  for (int threads : {1, 2}) {
    SessionOptions fast;
    fast.num_threads = threads;
    auto s_fast = Session::create_from_model(clone_model(m), fast);
    ASSERT_TRUE(s_fast.is_ok()) << s_fast.status().to_string();
    EXPECT_EQ(find((*s_fast)->model().graph, "Transpose"), nullptr);
    EXPECT_NE(find((*s_fast)->model().graph, "FusedMatMul"), nullptr);
    auto got = (*s_fast)->run(inputs());
    ASSERT_TRUE(got.is_ok());
    EXPECT_LE(max_abs_diff(*got, *want), 1e-5);
  }
}

}  // namespace absorb_runtime_transposes_test
}  // namespace testing
}  // namespace xonnx
