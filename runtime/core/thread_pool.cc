#include "runtime/core/thread_pool.h"

#include "runtime/core/thread_pool_xnnpack.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace xonnx {

std::atomic<DestroyXnnPool> g_destroy_xnn_pool{nullptr};

namespace {

constexpr int kMaxThreads = 1024;  // chunk counts fit the 16-bit fields of Workers::work_

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__) || defined(__arm__)
  asm volatile("yield");
#endif
}

// Spins until ready() or kSpinMicros have passed or *park is set; true when ready() held.
template <typename Ready>
bool spin_until(Ready ready, const std::atomic<bool>* park) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::microseconds(ThreadPool::kSpinMicros);
  for (;;) {
    for (int i = 0; i < 4; ++i) {  // a pause takes up to ~0.3 us on Zen: few per clock read
      if (ready()) return true;
      cpu_relax();
    }
    if ((park && park->load(std::memory_order_relaxed)) || Clock::now() >= deadline) return ready();
  }
}

// Set while a thread runs a chunk: a parallel_for from inside one runs in turn on that thread
// (publishing a region then would replace the one in progress).
thread_local bool t_in_region = false;

}  // namespace

// The worker threads and the hand-off of one region at a time. A region is published in
// work_, which packs (generation << 32) | (chunk count << 16) | next unclaimed chunk: a thread
// claims a chunk with one compare-and-swap that also proves the region is still current, so a
// worker that wakes late finds nothing to claim and never touches a finished region.
class ThreadPool::Workers {
 public:
  explicit Workers(int worker_count) {
    try {
      threads_.reserve(static_cast<size_t>(worker_count));
      for (int i = 0; i < worker_count; ++i) threads_.emplace_back([this] { loop(); });
    } catch (const std::system_error&) {
      // Fewer threads than asked: the ones that started share the work.
    }
  }
  ~Workers() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_.store(true, std::memory_order_seq_cst);
    }
    region_posted_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  bool started() const { return !threads_.empty(); }
  void park() { park_.store(true, std::memory_order_relaxed); }

  // Runs the region on the caller and every worker that comes; returns when all chunks ran.
  void run(const RangeFn& fn, size_t n, size_t chunk) {
    const size_t count = (n + chunk - 1) / chunk;
    const Region region{&fn, n, chunk};
    const uint64_t next = (work_.load(std::memory_order_relaxed) >> 32) + 1;
    chunks_done_.store(0, std::memory_order_relaxed);
    region_.store(&region, std::memory_order_relaxed);
    park_.store(false, std::memory_order_relaxed);
    // Chunk 0 is the caller's, published as claimed: consecutive regions then give the caller
    // the same first part of their ranges, which the previous op left in its core's cache
    // (with 2 threads the worker's part is the same every time too, unless the caller has to
    // take it from a late worker).
    work_.store((next << 32) | (static_cast<uint64_t>(count) << 16) | 1, std::memory_order_seq_cst);
    if (sleeping_.load(std::memory_order_seq_cst) > 0) {
      { std::lock_guard<std::mutex> lock(mutex_); }  // a worker between its check and its wait
      region_posted_.notify_all();
    }
    run_chunk(region, 0, count);
    run_chunks();
    // Every chunk is claimed now: only workers that did start one are waited for.
    auto done = [&] { return chunks_done_.load(std::memory_order_seq_cst) == count; };
    if (spin_until(done, nullptr)) return;
    std::unique_lock<std::mutex> lock(mutex_);
    caller_sleeping_.store(true, std::memory_order_seq_cst);
    region_done_.wait(lock, done);
    caller_sleeping_.store(false, std::memory_order_relaxed);
  }

 private:
  struct Region {
    const RangeFn* fn;
    size_t n;
    size_t chunk;
  };
  static constexpr uint64_t kFieldMask = 0xffff;

  // Runs chunk `index` of the region's `count` and counts it done, waking a caller that sleeps
  // on the last one.
  void run_chunk(const Region& r, size_t index, uint64_t count) {
    const size_t begin = index * r.chunk;
    t_in_region = true;
    (*r.fn)(begin, std::min(r.n, begin + r.chunk));
    t_in_region = false;
    if (chunks_done_.fetch_add(1, std::memory_order_seq_cst) + 1 == count &&
        caller_sleeping_.load(std::memory_order_seq_cst)) {
      { std::lock_guard<std::mutex> lock(mutex_); }
      region_done_.notify_one();
    }
  }

  void run_chunks() {
    uint64_t work = work_.load(std::memory_order_acquire);
    for (;;) {
      const uint64_t index = work & kFieldMask, count = (work >> 16) & kFieldMask;
      if (index >= count) return;
      if (!work_.compare_exchange_weak(work, work + 1, std::memory_order_acq_rel, std::memory_order_acquire)) {
        continue;
      }
      // The swap succeeded on this generation, so its region cannot end before this chunk does.
      run_chunk(*region_.load(std::memory_order_acquire), static_cast<size_t>(index), count);
      work = work_.load(std::memory_order_acquire);
    }
  }

  void loop() {
    uint64_t seen = work_.load(std::memory_order_acquire) >> 32;
    auto posted = [&] {
      return (work_.load(std::memory_order_seq_cst) >> 32) != seen || stop_.load(std::memory_order_relaxed);
    };
    for (;;) {
      if (!spin_until(posted, &park_)) {
        std::unique_lock<std::mutex> lock(mutex_);
        sleeping_.fetch_add(1, std::memory_order_seq_cst);
        region_posted_.wait(lock, posted);
        sleeping_.fetch_sub(1, std::memory_order_relaxed);
      }
      if (stop_.load(std::memory_order_acquire)) return;
      seen = work_.load(std::memory_order_acquire) >> 32;
      run_chunks();
    }
  }

  std::vector<std::thread> threads_;
  std::atomic<uint64_t> work_{0};
  std::atomic<const Region*> region_{nullptr};  // stored before its generation is published
  std::atomic<size_t> chunks_done_{0};
  std::atomic<bool> park_{false};  // spinning workers block now (ThreadPool::rest(), handle())
  std::atomic<bool> stop_{false};
  std::atomic<int> sleeping_{0};
  std::atomic<bool> caller_sleeping_{false};
  std::mutex mutex_;
  std::condition_variable region_posted_;
  std::condition_variable region_done_;
};

