// Shared pieces of the session-creation graph rewrites (layout_nhwc.cc, qdq_fusion.cc).
#pragma once

#include <functional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/core/tensor.h"
#include "runtime/ir/graph.h"

namespace xonnx {

// Producer, readers and constants of the main graph's values, as found when built. A pass that
// rewrites nodes keeps it true itself or stops reading it.
struct ValueIndex {
  explicit ValueIndex(const Graph& g);

  // The tensor of an initializer or of a Constant node's `value`, else nullptr.
  const Tensor* constant(const std::string& name) const;
  // The producing node's index, or -1 (graph input, initializer, unknown).
  int producer_of(const std::string& name) const;
  const std::vector<size_t>& readers(const std::string& name) const;
  // Graph outputs and names read inside subgraphs: their producers must keep them.
  bool pinned(const std::string& name) const { return pinned_.count(name) != 0; }

  const Graph& graph;
  std::unordered_map<std::string, size_t> producer;
  std::unordered_map<std::string, std::vector<size_t>> consumers;
  std::unordered_map<std::string, const Tensor*> initializers;
  std::set<std::string> pinned_;
  bool has_duplicate_outputs = false;  // the compiler reports it; passes back off
};

// Every name read anywhere inside `g` (nested graphs included): what a subgraph may capture.
void collect_reads(const Graph& g, std::set<std::string>& out);

// Relu, or Clip with constant scalar float bounds (opset < 11: attributes), as [lo, hi].
// False for NaN bounds and lo >= hi (the plain ops keep those).
bool activation_bounds(const Node& act, int64_t opset,
                       const std::function<const Tensor*(const std::string&)>& constant, float& lo, float& hi);

Attribute float_attribute(const char* name, float value);
Attribute int_attribute(const char* name, int64_t value);

}  // namespace xonnx
