// Shared plumbing of the optimized (own vectorized) op kernels, Backend::kOptimized.
//
// Each factory declines (returns an error) what it does not cover when that is known at
// session creation (attributes, constant dtypes); at run time an OptKernel hands inputs it
// was not built for (other dtypes, shapes, broadcasting) to the node's reference kernel,
// which defines the semantics and reports the errors.
#pragma once

#include <cstdint>
#include <memory>

#include "runtime/core/status.h"
#include "runtime/core/tensor.h"
#include "runtime/ops/kernel.h"
#include "runtime/ops/optimized/kernels.h"

namespace xonnx {

class OpRegistry;
class ThreadPool;

namespace opt {

// Process-wide switch (tests compare against the reference kernels with it off; the
// environment variables XONNX_DISABLE_OPTIMIZED=1 and XONNX_DISABLE_XNNPACK=1 also turn it
// off). Read at session creation.
bool enabled();
void set_enabled(bool on);
// Number of runs that took an optimized path (tests check that the fast path ran).
uint64_t run_count();
void count_run();

inline bool is_f32(const Tensor& t) { return t.defined() && t.dtype() == DataType::kFloat; }

class OptKernel : public Kernel {
 public:
  Status run(KernelContext& ctx) final {
    bool handled = false;
    XONNX_RETURN_IF_ERROR(run_fast(ctx, handled));
    if (!handled) return reference_->run(ctx);
    count_run();
    return Status::ok();
  }

 protected:
  // Sets handled = true when it computed the outputs; false (and ok) defers to the reference.
  virtual Status run_fast(KernelContext& ctx, bool& handled) = 0;

  // The factory calls this first: declines when the optimized kernels are switched off, and
  // keeps the reference kernel, the table and the pool.
  Status init_common(const KernelInit& init) {
    if (!enabled()) return unsupported("optimized kernels are disabled");
    auto ref = init.create_reference_kernel();
    if (!ref.is_ok()) return ref.status();
    reference_ = std::move(ref).value();
    k_ = &kernels();
    pool_ = &init.thread_pool();
    return Status::ok();
  }

  std::unique_ptr<Kernel> reference_;
  const KernelTable* k_ = nullptr;
  const ThreadPool* pool_ = nullptr;
};

// Declines at creation when input i is a constant that is not float32.
inline Status require_f32_if_constant(const KernelInit& init, size_t i, const char* op) {
  const Tensor* t = init.has_input(i) ? init.constant_input(i) : nullptr;
  if (t && !is_f32(*t)) return unsupported(op, ": optimized kernel is float32 only");
  return Status::ok();
}

// Items per parallel chunk so that a chunk is worth at least ~`min_work` element operations.
// The default is ~20-30 us of vector work: waking a pool worker costs ~10 us on an idle
// machine and a scheduler slice (ms) on a loaded one, so smaller ops stay on the caller.
inline size_t chunk_for(int64_t work_per_item, int64_t min_work = 131072) {
  if (work_per_item <= 0) return 1;
  const int64_t c = (min_work + work_per_item - 1) / work_per_item;
  return static_cast<size_t>(c < 1 ? 1 : c);
}

// Per-family registration, called from register_optimized_ops (register.cc).
void register_opt_matmul(OpRegistry& registry);
void register_opt_normalization(OpRegistry& registry);
void register_opt_elementwise(OpRegistry& registry);
void register_opt_layout(OpRegistry& registry);
void register_opt_reduce(OpRegistry& registry);

}  // namespace opt
}  // namespace xonnx
