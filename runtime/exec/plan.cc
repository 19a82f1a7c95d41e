// Planning a Subgraph: slots for every value, scope resolution of names read from enclosing
// graphs, topological order, one kernel per node (fastest candidate that accepts it), and
// liveness. Running the plan is interpreter.cc's.
#include "runtime/exec/subgraph.h"

#include <algorithm>
#include <functional>
#include <new>
#include <set>

#include "runtime/core/log.h"
#include "runtime/exec/kernel_context.h"
#include "runtime/ops/registry.h"
#include "runtime/passes/validate.h"

namespace xonnx {

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

namespace {

std::set<std::string> implicit_inputs(const Node& n) {
  std::set<std::string> names;
  collect_free_names_of_bodies(n, names);
  return names;
}

}  // namespace

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
bool appends_in_place(const Node& n) { return n.domain == "com.microsoft" && n.op_type == "GroupQueryAttention"; }
}  // namespace

int Subgraph::slot(const std::string& name) const {
  auto it = slot_of_.find(name);
  return it == slot_of_.end() ? -1 : it->second;
}

const TypeInfo* Subgraph::declared_type(const std::string& name) {
  if (!declared_types_built_) {
    declared_types_built_ = true;
    for (const auto* list : {&graph_->inputs, &graph_->value_info}) {
      for (const ValueInfo& v : *list) declared_types_.emplace(v.name, &v.type);
    }
  }
  auto it = declared_types_.find(name);
  return it == declared_types_.end() ? nullptr : it->second;
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
        return invalid_model(
            n.describe(), ": output '", o, "' is already produced by ",
            by_node ? graph.nodes[producer[o]].describe() : std::string("a graph input or initializer"),
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
  XONNX_ASSIGN_OR_RETURN(std::vector<size_t> order, topological_order(graph, deps, producer));

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
    // The op list's arity (runtime/ops/ops.def).
    XONNX_RETURN_IF_ERROR(
        check_arity(*resolved->spec, label, static_cast<int>(n.inputs.size()), static_cast<int>(n.outputs.size())));
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
    if (!step.declined.empty()) {  // a warning when the node ends on its reference kernel
      log(step.backend == Backend::kReference ? LogLevel::kWarning : LogLevel::kInfo, label, "runs on the ",
          backend_name(step.backend), " kernel; declined by ", step.declined);
    }
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
  // An input the kernel may take: released here, and not read by another input or a subgraph
  // of the same node (a body capturing it reads the slot while the kernel runs).
  for (size_t s = 0; s < steps_.size(); ++s) {
    Step& step = steps_[s];
    step.takeable.assign(step.inputs.size(), false);
    std::vector<int> implicit;
    for (const std::string& name : implicit_inputs(*step.node)) implicit.push_back(slot(name));
    for (size_t i = 0; i < step.inputs.size(); ++i) {
      const int in = step.inputs[i];
      if (in < 0 || last_use[in] != static_cast<int>(s)) continue;
      if (std::count(step.inputs.begin(), step.inputs.end(), in) != 1) continue;
      if (std::find(implicit.begin(), implicit.end(), in) != implicit.end()) continue;
      step.takeable[i] = true;
    }
  }
  return Status::ok();
}

}  // namespace xonnx
