// Running a planned Subgraph: one frame of slots per run, the steps in order with their
// inputs released after their last use, profiling, and caller-bound outputs.
#include "runtime/exec/subgraph.h"

#include <chrono>

#include "runtime/exec/kernel_context.h"

namespace xonnx {

Status SessionState::check_interrupt() const {
  if (cancelled.load(std::memory_order_relaxed)) return xonnx::cancelled("the run was cancelled (Session::cancel)");
  const int64_t deadline = deadline_ns.load(std::memory_order_relaxed);
  if (deadline != 0) {
    const int64_t now =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count();
    if (now > deadline) {
      return xonnx::cancelled("the run passed its deadline of ", options.run_timeout_seconds,
                              " s (run_timeout_seconds)");
    }
  }
  return Status::ok();
}

Result<std::vector<Value>> Subgraph::execute(const std::vector<Value>& inputs, const Frame* parent) const {
  std::vector<Value> outputs;
  XONNX_RETURN_IF_ERROR(execute_into(inputs, false, parent, nullptr, outputs));
  return outputs;
}

Status Subgraph::execute_into(const std::vector<Value>& inputs, const Frame* parent,
                              std::vector<Value>& outputs) const {
  return execute_into(inputs, false, parent, nullptr, outputs);
}

Status Subgraph::run_profiled(const Step& step, KernelContext& ctx, const Frame& frame, Profiler& profiler) const {
  // Nodes of subgraphs this kernel runs add their time (and their recording's) to nested_us_;
  // the kernel's own (self) time is its wall time minus that.
  using Clock = std::chrono::steady_clock;
  const double outer_nested = profiler.nested_us_;
  profiler.nested_us_ = 0;
  const FallbackCounts before = step.kernel->fallbacks();
  const auto t0 = Clock::now();
  Status s = step.kernel->run(ctx);
  const auto t1 = Clock::now();
  const double us = std::chrono::duration<double, std::micro>(t1 - t0).count();
  if (s.is_ok()) {
    const double self_us = us - profiler.nested_us_;
    const FallbackCounts after = step.kernel->fallbacks();
    profiler.entries_.push_back({step.name, step.op, frame.scope, step.backend, us, self_us, step.declined,
                                 after.uncovered != before.uncovered, after.nonfinite != before.nonfinite});
  }
  profiler.nested_us_ = outer_nested + std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  return s;
}

Status Subgraph::execute_into(const std::vector<Value>& inputs, bool take_inputs, const Frame* parent,
                              const Step* owner, std::vector<Value>& outputs) const {
  if (inputs.size() > input_slots_.size()) {
    return invalid_argument("graph takes ", input_slots_.size(), " inputs, got ", inputs.size());
  }
  Frame fresh;
  const bool reuse = !frame_busy_;
  Frame& frame = reuse ? frame_ : fresh;
  frame_busy_ = frame_busy_ || reuse;
  // Every slot is emptied on the way out (success or error), so tensors go back to the pool.
  struct Cleanup {
    Frame& frame;
    bool& busy;
    bool reuse;
    ~Cleanup() {
      for (Value& v : frame.slots) v = Value();
      if (reuse) busy = false;
    }
  } cleanup{frame, frame_busy_, reuse};

  Profiler* const profiler = state_->profiler;
  frame.parent = parent;
  frame.scope.clear();
  if (profiler && owner) {
    frame.scope = parent && !parent->scope.empty() ? parent->scope + " > " + owner->name : owner->name;
  }
  frame.slots.resize(num_slots_);
  for (const auto& [s, t] : constants_) frame.slots[s] = Value(t);
  for (const Capture& c : captures_) {
    const Frame* f = parent;
    for (int d = 1; d < c.depth && f; ++d) f = f->parent;
    if (!f) return internal_error("captured value has no enclosing frame");
    frame.slots[c.slot] = f->slots[c.outer_slot];
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].empty()) continue;
    if (take_inputs) {
      frame.slots[input_slots_[i]] = std::move(const_cast<Value&>(inputs[i]));
    } else {
      frame.slots[input_slots_[i]] = inputs[i];
    }
  }
  XONNX_RETURN_IF_ERROR(run_steps(frame));
  if (!bound_.empty()) XONNX_RETURN_IF_ERROR(settle_bound_outputs(frame));
  outputs.resize(output_slots_.size());
  for (size_t i = 0; i < output_slots_.size(); ++i) outputs[i] = frame.slots[output_slots_[i]];
  return Status::ok();
}

void Subgraph::bind_output(size_t index, Tensor buffer) {
  if (bound_.empty()) bound_.resize(static_cast<size_t>(num_slots_));
  bound_[static_cast<size_t>(output_slots_[index])] = std::move(buffer);
}

Status Subgraph::settle_bound_outputs(Frame& frame) const {
  for (size_t i = 0; i < output_slots_.size(); ++i) {
    const Tensor& buffer = bound_[static_cast<size_t>(output_slots_[i])];
    if (!buffer.defined()) continue;
    Value& v = frame.slots[output_slots_[i]];
    const std::string& name = graph_->outputs[i].name;
    if (!v.is_tensor()) return invalid_argument("output '", name, "' is bound to a buffer but is not a tensor");
    const Tensor& t = v.tensor();
    if (t.raw_data() == buffer.raw_data() && t.shape() == buffer.shape()) continue;  // written in place
    if (t.dtype() != buffer.dtype() || t.shape() != buffer.shape()) {
      return invalid_argument("output '", name, "' is bound to a ", dtype_name(buffer.dtype()), " ",
                              shape_to_string(buffer.shape()), " buffer, but the graph produces ",
                              dtype_name(t.dtype()), " ", shape_to_string(t.shape()));
    }
    if (t.nbytes() > 0) std::memmove(const_cast<Tensor&>(buffer).raw_data(), t.raw_data(), t.nbytes());
    v = Value(buffer);
  }
  return Status::ok();
}

Status Subgraph::run_steps(Frame& frame) const {
  Profiler* const profiler = state_->profiler;
  for (const Step& step : steps_) {
    Status live = state_->check_interrupt();
    if (!live.is_ok()) return live.with_context(step.label);
    KernelContextImpl ctx(step, frame, *state_, &bound_);
    Status s = profiler ? run_profiled(step, ctx, frame, *profiler) : step.kernel->run(ctx);
    if (!s.is_ok()) return s.with_context(step.label);
    for (size_t o = 0; o < step.outputs.size(); ++o) {
      if (step.outputs[o] >= 0 && frame.slots[step.outputs[o]].empty()) {
        return internal_error(step.label, "kernel did not produce output ", o, " ('", step.node->outputs[o], "')");
      }
    }
    for (Value& v : step.unnamed_outputs) v = Value();
    for (int r : step.release) frame.slots[r] = Value();
  }
  return Status::ok();
}

}  // namespace xonnx
