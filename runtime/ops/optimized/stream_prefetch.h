// Kernels that stream weights from memory with little arithmetic per byte (one or two rows of
// A: a decode step, a classifier; a decode step's KV cache) prefetch them this far ahead into
// L2, one prefetch per 64-byte line. The hardware's prefetchers alone keep too few lines in
// flight: a plain read of a large buffer gets 8.8 GB/s on one core of the Xeon VM, a decode
// step with the prefetch 11.5 (docs/performance.md, "Weights streamed from memory").
#pragma once

#include <cstdint>

namespace xonnx {
namespace opt {

constexpr int64_t kWeightPrefetchAheadBytes = 8192;

// Prefetches into L2 the line kWeightPrefetchAheadBytes past p. A hint: it never faults, past
// the end of a buffer included.
inline void prefetch_weights_ahead(const void* p) {
  __builtin_prefetch(static_cast<const char*>(p) + kWeightPrefetchAheadBytes, 0, 2);
}

}  // namespace opt
}  // namespace xonnx
