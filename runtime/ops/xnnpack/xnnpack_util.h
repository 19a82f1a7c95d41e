// Shared plumbing of the XNNPACK-backed kernels (runtime/ops/xnnpack/*.cc).
//
// Every kernel here is a candidate of Backend::kXnnpack: its factory declines (returns an
// error) for anything it does not cover at session creation, and at run time it hands
// inputs it was not built for (dtype, rank, channel count, degenerate geometry) to the
// node's reference kernel, which defines the semantics and reports the errors.
//
// Layout: the ONNX-domain kernels take and return NCHW tensors and convert to/from XNNPACK's
// NHWC internally (nchw_to_nhwc / nhwc_to_nchw below). Inside the NHWC regions of the layout
// pass (runtime/passes/layout_nhwc.h) the same kernels run as ops of domain kNhwcOpDomain on
// NHWC tensors directly; their reference twins are in nhwc_ops.cc.
#pragma once

#include <xnnpack.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/core/tensor.h"
#include "runtime/ops/kernel.h"

namespace xonnx {

class OpRegistry;
class ThreadPool;

namespace xnn {

// The domain of the layout pass's internal ops (runtime/passes/layout_nhwc.h: kNhwcDomain).
constexpr const char* kNhwcOpDomain = "com.xonnx.nhwc";
inline bool is_nhwc_node(const KernelInit& init) { return init.node().domain == kNhwcOpDomain; }

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
  bool threaded();                         // the choice for the next run
  void record(bool threaded, double us);   // that run's time

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

// Quantization parameters baked into an operator at session creation: a constant 1-element
// float scale that is a normal positive number, and a constant 1-element 8-bit zero point
// (its value; `type` gets its type). Anything else declines (`what` names kernel and input).
Result<float> constant_scale(const KernelInit& init, size_t i, const char* what);
Result<int32_t> constant_zero_point(const KernelInit& init, size_t i, const char* what, DataType* type);

// Conv weights from ONNX [M][C][kh][kw] to [M][kh][kw][C] (XNNPACK's and the im2col order);
// khw = kh * kw.
template <typename T>
void weights_to_ohwi(const T* src, T* dst, int64_t m, int64_t c, int64_t khw) {
  for (int64_t o = 0; o < m; ++o)
    for (int64_t ci = 0; ci < c; ++ci)
      for (int64_t p = 0; p < khw; ++p) dst[(o * khw + p) * c + ci] = src[(o * c + ci) * khw + p];
}

// Layout conversion of float tensors, blocked and split over the pool.
// src [n][c][hw] -> dst [n][hw][c].
void nchw_to_nhwc(const float* src, float* dst, size_t n, size_t c, size_t hw,
                  const ThreadPool& pool);
// src [n][hw][c] -> dst [n][c][hw].
void nhwc_to_nchw(const float* src, float* dst, size_t n, size_t c, size_t hw,
                  const ThreadPool& pool);
// `count` pixels of c planes `plane_stride` floats apart (src: pixel 0 of plane 0) into
// dst [count][c]: one row of an NCHW image in NHWC.
void interleave_pixels(const float* src, size_t plane_stride, size_t c, size_t count, float* dst);
// src [n][c][h][w] -> dst [n][h + pt + pb][w + pl + pr][c] with zeros in the border.
void nchw_to_nhwc_padded(const float* src, float* dst, size_t n, size_t c, size_t h, size_t w,
                         size_t pt, size_t pl, size_t pb, size_t pr, const ThreadPool& pool);

// Converts a 4-D tensor of any fixed-size type between NCHW and NHWC into `dst`, which has
// the permuted shape and the same type.
Status permute_layout(const Tensor& src, bool to_nhwc, Tensor& dst, const ThreadPool& pool);

// XNNPACK's min/max-clamped micro-kernels turn NaN into the lower bound (-inf with our
// unbounded outputs), and its Softmax and MaxPool differ from the reference on NaN/inf. So a
// kernel whose XNNPACK output holds a non-finite value reruns the node with the reference
// kernel (exact semantics; rare). Relu/Clip map NaN to a finite bound: they check the input.
bool all_finite(const float* p, size_t n);
bool has_nan(const float* p, size_t n);

// Number of XNNPACK operator runs in this process (tests check that a fast path ran).
uint64_t run_count();

inline bool is_f32(const Tensor& t) { return t.defined() && t.dtype() == DataType::kFloat; }

// A Gemm that is a fully-connected layer (XNNPACK's, and the own one in optimized/matmul.cc):
// transA 0, a constant 2-D float B (either transB), C absent or a constant bias that
// broadcasts along N. parse() declines (unsupported, naming `what`) anything else.
struct FullyConnectedGemm {
  bool trans_b = false;
  float alpha = 1.0f;
  int64_t n = 0, k = 0;
  std::vector<float> bias;  // [n]: beta * C, empty without C
  static Result<FullyConnectedGemm> parse(const KernelInit& init, const char* what);
};

// A kernel that runs `fast` and, when it returns false (an input it does not cover),
// the reference kernel instead.
class FallbackKernel : public Kernel {
 public:
  Status run(KernelContext& ctx) final {
    bool handled = false;
    XONNX_RETURN_IF_ERROR(run_fast(ctx, handled));
    if (handled) return Status::ok();
    return reference_->run(ctx);
  }

