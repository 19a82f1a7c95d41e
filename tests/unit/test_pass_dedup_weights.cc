// dedup_weights: identical initializers merge (notes + bytes), near-identical ones and overridable
// ones do not; a transposed copy is rewritten to Gemm(transB) for 2-D A or read via Transpose.
#include "tests/unit/fuse_test_util.h"

namespace xonnx {
namespace testing {
namespace {

TEST(PassDedupWeights, MergesIdenticalInitializers) {
  Model m = make_model(17);
  m.graph.inputs = {tensor_info("x", DataType::kFloat, {dim(4)})};
  m.graph.outputs = {untyped("y")};
  const std::vector<float> v = noise(4, 1);
  add_init(m.graph, "a", f32(v, {4}));
  add_init(m.graph, "b", f32(v, {4}));
  add_init(m.graph, "c", f32(v, {2, 2}));  // same bytes, other shape
  std::vector<float> w = v;
  w[3] += 1e-6f;
  add_init(m.graph, "d", f32(w, {4}));
  Graph& g = m.graph;
  g.nodes.push_back(make_node("Add", {"x", "a"}, {"s1"}));
  g.nodes.push_back(make_node("Add", {"s1", "b"}, {"s2"}));
  g.nodes.push_back(make_node("Reshape", {"c", "shape"}, {"c4"}));
  add_init(g, "shape", i64({4}));
  g.nodes.push_back(make_node("Add", {"s2", "c4"}, {"s3"}));
  g.nodes.push_back(make_node("Add", {"s3", "d"}, {"y"}));
  std::vector<std::string> notes;
  int64_t saved = 0;
  Model out = run_pass(m, convert::dedup_weights, nullptr, &notes, &saved);
  EXPECT_EQ(out.graph.initializers.size(), 4u);
  EXPECT_EQ(out.graph.find_initializer("b"), nullptr);
  EXPECT_EQ(out.graph.nodes[1].inputs[1], "a");
  EXPECT_EQ(saved, 16);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], "merged 'b' into 'a' (16 bytes)");
  expect_close_outputs(m, out, {random_value({4}, 2)}, 0);

  // An initializer that is also a graph input can be overridden: never merged.
  m.graph.inputs.push_back(untyped("b"));
  bool changed = true;
  run_pass(m, convert::dedup_weights, &changed);
  EXPECT_FALSE(changed);
}

// lm_head: MatMul(h, W_T) with W_T == wte^T; wte also feeds a Gather.
Model tied(std::vector<Dim> h_dims) {
  Model m = make_model(17);
  m.graph.inputs = {tensor_info("h", DataType::kFloat, h_dims),
                    tensor_info("ids", DataType::kInt64, {dim(2)})};
  m.graph.outputs = {untyped("logits"), untyped("emb")};
  const std::vector<float> wte = noise(5 * 3, 3);
  std::vector<float> wt(15);
  for (int r = 0; r < 5; ++r) {
    for (int c = 0; c < 3; ++c) wt[c * 5 + r] = wte[r * 3 + c];
  }
  add_init(m.graph, "wte", f32(wte, {5, 3}));
  add_init(m.graph, "W_T", f32(wt, {3, 5}));
  m.graph.nodes.push_back(make_node("Gather", {"wte", "ids"}, {"emb"}));
  m.graph.nodes.push_back(make_node("MatMul", {"h", "W_T"}, {"logits"}));
  return m;
}

TEST(PassDedupWeights, TransposedCopyBecomesGemmForTwoDimensionalA) {
  Model m = tied({dim(2), dim(3)});
  std::vector<std::string> notes;
  int64_t saved = 0;
  Model out = run_pass(m, convert::dedup_weights, nullptr, &notes, &saved);
  EXPECT_EQ(out.graph.initializers.size(), 1u);
  EXPECT_EQ(saved, 60);
  EXPECT_EQ(op_list(out.graph), (std::vector<std::string>{"Gather", "Gemm"}));
  EXPECT_EQ(out.graph.nodes[1].inputs, (std::vector<std::string>{"h", "wte"}));
  EXPECT_EQ(out.graph.nodes[1].find_attr("transB")->i, 1);
  const Value ids(Tensor::from_vector<int64_t>({4, 0}, {2}));
  expect_close_outputs(m, out, {random_value({2, 3}, 4), ids}, 1e-6);
}

TEST(PassDedupWeights, TransposedCopyReadThroughTransposeOtherwise) {
  Model m = tied({dim(1), dim(2), dim(3)});
  Model out = run_pass(m, convert::dedup_weights);
  EXPECT_EQ(out.graph.initializers.size(), 1u);
  EXPECT_EQ(op_list(out.graph), (std::vector<std::string>{"Transpose", "Gather", "MatMul"}));
  EXPECT_EQ(out.graph.nodes[0].inputs[0], "wte");
  EXPECT_EQ(out.graph.nodes[0].outputs[0], "W_T");
  const Value ids(Tensor::from_vector<int64_t>({1, 2}, {2}));
  // The Transpose path may use another GEMM kernel than the folded weight did: last-bit differences.
  expect_close_outputs(m, out, {random_value({1, 2, 3}, 5), ids}, 1e-6);
}

}  // namespace
}  // namespace testing
}  // namespace xonnx
