// The QDQ fusion pass (runtime/passes/qdq_fusion.h) graph in, graph out: which groups become
// QLinearConv / QLinearAdd / integer MaxPool, which Relu folds into the Q's saturation, which
// constant DequantizeLinear becomes a float initializer, and what must stay (graph outputs,
// values read by subgraphs). saturation_implies is checked against a brute-force QuantizeLinear.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "runtime/passes/qdq_fusion.h"
#include "runtime/ops/optimized/qgemm.h"
#include "tests/unit/graph_builder.h"
#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace {

using testing::attr_int;
using testing::attr_ints;

// The shared builder, plus QDQ pieces.
struct Builder : testing::GraphBuilder {
  using GraphBuilder::GraphBuilder;
  // x -> QuantizeLinear -> DequantizeLinear with one scalar scale / zero point.
  std::string qdq(const std::string& x, float scale, int zp, DataType type = DataType::kUint8,
                  const std::string& q_out = "", const std::string& dq_out = "") {
    const std::string s = constant(Tensor::scalar<float>(scale));
    const std::string z = constant(type == DataType::kUint8 ? Tensor::scalar<uint8_t>(static_cast<uint8_t>(zp))
                                                            : Tensor::scalar<int8_t>(static_cast<int8_t>(zp)));
    return node("DequantizeLinear", {node("QuantizeLinear", {x, s, z}, {}, q_out), s, z}, {}, dq_out);
  }
  // Conv of DQ(int8 W per output channel) and DQ(int32 B at x_scale * w_scale).
  std::string qconv(const std::string& x, float x_scale, int64_t cin, int64_t cout, int64_t k) {
    std::vector<int8_t> w(static_cast<size_t>(cout * cin * k * k));
    for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int8_t>(static_cast<int>(i * 29 % 255) - 127);
    std::vector<float> ws(static_cast<size_t>(cout)), bs(static_cast<size_t>(cout));
    std::vector<int32_t> b(static_cast<size_t>(cout));
    for (int64_t o = 0; o < cout; ++o) {
      ws[static_cast<size_t>(o)] = 0.002f * static_cast<float>(o + 1);
      bs[static_cast<size_t>(o)] = x_scale * ws[static_cast<size_t>(o)];
      b[static_cast<size_t>(o)] = static_cast<int32_t>(o * 1000 - 1500);
    }
    const std::string wq = constant(Tensor::from_vector<int8_t>(w, {cout, cin, k, k}), "w_int8");
    const std::string wdq = node("DequantizeLinear",
                                 {wq, constant(Tensor::from_vector<float>(ws, {cout})),
                                  constant(Tensor::from_vector<int8_t>(std::vector<int8_t>(cout, 0), {cout}))},
                                 {attr_int("axis", 0)});
    const std::string bdq = node("DequantizeLinear",
                                 {constant(Tensor::from_vector<int32_t>(b, {cout}), "b_int32"),
                                  constant(Tensor::from_vector<float>(bs, {cout}))},
                                 {attr_int("axis", 0)});
    const int64_t p = k / 2;
    return node("Conv", {x, wdq, bdq}, {attr_ints("kernel_shape", {k, k}), attr_ints("pads", {p, p, p, p})});
  }
};

QdqFusionStats fuse(Builder& b) {
  auto stats = apply_qdq_fusion(b.g(), b.model.opset_imports);
  EXPECT_TRUE(stats.is_ok()) << stats.status().to_string();
  return stats.is_ok() ? *stats : QdqFusionStats{};
}

int count_ops(const Graph& g, const std::string& op, const std::string& domain = "") {
  int n = 0;
  for (const Node& node : g.nodes) n += node.domain == domain && node.op_type == op;
  return n;
}
const Node* find_op(const Graph& g, const std::string& op, const std::string& domain = "") {
  for (const Node& node : g.nodes)
    if (node.domain == domain && node.op_type == op) return &node;
  return nullptr;
}
const Node* producer(const Graph& g, const std::string& value) {
  for (const Node& node : g.nodes)
    for (const std::string& o : node.outputs)
      if (o == value) return &node;
  return nullptr;
}
const Tensor* initializer(const Graph& g, const std::string& name) {
  const NamedTensor* t = g.find_initializer(name);
  return t ? &t->tensor : nullptr;
}
std::string op_list(const Graph& g) {
  std::string s;
  for (const Node& n : g.nodes) s += (n.domain.empty() ? "" : n.domain + ":") + n.op_type + " ";
  return s;
}

