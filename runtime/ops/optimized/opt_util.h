// Shared plumbing of the optimized (own vectorized) op kernels, Backend::kOptimized.
//
// Each factory declines (returns an error) what it does not cover when that is known at
// session creation (attributes, constant dtypes); at run time a kernel (a FastKernel,
// ops/common/fast_kernel.h) hands inputs it was not built for (other dtypes, shapes,
// broadcasting) to the node's reference kernel, which defines the semantics and reports the
// errors. Kernels that use the ISA table keep it as a member: `const KernelTable* k_ =
// &kernels();`.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/aligned_vector.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor.h"
#include "runtime/core/thread_pool.h"
#include "runtime/ops/common/fast_kernel.h"
#include "runtime/ops/kernel.h"
#include "runtime/ops/optimized/kernels.h"

namespace xonnx {

class OpRegistry;

namespace opt {

// Process-wide switch (tests compare against the reference kernels with it off; the
// environment variables XONNX_DISABLE_OPTIMIZED=1 and XONNX_DISABLE_XNNPACK=1 also turn it
// off). Read at session creation.
bool enabled();
void set_enabled(bool on);
// Number of runs that took an optimized path (tests check that the fast path ran).
uint64_t run_count();

// A Conv's fused output, from the layout pass's attributes prefix + activation_min / _max (the
// range; +-inf when absent) and prefix + activation (Swish / HardSwish, else none); a merged
// node's part has its own prefix ("pointwise_", "stem_"). Declines (`what`: the kernel) an
// empty range or an activation without a row function.
struct FusedOutput {
  float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
  MapFn activation = nullptr;
};
Result<FusedOutput> parse_fused_output(const KernelInit& init, const std::string& prefix, const char* what);

// The factory of an own kernel calls this first: declines when the own kernels are switched
// off, else keeps the node's reference kernel as the fallback and counts the runs the kernel
// handles in run_count() (FastKernel::init_fallback).
Status init_own_kernel(FastKernel& kernel, const KernelInit& init);

// Declines at creation when input i is a constant that is not float32.
inline Status require_f32_if_constant(const KernelInit& init, size_t i, const char* op) {
  const Tensor* t = init.has_input(i) ? init.constant_input(i) : nullptr;
  if (t && !is_f32(*t)) return unsupported(op, ": optimized kernel is float32 only");
  return Status::ok();
}

// Memory-bound ops over a tensor the op before wrote (BatchNorm, a gate Mul, a channel mean)
// split from this much work on: a worker is awake within a run (ThreadPool::kSpinMicros), and
// each thread then reads the part its own core wrote, where one thread alone would pull the
// other cores' parts from their caches (EfficientNetV2-S's gate Muls took up to 3x their
// 1-thread time at 2 threads on a Zen 5, the more so the busier the host).
constexpr int64_t kMinStreamingWork = 16384;

// Items per parallel chunk so that a chunk is worth at least ~`min_work` element operations.
// The default is ~20-30 us of vector work: waking a pool worker costs ~10 us on an idle
// machine and a scheduler slice (ms) on a loaded one, so smaller ops stay on the caller.
inline size_t chunk_for(int64_t work_per_item, int64_t min_work = 131072) {
  if (work_per_item <= 0) return 1;
  const int64_t c = (min_work + work_per_item - 1) / work_per_item;
  return static_cast<size_t>(c < 1 ? 1 : c);
}

// Whether `floats` float32 channels per pixel fill whole 64-byte cache lines. Only then may
// threads split a pixel's channels: else every pixel has a line that two threads write, and
// the line moves between their cores (each half of MobileNetV3's 200-channel 20 x 20
// pointwise + depthwise layer took as long on 2 threads as the whole on one).
inline bool channels_fill_cache_lines(int64_t floats) { return floats % 16 == 0; }

// Scratch memory of a parallel kernel, one buffer per parallel_for chunk. Not thread_local:
// work stealing changes which thread runs a chunk from run to run, so a thread-local buffer
// still grows (allocates) in a steady-state run the first time a thread meets a kernel.
// Grows only; a kernel instance runs on one thread at a time, so it may own one.
template <typename T>
class ChunkScratch {
 public:
  // Before pool.parallel_for(n, min_chunk, ...): every chunk gets `size` elements.
  void prepare(const ThreadPool& pool, size_t n, size_t min_chunk, size_t size) {
    chunk_ = pool.chunk_size(n, min_chunk);
    const size_t chunks = (n + chunk_ - 1) / chunk_;
    if (buffers_.size() < chunks) buffers_.resize(chunks);
    for (size_t i = 0; i < chunks; ++i)
      if (buffers_[i].size() < size) buffers_[i].resize(size);
  }
  // The buffer of the chunk that starts at `begin` (the fn's first argument).
  T* of(size_t begin) { return buffers_[begin / chunk_].data(); }
  // Frees the buffers (Kernel::release_scratch); the next prepare() allocates them again.
  void release() { std::vector<AlignedVector<T>>().swap(buffers_); }

