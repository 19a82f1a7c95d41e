// The contract between the executor and an operator implementation.
//
// Prepare vs run: a KernelFactory sees the node at session creation (KernelInit) and fails
// there on bad attributes; the Kernel it returns runs on every Session::run (KernelContext).
// Errors are plain messages; the executor prefixes the node, op and opset.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/core/tensor.h"
#include "runtime/core/value.h"
#include "runtime/ir/graph.h"

namespace xonnx {

class KernelContext;
class ThreadPool;

// The runs a fast kernel handed to the node's reference kernel (FastKernel): inputs its
// code does not cover (dtype, rank, a shape an XNNPACK operator refuses), and results that
// were not finite and were redone with the reference's NaN/inf semantics.
struct FallbackCounts {
  uint64_t uncovered = 0;
  uint64_t nonfinite = 0;
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual Status run(KernelContext& ctx) = 0;
  // Since creation; always zero for a kernel without a fallback (the reference kernels).
  virtual FallbackCounts fallbacks() const { return {}; }
  // The session is about to sit idle (Session::trim_memory): free the scratch kept between
  // runs only so that a run need not allocate it; the next run allocates it again. Never what
  // a run cannot rebuild (packed weights).
  virtual void release_scratch() {}
};

// A compiled attribute graph (an If/Loop/Scan body). The executor makes it
// (KernelInit::subgraph) and runs it (KernelContext::run_subgraph); the kernel that asked for
// it owns it and may read the graph's declared inputs and outputs. How it is compiled and run
// is the executor's (runtime/exec), which kernels never include.
class GraphBody {
 public:
  virtual ~GraphBody() = default;
  // The attribute graph it was compiled from; lives as long as the session.
  virtual const Graph& graph() const = 0;
};

// A kernel from a lambda: most reference kernels parse attributes in the factory, capture
// them, and do arithmetic here.
class LambdaKernel final : public Kernel {
 public:
  explicit LambdaKernel(std::function<Status(KernelContext&)> fn) : fn_(std::move(fn)) {}
  Status run(KernelContext& ctx) override { return fn_(ctx); }

 private:
  std::function<Status(KernelContext&)> fn_;
};

inline std::unique_ptr<Kernel> make_kernel(std::function<Status(KernelContext&)> fn) {
  return std::make_unique<LambdaKernel>(std::move(fn));
}

// What a factory sees: the node, the schema version resolved from the model's opset
// imports, which inputs are constants, and typed attribute access.
class KernelInit {
 public:
  virtual ~KernelInit() = default;

  virtual const Node& node() const = 0;
  // The since_version of the ONNX schema this node resolves to (e.g. 13 for Add in opset 13..13).
  virtual int since_version() const = 0;
  // The opset version the model imports for the node's domain.
  virtual int64_t opset() const = 0;

  size_t num_inputs() const { return node().inputs.size(); }
  bool has_input(size_t i) const { return i < node().inputs.size() && !node().inputs[i].empty(); }
  size_t num_outputs() const { return node().outputs.size(); }
  // The initializer bound to input i, or nullptr when that input is computed at run time.
  virtual const Tensor* constant_input(size_t i) const = 0;
  // A factory calls this when its kernel keeps its own packed copy of constant input i and
  // reads the original only on a rare fallback. When every reader of an initializer says so,
  // the session returns its memory (Storage::drop_resident); a later read restores it. The
  // kernel must not keep raw pointers into the original.
  virtual void packed_constant_input(size_t /*i*/) const {}
  // Packed weights shared by the kernels of one session that pack the same constant the same
  // way (weights shared through Identity: ALBERT's repeated layer, a tied embedding). `layout`
  // names the packing and every parameter it depends on; make() builds it when no kernel of
  // the session holds one of `constant` with that layout. What it returns is immutable (kernels
  // read it from any thread) and lives as long as a kernel holds it.
  virtual std::shared_ptr<const void> shared_packing(const Tensor& /*constant*/, const std::string& /*layout*/,
                                                     const std::function<std::shared_ptr<const void>()>& make) const {
    return make();
  }

  // Scratch memory shared by the kernels of one session, which run one at a time (a session
  // serialises its runs): a kernel uses it inside run() only and keeps nothing in it from one
  // run() to the next. `name` names the object's type and purpose; make() builds it for the
  // first kernel that asks. It lives as long as a kernel holds it.
  virtual std::shared_ptr<void> shared_scratch(const std::string& /*name*/,
                                               const std::function<std::shared_ptr<void>()>& make) const {
    return make();
  }

  // Input i's shape when the graph declares or session creation inferred it with every
  // dimension known (value_info, graph inputs), else nullopt. Only a hint for what to prepare
  // (which packing the runs will take): run() must still handle whatever input it gets.
  virtual std::optional<Shape> static_input_shape(size_t /*i*/) const { return std::nullopt; }

  // The session's thread pool (never null; single-threaded sessions run inline).
  virtual ThreadPool& thread_pool() const = 0;
  // Creates the reference kernel for this node: fast kernels use it as their fallback for
  // cases they do not cover at run time.
  virtual Result<std::unique_ptr<Kernel>> create_reference_kernel() const = 0;

