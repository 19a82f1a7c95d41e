// Inlines model-local functions (FunctionProto) into the graph, so the runtime and the
// converter only ever see plain nodes: nested calls, attribute references (ref_attr_name)
// and attribute defaults are resolved; internal value names get a unique per-call prefix.
#pragma once

#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace xonnx {

Status inline_functions(Model& model);

}  // namespace xonnx
