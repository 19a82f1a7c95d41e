// Finiteness scans over float results. XNNPACK's min/max-clamped micro-kernels turn NaN into
// the lower bound (-inf with unbounded outputs), and its Softmax and MaxPool differ from the
// reference on NaN/inf; some own kernels differ on inf. So a fast kernel whose output holds a
// non-finite value reruns the node with the reference kernel (exact semantics; rare).
#pragma once

#include <cstddef>

namespace xonnx {

class ThreadPool;

bool all_finite(const float* p, size_t n);
// The same scan split over the pool's threads (a serial scan of a large activation is a tail
// between two parallel ops).
bool all_finite(const float* p, size_t n, const ThreadPool& pool);
bool has_nan(const float* p, size_t n);

}  // namespace xonnx
