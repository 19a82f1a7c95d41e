// inline_functions_pass: the local_functions fixture (nested functions with attributes) loaded
// without inlining runs the same after the pass, with no functions and no unused imports left.
#include <algorithm>

#include "converter/convert.h"
#include "runtime/onnx/functions.h"
#include "runtime/onnx/loader.h"
#include "runtime/passes/validate.h"
#include "tests/unit/fuse_test_util.h"

namespace xonnx {
namespace testing {
namespace {

TEST(PassInlineFunctions, LocalFunctionsFixture) {
  LoadOptions options;
  options.inline_functions = false;
  auto loaded = load_model(std::string(XONNX_TEST_MODELS_DIR) + "/local_functions/model.onnx", options);
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().to_string();
  const Model& m = loaded.value();
  ASSERT_FALSE(m.functions.empty());
  const size_t imports_before = m.opset_imports.size();
  std::vector<std::string> notes;
  bool changed = false;
  Model out = run_pass(m, convert::inline_functions_pass, &changed, &notes);
  EXPECT_TRUE(changed);
  EXPECT_TRUE(out.functions.empty());
  EXPECT_LT(out.opset_imports.size(), imports_before);  // the functions' domains are gone
  EXPECT_EQ(out.opset_imports.count(""), 1u);
  for (const Node& n : out.graph.nodes) EXPECT_TRUE(n.domain.empty()) << n.describe();
  // The runtime inlines `m` itself when given it with functions.
  Model reference = clone_model(m);
  ASSERT_TRUE(inline_functions(reference).is_ok());
  expect_close_outputs(reference, out, {random_value({2, 5, 32}, 1)}, 0);
  run_pass(out, convert::inline_functions_pass, &changed);
  EXPECT_FALSE(changed);
}

TEST(PassInlineFunctions, DropsUnusedImportsOnly) {
  Model m = make_model(17);
  m.opset_imports["ai.onnx.ml"] = 3;
  m.opset_imports["com.microsoft"] = 1;
  m.graph.inputs = {tensor_info("x", DataType::kFloat, {dim(2)})};
  m.graph.outputs = {untyped("y")};
  Node gelu = make_node("Gelu", {"x"}, {"y"});
  gelu.domain = "com.microsoft";
  m.graph.nodes.push_back(gelu);
  Model out = run_pass(m, convert::inline_functions_pass);
  EXPECT_EQ(out.opset_imports.size(), 2u);
  EXPECT_EQ(out.opset_imports.count("com.microsoft"), 1u);
  EXPECT_EQ(out.opset_imports.count("ai.onnx.ml"), 0u);
}

// y = local::f(x), f's body imported at `function_opset` and written out of order.
Model model_calling_a_function(int64_t model_opset, int64_t function_opset) {
  Model m = make_model(model_opset);
  m.opset_imports["local"] = 1;
  m.graph.inputs = {tensor_info("x", DataType::kFloat, {dim(2), dim(4)})};
  m.graph.outputs = {untyped("y")};
  Node call = make_node("f", {"x"}, {"y"});
  call.domain = "local";
  m.graph.nodes.push_back(call);
  FunctionDef f;
  f.name = "f";
  f.domain = "local";
  f.inputs = {"a"};
  f.outputs = {"b"};
  f.opset_imports[""] = function_opset;
  f.nodes = {make_node("Add", {"t", "a"}, {"b"}), make_node("Neg", {"a"}, {"t"})};
  m.functions.push_back(f);
  return m;
}

size_t index_of(const Graph& g, const std::string& op) {
  auto it = std::find_if(g.nodes.begin(), g.nodes.end(), [&](const Node& n) { return n.op_type == op; });
  return static_cast<size_t>(it - g.nodes.begin());
}

// ONNX allows any node order in a function body, as the loader does; the passes after inlining
// walk nodes in order, so the inlined graph must be sorted (a fuzzer found a dangling read).
TEST(PassInlineFunctions, SortsAnUnsortedFunctionBody) {
  const Model m = model_calling_a_function(17, 17);
  Model out = run_pass(m, convert::inline_functions_pass);
  ASSERT_TRUE(out.functions.empty());
  EXPECT_LT(index_of(out.graph, "Neg"), index_of(out.graph, "Add"));
  auto bytes = convert::convert_model_to_bytes(clone_model(m), {});
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  Model reference = clone_model(m);
  ASSERT_TRUE(inline_functions(reference).is_ok());
  auto back = load_model_from_memory(bytes->data(), bytes->size(), "");
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  expect_close_outputs(reference, back.value(), {random_value({2, 4}, 3)}, 0);
}

// A body at another opset than the model would need per-node opsets once inlined, which an
// ONNX file cannot express: the functions stay, and the converted file is valid.
TEST(PassInlineFunctions, KeepsFunctionsImportingAnotherOpset) {
  const Model m = model_calling_a_function(14, 17);
  std::vector<std::string> notes;
  Model out = run_pass(m, convert::inline_functions_pass, nullptr, &notes);
  EXPECT_EQ(out.functions.size(), 1u);
  EXPECT_EQ(out.opset_imports.count("local"), 1u);
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(notes[0].find("'local::f' imports domain '' at version 17"), std::string::npos) << notes[0];
  auto bytes = convert::convert_model_to_bytes(clone_model(m), {});
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  LoadOptions keep;
  keep.inline_functions = false;
  auto back = load_model_from_memory(bytes->data(), bytes->size(), "", keep);
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_TRUE(validate_model(back.value()).is_ok());
  EXPECT_EQ(back->functions.size(), 1u);
}

}  // namespace
}  // namespace testing
}  // namespace xonnx
