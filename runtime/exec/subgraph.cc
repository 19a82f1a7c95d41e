#include "runtime/exec/subgraph.h"

#include <cstring>

#include <algorithm>
#include <chrono>
#include <functional>
#include <new>
#include <queue>
#include <set>
#include <sstream>

#include "runtime/core/checked.h"
#include "runtime/core/limits.h"
#include "runtime/ops/registry.h"

namespace xonnx {

namespace {

// Names a graph reads but does not define (inputs, initializers, node outputs), including
// those read by nested subgraphs: the values it needs from enclosing scopes.
void collect_free_names(const Graph& g, std::set<std::string>& out) {
  std::set<std::string> defined;
  for (const ValueInfo& v : g.inputs) defined.insert(v.name);
  for (const NamedTensor& t : g.initializers) defined.insert(t.name);
  for (const Node& n : g.nodes) defined.insert(n.outputs.begin(), n.outputs.end());
  auto use = [&](const std::string& name) {
    if (!name.empty() && !defined.count(name)) out.insert(name);
  };
  for (const Node& n : g.nodes) {
    for (const std::string& in : n.inputs) use(in);
    for (const Attribute& a : n.attributes) {
      std::set<std::string> inner;
      if (a.g) collect_free_names(*a.g, inner);
      for (const auto& sg : a.graphs) collect_free_names(*sg, inner);
      for (const std::string& name : inner) use(name);
    }
  }
  for (const ValueInfo& v : g.outputs) use(v.name);
}

std::set<std::string> implicit_inputs(const Node& n) {
  std::set<std::string> names;
  for (const Attribute& a : n.attributes) {
    if (a.g) collect_free_names(*a.g, names);
    for (const auto& sg : a.graphs) collect_free_names(*sg, names);
  }
  return names;
}

const Tensor& empty_tensor() {
  static const Tensor* t = new Tensor();
  return *t;
}
const Value& empty_value() {
  static const Value* v = new Value();
  return *v;
}

}  // namespace

Status SessionState::check_interrupt() const {
  if (cancelled.load(std::memory_order_relaxed)) return xonnx::cancelled("the run was cancelled (Session::cancel)");
  const int64_t deadline = deadline_ns.load(std::memory_order_relaxed);
  if (deadline != 0) {
    const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::steady_clock::now().time_since_epoch()).count();
    if (now > deadline) {
      return xonnx::cancelled("the run passed its deadline of ", options.run_timeout_seconds,
                       " s (run_timeout_seconds)");
    }
  }
  return Status::ok();
}

class KernelInitImpl final : public KernelInit {
 public:
  KernelInitImpl(const Node& node, int since, int64_t opset, const OpDef* reference, Subgraph& plan)
      : node_(node), since_(since), opset_(opset), reference_(reference), plan_(plan) {}
  const Node& node() const override { return node_; }
  int since_version() const override { return since_; }
  int64_t opset() const override { return opset_; }
  const Tensor* constant_input(size_t i) const override {
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
  void packed_constant_input(size_t i) const override {
    if (i < packed_.size() && constant_input(i)) packed_[i] = true;
  }
  // Whether the kernel the last factory returned packed input i (false before any call).
  bool packed(size_t i) const { return i < packed_.size() && packed_[i]; }
  void forget_packed() { packed_.assign(node_.inputs.size(), false); }
  ThreadPool& thread_pool() const override { return *plan_.state_->thread_pool; }
  Result<std::unique_ptr<Kernel>> create_reference_kernel() const override {
    if (!reference_ || reference_->backend != Backend::kReference) {
      return unsupported("no reference kernel for ", node_.op_type);
    }
    return reference_->create(*this);
  }
  Result<std::shared_ptr<GraphBody>> subgraph(const std::string& attr_name) const override {
    const Attribute* a = node_.find_attr(attr_name);
    if (!a) return invalid_model("required graph attribute '", attr_name, "' is missing");
    if (a->type != AttrType::kGraph || !a->g) {
      return invalid_model("attribute '", attr_name, "' must be GRAPH, got ", attr_type_name(a->type));
    }
    auto sub = Subgraph::compile(*a->g, &plan_, plan_.state_);
    if (!sub.is_ok()) return sub.status().with_context("in subgraph '" + attr_name + "': ");
    return std::shared_ptr<GraphBody>(std::move(sub).value());
  }

 private:
  const Node& node_;
  int since_;
  int64_t opset_;
  const OpDef* reference_;
  Subgraph& plan_;
  mutable std::vector<bool> packed_;
};

namespace {
// A factory that packs weights may run out of memory: the error then names the node (the
// caller adds its label) instead of surfacing as a bare bad_alloc at session creation.
Result<std::unique_ptr<Kernel>> create_kernel(const OpDef& def, const KernelInit& init) {
  try {
    return def.create(init);
  } catch (const std::bad_alloc&) {
    return resource_exhausted("out of memory creating the ", backend_name(def.backend), " kernel");
  }
}
}  // namespace

class KernelContextImpl final : public KernelContext {
 public:
  KernelContextImpl(const Subgraph::Step& step, Frame& frame, const SessionState& state,
                    const std::vector<Tensor>* bound = nullptr)
      : step_(step), frame_(frame), state_(state), bound_(bound) {}

