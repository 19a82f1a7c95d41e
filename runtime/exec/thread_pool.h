// The one thread pool of a session, shared by XNNPACK operators and our own kernels.
// pthreadpool workers sleep between parallel regions (PTHREADPOOL_FLAG_YIELD_WORKERS), so an
// idle session costs no CPU.
#pragma once

#include <cstddef>
#include <functional>

struct pthreadpool;

namespace xonnx {

class ThreadPool {
 public:
  explicit ThreadPool(int num_threads);  // 1: everything runs on the caller's thread
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }
  // The pthreadpool handle for XNNPACK (nullptr when single-threaded).
  pthreadpool* handle() const { return pool_; }
  // Calls fn(begin, end) over [0, n) split into about `num_threads` contiguous chunks of at
  // least `min_chunk` items each.
  void parallel_for(size_t n, size_t min_chunk, const std::function<void(size_t, size_t)>& fn) const;

 private:
  int num_threads_;
  pthreadpool* pool_ = nullptr;
};

}  // namespace xonnx
