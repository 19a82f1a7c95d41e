// Static shape + dtype inference over the IR, for passes that need shapes (constant folding of
// Shape chains, no-op removal) and for the value_info the writer emits. Unknown ops give an
// unknown output type, never an error. Symbolic dims propagate by name ("batch" stays "batch").
//
// Besides types it propagates the *values* of small integer tensors element by element (known
// number, symbolic dim or unknown), as ONNX's data propagation does: Shape -> Gather -> Unsqueeze
// -> Concat -> Reshape chains then give Reshape a static (or symbolic) output shape.
#pragma once

#include <deque>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/ir/graph.h"

namespace xonnx {
namespace passes {

// Constant tensors by value name (hashed: value names share long prefixes, a tree compares them
// byte by byte at every level).
using TensorsByName = std::unordered_map<std::string, const Tensor*>;

struct ShapeFacts {
  // Every value we know anything about: graph inputs, initializers, node outputs.
  // Hashed: every pass looks values up here by name, thousands of times per graph.
  std::unordered_map<std::string, TypeInfo> types;
  // Elements of small (<= 64 elements, rank <= 1) integer tensors, in row-major order.
  std::unordered_map<std::string, std::vector<Dim>> values;

  // The tensor type of `name`, or nullptr when nothing is known.
  const TypeInfo* type(const std::string& name) const;
  // The dims of `name` when its rank is known, else nullptr.
  const std::vector<Dim>* dims(const std::string& name) const;
  // The propagated elements of `name`, or nullptr.
  const std::vector<Dim>* elements(const std::string& name) const;
};

// Infers the main graph of `model`. Subgraph bodies are not entered (their nodes' outputs stay
// unknown; If/Loop outputs take the types their bodies declare when those agree).
ShapeFacts infer_shapes(const Model& model);

// infer_shapes one node at a time, for a pass that turns values into constants as it walks the
// graph in order (constant folding): a folded value's exact type and elements then reach the
// nodes after it in the same walk. Holds references to `model` and to the tensors given to
// set_constant, which must outlive it. Not thread-safe.
class NodeShapeInference {
 public:
  // Seeds the facts from the main graph's inputs, initializers and declared types.
  explicit NodeShapeInference(const Model& model);
  // Infers the outputs of `n`, a node of the main graph after every producer of its inputs.
  void infer(const Node& n);
  // `name` now holds `value`: its exact type and elements replace what inference had.
  void set_constant(const std::string& name, const Tensor& value);
  const ShapeFacts& facts() const { return facts_; }
  ShapeFacts take_facts() { return std::move(facts_); }

 private:
  const Model& model_;
  ShapeFacts facts_;
  TensorsByName constants_;                                    // initializers, Constant nodes, set_constant
  std::deque<Tensor> owned_;                                   // Constant nodes' values
  std::unordered_map<std::string, const TypeInfo*> declared_;  // value_info and graph outputs
};

// Replaces graph.value_info with the inferred tensor types of node outputs (node order; graph
// inputs/outputs and initializers excluded), keeping old entries for values still produced that
// inference could not type. Returns true when value_info changed.
bool write_value_info(Graph& graph, const ShapeFacts& facts);

// Helpers shared with the passes.
bool dim_equal(const Dim& a, const Dim& b);                             // the same known value, or the same named param
bool dims_equal(const std::vector<Dim>& a, const std::vector<Dim>& b);  // dim_equal at every axis
bool type_info_equal(const TypeInfo& a, const TypeInfo& b);
// Every dim known: their values; else false.
bool all_known(const std::vector<Dim>& dims, std::vector<int64_t>* values = nullptr);

}  // namespace passes
}  // namespace xonnx