  size_t num_inputs() const override { return step_.inputs.size(); }
  bool has_input(size_t i) const override {
    return i < step_.inputs.size() && step_.inputs[i] >= 0 && !frame_.slots[step_.inputs[i]].empty();
  }
  const Value& input_value(size_t i) const override {
    if (i >= step_.inputs.size() || step_.inputs[i] < 0) return empty_value();
    return frame_.slots[step_.inputs[i]];
  }
  const Tensor& input(size_t i) const override {
    const Value& v = input_value(i);
    return v.is_tensor() ? v.tensor() : empty_tensor();
  }
  size_t num_outputs() const override { return step_.outputs.size(); }
  bool output_wanted(size_t i) const override {
    return i < step_.outputs.size() && step_.outputs[i] >= 0;
  }
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
  void set_output(size_t i, Tensor tensor) override {
    if (Value* slot = output_slot(i)) *slot = Value(std::move(tensor));
  }
  void set_output_value(size_t i, Value value) override {
    if (Value* slot = output_slot(i)) *slot = std::move(value);
  }
  const RunLimits& limits() const override { return state_.limits; }
  Status check_interrupt() const override { return state_.check_interrupt(); }
  Result<std::vector<Value>> run_subgraph(const GraphBody& body,
                                          const std::vector<Value>& inputs) override {
    XONNX_RETURN_IF_ERROR(state_.check_interrupt());  // a Loop of empty bodies runs no step
    // Every GraphBody is a Subgraph: only subgraph() above makes them.
    const Subgraph& graph = static_cast<const Subgraph&>(body);
    std::vector<Value> outputs;
    XONNX_RETURN_IF_ERROR(graph.execute_into(inputs, &frame_, &step_, outputs));
    return outputs;
  }

