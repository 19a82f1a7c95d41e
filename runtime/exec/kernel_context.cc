#include "runtime/exec/kernel_context.h"

#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>

#include "runtime/core/checked.h"
#include "runtime/core/limits.h"

namespace xonnx {

namespace {

const Tensor& empty_tensor() {
  static const Tensor* t = new Tensor();
  return *t;
}
const Value& empty_value() {
  static const Value* v = new Value();
  return *v;
}

}  // namespace

const Tensor* KernelInitImpl::constant_input(size_t i) const {
  if (!has_input(i)) return nullptr;
  const int s = plan_.slot(node_.inputs[i]);
  for (const auto& [slot, tensor] : plan_.constants_) {
    if (slot == s) {
      // A graph input with the same name can override the initializer: not constant then.
      for (int in : plan_.input_slots_) {
        if (in == s) return nullptr;
      }
      return &tensor;
    }
  }
  return nullptr;
}

std::optional<Shape> KernelInitImpl::static_input_shape(size_t i) const {
  const TypeInfo* type = has_input(i) ? plan_.declared_type(node_.inputs[i]) : nullptr;
  if (!type || type->kind != TypeInfo::Kind::kTensor || !type->has_shape) return std::nullopt;
  Shape shape;
  for (const Dim& d : type->dims) {
    if (!d.known()) return std::nullopt;
    shape.push_back(d.value);
  }
  return shape;
}

std::shared_ptr<void> KernelInitImpl::shared_scratch(const std::string& name,
                                                     const std::function<std::shared_ptr<void>()>& make) const {
  const SessionState& state = *plan_.state_;
  std::lock_guard<std::mutex> lock(state.packings_mutex);
  std::weak_ptr<void>& entry = state.scratch[name];
  std::shared_ptr<void> scratch = entry.lock();
  if (!scratch) {
    scratch = make();
    entry = scratch;
  }
  return scratch;
}

std::shared_ptr<const void> KernelInitImpl::shared_packing(
    const Tensor& constant, const std::string& layout, const std::function<std::shared_ptr<const void>()>& make) const {
  const std::shared_ptr<Storage>& storage = constant.storage();
  if (!storage) return make();
  const std::string key = std::to_string(reinterpret_cast<uintptr_t>(storage.get())) + "+" +
                          std::to_string(constant.byte_offset()) + " " + dtype_name(constant.dtype()) +
                          shape_to_string(constant.shape()) + " " + layout;
  const SessionState& state = *plan_.state_;
  std::lock_guard<std::mutex> lock(state.packings_mutex);
  SessionState::Packing& entry = state.packings[key];
  std::shared_ptr<const void> packed = entry.packed.lock();
  if (packed && entry.source.lock() == storage) {
    ++state.packings_reused;
    return packed;
  }
  packed = make();
  entry = {storage, packed};
  return packed;
}

Result<std::unique_ptr<Kernel>> KernelInitImpl::create_reference_kernel() const {
  if (!reference_ || reference_->backend != Backend::kReference) {
    return unsupported("no reference kernel for ", node_.op_type);
  }
  return reference_->create(*this);
}

Result<std::shared_ptr<GraphBody>> KernelInitImpl::subgraph(const std::string& attr_name) const {
  const Attribute* a = node_.find_attr(attr_name);
  if (!a) return invalid_model("required graph attribute '", attr_name, "' is missing");
  if (a->type != AttrType::kGraph || !a->g) {
    return invalid_model("attribute '", attr_name, "' must be GRAPH, got ", attr_type_name(a->type));
  }
  auto sub = Subgraph::compile(*a->g, &plan_, plan_.state_);
  if (!sub.is_ok()) return sub.status().with_context("in subgraph '" + attr_name + "': ");
  return std::shared_ptr<GraphBody>(std::move(sub).value());
}

const Value& KernelContextImpl::input_value(size_t i) const {
  if (i >= step_.inputs.size() || step_.inputs[i] < 0) return empty_value();
  return frame_.slots[step_.inputs[i]];
}

Value KernelContextImpl::take_input_value(size_t i) {
  if (i >= step_.takeable.size() || !step_.takeable[i]) return input_value(i);
  return std::move(frame_.slots[step_.inputs[i]]);
}

const Tensor& KernelContextImpl::input(size_t i) const {
  const Value& v = input_value(i);
  return v.is_tensor() ? v.tensor() : empty_tensor();
}

Result<std::vector<Value>> KernelContextImpl::run_subgraph(const GraphBody& body, const std::vector<Value>& inputs) {
  XONNX_RETURN_IF_ERROR(state_.check_interrupt());  // a Loop of empty bodies runs no step
  // Every GraphBody is a Subgraph: only subgraph() above makes them.
  const Subgraph& graph = static_cast<const Subgraph&>(body);
  std::vector<Value> outputs;
  XONNX_RETURN_IF_ERROR(graph.execute_into(inputs, false, &frame_, &step_, outputs));
  return outputs;
}

Result<std::vector<Value>> KernelContextImpl::run_subgraph_consuming(const GraphBody& body,
                                                                     std::vector<Value>&& inputs) {
  XONNX_RETURN_IF_ERROR(state_.check_interrupt());
  const Subgraph& graph = static_cast<const Subgraph&>(body);
  std::vector<Value> outputs;
  XONNX_RETURN_IF_ERROR(graph.execute_into(inputs, true, &frame_, &step_, outputs));
  return outputs;
}

Result<Tensor*> KernelContextImpl::allocate(size_t i, DataType dtype, Shape shape, bool zero) {
  Value* slot = output_slot(i);
  if (!slot) return internal_error("output index ", i, " out of range (", step_.outputs.size(), " outputs)");
  const int64_t n = shape_numel(shape);
  if (n < 0) {
    return invalid_argument("output ", i, " shape ", shape_to_string(shape), " has a negative dimension or overflows");
  }
  const int64_t bytes = dtype == DataType::kString ? checked_mul(n, static_cast<int64_t>(sizeof(std::string)))
                                                   : dtype_storage_bytes(dtype, n);
  const int64_t cap = state_.options.load.tensor_cap();
  if (bytes < 0 || bytes > cap) {
    return resource_exhausted("output ", i, " of shape ", shape_to_string(shape), " ", dtype_name(dtype), " needs ",
                              describe_bytes(bytes), ", over the memory cap of ", describe_bytes(cap), " (",
                              state_.options.load.tensor_cap_name(), ")");
  }
  *slot = Value();  // an earlier run's value goes back to the pool first
  if (const Tensor* buffer = bound_buffer(i)) {
    if (buffer->dtype() != dtype || buffer->shape() != shape) {
      return invalid_argument("output '", step_.node->outputs[i], "' is bound to a ", dtype_name(buffer->dtype()), " ",
                              shape_to_string(buffer->shape()), " buffer, but the node produces ", dtype_name(dtype),
                              " ", shape_to_string(shape));
    }
    *slot = Value(*buffer);
    Tensor* t = slot->mutable_tensor();
    if (zero && t->nbytes() > 0) std::memset(t->raw_data(), 0, t->nbytes());
    return t;
  }
  if (dtype == DataType::kString || dtype_bits(dtype) == 0) {
    XONNX_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(dtype, std::move(shape)));
    *slot = Value(std::move(t));
  } else {
    XONNX_ASSIGN_OR_RETURN(auto storage, state_.buffers->acquire(static_cast<size_t>(bytes), zero));
    *slot = Value(Tensor(dtype, std::move(shape), std::move(storage)));
  }
  return slot->mutable_tensor();
}