// Every node input is produced by an earlier node, an initializer or a graph input.
void expect_well_formed(const Graph& g) {
  std::vector<std::string> known;
  for (const ValueInfo& v : g.inputs) known.push_back(v.name);
  for (const NamedTensor& t : g.initializers) known.push_back(t.name);
  for (const Node& n : g.nodes) {
    for (const std::string& in : n.inputs) {
      if (in.empty()) continue;
      EXPECT_NE(std::find(known.begin(), known.end(), in), known.end())
          << n.describe() << " reads '" << in << "' before it exists";
    }
    known.insert(known.end(), n.outputs.begin(), n.outputs.end());
  }
  for (const ValueInfo& v : g.outputs)
    EXPECT_NE(std::find(known.begin(), known.end(), v.name), known.end()) << "graph output " << v.name;
}

TEST(QdqFusion, ConvReluFoldsWhenTheZeroPointIsTheTypeMinimum) {
  Builder b;
  b.input("x");
  const float xs = 0.02f;
  const std::string x = b.qdq("x", xs, 128);
  const std::string r = b.node("Relu", {b.qconv(x, xs, 3, 4, 3)});
  b.qdq(r, 0.05f, 0, DataType::kUint8, "yq", "y");
  b.output("y");
  const QdqFusionStats s = fuse(b);
  const Graph& g = b.g();
  EXPECT_EQ(s.signed_activations, 2);
  EXPECT_EQ(s.conv, 1);
  EXPECT_EQ(s.activations, 1);
  EXPECT_EQ(s.binary + s.max_pool + s.folded_dequantize, 0);
  EXPECT_EQ(op_list(g), "QuantizeLinear QLinearConv DequantizeLinear ") << op_list(g);
  expect_well_formed(g);
  const Node* conv = find_op(g, "QLinearConv");
  ASSERT_NE(conv, nullptr);
  ASSERT_EQ(conv->inputs.size(), 9u);
  EXPECT_EQ(conv->outputs[0], "yq");
  EXPECT_EQ(conv->inputs[3], "w_int8");
  EXPECT_NE(conv->find_attr("kernel_shape"), nullptr);
  // Activations are int8 now: x zero point 128 - 128, y zero point 0 - 128.
  const Tensor* xz = initializer(g, conv->inputs[2]);
  const Tensor* yz = initializer(g, conv->inputs[7]);
  ASSERT_TRUE(xz && yz);
  EXPECT_EQ(xz->dtype(), DataType::kInt8);
  EXPECT_EQ(xz->get_as_int64(0), 0);
  EXPECT_EQ(yz->dtype(), DataType::kInt8);
  EXPECT_EQ(yz->get_as_int64(0), -128);
  EXPECT_EQ(initializer(g, conv->inputs[5])->dtype(), DataType::kInt8);  // the weight's own zero point
  // The bias was already at x_scale * w_scale: the same codes.
  const Tensor* bias = initializer(g, conv->inputs[8]);
  ASSERT_NE(bias, nullptr);
  ASSERT_EQ(bias->dtype(), DataType::kInt32);
  ASSERT_EQ(bias->numel(), 4);
  for (int64_t o = 0; o < 4; ++o) EXPECT_EQ(bias->get_as_int64(o), o * 1000 - 1500) << "channel " << o;
  // The input Q and the output DQ share the int8 zero points of the fused node.
  EXPECT_EQ(g.nodes[0].inputs[2], conv->inputs[2]);
  EXPECT_EQ(g.nodes[2].inputs[2], conv->inputs[7]);
  // Unread initializers (the float bias codes' DQ inputs, the uint8 zero points) are gone.
  EXPECT_EQ(initializer(g, "b_int32"), nullptr);
  for (const NamedTensor& t : g.initializers) EXPECT_NE(t.tensor.dtype(), DataType::kUint8) << t.name;
}

