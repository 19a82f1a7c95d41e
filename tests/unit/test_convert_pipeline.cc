// runtime/passes/pipeline (through the converter): a toy pass table runs to a fixed point, levels filter passes, the round
// cap stops a pass that always reports a change, and per-pass statistics add up; convert_file
// refuses bad requests without writing anything; the report has every section.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "converter/convert.h"
#include "runtime/onnx/loader.h"
#include "runtime/passes/pipeline.h"
#include "runtime/passes/session_passes.h"
#include "runtime/passes/shape_inference.h"
#include "converter/report.h"
#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace {

using namespace convert;  // NOLINT

Node make_node(const std::string& op, const std::string& in, const std::string& out) {
  Node n;
  n.name = out;
  n.op_type = op;
  n.inputs = {in};
  n.outputs = {out};
  return n;
}

// x -> Identity -> Identity -> Identity -> Relu -> y, and a 16-byte initializer.
Model chain_model() {
  Model m;
  m.ir_version = 8;
  m.opset_imports[""] = 17;
  ValueInfo x;
  x.name = "x";
  x.type.kind = TypeInfo::Kind::kTensor;
  x.type.elem_type = DataType::kFloat;
  x.type.has_shape = true;
  x.type.dims = {Dim{4, ""}};
  m.graph.inputs.push_back(x);
  ValueInfo y = x;
  y.name = "y";
  m.graph.outputs.push_back(y);
  m.graph.nodes.push_back(make_node("Identity", "x", "a"));
  m.graph.nodes.push_back(make_node("Identity", "a", "b"));
  m.graph.nodes.push_back(make_node("Identity", "b", "c"));
  m.graph.nodes.push_back(make_node("Relu", "c", "y"));
  m.graph.initializers.push_back({"w", testing::tensor_of<float>({1, 2, 3, 4}, {4})});
  return m;
}

// Removes one Identity per run (so it needs several rounds), rewiring its consumer.
Result<bool> remove_one_identity(Model& m, PassContext& ctx) {
  auto& nodes = m.graph.nodes;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].op_type != "Identity") continue;
    const std::string from = nodes[i].outputs[0], to = nodes[i].inputs[0];
    for (Node& n : nodes) {
      for (std::string& in : n.inputs) {
        if (in == from) in = to;
      }
    }
    nodes.erase(nodes.begin() + static_cast<long>(i));
    ctx.note("removed '" + from + "'");
    return true;
  }
  return false;
}

Result<bool> drop_initializers(Model& m, PassContext& ctx) {
  if (m.graph.initializers.empty()) return false;
  ctx.bytes_saved += 16;
  ctx.warn("dropped w");
  m.graph.initializers.clear();
  return true;
}

Result<bool> never_changes(Model&, PassContext&) { return false; }
Result<bool> always_changes(Model&, PassContext&) { return true; }
Result<bool> fails(Model&, PassContext&) { return invalid_model("node 'q' (Foo): broken"); }

TEST(ConvertPipeline, RunsToAFixedPoint) {
  const std::vector<PassDef> table = {
      {"remove-identity", 1, remove_one_identity}, {"drop-init", 2, drop_initializers}, {"noop", 1, never_changes}};
  Model m = chain_model();
  ConvertOptions o;
  o.level = 2;
  std::vector<std::string> seen;
  auto r = run_pipeline(m, table, o, [&](int round, size_t i, size_t n, const char* name) {
    EXPECT_EQ(n, 3u);
    seen.push_back(std::to_string(round) + ":" + name);
  });
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  // Rounds 1-3 each remove one Identity; round 4 changes nothing.
  EXPECT_EQ(r->rounds, 4);
  EXPECT_TRUE(r->reached_fixed_point);
  EXPECT_EQ(seen.size(), 12u);
  EXPECT_EQ(seen.front(), "1:remove-identity");
  EXPECT_EQ(m.graph.nodes.size(), 1u);
  EXPECT_EQ(m.graph.nodes[0].inputs[0], "x");
  ASSERT_EQ(r->passes.size(), 3u);
  const PassStats& rm = r->passes[0];
  EXPECT_EQ(rm.runs, 4);
  EXPECT_EQ(rm.changed_runs, 3);
  EXPECT_EQ(rm.before.nodes, 4);
  EXPECT_EQ(rm.after.nodes, 1);
  EXPECT_EQ(rm.notes.size(), 3u);
  const PassStats& drop = r->passes[1];
  EXPECT_EQ(drop.changed_runs, 1);
  EXPECT_EQ(drop.before.initializers, 1);
  EXPECT_EQ(drop.after.initializers, 0);
  EXPECT_EQ(drop.before.initializer_bytes, 16);
  EXPECT_EQ(drop.after.initializer_bytes, 0);
  EXPECT_EQ(drop.bytes_saved, 16);
  EXPECT_EQ(drop.warnings, std::vector<std::string>{"dropped w"});
  EXPECT_EQ(r->before.nodes, 4);
  EXPECT_EQ(r->after.nodes, 1);
  EXPECT_EQ(r->ops_before.at("Identity"), 3);
  EXPECT_EQ(r->ops_after.count("Identity"), 0u);
  EXPECT_EQ(r->ops_after.at("Relu"), 1);
}

