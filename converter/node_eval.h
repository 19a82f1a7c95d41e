// Evaluates one node with the runtime's reference kernels (XNNPACK off), so constant folding and
// Constant lifting have exactly the semantics the runtime runs: one source of truth.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/core/value.h"
#include "runtime/ir/graph.h"

namespace xonnx {
namespace convert {

// Runs `node` (in `model`'s opset) on `inputs` (one per node input; nullptr where the input is
// omitted) and returns one value per node output (empty where the output is unnamed). Any
// output over `max_output_bytes` fails with kResourceExhausted before it is allocated; a node
// without a kernel fails with kUnsupported.
Result<std::vector<Value>> evaluate_node(const Model& model, const Node& node,
                                         const std::vector<const Tensor*>& inputs,
                                         int64_t max_output_bytes);

}  // namespace convert
}  // namespace xonnx
