// converter/verify: element-wise differences land in torch's histogram bins, mismatching
// values are reported (not crashed on), and --verify-intermediates names the first node of
// the second model whose output diverges.
#include <gtest/gtest.h>

#include <cmath>

#include "converter/verify.h"
#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace {

using convert::compare_values;
using convert::VerifyOptions;

TEST(ConvertVerify, HistogramUsesTorchBins) {
  const Value a = testing::tv<float>({1, 1, 1, 1, 1, 1}, {6});
  const Value b = testing::tv<float>({1, 1 + 5e-7f, 1.003f, 1.5f, 30, 2e6}, {6});
  auto d = compare_values("y", a, b, VerifyOptions{});
  EXPECT_TRUE(d.error.empty());
  EXPECT_EQ(d.elements, 6);
  // Bins: [0,1e-6) [1e-6,1e-5) [1e-5,1e-4) [1e-4,1e-3) [1e-3,1e-2) [1e-2,0.1) [0.1,1) [1,10) [10,1e6)
  EXPECT_EQ(d.abs_hist.counts[0], 2);  // exact and float-rounded 5e-7
  EXPECT_EQ(d.abs_hist.counts[4], 1);  // 0.003
  EXPECT_EQ(d.abs_hist.counts[6], 1);  // 0.5
  EXPECT_EQ(d.abs_hist.counts[8], 1);  // 29
  EXPECT_EQ(d.abs_hist.beyond, 1);     // ~2e6
  EXPECT_NEAR(d.max_abs, 2e6 - 1, 1);
  EXPECT_NEAR(d.max_rel, 2e6 - 1, 1);
  EXPECT_FALSE(d.close);
}

TEST(ConvertVerify, EqualValuesAreClose) {
  const Value a = testing::tv<float>({0, -2, INFINITY, NAN}, {4});
  auto d = compare_values("y", a, a, VerifyOptions{});
  EXPECT_TRUE(d.close);
  EXPECT_EQ(d.max_abs, 0);
  EXPECT_EQ(d.max_rel, 0);
  EXPECT_EQ(d.abs_hist.counts[0], 4);
  const Value ints = testing::tv<int64_t>({3, 4}, {2});
  EXPECT_TRUE(compare_values("i", ints, ints, VerifyOptions{}).close);
}

TEST(ConvertVerify, NanOnOneSideIsNotClose) {
  auto d = compare_values("y", testing::tv<float>({1, 2}, {2}), testing::tv<float>({1, NAN}, {2}), VerifyOptions{});
  EXPECT_FALSE(d.close);
  EXPECT_TRUE(std::isnan(d.max_abs));
  EXPECT_EQ(d.abs_hist.beyond, 1);
}

TEST(ConvertVerify, MismatchedValuesAreErrorsNotCrashes) {
  auto d = compare_values("y", testing::tv<float>({1, 2}, {2}), testing::tv<float>({1, 2}, {1, 2}), VerifyOptions{});
  EXPECT_FALSE(d.close);
  EXPECT_NE(d.error.find("shape"), std::string::npos);
  d = compare_values("y", testing::tv<float>({1}, {1}), testing::tv<int32_t>({1}, {1}), VerifyOptions{});
  EXPECT_NE(d.error.find("dtype"), std::string::npos);
  d = compare_values("y", testing::tv<float>({1}, {1}), Value::none(), VerifyOptions{});
  EXPECT_FALSE(d.error.empty());
  auto s = compare_values("s", Value(Tensor::from_vector<std::string>({"a", "b"}, {2})),
                          Value(Tensor::from_vector<std::string>({"a", "c"}, {2})), VerifyOptions{});
  EXPECT_FALSE(s.close);
}

ValueInfo float_info(const std::string& name) {
  ValueInfo v;
  v.name = name;
  v.type.kind = TypeInfo::Kind::kTensor;
  v.type.elem_type = DataType::kFloat;
  v.type.has_shape = true;
  v.type.dims = {Dim{3, ""}};
  return v;
}

// x -> Add(c) -> t -> Relu -> u -> Neg -> y
Model add_relu_model(float c) {
  Model m;
  m.ir_version = 8;
  m.opset_imports[""] = 17;
  m.graph.inputs.push_back(float_info("x"));
  m.graph.outputs.push_back(float_info("y"));
  m.graph.initializers.push_back({"c", testing::tensor_of<float>({c, c, c}, {3})});
  Node add;
  add.name = "add";
  add.op_type = "Add";
  add.inputs = {"x", "c"};
  add.outputs = {"t"};
  Node relu;
  relu.name = "relu";
  relu.op_type = "Relu";
  relu.inputs = {"t"};
  relu.outputs = {"u"};
  Node neg;
  neg.name = "neg";
  neg.op_type = "Neg";
  neg.inputs = {"u"};
  neg.outputs = {"y"};
  m.graph.nodes = {add, relu, neg};
  return m;
}

TEST(ConvertVerify, SameModelMatches) {
  convert::NamedValues in = {{"x", testing::tv<float>({1, -2, 3}, {3})}};
  VerifyOptions o;
  o.intermediates = true;
  auto r = convert::verify_models(add_relu_model(1), add_relu_model(1), in, o);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_TRUE(r->ok());
  ASSERT_EQ(r->outputs.size(), 1u);
  EXPECT_EQ(r->outputs[0].max_abs, 0);
  EXPECT_EQ(r->intermediates.size(), 2u);  // t and u
  EXPECT_TRUE(r->first_divergent_node.empty());
}

TEST(ConvertVerify, IntermediatesNameTheFirstDivergentNode) {
  convert::NamedValues in = {{"x", testing::tv<float>({1, -2, 3}, {3})}};
  VerifyOptions o;
  o.intermediates = true;
  auto r = convert::verify_models(add_relu_model(1), add_relu_model(1.5f), in, o);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_FALSE(r->ok());
  EXPECT_NEAR(r->outputs[0].max_abs, 0.5, 1e-6);
  EXPECT_EQ(r->first_divergent_value, "t");
  EXPECT_NE(r->first_divergent_node.find("add"), std::string::npos) << r->first_divergent_node;
  const std::string md = convert::verify_markdown(*r, o);
  EXPECT_NE(md.find("First divergence"), std::string::npos);
  EXPECT_NE(md.find("`y`"), std::string::npos);
}

TEST(ConvertVerify, MissingOutputOrInputIsReported) {
  Model b = add_relu_model(1);
  b.graph.outputs[0].name = "u";
  convert::NamedValues in = {{"x", testing::tv<float>({1, -2, 3}, {3})}};
  auto r = convert::verify_models(add_relu_model(1), b, in, VerifyOptions{});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_FALSE(r->ok());
  EXPECT_NE(r->outputs[0].error.find("no output 'y'"), std::string::npos);
  auto r2 = convert::verify_models(add_relu_model(1), add_relu_model(1), {}, VerifyOptions{});
  ASSERT_FALSE(r2.is_ok());
  EXPECT_NE(r2.status().message().find("input 'x'"), std::string::npos);
}

}  // namespace
}  // namespace xonnx
