// dedup_weights: identical initializers merge (notes + bytes), near-identical ones and overridable
// ones do not; a transposed copy is rewritten to Gemm(transB) for 2-D A and kept otherwise.
#include "runtime/passes/session_passes.h"
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

// Session creation compares small initializers only (PassOptions::dedup_max_bytes): per-layer
// copies of a shape constant merge, and CSE then merges the nodes reading them; equal weights
// above the limit are left to the converter (comparing them would page in mapped files).
TEST(PassDedupWeights, SessionMergesSmallConstantsOnly) {
  Model m = make_model(17);
  m.graph.inputs = {tensor_info("x", DataType::kFloat, {dim(1024)}), tensor_info("v", DataType::kFloat, {dim(2048)})};
  m.graph.outputs = {untyped("y"), untyped("z")};
  const std::vector<float> small = noise(1024, 5);  // 4 KiB: at the limit, compared
  const std::vector<float> large = noise(2048, 6);  // 8 KiB: above it
  add_init(m.graph, "w0", f32(small, {1024}));
  add_init(m.graph, "w1", f32(small, {1024}));
  add_init(m.graph, "h0", f32(large, {2048}));
  add_init(m.graph, "h1", f32(large, {2048}));
  Graph& g = m.graph;
  g.nodes.push_back(make_node("Mul", {"x", "w0"}, {"a0"}));
  g.nodes.push_back(make_node("Mul", {"x", "w1"}, {"a1"}));
  g.nodes.push_back(make_node("Add", {"a0", "a1"}, {"y"}));
  g.nodes.push_back(make_node("Mul", {"v", "h0"}, {"b0"}));
  g.nodes.push_back(make_node("Mul", {"v", "h1"}, {"b1"}));
  g.nodes.push_back(make_node("Add", {"b0", "b1"}, {"z"}));
  Model session = clone_model(m);
  auto r = passes::optimize_for_session(session, passes::OptLevel::kBasic, 16 << 20);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  const Graph& out = session.graph;
  EXPECT_EQ(out.find_initializer("w1"), nullptr);  // merged into w0, then CSE merged the Muls
  EXPECT_NE(out.find_initializer("h1"), nullptr);  // left to the converter
  EXPECT_EQ(count_op(out, "Mul"), 3);
  Model converted = run_pass(m, convert::dedup_weights);
  EXPECT_EQ(converted.graph.find_initializer("h1"), nullptr);
  expect_close_outputs(m, session, {random_value({1024}, 7), random_value({2048}, 8)}, 0);
}

// lm_head: MatMul(h, W_T) with W_T == wte^T; wte also feeds a Gather.
Model tied(std::vector<Dim> h_dims) {
  Model m = make_model(17);
  m.graph.inputs = {tensor_info("h", DataType::kFloat, h_dims), tensor_info("ids", DataType::kInt64, {dim(2)})};
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

// A 3-D A (GPT-2's lm_head) cannot read wte through Gemm: a Transpose would run at every step
// and the MatMul would lose its packed constant B, so the copy stays.
TEST(PassDedupWeights, TransposedCopyKeptWhenAReaderNeedsATranspose) {
  Model m = tied({dim(1), dim(2), dim(3)});
  bool changed = true;
  std::vector<std::string> notes;
  Model out = run_pass(m, convert::dedup_weights, &changed, &notes);
  EXPECT_FALSE(changed);
  EXPECT_EQ(out.graph.initializers.size(), 2u);
  EXPECT_EQ(op_list(out.graph), (std::vector<std::string>{"Gather", "MatMul"}));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("kept 'W_T'"), std::string::npos) << notes[0];
}

}  // namespace
}  // namespace testing
}  // namespace xonnx
