// Session: a loaded, validated, prepared model that can run many times.
//
// Creation does all the work that can fail on the model (op lookup, attribute checks,
// topological order, liveness); run() only computes and checks input shapes/types.
//
// Thread safety: run(), run_named() and run_bound() may be called on one session from many
// threads at once. A mutex in the session serialises them (the execution state of a run, its
// buffers, thread pool and the XNNPACK operators' set-up, belongs to the session): one run at a
// time, the others wait, so many callers on one session get one session's throughput. For
// parallel runs create one session per thread (each holds its own copy of the weights).
// Taking the mutex allocates nothing (the no-allocation runs stay so). bind_output(),
// clear_output_bindings() and set_profiler() take the same mutex. model(), inputs() and
// outputs() are immutable after creation.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/core/value.h"
#include "runtime/ir/graph.h"
#include "runtime/ir/output_range.h"
#include "runtime/onnx/loader.h"
#include "runtime/ops/registry.h"
#include "runtime/passes/pass.h"
#include "runtime/passes/pipeline.h"

namespace xonnx {

struct SessionOptions {
  int num_threads = 1;
  // No XNNPACK kernels and no NHWC layout pass. The environment variable
  // XONNX_DISABLE_XNNPACK=1 forces this and disable_optimized: reference kernels only.
  bool disable_xnnpack = false;
  // No own vectorized kernels (runtime/ops/optimized); also XONNX_DISABLE_OPTIMIZED=1.
  bool disable_optimized = false;
  // The loader's limits (memory cap, node counts, nesting); the memory cap also bounds every
  // intermediate tensor, the session's buffer pool as a whole, and sequences at run time.
  LoadOptions load;
  // Graph optimization at creation, in memory, before the QDQ and NHWC rewrites: the pass
  // library `xonnx convert` runs (runtime/passes). kBasic: constant folding (Identity and
  // Constant chains over initializers included), no-op removal, CSE, DCE; kAll also folds
  // BatchNorm into Conv/Gemm and fuses MatMul+Add, LayerNorm and GELU; kNone runs the graph as
  // loaded. A converted file comes out of kAll unchanged, so it pays only the check.
  passes::OptLevel optimization = passes::OptLevel::kAll;
  // Iterations one Loop node may run (M = INT64_MAX, or a condition that never turns false,
  // must not hang): more fails the run naming the node and this limit.
  int64_t max_loop_iterations = 10'000'000;
  // Wall-clock limit of one run() in seconds (0: none). A run past it fails with kCancelled
  // naming the node it stopped at; checked between nodes and Loop/Scan iterations.
  double run_timeout_seconds = 0;
  // Graph outputs the caller reads only a range of (ir/output_range.h): each is computed as a
  // Slice of the whole, which the optimization passes move up through the row-wise ops before
  // it (a language model's head for the last position only: {"logits", 1, -1, INT64_MAX}).
  // outputs() and run() give the narrowed outputs.
  std::vector<OutputRange> output_ranges;
};

class Subgraph;  // a compiled graph (exec/subgraph.h)
struct SessionState;

// Per-node timing, filled by Session::run while attached with Session::set_profiler.
// When no profiler is attached, run() makes no timing calls and records nothing.
// Not thread-safe: attach one profiler to one session.
class Profiler {
 public:
  struct Entry {
    std::string node;     // node name, or "<OpType>#<index in its graph>" when unnamed
    std::string op_type;  // "domain:Op" outside the default domain
    std::string scope;    // "" in the main graph; "Loop_3" or "If_1 > Loop_0" inside subgraphs
    Backend backend = Backend::kReference;
    double us = 0;       // wall time of the kernel, including any subgraphs it ran
    double self_us = 0;  // us minus the time of the subgraph nodes it ran
    // The faster backends' kernels that declined the node at session creation, with their
    // reasons ("xnnpack: <reason>; optimized: <reason>"); empty when the first one took it.
    std::string declined;
    // This run of a fast kernel went to the node's reference kernel: an input its code does
    // not cover (uncovered), or a result that was not finite, redone with the reference's
    // NaN/inf semantics (nonfinite). `backend` stays the fast kernel's.
    bool uncovered = false;
    bool nonfinite = false;
  };
  // One entry per executed node, in execution order (a Loop body node once per iteration).
  const std::vector<Entry>& entries() const { return entries_; }
  void clear() { entries_.clear(); }

