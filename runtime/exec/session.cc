#include "runtime/exec/session.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <set>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "runtime/core/environment.h"
#include "runtime/passes/layout_nhwc.h"
#include "runtime/passes/qdq_fusion.h"
#include "runtime/passes/session_passes.h"
#include "runtime/passes/validate.h"
#include "runtime/exec/subgraph.h"

namespace xonnx {

namespace {

// No exception may cross the public API (std::bad_alloc, std::regex_error ...).
template <typename Fn>
auto guarded(const char* what, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const std::bad_alloc&) {
    return resource_exhausted(what, ": out of memory");
  } catch (const std::exception& e) {
    return internal_error(what, ": unexpected exception: ", e.what());
  } catch (...) {
    return internal_error(what, ": unexpected exception");
  }
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Runs the optimization passes of `level` over `model` in place; the report lists them.
Status optimize_model(Model& model, const SessionOptions& options, passes::PipelineResult& report) {
  std::vector<std::shared_ptr<Storage>> weights;  // what the model held before the passes
  for (const NamedTensor& t : model.graph.initializers) {
    if (t.tensor.storage()) weights.push_back(t.tensor.storage());
  }
  auto result = passes::optimize_for_session(model, options.optimization, options.load.max_tensor_bytes,
                                             !options.disable_optimized);
  // Weights the passes replaced (a Transpose or Cast folded into a new constant) were read
  // from the file mapping: their pages go back to the OS once nothing else holds them.
  for (const std::shared_ptr<Storage>& s : weights) {
    if (s.use_count() == 1) s->drop_resident();
  }
  if (!result.is_ok()) {
    return result.status().with_context(std::string("optimizing the graph (level ") +
                                        passes::opt_level_name(options.optimization) +
                                        "; optimization level none skips it): ");
  }
  report = std::move(result).value();
  return Status::ok();
}

int64_t qdq_rewrites(const QdqFusionStats& s) { return s.total(); }

int64_t nhwc_rewrites(const NhwcLayoutStats& s) { return s.nhwc_ops; }

// A session-time rewrite outside the pass table, as one more row of the report.
passes::PassStats rewrite_row(const char* name, double ms, int64_t rewritten, const std::string& what) {
  passes::PassStats row;
  row.name = name;
  row.runs = 1;
  row.changed_runs = rewritten > 0 ? 1 : 0;
  row.ms = ms;
  if (rewritten > 0) row.notes.push_back(what + ": " + std::to_string(rewritten));
  return row;
}

Status check_input(const ValueInfo& info, const Value& v) {
  const TypeInfo& t = info.type;
  if (v.empty()) return invalid_argument("input '", info.name, "' is missing");
  if (t.kind == TypeInfo::Kind::kTensor) {
    if (!v.is_tensor()) return invalid_argument("input '", info.name, "' must be a tensor");
    const Tensor& x = v.tensor();
    if (t.elem_type != DataType::kUndefined && x.dtype() != t.elem_type) {
      return invalid_argument("input '", info.name, "' must be ", dtype_name(t.elem_type), ", got ",
                              dtype_name(x.dtype()));
    }
    if (t.has_shape) {
      if (x.rank() != t.dims.size()) {
        return invalid_argument("input '", info.name, "' must have rank ", t.dims.size(), ", got shape ",
                                shape_to_string(x.shape()));
      }
      for (size_t d = 0; d < t.dims.size(); ++d) {
        if (t.dims[d].known() && t.dims[d].value != x.dim(d)) {
          return invalid_argument("input '", info.name, "' dimension ", d, " must be ", t.dims[d].value, ", got shape ",
                                  shape_to_string(x.shape()));
        }
      }
    }
  } else if (t.kind == TypeInfo::Kind::kSequence && !v.is_sequence()) {
    return invalid_argument("input '", info.name, "' must be a sequence");
  }
  return Status::ok();
}

// Arms the limits of one run: its deadline (run_timeout_seconds) and a fresh cancel flag.
void start_deadline(SessionState& state) {
  state.cancelled.store(false, std::memory_order_relaxed);
  int64_t deadline = 0;
  if (state.options.run_timeout_seconds > 0) {
    const auto now = std::chrono::steady_clock::now().time_since_epoch();
    deadline = std::chrono::duration_cast<std::chrono::nanoseconds>(now).count() +
               static_cast<int64_t>(std::min(state.options.run_timeout_seconds, 1e9) * 1e9);
  }
  state.deadline_ns.store(deadline, std::memory_order_relaxed);
}

}  // namespace

Session::~Session() = default;

Result<std::unique_ptr<Session>> Session::create(const std::string& path, const SessionOptions& options) {
  return guarded("creating session", [&]() -> Result<std::unique_ptr<Session>> {
    XONNX_ASSIGN_OR_RETURN(Model model, load_model(path, options.load));
    return create_from_model(std::move(model), options);
  });
}

Result<std::unique_ptr<Session>> Session::create_from_memory(const void* data, size_t size,
                                                             const SessionOptions& options) {
  return guarded("creating session", [&]() -> Result<std::unique_ptr<Session>> {
    XONNX_ASSIGN_OR_RETURN(Model model, load_model_from_memory(data, size, "", options.load));
    return create_from_model(std::move(model), options);
  });
}

Result<std::unique_ptr<Session>> Session::create_from_model(Model model, const SessionOptions& options) {
  return guarded("creating session", [&]() -> Result<std::unique_ptr<Session>> {
    if (options.num_threads < 1) return invalid_argument("num_threads must be >= 1");
    std::unique_ptr<Session> session(new Session());
    session->model_ = std::move(model);
    session->options_ = options;
    if (Status s = apply_output_ranges(session->model_, options.output_ranges); !s.is_ok()) {
      return s.with_context("SessionOptions.output_ranges: ");
    }
    auto state = std::make_shared<SessionState>();
    state->options = options;
    const KernelOverrides env = kernel_overrides();  // CI runs every kernel path this way
    state->options.disable_xnnpack |= env.disable_xnnpack;
    state->options.disable_optimized |= env.disable_optimized;
    state->thread_pool = std::make_unique<ThreadPool>(options.num_threads);
    state->buffers = std::make_unique<BufferPool>(options.load.max_memory_bytes);
    state->limits = {options.max_loop_iterations, options.load.max_memory_bytes, options.load.tensor_cap()};
    state->opset_imports = session->model_.opset_imports;
    session->state_ = state;
    const Graph& g = session->model_.graph;
    std::set<std::string> initialized;
    for (const NamedTensor& t : g.initializers) initialized.insert(t.name);
    for (const ValueInfo& v : g.inputs) {
      if (!initialized.count(v.name)) session->inputs_.push_back(v);
    }
    session->outputs_ = g.outputs;
    // Graph inputs that are initializers (IR < 4 style) are bound to their constants.
    Graph& mutable_graph = session->model_.graph;
    std::vector<ValueInfo> kept;
    for (const ValueInfo& v : mutable_graph.inputs) {
      if (!initialized.count(v.name)) kept.push_back(v);
    }
    mutable_graph.inputs = std::move(kept);
    passes::PipelineResult& report = session->optimization_;
    // Before the passes: they compute with these sizes too.
    XONNX_RETURN_IF_ERROR(check_window_attributes(mutable_graph, "graph '" + mutable_graph.name + "'"));
    XONNX_RETURN_IF_ERROR(optimize_model(session->model_, state->options, report));
    state->opset_imports = session->model_.opset_imports;  // a fusion may import com.microsoft
    if (!state->options.disable_xnnpack) {                 // integer QDQ groups, NHWC regions for XNNPACK
      auto t0 = std::chrono::steady_clock::now();
      // A selective build without DequantizeLinear, MatMulInteger or ConvInteger runs no graph
      // this rewrite would change.
      if constexpr (op_selected("", "DequantizeLinear") || op_selected("", "MatMulInteger") ||
                    op_selected("", "ConvInteger")) {
        XONNX_ASSIGN_OR_RETURN(QdqFusionStats qdq, apply_qdq_fusion(mutable_graph, session->model_.opset_imports));
        report.passes.push_back(rewrite_row("qdq-fusion", ms_since(t0), qdq_rewrites(qdq), "QDQ rewrites"));
        t0 = std::chrono::steady_clock::now();
      }
      const OpRegistry& registry = OpRegistry::global();
      if (nhwc_layout_pays(registry, !state->options.disable_optimized)) {
        NhwcLayoutOptions layout = fast_layout_fusions(registry);
        if (state->options.disable_optimized) {  // no own-kernel merges; XNNPACK's Conv takes a residual too
          NhwcLayoutOptions xnnpack_only;
          xnnpack_only.fuse_residual_add = layout.fuse_residual_add;
          xnnpack_only.lift_1d = layout.lift_1d;
          layout = xnnpack_only;
        }
        XONNX_ASSIGN_OR_RETURN(NhwcLayoutStats nhwc,
                               apply_nhwc_layout(mutable_graph, session->model_.opset_imports, layout));
        report.passes.push_back(rewrite_row("layout-nhwc", ms_since(t0), nhwc_rewrites(nhwc), "nodes moved to NHWC"));
      }
    }
    XONNX_ASSIGN_OR_RETURN(session->plan_, Subgraph::compile(mutable_graph, nullptr, state));
    if (state->packings_reused > 0) {
      report.passes.push_back(
          rewrite_row("shared-packing", 0, state->packings_reused, "kernels reading another kernel's packed weights"));
    }
    return session;
  });
}

Result<std::vector<Value>> Session::run(const std::vector<Value>& inputs) {
  std::vector<Value> outputs;
  XONNX_RETURN_IF_ERROR(run(inputs, outputs));
  return outputs;
}

Status Session::run(const std::vector<Value>& inputs, std::vector<Value>& outputs) {
  return guarded("running session", [&]() -> Status {
    std::lock_guard<std::mutex> lock(run_mutex_);
    return run_locked(inputs, outputs);
  });
}

Status Session::run_bound(const std::vector<Value>& inputs, const std::vector<std::pair<std::string, Tensor>>& bound,
                          std::vector<Value>& outputs) {
  return guarded("running session", [&]() -> Status {
    std::lock_guard<std::mutex> lock(run_mutex_);
    // These bindings replace bind_output()'s for this run only, whatever way it ends.
    std::vector<Tensor> previous = plan_->take_output_bindings();
    struct Restore {
      Subgraph& plan;
      std::vector<Tensor>& previous;
      ~Restore() { plan.set_output_bindings(std::move(previous)); }
    } restore{*plan_, previous};
    for (const auto& [name, buffer] : bound) XONNX_RETURN_IF_ERROR(bind_output_locked(name, buffer));
    return run_locked(inputs, outputs);
  });
}

Status Session::run_locked(const std::vector<Value>& inputs, std::vector<Value>& outputs) {
  if (inputs.size() != inputs_.size()) {
    return invalid_argument("the model takes ", inputs_.size(), " inputs, got ", inputs.size());
  }
  for (size_t i = 0; i < inputs.size(); ++i) XONNX_RETURN_IF_ERROR(check_input(inputs_[i], inputs[i]));
  // Earlier outputs nobody else holds go back to the pool before the run needs memory.
  for (Value& v : outputs) v = Value();
  start_deadline(*state_);
  state_->buffers->begin_run();
  // The workers are not parked at the end: they spin out ThreadPool::kSpinMicros, so the next
  // run's first region finds them awake (back to back at 2 threads, a run's first worker chunk
  // started 38 us late: BM_MatMul_ConstB 194 -> 157 us). trim_memory() parks them at once.
  Status status = plan_->execute_into(inputs, nullptr, outputs);
  state_->buffers->end_run();
  return status;
}

void Session::cancel() { state_->cancelled.store(true, std::memory_order_relaxed); }

size_t Session::trim_memory() {
  std::lock_guard<std::mutex> lock(run_mutex_);
  state_->thread_pool->rest();
  plan_->release_scratch();
  const size_t bytes = state_->buffers->discard_free();
#if defined(__GLIBC__)
  // Kernels' scratch (std::vector) and small buffers go back to malloc, which keeps the pages.
  malloc_trim(0);
#endif
  return bytes;
}

void Session::set_profiler(Profiler* profiler) {
  std::lock_guard<std::mutex> lock(run_mutex_);
  state_->profiler = profiler;
}

Status Session::bind_output(const std::string& name, Tensor buffer) {
  std::lock_guard<std::mutex> lock(run_mutex_);
  return bind_output_locked(name, std::move(buffer));
}

Status Session::bind_output_locked(const std::string& name, Tensor buffer) {
  for (size_t i = 0; i < outputs_.size(); ++i) {
    if (outputs_[i].name != name) continue;
    if (!buffer.defined() || buffer.dtype() == DataType::kString || (buffer.numel() > 0 && !buffer.raw_data())) {
      return invalid_argument("output '", name, "': the bound buffer must be a numeric tensor with storage");
    }
    plan_->bind_output(i, std::move(buffer));
    return Status::ok();
  }
  return invalid_argument("the model has no output named '", name, "' to bind");
}

void Session::clear_output_bindings() {
  std::lock_guard<std::mutex> lock(run_mutex_);
  plan_->clear_output_bindings();
}

Result<std::vector<Value>> Session::run_named(const std::vector<std::pair<std::string, Value>>& inputs) {
  std::vector<Value> ordered(inputs_.size());
  for (const auto& [name, value] : inputs) {
    size_t i = 0;
    while (i < inputs_.size() && inputs_[i].name != name) ++i;
    if (i == inputs_.size()) return invalid_argument("the model has no input named '", name, "'");
    ordered[i] = value;
  }
  return run(ordered);
}

}  // namespace xonnx