  // Compiles a GRAPH attribute for running with KernelContext::run_subgraph.
  virtual Result<std::shared_ptr<GraphBody>> subgraph(const std::string& attr_name) const = 0;

  // Typed attributes. get_* returns `def` when the attribute is absent and an error when it
  // has another type; require_* fails when absent.
  bool has_attr(const std::string& name) const { return node().find_attr(name) != nullptr; }
  Result<int64_t> get_int(const std::string& name, int64_t def) const;
  Result<int64_t> require_int(const std::string& name) const;
  Result<float> get_float(const std::string& name, float def) const;
  Result<float> require_float(const std::string& name) const;
  Result<std::string> get_string(const std::string& name, const std::string& def) const;
  Result<std::string> require_string(const std::string& name) const;
  Result<std::vector<int64_t>> get_ints(const std::string& name, std::vector<int64_t> def = {}) const;
  Result<std::vector<float>> get_floats(const std::string& name, std::vector<float> def = {}) const;
  Result<std::vector<std::string>> get_strings(const std::string& name, std::vector<std::string> def = {}) const;
  Result<Tensor> require_tensor(const std::string& name) const;
  // Attribute of any type, or nullptr.
  const Attribute* attr(const std::string& name) const { return node().find_attr(name); }

 private:
  Result<const Attribute*> typed(const std::string& name, AttrType type, bool required) const;
};

// The session's limits a kernel applies at run time (SessionOptions documents them).
struct RunLimits {
  int64_t max_loop_iterations = std::numeric_limits<int64_t>::max();
  int64_t max_memory_bytes = std::numeric_limits<int64_t>::max();  // e.g. a sequence's total
  // One tensor a kernel allocates outside the session's outputs (an NHWC twin's NCHW result):
  // the cap the session's own outputs have (LoadOptions::tensor_cap).
  int64_t max_tensor_bytes = std::numeric_limits<int64_t>::max();
};

class KernelContext {
 public:
  virtual ~KernelContext() = default;

  virtual const RunLimits& limits() const {
    static const RunLimits none;
    return none;
  }
  // An error (kCancelled) once the run passed its deadline or was cancelled: kernels that
  // loop for long (Loop, Scan, sequence builders) call it between iterations. Allocates
  // nothing unless it fails.
  virtual Status check_interrupt() const { return Status::ok(); }

  virtual size_t num_inputs() const = 0;
  // True when input i was given (name non-empty) and holds a value.
  virtual bool has_input(size_t i) const = 0;
  // The tensor at input i; an undefined Tensor when absent or not a tensor.
  virtual const Tensor& input(size_t i) const = 0;
  virtual const Value& input_value(size_t i) const = 0;
  // Input i's value, moved out of its slot when this node is the last to read it (the executor
  // would release it right after), else a copy. With Value::unique_sequence() a kernel can
  // then update a sequence in place that nobody else holds.
  virtual Value take_input_value(size_t i) { return input_value(i); }

  virtual size_t num_outputs() const = 0;
  // False when the node leaves output i unnamed (optional outputs nobody reads).
  virtual bool output_wanted(size_t i) const = 0;
  // Allocates output i (zero-filled). The pointer stays valid until the kernel returns.
  virtual Result<Tensor*> allocate_output(size_t i, DataType dtype, Shape shape) = 0;
  // The same without zero-filling, for kernels that write every element (fast kernels: the
  // memory comes from the session's pool and may hold an earlier tensor's data).
  virtual Result<Tensor*> allocate_output_uninitialized(size_t i, DataType dtype, Shape shape) = 0;
  // Output i in the memory of input `in` where the executor can give it up (an in-place
  // residual add): this node reads `in` last, nothing else holds its buffer (not a graph
  // input, an initializer or a view another value shares), it has output i's dtype and size,
  // and output i is not bound to a caller's buffer. Else as allocate_output_uninitialized;
  // compare the data pointers to tell. The kernel must read each element of `in` before it
  // writes the element at the same offset, and must not defer to another kernel after it
  // wrote: the input's values are gone then.
  virtual Result<Tensor*> allocate_output_over_input(size_t i, size_t in, DataType dtype, Shape shape) {
    (void)in;
    return allocate_output_uninitialized(i, dtype, std::move(shape));
  }
  // Sets output i to an existing tensor (e.g. a view sharing an input's storage).
  virtual void set_output(size_t i, Tensor tensor) = 0;
  virtual void set_output_value(size_t i, Value value) = 0;

  // Runs a compiled subgraph; it sees the values of all enclosing scopes.
  virtual Result<std::vector<Value>> run_subgraph(const GraphBody& body, const std::vector<Value>& inputs) = 0;
  // The same, moving the inputs into the subgraph's slots (a Loop passes its loop-carried
  // values on, so a body may find them unique: take_input_value).
  virtual Result<std::vector<Value>> run_subgraph_consuming(const GraphBody& body, std::vector<Value>&& inputs) {
    return run_subgraph(body, inputs);
  }
};

// Normalizes a possibly negative axis into [0, rank); fails naming the axis otherwise.
Result<int64_t> normalize_axis(int64_t axis, int64_t rank, const char* what = "axis");

}  // namespace xonnx
