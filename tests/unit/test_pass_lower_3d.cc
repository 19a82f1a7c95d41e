// lower_3d: a 3-D Conv becomes a 2-D Conv over frames (temporal taps as input channels) and a
// 3-D MaxPool a 2-D MaxPool over pixels then one over frames, with the same outputs: pads,
// strides, dilations, a temporal kernel of 1, a bias, groups (depthwise too), ceil_mode and a
// symbolic batch; unknown dims, auto_pad SAME, storage_order 1 and opset 10 stay.
#include "runtime/passes/pass_util.h"
#include "tests/unit/fuse_test_util.h"

namespace xonnx {
namespace testing {
namespace {

struct Case3d {
  std::string op = "Conv";
  Shape x = {2, 3, 7, 9, 8};
  Shape w = {4, 3, 3, 3, 2};  // Conv only
  std::vector<Attribute> attrs;
  bool bias = false;
  bool symbolic_batch = false;
  bool known_dims = true;
  int64_t opset = 13;
};

Model model_3d(const Case3d& c) {
  Model m = make_model(c.opset);
  std::vector<Dim> dims;
  for (size_t a = 0; a < c.x.size(); ++a) dims.push_back(a == 0 && c.symbolic_batch ? Dim{-1, "N"} : dim(c.x[a]));
  m.graph.inputs = {c.known_dims ? tensor_info("x", DataType::kFloat, dims) : untyped("x")};
  m.graph.outputs = {untyped("y")};
  std::vector<std::string> inputs = {"x"};
  if (c.op == "Conv") {
    add_init(m.graph, "w", f32(noise(static_cast<size_t>(shape_numel(c.w)), 5), c.w));
    inputs.push_back("w");
    if (c.bias) {
      add_init(m.graph, "b", f32(noise(static_cast<size_t>(c.w[0]), 6), {c.w[0]}));
      inputs.push_back("b");
    }
  }
  m.graph.nodes.push_back(make_node(c.op, inputs, {"y"}, c.attrs));
  return m;
}

void expect_lowered(const Case3d& c, const std::string& op2d) {
  const Model m = model_3d(c);
  bool changed = false;
  const Model out = run_pass(m, passes::lower_3d, &changed);
  ASSERT_TRUE(changed);
  int found = 0;
  for (const Node& n : out.graph.nodes) {
    found += n.op_type == op2d;
    if (n.op_type == op2d) {
      const Attribute* k = n.find_attr("kernel_shape");
      ASSERT_TRUE(k && k->ints.size() == 2) << "2-D " << op2d;
    }
  }
  EXPECT_EQ(found, c.op == "Conv" ? 1 : 2);
  expect_close_outputs(m, out, {random_value(c.x, 3)}, 1e-5);
}

TEST(PassLower3d, ConvsBecomeTwoDConvsOverFrames) {
  Case3d c;
  expect_lowered(c, "Conv");
  c.attrs = {ints_attribute("pads", {1, 0, 1, 1, 1, 0}), ints_attribute("strides", {2, 1, 2})};
  c.bias = true;
  expect_lowered(c, "Conv");
  c.attrs = {ints_attribute("dilations", {2, 1, 1}), ints_attribute("pads", {2, 1, 0, 2, 1, 1})};
  expect_lowered(c, "Conv");
  c.w = {5, 3, 1, 3, 3};  // (2+1)D's spatial half: kd 1
  c.attrs = {ints_attribute("pads", {0, 1, 1, 0, 1, 1})};
  expect_lowered(c, "Conv");
  c.w = {5, 3, 3, 1, 1};  // its temporal half
  c.attrs = {ints_attribute("pads", {1, 0, 0, 1, 0, 0}), ints_attribute("strides", {2, 1, 1})};
  c.symbolic_batch = true;
  expect_lowered(c, "Conv");
  c.x = {1, 6, 5, 7, 6};  // grouped and depthwise (X3D): each group's c kd channels stay together
  c.w = {4, 3, 3, 3, 3};
  c.attrs = {int_attribute("group", 2), ints_attribute("pads", {1, 1, 1, 1, 1, 1})};
  expect_lowered(c, "Conv");
  c.w = {6, 1, 3, 3, 3};
  c.attrs = {int_attribute("group", 6), ints_attribute("pads", {1, 1, 1, 1, 1, 1}),
             ints_attribute("strides", {1, 2, 2})};
  expect_lowered(c, "Conv");
}

TEST(PassLower3d, MaxPoolsBecomeAPixelAndAFramePool) {
  Case3d c;
  c.op = "MaxPool";
  c.attrs = {ints_attribute("kernel_shape", {3, 3, 3}), ints_attribute("strides", {2, 2, 2}),
             ints_attribute("pads", {1, 1, 1, 1, 1, 1})};
  expect_lowered(c, "MaxPool");
  c.attrs = {ints_attribute("kernel_shape", {2, 3, 2}), ints_attribute("strides", {2, 2, 2}),
             int_attribute("ceil_mode", 1)};
  expect_lowered(c, "MaxPool");
  c.attrs = {ints_attribute("kernel_shape", {1, 3, 3}), ints_attribute("strides", {1, 2, 2}),
             ints_attribute("pads", {0, 1, 1, 0, 1, 1}), ints_attribute("dilations", {1, 2, 1})};
  c.symbolic_batch = true;
  expect_lowered(c, "MaxPool");
}

TEST(PassLower3d, WhatItDoesNotCoverStays) {
  const auto stays = [](const Case3d& c, const char* what) {
    SCOPED_TRACE(what);
    bool changed = true;
    const Model out = run_pass(model_3d(c), passes::lower_3d, &changed);
    EXPECT_FALSE(changed);
    EXPECT_EQ(op_list(out.graph), std::vector<std::string>{c.op});
  };
  Case3d unknown;
  unknown.known_dims = false;
  stays(unknown, "unknown dims");
  Case3d same;
  same.attrs = {string_attribute("auto_pad", "SAME_UPPER")};
  stays(same, "auto_pad SAME_UPPER");
  Case3d old;
  old.opset = 10;
  stays(old, "opset 10");
  Case3d pool;
  pool.op = "MaxPool";
  pool.attrs = {ints_attribute("kernel_shape", {2, 2, 2}), int_attribute("storage_order", 1)};
  stays(pool, "storage_order 1");
}

}  // namespace
}  // namespace testing
}  // namespace xonnx
