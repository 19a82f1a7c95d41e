// The 1-D transforms of Winograd F(4x4, 3x3) (fwinograd.h) over any value type with +, - and *
// (float in the scalar twins, an AVX-512 vector in fwinograd_avx512.cc): one definition, so
// the two run the same operations in the same order. Internal to the runtime.
#pragma once

namespace xonnx {
namespace opt {

// B^T of F(4x4, 3x3) on 6 values, as sums of exact multiples (by 2, 4): rows
// [4 0 -5 0 1 0], [0 -4 -4 1 1 0], [0 4 -4 -1 1 0], [0 -2 -1 2 1 0], [0 2 -1 -2 1 0], [0 4 0 -5 0 1].
template <typename T>
inline void wino4_b(const T d[6], T r[6]) {
  const T two = T(2.0f), four = T(4.0f);
  r[0] = (d[4] - d[2]) + four * (d[0] - d[2]);
  r[1] = (d[3] + d[4]) - four * (d[1] + d[2]);
  r[2] = (d[4] - d[3]) + four * (d[1] - d[2]);
  r[3] = (d[4] - d[2]) + two * (d[3] - d[1]);
  r[4] = (d[4] - d[2]) + two * (d[1] - d[3]);
  r[5] = (d[5] - d[3]) + four * (d[1] - d[3]);
}

// A^T of F(4x4, 3x3) on 6 values: rows [1 1 1 1 1 0], [0 1 -1 2 -2 0], [0 1 1 4 4 0], [0 1 -1 8 -8 1].
template <typename T>
inline void wino4_a(const T m[6], T y[4]) {
  const T two = T(2.0f), four = T(4.0f), eight = T(8.0f);
  const T sum12 = m[1] + m[2], dif12 = m[1] - m[2], sum34 = m[3] + m[4], dif34 = m[3] - m[4];
  y[0] = (sum12 + sum34) + m[0];
  y[1] = dif12 + two * dif34;
  y[2] = sum12 + four * sum34;
  y[3] = (dif12 + eight * dif34) + m[5];
}

}  // namespace opt
}  // namespace xonnx
