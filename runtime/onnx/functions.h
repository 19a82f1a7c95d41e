// Inlines model-local functions (FunctionProto) into the graph, so the runtime and the
// converter only ever see plain nodes: nested calls, attribute references (ref_attr_name)
// and attribute defaults are resolved; internal value names get a unique per-call prefix.
#pragma once

#include "runtime/core/status.h"
#include "runtime/ir/graph.h"
#include "runtime/onnx/loader.h"

namespace xonnx {

// Fails when model-local functions call each other in a cycle (recursion: ONNX forbids it and
// every graph walker would recurse without end) or nest calls deeper than
// options.max_nesting_depth. The loader runs it on every model, inlined or not.
Status check_function_calls(const Model& model, const LoadOptions& options = {});

// Every call site gets its own copy of the body, subgraphs included. Fails when the result
// would hold more than options.max_inlined_nodes nodes.
Status inline_functions(Model& model, const LoadOptions& options = {});

}  // namespace xonnx
