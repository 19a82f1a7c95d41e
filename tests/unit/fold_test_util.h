// Helpers for the shape-inference / folding / no-op pass tests: build small models by hand, run
// them in the runtime, and compare the outputs of a model before and after a pass.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/passes/pass.h"
#include "runtime/exec/session.h"
#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace testing {

inline Dim dim(int64_t v) {
  Dim d;
  d.value = v;
  return d;
}
inline Dim sym(const std::string& name) {
  Dim d;
  d.param = name;
  return d;
}

inline ValueInfo tensor_info(const std::string& name, DataType dtype, std::vector<Dim> dims) {
  ValueInfo vi;
  vi.name = name;
  vi.type.kind = TypeInfo::Kind::kTensor;
  vi.type.elem_type = dtype;
  vi.type.has_shape = true;
  vi.type.dims = std::move(dims);
  return vi;
}
inline ValueInfo untyped(const std::string& name) {
  ValueInfo vi;
  vi.name = name;
  return vi;
}

inline Node make_node(const std::string& op, std::vector<std::string> inputs, std::vector<std::string> outputs,
                      std::vector<Attribute> attrs = {}) {
  Node n;
  n.op_type = op;
  n.name = outputs.empty() ? op : outputs[0] + "_node";
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  n.attributes = std::move(attrs);
  return n;
}

inline Model make_model(int64_t opset = 17) {
  Model m;
  m.ir_version = 8;
  m.opset_imports[""] = opset;
  m.graph.name = "test";
  return m;
}

inline void add_init(Graph& g, const std::string& name, Tensor t) { g.initializers.push_back({name, std::move(t)}); }
inline Tensor i64(std::vector<int64_t> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::from_vector<int64_t>(v, {n});
}

inline int count_op(const Graph& g, const std::string& op) {
  int n = 0;
  for (const Node& node : g.nodes) n += node.op_type == op;
  return n;
}

// The graph as given (optimization none): the pass under test is the only rewrite compared.
inline std::vector<Value> run_model(const Model& model, const std::vector<Value>& inputs) {
  SessionOptions options;
  options.optimization = passes::OptLevel::kNone;
  auto session = Session::create_from_model(model, options);
  EXPECT_TRUE(session.is_ok()) << session.status().to_string();
  if (!session.is_ok()) return {};
  auto out = (*session)->run(inputs);
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  return out.is_ok() ? std::move(out).value() : std::vector<Value>{};
}

// Outputs of both models on `inputs` match exactly (folding and no-op removal are exact).
inline void expect_same_outputs(const Model& a, const Model& b, const std::vector<Value>& inputs) {
  std::vector<Value> x = run_model(a, inputs);
  std::vector<Value> y = run_model(b, inputs);
  ASSERT_EQ(x.size(), y.size());
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_TRUE(x[i].is_tensor() && y[i].is_tensor());
    EXPECT_EQ(x[i].tensor().dtype(), y[i].tensor().dtype()) << "output " << i;
    EXPECT_EQ(x[i].tensor().shape(), y[i].tensor().shape()) << "output " << i;
    EXPECT_EQ(doubles(x[i]), doubles(y[i])) << "output " << i;
  }
}

// Runs one pass on a copy of `model` and returns the result (changed flag in *changed).
template <typename PassFn>
Model apply_pass(const Model& model, PassFn pass, passes::PassOptions options = {},
                 std::vector<std::string>* warnings = nullptr, bool* changed = nullptr) {
  Model copy = model;
  passes::PassContext ctx(options);
  auto r = pass(copy, ctx);
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  if (changed) *changed = r.is_ok() && r.value();
  if (warnings) *warnings = ctx.warnings;
  return copy;
}

}  // namespace testing
}  // namespace xonnx
