#include "runtime/ops/optimized/q4_int8.h"

#include <cmath>
#include <cstring>

#include "runtime/ops/optimized/kernels.h"

namespace xonnx {
namespace opt {

Q4Int8Fn q4_int8_avx512vnni();             // q4_int8_avx512vnni.cc (nullptr off x86-64)
Q4Int8Fn q4_int8_avx2();                   // q4_int8_avx2.cc (nullptr off x86-64)
Q4Int8PanelFn q4_int8_panel_avx2();        // q4_int8_avx2.cc (nullptr off x86-64)
Q4Int8PanelFn q4_int8_panel_avx512vnni();  // q4_int8_avx512vnni.cc (nullptr off x86-64)

namespace {

// Value i (0..bs-1) of one block's blob.
inline int nibble(const uint8_t* blob, int64_t i) { return (blob[i >> 1] >> ((i & 1) * 4)) & 0x0F; }

inline int zero_point(const uint8_t* zp_col, int64_t blk) {
  return zp_col ? (zp_col[blk >> 1] >> ((blk & 1) * 4)) & 0x0F : 8;
}

// 1.5 * 2^23: adding and subtracting it rounds |x| < 2^22 to the nearest integer, ties to even
// (the default rounding mode), in plain float arithmetic the compiler vectorizes.
constexpr float kRoundMagic = 12582912.0f;

}  // namespace

Q4Int8Weights pack_q4_int8_weights(const uint8_t* b, const float* scales, const uint8_t* zp, int64_t zp_row, int64_t n,
                                   int64_t blocks, int64_t bs) {
  Q4Int8Weights w;
  w.n = n;
  w.blocks = blocks;
  w.bs = bs;
  w.groups = (n + kQ4Int8Cols - 1) / kQ4Int8Cols;
  const int64_t col_bytes = blocks * bs / 2;
  w.packed.assign(static_cast<size_t>(w.groups * kQ4Int8Cols * col_bytes), 0);
  w.scales.assign(static_cast<size_t>(w.groups * blocks * kQ4Int8Cols), 0.0f);
  w.zero_points.assign(static_cast<size_t>(w.groups * blocks * kQ4Int8Cols), 0);
  for (int64_t col = 0; col < n; ++col) {
    const int64_t g = col / kQ4Int8Cols, lane = col % kQ4Int8Cols;
    const uint8_t* zp_col = zp ? zp + col * zp_row : nullptr;
    for (int64_t blk = 0; blk < blocks; ++blk) {
      const size_t meta = static_cast<size_t>((g * blocks + blk) * kQ4Int8Cols + lane);
      w.scales[meta] = scales[col * blocks + blk];
      w.zero_points[meta] = static_cast<uint8_t>(zero_point(zp_col, blk));
      const uint8_t* blob = b + col * col_bytes + blk * bs / 2;
      // This block's 64-byte rows: one per 8 values of depth.
      uint8_t* rows = w.packed.data() + (g * blocks + blk) * (bs / 8) * 64;
      for (int64_t t = 0; t < bs / 8; ++t) {
        // Bytes of values (0,1) (2,3) (4,5) (6,7) become (0,4) (1,5) (2,6) (3,7).
        const uint8_t* in = blob + t * 4;
        uint8_t* out = rows + t * 64 + lane * 4;
        out[0] = static_cast<uint8_t>((in[0] & 0x0F) | (in[2] << 4));
        out[1] = static_cast<uint8_t>((in[0] >> 4) | (in[2] & 0xF0));
        out[2] = static_cast<uint8_t>((in[1] & 0x0F) | (in[3] << 4));
        out[3] = static_cast<uint8_t>((in[1] >> 4) | (in[3] & 0xF0));
      }
    }
  }
  return w;
}

bool quantize_a_int8(const float* a, int64_t M, int64_t K, int64_t blocks, int64_t bs, Q4Int8A& out) {
  out.m = M;
  out.blocks = blocks;
  out.bs = bs;
  const int64_t kp = blocks * bs;
  out.codes.resize(static_cast<size_t>(M * kp));
  out.scales.resize(static_cast<size_t>(M * blocks));
  out.sums.resize(static_cast<size_t>(M * blocks));
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t blk = 0; blk < blocks; ++blk) {
      const float* x = a + m * K + blk * bs;
      const int64_t len = K - blk * bs < bs ? K - blk * bs : bs;
      int8_t* q = out.codes.data() + m * kp + blk * bs;
      // max |x| and whether any value is NaN or infinite (all exponent bits set).
      float amax = 0.0f;
      uint32_t special = 0;
      for (int64_t i = 0; i < len; ++i) {
        const float v = std::fabs(x[i]);
        amax = v > amax ? v : amax;
        uint32_t bits;
        std::memcpy(&bits, &x[i], 4);
        special |= static_cast<uint32_t>((bits & 0x7F800000u) == 0x7F800000u);
      }
      if (special) return false;
      const float scale = amax / 127.0f;  // 0 for an all-zero block (or one so tiny it underflows)
      int32_t sum = 0;
      if (scale == 0.0f) {
        std::memset(q, 0, static_cast<size_t>(len));
      } else {
        for (int64_t i = 0; i < len; ++i) {
          float r = (x[i] / scale + kRoundMagic) - kRoundMagic;
          r = r > 127.0f ? 127.0f : (r < -127.0f ? -127.0f : r);
          q[i] = static_cast<int8_t>(static_cast<int32_t>(r));
          sum += q[i];
        }
      }
      std::memset(q + len, 0, static_cast<size_t>(bs - len));
      out.scales[static_cast<size_t>(m * blocks + blk)] = scale;
      out.sums[static_cast<size_t>(m * blocks + blk)] = sum;
    }
  }
  return true;
}

