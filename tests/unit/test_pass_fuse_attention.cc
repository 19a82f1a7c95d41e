// fuse_attention (session creation): torch's MatMul(Q, K^T) [* scale] [+ mask] -> Softmax ->
// MatMul(., V) becomes one ONNX Attention (opset 23 on the node) with an explicit scale, and runs
// as the unfused graph does: rank 4 with a key-padding mask, rank 3 (nn.MultiheadAttention's
// [B * heads, S, d]) with K^T from a Transpose of [T, B * heads, d], FusedMatMul with transB;
// the transposes that cut heads from rows go (Attention reads the rows); a mask whose last dim is
// not provably the keys' count is expanded to it. Kept: masks that would grow the scores, a
// rank-3 mask with a batch dim,
// value head sizes unlike the query's, a probability another node reads, a Softmax over another
// axis, sessions without the optimized kernels.
#include <algorithm>
#include <limits>

#include "runtime/passes/pass_util.h"
#include "runtime/passes/passes.h"
#include "tests/unit/fuse_test_util.h"

namespace xonnx {
namespace testing {
namespace {

constexpr int64_t B = 2, S = 20, D = 8;

struct Form {
  int64_t rank = 4;
  int64_t heads = 3;
  std::vector<Dim> mask;   // empty: no mask
  bool mul_scale = false;  // Mul by 1 / sqrt(D) instead of Div by sqrt(D)
  int64_t v_head = D;
  bool expose_probs = false;
  int64_t softmax_axis = -1;
  bool fused_matmul = false;  // com.microsoft FusedMatMul(Q, K, transB, alpha) as the product
  // masked_fill: Where(cond [B, 1, 1, S], fill, scores), or Where(cond, scores, fill) when
  // keep_where_true; used when where_fill is non-zero.
  float where_fill = 0;
  bool keep_where_true = false;
};

// Rank 4: q, k, v [B, H, S, D], K^T = Transpose(k, 0 1 3 2). Rank 3: q, v [B * H, S, D] and
// kx [S, B * H, D] with K^T = Transpose(kx, 1 2 0).
Model attention_model(const Form& f) {
  const int64_t H = f.heads;
  Model m = make_model(17);
  Graph& g = m.graph;
  const std::vector<Dim> qd =
      f.rank == 4 ? std::vector<Dim>{dim(B), dim(H), dim(S), dim(D)} : std::vector<Dim>{dim(B * H), dim(S), dim(D)};
  std::vector<Dim> vd = qd;
  vd.back() = dim(f.v_head);
  const std::vector<Dim> kd = f.rank == 4 ? qd : std::vector<Dim>{dim(S), dim(B * H), dim(D)};
  g.inputs = {tensor_info("q", DataType::kFloat, qd), tensor_info("k", DataType::kFloat, kd),
              tensor_info("v", DataType::kFloat, vd)};
  if (!f.mask.empty()) g.inputs.push_back(tensor_info("mask", DataType::kFloat, f.mask));
  g.outputs = {untyped("y")};
  add_init(g, "c", Tensor::scalar<float>(f.mul_scale ? 1.0f / std::sqrt(float(D)) : std::sqrt(float(D))));
  if (f.fused_matmul) {
    Node mm = make_node("FusedMatMul", {"q", "k"}, {"scaled"});
    mm.domain = "com.microsoft";
    mm.attributes = {int_attribute("transB", 1), float_attribute("alpha", 0.25f)};
    g.nodes.push_back(mm);
    m.opset_imports["com.microsoft"] = 1;
  } else {
    Node t = make_node("Transpose", {"k"}, {"kt"});
    t.attributes = {
        ints_attribute("perm", f.rank == 4 ? std::vector<int64_t>{0, 1, 3, 2} : std::vector<int64_t>{1, 2, 0})};
    g.nodes.push_back(t);
    g.nodes.push_back(make_node("MatMul", {"q", "kt"}, {"scores"}));
    g.nodes.push_back(make_node(f.mul_scale ? "Mul" : "Div", {"scores", "c"}, {"scaled"}));
  }
  std::string logits = "scaled";
  if (!f.mask.empty()) {
    g.nodes.push_back(make_node("Add", {"mask", "scaled"}, {"masked"}));
    logits = "masked";
  }
  if (f.where_fill != 0) {
    g.inputs.push_back(tensor_info("cond", DataType::kBool, {dim(B), dim(1), dim(1), dim(S)}));
    add_init(g, "fill", Tensor::scalar<float>(f.where_fill));
    g.nodes.push_back(make_node("Where",
                                f.keep_where_true ? std::vector<std::string>{"cond", "scaled", "fill"}
                                                  : std::vector<std::string>{"cond", "fill", "scaled"},
                                {"masked"}));
    logits = "masked";
  }
  Node softmax = make_node("Softmax", {logits}, {"probs"});
  softmax.attributes = {int_attribute("axis", f.softmax_axis)};
  g.nodes.push_back(softmax);
  g.nodes.push_back(make_node("MatMul", {"probs", "v"}, {"y"}));
  if (f.expose_probs) g.outputs.push_back(untyped("probs"));
  return m;
}

std::vector<Value> inputs(const Form& f) {
  const int64_t H = f.heads;
  std::vector<Value> in;
  const Shape qs = f.rank == 4 ? Shape{B, H, S, D} : Shape{B * H, S, D};
  Shape vs = qs;
  vs.back() = f.v_head;
  in.push_back(random_value(qs, 1));
  in.push_back(random_value(f.rank == 4 ? qs : Shape{S, B * H, D}, 2));
  in.push_back(random_value(vs, 3));
  if (!f.mask.empty()) {
    Shape ms;
    for (const Dim& d : f.mask) ms.push_back(d.known() ? d.value : S);
    in.push_back(random_value(ms, 4));
  }
  if (f.where_fill != 0) {  // every third key masked (kept when keep_where_true)
    Tensor cond = Tensor::allocate(DataType::kBool, {B, 1, 1, S}).value();
    for (int64_t i = 0; i < B * S; ++i) static_cast<uint8_t*>(cond.raw_data())[i] = i % 3 == 1;
    in.push_back(Value(std::move(cond)));
  }
  return in;
}

Model fuse(const Model& m, bool* changed, bool own_kernels = true) {
  passes::PassOptions options;
  options.own_kernels = own_kernels;
  return apply_pass(m, passes::fuse_attention, options, nullptr, changed);
}

TEST(PassFuseAttention, TorchFormsBecomeOneAttention) {
  std::vector<Form> forms(7);
  forms[0].mask = {dim(B), dim(1), dim(1), dim(S)};  // a key-padding mask
  forms[1].mask = {dim(S), dim(S)};
  forms[1].mul_scale = true;
  forms[2].rank = 3;  // nn.MultiheadAttention
  forms[2].mask = {dim(S), dim(S)};
  forms[3].rank = 3;
  forms[3].softmax_axis = 2;
  forms[4].fused_matmul = true;
  forms[5].where_fill = -std::numeric_limits<float>::max();  // torch's finfo.min
  forms[6].where_fill = -std::numeric_limits<float>::infinity();
  forms[6].keep_where_true = true;
  for (size_t i = 0; i < forms.size(); ++i) {
    SCOPED_TRACE("form " + std::to_string(i));
    const Form& f = forms[i];
    const Model m = attention_model(f);
    bool changed = false;
    Model out = fuse(m, &changed);
    ASSERT_TRUE(changed);
    out = apply_pass(out, passes::dead_code_elimination);
    const std::vector<std::string> ops = op_list(out.graph);
    // Rank 3: K = Transpose(kx, 1 0 2) (Transpose(kx, 1 2 0) with its last two axes swapped).
    std::vector<std::string> want = {"Attention"};
    if (f.rank == 3) want.insert(want.begin(), "Transpose");
    if (f.where_fill != 0) want.insert(want.begin(), "Where");  // the mask: Where(cond, fill, 0)
    EXPECT_EQ(ops, want);
    const Node& att = out.graph.nodes.back();
    EXPECT_EQ(att.opset, 23);
    EXPECT_EQ(att.outputs, std::vector<std::string>{"y"});
    EXPECT_EQ(att.inputs[0], "q");
    EXPECT_EQ(att.inputs[2], "v");
    if (f.rank == 4) {
      EXPECT_EQ(att.inputs[1], "k");
    }
    EXPECT_EQ(att.inputs.size(), f.mask.empty() && f.where_fill == 0 ? 3u : 4u);
    ASSERT_NE(att.find_attr("scale"), nullptr);
    EXPECT_FLOAT_EQ(att.find_attr("scale")->f, f.fused_matmul ? 0.25f : 1.0f / std::sqrt(float(D)));
    EXPECT_EQ(att.find_attr("q_num_heads") != nullptr, f.rank == 3);
    expect_close_outputs(m, out, inputs(f), 1e-5);
  }
}

// Heads cut from rows and transposed for the products: rank 4, BERT's [B, S, H, D] ->
// [B, H, S, D] with the scores divided and a key-padding mask; rank 3, nn.MultiheadAttention's
// [S, B * H, D] -> [B * H, S, D] with Q divided. `shared`: the output's Transpose also feeds
// another node.
Model heads_model(int64_t rank, bool shared) {
  constexpr int64_t H = 3;
  Model m = make_model(17);
  Graph& g = m.graph;
  const std::vector<Dim> rd =
      rank == 4 ? std::vector<Dim>{dim(B), dim(S), dim(H), dim(D)} : std::vector<Dim>{dim(S), dim(B * H), dim(D)};
  g.inputs = {tensor_info("rq", DataType::kFloat, rd), tensor_info("rk", DataType::kFloat, rd),
              tensor_info("rv", DataType::kFloat, rd)};
  g.outputs = {untyped("y")};
  if (rank == 4) g.inputs.push_back(tensor_info("mask", DataType::kFloat, {dim(B), dim(1), dim(1), dim(S)}));
  add_init(g, "c", Tensor::scalar<float>(std::sqrt(float(D))));
  const std::vector<int64_t> heads = rank == 4 ? std::vector<int64_t>{0, 2, 1, 3} : std::vector<int64_t>{1, 0, 2};
  const auto transpose = [&](const std::string& x, const std::string& y, std::vector<int64_t> perm) {
    Node t = make_node("Transpose", {x}, {y});
    t.attributes = {ints_attribute("perm", std::move(perm))};
    g.nodes.push_back(t);
  };
  transpose("rq", "q", heads);
  transpose("rk", "kt", rank == 4 ? std::vector<int64_t>{0, 2, 3, 1} : std::vector<int64_t>{1, 2, 0});
  transpose("rv", "v", heads);
  if (rank == 4) {
    g.nodes.push_back(make_node("MatMul", {"q", "kt"}, {"scores"}));
    g.nodes.push_back(make_node("Div", {"scores", "c"}, {"scaled"}));
    g.nodes.push_back(make_node("Add", {"scaled", "mask"}, {"logits"}));
  } else {
    g.nodes.push_back(make_node("Div", {"q", "c"}, {"qs"}));
    g.nodes.push_back(make_node("MatMul", {"qs", "kt"}, {"logits"}));
  }
  g.nodes.push_back(make_node("Softmax", {"logits"}, {"probs"}));
  g.nodes.push_back(make_node("MatMul", {"probs", "v"}, {"out"}));
  transpose("out", "y", heads);
  if (shared) {
    g.nodes.push_back(make_node("Relu", {"out"}, {"z"}));
    g.outputs.push_back(untyped("z"));
  }
  return m;
}

TEST(PassFuseAttention, HeadsCutFromRowsAreReadInPlace) {
  for (int64_t rank : {4, 3}) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    const Model m = heads_model(rank, false);
    bool changed = false;
    Model out = fuse(m, &changed);
    ASSERT_TRUE(changed);
    out = apply_pass(out, passes::dead_code_elimination);
    // Q, K and V as [B, S, H * D] (rank 3: [1, S, B * H * D]); the output back to R's layout.
    EXPECT_EQ(op_list(out.graph), (std::vector<std::string>{"Reshape", "Reshape", "Reshape", "Attention", "Reshape"}));
    const Node& att = out.graph.nodes[3];
    ASSERT_NE(att.find_attr("q_num_heads"), nullptr);
    EXPECT_EQ(att.find_attr("q_num_heads")->i, rank == 4 ? 3 : B * 3);
    EXPECT_EQ(att.find_attr("kv_num_heads")->i, att.find_attr("q_num_heads")->i);
    EXPECT_FLOAT_EQ(att.find_attr("scale")->f, 1.0f / std::sqrt(float(D)));  // rank 3: Q's Div
    EXPECT_EQ(out.graph.nodes.back().outputs, std::vector<std::string>{"y"});
    const Shape rs = rank == 4 ? Shape{B, S, 3, D} : Shape{S, B * 3, D};
    std::vector<Value> in = {random_value(rs, 1), random_value(rs, 2), random_value(rs, 3)};
    if (rank == 4) in.push_back(random_value({B, 1, 1, S}, 4));
    expect_close_outputs(m, out, in, 1e-5);

    // The output read before its Transpose too: the rank's own form, transposes kept.
    Model kept = fuse(heads_model(rank, true), &changed);
    ASSERT_TRUE(changed);
    const std::vector<std::string> ops = op_list(kept.graph);
    EXPECT_EQ(std::count(ops.begin(), ops.end(), "Reshape"), 0);
    EXPECT_EQ(std::count(ops.begin(), ops.end(), "Attention"), 1);
  }
}

// A Llama decode step as torch writes it: K and V are Concat(past, new) over "past" and "seq"
// keys, copied to the query heads by repeat_kv (Unsqueeze, Expand, Reshape), and the mask's
// last dim is Range(0, past + seq). Shape inference proves both "past + seq"; Attention reads
// the concatenations themselves, grouping 4 query heads over 2 kv heads, and the copies go.
TEST(PassFuseAttention, GroupedQueryAttentionOverAKvCache) {
  constexpr int64_t kKvHeads = 2, kHeads = 4, kPast = 5, kSeq = 3;
  Model m = make_model(17);
  Graph& g = m.graph;
  const auto cache = [&](const char* name, const char* length) {
    return tensor_info(name, DataType::kFloat, {dim(1), dim(kKvHeads), sym(length), dim(D)});
  };
  g.inputs = {tensor_info("q", DataType::kFloat, {dim(1), dim(kHeads), sym("seq"), dim(D)}), cache("past_k", "past"),
              cache("k_new", "seq"), cache("past_v", "past"), cache("v_new", "seq")};
  g.outputs = {untyped("y"), untyped("kc"), untyped("vc")};
  add_init(g, "c", Tensor::scalar<float>(1.0f / std::sqrt(float(D))));
  add_init(g, "axis2", i64({2}));
  add_init(g, "i2", Tensor::scalar<int64_t>(2));
  add_init(g, "zero", Tensor::scalar<int64_t>(0));
  add_init(g, "one", Tensor::scalar<int64_t>(1));
  add_init(g, "axis0", i64({0}));
  add_init(g, "repeat", i64({1, 1, kHeads / kKvHeads, 1, 1}));
  add_init(g, "heads", i64({1, kHeads, -1, D}));
  for (const char* x : {"k", "v"}) {
    const std::string p(x);
    Node concat = make_node("Concat", {"past_" + p, p + "_new"}, {p + "c"});
    concat.attributes = {int_attribute("axis", 2)};
    g.nodes.push_back(concat);
    g.nodes.push_back(make_node("Unsqueeze", {p + "c", "axis2"}, {p + "u"}));
    g.nodes.push_back(make_node("Expand", {p + "u", "repeat"}, {p + "e"}));
    g.nodes.push_back(make_node("Reshape", {p + "e", "heads"}, {p + "r"}));
  }
  Node kt = make_node("Transpose", {"kr"}, {"kt"});
  kt.attributes = {ints_attribute("perm", {0, 1, 3, 2})};
  g.nodes.push_back(kt);
  // The mask: Range(0, past + seq) as one row of float.
  g.nodes.push_back(make_node("Shape", {"past_k"}, {"past_shape"}));
  g.nodes.push_back(make_node("Gather", {"past_shape", "i2"}, {"past"}));
  g.nodes.push_back(make_node("Shape", {"k_new"}, {"new_shape"}));
  g.nodes.push_back(make_node("Gather", {"new_shape", "i2"}, {"seq"}));
  g.nodes.push_back(make_node("Add", {"past", "seq"}, {"total"}));
  g.nodes.push_back(make_node("Range", {"zero", "total", "one"}, {"positions"}));
  g.nodes.push_back(make_node("Unsqueeze", {"positions", "axis0"}, {"row"}));
  Node cast = make_node("Cast", {"row"}, {"mask"});
  cast.attributes = {int_attribute("to", 1)};
  g.nodes.push_back(cast);
  g.nodes.push_back(make_node("MatMul", {"q", "kt"}, {"scores"}));
  g.nodes.push_back(make_node("Mul", {"scores", "c"}, {"scaled"}));
  g.nodes.push_back(make_node("Add", {"scaled", "mask"}, {"masked"}));
  g.nodes.push_back(make_node("Softmax", {"masked"}, {"probs"}));
  g.nodes.push_back(make_node("MatMul", {"probs", "vr"}, {"y"}));

  bool changed = false;
  Model out = fuse(m, &changed);
  ASSERT_TRUE(changed);
  out = apply_pass(out, passes::dead_code_elimination);
  const std::vector<std::string> ops = op_list(out.graph);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "Attention"), 1);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "Expand"), 0);
  const Node& att = out.graph.nodes.back();
  ASSERT_EQ(att.op_type, "Attention");
  EXPECT_EQ(att.inputs[1], "kc");
  EXPECT_EQ(att.inputs[2], "vc");
  const auto cache_value = [&](int64_t length, uint32_t seed) { return random_value({1, kKvHeads, length, D}, seed); };
  expect_close_outputs(m, out,
                       {random_value({1, kHeads, kSeq, D}, 1), cache_value(kPast, 2), cache_value(kSeq, 3),
                        cache_value(kPast, 4), cache_value(kSeq, 5)},
                       1e-5);
}