 private:
  Result<Tensor*> allocate(size_t i, DataType dtype, Shape shape, bool zero) {
    Value* slot = output_slot(i);
    if (!slot) return internal_error("output index ", i, " out of range (", step_.outputs.size(), " outputs)");
    const int64_t n = shape_numel(shape);
    if (n < 0) {
      return invalid_argument("output ", i, " shape ", shape_to_string(shape),
                              " has a negative dimension or overflows");
    }
    const int64_t bytes = dtype == DataType::kString ? checked_mul(n, static_cast<int64_t>(sizeof(std::string)))
                                                     : dtype_storage_bytes(dtype, n);
    const int64_t cap = state_.options.load.tensor_cap();
    if (bytes < 0 || bytes > cap) {
      return resource_exhausted("output ", i, " of shape ", shape_to_string(shape), " ",
                                dtype_name(dtype), " needs ", describe_bytes(bytes),
                                ", over the memory cap of ", describe_bytes(cap), " (",
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

  // The caller's buffer for output i when it is bound and this kernel may write it directly:
  // the op appends into an output that is also its input (appends_in_place), or the buffer
  // overlaps none of the node's inputs.
  const Tensor* bound_buffer(size_t i) const {
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

  const Subgraph::Step& step_;
  Frame& frame_;
  const SessionState& state_;
  const std::vector<Tensor>* bound_;
};

void Subgraph::drop_resident_constant(int slot) {
  for (auto& [s, tensor] : constants_) {
    if (s != slot || !tensor.storage()) continue;
    // Held by the graph's initializer and by constants_ only: no other session or kernel can
    // hold a pointer into a copy that is about to be freed.
    if (tensor.is_view_of_external_memory() || tensor.storage().use_count() == 2) {
      tensor.storage()->drop_resident();
    }
  }
}

namespace {
// Ops whose kernels (reference and fast) accept a caller-bound output that is also one of their
// inputs and write only what is new: GroupQueryAttention appends K/V rows into a present buffer
// that is the past buffer (ORT GenAI's past_present_share_buffer). Every other op gets a fresh
// buffer for such an output, copied into the bound one after it.
bool appends_in_place(const Node& n) {
  return n.domain == "com.microsoft" && n.op_type == "GroupQueryAttention";
}
}  // namespace

int Subgraph::slot(const std::string& name) const {
  auto it = slot_of_.find(name);
  return it == slot_of_.end() ? -1 : it->second;
}

Result<int> Subgraph::resolve(const std::string& name) {
  const int local = slot(name);
  if (local >= 0) return local;
  int depth = 1;
  for (const Subgraph* s = parent_; s; s = s->parent_, ++depth) {
    const int outer = s->slot(name);
    if (outer >= 0) {
      const int mine = num_slots_++;
      slot_of_[name] = mine;
      captures_.push_back({mine, depth, outer});
      return mine;
    }
  }
  return -1;
}

Result<std::shared_ptr<Subgraph>> Subgraph::compile(const Graph& graph, const Subgraph* parent,
                                                    std::shared_ptr<const SessionState> state) {
  std::shared_ptr<Subgraph> plan(new Subgraph());
  plan->parent_ = parent;
  plan->state_ = std::move(state);
  XONNX_RETURN_IF_ERROR(plan->build(graph));
  return plan;
}

Status Subgraph::build(const Graph& graph) {
  graph_ = &graph;
  // 1. Slots for graph inputs, initializers and node outputs; one producer per name.
  for (const ValueInfo& v : graph.inputs) {
    if (v.name.empty()) return invalid_model("a graph input has an empty name");
    if (slot_of_.count(v.name)) return invalid_model("graph input '", v.name, "' is declared twice");
    slot_of_[v.name] = num_slots_;
    input_slots_.push_back(num_slots_++);
  }
  for (const NamedTensor& init : graph.initializers) {
    int s = slot(init.name);
    if (s < 0) {
      s = num_slots_++;
      slot_of_[init.name] = s;
    }
    constants_.emplace_back(s, init.tensor);
  }
  std::unordered_map<std::string, size_t> producer;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& n = graph.nodes[i];
    for (const std::string& o : n.outputs) {
      if (o.empty()) continue;
      if (slot_of_.count(o)) {
        const bool by_node = producer.count(o) != 0;
        return invalid_model(n.describe(), ": output '", o, "' is already produced by ",
                             by_node ? graph.nodes[producer[o]].describe()
                                     : std::string("a graph input or initializer"),
                             " (duplicate producer)");
      }
      slot_of_[o] = num_slots_++;
      producer[o] = i;
    }
  }

  // 2. Every name used must be defined here or in an enclosing scope.
  std::vector<std::vector<std::string>> deps(graph.nodes.size());
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& n = graph.nodes[i];
    std::vector<std::string> used(n.inputs.begin(), n.inputs.end());
    for (const std::string& name : implicit_inputs(n)) used.push_back(name);
    for (const std::string& name : used) {
      if (name.empty()) continue;
      XONNX_ASSIGN_OR_RETURN(int s, resolve(name));
      if (s < 0) {
        return invalid_model(n.describe(), " uses '", name,
                             "', which is not a graph input, an initializer, or the output of any node");
      }
      deps[i].push_back(name);
    }
  }
  for (const ValueInfo& v : graph.outputs) {
    XONNX_ASSIGN_OR_RETURN(int s, resolve(v.name));
    if (s < 0) return invalid_model("graph output '", v.name, "' is never produced");
    output_slots_.push_back(s);
  }

  // 3. Topological order (stable: keeps file order where the graph allows it).
  std::vector<int> pending(graph.nodes.size(), 0);
  std::vector<std::vector<size_t>> users(graph.nodes.size());
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    for (const std::string& name : deps[i]) {
      auto it = producer.find(name);
      if (it == producer.end()) continue;
      if (it->second == i) {
        return invalid_model(graph.nodes[i].describe(), " reads its own output '", name, "' (cycle)");
      }
      ++pending[i];
      users[it->second].push_back(i);
    }
  }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> ready;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (pending[i] == 0) ready.push(i);
  }
  std::vector<size_t> order;
  while (!ready.empty()) {
    const size_t i = ready.top();
    ready.pop();
    order.push_back(i);
    for (size_t u : users[i]) {
      if (--pending[u] == 0) ready.push(u);
    }
  }
  if (order.size() != graph.nodes.size()) {
    std::ostringstream names;
    int shown = 0;
    for (size_t i = 0; i < graph.nodes.size() && shown < 3; ++i) {
      if (pending[i] > 0) names << (shown++ ? ", " : "") << graph.nodes[i].describe();
    }
    return invalid_model("the graph has a cycle involving ", names.str());
  }

