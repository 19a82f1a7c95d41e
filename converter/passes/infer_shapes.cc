// Writes the inferred shapes into graph.value_info (the writer emits them; ORT and libonnx use
// them). Changes nothing else, so it reports a change only when value_info differs.
#include "converter/passes/passes.h"

namespace xonnx {
namespace convert {

Result<bool> infer_shapes_pass(Model& model, PassContext&) {
  const ShapeFacts facts = infer_shapes(model);
  return write_value_info(model.graph, facts);
}

}  // namespace convert
}  // namespace xonnx