TEST(QdqFusion, ReluStaysWhenTheZeroPointIsInTheMiddle) {
  Builder b;
  b.input("x");
  const std::string x = b.qdq("x", 0.02f, 128);
  b.node("Identity", {b.qdq(b.node("Relu", {b.qconv(x, 0.02f, 3, 4, 3)}), 0.05f, 128)}, {}, "y");
  b.output("y");
  const QdqFusionStats s = fuse(b);
  const Graph& g = b.g();
  EXPECT_EQ(s.conv, 0);
  EXPECT_EQ(s.activations, 0);
  EXPECT_EQ(s.signed_activations, 2);
  EXPECT_EQ(s.folded_dequantize, 2);  // W and B of the float Conv become float initializers
  EXPECT_EQ(count_ops(g, "Relu"), 1);
  EXPECT_EQ(count_ops(g, "Conv"), 1);
  EXPECT_EQ(count_ops(g, "QLinearConv"), 0);
  EXPECT_EQ(count_ops(g, "DequantizeLinear"), 2) << op_list(g);  // the activations' only
  expect_well_formed(g);
  const Node* conv = find_op(g, "Conv");
  ASSERT_NE(conv, nullptr);
  const Tensor* w = initializer(g, conv->inputs[1]);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->dtype(), DataType::kFloat);
  EXPECT_EQ(w->shape(), (Shape{4, 3, 3, 3}));
  // Channel 1's scale is 0.004: element [1][0][0][0] is code (27 * 29 % 255) - 127.
  const int code = static_cast<int>(27 * 29 % 255) - 127;
  EXPECT_FLOAT_EQ(w->data<float>()[27], static_cast<float>(code) * 0.004f);
  const Tensor* bias = initializer(g, conv->inputs[2]);
  ASSERT_NE(bias, nullptr);
  EXPECT_FLOAT_EQ(bias->data<float>()[3], 1500.0f * (0.02f * 0.008f));
}

// A Clip(0, 6) whose range the Q covers exactly (6 / scale = 255) folds too; a wider Q does not.
TEST(QdqFusion, ClipFoldsOnlyWhenTheQuantizerSaturatesInsideIt) {
  for (const float ys : {6.0f / 255.0f, 0.1f}) {
    Builder b;
    b.input("x");
    const std::string x = b.qdq("x", 0.02f, 128);
    const std::string c = b.node("Clip", {b.qconv(x, 0.02f, 3, 4, 1), b.constant(Tensor::scalar<float>(0.0f)),
                                          b.constant(Tensor::scalar<float>(6.0f))});
    b.node("Identity", {b.qdq(c, ys, 0)}, {}, "y");
    b.output("y");
    const QdqFusionStats s = fuse(b);
    const bool folds = ys < 0.05f;
    EXPECT_EQ(s.conv, folds ? 1 : 0) << "y_scale " << ys;
    EXPECT_EQ(s.activations, folds ? 1 : 0);
    EXPECT_EQ(count_ops(b.g(), "Clip"), folds ? 0 : 1);
    expect_well_formed(b.g());
  }
}

TEST(QdqFusion, AddAndMulBecomeComMicrosoftOps) {
  for (const char* op : {"Add", "Mul"}) {
    Builder b;
    b.input("a");
    b.input("c");
    const std::string sum = b.node(op, {b.qdq("a", 0.1f, 128), b.qdq("c", 0.05f, 100)});
    b.node("Identity", {b.qdq(sum, 0.2f, 120)}, {}, "y");
    b.output("y");
    const QdqFusionStats s = fuse(b);
    const Graph& g = b.g();
    EXPECT_EQ(s.binary, 1) << op;
    EXPECT_EQ(s.signed_activations, 3);
    const std::string fused = std::string("QLinear") + op;
    const Node* n = find_op(g, fused, "com.microsoft");
    ASSERT_NE(n, nullptr) << op_list(g);
    EXPECT_EQ(n->opset, 1);
    ASSERT_EQ(n->inputs.size(), 8u);
    EXPECT_EQ(initializer(g, n->inputs[2])->get_as_int64(0), 0);    // 128 - 128
    EXPECT_EQ(initializer(g, n->inputs[5])->get_as_int64(0), -28);  // 100 - 128
    EXPECT_EQ(initializer(g, n->inputs[7])->get_as_int64(0), -8);   // 120 - 128
    EXPECT_FLOAT_EQ(initializer(g, n->inputs[4])->data<float>()[0], 0.05f);
    EXPECT_EQ(count_ops(g, op), 0);
    EXPECT_EQ(count_ops(g, "QuantizeLinear"), 2);  // the two inputs'
    EXPECT_EQ(count_ops(g, "DequantizeLinear"), 1);
    expect_well_formed(g);
  }
}