  // 4. Kernels, in order. An initializer whose readers all packed it gives its memory back
  // after the last of them is created, so packed and original weights never all coexist.
  std::vector<int> readers_left(num_slots_, 0);
  std::vector<bool> pinned(num_slots_, false);  // some reader needs the original resident
  for (size_t i : order) {
    for (const std::string& in : graph.nodes[i].inputs) {
      if (!in.empty() && slot(in) >= 0) ++readers_left[slot(in)];
    }
    for (const std::string& name : implicit_inputs(graph.nodes[i])) {
      if (slot(name) >= 0) pinned[slot(name)] = true;
    }
  }
  for (int s : output_slots_) pinned[s] = true;
  for (int s : input_slots_) pinned[s] = true;  // an input may override an initializer
  const OpRegistry& registry = OpRegistry::global();
  for (size_t i : order) {
    const Node& n = graph.nodes[i];
    int64_t opset = n.opset;
    if (opset == 0) {
      auto it = state_->opset_imports.find(n.domain);
      if (it == state_->opset_imports.end()) {
        return invalid_model(n.describe(), ": domain '", n.domain, "' is not imported by the model");
      }
      opset = it->second;
    }
    const std::string label = n.describe() + " [opset " + std::to_string(opset) + "]: ";
    auto resolved = registry.resolve(n.domain, n.op_type, opset);
    if (!resolved.is_ok()) return resolved.status().with_context(label);
    const OpDef& def = *resolved->def;
    const int n_in = static_cast<int>(n.inputs.size());
    const int n_out = static_cast<int>(n.outputs.size());
    if (n_in < def.min_inputs || (def.max_inputs >= 0 && n_in > def.max_inputs)) {
      return invalid_model(label, "has ", n_in, " inputs; ", n.op_type, " takes ", def.min_inputs,
                           def.max_inputs == def.min_inputs ? "" : (def.max_inputs < 0 ? " or more" : " to " + std::to_string(def.max_inputs)));
    }
    if (n_out < def.min_outputs || (def.max_outputs >= 0 && n_out > def.max_outputs)) {
      return invalid_model(label, "has ", n_out, " outputs; ", n.op_type, " gives ", def.min_outputs,
                           def.max_outputs == def.min_outputs ? "" : (def.max_outputs < 0 ? " or more" : " to " + std::to_string(def.max_outputs)));
    }
    // Fastest candidate first; a fast factory that declines (kUnsupported) falls through to
    // the next, and the reason is kept for the profile. Any other error of a fast factory, and
    // the reference kernel's, fails the node.
    KernelInitImpl init(n, resolved->since_version, opset, resolved->def, *this);
    Step step;
    for (const OpDef* candidate : resolved->candidates) {
      if (candidate->backend == Backend::kXnnpack && state_->options.disable_xnnpack) continue;
      if (candidate->backend == Backend::kOptimized && state_->options.disable_optimized) continue;
      if (candidate->available && !candidate->available()) continue;  // e.g. no AVX-512 here
      init.forget_packed();
      auto kernel = create_kernel(*candidate, init);
      if (kernel.is_ok()) {
        step.kernel = std::move(kernel).value();
        step.backend = candidate->backend;
        break;
      }
      const Status& why = kernel.status();
      if (candidate->backend == Backend::kReference || why.code() != StatusCode::kUnsupported) {
        const std::string who = candidate->backend == Backend::kReference
                                    ? std::string()
                                    : std::string("(") + backend_name(candidate->backend) + " kernel) ";
        return why.with_context(label + who);
      }
      if (!step.declined.empty()) step.declined += "; ";
      step.declined += std::string(backend_name(candidate->backend)) + ": " + why.message();
    }
    if (!step.kernel) return internal_error(label, "no kernel accepted the node");
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const int s = n.inputs[k].empty() ? -1 : slot(n.inputs[k]);
      if (s < 0) continue;
      pinned[s] = pinned[s] || !init.packed(k);
      if (--readers_left[s] == 0 && !pinned[s]) drop_resident_constant(s);
    }
    step.node = &n;
    step.label = label;
    step.name = n.name.empty() ? n.op_type + "#" + std::to_string(i) : n.name;
    step.op = n.domain.empty() ? n.op_type : n.domain + ":" + n.op_type;
    step.unnamed_outputs.resize(n.outputs.size());
    step.appends_in_place = appends_in_place(n);
    for (const std::string& in : n.inputs) step.inputs.push_back(in.empty() ? -1 : slot(in));
    for (const std::string& o : n.outputs) step.outputs.push_back(o.empty() ? -1 : slot(o));
    if (n.domain.empty() && n.op_type == "Constant" && step.outputs.size() == 1 && step.outputs[0] >= 0) {
      // Evaluated once here, so later kernels see the value as a constant input (e.g. Clip
      // bounds, Reshape shapes) and run() does not repeat it.
      Frame scratch;
      scratch.slots.resize(num_slots_);
      KernelContextImpl ctx(step, scratch, *state_);
      Status s = step.kernel->run(ctx);
      if (!s.is_ok()) return s.with_context(label);
      const Value& v = scratch.slots[step.outputs[0]];
      if (!v.is_tensor()) return internal_error(label, "Constant produced no tensor");
      constants_.emplace_back(step.outputs[0], v.tensor());
      continue;
    }
    steps_.push_back(std::move(step));
  }

