// The optimized Add / Sub / Mul / Div and maps (Gelu, Erf, Swish) write their output over the
// full-size operand when nothing reads it after the node (KernelContext::allocate_output_over_input).
// Every other use of that operand must keep its values: a graph output, a later reader, the
// caller's input, the node's other operand.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/exec/session.h"
#include "tests/unit/backend_test_util.h"
#include "tests/unit/graph_builder.h"
#include "tests/unit/test_optimized_common.h"

namespace xonnx {
namespace {

using backendtest::rand_tensor;

// How "a", the full-size operand of the gate Mul, is used besides it.
enum class Use { kDead, kGraphOutput, kReadAfter, kGraphInput, kBothOperands, kSwapped };

// x [N, C, H, W], g [N, C, 1, 1]: a = x + 0.5, m = a * g (or g * a), y = Gelu(m) + x. With kDead,
// a is written over by the Mul and m by the Gelu.
Model gate_graph(Use use) {
  testing::GraphBuilder b(20);
  b.input("x", 4);
  b.input("g", 4);
  std::string a = "a";
  if (use == Use::kGraphInput) {
    b.input("a", 4);
  } else {
    b.node("Add", {"x", b.constant(Tensor::scalar(0.5f))}, {}, "a");
  }
  const std::string m = b.node("Mul", use == Use::kSwapped        ? std::vector<std::string>{"g", a}
                                      : use == Use::kBothOperands ? std::vector<std::string>{a, a}
                                                                  : std::vector<std::string>{a, "g"});
  b.node("Add", {b.node("Gelu", {m}), "x"}, {}, "y");
  b.output("y");
  if (use == Use::kGraphOutput) b.output(a);
  if (use == Use::kReadAfter) {
    b.node("Sub", {"y", a}, {}, "ya");
    b.output("ya");
  }
  return b.model;
}

Result<std::unique_ptr<Session>> session(const Model& m, int threads, bool reference) {
  SessionOptions o;
  o.num_threads = threads;
  o.disable_optimized = reference;  // the ONNX reference kernels only
  o.disable_xnnpack = reference;
  return Session::create_from_model(Model(m), o);
}

TEST(InPlaceElementwise, WritesOverADeadOperandOnlyAndKeepsEveryOtherValue) {
  const struct {
    Use use;
    const char* what;
  } cases[] = {{Use::kDead, "a dead after the Mul"},      {Use::kGraphOutput, "a a graph output"},
               {Use::kReadAfter, "a read after the Mul"}, {Use::kGraphInput, "a the caller's input"},
               {Use::kBothOperands, "a both operands"},   {Use::kSwapped, "the gate first"}};
  const backendtest::Tolerance tol{1e-5, 1e-6};
  for (const auto& k : cases) {
    for (int threads : {1, 2}) {
      SCOPED_TRACE(std::string(k.what) + ", threads " + std::to_string(threads));
      auto ref = session(gate_graph(k.use), threads, true);
      auto fast = session(gate_graph(k.use), threads, false);
      ASSERT_TRUE(ref.is_ok() && fast.is_ok());
      uint32_t seed = 30;
      // 40 x 24 x 24 floats: several of the binary kernel's 8192-element work items, so two
      // threads share the node; 7 x 5 is a tail inside one vector.
      for (Shape shape : {Shape{1, 40, 24, 24}, Shape{2, 3, 7, 5}}) {
        const Shape gate = {shape[0], shape[1], 1, 1};
        std::vector<Value> inputs = {Value(rand_tensor(shape, seed)), Value(rand_tensor(gate, seed + 1))};
        if (k.use == Use::kGraphInput) inputs.push_back(Value(rand_tensor(shape, seed + 2)));
        seed += 3;
        opttest::expect_runs_agree_and_keep_inputs(**ref, **fast, inputs, tol);
      }
    }
  }
}

}  // namespace
}  // namespace xonnx
