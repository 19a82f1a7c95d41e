// The converter's int4 weight-only quantization: ORT's MatMulNBits layout byte for byte, and
// quantized models that the runtime's MatMulNBits runs to the dequantized-weight result.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "converter/quantize/quantize.h"
#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace convert {
namespace {

using testing::attr_float;
using testing::attr_int;
using testing::tensor_of;

std::vector<float> random_floats(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// One node `op`(x, w[, bias]) -> y with w (and bias) as initializers.
Model one_weight_model(const std::string& op, const std::vector<float>& w, Shape w_shape,
                       std::vector<Attribute> attrs = {}, const std::vector<float>& bias = {}) {
  Model m;
  m.ir_version = 8;
  m.opset_imports[""] = 17;
  Node n;
  n.name = "layer";
  n.op_type = op;
  n.inputs = {"x", "w"};
  n.outputs = {"y"};
  n.attributes = std::move(attrs);
  m.graph.initializers.push_back({"w", tensor_of<float>(w, std::move(w_shape))});
  if (!bias.empty()) {
    n.inputs.push_back("bias");
    m.graph.initializers.push_back({"bias", tensor_of<float>(bias, {static_cast<int64_t>(bias.size())})});
  }
  m.graph.nodes.push_back(n);
  m.graph.inputs.push_back(ValueInfo{"x", {}});
  m.graph.outputs.push_back(ValueInfo{"y", {}});
  return m;
}

std::vector<float> run_model(Model m, const std::vector<float>& x, Shape x_shape) {
  auto session = Session::create_from_model(std::move(m));
  EXPECT_TRUE(session.is_ok()) << session.status().to_string();
  if (!session.is_ok()) return {};
  auto out = (*session)->run({testing::tv<float>(x, std::move(x_shape))});
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  if (!out.is_ok()) return {};
  return testing::values<float>((*out)[0]);
}

// x [M, K] @ w [K, N] in double.
std::vector<float> matmul(const std::vector<float>& x, const std::vector<float>& w, int64_t m, int64_t k, int64_t n) {
  std::vector<float> y(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) s += static_cast<double>(x[i * k + p]) * w[p * n + j];
      y[i * n + j] = static_cast<float>(s);
    }
  }
  return y;
}

double cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double d = 0, na = 0, nb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    d += static_cast<double>(a[i]) * b[i];
    na += static_cast<double>(a[i]) * a[i];
    nb += static_cast<double>(b[i]) * b[i];
  }
  return d / std::sqrt(na * nb);
}

int64_t initializer_bytes(const Model& m) {
  int64_t total = 0;
  for (const NamedTensor& t : m.graph.initializers) total += static_cast<int64_t>(t.tensor.nbytes());
  return total;
}

TEST(QuantizeInt4, PacksLowNibbleFirstPerOrtLayout) {
  // One column, K = 16, values -8..7: scale 1, codes 0..15 in order.
  std::vector<float> w(16);
  for (int i = 0; i < 16; ++i) w[static_cast<size_t>(i)] = static_cast<float>(i - 8);
  Int4Blocks q = quantize_int4_blockwise(w.data(), 16, 1, false, 16, true);
  ASSERT_EQ(q.blocks, 1);
  ASSERT_EQ(q.packed.size(), 8u);
  ASSERT_EQ(q.scales.size(), 1u);
  EXPECT_FLOAT_EQ(q.scales[0], 1.0f);
  EXPECT_TRUE(q.zero_points.empty());
  for (int j = 0; j < 8; ++j) EXPECT_EQ(q.packed[static_cast<size_t>(j)], (2 * j) | ((2 * j + 1) << 4)) << j;
  EXPECT_EQ(dequantize_int4_blockwise(q), w);
}

