// split_sliced_projections (session creation): a MatMul [+ bias] whose product only Slices /
// Splits of its last axis read becomes one MatMul [+ Add] per column range, with the same bits;
// a W another node reads, a second reader of the product, another axis, a step, overlapping
// ranges and a product that is a graph output keep the graph.
#include <functional>

#include "runtime/passes/pass_util.h"
#include "runtime/passes/passes.h"
#include "tests/unit/fuse_test_util.h"

namespace xonnx {
namespace testing {
namespace {

constexpr int64_t kK = 8, kN = 12;

// a [2, 3, 8] x W -> [2, 3, 12] (+ bias), read by `readers` (which add the outputs they write).
Model projection(bool bias, bool transposed_w, const std::function<void(Model&, const std::string&)>& readers) {
  Model m = make_model(17);
  m.opset_imports["com.microsoft"] = 1;
  m.graph.inputs = {tensor_info("a", DataType::kFloat, {dim(2), dim(3), dim(kK)})};
  const Shape w_shape = transposed_w ? Shape{kN, kK} : Shape{kK, kN};
  add_init(m.graph, "w", f32(noise(kK * kN, 7), w_shape));
  if (transposed_w) {
    Node mm = make_node("FusedMatMul", {"a", "w"}, {"mm"}, {int_attribute("transB", 1)});
    mm.domain = "com.microsoft";
    m.graph.nodes.push_back(mm);
  } else {
    m.graph.nodes.push_back(make_node("MatMul", {"a", "w"}, {"mm"}));
  }
  std::string product = "mm";
  if (bias) {
    add_init(m.graph, "bias", f32(noise(kN, 9), {kN}));
    m.graph.nodes.push_back(make_node("Add", {"bias", "mm"}, {"y"}));
    product = "y";
  }
  readers(m, product);
  return m;
}

void add_slice(Model& m, const std::string& x, const std::string& out, int64_t start, int64_t end, int64_t axis = -1,
               int64_t step = 1) {
  const std::string p = out + "_";
  add_init(m.graph, p + "starts", i64({start}));
  add_init(m.graph, p + "ends", i64({end}));
  add_init(m.graph, p + "axes", i64({axis}));
  add_init(m.graph, p + "steps", i64({step}));
  m.graph.nodes.push_back(make_node("Slice", {x, p + "starts", p + "ends", p + "axes", p + "steps"}, {out}));
  m.graph.outputs.push_back(untyped(out));
}

void qkv_slices(Model& m, const std::string& x) {
  add_slice(m, x, "q", 0, 4);
  add_slice(m, x, "k", 4, 8);
  add_slice(m, x, "v", -4, INT64_MAX);  // negative start, end past the axis: clamped
}

std::vector<Value> projection_inputs() { return {random_value({2, 3, kK}, 1)}; }

TEST(PassSplitSlicedProjections, SlicesOfABiasedProjectionBecomeOneProjectionEach) {
  for (const bool transposed : {false, true}) {
    Model m = projection(true, transposed, qkv_slices);
    bool changed = false;
    Model out = run_pass(m, passes::split_sliced_projections, &changed);
    ASSERT_TRUE(changed);
    const std::string mm = transposed ? "com.microsoft:FusedMatMul" : "MatMul";
    EXPECT_EQ(op_list(out.graph), (std::vector<std::string>{mm, "Add", mm, "Add", mm, "Add"}));
    // One product per piece of W: the same sums, bit for bit.
    expect_close_outputs(m, out, projection_inputs(), 0.0);
  }
}

TEST(PassSplitSlicedProjections, SplitAndPartialSlicesWithoutBias) {
  // Split of the last axis into 3 + 9 columns (opset 13's sizes input).
  Model split = projection(false, false, [](Model& m, const std::string& x) {
    add_init(m.graph, "sizes", i64({3, 9}));
    m.graph.nodes.push_back(make_node("Split", {x, "sizes"}, {"s0", "s1"}, {int_attribute("axis", 2)}));
    m.graph.outputs = {untyped("s0"), untyped("s1")};
  });
  bool changed = false;
  Model out = run_pass(split, passes::split_sliced_projections, &changed);
  ASSERT_TRUE(changed);
  EXPECT_EQ(op_list(out.graph), (std::vector<std::string>{"MatMul", "MatMul"}));
  expect_close_outputs(split, out, projection_inputs(), 0.0);
  // Two ranges that leave columns out: only those computed.
  Model partial = projection(true, false, [](Model& m, const std::string& x) {
    add_slice(m, x, "first", 0, 2);
    add_slice(m, x, "last", 10, 12, 2);
  });
  out = run_pass(partial, passes::split_sliced_projections, &changed);
  ASSERT_TRUE(changed);
  EXPECT_EQ(op_list(out.graph), (std::vector<std::string>{"MatMul", "Add", "MatMul", "Add"}));
  expect_close_outputs(partial, out, projection_inputs(), 0.0);
}

TEST(PassSplitSlicedProjections, KeepsWhatItCannotSplit) {
  const auto expect_kept = [](const Model& m, const char* why) {
    bool changed = true;
    run_pass(m, passes::split_sliced_projections, &changed);
    EXPECT_FALSE(changed) << why;
  };
  using Readers = std::function<void(Model&, const std::string&)>;
  const auto with = [](Readers extra) {
    return [extra](Model& m, const std::string& x) {
      qkv_slices(m, x);
      extra(m, x);
    };
  };
  expect_kept(projection(true, false, with([](Model& m, const std::string&) {
                m.graph.nodes.push_back(make_node("MatMul", {"a", "w"}, {"other"}));
                m.graph.outputs.push_back(untyped("other"));
              })),
              "W read by another node");
  expect_kept(projection(true, false, with([](Model& m, const std::string& x) {
                m.graph.nodes.push_back(make_node("Relu", {x}, {"r"}));
                m.graph.outputs.push_back(untyped("r"));
              })),
              "the product read whole");
  expect_kept(projection(true, false, with([](Model& m, const std::string& x) { m.graph.outputs.push_back(untyped(x)); })),
              "the product is a graph output");
  expect_kept(projection(false, false, [](Model& m, const std::string& x) { add_slice(m, x, "rows", 0, 2, 1); }),
              "another axis");
  expect_kept(projection(false, false, [](Model& m, const std::string& x) { add_slice(m, x, "odd", 1, 12, -1, 2); }),
              "a step");
  expect_kept(projection(false, false,
                         [](Model& m, const std::string& x) {
                           add_slice(m, x, "lo", 0, 8);
                           add_slice(m, x, "hi", 4, 12);
                         }),
              "overlapping ranges");
  expect_kept(projection(false, false, [](Model& m, const std::string& x) { add_slice(m, x, "all", 0, kN); }),
              "one range of every column");
}

}  // namespace
}  // namespace testing
}  // namespace xonnx
