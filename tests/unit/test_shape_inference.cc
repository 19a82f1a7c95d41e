// runtime/passes/shape_inference: per-op rules, symbolic dims, data propagation through Shape chains,
// value_info writing, and a whole exported encoder.
#include <gtest/gtest.h>

#include "runtime/passes/shape_inference.h"
#include "runtime/onnx/loader.h"
#include "tests/unit/fold_test_util.h"
#include "tests/unit/fuse_test_util.h"

namespace xonnx {
namespace testing {
namespace {

using passes::infer_shapes;
using passes::ShapeFacts;

// "[batch,3,?]" style rendering so expectations read like shapes.
std::string render(const ShapeFacts& f, const std::string& name) {
  const TypeInfo* t = f.type(name);
  if (!t) return "none";
  if (!t->has_shape) return std::string(dtype_name(t->elem_type)) + "[*]";
  std::string s = std::string(dtype_name(t->elem_type)) + "[";
  for (size_t i = 0; i < t->dims.size(); ++i) {
    if (i) s += ",";
    const Dim& d = t->dims[i];
    s += d.known() ? std::to_string(d.value) : d.param.empty() ? "?" : d.param;
  }
  return s + "]";
}

std::string float_name() { return dtype_name(DataType::kFloat); }
std::string i64_name() { return dtype_name(DataType::kInt64); }

TEST(ShapeInference, BroadcastKeepsSymbolicDims) {
  Model m = make_model();
  m.graph.inputs = {tensor_info("a", DataType::kFloat, {sym("batch"), dim(1), dim(4)}),
                    tensor_info("b", DataType::kFloat, {dim(3), dim(1)})};
  m.graph.nodes = {make_node("Add", {"a", "b"}, {"c"}), make_node("Relu", {"c"}, {"r"}),
                   make_node("Equal", {"a", "b"}, {"e"})};
  ShapeFacts f = infer_shapes(m);
  EXPECT_EQ(render(f, "c"), float_name() + "[batch,3,4]");
  EXPECT_EQ(render(f, "r"), float_name() + "[batch,3,4]");
  EXPECT_EQ(render(f, "e"), std::string(dtype_name(DataType::kBool)) + "[batch,3,4]");
}

TEST(ShapeInference, MatMulGemmConvPool) {
  Model m = make_model();
  m.graph.inputs = {tensor_info("x", DataType::kFloat, {sym("b"), sym("s"), dim(64)}),
                    tensor_info("img", DataType::kFloat, {dim(1), dim(3), dim(32), dim(32)}),
                    tensor_info("a", DataType::kFloat, {dim(5), dim(7)})};
  add_init(m.graph, "w", tensor_of<float>(std::vector<float>(64 * 32), {64, 32}));
  add_init(m.graph, "g", tensor_of<float>(std::vector<float>(9 * 7), {9, 7}));
  add_init(m.graph, "k", tensor_of<float>(std::vector<float>(8 * 27), {8, 3, 3, 3}));
  m.graph.nodes = {
      make_node("MatMul", {"x", "w"}, {"mm"}),
      make_node("Gemm", {"a", "g"}, {"gm"}, {attr_int("transB", 1)}),
      make_node("Conv", {"img", "k"}, {"conv"}, {attr_ints("pads", {1, 1, 1, 1}), attr_ints("strides", {2, 2})}),
      make_node("MaxPool", {"conv"}, {"pool"},
                {attr_ints("kernel_shape", {3, 3}), attr_ints("strides", {2, 2}), attr_int("ceil_mode", 1)}),
      make_node("GlobalAveragePool", {"conv"}, {"gap"}),
      make_node("ReduceMean", {"x"}, {"rm"}, {attr_ints("axes", {-1})}),
      make_node("Flatten", {"conv"}, {"flat"})};
  ShapeFacts f = infer_shapes(m);
  EXPECT_EQ(render(f, "mm"), float_name() + "[b,s,32]");
  EXPECT_EQ(render(f, "gm"), float_name() + "[5,9]");
  EXPECT_EQ(render(f, "conv"), float_name() + "[1,8,16,16]");
  EXPECT_EQ(render(f, "pool"), float_name() + "[1,8,8,8]");  // ceil((16-3)/2)+1 = 8
  EXPECT_EQ(render(f, "gap"), float_name() + "[1,8,1,1]");
  EXPECT_EQ(render(f, "rm"), float_name() + "[b,s,1]");
  EXPECT_EQ(render(f, "flat"), float_name() + "[1,2048]");
}

// Resize / Upsample, ConvTranspose and DepthToSpace / SpaceToDepth: each inferred dim is the
// one the kernels make (run on the reference), and what no constant fixes stays unknown.
TEST(ShapeInference, UpsamplingOpsAgreeWithTheirKernels) {
  Model m = make_model(18);
  m.graph.inputs = {tensor_info("x", DataType::kFloat, {dim(1), dim(8), dim(5), dim(7)}),
                    tensor_info("s", DataType::kFloat, {dim(4)})};
  add_init(m.graph, "half", tensor_of<float>({1.0f, 1.0f, 2.0f, 0.5f}, {4}));
  add_init(m.graph, "odd", tensor_of<float>({1.0f, 1.0f, 1.7f, 2.3f}, {4}));
  add_init(m.graph, "hw", tensor_of<float>({3.0f, 1.5f}, {2}));
  add_init(m.graph, "sizes", i64({1, 8, 9, 4}));
  add_init(m.graph, "w", tensor_of<float>(std::vector<float>(8 * 3 * 9), {8, 3, 3, 3}));
  m.graph.nodes = {
      make_node("Resize", {"x", "", "half"}, {"r_scales"}),
      make_node("Resize", {"x", "", "odd"}, {"r_odd"}, {attr_string("mode", "linear")}),
      make_node("Resize", {"x", "", "hw"}, {"r_axes"}, {attr_ints("axes", {2, -1})}),
      make_node("Resize", {"x", "", "", "sizes"}, {"r_sizes"}),
      make_node("Resize", {"x", "", "s"}, {"r_dynamic"}),
      make_node("Resize", {"x", "", "", "sizes"}, {"r_policy"},
                {attr_string("keep_aspect_ratio_policy", "not_larger")}),
      make_node("ConvTranspose", {"x", "w"}, {"ct"},
                {attr_ints("strides", {2, 2}), attr_ints("pads", {1, 0, 1, 2}), attr_ints("output_padding", {1, 0}),
                 attr_int("group", 2)}),
      make_node("ConvTranspose", {"x", "w"}, {"ct_same"},
                {attr_ints("strides", {3, 2}), attr_string("auto_pad", "SAME_UPPER")}),
      make_node("ConvTranspose", {"x", "w"}, {"ct_shape"},
                {attr_ints("strides", {2, 2}), attr_ints("output_shape", {12, 14})}),
      make_node("ConvTranspose", {"x", "w"}, {"ct_dil"},
                {attr_ints("dilations", {2, 3}), attr_ints("pads", {0, 1, 2, 0})}),
      make_node("DepthToSpace", {"x"}, {"d2s"}, {attr_int("blocksize", 2), attr_string("mode", "CRD")}),
      make_node("SpaceToDepth", {"r_sizes"}, {"s2d"}, {attr_int("blocksize", 2)}),
  };
  ShapeFacts f = infer_shapes(m);
  const std::string fl = float_name();
  EXPECT_EQ(render(f, "r_scales"), fl + "[1,8,10,3]");
  EXPECT_EQ(render(f, "r_odd"), fl + "[1,8,8,16]");  // floor(5 * 1.7), floor(7 * 2.3)
  EXPECT_EQ(render(f, "r_axes"), fl + "[1,8,15,10]");
  EXPECT_EQ(render(f, "r_sizes"), fl + "[1,8,9,4]");
  EXPECT_EQ(render(f, "r_dynamic"), fl + "[?,?,?,?]");
  EXPECT_EQ(render(f, "r_policy"), fl + "[?,?,?,?]");
  EXPECT_EQ(render(f, "ct"), fl + "[1,6,10,13]");
  EXPECT_EQ(render(f, "ct_same"), fl + "[1,3,15,14]");
  EXPECT_EQ(render(f, "ct_shape"), fl + "[1,3,12,14]");
  EXPECT_EQ(render(f, "ct_dil"), fl + "[1,3,7,12]");
  EXPECT_EQ(render(f, "d2s"), fl + "[1,2,10,14]");
  EXPECT_EQ(render(f, "s2d"), fl + "[1,32,?,2]");  // 9 rows do not split in blocks of 2

  // The kernels' shapes, where inferred.
  std::vector<std::string> names;
  for (const Node& n : m.graph.nodes) names.push_back(n.outputs[0]);
  names.erase(std::remove(names.begin(), names.end(), "s2d"), names.end());  // its kernel rejects 9 rows
  m.graph.nodes.pop_back();
  m.graph.outputs.clear();
  for (const std::string& n : names) m.graph.outputs.push_back(untyped(n));
  const std::vector<Value> out =
      run_model(m, {random_value({1, 8, 5, 7}, 1), Value(tensor_of<float>({1.0f, 1.0f, 0.6f, 1.4f}, {4}))});
  ASSERT_EQ(out.size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    const TypeInfo* t = f.type(names[i]);
    ASSERT_TRUE(t && t->has_shape && t->dims.size() == out[i].tensor().rank()) << names[i];
    for (size_t d = 0; d < t->dims.size(); ++d)
      if (t->dims[d].known()) {
        EXPECT_EQ(t->dims[d].value, out[i].tensor().dim(d)) << names[i] << " dim " << d;
      }
  }
}

TEST(ShapeInference, RecurrentOutputs) {
  Model m = make_model();
  m.graph.inputs = {tensor_info("x", DataType::kFloat, {sym("seq"), dim(2), dim(16)}),
                    tensor_info("xb", DataType::kFloat, {dim(3), sym("seq"), dim(16)})};
  add_init(m.graph, "w", tensor_of<float>(std::vector<float>(2 * 32 * 16), {2, 32, 16}));
  add_init(m.graph, "r", tensor_of<float>(std::vector<float>(2 * 32 * 8), {2, 32, 8}));
  add_init(m.graph, "w1", tensor_of<float>(std::vector<float>(24 * 16), {1, 24, 16}));
  add_init(m.graph, "r1", tensor_of<float>(std::vector<float>(24 * 8), {1, 24, 8}));
  m.graph.nodes = {
      make_node("LSTM", {"x", "w", "r"}, {"y", "y_h", "y_c"},
                {attr_int("hidden_size", 8), attr_string("direction", "bidirectional")}),
      make_node("GRU", {"xb", "w1", "r1"}, {"gy", "gy_h"}, {attr_int("layout", 1)}),  // hidden_size from R
  };
  ShapeFacts f = infer_shapes(m);
  EXPECT_EQ(render(f, "y"), float_name() + "[seq,2,2,8]");
  EXPECT_EQ(render(f, "y_h"), float_name() + "[2,2,8]");
  EXPECT_EQ(render(f, "y_c"), float_name() + "[2,2,8]");
  EXPECT_EQ(render(f, "gy"), float_name() + "[3,seq,1,8]");
  EXPECT_EQ(render(f, "gy_h"), float_name() + "[3,1,8]");
}

TEST(ShapeInference, DataMovementOps) {
  Model m = make_model(13);
  m.graph.inputs = {tensor_info("x", DataType::kFloat, {dim(2), dim(3), dim(4)})};
  add_init(m.graph, "shape", i64({0, -1}));
  add_init(m.graph, "ax0", i64({0}));
  add_init(m.graph, "starts", i64({1}));
  add_init(m.graph, "ends", i64({1000}));
  add_init(m.graph, "axes2", i64({2}));
  add_init(m.graph, "split", i64({1, 2}));
  add_init(m.graph, "idx", tensor_of<int64_t>({0, 1, 1}, {3}));
  add_init(m.graph, "reps", i64({1, 2, 1}));
  add_init(m.graph, "pads", i64({0, 1, 0, 0, 1, 0}));
  add_init(m.graph, "eshape", i64({5, 1, 1, 1}));
  m.graph.nodes = {make_node("Reshape", {"x", "shape"}, {"r"}),
                   make_node("Transpose", {"x"}, {"t"}, {attr_ints("perm", {2, 0, 1})}),
                   make_node("Concat", {"x", "x"}, {"c"}, {attr_int("axis", 1)}),
                   make_node("Split", {"x", "split"}, {"s0", "s1"}, {attr_int("axis", 1)}),
                   make_node("Slice", {"x", "starts", "ends", "axes2"}, {"sl"}),
                   make_node("Unsqueeze", {"x", "ax0"}, {"u"}),
                   make_node("Squeeze", {"u", "ax0"}, {"sq"}),
                   make_node("Gather", {"x", "idx"}, {"g"}, {attr_int("axis", 1)}),
                   make_node("Cast", {"x"}, {"cast"}, {attr_int("to", 7)}),
                   make_node("Tile", {"x", "reps"}, {"tile"}),
                   make_node("Pad", {"x", "pads"}, {"pad"}),
                   make_node("Expand", {"x", "eshape"}, {"ex"}),
                   make_node("NotARealOp", {"x"}, {"unknown"})};
  ShapeFacts f = infer_shapes(m);
  EXPECT_EQ(render(f, "r"), float_name() + "[2,12]");
  EXPECT_EQ(render(f, "t"), float_name() + "[4,2,3]");
  EXPECT_EQ(render(f, "c"), float_name() + "[2,6,4]");
  EXPECT_EQ(render(f, "s0"), float_name() + "[2,1,4]");
  EXPECT_EQ(render(f, "s1"), float_name() + "[2,2,4]");
  EXPECT_EQ(render(f, "sl"), float_name() + "[2,3,3]");
  EXPECT_EQ(render(f, "u"), float_name() + "[1,2,3,4]");
  EXPECT_EQ(render(f, "sq"), float_name() + "[2,3,4]");
  EXPECT_EQ(render(f, "g"), float_name() + "[2,3,4]");
  EXPECT_EQ(render(f, "cast"), i64_name() + "[2,3,4]");
  EXPECT_EQ(render(f, "tile"), float_name() + "[2,6,4]");
  EXPECT_EQ(render(f, "pad"), float_name() + "[2,5,4]");
  EXPECT_EQ(render(f, "ex"), float_name() + "[5,2,3,4]");
  EXPECT_EQ(render(f, "unknown"), "none");  // unknown op: no type, no error
}

TEST(ShapeInference, OpsetSpecificAxesAndShapeSlicing) {
  Model m11 = make_model(11);
  m11.graph.inputs = {tensor_info("x", DataType::kFloat, {dim(2), dim(3)})};
  m11.graph.nodes = {make_node("Unsqueeze", {"x"}, {"u"}, {attr_ints("axes", {-1})})};
  EXPECT_EQ(render(infer_shapes(m11), "u"), float_name() + "[2,3,1]");

  Model m15 = make_model(15);
  m15.graph.inputs = {tensor_info("x", DataType::kFloat, {sym("n"), dim(3), dim(5)})};
  m15.graph.nodes = {make_node("Shape", {"x"}, {"s"}, {attr_int("start", 1)}), make_node("Size", {"x"}, {"size"}),
                     make_node("ConstantOfShape", {"s"}, {"zeros"})};
  ShapeFacts f = infer_shapes(m15);
  EXPECT_EQ(render(f, "s"), i64_name() + "[2]");
  ASSERT_NE(f.elements("s"), nullptr);
  EXPECT_EQ((*f.elements("s"))[0].value, 3);
  EXPECT_EQ((*f.elements("s"))[1].value, 5);
  EXPECT_EQ(render(f, "size"), i64_name() + "[]");
  EXPECT_EQ(f.elements("size"), nullptr);  // depends on n
  EXPECT_EQ(render(f, "zeros"), float_name() + "[3,5]");
}

// The exporter's attention pattern: the Reshape target is built from the input's own Shape.
Model shape_chain_model() {
  Model m = make_model(14);
  m.graph.inputs = {tensor_info("x", DataType::kFloat, {sym("batch"), sym("seq"), dim(64)})};
  m.graph.outputs = {untyped("y")};
  add_init(m.graph, "i0", Tensor::scalar<int64_t>(0));
  add_init(m.graph, "i1", Tensor::scalar<int64_t>(1));
  add_init(m.graph, "i2", Tensor::scalar<int64_t>(2));
  add_init(m.graph, "four", Tensor::scalar<int64_t>(4));
  add_init(m.graph, "ax0", i64({0}));
  m.graph.nodes = {make_node("Shape", {"x"}, {"s"}),
                   make_node("Gather", {"s", "i0"}, {"b"}),
                   make_node("Gather", {"s", "i1"}, {"t"}),
                   make_node("Gather", {"s", "i2"}, {"d"}),
                   make_node("Div", {"d", "four"}, {"hd"}),
                   make_node("Unsqueeze", {"b", "ax0"}, {"ub"}),
                   make_node("Unsqueeze", {"t", "ax0"}, {"ut"}),
                   make_node("Unsqueeze", {"hd", "ax0"}, {"uhd"}),
                   make_node("Concat", {"ub", "ut", "four_1d", "uhd"}, {"target"}, {attr_int("axis", 0)}),
                   make_node("Reshape", {"x", "target"}, {"y"})};
  add_init(m.graph, "four_1d", i64({4}));
  return m;
}

TEST(ShapeInference, ShapeChainGivesReshapeSymbolicShape) {
  ShapeFacts f = infer_shapes(shape_chain_model());
  EXPECT_EQ(render(f, "y"), float_name() + "[batch,seq,4,16]");
  ASSERT_NE(f.elements("hd"), nullptr);
  EXPECT_EQ((*f.elements("hd"))[0].value, 16);
  EXPECT_EQ((*f.elements("target"))[0].param, "batch");
}

TEST(ShapeInference, ReshapeMinusOneWithSymbolicDims) {
  Model m = make_model();
  m.graph.inputs = {tensor_info("x", DataType::kFloat, {sym("batch"), dim(4), dim(16)})};
  add_init(m.graph, "shape", i64({0, -1}));
  m.graph.nodes = {make_node("Reshape", {"x", "shape"}, {"y"})};
  EXPECT_EQ(render(infer_shapes(m), "y"), float_name() + "[batch,64]");
}

TEST(ShapeInference, ReshapeKeepsTheSymbolicDimItsTargetLacks) {
  // x [batch, seq, 64] to [batch, -1, 4, 16]: the -1 is seq, whether the target is a constant
  // or, as torch builds it, a Concat of the batch dim and constants (propagated elements hold
  // no -1: the one unknown element is fixed by the element count).
  Model m = make_model(14);
  m.graph.inputs = {tensor_info("x", DataType::kFloat, {sym("batch"), sym("seq"), dim(64)})};
  add_init(m.graph, "i0", Tensor::scalar<int64_t>(0));
  add_init(m.graph, "ax0", i64({0}));
  add_init(m.graph, "rest", i64({-1, 4, 16}));
  add_init(m.graph, "zero_rest", i64({0, -1, 4, 16}));
  m.graph.nodes = {make_node("Shape", {"x"}, {"s"}),
                   make_node("Gather", {"s", "i0"}, {"b"}),
                   make_node("Unsqueeze", {"b", "ax0"}, {"ub"}),
                   make_node("Concat", {"ub", "rest"}, {"target"}, {attr_int("axis", 0)}),
                   make_node("Reshape", {"x", "target"}, {"y"}),
                   make_node("Reshape", {"x", "zero_rest"}, {"z"})};
  const ShapeFacts f = infer_shapes(m);
  EXPECT_EQ(render(f, "y"), float_name() + "[batch,seq,4,16]");
  EXPECT_EQ(render(f, "z"), float_name() + "[batch,seq,4,16]");
}

TEST(ShapeInference, RangeFromZeroByOneHasTheLimitsLength) {
  // torch's positions: arange(seq) over a propagated seq.
  Model m = make_model(14);
  m.graph.inputs = {tensor_info("x", DataType::kFloat, {sym("batch"), sym("seq")})};
  add_init(m.graph, "i1", Tensor::scalar<int64_t>(1));
  add_init(m.graph, "start", Tensor::scalar<int64_t>(0));
  add_init(m.graph, "two", Tensor::scalar<int64_t>(2));
  add_init(m.graph, "delta", Tensor::scalar<int64_t>(1));
  m.graph.nodes = {make_node("Shape", {"x"}, {"s"}), make_node("Gather", {"s", "i1"}, {"n"}),
                   make_node("Range", {"start", "n", "delta"}, {"pos"}),
                   make_node("Range", {"two", "n", "delta"}, {"tail"})};
  const ShapeFacts f = infer_shapes(m);
  EXPECT_EQ(render(f, "pos"), i64_name() + "[seq]");
  EXPECT_EQ(render(f, "tail"), i64_name() + "[?]");  // seq - 2, not a dim of its own
}

TEST(ShapeInference, TorchExpandSizesReachExpand) {
  // repeat_kv's x[:, :, None].expand(b, kvh, 4, seq, d): torch writes the sizes through
  // Where(Equal(sizes, -1s), ones, sizes). A symbolic size never equals -1, so the Where picks
  // the sizes and Expand has [1, 2, 4, seq, 64]. Equal's exact and same-symbol elements too.
  Model m = make_model(14);
  m.graph.inputs = {tensor_info("x", DataType::kFloat, {dim(1), dim(2), dim(1), sym("seq"), dim(64)})};
  add_init(m.graph, "i3", i64({3}));
  add_init(m.graph, "head", i64({1, 2, 4}));
  add_init(m.graph, "tail", i64({64}));
  add_init(m.graph, "minus_ones", i64({-1, -1, -1, -1, -1}));
  add_init(m.graph, "ones", i64({1, 1, 1, 1, 1}));
  add_init(m.graph, "probe", i64({1, 3, 4, -1, 64}));
  m.graph.nodes = {make_node("Shape", {"x"}, {"s"}),
                   make_node("Gather", {"s", "i3"}, {"seq"}),
                   make_node("Concat", {"head", "seq", "tail"}, {"sizes"}, {attr_int("axis", 0)}),
                   make_node("Equal", {"sizes", "minus_ones"}, {"keep"}),
                   make_node("Where", {"keep", "ones", "sizes"}, {"target"}),
                   make_node("Expand", {"x", "target"}, {"y"}),
                   make_node("Equal", {"sizes", "probe"}, {"probe_equal"}),
                   make_node("Equal", {"sizes", "sizes"}, {"self_equal"})};
  const ShapeFacts f = infer_shapes(m);
  EXPECT_EQ(render(f, "y"), float_name() + "[1,2,4,seq,64]");
  const auto elements = [&](const std::string& name) {
    std::string out;
    for (const Dim& d : *f.elements(name)) out += (d.known() ? std::to_string(d.value) : "?") + ",";
    return out;
  };
  ASSERT_NE(f.elements("probe_equal"), nullptr);
  EXPECT_EQ(elements("probe_equal"), "1,0,1,0,1,");  // seq against -1: never equal
  ASSERT_NE(f.elements("self_equal"), nullptr);
  EXPECT_EQ(elements("self_equal"), "1,1,1,1,1,");
}

TEST(ShapeInference, SymbolicSumsOfAKvCache) {
  // A decode step: the cache grows to past + seq keys (Concat, and Add of the two lengths);
  // the new positions are Range(past, past + seq), seq of them. The sum's param lists its terms
  // sorted, so both ways of writing it meet; a name of its own ("total") stays apart.
  Model m = make_model(14);
  m.graph.inputs = {tensor_info("past_k", DataType::kFloat, {dim(1), sym("seq"), dim(4)}),
                    tensor_info("k", DataType::kFloat, {dim(1), sym("past"), dim(4)}),
                    tensor_info("other", DataType::kFloat, {dim(1), sym("total"), dim(4)})};
  add_init(m.graph, "i1", Tensor::scalar<int64_t>(1));
  add_init(m.graph, "one", Tensor::scalar<int64_t>(1));
  add_init(m.graph, "zero", Tensor::scalar<int64_t>(0));
  Node concat = make_node("Concat", {"k", "past_k"}, {"kc"});
  concat.attributes = {attr_int("axis", 1)};
  m.graph.nodes = {concat,
                   make_node("Shape", {"past_k"}, {"ps"}),
                   make_node("Gather", {"ps", "i1"}, {"seq"}),
                   make_node("Shape", {"k"}, {"ks"}),
                   make_node("Gather", {"ks", "i1"}, {"past"}),
                   make_node("Add", {"seq", "past"}, {"total"}),
                   make_node("Range", {"zero", "total", "one"}, {"all"}),
                   make_node("Range", {"past", "total", "one"}, {"fresh"}),
                   make_node("Range", {"seq", "total", "one"}, {"old"}),
                   make_node("Add", {"kc", "other"}, {"unproven"})};
  const ShapeFacts f = infer_shapes(m);
  EXPECT_EQ(render(f, "kc"), float_name() + "[1,past + seq,4]");
  EXPECT_EQ(render(f, "all"), i64_name() + "[past + seq]");
  EXPECT_EQ(render(f, "fresh"), i64_name() + "[seq]");
  EXPECT_EQ(render(f, "old"), i64_name() + "[past]");
  EXPECT_EQ(render(f, "unproven"), float_name() + "[1,?,4]");
}

TEST(ShapeInference, WriteValueInfoIsIdempotent) {
  Model m = shape_chain_model();
  ShapeFacts f = infer_shapes(m);
  EXPECT_TRUE(passes::write_value_info(m.graph, f));
  EXPECT_FALSE(passes::write_value_info(m.graph, infer_shapes(m)));
  bool has_hd = false;
  for (const ValueInfo& vi : m.graph.value_info) {
    EXPECT_NE(vi.name, "y");  // graph outputs are not repeated in value_info
    has_hd |= vi.name == "hd";
  }
  EXPECT_TRUE(has_hd);
}

TEST(ShapeInference, EncoderFixtureOutputsAreTyped) {
  auto model = load_model(std::string(XONNX_TEST_MODELS_DIR) + "/transformer_encoder_opset14/model.onnx");
  ASSERT_TRUE(model.is_ok()) << model.status().to_string();
  ShapeFacts f = infer_shapes(*model);
  int typed = 0, total = 0;
  for (const Node& n : model->graph.nodes) {
    for (const std::string& o : n.outputs) {
      ++total;
      const TypeInfo* t = f.type(o);
      typed += t && t->has_shape;
    }
  }
  EXPECT_EQ(typed, total);
  EXPECT_EQ(render(f, model->graph.outputs[0].name), float_name() + "[batch,10]");
}

}  // namespace
}  // namespace testing
}  // namespace xonnx