// Different 8-bit types on the two inputs: left alone (QLinearAdd wants one type).
TEST(QdqFusion, AddWithMixedTypesIsUnchanged) {
  Builder b;
  b.input("a");
  b.input("c");
  const std::string sum = b.node("Add", {b.qdq("a", 0.1f, 128), b.qdq("c", 0.05f, 3, DataType::kInt8)});
  b.node("Identity", {b.qdq(sum, 0.2f, 0, DataType::kInt8)}, {}, "y");
  b.output("y");
  // Make the uint8 side's Q a graph output too so it stays uint8.
  b.output(b.g().nodes[0].outputs[0]);
  const QdqFusionStats s = fuse(b);
  EXPECT_EQ(s.binary, 0);
  EXPECT_EQ(count_ops(b.g(), "Add"), 1);
  expect_well_formed(b.g());
}

TEST(QdqFusion, MaxPoolMovesOntoIntegersOnlyWithEqualParameters) {
  for (const bool equal : {true, false}) {
    Builder b;
    b.input("x");
    const std::string p =
        b.node("MaxPool", {b.qdq("x", 0.1f, 128)}, {attr_ints("kernel_shape", {2, 2}), attr_ints("strides", {2, 2})});
    b.node("Identity", {b.qdq(p, equal ? 0.1f : 0.2f, 128)}, {}, "y");
    b.output("y");
    const QdqFusionStats s = fuse(b);
    const Graph& g = b.g();
    EXPECT_EQ(s.max_pool, equal ? 1 : 0);
    const Node* pool = find_op(g, "MaxPool");
    ASSERT_NE(pool, nullptr);
    const Node* in = producer(g, pool->inputs[0]);
    ASSERT_NE(in, nullptr);
    EXPECT_EQ(in->op_type, equal ? "QuantizeLinear" : "DequantizeLinear") << op_list(g);
    EXPECT_NE(pool->find_attr("kernel_shape"), nullptr);
    EXPECT_EQ(count_ops(g, "QuantizeLinear"), equal ? 1 : 2);
    expect_well_formed(g);
  }
}

// Concat only moves values: with one set of parameters on all its inputs and on the Q after it,
// it concatenates the integers; one input on another scale keeps it in float.
TEST(QdqFusion, ConcatMovesOntoIntegersOnlyWithEqualParameters) {
  for (const bool equal : {true, false}) {
    Builder b;
    b.input("x1");
    b.input("x2");
    const std::string c =
        b.node("Concat", {b.qdq("x1", 0.1f, 128), b.qdq("x2", equal ? 0.1f : 0.3f, 128)}, {attr_int("axis", 1)});
    b.node("Identity", {b.qdq(c, 0.1f, 128)}, {}, "y");
    b.output("y");
    const QdqFusionStats s = fuse(b);
    const Graph& g = b.g();
    EXPECT_EQ(s.concat, equal ? 1 : 0);
    const Node* concat = find_op(g, "Concat");
    ASSERT_NE(concat, nullptr);
    for (const std::string& in : concat->inputs) {
      const Node* p = producer(g, in);
      ASSERT_NE(p, nullptr);
      EXPECT_EQ(p->op_type, equal ? "QuantizeLinear" : "DequantizeLinear") << op_list(g);
    }
    EXPECT_EQ(count_ops(g, "DequantizeLinear"), equal ? 1 : 3) << op_list(g);
    expect_well_formed(g);
  }
}

// MaxPool on int8 needs opset 12: opset 11 models keep the float MaxPool.
TEST(QdqFusion, MaxPoolBeforeOpset12IsUnchanged) {
  Builder b(11);
  b.input("x");
  const std::string p = b.node("MaxPool", {b.qdq("x", 0.1f, 128)}, {attr_ints("kernel_shape", {2, 2})});
  b.node("Identity", {b.qdq(p, 0.1f, 128)}, {}, "y");
  b.output("y");
  EXPECT_EQ(fuse(b).max_pool, 0);
  EXPECT_EQ(producer(b.g(), find_op(b.g(), "MaxPool")->inputs[0])->op_type, "DequantizeLinear");
}