 private:
  friend class Subgraph;
  std::vector<Entry> entries_;
  double nested_us_ = 0;  // time of nodes run inside the node being timed
};

class Session {
 public:
  static Result<std::unique_ptr<Session>> create(const std::string& path, const SessionOptions& options = {});
  static Result<std::unique_ptr<Session>> create_from_memory(const void* data, size_t size,
                                                             const SessionOptions& options = {});
  // Takes an already loaded (and function-inlined) model.
  static Result<std::unique_ptr<Session>> create_from_model(Model model, const SessionOptions& options = {});
  ~Session();

  // Graph inputs that are not initializers, in declaration order; and graph outputs.
  const std::vector<ValueInfo>& inputs() const { return inputs_; }
  const std::vector<ValueInfo>& outputs() const { return outputs_; }
  // The model as the session runs it: after the optimization passes and the QDQ/NHWC rewrites.
  const Model& model() const { return model_; }
  // What creation did to the graph: each pass that ran (the optimization passes, then
  // "qdq-fusion" and "layout-nhwc" when they apply), what it changed and its time in ms.
  const passes::PipelineResult& optimization_report() const { return optimization_; }

  // Runs with one value per entry of inputs(), in order. Returns one value per output.
  Result<std::vector<Value>> run(const std::vector<Value>& inputs);
  // The same into `outputs` (resized to outputs().size()). Tensors it still holds from the
  // previous call are recycled unless the caller kept other references to them; with the same
  // vector and the same input shapes as an earlier run, this makes no heap allocation when
  // every kernel on the path is a fast one (tests/alloc checks it).
  Status run(const std::vector<Value>& inputs, std::vector<Value>& outputs);
  // Output binding: later run() calls write graph output `name` into `buffer`, whose storage the
  // caller owns (e.g. a Tensor over its own memory, Storage::view), until
  // clear_output_bindings(); the output value run() returns shares that storage. The graph
  // must produce exactly buffer's type and shape there, else run() fails naming the output.
  // The runtime writes the buffer only inside run() and keeps it alive while bound. The same
  // storage may also be passed as an input of the run: kernels that handle it write in place
  // (GroupQueryAttention appends the new rows of a KV cache whose present_key is bound to the
  // buffer given as past_key); any other kernel writes a temporary copied into the buffer.
  // Fails when the model has no such output.
  Status bind_output(const std::string& name, Tensor buffer);
  void clear_output_bindings();

  // One run with `bound` outputs (name, caller buffer, as bind_output) bound for this run only:
  // binding, run and unbinding hold the session's mutex together, so a run of another thread
  // never writes into these buffers. They replace those of bind_output() for this run only.
  Status run_bound(const std::vector<Value>& inputs, const std::vector<std::pair<std::string, Tensor>>& bound,
                   std::vector<Value>& outputs);

  // Runs with named inputs (any order); missing non-optional inputs are an error.
  Result<std::vector<Value>> run_named(const std::vector<std::pair<std::string, Value>>& inputs);

  // Stops the run in progress at its next check (between nodes and loop iterations); that
  // run fails with kCancelled. Thread-safe (the one call that may come from another thread
  // while run() executes); runs that start afterwards are not affected.
  void cancel();

  // For a session about to sit idle: returns to the OS the memory it keeps for later runs:
  // the pages of its idle intermediate buffers of 256 KiB or more, kept (they fault in again
  // when the next run writes them); the kernels' scratch (Kernel::release_scratch: the next
  // run allocates it again); the pages of weights read in place from the model file (an
  // embedding's rows: the next run faults them in from the page cache); and, with glibc, the
  // free memory of malloc's heap (malloc_trim). The thread pool's workers, which spin up to
  // 1 ms after a run for the next one, block at once.
  // Waits for a run in progress. Returns the bytes of the buffers whose pages it dropped.
  size_t trim_memory();

  // Records every node run by later run() calls into `profiler` (nullptr detaches). The
  // profiler must outlive the session or be detached first.
  void set_profiler(Profiler* profiler);

 private:
  Session() = default;
  Status run_locked(const std::vector<Value>& inputs, std::vector<Value>& outputs);
  Status bind_output_locked(const std::string& name, Tensor buffer);

  std::mutex run_mutex_;  // one run (and binding change) at a time; see the top of this file
  Model model_;
  SessionOptions options_;
  std::vector<ValueInfo> inputs_;
  std::vector<ValueInfo> outputs_;
  passes::PipelineResult optimization_;
  std::shared_ptr<SessionState> state_;
  std::shared_ptr<Subgraph> plan_;
};

}  // namespace xonnx