// A mask whose last dim is not provably the keys' count (Hugging Face's, from attention_mask's
// total length) or is 1 (broadcast over the keys, where Attention would pad with -inf) is
// expanded to the keys' count first, as the Add broadcast it.
TEST(PassFuseAttention, MasksOfUnprovenKeyCountAreExpandedToIt) {
  std::vector<Form> forms(2);
  forms[0].mask = {dim(B), dim(1), dim(S), sym("total")};
  forms[1].mask = {dim(B), dim(3), dim(S), dim(1)};
  for (const Form& f : forms) {
    bool changed = false;
    const Model m = attention_model(f);
    const Model out = fuse(m, &changed);
    ASSERT_TRUE(changed);
    const std::vector<std::string> ops = op_list(out.graph);
    EXPECT_EQ(std::count(ops.begin(), ops.end(), "Expand"), 1);
    EXPECT_EQ(ops.back(), "Attention");
    expect_close_outputs(m, out, inputs(f), 1e-5);
  }
  // A mask of another key count fails at run time, as the Add did.
  Form f;
  f.mask = {dim(B), dim(1), dim(S), sym("total")};
  const Model out = fuse(attention_model(f), nullptr);
  std::vector<Value> wrong = inputs(f);
  wrong[3] = random_value({B, 1, S, S - 1}, 9);
  SessionOptions options;
  options.optimization = passes::OptLevel::kNone;
  auto session = Session::create_from_model(out, options);
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  EXPECT_FALSE((*session)->run(wrong).is_ok());
}

