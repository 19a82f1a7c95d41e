#include "runtime/ops/common/finite.h"

#include <algorithm>
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

XONNX_SCAN_CLONES bool has_nan(const float* p, size_t n) {
  return any_bits(p, n, [](uint32_t b) { return (b & 0x7fffffffu) > 0x7f800000u; });
}

}  // namespace xonnx
