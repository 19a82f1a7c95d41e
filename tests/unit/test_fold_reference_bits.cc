// Constant folding evaluates with the reference kernels only (review M3): the folded constants
// of a MatMul / Erf / Softmax / LayerNormalization / Sigmoid / ReduceSum chain are bit for bit
// what a reference-only session computes, whatever fast kernels this host has. CTest runs this
// file again under each optimized ISA table (fold-bits-<isa>: XONNX_OPT_ISA=avx512 / avx2 /
// generic), so the folded bits are the same under every table.
#include <gtest/gtest.h>

#include <cstring>

#include "runtime/exec/session.h"
#include "runtime/passes/passes.h"
#include "tests/unit/fold_test_util.h"

namespace xonnx {
namespace testing {
namespace {

Tensor ramp(Shape shape, float scale, float offset) {
  Tensor t = Tensor::allocate(DataType::kFloat, shape).value();
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = scale * static_cast<float>((i * 37) % 101) + offset;
  return t;
}

// The constant chain ending in `folded`; with `as_output` it is the graph output (never
// folded: a session computes it), else Y = X + folded (the chain folds to one initializer).
Model chain_model(bool as_output) {
  Model m = make_model(17);
  Graph& g = m.graph;
  add_init(g, "A", ramp({33, 47}, 0.013f, -0.6f));
  add_init(g, "B", ramp({47, 29}, 0.021f, -1.0f));
  add_init(g, "scale", ramp({29}, 0.01f, 0.5f));
  add_init(g, "bias", ramp({29}, 0.003f, -0.1f));
  add_init(g, "axes", i64({1}));
  g.nodes.push_back(make_node("MatMul", {"A", "B"}, {"mm"}));
  g.nodes.push_back(make_node("Erf", {"mm"}, {"erf"}));
  g.nodes.push_back(make_node("Softmax", {"erf"}, {"sm"}, {attr_int("axis", -1)}));
  g.nodes.push_back(make_node("LayerNormalization", {"sm", "scale", "bias"}, {"ln"}, {attr_float("epsilon", 1e-5f)}));
  g.nodes.push_back(make_node("Sigmoid", {"ln"}, {"sig"}));
  g.nodes.push_back(make_node("ReduceSum", {"sig", "axes"}, {"rs"}, {attr_int("keepdims", 1)}));
  g.nodes.push_back(make_node("Mul", {"sig", "rs"}, {"folded"}));
  if (as_output) {
    g.outputs.push_back(untyped("folded"));
  } else {
    g.inputs.push_back(tensor_info("X", DataType::kFloat, {dim(33), dim(29)}));
    g.nodes.push_back(make_node("Add", {"X", "folded"}, {"Y"}));
    g.outputs.push_back(untyped("Y"));
  }
  return m;
}

TEST(FoldReferenceBits, FoldedChainEqualsReferenceSessionBitForBit) {
  Model folded = apply_pass(chain_model(false), passes::constant_folding);
  ASSERT_EQ(folded.graph.nodes.size(), 1u) << "only the Add on the graph input stays computed";
  const NamedTensor* c = folded.graph.find_initializer("folded");
  ASSERT_NE(c, nullptr);

  SessionOptions reference;  // the reference kernels, the graph as given
  reference.disable_xnnpack = true;
  reference.disable_optimized = true;
  reference.optimization = passes::OptLevel::kNone;
  auto session = Session::create_from_model(chain_model(true), reference);
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  auto out = (*session)->run({});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  const Tensor& want = (*out)[0].tensor();
  ASSERT_EQ(c->tensor.shape(), want.shape());
  ASSERT_EQ(c->tensor.dtype(), DataType::kFloat);
  EXPECT_EQ(std::memcmp(c->tensor.raw_data(), want.raw_data(), want.nbytes()), 0)
      << "folded constants differ from the reference kernels' bits";
}

// Session creation folds through the same evaluator: the session-time folded graph gives the
// reference bits too, with every fast kernel of this host switched on.
TEST(FoldReferenceBits, SessionTimeFoldingUsesReferenceBits) {
  const Tensor x = Tensor::allocate(DataType::kFloat, {33, 29}).value();  // zeros: Y == folded
  SessionOptions fast;                                                    // defaults: optimization all, fast kernels on
  auto optimized = Session::create_from_model(chain_model(false), fast);
  ASSERT_TRUE(optimized.is_ok()) << optimized.status().to_string();
  EXPECT_EQ((*optimized)->model().graph.nodes.size(), 1u);
  auto got = (*optimized)->run({Value(x)});
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();

  SessionOptions reference;
  reference.disable_xnnpack = true;
  reference.disable_optimized = true;
  reference.optimization = passes::OptLevel::kNone;
  auto session = Session::create_from_model(chain_model(true), reference);
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  auto want = (*session)->run({});
  ASSERT_TRUE(want.is_ok());
  const Tensor& y = (*got)[0].tensor();
  const Tensor& w = (*want)[0].tensor();
  ASSERT_EQ(y.shape(), w.shape());
  // x + 0.0f is exact, so the Add keeps the folded bits.
  EXPECT_EQ(std::memcmp(y.raw_data(), w.raw_data(), w.nbytes()), 0);
}

}  // namespace
}  // namespace testing
}  // namespace xonnx
