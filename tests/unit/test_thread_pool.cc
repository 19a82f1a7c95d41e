// The session thread pool: every item of a region runs exactly once, whatever the thread count,
// whether the workers spin, sleep or come late, and the pool shuts down from any state.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "runtime/core/thread_pool.h"

namespace xonnx {
namespace {

// Runs parallel_for(n, min_chunk) and checks that every index ran once and chunks are contiguous.
void expect_each_index_once(const ThreadPool& pool, size_t n, size_t min_chunk) {
  std::vector<std::atomic<int>> hits(n);
  const size_t chunk = pool.chunk_size(n, min_chunk);
  pool.parallel_for(n, min_chunk, [&](size_t begin, size_t end) {
    EXPECT_LT(begin, end);
    EXPECT_EQ(begin % chunk, 0u) << "n " << n;
    EXPECT_TRUE(end == n || end - begin == chunk) << "n " << n;
    for (size_t i = begin; i < end; ++i) hits[i].fetch_add(1);
  });
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "index " << i << " of " << n;
}

TEST(ThreadPool, EveryIndexRunsOnceForOddSizesAndThreadCounts) {
  for (int threads : {1, 2, 3, 4}) {
    ThreadPool pool(threads);
    for (size_t n : {1, 2, 3, 13, 127, 128, 129, 1000}) {
      for (size_t min_chunk : {0, 1, 7, 64}) expect_each_index_once(pool, n, min_chunk);
    }
  }
}

TEST(ThreadPool, ManyBackToBackRegionsLoseNothing) {
  ThreadPool pool(3);
  std::atomic<size_t> total{0};
  for (int r = 0; r < 20000; ++r) {
    pool.parallel_for(6, 1, [&](size_t b, size_t e) { total.fetch_add(e - b); });
  }
  EXPECT_EQ(total.load(), 20000u * 6u);
}

TEST(ThreadPool, RegionsAfterTheWorkersWentToSleep) {
  ThreadPool pool(2);
  for (int r = 0; r < 20; ++r) {
    expect_each_index_once(pool, 129, 1);
    if (r % 2) pool.rest();  // park at once
    // Longer than the spin: the workers block and must be woken by the next region.
    std::this_thread::sleep_for(std::chrono::microseconds(4 * ThreadPool::kSpinMicros));
  }
}

TEST(ThreadPool, UnevenChunksWaitForTheSlowWorker) {
  ThreadPool pool(2);
  for (int r = 0; r < 50; ++r) {
    std::atomic<int> done{0};
    pool.parallel_for(2, 1, [&](size_t b, size_t) {
      // One chunk outlasts the caller's spin: the caller blocks and is woken by the worker.
      if (b == 1) std::this_thread::sleep_for(std::chrono::microseconds(3 * ThreadPool::kSpinMicros));
      done.fetch_add(1);
    });
    ASSERT_EQ(done.load(), 2) << "round " << r;
  }
}

// The caller's part of a range is the same in every region: a kernel reads what the previous
// op wrote on the same core.
TEST(ThreadPool, TheFirstChunkRunsOnTheCaller) {
  for (int threads : {2, 3, 4}) {
    ThreadPool pool(threads);
    const std::thread::id caller = std::this_thread::get_id();
    for (int r = 0; r < 500; ++r) {
      std::atomic<int> on_caller{0};
      pool.parallel_for(64, 1, [&](size_t b, size_t) {
        if (b == 0 && std::this_thread::get_id() == caller) on_caller.fetch_add(1);
      });
      ASSERT_EQ(on_caller.load(), 1) << threads << " threads, region " << r;
      if (r % 100 == 99) pool.rest();  // and after the workers went to sleep
    }
  }
}

TEST(ThreadPool, NestedRegionsRunInTurnOnTheirThread) {
  ThreadPool pool(3);
  std::vector<std::atomic<int>> hits(64 * 64);
  pool.parallel_for(64, 1, [&](size_t b0, size_t e0) {
    for (size_t i = b0; i < e0; ++i) {
      pool.parallel_for(64, 1, [&](size_t b1, size_t e1) {
        for (size_t j = b1; j < e1; ++j) hits[i * 64 + j].fetch_add(1);
      });
    }
  });
  for (size_t k = 0; k < hits.size(); ++k) ASSERT_EQ(hits[k].load(), 1) << "item " << k;
}

TEST(ThreadPool, XnnpackHandleOnlyWhenMultiThreaded) {
  EXPECT_EQ(ThreadPool(1).handle(), nullptr);
  ThreadPool pool(2);
  EXPECT_NE(pool.handle(), nullptr);
  expect_each_index_once(pool, 128, 1);  // our workers still run after an XNNPACK hand-off
}

TEST(ThreadPool, DestroysWithSpinningSleepingOrUnstartedWorkers) {
  { ThreadPool unstarted(4); }
  {
    ThreadPool spinning(4);
    expect_each_index_once(spinning, 64, 1);
  }
  {
    ThreadPool sleeping(4);
    expect_each_index_once(sleeping, 64, 1);
    sleeping.rest();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

}  // namespace
}  // namespace xonnx
