// The int8 dot-product path of the 4-bit MatMulNBits (accuracy_level 4 in ORT's contrib-op spec:
// A may be quantized to int8 per block, products in int8 with int32 accumulation):
//   C[m][n] = sum_b a_scale[m][b] * w_scale[n][b] * (sum_k a_q[m][k] * (w_q[n][k] - w_zp[n][b]))
// with a_q the symmetric int8 codes of A per block (a_scale = max|a| / 127, round half to even)
// and w_zp the 4-bit zero point (8 without a zero-point input). The AVX512-VNNI kernel
// (vpdpbusd: nibbles as u8 times codes as s8) computes sum_k a_q * w_q and subtracts
// w_zp * sum_k a_q; q4_int8_reference is its scalar twin over ORT's B layout and gives the same
// int32 sums and the same float combination per column (bit-identical results).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace xonnx {
namespace opt {

constexpr int64_t kQ4Int8Cols = 16;  // columns per group: one 32-bit vector lane each

// B [n, blocks, bs / 2] (element k of a block in the low nibble of byte k / 2 for even k),
// scales [n, blocks] and optional packed zero points [n, zp_row] (two per byte, low first)
// rearranged once for the kernel: per group of 16 columns and per 8 values of depth, 64 bytes
// whose 4 bytes of lane j hold column j's values k..k+3 in the low and k+4..k+7 in the high
// nibbles; scales and zero points as [group][block][16] (columns past n are zero).
struct Q4Int8Weights {
  int64_t n = 0, blocks = 0, bs = 0, groups = 0;
  std::vector<uint8_t> packed;
  std::vector<float> scales;
  std::vector<uint8_t> zero_points;  // always present: 8 for the symmetric case
};
Q4Int8Weights pack_q4_int8_weights(const uint8_t* b, const float* scales, const uint8_t* zp, int64_t zp_row, int64_t n,
                                   int64_t blocks, int64_t bs);

// Depth rows [0, K) of columns [j0, j0 + width) of `w` dequantized for the float path of many
// rows: out[k * width + j] = (code - zero point) * scale, the bits q4_dequant_col gives from B;
// columns from nc on (past n) are zero. A kernel that keeps only the packed weights needs no
// original for its panels.
using Q4Int8PanelFn = void (*)(const Q4Int8Weights& w, int64_t j0, int64_t nc, int64_t width, int64_t K, float* out);
// Where q4_int8_fast() is not nullptr: the AVX-512 one with the VNNI kernel, else the AVX2 one.
Q4Int8PanelFn q4_int8_panel_fast();

// M rows of A [M, K] quantized per block of bs values: codes [M, blocks * bs] (zero past K),
// scales and code sums [M, blocks].
struct Q4Int8A {
  int64_t m = 0, blocks = 0, bs = 0;
  std::vector<int8_t> codes;
  std::vector<float> scales;
  std::vector<int32_t> sums;
};
// Returns false (and leaves `out` unusable) when A holds NaN or infinity: int8 codes cannot
// carry them, so the caller takes the float path, which propagates them.
bool quantize_a_int8(const float* a, int64_t M, int64_t K, int64_t blocks, int64_t bs, Q4Int8A& out);

// C[m][col] for columns [16 * group_begin, min(n, 16 * group_end)) of every row of `a`; C rows
// ldc apart.
using Q4Int8Fn = void (*)(const Q4Int8A& a, const Q4Int8Weights& w, int64_t group_begin, int64_t group_end, float* c,
                          int64_t ldc);

// The scalar twin, reading B, scales and zero points (nullptr: symmetric) in ORT's layout.
void q4_int8_reference(const Q4Int8A& a, const uint8_t* b, const float* scales, const uint8_t* zp, int64_t zp_row,
                       int64_t n, float* c, int64_t ldc);
// The AVX512-VNNI kernel, else the AVX2 one (q4_int8_avx2.cc), or nullptr when this CPU (or
// XONNX_OPT_ISA) allows neither.
Q4Int8Fn q4_int8_fast();

}  // namespace opt
}  // namespace xonnx
