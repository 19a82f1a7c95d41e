// fp16 weight storage (float16 initializer + Cast) and the quantized-vs-original comparison
// --verify prints (cosine, max abs, top-1 agreement).
#include <gtest/gtest.h>

#include <cmath>

#include "converter/quantize/quant_verify.h"
#include "converter/quantize/quantize.h"
#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace convert {
namespace {

using testing::tensor_of;
using testing::tv;

// y = MatMul(x, big) + small, with `big` [64, 8] (2 KB) and `small` [8] (32 bytes).
Model two_weight_model() {
  Model m;
  m.ir_version = 8;
  m.opset_imports[""] = 17;
  std::vector<float> big(64 * 8);
  for (size_t i = 0; i < big.size(); ++i) big[i] = std::sin(static_cast<float>(i)) * 0.3f;
  big[5] = 1e6f;  // beyond float16: clamped
  m.graph.initializers.push_back({"big", tensor_of<float>(big, {64, 8})});
  m.graph.initializers.push_back({"small", tensor_of<float>(std::vector<float>(8, 0.25f), {8})});
  Node mm;
  mm.op_type = "MatMul";
  mm.name = "mm";
  mm.inputs = {"x", "big"};
  mm.outputs = {"t"};
  Node add;
  add.op_type = "Add";
  add.name = "add";
  add.inputs = {"t", "small"};
  add.outputs = {"y"};
  m.graph.nodes = {mm, add};
  m.graph.inputs.push_back(ValueInfo{"x", {}});
  m.graph.outputs.push_back(ValueInfo{"y", {}});
  return m;
}

Value run(Model m, const Value& x) {
  auto s = Session::create_from_model(std::move(m));
  EXPECT_TRUE(s.is_ok()) << s.status().to_string();
  if (!s.is_ok()) return Value();
  auto out = (*s)->run({x});
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  return out.is_ok() ? (*out)[0] : Value();
}

TEST(QuantizeFp16, LargeFloatInitializersBecomeHalfWithACast) {
  Model model = two_weight_model();
  QuantizeOptions opt;
  opt.mode = QuantizeMode::kFp16;
  auto r = quantize_model(model, opt);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  ASSERT_EQ(r->quantized.size(), 1u);
  EXPECT_EQ(r->weight_bytes_before, 2048);
  EXPECT_EQ(r->weight_bytes_after, 1024);
  EXPECT_NE(r->quantized[0].as.find("1 values clamped"), std::string::npos) << r->quantized[0].as;
  ASSERT_EQ(model.graph.nodes.size(), 3u);
  const Node& cast = model.graph.nodes[0];
  EXPECT_EQ(cast.op_type, "Cast");
  EXPECT_EQ(cast.outputs[0], "big");
  EXPECT_EQ(cast.find_attr("to")->i, 1);
  const NamedTensor* half = model.graph.find_initializer(cast.inputs[0]);
  ASSERT_NE(half, nullptr);
  EXPECT_EQ(half->tensor.dtype(), DataType::kFloat16);
  EXPECT_EQ(model.graph.find_initializer("big"), nullptr);
  EXPECT_EQ(model.graph.find_initializer("small")->tensor.dtype(), DataType::kFloat);  // < 1 KB

  std::vector<float> xv(2 * 64);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = (i % 7 == 0) ? 0.0f : std::cos(static_cast<float>(i));
  for (size_t i = 0; i < 2; ++i) xv[i * 64] = 0.0f;  // row 0 of `big` holds the clamped value
  const Value x = tv<float>(xv, {2, 64});
  const Value a = run(two_weight_model(), x);
  const Value b = run(std::move(model), x);
  ASSERT_TRUE(a.is_tensor() && b.is_tensor());
  const OutputAgreement d = compare_outputs("y", a, b, 0.98);
  EXPECT_TRUE(d.error.empty()) << d.error;
  EXPECT_GT(d.cosine, 0.9999);
  EXPECT_LT(d.max_abs, 1e-2);
  EXPECT_EQ(d.rows, 2);
  EXPECT_FALSE(d.low);
}

TEST(QuantizeFp16, ExcludedReadersKeepTheirWeightInFloat) {
  Model model = two_weight_model();
  QuantizeOptions opt;
  opt.mode = QuantizeMode::kFp16;
  opt.exclude = {"mm"};
  auto r = quantize_model(model, opt);
  ASSERT_TRUE(r.is_ok());
  EXPECT_TRUE(r->quantized.empty());
  ASSERT_EQ(r->skipped.size(), 1u);
  EXPECT_EQ(model.graph.find_initializer("big")->tensor.dtype(), DataType::kFloat);
}

TEST(QuantVerify, CosineMaxAbsAndTop1) {
  const Value a = tv<float>({1, 2, 3, 4, 0, 1}, {2, 3});
  OutputAgreement same = compare_outputs("o", a, a, 0.98);
  EXPECT_NEAR(same.cosine, 1.0, 1e-12);
  EXPECT_EQ(same.max_abs, 0.0);
  EXPECT_EQ(same.top1, 1.0);
  // Row 1's argmax moves (4 -> index 2): top-1 agreement 50 %.
  const Value b = tv<float>({1, 2, 3, 4, 0, 5}, {2, 3});
  OutputAgreement d = compare_outputs("o", a, b, 0.98);
  EXPECT_NEAR(d.max_abs, 4.0, 1e-12);
  EXPECT_EQ(d.rows, 2);
  EXPECT_NEAR(d.top1, 0.5, 1e-12);
  const double expect = (1 + 4 + 9 + 16 + 0 + 5) / std::sqrt(31.0 * 55.0);
  EXPECT_NEAR(d.cosine, expect, 1e-12);
  EXPECT_TRUE(d.low);  // 0.75 < 0.98
  OutputAgreement neg = compare_outputs("o", a, tv<float>({-1, -2, -3, -4, 0, -1}, {2, 3}), 0.98);
  EXPECT_NEAR(neg.cosine, -1.0, 1e-12);
  OutputAgreement shape = compare_outputs("o", a, tv<float>({1, 2, 3, 4, 0, 1}, {3, 2}), 0.98);
  EXPECT_FALSE(shape.error.empty());
  EXPECT_TRUE(shape.low);
  QuantVerifyResult r;
  r.outputs = {same, d};
  EXPECT_FALSE(r.ok());
  EXPECT_NE(quant_verify_markdown(r).find("**no (low)**"), std::string::npos);
}

}  // namespace
}  // namespace convert
}  // namespace xonnx