TEST(QuantizeInt4, ColumnsAreRowsOfBAndKIsPaddedWithTheZeroPoint) {
  // K = 40 (two blocks of 32, the second padded), N = 3.
  const int64_t k = 40, n = 3;
  const std::vector<float> w = random_floats(static_cast<size_t>(k * n), 1);
  Int4Blocks q = quantize_int4_blockwise(w.data(), k, n, false, 32, true);
  ASSERT_EQ(q.blocks, 2);
  ASSERT_EQ(q.packed.size(), static_cast<size_t>(n * 2 * 16));
  ASSERT_EQ(q.scales.size(), static_cast<size_t>(n * 2));
  // Column 1, block 1: elements 8..31 are padding (code 8 -> bytes 0x88).
  const uint8_t* blob = q.packed.data() + (1 * 2 + 1) * 16;
  for (int j = 4; j < 16; ++j) EXPECT_EQ(blob[j], 0x88) << j;
  const std::vector<float> back = dequantize_int4_blockwise(q);
  for (int64_t kk = 0; kk < k; ++kk) {
    for (int64_t nn = 0; nn < n; ++nn) {
      const float scale = q.scales[static_cast<size_t>(nn * 2 + kk / 32)];
      EXPECT_LE(std::fabs(back[kk * n + nn] - w[kk * n + nn]), scale * 0.5f + 1e-6f) << kk << "," << nn;
    }
  }
  // The transposed input ([N, K]) gives the same blocks.
  std::vector<float> wt(w.size());
  for (int64_t kk = 0; kk < k; ++kk) {
    for (int64_t nn = 0; nn < n; ++nn) wt[nn * k + kk] = w[kk * n + nn];
  }
  Int4Blocks qt = quantize_int4_blockwise(wt.data(), k, n, true, 32, true);
  EXPECT_EQ(qt.packed, q.packed);
  EXPECT_EQ(qt.scales, q.scales);
}

TEST(QuantizeInt4, AsymmetricPacksZeroPointsPerColumn) {
  const int64_t k = 96, n = 2;  // 3 blocks of 32: zero points take 2 bytes per column
  std::vector<float> w = random_floats(static_cast<size_t>(k * n), 2);
  for (float& v : w) v = std::fabs(v) + 0.5f;  // all positive: zero point at the bottom
  Int4Blocks q = quantize_int4_blockwise(w.data(), k, n, false, 32, false);
  ASSERT_EQ(q.zero_points.size(), 4u);
  for (uint8_t b : q.zero_points) EXPECT_EQ(b & 0x0F, 0);  // every block's zero point is 0
  EXPECT_EQ(q.zero_points[1] >> 4, 0);                     // padding nibble
  const std::vector<float> back = dequantize_int4_blockwise(q);
  for (size_t i = 0; i < w.size(); ++i) {
    const int64_t kk = static_cast<int64_t>(i) / n, nn = static_cast<int64_t>(i) % n;
    EXPECT_LE(std::fabs(back[i] - w[i]), q.scales[static_cast<size_t>(nn * 3 + kk / 32)] * 0.5f + 1e-6f);
  }
}

TEST(QuantizeInt4, AllZeroBlockGetsAPositiveScale) {
  std::vector<float> w(32, 0.0f);
  Int4Blocks q = quantize_int4_blockwise(w.data(), 32, 1, false, 32, true);
  EXPECT_GT(q.scales[0], 0.0f);
  for (uint8_t b : q.packed) EXPECT_EQ(b, 0x88);
}

