// The one thread pool of a session. Our kernels split their work over its own workers
// (parallel_for); XNNPACK operators get a pthreadpool (handle()) whose workers are sent to sleep
// after each operator (ops/xnnpack Operator::run), so the two sets never spin at once.
//
// Waiting workers spin for at most kSpinMicros and then block on a condition variable, and a
// region never waits for a worker that has not started: the caller takes every chunk nobody
// claimed. On a machine whose cores are busy with other processes a descheduled worker then
// costs nothing, where pthreadpool's spin (1M pause instructions: ~300 ms on an AMD EPYC, whose
// pause is slow) and its join (every worker checks in) cost a scheduler time slice per region.
// A parallel_for inside a chunk runs in turn on that chunk's thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>

struct pthreadpool;

namespace xonnx {

// A non-owning reference to a callable `void(size_t begin, size_t end)`: unlike std::function
// it never allocates, so kernels can hand lambdas with any captures to parallel_for in run().
class RangeFn {
 public:
  template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, RangeFn>>>
  RangeFn(F&& fn)  // NOLINT: implicit, like std::function
      : object_(const_cast<void*>(static_cast<const void*>(&fn))),
        call_([](void* o, size_t b, size_t e) { (*static_cast<std::remove_reference_t<F>*>(o))(b, e); }) {}
  void operator()(size_t begin, size_t end) const { call_(object_, begin, end); }

 private:
  void* object_;
  void (*call_)(void*, size_t, size_t);
};

// Thread safety: one caller at a time (a session runs one request at a time); the workers are
// the pool's own. The workers start at the first parallel region (a session's first run), so
// they never slow session creation; the destructor joins them.
class ThreadPool {
 public:
  // How long an idle worker (or a caller waiting for the last chunk) spins before it blocks:
  // long enough to bridge the serial ops between two regions of a run, short enough that a
  // worker never holds a core another process needs for more than a blink (a scheduler slice
  // is several ms; an XNNPACK operator puts spinning workers to sleep at once). A run's end
  // does not: the next run, back to back, starts with its workers awake (ORT's spin too).
  // 50 us let a worker fall asleep before 15-20 % of the regions of vit_b_16 and densenet121,
  // each then waiting for its wake-up (22 runs: 718 and 758 sleeps; at 1 ms, 208 and 23).
  static constexpr int64_t kSpinMicros = 1000;

  // 1: everything runs on the caller's thread.
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }
  // The pthreadpool handle for an XNNPACK run (nullptr when single-threaded). Our spinning
  // workers go to sleep at once: the XNNPACK operator needs the cores. Defined in
  // thread_pool_xnnpack.cc, which only the XNNPACK kernels pull in: a build without them
  // links no pthreadpool.
  pthreadpool* handle() const;
  // Calls fn(begin, end) over [0, n) split into contiguous chunks of equal length (the last may
  // be shorter): `num_threads` of them, or fewer, ceil(n / min_chunk), when n is under
  // num_threads * min_chunk. `min_chunk` is the work worth a chunk of its own. The first chunk
  // always runs on the calling thread.
  void parallel_for(size_t n, size_t min_chunk, RangeFn fn) const;
  // The length of parallel_for(n, min_chunk, ...)'s chunks: chunk i starts at i * chunk_size.
  size_t chunk_size(size_t n, size_t min_chunk) const;
  // For a caller about to go idle (Session::trim_memory): spinning workers go to sleep now
  // rather than after kSpinMicros.
  void rest() const;

 private:
  class Workers;  // thread_pool.cc: the worker threads and the region hand-off

  // The workers, started at the first parallel region; nullptr until then and when
  // single-threaded (or no thread could start, which leaves one thread).
  Workers* workers() const;

  mutable int num_threads_;
  mutable std::unique_ptr<Workers> workers_;
  mutable pthreadpool* xnn_pool_ = nullptr;
};

}  // namespace xonnx
