// inline_functions_pass: the local_functions fixture (nested functions with attributes) loaded
// without inlining runs the same after the pass, with no functions and no unused imports left.
#include "runtime/onnx/functions.h"
#include "runtime/onnx/loader.h"
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

}  // namespace
}  // namespace testing
}  // namespace xonnx
