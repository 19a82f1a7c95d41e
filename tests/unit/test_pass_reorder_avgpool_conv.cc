// reorder_avgpool_conv: a 1x1 Conv followed by a strided AveragePool without padding runs after
// the pool (DenseNet's transitions), and an AveragePool of stride 1 that keeps the map's size
// followed by a 1x1 Conv to fewer channels runs after the Conv, the Conv's bias added after the
// pool (Inception's pool branches); the outputs stay the same up to rounding. Other pools and
// Convs, and values read twice, stay where they are.
#include "runtime/passes/pass_util.h"
#include "tests/unit/fuse_test_util.h"

namespace xonnx {
namespace testing {
namespace {

struct PairCase {
  int64_t channels = 8, outputs = 4, group = 1, size = 6;
  bool bias = true;
  std::vector<int64_t> conv_kernel = {1, 1};
  std::vector<Attribute> conv_attrs;
  std::vector<Attribute> pool_attrs = {ints_attribute("kernel_shape", {2, 2}), ints_attribute("strides", {2, 2})};
  bool pool_first = false;     // AveragePool -> Conv (else Conv -> AveragePool)
  bool second_reader = false;  // the value between the two is also a graph output
};

// x [1, channels, size, size] -> Conv -> AveragePool -> y, or AveragePool -> Conv -> y.
Model pair_model(const PairCase& c) {
  Model m = make_model(13);
  m.graph.inputs = {tensor_info("x", DataType::kFloat, {dim(1), dim(c.channels), dim(c.size), dim(c.size)})};
  m.graph.outputs = {untyped("y")};
  if (c.second_reader) m.graph.outputs.push_back(untyped("mid"));
  const int64_t taps = c.conv_kernel[0] * c.conv_kernel[1], in_per_group = c.channels / c.group;
  add_init(m.graph, "w",
           f32(noise(static_cast<size_t>(c.outputs * in_per_group * taps), 5),
               {c.outputs, in_per_group, c.conv_kernel[0], c.conv_kernel[1]}));
  std::vector<std::string> conv_inputs = {c.pool_first ? "mid" : "x", "w"};
  if (c.bias) {
    add_init(m.graph, "b", f32(noise(static_cast<size_t>(c.outputs), 9), {c.outputs}));
    conv_inputs.push_back("b");
  }
  std::vector<Attribute> conv_attrs = c.conv_attrs;
  conv_attrs.push_back(int_attribute("group", c.group));
  Node conv = make_node("Conv", conv_inputs, {c.pool_first ? "y" : "mid"}, conv_attrs);
  Node pool = make_node("AveragePool", {c.pool_first ? "x" : "mid"}, {c.pool_first ? "mid" : "y"}, c.pool_attrs);
  if (c.pool_first) {
    m.graph.nodes = {pool, conv};
  } else {
    m.graph.nodes = {conv, pool};
  }
  return m;
}

Value input(const PairCase& c) { return random_value({1, c.channels, c.size, c.size}, 3); }

// Inception's pool branch: 3x3, stride 1, padding 1 on every side.
std::vector<Attribute> same_size_pool(int64_t count_include_pad) {
  return {ints_attribute("kernel_shape", {3, 3}), ints_attribute("pads", {1, 1, 1, 1}),
          int_attribute("count_include_pad", count_include_pad)};
}

TEST(PassReorderAvgPoolConv, StridedPoolMovesBeforeTheConv) {
  for (bool bias : {true, false}) {
    for (int64_t group : {1, 2}) {
      SCOPED_TRACE(std::string(bias ? "bias" : "no bias") + ", group " + std::to_string(group));
      PairCase c;
      c.bias = bias;
      c.group = group;
      const Model m = pair_model(c);
      bool changed = false;
      const Model out = run_pass(m, passes::reorder_avgpool_conv, &changed);
      EXPECT_TRUE(changed);
      ASSERT_EQ(op_list(out.graph), (std::vector<std::string>{"AveragePool", "Conv"}));
      EXPECT_EQ(out.graph.nodes[0].inputs[0], "x");
      EXPECT_EQ(out.graph.nodes[1].inputs[0], out.graph.nodes[0].outputs[0]);
      EXPECT_EQ(out.graph.nodes[1].outputs[0], "y");
      expect_close_outputs(m, out, {input(c)}, 1e-5);
    }
  }
}

TEST(PassReorderAvgPoolConv, ConvToFewerChannelsMovesBeforeTheSameSizePool) {
  for (bool bias : {true, false}) {
    for (int64_t count_include_pad : {0, 1}) {
      SCOPED_TRACE(std::string(bias ? "bias" : "no bias") + ", count_include_pad " + std::to_string(count_include_pad));
      PairCase c;
      c.pool_first = true;
      c.bias = bias;
      c.size = 5;
      c.pool_attrs = same_size_pool(count_include_pad);
      const Model m = pair_model(c);
      bool changed = false;
      const Model out = run_pass(m, passes::reorder_avgpool_conv, &changed);
      EXPECT_TRUE(changed);
      const std::vector<std::string> expected = bias ? std::vector<std::string>{"Conv", "AveragePool", "Add"}
                                                     : std::vector<std::string>{"Conv", "AveragePool"};
      ASSERT_EQ(op_list(out.graph), expected);
      EXPECT_EQ(out.graph.nodes[0].inputs[0], "x");
      EXPECT_EQ(out.graph.nodes[0].inputs.size(), 2u);  // the bias comes after the pool
      EXPECT_EQ(out.graph.nodes.back().outputs[0], "y");
      // The border pixels' windows count padding: a bias inside the Conv would be averaged there.
      expect_close_outputs(m, out, {input(c)}, 1e-5);
    }
  }
}

TEST(PassReorderAvgPoolConv, PairsThatWouldNotGainOrNotCommuteStay) {
  std::vector<PairCase> cases(9);
  cases[0].pool_attrs.push_back(ints_attribute("pads", {1, 1, 1, 1}));  // padding after a biased Conv
  cases[1].pool_attrs = {ints_attribute("kernel_shape", {3, 3})};       // stride 1 after the Conv: no fewer pixels
  cases[2].conv_kernel = {3, 3};                                        // not a per-pixel map
  cases[3].conv_attrs = {ints_attribute("strides", {2, 2})};
  cases[4].second_reader = true;
  cases[5].pool_attrs.push_back(int_attribute("ceil_mode", 1));
  cases[6].pool_first = true;  // the Conv widens: the pool would get more channels
  cases[6].outputs = 16;
  cases[6].pool_attrs = same_size_pool(1);
  cases[7].pool_first = true;  // the pool shrinks the map: the Conv would see more pixels
  cases[7].pool_attrs = {ints_attribute("kernel_shape", {3, 3})};
  cases[8].pool_first = true;
  cases[8].pool_attrs = same_size_pool(1);
  cases[8].second_reader = true;
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    const Model m = pair_model(cases[i]);
    bool changed = true;
    const Model out = run_pass(m, passes::reorder_avgpool_conv, &changed);
    EXPECT_FALSE(changed);
    EXPECT_EQ(op_list(out.graph), op_list(m.graph));
  }
}

}  // namespace
}  // namespace testing
}  // namespace xonnx
