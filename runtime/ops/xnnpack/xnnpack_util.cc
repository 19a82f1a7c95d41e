#include "runtime/ops/xnnpack/xnnpack_util.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>

#include <pthreadpool.h>

#include "runtime/core/thread_pool.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace xnn {

namespace {
std::atomic<uint64_t> g_runs{0};

const char* status_name(xnn_status s) {
  switch (s) {
    case xnn_status_success: return "success";
    case xnn_status_uninitialized: return "XNNPACK is not initialized";
    case xnn_status_invalid_parameter: return "invalid parameter";
    case xnn_status_invalid_state: return "invalid state";
    case xnn_status_unsupported_parameter: return "unsupported parameter";
    case xnn_status_unsupported_hardware: return "unsupported hardware";
    case xnn_status_out_of_memory: return "out of memory";
  }
  return "unknown status";
}
}  // namespace

Status initialize() {
  static std::once_flag once;
  static xnn_status result = xnn_status_uninitialized;
  std::call_once(once, [] { result = xnn_initialize(nullptr); });
  return check(result, "xnn_initialize");
}

Status check(xnn_status s, const char* what) {
  switch (s) {
    case xnn_status_success: return Status::ok();
    case xnn_status_out_of_memory: return resource_exhausted(what, ": ", status_name(s));
    case xnn_status_invalid_parameter:
    case xnn_status_unsupported_parameter:
    case xnn_status_unsupported_hardware: return unsupported(what, ": ", status_name(s));
    default: return internal_error(what, ": ", status_name(s));
  }
}

void Operator::reset() {
  if (op_) xnn_delete_operator(op_);
  op_ = nullptr;
}

namespace {
constexpr uint32_t kFirstProbe = 8, kMaxProbeInterval = 1024;
std::atomic<uint32_t> g_probe_stagger{0};  // operators re-time on different runs
}  // namespace

bool ThreadChoice::threaded() {
  ++runs_;
  if (threaded_us_ < 0) return true;
  if (single_us_ < 0) return false;
  const bool faster_threaded = threaded_us_ <= single_us_;
  if (interval_ == 0) {
    interval_ = kFirstProbe;
    next_probe_ = runs_ + kFirstProbe + g_probe_stagger.fetch_add(1, std::memory_order_relaxed) % kFirstProbe;
  }
  if (runs_ < next_probe_) return faster_threaded;
  return !faster_threaded;  // re-time the other way
}

void ThreadChoice::record(bool threaded, double us) {
  const bool was_faster_threaded = threaded_us_ <= single_us_;
  double& average = threaded ? threaded_us_ : single_us_;
  average = average < 0 ? us : 0.5 * (average + us);
  if (interval_ == 0 || runs_ < next_probe_) return;
  // A re-time that lost again waits twice as long for the next; one that won starts over.
  const bool flipped = (threaded_us_ <= single_us_) != was_faster_threaded;
  interval_ = flipped ? kFirstProbe : std::min(kMaxProbeInterval, interval_ * 2);
  next_probe_ = runs_ + interval_;
}

Status Operator::run(pthreadpool_t pool) const {
  if (!op_) return internal_error("running an XNNPACK operator that was not created");
  g_runs.fetch_add(1, std::memory_order_relaxed);
  if (!pool) return check(xnn_run_operator(op_, nullptr), "xnn_run_operator");
  const bool threaded = choice_.threaded();
  const auto start = std::chrono::steady_clock::now();
  const Status status = check(xnn_run_operator(op_, threaded ? pool : nullptr), "xnn_run_operator");
  if (threaded) {
    // pthreadpool's workers would spin for 1M pause instructions (~300 ms on an AMD EPYC)
    // after the operator, holding cores the next ops and other processes need: an empty
    // region with PTHREADPOOL_FLAG_YIELD_WORKERS sends them to sleep at once (the next threaded
    // operator wakes them, which costs little next to work of kMinParallelWork).
    pthreadpool_parallelize_1d(
        pool, [](void*, size_t) {}, nullptr, pthreadpool_get_threads_count(pool), PTHREADPOOL_FLAG_YIELD_WORKERS);
  }
  choice_.record(threaded, std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  return status;
}

namespace {
constexpr double kMinParallelWork = 1 << 20;
}

bool parallel_pays(double work) { return work >= kMinParallelWork; }

pthreadpool_t pool_for(const ThreadPool& pool, double work) { return parallel_pays(work) ? pool.handle() : nullptr; }

uint64_t run_count() { return g_runs.load(std::memory_order_relaxed); }

Status init_xnn_kernel(FastKernel& kernel, const KernelInit& init) {
  XONNX_RETURN_IF_ERROR(initialize());
  return kernel.init_fallback(init);
}

bool over_read_safe(const void* p, size_t bytes) {
  if (bytes == 0) return false;
  constexpr uintptr_t kPage = 4096;
  const uintptr_t last = reinterpret_cast<uintptr_t>(p) + bytes - 1;
  return last / kPage == (last + XNN_EXTRA_BYTES) / kPage;
}

Buffer& thread_scratch(int which) {
  thread_local Buffer buffers[2];
  return buffers[which & 1];
}

const float* readable_input(const Tensor& t, Buffer& scratch) {
  const float* data = t.data<float>();
  const size_t n = static_cast<size_t>(t.numel());
  if (over_read_safe(data, n * sizeof(float))) return data;
  float* copy = scratch.resize(n);
  std::memcpy(copy, data, n * sizeof(float));
  return copy;
}

const uint8_t* readable_bytes(const Tensor& t, Buffer& scratch) {
  const uint8_t* data = static_cast<const uint8_t*>(t.raw_data());
  const size_t n = static_cast<size_t>(t.numel());
  if (over_read_safe(data, n)) return data;
  uint8_t* copy = reinterpret_cast<uint8_t*>(scratch.resize((n + sizeof(float) - 1) / sizeof(float)));
  std::memcpy(copy, data, n);
  return copy;
}

bool broadcast_dims(const Tensor& a, const Tensor& b, BroadcastDims& d) {
  if (a.rank() > XNN_MAX_TENSOR_DIMS || b.rank() > XNN_MAX_TENSOR_DIMS || a.numel() <= 0 || b.numel() <= 0)
    return false;
  const size_t rank = std::max(a.rank(), b.rank());
  d.out.assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.rank() ? 1 : a.dim(i - (rank - a.rank()));
    const int64_t db = i < rank - b.rank() ? 1 : b.dim(i - (rank - b.rank()));
    if (da != db && da != 1 && db != 1) return false;
    d.out[i] = da == 1 ? db : da;
  }
  d.a[0] = d.b[0] = 1;
  for (size_t i = 0; i < a.rank(); ++i) d.a[i] = static_cast<size_t>(a.dim(i));
  for (size_t i = 0; i < b.rank(); ++i) d.b[i] = static_cast<size_t>(b.dim(i));
  d.rank_a = std::max<size_t>(a.rank(), 1);
  d.rank_b = std::max<size_t>(b.rank(), 1);
  return true;
}

}  // namespace xnn

void register_xnnpack_ops(OpRegistry& registry) {
  xnn::register_xnnpack_conv(registry);
  xnn::register_xnnpack_deconv(registry);
  xnn::register_xnnpack_matmul(registry);
  xnn::register_xnnpack_pool(registry);
  xnn::register_xnnpack_elementwise(registry);
  xnn::register_xnnpack_qlinear(registry);
  xnn::register_xnnpack_qlinear_binary(registry);
}

}  // namespace xonnx