TEST(QuantizeInt4, MatMulBecomesMatMulNBitsThatRunsTheDequantizedWeight) {
  const int64_t m = 3, k = 64, n = 48;
  const std::vector<float> w = random_floats(static_cast<size_t>(k * n), 3, 0.1f);
  const std::vector<float> x = random_floats(static_cast<size_t>(m * k), 4);
  Model model = one_weight_model("MatMul", w, {k, n});
  const int64_t bytes_before = initializer_bytes(model);
  QuantizeOptions opt;
  opt.mode = QuantizeMode::kInt4;
  auto r = quantize_model(model, opt);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  ASSERT_EQ(r->quantized.size(), 1u);
  ASSERT_EQ(model.graph.nodes.size(), 1u);
  const Node& nb = model.graph.nodes[0];
  EXPECT_EQ(nb.op_type, "MatMulNBits");
  EXPECT_EQ(nb.domain, "com.microsoft");
  EXPECT_EQ(nb.find_attr("K")->i, k);
  EXPECT_EQ(nb.find_attr("N")->i, n);
  EXPECT_EQ(nb.find_attr("bits")->i, 4);
  EXPECT_EQ(nb.find_attr("block_size")->i, 32);
  EXPECT_EQ(nb.inputs.size(), 3u);  // symmetric: no zero points
  EXPECT_EQ(model.opset_imports.at("com.microsoft"), 1);
  EXPECT_EQ(model.graph.find_initializer("w"), nullptr);  // the float copy is gone
  const Tensor& packed = model.graph.find_initializer(nb.inputs[1])->tensor;
  EXPECT_EQ(packed.dtype(), DataType::kUint8);
  EXPECT_EQ(packed.shape(), (Shape{n, 2, 16}));
  // 4.5 bits per weight instead of 32.
  EXPECT_LT(initializer_bytes(model) * 5, bytes_before);

  Int4Blocks q = quantize_int4_blockwise(w.data(), k, n, false, 32, true);
  const std::vector<float> expected = matmul(x, dequantize_int4_blockwise(q), m, k, n);
  const std::vector<float> float_result = matmul(x, w, m, k, n);
  const std::vector<float> got = run_model(std::move(model), x, {m, k});
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], 1e-4 + 1e-4 * std::fabs(expected[i])) << i;
  EXPECT_GT(cosine(got, float_result), 0.99);
}

TEST(QuantizeInt4, GemmTransBWithBiasAndZeroPoints) {
  const int64_t m = 2, k = 80, n = 5;                                          // K not a multiple of 64
  const std::vector<float> wt = random_floats(static_cast<size_t>(n * k), 5);  // [N, K]
  const std::vector<float> bias = random_floats(static_cast<size_t>(n), 6);
  const std::vector<float> x = random_floats(static_cast<size_t>(m * k), 7);
  Model model = one_weight_model("Gemm", wt, {n, k}, {attr_int("transB", 1)}, bias);
  QuantizeOptions opt;
  opt.mode = QuantizeMode::kInt4;
  opt.block_size = 64;
  opt.symmetric = false;
  opt.accuracy_level = 4;
  auto r = quantize_model(model, opt);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  ASSERT_EQ(model.graph.nodes.size(), 2u);
  EXPECT_EQ(model.graph.nodes[0].op_type, "MatMulNBits");
  EXPECT_EQ(model.graph.nodes[0].inputs.size(), 4u);
  EXPECT_EQ(model.graph.nodes[0].find_attr("accuracy_level")->i, 4);
  EXPECT_EQ(model.graph.nodes[1].op_type, "Add");
  Int4Blocks q = quantize_int4_blockwise(wt.data(), k, n, true, 64, false);
  std::vector<float> expected = matmul(x, dequantize_int4_blockwise(q), m, k, n);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) expected[i * n + j] += bias[j];
  }
  const std::vector<float> got = run_model(std::move(model), x, {m, k});
  ASSERT_EQ(got.size(), expected.size());
  // accuracy_level 4 lets the runtime round A to int8 per block (test_q4_int8.cc bounds that
  // path exactly): within a few percent of the output range, not float32-exact.
  float range = 0;
  for (float e : expected) range = std::max(range, std::fabs(e));
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], 0.03f * range) << i;
}

