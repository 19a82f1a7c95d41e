// The base of every fast kernel (Backend::kXnnpack and Backend::kOptimized): it runs its own
// code and hands what that does not cover at run time (dtype, rank, shapes, non-finite
// results) to the node's reference kernel, which defines the semantics and reports the errors.
// What a fast kernel cannot take at all it declines in its factory with kUnsupported
// (`unsupported(reason)`), and the registry's next candidate is tried; the executor keeps the
// reason for the profile. Any other error from a fast factory fails the node.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "runtime/core/status.h"
#include "runtime/core/tensor.h"
#include "runtime/core/thread_pool.h"
#include "runtime/ops/internal_ops.h"
#include "runtime/ops/kernel.h"

namespace xonnx {

class FastKernel : public Kernel {
 public:
  Status run(KernelContext& ctx) final {
    bool handled = false;
    nonfinite_ = false;
    XONNX_RETURN_IF_ERROR(run_fast(ctx, handled));
    if (!handled) {
      ++(nonfinite_ ? fallbacks_.nonfinite : fallbacks_.uncovered);
      return reference_->run(ctx);
    }
    if (fast_runs_) fast_runs_->fetch_add(1, std::memory_order_relaxed);
    return Status::ok();
  }
  FallbackCounts fallbacks() const final { return fallbacks_; }

  // The backend's factory calls this first: creates the node's reference kernel (the fallback)
  // and keeps the session's pool. `fast_runs`, when given, counts the runs run_fast handled
  // (tests check that a fast path ran); it must outlive the kernel.
  Status init_fallback(const KernelInit& init, std::atomic<uint64_t>* fast_runs = nullptr) {
    XONNX_ASSIGN_OR_RETURN(reference_, init.create_reference_kernel());
    pool_ = &init.thread_pool();
    fast_runs_ = fast_runs;
    return Status::ok();
  }

 protected:
  // Sets handled = true when it computed the outputs; false (and ok) defers to the reference.
  // An error is an error of the node: it is not retried on the reference kernel.
  virtual Status run_fast(KernelContext& ctx, bool& handled) = 0;

  // For `handled = keep_if_finite(all_finite(...))`: a result that is not finite goes to the
  // reference kernel (its NaN/inf semantics) and counts as a non-finite rerun.
  bool keep_if_finite(bool finite) {
    if (!finite) nonfinite_ = true;
    return finite;
  }
  // The decline rule at run time, for a step the fast path may not cover (an XNNPACK operator
  // created or set up for a new shape): `if (!s.is_ok()) return unless_declined(s);`. A
  // kUnsupported status becomes ok with handled left false, so the run goes to the reference
  // kernel; any other error (out of memory, a bug) stays an error.
  static Status unless_declined(Status s) { return s.code() == StatusCode::kUnsupported ? Status::ok() : s; }

  std::unique_ptr<Kernel> reference_;
  const ThreadPool* pool_ = nullptr;

 private:
  std::atomic<uint64_t>* fast_runs_ = nullptr;
  FallbackCounts fallbacks_;
  bool nonfinite_ = false;
};

inline bool is_f32(const Tensor& t) { return t.defined() && t.dtype() == DataType::kFloat; }

// The node is one of the layout pass's NHWC ops (internal_ops.h), not the ONNX op of that name.
inline bool is_nhwc_node(const KernelInit& init) { return init.node().domain == kNhwcDomain; }

}  // namespace xonnx
