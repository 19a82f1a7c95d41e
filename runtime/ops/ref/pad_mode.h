// Pad's modes and where an output position reads from, shared by the reference kernel
// (layout_pad.cc) and the optimized one (ops/optimized/pad.cc).
#pragma once

#include <cstdint>

namespace xonnx {
namespace ref {

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

// The input index along an axis of n >= 1 kept elements that position c (the output index
// minus the begin padding) reads, or -1 for the constant fill. Reflect and wrap repeat for pads
// longer than the axis.
inline int64_t pad_source(PadMode mode, int64_t c, int64_t n) {
  if (c >= 0 && c < n) return c;
  switch (mode) {
    case PadMode::kConstant: return -1;
    case PadMode::kEdge: return c < 0 ? 0 : n - 1;
    case PadMode::kWrap: return ((c % n) + n) % n;
    case PadMode::kReflect: {
      if (n == 1) return 0;
      const int64_t p = 2 * (n - 1);
      c = ((c % p) + p) % p;
      return c >= n ? p - c : c;
    }
  }
  return -1;
}

}  // namespace ref
}  // namespace xonnx