TEST(QuantizeInt4, TiedLmHeadReadThroughATransposeIsQuantizedFromTheEmbedding) {
  // logits = MatMul(h, Transpose(emb)) with emb [N=40, K=64], as weight dedup leaves a tied lm_head.
  const int64_t m = 2, k = 64, n = 40;
  const std::vector<float> emb = random_floats(static_cast<size_t>(n * k), 12);
  Model model = one_weight_model("MatMul", emb, {n, k});
  model.graph.nodes[0].inputs[1] = "emb_t";
  Node t;
  t.op_type = "Transpose";
  t.inputs = {"w"};
  t.outputs = {"emb_t"};
  model.graph.nodes.insert(model.graph.nodes.begin(), t);
  QuantizeOptions opt;
  opt.mode = QuantizeMode::kInt4;
  auto r = quantize_model(model, opt);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  ASSERT_EQ(r->quantized.size(), 1u);
  EXPECT_EQ(r->quantized[0].weight, "w");
  ASSERT_EQ(model.graph.nodes.size(), 1u);  // the Transpose went with its last reader
  EXPECT_EQ(model.graph.nodes[0].op_type, "MatMulNBits");
  EXPECT_EQ(model.graph.nodes[0].find_attr("N")->i, n);
  const std::vector<float> x = random_floats(static_cast<size_t>(m * k), 13);
  Int4Blocks q = quantize_int4_blockwise(emb.data(), k, n, true, 32, true);
  const std::vector<float> expected = matmul(x, dequantize_int4_blockwise(q), m, k, n);
  const std::vector<float> got = run_model(std::move(model), x, {m, k});
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], 1e-4 + 1e-4 * std::fabs(expected[i])) << i;
}

TEST(QuantizeInt4, SkipsAndSaysWhy) {
  QuantizeOptions opt;
  opt.mode = QuantizeMode::kInt4;
  {
    Model model = one_weight_model("Gemm", random_floats(64 * 4, 8), {64, 4}, {attr_float("alpha", 2.0f)});
    auto r = quantize_model(model, opt);
    ASSERT_TRUE(r.is_ok());
    ASSERT_EQ(r->skipped.size(), 1u);
    EXPECT_NE(r->skipped[0].why.find("alpha"), std::string::npos);
    EXPECT_EQ(model.graph.nodes[0].op_type, "Gemm");
  }
  {
    Model model = one_weight_model("MatMul", random_floats(64 * 4, 9), {2, 32, 4});
    auto r = quantize_model(model, opt);
    ASSERT_EQ(r->skipped.size(), 1u);
    EXPECT_NE(r->skipped[0].why.find("2-D"), std::string::npos);
  }
  for (const char* what : {"layer", "MatMul"}) {  // by node name and by op type
    Model model = one_weight_model("MatMul", random_floats(64 * 4, 10), {64, 4});
    QuantizeOptions ex = opt;
    ex.exclude = {what};
    auto r = quantize_model(model, ex);
    ASSERT_EQ(r->skipped.size(), 1u) << what;
    EXPECT_NE(r->skipped[0].why.find("exclude"), std::string::npos);
    EXPECT_EQ(model.graph.nodes[0].op_type, "MatMul");
    EXPECT_EQ(model.opset_imports.count("com.microsoft"), 0u);
  }
  Model model = one_weight_model("MatMul", random_floats(64 * 4, 11), {64, 4});
  auto r = quantize_model(model, opt);
  ASSERT_TRUE(r.is_ok());
  const std::string md = quantize_markdown(*r);
  EXPECT_NE(md.find("MatMulNBits 4-bit, block 32"), std::string::npos) << md;
}

TEST(QuantizeOptionsCheck, RejectsBadParameters) {
  QuantizeOptions opt;
  opt.mode = QuantizeMode::kInt4;
  opt.block_size = 48;
  EXPECT_EQ(check_quantize_options(opt).code(), StatusCode::kInvalidArgument);
  opt.block_size = 8;
  EXPECT_FALSE(check_quantize_options(opt).is_ok());
  opt.block_size = 128;
  EXPECT_TRUE(check_quantize_options(opt).is_ok());
  opt.calibration_dir = "/tmp";
  EXPECT_FALSE(check_quantize_options(opt).is_ok());
  EXPECT_FALSE(parse_quantize_mode("int3").is_ok());
  auto mode = parse_quantize_mode("fp16");
  ASSERT_TRUE(mode.is_ok());
  EXPECT_EQ(*mode, QuantizeMode::kFp16);
}

}  // namespace
}  // namespace convert
}  // namespace xonnx