// A classifier head: DQ(x) -> Gemm(DQ(int8 W [N, K] per output row, transB), DQ(int32 bias)).
// Without a Q after it the Gemm becomes QGemm with a float output; with one, a quantized one.
std::string qgemm_head(Builder& b, const std::string& x, float x_scale, int64_t k, int64_t n) {
  std::vector<int8_t> w(static_cast<size_t>(n * k));
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int8_t>(static_cast<int>(i * 37 % 255) - 127);
  std::vector<float> ws(static_cast<size_t>(n)), bs(static_cast<size_t>(n));
  std::vector<int32_t> bias(static_cast<size_t>(n));
  for (int64_t o = 0; o < n; ++o) {
    ws[static_cast<size_t>(o)] = 0.003f * static_cast<float>(o + 1);
    bs[static_cast<size_t>(o)] = x_scale * ws[static_cast<size_t>(o)];
    bias[static_cast<size_t>(o)] = static_cast<int32_t>(o * 700 - 900);
  }
  const std::string wdq = b.node(
      "DequantizeLinear",
      {b.constant(Tensor::from_vector<int8_t>(w, {n, k}), "head_w"), b.constant(Tensor::from_vector<float>(ws, {n})),
       b.constant(Tensor::from_vector<int8_t>(std::vector<int8_t>(n, 0), {n}))},
      {attr_int("axis", 0)});
  const std::string bdq = b.node(
      "DequantizeLinear",
      {b.constant(Tensor::from_vector<int32_t>(bias, {n}), "head_b"), b.constant(Tensor::from_vector<float>(bs, {n}))},
      {attr_int("axis", 0)});
  return b.node("Gemm", {x, wdq, bdq}, {attr_int("transB", 1)}, "logits");
}

TEST(QdqFusion, GemmHeadBecomesQGemmWithFloatOutput) {
  if (!opt::qgemm_fast()) GTEST_SKIP() << "QGemm is made only where its AVX512-VNNI kernel runs";
  Builder b;
  b.input("x");
  qgemm_head(b, b.qdq("x", 0.05f, 128), 0.05f, 6, 4);
  b.output("logits");
  const QdqFusionStats s = fuse(b);
  const Graph& g = b.g();
  EXPECT_EQ(s.gemm, 1);
  EXPECT_EQ(op_list(g), "QuantizeLinear com.microsoft:QGemm ");
  const Node* q = find_op(g, "QGemm", "com.microsoft");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->outputs, std::vector<std::string>{"logits"});
  EXPECT_EQ(q->inputs.size(), 7u) << "A, a_scale, a_zp, B, b_scale, b_zp, C: no y_scale (float output)";
  EXPECT_EQ(q->inputs[3], "head_w");
  const Tensor* bias = initializer(g, q->inputs[6]);
  ASSERT_NE(bias, nullptr);
  ASSERT_EQ(bias->dtype(), DataType::kInt32);
  for (int64_t o = 0; o < 4; ++o)
    EXPECT_EQ(bias->data<int32_t>()[o], o * 700 - 900) << "the int32 bias is kept exactly";
  ASSERT_NE(q->find_attr("transB"), nullptr);
  EXPECT_EQ(q->find_attr("transB")->i, 1);
  expect_well_formed(g);
}

TEST(QdqFusion, GemmFollowedByQuantizeBecomesQuantizedQGemm) {
  if (!opt::qgemm_fast()) GTEST_SKIP() << "QGemm is made only where its AVX512-VNNI kernel runs";
  Builder b;
  b.input("x");
  b.qdq(qgemm_head(b, b.qdq("x", 0.05f, 128), 0.05f, 6, 4), 0.1f, 128, DataType::kUint8, "", "y");
  b.output("y");
  const QdqFusionStats s = fuse(b);
  const Graph& g = b.g();
  EXPECT_EQ(s.gemm, 1);
  const Node* q = find_op(g, "QGemm", "com.microsoft");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->inputs.size(), 9u) << "with y_scale and y_zero_point";
  EXPECT_EQ(count_ops(g, "Gemm"), 0);
  expect_well_formed(g);
}

TEST(QdqFusion, GemmWithTransposedActivationsIsUnchanged) {
  Builder b;
  b.input("x");
  const std::string y = qgemm_head(b, b.qdq("x", 0.05f, 128), 0.05f, 6, 4);
  b.g().nodes.back().attributes.push_back(attr_int("transA", 1));
  b.output(y);
  const QdqFusionStats s = fuse(b);
  EXPECT_EQ(s.gemm, 0);
  EXPECT_EQ(count_ops(b.g(), "Gemm"), 1);
}