ThreadPool::ThreadPool(int num_threads) : num_threads_(std::clamp(num_threads, 1, kMaxThreads)) {}

ThreadPool::~ThreadPool() {
  workers_.reset();
  if (xnn_pool_) g_destroy_xnn_pool.load()(xnn_pool_);  // set by handle(), which made the pool
}

ThreadPool::Workers* ThreadPool::workers() const {
  if (!workers_ && num_threads_ > 1) {
    workers_ = std::make_unique<Workers>(num_threads_ - 1);
    if (!workers_->started()) {
      workers_.reset();
      num_threads_ = 1;
    }
  }
  return workers_.get();
}

void ThreadPool::rest() const {
  if (workers_) workers_->park();
}

size_t ThreadPool::chunk_size(size_t n, size_t min_chunk) const {
  const size_t threads = static_cast<size_t>(num_threads_), least = std::max<size_t>(1, min_chunk);
  if (threads < 2 || n <= least) return std::max<size_t>(1, n);
  // Chunks of equal length: n = 1.2 min_chunk on 2 threads ran as 1.0 + 0.2, which left the
  // first thread with 83 % of the work; two halves take 60 %.
  const size_t chunks = std::min(threads, (n + least - 1) / least);
  return (n + chunks - 1) / chunks;
}

void ThreadPool::parallel_for(size_t n, size_t min_chunk, RangeFn fn) const {
  if (n == 0) return;
  const size_t chunk = chunk_size(n, min_chunk);
  if (chunk >= n) {
    fn(0, n);
    return;
  }
  if (Workers* w = t_in_region ? nullptr : workers()) {
    w->run(fn, n, chunk);
  } else {  // nested in a region, or no thread could start: the same chunks, in turn
    for (size_t begin = 0; begin < n; begin += chunk) fn(begin, std::min(n, begin + chunk));
  }
}

}  // namespace xonnx
