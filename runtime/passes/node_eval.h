// Evaluates one node with its REFERENCE kernel (never a fast backend), so constant folding and
// Constant lifting compute exactly what the reference semantics say, bit for bit the same on
// every host and ISA (docs/architecture.md, "Passes"). No Session is built: the kernel runs
// against a small in-memory context, which keeps folding cheap enough for session creation.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/core/value.h"
#include "runtime/ir/graph.h"

namespace xonnx {
namespace passes {

// Runs `node` (in `model`'s opset) on `inputs` (one per node input; nullptr where the input is
// omitted) and returns one value per node output (empty where the output is unnamed). Any
// output over `max_output_bytes` fails with kResourceExhausted before it is allocated; a node
// without a reference kernel, or with a subgraph attribute, fails with kUnsupported.
Result<std::vector<Value>> evaluate_node(const Model& model, const Node& node, const std::vector<const Tensor*>& inputs,
                                         int64_t max_output_bytes);

}  // namespace passes
}  // namespace xonnx
