// int8 static with a cosine target (QuantizeOptions::target_cosine): the search keeps the nodes
// whose quantization costs the most in float, and no more than the target needs.
#include <gtest/gtest.h>

#include <cmath>

#include "converter/quantize/quant_verify.h"
#include "converter/quantize/quantize.h"
#include "runtime/exec/session.h"
#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace convert {
namespace {

using testing::normal_floats;
using testing::tensor_of;
using testing::tv;

Node matmul(const std::string& name, const std::string& x, const std::string& w, const std::string& y) {
  Node n;
  n.name = name;
  n.op_type = "MatMul";
  n.inputs = {x, w};
  n.outputs = {y};
  return n;
}

// x [4, 32] -> a -> b -> c -> y, MatMuls of 32 x 32. a's column 0 is zero, so b's input channel 0
// is always 0, and b's weight row 0 holds 1000s: b's per-column int8 scales (1000 / 127) round
// all its other weights to 0, while a and c quantize well.
Model chain_model(const std::string& b_name = "b") {
  Model m;
  m.ir_version = 8;
  m.opset_imports[""] = 17;
  std::vector<float> wa = normal_floats(32 * 32, 1), wb = normal_floats(32 * 32, 2);
  for (int k = 0; k < 32; ++k) wa[static_cast<size_t>(k) * 32] = 0.0f;
  for (int n = 0; n < 32; ++n) wb[static_cast<size_t>(n)] = 1000.0f;
  m.graph.initializers.push_back({"wa", tensor_of<float>(wa, {32, 32})});
  m.graph.initializers.push_back({"wb", tensor_of<float>(wb, {32, 32})});
  m.graph.initializers.push_back({"wc", tensor_of<float>(normal_floats(32 * 32, 3), {32, 32})});
  m.graph.nodes = {matmul("a", "x", "wa", "h"), matmul(b_name, "h", "wb", "g"), matmul("c", "g", "wc", "y")};
  m.graph.inputs.push_back(ValueInfo{"x", {}});
  m.graph.outputs.push_back(ValueInfo{"y", {}});
  return m;
}

QuantizeOptions int8_static_options(double target_cosine) {
  QuantizeOptions opt;
  opt.mode = QuantizeMode::kInt8;
  opt.target_cosine = target_cosine;
  for (uint32_t s = 0; s < 6; ++s) opt.calibration.push_back({{"x", tv<float>(normal_floats(128, 50 + s), {4, 32})}});
  return opt;
}

// The cosine of `quantized`'s output to the float chain's on an input no search has seen.
double cosine_on_new_input(Model quantized) {
  const Value x = tv<float>(normal_floats(128, 999), {4, 32});
  auto run = [&](Model m) {
    auto s = Session::create_from_model(std::move(m));
    EXPECT_TRUE(s.is_ok()) << s.status().to_string();
    auto out = (*s)->run({x});
    EXPECT_TRUE(out.is_ok()) << out.status().to_string();
    return (*out)[0];
  };
  return compare_outputs("y", run(chain_model()), run(std::move(quantized)), 0.0).cosine;
}

bool reads_float_weight(const Model& m, const std::string& node, const std::string& weight) {
  for (const Node& n : m.graph.nodes) {
    if (n.name == node) return n.inputs[1] == weight;
  }
  return false;
}

TEST(QuantizeCosineSearch, KeepsOnlyTheDamagingNodeInFloat) {
  Model everything = chain_model();
  ASSERT_TRUE(quantize_model(everything, int8_static_options(0)).is_ok());
  EXPECT_LT(cosine_on_new_input(std::move(everything)), 0.5);  // b's weights rounded to 0

  Model model = chain_model();
  auto r = quantize_model(model, int8_static_options(0.99));
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  const CosineSearch& s = r->search;
  ASSERT_TRUE(s.ran);
  EXPECT_EQ(s.candidates, 3);
  EXPECT_EQ(s.held_out_samples, 3);  // ranges from samples 0-2, judged on 3-5
  EXPECT_LT(s.cosine_all_quantized, 0.5);
  ASSERT_EQ(s.kept_float.size(), 1u);
  EXPECT_EQ(s.kept_float[0].node, "b");
  EXPECT_LT(s.kept_float[0].cosine_alone, 0.5);
  EXPECT_GE(s.cosine, 0.99);
  EXPECT_EQ(s.trials, 1 + 3 + 1);  // all quantized, each alone, then keeping the costliest one
  EXPECT_EQ(r->quantized.size(), 2u);
  ASSERT_EQ(r->skipped.size(), 1u);
  EXPECT_EQ(r->skipped[0].why, "kept in float for --target-cosine");
  EXPECT_TRUE(reads_float_weight(model, "b", "wb"));
  EXPECT_FALSE(reads_float_weight(model, "a", "wa"));
  EXPECT_FALSE(reads_float_weight(model, "c", "wc"));
  EXPECT_GE(cosine_on_new_input(std::move(model)), 0.99);
  const std::string md = quantize_markdown(*r);
  EXPECT_NE(md.find("1 of 3 kept in float"), std::string::npos) << md;
  EXPECT_NE(md.find("on 3 of 6 calibration samples"), std::string::npos) << md;
  EXPECT_NE(md.find("| b |"), std::string::npos) << md;
}

// Nodes are kept in float by name: an unnamed b, or a b named as a, gets a name of its own, and
// only b stays float.
TEST(QuantizeCosineSearch, NamesUnnamedAndDuplicateNodesToKeepThem) {
  for (const std::string& b_name : {std::string(), std::string("a")}) {
    Model model = chain_model(b_name);
    auto r = quantize_model(model, int8_static_options(0.99));
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    ASSERT_EQ(r->search.kept_float.size(), 1u);
    const std::string& name = r->search.kept_float[0].node;
    EXPECT_FALSE(name.empty());
    EXPECT_NE(name, "a");
    EXPECT_TRUE(reads_float_weight(model, name, "wb"));
    EXPECT_FALSE(reads_float_weight(model, "a", "wa"));
    EXPECT_GE(cosine_on_new_input(std::move(model)), 0.99);
  }
}

TEST(QuantizeCosineSearch, AModelThatMeetsTheTargetIsQuantizedWhole) {
  Model model = chain_model();
  model.graph.initializers[1].tensor = tensor_of<float>(normal_floats(32 * 32, 2), {32, 32});  // b without 1000s
  auto r = quantize_model(model, int8_static_options(0.9));
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->search.trials, 1);
  EXPECT_TRUE(r->search.kept_float.empty());
  EXPECT_GE(r->search.cosine_all_quantized, 0.9);
  EXPECT_EQ(r->quantized.size(), 3u);
}

TEST(QuantizeCosineSearch, RefusesTargetsOutsideInt8StaticAndTheUnitInterval) {
  for (double bad : {-0.5, 1.5, std::nan("")}) {
    Model model = chain_model();
    auto r = quantize_model(model, int8_static_options(bad));
    ASSERT_FALSE(r.is_ok());
    EXPECT_NE(r.status().message().find("target cosine"), std::string::npos) << r.status().to_string();
  }
  QuantizeOptions dynamic = int8_static_options(0.99);
  dynamic.calibration.clear();
  Model model = chain_model();
  auto r = quantize_model(model, dynamic);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("--target-cosine applies to int8 static"), std::string::npos);
}

}  // namespace
}  // namespace convert
}  // namespace xonnx