TEST(QdqFusion, ConstantDequantizeFeedingGemmIsFolded) {
  Builder b;
  b.input("x");
  const std::vector<int8_t> w = {-128, -1, 0, 1, 127, 5};
  const std::vector<float> scales = {0.5f, 0.25f, 2.0f};
  const std::vector<int8_t> zps = {0, 1, -2};
  // Per-axis along the output columns of B [2, 3] (axis 1, the default).
  const std::string wf =
      b.node("DequantizeLinear",
             {b.constant(Tensor::from_vector<int8_t>(w, {2, 3})), b.constant(Tensor::from_vector<float>(scales, {3})),
              b.constant(Tensor::from_vector<int8_t>(zps, {3}))},
             {}, "w_float");
  b.node("Gemm", {"x", wf}, {}, "y");
  b.output("y");
  const size_t initializers_before = b.g().initializers.size();
  const QdqFusionStats s = fuse(b);
  const Graph& g = b.g();
  EXPECT_EQ(s.folded_dequantize, 1);
  EXPECT_EQ(op_list(g), "Gemm ");
  EXPECT_EQ(g.initializers.size(), initializers_before - 2);  // w, scale, zp -> w_float
  const Tensor* t = initializer(g, "w_float");
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->dtype(), DataType::kFloat);
  ASSERT_EQ(t->shape(), (Shape{2, 3}));
  const std::vector<float> want = {-64.0f, -0.5f, 4.0f, 0.5f, 31.5f, 14.0f};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(t->data<float>()[i], want[i]) << "element " << i;
  expect_well_formed(g);
}

// Opset 23: output_dtype picks the output type (here float16, with a float32 scale). A folded
// initializer must have that type, or the DQ must stay.
TEST(QdqFusion, ConstantDequantizeWithOutputDtypeKeepsItsType) {
  Builder b(23);
  b.input("x");
  const std::vector<int8_t> w = {-3, 0, 5, 7};
  b.node("DequantizeLinear",
         {b.constant(Tensor::from_vector<int8_t>(w, {2, 2})), b.constant(Tensor::scalar<float>(0.5f)),
          b.constant(Tensor::scalar<int8_t>(1))},
         {attr_int("output_dtype", static_cast<int64_t>(DataType::kFloat16))}, "w_half");
  b.node("MatMul", {"x", "w_half"}, {}, "y");
  b.output("y");
  fuse(b);
  const Graph& g = b.g();
  const Node* dq = producer(g, "w_half");
  if (dq != nullptr) {
    EXPECT_EQ(dq->op_type, "DequantizeLinear");
    return;
  }
  const Tensor* t = initializer(g, "w_half");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->dtype(), DataType::kFloat16) << "folded to " << dtype_name(t->dtype()) << " despite output_dtype";
}

// A Q whose output is a graph output keeps its uint8 type (the caller sees it).
TEST(QdqFusion, QuantizeLinearThatIsAGraphOutputStaysUint8) {
  Builder b;
  b.input("x");
  const std::string d = b.qdq("x", 0.1f, 128, DataType::kUint8, "q");
  b.node("Relu", {d}, {}, "y");
  b.output("q");
  b.output("y");
  const QdqFusionStats s = fuse(b);
  const Graph& g = b.g();
  EXPECT_EQ(s.signed_activations, 0);
  const Node* q = producer(g, "q");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->op_type, "QuantizeLinear");
  EXPECT_EQ(initializer(g, q->inputs[2])->dtype(), DataType::kUint8);
  EXPECT_EQ(count_ops(g, "DequantizeLinear"), 1);
  expect_well_formed(g);
}

std::shared_ptr<Graph> identity_branch(const std::string& read, const std::string& out) {
  auto g = std::make_shared<Graph>();
  g->name = out + "_branch";
  Node n;
  n.op_type = "Identity";
  n.name = out + "_id";
  n.inputs = {read};
  n.outputs = {out};
  g->nodes.push_back(n);
  ValueInfo vi;
  vi.name = out;
  g->outputs.push_back(vi);
  return g;
}

