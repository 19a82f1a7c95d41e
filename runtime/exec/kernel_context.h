// The executor's side of the kernel contract (runtime/ops/kernel.h): what a kernel factory
// sees while a Subgraph is planned (KernelInitImpl) and what a kernel sees while it runs
// (KernelContextImpl). Both live only for one factory call or one kernel run, and hold
// references into the Subgraph and frame that made them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/exec/subgraph.h"

namespace xonnx {

class KernelInitImpl final : public KernelInit {
 public:
  KernelInitImpl(const Node& node, int since, int64_t opset, const OpDef* reference, Subgraph& plan)
      : node_(node), since_(since), opset_(opset), reference_(reference), plan_(plan) {}
  const Node& node() const override { return node_; }
  int since_version() const override { return since_; }
  int64_t opset() const override { return opset_; }
  const Tensor* constant_input(size_t i) const override;
  void packed_constant_input(size_t i) const override {
    if (i < packed_.size() && constant_input(i)) packed_[i] = true;
  }
  // Whether the kernel the last factory returned packed input i (false before any call).
  bool packed(size_t i) const { return i < packed_.size() && packed_[i]; }
  void forget_packed() { packed_.assign(node_.inputs.size(), false); }
  std::shared_ptr<const void> shared_packing(const Tensor& constant, const std::string& layout,
                                             const std::function<std::shared_ptr<const void>()>& make) const override;
  std::shared_ptr<void> shared_scratch(const std::string& name,
                                       const std::function<std::shared_ptr<void>()>& make) const override;
  std::optional<Shape> static_input_shape(size_t i) const override;
  ThreadPool& thread_pool() const override { return *plan_.state_->thread_pool; }
  Result<std::unique_ptr<Kernel>> create_reference_kernel() const override;
  Result<std::shared_ptr<GraphBody>> subgraph(const std::string& attr_name) const override;

 private:
  const Node& node_;
  int since_;
  int64_t opset_;
  const OpDef* reference_;
  Subgraph& plan_;
  mutable std::vector<bool> packed_;
};

class KernelContextImpl final : public KernelContext {
 public:
  KernelContextImpl(const Subgraph::Step& step, Frame& frame, const SessionState& state,
                    const std::vector<Tensor>* bound = nullptr)
      : step_(step), frame_(frame), state_(state), bound_(bound) {}

  size_t num_inputs() const override { return step_.inputs.size(); }
  bool has_input(size_t i) const override {
    return i < step_.inputs.size() && step_.inputs[i] >= 0 && !frame_.slots[step_.inputs[i]].empty();
  }
  const Value& input_value(size_t i) const override;
  Value take_input_value(size_t i) override;
  const Tensor& input(size_t i) const override;
  size_t num_outputs() const override { return step_.outputs.size(); }
  bool output_wanted(size_t i) const override { return i < step_.outputs.size() && step_.outputs[i] >= 0; }
  Value* output_slot(size_t i) {
    if (i >= step_.outputs.size()) return nullptr;
    if (step_.outputs[i] >= 0) return &frame_.slots[step_.outputs[i]];
    return &step_.unnamed_outputs[i];
  }
  Result<Tensor*> allocate_output(size_t i, DataType dtype, Shape shape) override {
    return allocate(i, dtype, std::move(shape), true);
  }
  Result<Tensor*> allocate_output_uninitialized(size_t i, DataType dtype, Shape shape) override {
    return allocate(i, dtype, std::move(shape), false);
  }
  Result<Tensor*> allocate_output_over_input(size_t i, size_t in, DataType dtype, Shape shape) override;
  void set_output(size_t i, Tensor tensor) override {
    if (Value* slot = output_slot(i)) *slot = Value(std::move(tensor));
  }
  void set_output_value(size_t i, Value value) override {
    if (Value* slot = output_slot(i)) *slot = std::move(value);
  }
  const RunLimits& limits() const override { return state_.limits; }
  Status check_interrupt() const override { return state_.check_interrupt(); }
  Result<std::vector<Value>> run_subgraph(const GraphBody& body, const std::vector<Value>& inputs) override;
  Result<std::vector<Value>> run_subgraph_consuming(const GraphBody& body, std::vector<Value>&& inputs) override;

 private:
  Result<Tensor*> allocate(size_t i, DataType dtype, Shape shape, bool zero);

  // The caller's buffer for output i when it is bound and this kernel may write it directly:
  // the op appends into an output that is also its input (appends_in_place), or the buffer
  // overlaps none of the node's inputs.
  const Tensor* bound_buffer(size_t i) const;

  const Subgraph::Step& step_;
  Frame& frame_;
  const SessionState& state_;
  const std::vector<Tensor>* bound_;
};

}  // namespace xonnx