TEST(ConvertPipeline, LevelFiltersPasses) {
  const std::vector<PassDef> table = {{"remove-identity", 1, remove_one_identity}, {"drop-init", 2, drop_initializers}};
  Model m = chain_model();
  ConvertOptions o;
  o.level = 1;
  auto r = run_pipeline(m, table, o);
  ASSERT_TRUE(r.is_ok());
  ASSERT_EQ(r->passes.size(), 1u);
  EXPECT_EQ(m.graph.initializers.size(), 1u);
  o.level = 0;
  Model m0 = chain_model();
  auto r0 = run_pipeline(m0, table, o);
  ASSERT_TRUE(r0.is_ok());
  EXPECT_TRUE(r0->passes.empty());
  EXPECT_EQ(r0->rounds, 0);
  EXPECT_EQ(m0.graph.nodes.size(), 4u);
}

TEST(ConvertPipeline, RoundCapStopsAndWarns) {
  const std::vector<PassDef> table = {{"restless", 1, always_changes}};
  Model m = chain_model();
  auto r = run_pipeline(m, table, ConvertOptions{}, nullptr, 3);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(r->rounds, 3);
  EXPECT_FALSE(r->reached_fixed_point);
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_NE(r->warnings[0].find("fixed point"), std::string::npos);
}

TEST(ConvertPipeline, PassErrorNamesThePass) {
  const std::vector<PassDef> table = {{"noop", 1, never_changes}, {"broken-pass", 1, fails}};
  Model m = chain_model();
  auto r = run_pipeline(m, table, ConvertOptions{});
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("pass 'broken-pass'"), std::string::npos);
  EXPECT_NE(r.status().message().find("node 'q'"), std::string::npos);
}

// What each run of read_shapes saw: whether the facts came from an earlier pass, and whether
// they know the values 'a' and 'b'.
struct FactsSeen {
  bool handed_on, knows_a, knows_b;
};
std::vector<FactsSeen> facts_seen;
Result<bool> read_shapes(Model& m, PassContext& ctx) {
  const bool handed_on = ctx.shapes != nullptr;
  const ShapeFacts& facts = ctx.shape_facts(m);
  facts_seen.push_back({handed_on, facts.type("a") != nullptr, facts.type("b") != nullptr});
  return false;
}

// The pipeline hands the facts on while no pass changes the model; a change drops them, so the
// next reader infers the changed graph.
TEST(ConvertPipeline, ShapeFactsCarryOverUntilAChange) {
  const std::vector<PassDef> table = {{"read-a", 1, read_shapes},
                                      {"read-b", 1, read_shapes},
                                      {"remove-identity", 1, remove_one_identity},
                                      {"read-c", 1, read_shapes}};
  Model m = chain_model();
  facts_seen.clear();
  auto r = run_pipeline(m, table, ConvertOptions{}, nullptr, 1);
  ASSERT_TRUE(r.is_ok());
  ASSERT_EQ(facts_seen.size(), 3u);
  EXPECT_FALSE(facts_seen[0].handed_on);
  EXPECT_TRUE(facts_seen[0].knows_a);
  EXPECT_TRUE(facts_seen[1].handed_on);
  EXPECT_FALSE(facts_seen[2].handed_on);
  EXPECT_FALSE(facts_seen[2].knows_a);  // remove-identity took 'a' out
  EXPECT_TRUE(facts_seen[2].knows_b);
}

