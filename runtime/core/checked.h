// Overflow-checked size arithmetic for sizes computed from model data (dims, attributes,
// counts): a hostile file can make any product wrap, and a wrapped size passes later checks.
// Both helpers return -1 when an operand is negative or the result does not fit in int64,
// like shape_numel; callers report that as an error without printing the wrapped number.
#pragma once

#include <cstdint>

namespace xonnx {

inline int64_t checked_mul(int64_t a, int64_t b) {
  int64_t out = 0;
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &out)) return -1;
  return out;
}

template <typename... Rest>
int64_t checked_mul(int64_t a, int64_t b, int64_t c, Rest... rest) {
  const int64_t ab = checked_mul(a, b);
  return ab < 0 ? -1 : checked_mul(ab, c, rest...);
}

inline int64_t checked_add(int64_t a, int64_t b) {
  int64_t out = 0;
  if (a < 0 || b < 0 || __builtin_add_overflow(a, b, &out)) return -1;
  return out;
}

}  // namespace xonnx
