// Kernels of one session that pack the same initializer the same way share one packing
// (KernelInit::shared_packing): ALBERT's layer applied six times packed its weights six times.
// A different layout of the same weights (a Gemm's B^T, another FusedMatMul alpha) packs its own.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/exec/session.h"
#include "tests/unit/backend_test_util.h"
#include "tests/unit/graph_builder.h"

namespace xonnx {
namespace {

using backendtest::rand_tensor;
using testing::attr_float;
using testing::attr_int;

// x [M, 64] -> MatMul(B) -> MatMul(B) -> MatMul(B) -> FusedMatMul(B, alpha 0.5) -> Gemm(B, transB) -> y.
Model shared_weight_chain() {
  testing::GraphBuilder b(17);
  b.model.opset_imports["com.microsoft"] = 1;
  b.input("x", 2);
  const std::string w = b.constant(rand_tensor({64, 64}, 5, -0.2f, 0.2f), "w");
  std::string v = "x";
  for (int i = 0; i < 3; ++i) v = b.node("MatMul", {v, w});
  Node& last = b.model.graph.nodes.emplace_back();
  last.op_type = "FusedMatMul";
  last.domain = "com.microsoft";
  last.name = "scaled";
  last.inputs = {v, w};
  last.outputs = {"scaled"};
  last.attributes = {attr_float("alpha", 0.5f)};
  b.node("Gemm", {"scaled", w}, {attr_int("transB", 1)}, "y");
  b.output("y");
  return b.model;
}

int64_t reused_packings(const Session& s) {
  for (const passes::PassStats& p : s.optimization_report().passes) {
    if (p.name != "shared-packing") continue;
    const std::string& note = p.notes.at(0);
    return std::stoll(note.substr(note.rfind(' ') + 1));
  }
  return 0;
}

TEST(SharedPacking, RepeatedWeightsArePackedOnceAndComputeTheSame) {
  SessionOptions own, reference;
  own.disable_xnnpack = true;  // the own MatMul on every ISA (XNNPACK packs its own copies)
  reference.disable_xnnpack = true;
  reference.disable_optimized = true;
  for (int threads : {1, 2}) {
    own.num_threads = reference.num_threads = threads;
    auto fast = Session::create_from_model(shared_weight_chain(), own);
    auto ref = Session::create_from_model(shared_weight_chain(), reference);
    ASSERT_TRUE(fast.is_ok()) << fast.status().to_string();
    ASSERT_TRUE(ref.is_ok()) << ref.status().to_string();
    EXPECT_EQ(reused_packings(**fast), 2) << "the second and third MatMul read the first one's panels";
    EXPECT_EQ(reused_packings(**ref), 0);
    for (int64_t m : {1, 5, 40}) {
      const Tensor x = rand_tensor({m, 64}, static_cast<uint32_t>(m));
      auto got = (*fast)->run({Value(x)});
      auto want = (*ref)->run({Value(x)});
      ASSERT_TRUE(got.is_ok() && want.is_ok());
      backendtest::expect_close((*got)[0].tensor(), (*want)[0].tensor(), {1e-4, 1e-5}, "M " + std::to_string(m));
    }
  }
}

}  // namespace
}  // namespace xonnx