  // 5. Liveness: free every slot after its last reader, unless it is a graph output.
  std::vector<int> last_use(num_slots_, -1);
  for (size_t s = 0; s < steps_.size(); ++s) {
    for (int in : steps_[s].inputs) {
      if (in >= 0) last_use[in] = static_cast<int>(s);
    }
    for (const std::string& name : implicit_inputs(*steps_[s].node)) {
      const int in = slot(name);
      if (in >= 0) last_use[in] = static_cast<int>(s);
    }
    // An output nobody reads dies right after its producer.
    for (int o : steps_[s].outputs) {
      if (o >= 0 && last_use[o] < static_cast<int>(s)) last_use[o] = static_cast<int>(s);
    }
  }
  for (int o : output_slots_) last_use[o] = -1;
  for (int s = 0; s < num_slots_; ++s) {
    if (last_use[s] >= 0) steps_[last_use[s]].release.push_back(s);
  }
  return Status::ok();
}

Result<std::vector<Value>> Subgraph::execute(const std::vector<Value>& inputs,
                                             const Frame* parent) const {
  std::vector<Value> outputs;
  XONNX_RETURN_IF_ERROR(execute_into(inputs, parent, nullptr, outputs));
  return outputs;
}

Status Subgraph::execute_into(const std::vector<Value>& inputs, const Frame* parent,
                              std::vector<Value>& outputs) const {
  return execute_into(inputs, parent, nullptr, outputs);
}

Status Subgraph::run_profiled(const Step& step, KernelContext& ctx, const Frame& frame,
                              Profiler& profiler) const {
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
  profiler.nested_us_ =
      outer_nested + std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  return s;
}

Status Subgraph::execute_into(const std::vector<Value>& inputs, const Frame* parent,
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
    if (!inputs[i].empty()) frame.slots[input_slots_[i]] = inputs[i];
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
                              shape_to_string(buffer.shape()), " buffer, but the graph produces ", dtype_name(t.dtype()),
                              " ", shape_to_string(t.shape()));
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
        return internal_error(step.label, "kernel did not produce output ", o, " ('",
                              step.node->outputs[o], "')");
      }
    }
    for (Value& v : step.unnamed_outputs) v = Value();
    for (int r : step.release) frame.slots[r] = Value();
  }
  return Status::ok();
}

}  // namespace xonnx
