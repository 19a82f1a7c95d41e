// The one thread pool of a session, shared by XNNPACK operators and our own kernels.
// pthreadpool workers spin-wait between the parallel regions of a run and sleep after it
// (Session::run calls rest()), so an idle session costs no CPU.
#pragma once

#include <cstddef>
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

class ThreadPool {
 public:
  // 1: everything runs on the caller's thread. The workers start at the first parallel region
  // (a session's first run), so a spinning worker never slows session creation.
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }
  // The pthreadpool handle for an XNNPACK run (nullptr when single-threaded); that run may wake
  // the workers, so the next rest() puts them back to sleep.
  pthreadpool* handle() const {
    awake_ = workers() != nullptr;
    return pool_;
  }
  // Calls fn(begin, end) over [0, n) split into about `num_threads` contiguous chunks of at
  // least `min_chunk` items each.
  void parallel_for(size_t n, size_t min_chunk, RangeFn fn) const;
  // The length of parallel_for(n, min_chunk, ...)'s chunks: chunk i starts at i * chunk_size.
  size_t chunk_size(size_t n, size_t min_chunk) const;
  // Sends the workers to sleep until the next parallel region (the end of a run). A no-op
  // when no region ran since the last rest(): the workers sleep already, and waking them just
  // to send them back costs a run of small serial ops ~30 us.
  void rest() const;

 private:
  // The pthreadpool, created on first use; nullptr when single-threaded (or creation failed,
  // which leaves one thread).
  pthreadpool* workers() const;

  mutable int num_threads_;
  mutable pthreadpool* pool_ = nullptr;
  mutable bool awake_ = false;  // a parallel region ran since the last rest()
};

}  // namespace xonnx