void q4_int8_reference(const Q4Int8A& a, const uint8_t* b, const float* scales, const uint8_t* zp, int64_t zp_row,
                       int64_t n, float* c, int64_t ldc) {
  const int64_t blocks = a.blocks, bs = a.bs, kp = blocks * bs;
  for (int64_t m = 0; m < a.m; ++m)
    for (int64_t col = 0; col < n; ++col) {
      const uint8_t* zp_col = zp ? zp + col * zp_row : nullptr;
      float acc = 0.0f;
      for (int64_t blk = 0; blk < blocks; ++blk) {
        const uint8_t* blob = b + (col * blocks + blk) * bs / 2;
        const int8_t* q = a.codes.data() + m * kp + blk * bs;
        const int z = zero_point(zp_col, blk);
        int32_t dot = 0;
        for (int64_t i = 0; i < bs; ++i) dot += q[i] * (nibble(blob, i) - z);
        const float s = a.scales[static_cast<size_t>(m * blocks + blk)] * scales[col * blocks + blk];
        acc = std::fma(static_cast<float>(dot), s, acc);
      }
      c[m * ldc + col] = acc;
    }
}

Q4Int8Fn q4_int8_fast() {
  // VNNI where the CPU has it; else AVX2's vpmaddubsw form when the AVX2 (or AVX-512) table
  // is the chosen one (XONNX_OPT_ISA=generic turns both off).
  static const Q4Int8Fn fn = avx512_vnni_chosen()                                         ? q4_int8_avx512vnni()
                             : avx512_chosen() || std::strcmp(kernels().isa, "avx2") == 0 ? q4_int8_avx2()
                                                                                          : nullptr;
  return fn;
}

Q4Int8PanelFn q4_int8_panel_fast() {
  // With the int8 path's ISA: AVX-512 code where the VNNI kernel runs, else AVX2.
  static const Q4Int8PanelFn fn = !q4_int8_fast()                          ? nullptr
                                  : q4_int8_fast() == q4_int8_avx512vnni() ? q4_int8_panel_avx512vnni()
                                                                           : q4_int8_panel_avx2();
  return fn;
}

}  // namespace opt
}  // namespace xonnx