TEST(ConvertPipeline, CountsSubgraphNodes) {
  Model m = chain_model();
  auto body = std::make_shared<Graph>();
  body->nodes.push_back(make_node("Neg", "x", "z"));
  body->initializers.push_back({"k", testing::tensor_of<int64_t>({1}, {1})});
  Attribute g;
  g.name = "then_branch";
  g.type = AttrType::kGraph;
  g.g = body;
  m.graph.nodes[3].attributes.push_back(g);
  const ModelCounts c = count_model(m);
  EXPECT_EQ(c.nodes, 5);
  EXPECT_EQ(c.initializers, 2);
  EXPECT_EQ(c.initializer_bytes, 24);
  EXPECT_EQ(op_histogram(m).at("Neg"), 1);
}

class ConvertFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/xonnx_convert_XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(ConvertFileTest, ConvertsAndReports) {
  const std::string in = std::string(XONNX_TEST_MODELS_DIR) + "/mlp/model.onnx";
  const std::string out = dir_ + "/out.onnx";
  const std::vector<PassDef> table = {{"noop", 1, never_changes}};
  ConvertRequest req;
  req.input_path = in;
  req.output_path = out;
  req.passes = &table;
  auto r = convert_file(req);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_TRUE(std::filesystem::exists(out));
  EXPECT_EQ(r->pipeline.before.nodes, r->pipeline.after.nodes);
  const std::string md = make_report(*r);
  for (const char* section :
       {"# Conversion report", "## Passes", "| noop |", "## Operators", "| Gemm |", "## Warnings and limits"}) {
    EXPECT_NE(md.find(section), std::string::npos) << section << "\n" << md;
  }
}

// The converter marks what it optimized, so that a device build without the graph-pass library
// (XONNX_WITH_PASSES=OFF, runtime/passes/no_graph_passes.cc) does not warn about its files.
TEST_F(ConvertFileTest, StampsTheOptimizationLevel) {
  const std::string in = std::string(XONNX_TEST_MODELS_DIR) + "/mlp/model.onnx";
  for (int level : {0, 1, 2}) {
    SCOPED_TRACE(level);
    const std::string out = dir_ + "/out" + std::to_string(level) + ".onnx";
    ConvertRequest req;
    req.input_path = in;
    req.output_path = out;
    req.options.level = level;
    auto r = convert_file(req);
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    auto converted = load_model(out);
    ASSERT_TRUE(converted.is_ok()) << converted.status().to_string();
    EXPECT_EQ(passes::converted_level(*converted), level == 0 ? "" : level == 1 ? "basic" : "all");
  }
  auto original = load_model(in);
  ASSERT_TRUE(original.is_ok());
  EXPECT_EQ(passes::converted_level(*original), "");
  EXPECT_TRUE(passes::graph_passes_built());
}

TEST_F(ConvertFileTest, BadRequestsWriteNothing) {
  const std::string out = dir_ + "/out.onnx";
  const std::string in = dir_ + "/in.onnx";
  std::filesystem::copy_file(std::string(XONNX_TEST_MODELS_DIR) + "/mlp/model.onnx", in);
  const auto in_size = std::filesystem::file_size(in);
  ConvertRequest req;
  req.input_path = in;
  req.output_path = out;
  req.options.level = 3;
  auto r = convert_file(req);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("level 3"), std::string::npos);
  req.options.level = 0;
  req.output_path = in;
  r = convert_file(req);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("refusing to overwrite"), std::string::npos);
  EXPECT_EQ(std::filesystem::file_size(in), in_size);
  req.input_path = dir_ + "/missing.onnx";
  req.output_path = out;
  r = convert_file(req);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("missing.onnx"), std::string::npos);
  // A pass failing: nothing written.
  const std::vector<PassDef> table = {{"broken-pass", 0, fails}};
  req.input_path = in;
  req.passes = &table;
  r = convert_file(req);
  ASSERT_FALSE(r.is_ok());
  EXPECT_FALSE(std::filesystem::exists(out));
  // Not a model: nothing written.
  std::ofstream(dir_ + "/junk.onnx") << "not a protobuf at all";
  req.input_path = dir_ + "/junk.onnx";
  req.passes = nullptr;
  r = convert_file(req);
  ASSERT_FALSE(r.is_ok());
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(ConvertReport, HumanBytes) {
  EXPECT_EQ(human_bytes(512), "512 B");
  EXPECT_EQ(human_bytes(1536), "1.5 KB");
  EXPECT_EQ(human_bytes(int64_t{57} << 20), "57.0 MB");
  EXPECT_EQ(human_bytes(-2048), "-2.0 KB");
}

}  // namespace
}  // namespace xonnx