TEST(PassFuseAttention, KeepsWhatAttentionWouldComputeDifferently) {
  constexpr int64_t H = 3;
  std::vector<std::pair<std::string, Form>> kept;
  Form f;
  f.mask = {sym("n"), sym("n")};  // the queries' count not provably the mask's
  kept.push_back({"symbolic mask", f});
  f.mask = {dim(S)};  // Attention takes masks of rank 2 to 4
  kept.push_back({"rank-1 mask", f});
  f.mask = {dim(2), dim(B), dim(H), dim(S), dim(S)};
  kept.push_back({"mask growing the scores' rank", f});
  f.heads = 1;
  f.mask = {dim(B), dim(4), dim(S), dim(S)};  // 4 heads of scores after the Add, Q has 1
  kept.push_back({"mask growing the heads", f});
  f.heads = 3;
  f = Form{};
  f.rank = 3;
  f.mask = {dim(B * H), dim(S), dim(S)};  // would meet Attention's head dim
  kept.push_back({"rank-3 mask with a batch dim", f});
  f = Form{};
  f.where_fill = -1e4f;  // S + fill is not fill: a fully masked row would differ
  kept.push_back({"Where with a finite fill", f});
  f = Form{};
  f.v_head = 5;
  kept.push_back({"value head size", f});
  f = Form{};
  f.expose_probs = true;
  kept.push_back({"probabilities read elsewhere", f});
  f = Form{};
  f.softmax_axis = 2;
  kept.push_back({"softmax over the queries", f});
  for (const auto& [what, form] : kept) {
    bool changed = true;
    fuse(attention_model(form), &changed);
    EXPECT_FALSE(changed) << what;
  }
  bool changed = true;
  fuse(attention_model(Form{}), &changed, /*own_kernels=*/false);
  EXPECT_FALSE(changed) << "no optimized kernels";
}

}  // namespace
}  // namespace testing
}  // namespace xonnx
