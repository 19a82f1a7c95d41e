#include "runtime/passes/node_eval.h"

#include <cstring>
#include <memory>

#include "runtime/core/checked.h"
#include "runtime/core/thread_pool.h"
#include "runtime/ir/graph_edit.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace passes {

namespace {

// Every input is a constant (the caller's tensors); no subgraphs.
class FoldInit final : public KernelInit {
 public:
  FoldInit(const Node& node, int since, int64_t opset, const OpDef& reference, const std::vector<const Tensor*>& inputs,
           ThreadPool& pool)
      : node_(node), since_(since), opset_(opset), reference_(reference), inputs_(inputs), pool_(pool) {}
  const Node& node() const override { return node_; }
  int since_version() const override { return since_; }
  int64_t opset() const override { return opset_; }
  const Tensor* constant_input(size_t i) const override {
    return has_input(i) && i < inputs_.size() ? inputs_[i] : nullptr;
  }
  ThreadPool& thread_pool() const override { return pool_; }
  Result<std::unique_ptr<Kernel>> create_reference_kernel() const override { return reference_.create(*this); }
  Result<std::shared_ptr<GraphBody>> subgraph(const std::string& attr_name) const override {
    return unsupported("graph attribute '", attr_name, "' is not evaluated when folding");
  }

 private:
  const Node& node_;
  int since_;
  int64_t opset_;
  const OpDef& reference_;
  const std::vector<const Tensor*>& inputs_;
  ThreadPool& pool_;
};

class FoldContext final : public KernelContext {
 public:
  FoldContext(const Node& node, const std::vector<const Tensor*>& inputs, int64_t max_bytes)
      : node_(node), max_bytes_(max_bytes), outputs_(node.outputs.size()) {
    for (const Tensor* t : inputs) inputs_.push_back(t ? Value(*t) : Value());
    limits_.max_tensor_bytes = max_bytes;  // a kernel's scratch beside its outputs too
  }
  const RunLimits& limits() const override { return limits_; }
  size_t num_inputs() const override { return inputs_.size(); }
  bool has_input(size_t i) const override { return i < inputs_.size() && !inputs_[i].empty(); }
  const Value& input_value(size_t i) const override { return i < inputs_.size() ? inputs_[i] : none_; }
  const Tensor& input(size_t i) const override {
    const Value& v = input_value(i);
    return v.is_tensor() ? v.tensor() : no_tensor_;
  }
  size_t num_outputs() const override { return outputs_.size(); }
  bool output_wanted(size_t i) const override { return i < node_.outputs.size() && !node_.outputs[i].empty(); }
  Result<Tensor*> allocate_output(size_t i, DataType dtype, Shape shape) override {
    return allocate(i, dtype, std::move(shape));
  }
  Result<Tensor*> allocate_output_uninitialized(size_t i, DataType dtype, Shape shape) override {
    return allocate(i, dtype, std::move(shape));
  }
  void set_output(size_t i, Tensor tensor) override {
    if (i < outputs_.size()) outputs_[i] = Value(std::move(tensor));
  }
  void set_output_value(size_t i, Value value) override {
    if (i < outputs_.size()) outputs_[i] = std::move(value);
  }
  Result<std::vector<Value>> run_subgraph(const GraphBody&, const std::vector<Value>&) override {
    return unsupported("subgraphs are not evaluated when folding");
  }
  // Unnamed outputs come back empty, as the caller's contract says.
  std::vector<Value> take_outputs() {
    for (size_t i = 0; i < outputs_.size(); ++i) {
      if (!output_wanted(i)) outputs_[i] = Value();
    }
    return std::move(outputs_);
  }

 private:
  Result<Tensor*> allocate(size_t i, DataType dtype, Shape shape) {
    if (i >= outputs_.size()) return internal_error("output index ", i, " out of range");
    const int64_t n = shape_numel(shape);
    if (n < 0) return invalid_argument("output ", i, " shape ", shape_to_string(shape), " is invalid");
    const int64_t bytes = dtype == DataType::kString ? checked_mul(n, static_cast<int64_t>(sizeof(std::string)))
                                                     : dtype_storage_bytes(dtype, n);
    if (bytes < 0 || bytes > max_bytes_) {
      return resource_exhausted("output ", i, " of shape ", shape_to_string(shape), " needs ", bytes,
                                " bytes, over the folding limit of ", max_bytes_);
    }
    XONNX_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(dtype, std::move(shape)));  // zero-filled
    outputs_[i] = Value(std::move(t));
    return outputs_[i].mutable_tensor();
  }

  const Node& node_;
  int64_t max_bytes_;
  RunLimits limits_;
  std::vector<Value> inputs_;
  std::vector<Value> outputs_;
  Value none_;
  Tensor no_tensor_;
};

}  // namespace

Result<std::vector<Value>> evaluate_node(const Model& model, const Node& node, const std::vector<const Tensor*>& inputs,
                                         int64_t max_output_bytes) {
  if (inputs.size() != node.inputs.size()) {
    return internal_error(node.describe(), ": ", inputs.size(), " input tensors for ", node.inputs.size(), " inputs");
  }
  for (const Attribute& a : node.attributes) {
    if (a.g || !a.graphs.empty()) return unsupported(node.describe(), ": has a subgraph");
  }
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (!node.inputs[i].empty() && !inputs[i]) {
      return internal_error(node.describe(), ": no tensor for input '", node.inputs[i], "'");
    }
    for (const std::string& o : node.outputs) {
      if (!o.empty() && o == node.inputs[i]) {
        return invalid_model(node.describe(), ": output '", o, "' is also an input");
      }
    }
  }
  const int64_t opset = opset_of(model, node);
  XONNX_ASSIGN_OR_RETURN(ResolvedOp resolved, OpRegistry::global().resolve(node.domain, node.op_type, opset));
  const OpDef* reference = nullptr;
  for (const OpDef* c : resolved.candidates) {
    if (c->backend == Backend::kReference) reference = c;
  }
  if (!reference) return unsupported(node.describe(), ": no reference kernel");
  XONNX_RETURN_IF_ERROR(check_arity(*resolved.spec, node.describe() + ": ", static_cast<int>(node.inputs.size()),
                                    static_cast<int>(node.outputs.size())));
  // Folding is single-threaded: results never depend on how work is split.
  static thread_local ThreadPool pool(1);
  FoldInit init(node, resolved.since_version, opset, *reference, inputs, pool);
  auto kernel = reference->create(init);
  if (!kernel.is_ok()) return kernel.status().with_context(node.describe() + ": ");
  FoldContext ctx(node, inputs, max_output_bytes);
  Status s = (*kernel)->run(ctx);
  if (!s.is_ok()) return s.with_context(node.describe() + ": ");
  return ctx.take_outputs();
}

}  // namespace passes
}  // namespace xonnx
