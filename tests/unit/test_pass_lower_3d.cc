// lower_3d: a 3-D Conv becomes a 2-D Conv over frames (temporal taps as input channels) and a
// 3-D MaxPool a 2-D MaxPool over pixels then one over frames, with the same outputs: pads,
// strides, dilations, a temporal kernel of 1, a bias, groups (depthwise too), ceil_mode and a
// symbolic batch; unknown dims, auto_pad SAME, storage_order 1 and opset 10 stay. One clip
// (N = 1) stays in frames / image views from one 3-D op to the next (lower_3d_frames.cc): a
// small video net of every lowered kind keeps its outputs, keeps no 3-D op, and in a session
// is one NHWC region agreeing with the 3-D reference kernels.
#include "runtime/exec/session.h"
#include "runtime/passes/layout_nhwc.h"
#include "runtime/passes/pass_util.h"
#include "runtime/passes/shape_inference.h"
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

// x [1, 4, 6, 7, 5] through every kind the frames path lowers: a 3x3x3 Conv + Relu (stacked
// taps), a 3x1x1 Conv (image view) + residual Add, a per-channel Mul and a scalar Add, a 3-D
// MaxPool with ceil_mode (pixels, then frames), a grouped 3x3x3 Conv (a Conv per tap), a 1x1x1
// Conv, their Concat and a BatchNormalization; a 1x3x3 Conv with temporal stride 2 and a
// temporal-only MaxPool leave as outputs, and a ReduceMean reads the Concat as a clip.
Model clip_net() {
  Model m = make_model(13);
  m.graph.inputs = {tensor_info("x", DataType::kFloat, {dim(1), dim(4), dim(6), dim(7), dim(5)})};
  uint32_t seed = 10;
  const auto w = [&](const std::string& name, Shape s, float lo = -0.3f, float hi = 0.3f) {
    add_init(m.graph, name, f32(noise(static_cast<size_t>(shape_numel(s)), seed++, lo, hi), s));
    return name;
  };
  const auto node = [&](const char* op, std::vector<std::string> in, const std::string& out,
                        std::vector<Attribute> attrs = {}) {
    m.graph.nodes.push_back(make_node(op, std::move(in), {out}, std::move(attrs)));
  };
  const auto pads = [](std::vector<int64_t> p) { return ints_attribute("pads", std::move(p)); };
  node("Conv", {"x", w("w1", {8, 4, 3, 3, 3}), w("b1", {8})}, "c1", {pads({1, 1, 1, 1, 1, 1})});
  node("Relu", {"c1"}, "a");
  node("Conv", {"a", w("wt", {8, 8, 3, 1, 1})}, "t", {pads({1, 0, 0, 1, 0, 0})});
  node("Add", {"t", "a"}, "r");
  node("Mul", {"r", w("scale", {1, 8, 1, 1, 1}, -2.0f, 2.0f)}, "r2");
  node("Add", {"r2", w("shift", {}, -1.0f, 1.0f)}, "s");
  node("MaxPool", {"s"}, "p",
       {ints_attribute("kernel_shape", {2, 3, 3}), ints_attribute("strides", {2, 2, 2}), pads({0, 1, 1, 0, 1, 1}),
        int_attribute("ceil_mode", 1)});
  node("Conv", {"p", w("wg", {8, 2, 3, 3, 3}), w("bg", {8})}, "g",
       {int_attribute("group", 4), pads({1, 1, 1, 1, 1, 1})});
  node("Conv", {"p", w("wq", {4, 8, 1, 1, 1})}, "q");
  node("Concat", {"g", "q"}, "cat", {int_attribute("axis", 1)});
  node("BatchNormalization", {"cat", w("gamma", {12}), w("beta", {12}), w("mean", {12}), w("var", {12}, 0.5f, 1.5f)},
       "y0");
  node("ReduceMean", {"cat"}, "y1", {ints_attribute("axes", {2, 3, 4})});
  node("Conv", {"s", w("wk", {4, 8, 1, 3, 3})}, "y2", {ints_attribute("strides", {2, 1, 1}), pads({0, 1, 1, 0, 1, 1})});
  node("MaxPool", {"s"}, "y3", {ints_attribute("kernel_shape", {3, 1, 1}), pads({1, 0, 0, 1, 0, 0})});
  m.graph.outputs = {untyped("y0"), untyped("y1"), untyped("y2"), untyped("y3")};
  return m;
}

TEST(PassLower3d, OneClipStaysInFramesBetweenItsOps) {
  const Model m = clip_net();
  bool changed = false;
  std::vector<std::string> notes;
  Model out = run_pass(m, passes::lower_3d, &changed, &notes);
  ASSERT_TRUE(changed);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], "lowered 5 3-D Conv and 2 3-D MaxPool into 2-D ones over frames");
  int convs = 0;
  for (const Node& n : out.graph.nodes) {
    const Attribute* k = n.find_attr("kernel_shape");
    if (n.op_type == "Conv" || n.op_type == "MaxPool") {
      ASSERT_TRUE(k && k->ints.size() == 2) << n.name;
    }
    convs += n.op_type == "Conv";
  }
  EXPECT_EQ(convs, 7);  // the grouped one: one per tap
  int derived = 0;       // permuted weights made from W when read, none held yet
  for (const NamedTensor& t : out.graph.initializers) derived += !t.tensor.storage()->resident();
  EXPECT_EQ(derived, 4);  // c1's taps, g's three taps
  expect_close_outputs(m, out, {random_value({1, 4, 6, 7, 5}, 3)}, 1e-4);
  // In NHWC: x enters once; what leaves is what the graph outputs and the ReduceMean read.
  passes::write_value_info(out.graph, passes::infer_shapes(out));  // the dims the layout pass reads
  auto stats = apply_nhwc_layout(out.graph, out.opset_imports);
  ASSERT_TRUE(stats.is_ok()) << stats.status().to_string();
  EXPECT_EQ(stats->to_nhwc, 1);        // the first Conv's stacked taps of x
  EXPECT_EQ(stats->to_nchw, 4);        // the Concat (read by the ReduceMean), y0, y2, y3
  EXPECT_EQ(stats->channels_last, 5);  // view switches (a, s, the pixel-pooled p, p, q): Identities
}

TEST(PassLower3d, OneClipSessionAgreesWithTheReference) {
  const Model m = clip_net();
  const Value x = random_value({1, 4, 6, 7, 5}, 4);
  SessionOptions reference;
  reference.optimization = passes::OptLevel::kNone;  // the 3-D reference kernels
  reference.disable_optimized = reference.disable_xnnpack = true;
  auto want_session = Session::create_from_model(m, reference);
  ASSERT_TRUE(want_session.is_ok()) << want_session.status().to_string();
  auto want = (*want_session)->run({x});
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  for (int threads : {1, 2}) {
    SessionOptions fast;
    fast.num_threads = threads;
    auto got_session = Session::create_from_model(m, fast);
    ASSERT_TRUE(got_session.is_ok()) << got_session.status().to_string();
    auto got = (*got_session)->run({x});
    ASSERT_TRUE(got.is_ok()) << got.status().to_string();
    EXPECT_LE(max_abs_diff(*got, *want), 2e-4) << threads << " threads";
  }
}

}  // namespace
}  // namespace testing
}  // namespace xonnx
