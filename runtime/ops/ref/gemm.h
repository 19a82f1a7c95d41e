// The blocked GEMM shared by the reference matmul and convolution kernels (MatMul, Gemm,
// Einsum, Conv, ConvTranspose, DeformConv). CT is the accumulation type (float, double, or
// uint64_t for wrapping integer products).
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace xonnx {
namespace ref {

// Accumulation type for element type T: double for double, uint64_t (wrapping) for integers,
// float otherwise (float, float16, bfloat16).
template <typename T>
using gemm_acc_t =
    std::conditional_t<std::is_same_v<T, double>, double, std::conditional_t<std::is_integral_v<T>, uint64_t, float>>;

// C[M x N] += A[M x K] * B[K x N]; all row-major with leading dimensions lda/ldb/ldc.
// Blocked so a tile of B stays in cache while rows of A stream past it, four rows of C at a
// time; every C element accumulates its products in ascending k order.
template <typename CT>
inline void gemm_acc(int64_t M, int64_t N, int64_t K, const CT* A, int64_t lda, const CT* B, int64_t ldb, CT* C,
                     int64_t ldc) {
  constexpr int64_t kNB = 512;  // columns per block (C rows stay in L1)
  constexpr int64_t kKB = 128;  // depth per block (B block stays in L2)
  for (int64_t j0 = 0; j0 < N; j0 += kNB) {
    const int64_t jn = std::min(kNB, N - j0);
    for (int64_t k0 = 0; k0 < K; k0 += kKB) {
      const int64_t kn = std::min(kKB, K - k0);
      int64_t m = 0;
      for (; m + 4 <= M; m += 4) {
        CT* __restrict c0 = C + m * ldc + j0;
        CT* __restrict c1 = c0 + ldc;
        CT* __restrict c2 = c1 + ldc;
        CT* __restrict c3 = c2 + ldc;
        const CT* a = A + m * lda + k0;
        for (int64_t k = 0; k < kn; ++k) {
          const CT a0 = a[k], a1 = a[lda + k], a2 = a[2 * lda + k], a3 = a[3 * lda + k];
          const CT* __restrict b = B + (k0 + k) * ldb + j0;
          for (int64_t j = 0; j < jn; ++j) {
            const CT bv = b[j];
            c0[j] += a0 * bv;
            c1[j] += a1 * bv;
            c2[j] += a2 * bv;
            c3[j] += a3 * bv;
          }
        }
      }
      for (; m < M; ++m) {
        CT* __restrict c = C + m * ldc + j0;
        const CT* a = A + m * lda + k0;
        for (int64_t k = 0; k < kn; ++k) {
          const CT av = a[k];
          const CT* __restrict b = B + (k0 + k) * ldb + j0;
          for (int64_t j = 0; j < jn; ++j) c[j] += av * b[j];
        }
      }
    }
  }
}

}  // namespace ref
}  // namespace xonnx
