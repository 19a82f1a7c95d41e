// Shared plumbing of the XNNPACK-backed kernels (runtime/ops/xnnpack/*.cc): XNNPACK's
// initialization, status translation, operator ownership, pool choice and scratch memory. What
// the kernels share with the other fast backend (the FastKernel base, conv geometry, layout
// conversions, quantization parameters, finiteness scans) is in runtime/ops/common.
//
// Every kernel here is a FastKernel of Backend::kXnnpack: its factory declines (returns an
// error) for anything it does not cover at session creation, and at run time it hands
// inputs it was not built for (dtype, rank, channel count, degenerate geometry) to the
// node's reference kernel, which defines the semantics and reports the errors.
//
// Layout: the ONNX-domain kernels take and return NCHW tensors and convert to/from XNNPACK's
// NHWC internally (ops/common/layout_convert.h). Inside the NHWC regions of the layout pass
// (runtime/passes/layout_nhwc.h) the same kernels run as ops of domain kNhwcDomain
// (ops/internal_ops.h) on NHWC tensors directly; their reference twins are in ops/ref/nhwc.cc.
#pragma once

#include <xnnpack.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/core/tensor.h"
#include "runtime/ops/common/fast_kernel.h"
#include "runtime/ops/kernel.h"

namespace xonnx {

class OpRegistry;

namespace xnn {

// Initializes XNNPACK once per process (thread-safe); later calls return the first result.
Status initialize();

// The one translation of xnn_status to Status: `what` names the XNNPACK call.
Status check(xnn_status status, const char* what);

// Whether an XNNPACK operator runs on the pool's workers or on the calling thread alone.
// pthreadpool's caller spins until every worker has checked in, so on a machine whose cores are
// busy with other processes a threaded operator costs a scheduler time slice or more (a 2-thread
// LLM decode step ran 10-20x slower than on 1). Each operator times itself both ways, keeps
// the faster, and re-times the other now and then (less often each time it loses again).
class ThreadChoice {
 public:
  bool threaded();                        // the choice for the next run
  void record(bool threaded, double us);  // that run's time

 private:
  double threaded_us_ = -1.0;  // moving averages; -1: not timed yet
  double single_us_ = -1.0;
  uint32_t runs_ = 0;
  uint32_t next_probe_ = 0;
  uint32_t interval_ = 0;
};

// Owns one xnn_operator_t (deleted on destruction or reset).
class Operator {
 public:
  Operator() = default;
  ~Operator() { reset(); }
  Operator(Operator&& o) noexcept : op_(o.op_), choice_(o.choice_) { o.op_ = nullptr; }
  Operator& operator=(Operator&& o) noexcept {
    if (this != &o) {
      reset();
      op_ = o.op_;
      choice_ = o.choice_;
      o.op_ = nullptr;
    }
    return *this;
  }
  Operator(const Operator&) = delete;
  Operator& operator=(const Operator&) = delete;

  xnn_operator_t get() const { return op_; }
  explicit operator bool() const { return op_ != nullptr; }
  // For xnn_create_*: deletes the current operator and returns the slot to fill.
  xnn_operator_t* replace() {
    reset();
    return &op_;
  }
  void reset();
  // xnn_run_operator on the session's pool (nullptr: the calling thread), or on the calling
  // thread when that proved faster (ThreadChoice). Not thread-safe: a kernel runs on one
  // thread at a time.
  Status run(pthreadpool_t pool) const;

 private:
  xnn_operator_t op_ = nullptr;
  mutable ThreadChoice choice_;
};

// The pool for an operator of `work` multiply-adds (or elements): nullptr (the calling
// thread) below ~1M, where waking workers costs more than it saves, and always for
// single-threaded sessions.
pthreadpool_t pool_for(const ThreadPool& pool, double work);
// Whether `work` multiply-adds are worth splitting over threads at all (pool_for's threshold),
// for kernels that split an operator's work on the session's pool themselves.
bool parallel_pays(double work);

// A reusable float buffer whose data XNNPACK may over-read by XNN_EXTRA_BYTES; grows only.
class Buffer {
 public:
  float* data() { return data_.data(); }
  // Makes room for n floats (+ slack) and returns data(); contents are unspecified.
  float* resize(size_t n) {
    const size_t want = n + XNN_EXTRA_BYTES / sizeof(float) + 16;
    if (data_.size() < want) data_.resize(want);
    return data_.data();
  }

 private:
  std::vector<float> data_;
};

// NHWC scratch shared by every XNNPACK kernel running on this thread (0: input, 1: output).
// A session runs one kernel at a time, so peak scratch is the largest activation rather than
// the sum over all nodes. Buffers only grow; a kernel re-runs xnn_setup_* when they move.
Buffer& thread_scratch(int which);

// True when XNNPACK may read `bytes` at `p` plus XNN_EXTRA_BYTES without leaving the
// memory page of the last byte (so an over-read cannot fault).
bool over_read_safe(const void* p, size_t bytes);
// The float data of `t`, or a copy of it in `scratch` when an over-read could fault.
const float* readable_input(const Tensor& t, Buffer& scratch);
// The same for the bytes of an 8-bit tensor.
const uint8_t* readable_bytes(const Tensor& t, Buffer& scratch);

// Number of XNNPACK operator runs in this process (tests check that a fast path ran).
uint64_t run_count();

// The factory of an XNNPACK kernel calls this first: initializes XNNPACK, then keeps the node's
// reference kernel as the fallback (FastKernel::init_fallback).
Status init_xnn_kernel(FastKernel& kernel, const KernelInit& init);

// numpy broadcasting of two operands for XNNPACK's *_nd operators: the output shape and each
// operand's dims as XNNPACK takes them (rank 0 as [1]). False when they do not broadcast, exceed
// XNN_MAX_TENSOR_DIMS or are empty: the reference kernel then reports or handles it.
struct BroadcastDims {
  Shape out;
  size_t a[XNN_MAX_TENSOR_DIMS] = {1}, b[XNN_MAX_TENSOR_DIMS] = {1};
  size_t rank_a = 1, rank_b = 1;
};
bool broadcast_dims(const Tensor& a, const Tensor& b, BroadcastDims& d);

// Per-family registration, called from register_xnnpack_ops (xnnpack_util.cc).
void register_xnnpack_conv(OpRegistry& registry);
void register_xnnpack_deconv(OpRegistry& registry);  // deconv.cc: ConvTranspose
void register_xnnpack_matmul(OpRegistry& registry);
void register_xnnpack_pool(OpRegistry& registry);
void register_xnnpack_elementwise(OpRegistry& registry);
void register_xnnpack_qlinear(OpRegistry& registry);         // qlinear.cc: QLinearConv, QLinearMatMul
void register_xnnpack_qlinear_binary(OpRegistry& registry);  // qlinear_binary.cc: com.microsoft QLinearAdd/Mul

}  // namespace xnn
}  // namespace xonnx