// Values read inside an If branch keep their producers: the constant DQ is not folded away
// and the activation DQ stays even though its Conv reader was fused.
TEST(QdqFusion, DequantizeReadBySubgraphIsKept) {
  Builder b;
  b.input("x");
  b.input("cond");
  const std::string x = b.qdq("x", 0.02f, 128);
  b.node("Identity", {b.qdq(b.qconv(x, 0.02f, 3, 4, 1), 0.05f, 128)}, {}, "y");
  ASSERT_EQ(b.g().nodes[2].op_type, "DequantizeLinear");
  const std::string wdq = b.g().nodes[2].outputs[0];  // DQ(W)
  ASSERT_EQ(b.g().nodes[2].inputs[0], "w_int8");
  Node iff;
  iff.op_type = "If";
  iff.name = "if";
  iff.inputs = {"cond"};
  iff.outputs = {"branch"};
  Attribute then_branch, else_branch;
  then_branch.name = "then_branch";
  then_branch.type = AttrType::kGraph;
  then_branch.g = identity_branch(x, "t");
  else_branch.name = "else_branch";
  else_branch.type = AttrType::kGraph;
  else_branch.g = identity_branch(wdq, "e");
  iff.attributes = {then_branch, else_branch};
  b.g().nodes.push_back(iff);
  b.output("y");
  b.output("branch");
  const QdqFusionStats s = fuse(b);
  const Graph& g = b.g();
  EXPECT_EQ(s.conv, 1);
  EXPECT_EQ(s.folded_dequantize, 0);
  const Node* xdq = producer(g, x);
  ASSERT_NE(xdq, nullptr) << "the activation DQ read by the then branch was removed";
  EXPECT_EQ(xdq->op_type, "DequantizeLinear");
  const Node* wn = producer(g, wdq);
  ASSERT_NE(wn, nullptr) << "the weight DQ read by the else branch was removed";
  EXPECT_EQ(wn->op_type, "DequantizeLinear");
  EXPECT_NE(initializer(g, wn->inputs[0]), nullptr);
  expect_well_formed(g);
}

TEST(QdqFusion, NothingToDoLeavesTheGraphAlone) {
  Builder b;
  b.input("x");
  b.node("Relu", {"x"}, {}, "y");
  b.output("y");
  b.constant(Tensor::scalar<float>(1.0f), "unused");
  const QdqFusionStats s = fuse(b);
  EXPECT_EQ(s.conv + s.binary + s.max_pool + s.folded_dequantize + s.signed_activations + s.activations, 0);
  EXPECT_EQ(b.g().nodes.size(), 1u);
  EXPECT_EQ(b.g().initializers.size(), 1u);
}

// ---- saturation_implies ----

TEST(SaturationImplies, ReluAndClipCases) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(saturation_implies(0.0f, inf, 0.1f, -128, -128, 127));  // int8, zp at the minimum
  EXPECT_TRUE(saturation_implies(0.0f, inf, 0.1f, 0, 0, 255));        // uint8, zp 0
  EXPECT_FALSE(saturation_implies(0.0f, inf, 0.1f, 0, -128, 127));    // zp in the middle
  EXPECT_FALSE(saturation_implies(0.0f, inf, 0.1f, 128, 0, 255));
  EXPECT_TRUE(saturation_implies(0.0f, 6.0f, 6.0f / 255.0f, 0, 0, 255));  // Clip(0, 6) covered exactly
  EXPECT_FALSE(saturation_implies(0.0f, 6.0f, 0.1f, 0, 0, 255));          // Q reaches past 6
  EXPECT_TRUE(saturation_implies(-inf, inf, 0.1f, 5, -128, 127));         // no clamp at all
  EXPECT_TRUE(
      saturation_implies(std::numeric_limits<float>::lowest(), std::numeric_limits<float>::max(), 1.0f, 0, -128, 127));
  // Invalid scales never imply anything.
  for (float s : {0.0f, -1.0f, inf, std::numeric_limits<float>::quiet_NaN()})
    EXPECT_FALSE(saturation_implies(0.0f, inf, s, -128, -128, 127)) << "scale " << s;
}

