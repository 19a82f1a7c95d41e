#include "converter/node_eval.h"

#include <set>

#include "runtime/exec/session.h"

namespace xonnx {
namespace convert {

Result<std::vector<Value>> evaluate_node(const Model& model, const Node& node,
                                         const std::vector<const Tensor*>& inputs,
                                         int64_t max_output_bytes) {
  if (inputs.size() != node.inputs.size()) {
    return internal_error(node.describe(), ": ", inputs.size(), " input tensors for ",
                          node.inputs.size(), " inputs");
  }
  // A one-node model whose inputs are initializers: kernels see them as constant inputs, as
  // they would in the real graph after folding.
  Model mini;
  mini.ir_version = model.ir_version;
  mini.opset_imports = model.opset_imports;
  mini.graph.name = "fold";
  std::set<std::string> bound;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const std::string& name = node.inputs[i];
    if (name.empty() || !bound.insert(name).second) continue;
    if (!inputs[i]) return internal_error(node.describe(), ": no tensor for input '", name, "'");
    mini.graph.initializers.push_back({name, *inputs[i]});
  }
  std::vector<int> output_index;  // graph output k -> node output index
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i].empty()) continue;
    if (bound.count(node.outputs[i])) {
      return invalid_model(node.describe(), ": output '", node.outputs[i], "' is also an input");
    }
    ValueInfo vi;
    vi.name = node.outputs[i];
    mini.graph.outputs.push_back(vi);
    output_index.push_back(static_cast<int>(i));
  }
  mini.graph.nodes.push_back(node);

  SessionOptions options;
  options.disable_xnnpack = true;
  options.load.max_tensor_bytes = max_output_bytes;
  XONNX_ASSIGN_OR_RETURN(auto session, Session::create_from_model(std::move(mini), options));
  XONNX_ASSIGN_OR_RETURN(std::vector<Value> outs, session->run({}));
  std::vector<Value> result(node.outputs.size());
  for (size_t k = 0; k < output_index.size() && k < outs.size(); ++k) {
    result[static_cast<size_t>(output_index[k])] = std::move(outs[k]);
  }
  return result;
}

}  // namespace convert
}  // namespace xonnx
