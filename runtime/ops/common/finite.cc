#include "runtime/ops/common/finite.h"

#include "runtime/core/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>

namespace xonnx {

namespace {
// OR over n floats of pred(bits), in blocks so the compiler vectorizes and large inputs exit
// early.
template <typename Pred>
inline bool any_bits(const float* p, size_t n, Pred pred) {
  constexpr size_t kBlock = 256;
  for (size_t i = 0; i < n; i += kBlock) {
    const size_t e = std::min(n, i + kBlock);
    uint32_t hit = 0;
    for (size_t j = i; j < e; ++j) {
      uint32_t b;
      std::memcpy(&b, p + j, sizeof(b));
      hit |= pred(b) ? 1u : 0u;
    }
    if (hit) return true;
  }
  return false;
}

// The scans follow every XNNPACK run that can make a non-finite value: GCC also compiles AVX2
// and AVX-512 clones of them and picks one at load time (this file is built for the baseline).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define XONNX_SCAN_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define XONNX_SCAN_CLONES
#endif
}  // namespace

XONNX_SCAN_CLONES bool all_finite(const float* p, size_t n) {
  return !any_bits(p, n, [](uint32_t b) { return (b & 0x7f800000u) == 0x7f800000u; });
}

bool all_finite(const float* p, size_t n, const ThreadPool& pool) {
  constexpr size_t kChunk = 32768;  // floats per task: ~5 us of scan
  if (n <= kChunk || pool.num_threads() < 2) return all_finite(p, n);
  std::atomic<bool> finite{true};
  pool.parallel_for((n + kChunk - 1) / kChunk, 1, [&](size_t b, size_t e) {
    if (finite.load(std::memory_order_relaxed) && !all_finite(p + b * kChunk, std::min(n, e * kChunk) - b * kChunk))
      finite.store(false, std::memory_order_relaxed);
  });
  return finite.load(std::memory_order_relaxed);
}

XONNX_SCAN_CLONES bool has_nan(const float* p, size_t n) {
  return any_bits(p, n, [](uint32_t b) { return (b & 0x7fffffffu) > 0x7f800000u; });
}

}  // namespace xonnx
