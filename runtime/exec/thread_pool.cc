#include "runtime/exec/thread_pool.h"

#include <pthreadpool.h>

#include <algorithm>

namespace xonnx {

ThreadPool::ThreadPool(int num_threads) : num_threads_(std::max(1, num_threads)) {}

pthreadpool* ThreadPool::workers() const {
  if (!pool_ && num_threads_ > 1) {
    pool_ = pthreadpool_create(static_cast<size_t>(num_threads_));
    if (!pool_) num_threads_ = 1;
  }
  return pool_;
}

ThreadPool::~ThreadPool() {
  if (pool_) pthreadpool_destroy(pool_);
}

namespace {
struct ChunkTask {
  const RangeFn* fn;
  size_t n;
  size_t chunk;
};
void run_chunk(void* ctx, size_t i) {
  const auto* t = static_cast<const ChunkTask*>(ctx);
  const size_t begin = i * t->chunk;
  (*t->fn)(begin, std::min(t->n, begin + t->chunk));
}
}  // namespace

size_t ThreadPool::chunk_size(size_t n, size_t min_chunk) const {
  const size_t threads = static_cast<size_t>(num_threads_);
  if (threads < 2 || n <= std::max<size_t>(1, min_chunk)) return std::max<size_t>(1, n);
  return std::max(std::max<size_t>(1, min_chunk), (n + threads - 1) / threads);
}

void ThreadPool::parallel_for(size_t n, size_t min_chunk, RangeFn fn) const {
  if (n == 0) return;
  const size_t chunk = chunk_size(n, min_chunk);
  if (chunk >= n) {
    fn(0, n);
    return;
  }
  if (!workers()) {  // no thread could start: the same chunks, in turn
    for (size_t begin = 0; begin < n; begin += chunk) fn(begin, std::min(n, begin + chunk));
    return;
  }
  ChunkTask task{&fn, n, chunk};
  awake_ = true;
  // Workers spin briefly for the next region (within a run they come back in microseconds;
  // a futex wake-up per op cost more than small ops gain from a second thread). rest() puts
  // them to sleep after a run.
  pthreadpool_parallelize_1d(pool_, run_chunk, &task, (n + chunk - 1) / chunk, 0);
}

void ThreadPool::rest() const {
  if (!pool_ || !awake_) return;
  awake_ = false;
  pthreadpool_parallelize_1d(
      pool_, [](void*, size_t) {}, nullptr, static_cast<size_t>(num_threads_), PTHREADPOOL_FLAG_YIELD_WORKERS);
}

}  // namespace xonnx