Result<Tensor*> KernelContextImpl::allocate_output_over_input(size_t i, size_t in, DataType dtype, Shape shape) {
  Value* slot = output_slot(i);
  const bool takeable = in < step_.takeable.size() && step_.takeable[in];
  const Value& v = input_value(in);
  if (!slot || !takeable || !v.is_tensor() || bound_buffer(i)) return allocate(i, dtype, std::move(shape), false);
  const Tensor& t = v.tensor();
  const std::shared_ptr<Storage>& storage = t.storage();
  // Held by the input's slot and the pool only: a pool buffer no other value shares (the pool
  // holds fixed-size types only).
  const bool reusable = storage && storage.use_count() == 2 && t.byte_offset() == 0 && t.dtype() == dtype &&
                        t.numel() == shape_numel(shape) && state_.buffers->holds(*storage);
  if (!reusable) return allocate(i, dtype, std::move(shape), false);
  *slot = Value(Tensor(dtype, std::move(shape), storage));
  return slot->mutable_tensor();
}

const Tensor* KernelContextImpl::bound_buffer(size_t i) const {
  if (!bound_ || bound_->empty() || step_.outputs[i] < 0) return nullptr;
  const Tensor& b = (*bound_)[static_cast<size_t>(step_.outputs[i])];
  if (!b.defined()) return nullptr;
  if (step_.appends_in_place) return &b;
  const char* lo = static_cast<const char*>(b.raw_data());
  const char* hi = lo + b.nbytes();
  for (size_t k = 0; k < num_inputs(); ++k) {
    const Tensor& in = input(k);
    if (!in.defined() || in.nbytes() == 0) continue;
    const char* a = static_cast<const char*>(in.raw_data());
    if (a < hi && lo < a + in.nbytes()) return nullptr;
  }
  return &b;
}

}  // namespace xonnx
