// fuse_pad: a zero Pad on the spatial axes folds into the pads of the Conv or AveragePool that
// alone reads it (pads as attributes at opset 10, as inputs at 13), with the same outputs; a
// non-zero value, another mode, channel padding, ceil_mode, SAME padding or a second reader
// leave it alone.
#include "runtime/passes/pass_util.h"
#include "tests/unit/fuse_test_util.h"

namespace xonnx {
namespace testing {
namespace {

struct PadCase {
  int64_t opset = 13;
  std::vector<int64_t> pads = {0, 0, 1, 2, 0, 0, 2, 1};  // [N, C, H, W] begins, then ends
  float value = 0.0f;
  std::string mode = "constant";
  std::string consumer = "Conv";
  std::vector<Attribute> consumer_attrs;
  bool second_reader = false;
};

// x [1, 2, 5, 6] -> Pad -> Conv (3x3, 3 filters) or AveragePool (3x3) -> y.
Model pad_model(const PadCase& c) {
  Model m = make_model(c.opset);
  m.graph.inputs = {tensor_info("x", DataType::kFloat, {dim(1), dim(2), dim(5), dim(6)})};
  m.graph.outputs = {untyped("y")};
  if (c.second_reader) m.graph.outputs.push_back(untyped("p"));
  std::vector<Attribute> pad_attrs = {string_attribute("mode", c.mode)};
  if (c.opset < 11) {
    pad_attrs.push_back(ints_attribute("pads", c.pads));
    pad_attrs.push_back(float_attribute("value", c.value));
    m.graph.nodes.push_back(make_node("Pad", {"x"}, {"p"}, pad_attrs));
  } else {
    add_init(m.graph, "pads", i64(c.pads));
    add_init(m.graph, "value", f32({c.value}, {}));
    m.graph.nodes.push_back(make_node("Pad", {"x", "pads", "value"}, {"p"}, pad_attrs));
  }
  std::vector<Attribute> attrs = c.consumer_attrs;
  if (c.consumer == "Conv") {
    add_init(m.graph, "w", f32(noise(3 * 2 * 3 * 3, 7), {3, 2, 3, 3}));
    m.graph.nodes.push_back(make_node("Conv", {"p", "w"}, {"y"}, attrs));
  } else {
    attrs.push_back(ints_attribute("kernel_shape", {3, 3}));
    m.graph.nodes.push_back(make_node("AveragePool", {"p"}, {"y"}, attrs));
  }
  return m;
}

Value padded_input() { return Value(f32(noise(60, 3, -2.0f, 2.0f), {1, 2, 5, 6})); }

const Attribute* find(const Node& n, const char* name) { return n.find_attr(name); }

TEST(PassFusePad, ZeroPadJoinsConvAndAveragePool) {
  for (int64_t opset : {10, 13}) {
    for (const char* consumer : {"Conv", "AveragePool"}) {
      SCOPED_TRACE(std::string(consumer) + ", opset " + std::to_string(opset));
      PadCase c;
      c.opset = opset;
      c.consumer = consumer;
      c.consumer_attrs = {ints_attribute("pads", {1, 0, 0, 1})};
      if (c.consumer == "AveragePool") c.consumer_attrs.push_back(int_attribute("count_include_pad", 1));
      const Model m = pad_model(c);
      bool changed = false;
      const Model out = run_pass(m, passes::fuse_pad, &changed);
      EXPECT_TRUE(changed);
      ASSERT_EQ(op_list(out.graph), std::vector<std::string>{consumer});
      const Node& n = out.graph.nodes[0];
      EXPECT_EQ(n.inputs[0], "x");
      ASSERT_TRUE(find(n, "pads"));
      EXPECT_EQ(find(n, "pads")->ints, (std::vector<int64_t>{2, 2, 2, 2}));
      expect_close_outputs(m, out, {padded_input()}, 1e-6);
    }
  }
}

// count_include_pad 0 with no pads of its own: the Pad's zeros were counted, so the fused pool
// counts its padding.
TEST(PassFusePad, AveragePoolCountsThePaddingItTookOver) {
  PadCase c;
  c.consumer = "AveragePool";
  const Model m = pad_model(c);
  bool changed = false;
  const Model out = run_pass(m, passes::fuse_pad, &changed);
  ASSERT_TRUE(changed);
  ASSERT_TRUE(find(out.graph.nodes[0], "count_include_pad"));
  EXPECT_EQ(find(out.graph.nodes[0], "count_include_pad")->i, 1);
  expect_close_outputs(m, out, {padded_input()}, 1e-6);
}

TEST(PassFusePad, PadsThatChangeTheValueStay) {
  std::vector<PadCase> cases(6);
  cases[0].value = 1.0f;
  cases[1].mode = "reflect";
  cases[2].pads = {0, 1, 1, 1, 0, 0, 1, 1};  // pads a channel
  cases[3].consumer = "AveragePool";
  cases[3].consumer_attrs = {int_attribute("ceil_mode", 1)};
  cases[4].consumer_attrs = {string_attribute("auto_pad", "SAME_UPPER")};
  cases[5].second_reader = true;
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    bool changed = true;
    const Model out = run_pass(pad_model(cases[i]), passes::fuse_pad, &changed);
    EXPECT_FALSE(changed);
    EXPECT_EQ(count_op(out.graph, "Pad"), 1);
  }
}

}  // namespace
}  // namespace testing
}  // namespace xonnx
