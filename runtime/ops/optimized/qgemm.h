// int8 GEMM of the quantized convolution and QGemm (optimized/qlinear.cc, qgemm_op.cc):
//   C[m][n] = clamp(round((sum_k A[m][k] * W[n][k] + offset[n]) * scale[n]) + zero_point, lo, hi)
// with A uint8 (or int8 read as A + 128, QgemmRequant::a_signed), W int8 (symmetric weights), C
// int8 or uint8 (both stored through the clamp), float without the rounding (float_out), or the
// int32 sums themselves (int32_out). The AVX512-VNNI kernel (vpdpbusd: four
// u8 x s8 products per 32-bit lane) is what XNNPACK 2022 lacks; qgemm_reference is its twin
// and gives bit-identical results (same int32 sums, same float requantization).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace xonnx {
namespace opt {

constexpr int64_t kQgemmNr = 32;  // columns per packed panel

// W packed once per session: panels of 32 columns, each [k4 / 4][32][4] bytes (columns past n
// and k past the real depth are zero).
struct QgemmWeights {
  int64_t n = 0, k = 0, k4 = 0;  // k4: k rounded up to a multiple of 4
  std::vector<int8_t> packed;
  std::vector<int32_t> column_sums;  // sum over k of W[n][k]
};
// w: [n][k] row-major.
QgemmWeights pack_qgemm_weights(const int8_t* w, int64_t n, int64_t k);

struct QgemmRequant {
  const int32_t* offset = nullptr;  // [n]: bias - a_zero_point * column_sums
  const float* scale = nullptr;     // [n]: a_scale * w_scale / c_scale
  int32_t zero_point = 0, lo = -128, hi = 127;
  // A's bytes are int8: the kernels flip their sign bit (+128) as they load them, so int8
  // activations need no shifted copy; a_zero_point in `offset` is then the shifted one.
  bool a_signed = false;
  // C is float instead: C[m][n] = float(sum + offset[n]) * scale[n] (no zero point or clamp),
  // then + bias[n] when bias is set (a separate add, as Cast -> Mul -> Add computes it); c points
  // to floats and ldc counts floats.
  bool float_out = false;
  // C is int32 instead (MatMulInteger): C[m][n] = sum + offset[n], exact; scale is loaded but
  // not applied (it must still hold n floats), c points to int32s and ldc counts them.
  bool int32_out = false;
  const float* bias = nullptr;  // float_out only: [n], or nullptr
};

// A: m rows of w.k4 bytes at a + r * lda (bytes past w.k meet zero weights: any value); C: m rows of n bytes
// at c + r * ldc.
using QgemmFn = void (*)(const uint8_t* a, size_t lda, size_t m, const QgemmWeights& w, const QgemmRequant& rq,
                         uint8_t* c, size_t ldc);

void qgemm_reference(const uint8_t* a, size_t lda, size_t m, const QgemmWeights& w, const QgemmRequant& rq, uint8_t* c,
                     size_t ldc);
// The AVX512-VNNI kernel, or nullptr when this CPU (or XONNX_OPT_ISA below avx512) lacks it.
QgemmFn qgemm_fast();

}  // namespace opt
}  // namespace xonnx
