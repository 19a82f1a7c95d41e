// A compiled graph: slots for every value, kernels in topological order, and the liveness
// information that frees intermediates after their last use. The main graph and every
// If/Loop/Scan body are Subgraphs; a body resolves free names in its enclosing scopes.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/exec/buffer_pool.h"
#include "runtime/exec/session.h"
#include "runtime/core/thread_pool.h"
#include "runtime/ops/registry.h"

namespace xonnx {

struct SessionState {
  SessionOptions options;
  std::map<std::string, int64_t> opset_imports;
  std::unique_ptr<ThreadPool> thread_pool;
  std::unique_ptr<BufferPool> buffers;  // every intermediate tensor's storage
  Profiler* profiler = nullptr;         // Session::set_profiler
  RunLimits limits;                     // from options, for kernels
  // The run in progress: its deadline (steady_clock nanoseconds, 0: none) and whether
  // Session::cancel() stopped it. Atomic: cancel() comes from another thread.
  mutable std::atomic<int64_t> deadline_ns{0};
  mutable std::atomic<bool> cancelled{false};
  // kCancelled once the run is cancelled or past its deadline; allocation-free otherwise.
  Status check_interrupt() const;
  // KernelInit::shared_packing's packings, by constant and layout. An entry is valid while
  // both its source storage and its packing live (a freed storage's address may come back).
  struct Packing {
    std::weak_ptr<Storage> source;
    std::weak_ptr<const void> packed;
  };
  mutable std::map<std::string, Packing> packings;
  mutable int64_t packings_reused = 0;                         // kernels given another kernel's packing
  mutable std::map<std::string, std::weak_ptr<void>> scratch;  // KernelInit::shared_scratch's, by name
  mutable std::mutex packings_mutex;  // packings and scratch: bodies of control-flow ops may be compiled during runs
};

struct Frame {
  std::vector<Value> slots;
  const Frame* parent = nullptr;
  std::string scope;  // profiling only: path of the nodes that ran this graph
};

// The executor's compiled graph: the session's main graph, and every attribute graph as the
// GraphBody its kernel holds.
class Subgraph final : public GraphBody {
 public:
  static Result<std::shared_ptr<Subgraph>> compile(const Graph& graph, const Subgraph* parent,
                                                   std::shared_ptr<const SessionState> state);

  // Runs with one value per graph input (missing trailing inputs are left empty) and returns
  // one value per graph output. `parent` is the frame of the enclosing graph.
  Result<std::vector<Value>> execute(const std::vector<Value>& inputs, const Frame* parent) const;
  // The same into `outputs` (resized to num_outputs()): with a vector kept from an earlier
  // run, this allocates nothing.
  Status execute_into(const std::vector<Value>& inputs, const Frame* parent, std::vector<Value>& outputs) const;

  // Graph output `index` is written into `buffer` by later runs (Session::bind_output).
  void bind_output(size_t index, Tensor buffer);
  void clear_output_bindings() { bound_.clear(); }
  // Kernel::release_scratch of every step, and the pages of constants that are views of the
  // model file (a run reads them again from the page cache) (Session::trim_memory).
  void release_scratch() const {
    for (const Step& s : steps_) s.kernel->release_scratch();
    for (const auto& c : constants_) {
      // Only views: their bytes stay valid for whoever points into them (a copy of misaligned
      // bytes would be freed).
      if (c.second.is_view_of_external_memory()) c.second.storage()->drop_resident();
    }
  }
  // Moves the bindings out (none remain) and puts them back: Session::run_bound.
  std::vector<Tensor> take_output_bindings() { return std::move(bound_); }
  void set_output_bindings(std::vector<Tensor> bound) { bound_ = std::move(bound); }

  const Graph& graph() const override { return *graph_; }
  size_t num_inputs() const { return input_slots_.size(); }
  size_t num_outputs() const { return output_slots_.size(); }

 private:
  struct Step {
    const Node* node = nullptr;
    std::unique_ptr<Kernel> kernel;
    std::vector<int> inputs;   // slot per input, -1 when omitted
    std::vector<int> outputs;  // slot per output, -1 when unnamed
    std::vector<int> release;  // slots whose last use is this step
    // Per input: its slot is released after this step and read by no other input or subgraph
    // of it, so the kernel may take the value (KernelContext::take_input_value).
    std::vector<bool> takeable;
    std::string label;  // "node 'x' (Op, opset N)" for errors
    std::string name;   // for profiles: node name, or "Op#index" when unnamed
    std::string op;     // for profiles: "Op", or "domain:Op"
    Backend backend = Backend::kReference;
    std::string declined;                        // for profiles: "backend: reason; ..." of the faster candidates
    bool appends_in_place = false;               // may write a bound output that aliases an input (KV cache)
    mutable std::vector<Value> unnamed_outputs;  // sized at build: outputs the graph leaves unnamed
  };
  struct Capture {
    int slot;        // local slot
    int depth;       // frames up (1 = parent)
    int outer_slot;  // slot in that frame
  };
  friend class KernelInitImpl;
  friend class KernelContextImpl;

  Subgraph() = default;
  Status build(const Graph& graph);
  int slot(const std::string& name) const;
  // The type the graph's inputs or value_info give `name`, or nullptr (an index built on the
  // first call: only kernels that prepare for a static shape ask).
  const TypeInfo* declared_type(const std::string& name);
  // Returns the memory of constant `slot` to the OS once all its readers have packed it.
  void drop_resident_constant(int slot);
  // Finds `name` here or in an enclosing scope, adding a capture slot if it is outer.
  Result<int> resolve(const std::string& name);

  // `owner` is the step of the enclosing graph whose kernel runs this one (profiling scope).
  // `take_inputs`: the caller gives the values up (run_subgraph_consuming), so they are moved
  // into the slots (inputs is then a non-const vector the caller no longer reads).
  Status execute_into(const std::vector<Value>& inputs, bool take_inputs, const Frame* parent, const Step* owner,
                      std::vector<Value>& outputs) const;
  Status run_steps(Frame& frame) const;
  Status run_profiled(const Step& step, KernelContext& ctx, const Frame& frame, Profiler& profiler) const;

  const Graph* graph_ = nullptr;
  const Subgraph* parent_ = nullptr;
  std::shared_ptr<const SessionState> state_;
  std::unordered_map<std::string, int> slot_of_;
  std::unordered_map<std::string, const TypeInfo*> declared_types_;  // declared_type's index
  bool declared_types_built_ = false;
  int num_slots_ = 0;
  std::vector<std::pair<int, Tensor>> constants_;
  std::vector<Capture> captures_;
  std::vector<int> input_slots_;
  std::vector<int> output_slots_;
  std::vector<Step> steps_;
  // Caller-bound output buffers by slot (empty when nothing is bound; undefined tensors for
  // unbound slots).
  std::vector<Tensor> bound_;
  // Copies every bound output a kernel did not write in place into its buffer.
  Status settle_bound_outputs(Frame& frame) const;
  // The frame every run reuses, so run() does not allocate slots; a run that finds it busy
  // (not expected: ONNX graphs do not recurse) uses a fresh one.
  mutable Frame frame_;
  mutable bool frame_busy_ = false;
};

}  // namespace xonnx
