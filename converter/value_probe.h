// Evaluates values of a graph on made-up inputs with the runtime's reference kernels, for passes
// that must know what a small subgraph computes (a causal mask, rotary positions and tables, the
// target of a Reshape) rather than how an exporter spelled it. One probe pins some values
// (graph inputs or intermediates) to tensors and binds symbolic dims (batch_size -> 2); every
// other value it reaches must be a constant or computable from those.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "converter/passes/passes.h"
#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace xonnx {
namespace convert {

struct Probe {
  std::map<std::string, Tensor> pinned;    // value name -> its tensor in this probe
  std::map<std::string, int64_t> symbols;  // dim_param -> its size in this probe
};

class ValueProbe {
 public:
  // `model` and `facts` (may be null) must outlive the probe. With facts, Shape(x) is answered
  // from x's inferred dims when every dim is a number or a bound symbol, without computing x
  // (so the target of a Reshape in layer 20 does not run layers 0..19).
  ValueProbe(const Model& model, const ShapeFacts* facts);

  // The value of `name` under `probe`. Fails (naming the value) when it depends on a graph input
  // that is not pinned, on a node with a subgraph, or when a kernel fails; a node output over
  // 64 MB is refused. Results are cached per probe object (call reset() between probes).
  Result<Tensor> evaluate(const std::string& name, const Probe& probe);
  void reset() { cache_.clear(); }

 private:
  Result<Tensor> shape_from_facts(const Node& shape_node, const Probe& probe, bool* answered);

  const Model& model_;
  const ShapeFacts* facts_;
  std::map<std::string, int> producer_;
  std::map<std::string, Tensor> cache_;
};

// Helpers for making probe tensors.
Tensor probe_filled_i64(Shape shape, int64_t value);
// Row-major int64 [rows, n] whose row r is start, start + 1, ..., start + n - 1.
Tensor probe_ranges_i64(int64_t rows, int64_t start, int64_t n);

}  // namespace convert
}  // namespace xonnx
