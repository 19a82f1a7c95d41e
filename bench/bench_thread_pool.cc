// Google Benchmark: the session thread pool (runtime/core/thread_pool) against a bare
// pthreadpool (what the pool was before: workers spin 1M pause instructions after a region,
// and a region waits until every worker checked in), on a decode-step-like pattern: many small
// parallel regions with a little serial work between them.
// Run: build/bin/xonnx_bench_thread_pool
// Arguments: 0 = ThreadPool, 1 = bare pthreadpool; then the number of busy background threads
// (0 = uncontended; one per core = the cores are shared with other processes, as on a
// developer's machine or an edge box running other services). The pool has 2 threads.
#include <benchmark/benchmark.h>
#include <pthreadpool.h>

#include <atomic>
#include <cmath>
#include <thread>
#include <vector>

#include "runtime/core/thread_pool.h"

namespace xonnx {
namespace {

constexpr int kThreads = 2;
constexpr int kRegions = 64;        // parallel ops in one "step"
constexpr size_t kItems = 2 * 256;  // per region; each item ~0.1 us
constexpr int kSerialItems = 64;    // serial work between two regions

float work_item(size_t i) {
  float x = static_cast<float>(i) * 1e-3f;
  for (int k = 0; k < 24; ++k) x = std::sqrt(x * x + 1.0f) - 0.5f;
  return x;
}

// Busy threads that hold the cores while they live.
class Hogs {
 public:
  explicit Hogs(int n) {
    for (int i = 0; i < n; ++i)
      threads_.emplace_back([this] {
        volatile float sink = 0;
        while (!stop_.load(std::memory_order_relaxed)) sink = sink + work_item(7);
      });
  }
  ~Hogs() {
    stop_ = true;
    for (auto& t : threads_) t.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

struct Sum {
  std::vector<float> out = std::vector<float>(kItems);
  void range(size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) out[i] = work_item(i);
  }
};

float serial_work() {
  float s = 0;
  for (int i = 0; i < kSerialItems; ++i) s += work_item(static_cast<size_t>(i));
  return s;
}

void BM_DecodeLikeStep(benchmark::State& state) {
  const bool bare = state.range(0) == 1;
  Hogs hogs(static_cast<int>(state.range(1)));
  ThreadPool pool(kThreads);
  pthreadpool* raw = bare ? pthreadpool_create(kThreads) : nullptr;
  Sum sum;
  for (auto _ : state) {
    for (int r = 0; r < kRegions; ++r) {
      if (bare) {
        pthreadpool_parallelize_1d(
            raw,
            [](void* s, size_t i) {
              static_cast<Sum*>(s)->range(i * (kItems / kThreads), (i + 1) * (kItems / kThreads));
            },
            &sum, kThreads, 0);
      } else {
        pool.parallel_for(kItems, 1, [&](size_t b, size_t e) { sum.range(b, e); });
      }
      benchmark::DoNotOptimize(serial_work());
    }
    benchmark::DoNotOptimize(sum.out.data());
  }
  if (raw) pthreadpool_destroy(raw);
  state.SetLabel(bare ? "pthreadpool" : "ThreadPool");
}
BENCHMARK(BM_DecodeLikeStep)
    ->ArgsProduct({{0, 1}, {0, 2}})
    ->ArgNames({"bare", "hogs"})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime()
    ->MinTime(1.0);

}  // namespace
}  // namespace xonnx

BENCHMARK_MAIN();