 protected:
  // Sets handled = false (and returns ok) to defer to the reference kernel.
  virtual Status run_fast(KernelContext& ctx, bool& handled) = 0;
  std::unique_ptr<Kernel> reference_;

  // Creates the reference kernel and XNNPACK; the factory calls it first.
  Status init_common(const KernelInit& init) {
    XONNX_RETURN_IF_ERROR(initialize());
    auto ref = init.create_reference_kernel();
    if (!ref.is_ok()) return ref.status();
    reference_ = std::move(ref).value();
    return Status::ok();
  }
};

// 2-D convolution geometry, shared by the float (conv.cc) and quantized (qlinear.cc) kernels.
struct ConvGeometry {
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  std::string auto_pad;                    // NOTSET, SAME_UPPER, SAME_LOWER or VALID
  std::array<int64_t, 4> explicit_pads{};  // top, left, bottom, right (NOTSET)

  // Pads (top, left, bottom, right) for an h x w input; false if the geometry is degenerate
  // (input plus pads smaller than the dilated kernel).
  bool pads_for(int64_t h, int64_t w, std::array<int64_t, 4>& pads) const;
  // The pads when they do not depend on the input size (not SAME, or SAME with stride 1): the
  // operator can then be created at session creation, so XNNPACK's refusal declines the node.
  bool fixed_pads(std::array<int64_t, 4>& pads) const;
  // The output size for an input of h x w with `pads` (from pads_for).
  int64_t out_h(int64_t h, const std::array<int64_t, 4>& pads) const { return (h + pads[0] + pads[2] - ((kh - 1) * dh + 1)) / sh + 1; }
  int64_t out_w(int64_t w, const std::array<int64_t, 4>& pads) const { return (w + pads[1] + pads[3] - ((kw - 1) * dw + 1)) / sw + 1; }

  // Reads auto_pad, group, kernel_shape, strides, dilations and pads of a 2-D Conv-like node
  // with 4-D weights of shape `w` ([M][C/group][kh][kw]); declines (`what`: the kernel) what
  // the kernels do not cover: other ranks, a kernel_shape that disagrees with W, values
  // beyond uint32 range, unknown auto_pad.
  static Result<ConvGeometry> parse(const KernelInit& init, const Shape& w, int64_t& group, const char* what);
};

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
void register_xnnpack_fully_connected(OpRegistry& registry);
void register_xnnpack_pooling(OpRegistry& registry);
void register_xnnpack_elementwise(OpRegistry& registry);
void register_nhwc_reference(OpRegistry& registry);  // nhwc_ops.cc
void register_xnnpack_qlinear(OpRegistry& registry);  // qlinear.cc: QLinearConv, QLinearMatMul
void register_xnnpack_qlinear_binary(OpRegistry& registry);  // qlinear_binary.cc: com.microsoft QLinearAdd/Mul

}  // namespace xnn
}  // namespace xonnx
