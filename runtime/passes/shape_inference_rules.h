// Internal to shape inference: what a per-op rule sees, and the rule tables of each family
// (shape_inference_ops.cc: elementwise, linear algebra, conv/pool, reductions;
// shape_inference_shape_ops.cc: Reshape/Transpose/Concat/Slice/Gather/... and data propagation).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runtime/passes/shape_inference.h"
#include "runtime/core/tensor.h"

namespace xonnx {
namespace passes {

// Elements tracked for data propagation: small 0-D/1-D integer tensors.
constexpr int64_t kMaxTrackedElements = 64;

class InferCtx {
 public:
  InferCtx(const Node& node, int64_t opset, ShapeFacts& facts, const TensorsByName& constants)
      : node(node), opset(opset), facts_(facts), constants_(constants) {}

  const Node& node;
  const int64_t opset;

  size_t num_inputs() const { return node.inputs.size(); }
  bool has_input(size_t i) const { return i < node.inputs.size() && !node.inputs[i].empty(); }
  const TypeInfo* in_type(size_t i) const;
  DataType in_dtype(size_t i) const;
  const std::vector<Dim>* in_dims(size_t i) const;      // shape when rank known
  const std::vector<Dim>* in_elements(size_t i) const;  // propagated values
  const Tensor* in_constant(size_t i) const;            // initializer / Constant
  // The input's integer values when all are known (constant or propagated).
  std::optional<std::vector<int64_t>> in_ints(size_t i) const;

  int64_t attr_int(const std::string& name, int64_t def) const;
  std::optional<std::vector<int64_t>> attr_ints(const std::string& name) const;

  void set_type(size_t out, DataType dtype, std::vector<Dim> dims);
  void set_rank_unknown(size_t out, DataType dtype);
  void set_elements(size_t out, std::vector<Dim> elements);

 private:
  ShapeFacts& facts_;
  const TensorsByName& constants_;
};

using ShapeRule = void (*)(InferCtx& ctx);
using RuleTable = std::map<std::string, ShapeRule>;

void add_elementwise_rules(RuleTable& table);  // shape_inference_ops.cc
void add_nn_rules(RuleTable& table);           // shape_inference_ops.cc
void add_shape_op_rules(RuleTable& table);     // shape_inference_shape_ops.cc
// Rules for com.microsoft ops the fusions emit.
void add_contrib_rules(RuleTable& table);  // shape_inference_ops.cc
// LLM ops (RMS norms, rotary, attention, MatMulNBits) in both tables.
void add_llm_rules(RuleTable& onnx, RuleTable& contrib);  // shape_inference_llm.cc

// Shared dim helpers.
Dim known_dim(int64_t v);
// A dim computed from values in the file (dims, pads, repeats), which may be anything: known
// when the sum or product fits in int64 and is not negative, unknown otherwise (never a wrapped
// value: signed overflow is undefined behaviour).
Dim dim_plus(int64_t a, int64_t b);
Dim dim_times(int64_t a, int64_t b);
// a + b: a known sum, or a symbolic one whose param lists the terms sorted ("past + seq", as
// torch's dynamo exporter writes sums), so that a KV cache's Concat(past, new) and the mask's
// Range(0, past + seq) get the same dim; unknown otherwise.
Dim sum_dims(const Dim& a, const Dim& b);
// a - b where both are known, or b's terms are among a's ("past + seq" - "past" = "seq");
// unknown otherwise.
Dim difference_dims(const Dim& a, const Dim& b);
// Numpy broadcasting of two shapes; an unprovable pairing gives an unknown dim.
std::vector<Dim> broadcast_dims(const std::vector<Dim>& a, const std::vector<Dim>& b);
// Normalizes axis into [0, rank), or -1 when out of range.
int64_t norm_axis(int64_t axis, int64_t rank);

}  // namespace passes
}  // namespace xonnx