 private:
  size_t chunk_ = 1;
  std::vector<AlignedVector<T>> buffers_;  // 64-byte aligned: the kernels' rows load whole vectors
};

// The session's float scratch (KernelInit::shared_scratch) for copies that live inside one
// run(), such as a block's re-strided rows (fconv.h): one per session instead of one per kernel.
inline std::shared_ptr<ChunkScratch<float>> session_float_scratch(const KernelInit& init) {
  return std::static_pointer_cast<ChunkScratch<float>>(
      init.shared_scratch("ChunkScratch<float>", [] { return std::make_shared<ChunkScratch<float>>(); }));
}

// A defined tensor of fixed-size whole-byte elements (not strings, not 4-bit types): what the
// own copy kernels (Concat, Slice, Expand, Pad) move with memcpy.
inline bool byte_copyable(const Tensor& t) {
  return t.defined() && t.dtype() != DataType::kString && dtype_bits(t.dtype()) % 8 == 0;
}

// Copies of fewer bytes per chunk stay on one thread (the own Concat, Slice, Gather, Expand and
// Pad): kMinStreamingWork floats. At 256 KB, the q, k and v Slices and Gathers of ViT-S and
// Swin-T (0.3-1.2 MB) ran on one thread, 2-3x slower at 2 threads than at 1.
constexpr int64_t kMinCopyChunkBytes = kMinStreamingWork * static_cast<int64_t>(sizeof(float));

template <size_t kBytes>
void fill_elements(char* dst, const char* value, int64_t count) {
  for (int64_t i = 0; i < count; ++i) std::memcpy(dst + i * int64_t(kBytes), value, kBytes);
}

// Writes `count` copies of the `es`-byte element at `value` from dst (the own Expand and Pad).
inline void fill_run(char* dst, const char* value, int64_t count, int64_t es) {
  switch (es) {
    case 1: std::memset(dst, *value, static_cast<size_t>(count)); return;
    case 2: fill_elements<2>(dst, value, count); return;
    case 4: fill_elements<4>(dst, value, count); return;
    case 8: fill_elements<8>(dst, value, count); return;
    default:
      for (int64_t i = 0; i < count; ++i) std::memcpy(dst + i * es, value, static_cast<size_t>(es));
  }
}

// Runs r0..r1 of a copy split into runs over the outer axes [0, split) of `extent` (the
// output's dims): calls fn(r, off) with off = base + sum(idx[d] * stride[d]) for run r's
// odometer index. Shared by the own Slice and Expand (stride 0 broadcasts an axis).
template <typename Fn>
void for_each_run(const Shape& extent, const Shape& stride, size_t split, int64_t base, size_t r0, size_t r1, Fn&& fn) {
  Shape idx(split, 0);  // inline up to 8 axes: no heap
  int64_t rem = static_cast<int64_t>(r0), off = base;
  for (size_t d = split; d-- > 0;) {
    idx[d] = rem % extent[d];
    rem /= extent[d];
    off += idx[d] * stride[d];
  }
  for (size_t r = r0; r < r1; ++r) {
    fn(r, off);
    for (size_t d = split; d-- > 0;) {
      off += stride[d];
      if (++idx[d] < extent[d]) break;
      off -= idx[d] * stride[d];
      idx[d] = 0;
    }
  }
}

// Per-family registration, called from register_optimized_ops (register.cc).
void register_opt_matmul(OpRegistry& registry);
void register_opt_normalization(OpRegistry& registry);
void register_opt_elementwise(OpRegistry& registry);
void register_opt_layout(OpRegistry& registry);
void register_opt_reduce(OpRegistry& registry);

}  // namespace opt
}  // namespace xonnx