TEST(SaturationImplies, TieAtTheTopIsNotSaturation) {
  // hi_code exactly qmax - 0.5: Q(hi) rounds half to even to qmax - 1 (254.5 -> 254), while
  // larger x reach qmax: the clamp matters.
  EXPECT_FALSE(saturation_implies(0.0f, 254.5f, 1.0f, 0, 0, 255));
  EXPECT_FALSE(saturation_implies(-128.0f, 126.5f, 1.0f, 0, -128, 127));
  EXPECT_FALSE(saturation_implies(-128.0f, 62.5f, 1.0f, 64, -128, 127));  // 62.5 + 64 = qmax - 0.5
  // Just past the tie it saturates.
  EXPECT_TRUE(saturation_implies(0.0f, 254.50002f, 1.0f, 0, 0, 255));
  // At the bottom a tie with an even code saturates: -127.5 rounds to -128 (zp 0).
  EXPECT_TRUE(saturation_implies(-127.5f, std::numeric_limits<float>::infinity(), 1.0f, 0, -128, 127));
}

// QuantizeLinear as the spec defines it: x / scale in float, half to even, + zp, saturate.
int quantize(float x, float scale, int zp, int qmin, int qmax) {
  const double r = std::nearbyint(double(x / scale)) + zp;
  return static_cast<int>(std::min<double>(qmax, std::max<double>(qmin, r)));
}

// Whenever saturation_implies says so, Q(x) == Q(clamp(x, lo, hi)) for x around and beyond
// the bounds (the bounds themselves, their neighbours, far values).
void check_implication(float lo, float hi, float scale, int zp, int qmin, int qmax) {
  if (!saturation_implies(lo, hi, scale, zp, qmin, qmax)) return;
  std::vector<float> xs = {-1e30f, -1e6f, 1e6f, 1e30f, 0.0f};
  for (float bound : {lo, hi}) {
    if (!std::isfinite(bound)) continue;
    float v = bound;
    for (int i = 0; i < 4; ++i) v = std::nextafter(v, -std::numeric_limits<float>::infinity());
    for (int i = 0; i < 9; ++i, v = std::nextafter(v, std::numeric_limits<float>::infinity())) xs.push_back(v);
    for (float d : {0.25f, 0.5f, 1.0f, 3.0f, 100.0f}) {
      xs.push_back(bound - d * scale);
      xs.push_back(bound + d * scale);
    }
  }
  for (float x : xs) {
    const float c = std::min(hi, std::max(lo, x));
    EXPECT_EQ(quantize(x, scale, zp, qmin, qmax), quantize(c, scale, zp, qmin, qmax))
        << "x " << x << " clamp [" << lo << ", " << hi << "] scale " << scale << " zp " << zp << " range [" << qmin
        << ", " << qmax << "]";
  }
}

TEST(SaturationImplies, ImpliesTheSameCodesOverASweep) {
  const float inf = std::numeric_limits<float>::infinity();
  for (int zp : {-128, -100, -1, 0, 64, 127}) {
    for (float scale : {0.01f, 0.1f, 6.0f / 255.0f, 1.0f}) {
      check_implication(0.0f, inf, scale, zp, -128, 127);
      check_implication(0.0f, 6.0f, scale, zp, -128, 127);
      check_implication(-1.0f, 1.0f, scale, zp, -128, 127);
      check_implication(-inf, 0.5f, scale, zp, -128, 127);
    }
  }
  for (int zp : {0, 10, 128, 255})
    for (float scale : {0.01f, 6.0f / 255.0f, 0.05f}) {
      check_implication(0.0f, inf, scale, zp, 0, 255);
      check_implication(0.0f, 6.0f, scale, zp, 0, 255);
    }
}

// A tie at the bottom with an odd zero point: lo / scale = -0.5 rounds to -0 (even), so
// Q(lo) = zp = qmin + 1 while Q(x) for x far below lo saturates to qmin: the clamp matters.
TEST(SaturationImplies, TieAtTheBottomWithOddZeroPointIsNotSaturation) {
  EXPECT_FALSE(saturation_implies(-0.5f, std::numeric_limits<float>::infinity(), 1.0f, 1, 0, 255));
  EXPECT_FALSE(saturation_implies(-0.5f, std::numeric_limits<float>::infinity(), 1.0f, -127, -128, 127));
  EXPECT_EQ(quantize(-0.5f, 1.0f, 1, 0, 255), 1);
  EXPECT_EQ(quantize(-10.0f, 1.0f, 1, 0, 255), 0);
}

}  // namespace
}  // namespace xonnx
