// The body of q4_int8_panel_fast's kernels (q4_int8.h), included by each ISA's file and compiled
// with its flags: internal linkage, so every file keeps its own copy. Plain loops over a
// group's 16 lanes, which the compiler turns into vector code (one AVX-512 vector, two AVX2).
#pragma once

#include <algorithm>
#include <cstring>

#include "runtime/ops/optimized/q4_int8.h"

namespace xonnx {
namespace opt {

static inline void q4_int8_panel_body(const Q4Int8Weights& w, int64_t j0, int64_t nc, int64_t width, int64_t K,
                                      float* out) {
  const int64_t bs = w.bs;
  for (int64_t c0 = 0; c0 < width;) {
    const int64_t col = j0 + c0, g = col / kQ4Int8Cols, lane0 = col % kQ4Int8Cols;
    const int64_t run = std::min(width - c0, kQ4Int8Cols - lane0);
    if (c0 >= nc) {  // past n, possibly past the packed groups
      for (int64_t k = 0; k < K; ++k) std::memset(out + k * width + c0, 0, static_cast<size_t>(run) * sizeof(float));
      c0 += run;
      continue;
    }
    // Lanes of this group past n hold code 0, zero point 0 and scale 0: they come out 0.
    float vals[kQ4Int8Cols], s[kQ4Int8Cols];
    int32_t z[kQ4Int8Cols];
    for (int64_t blk = 0; blk < w.blocks && blk * bs < K; ++blk) {
      const size_t meta = static_cast<size_t>((g * w.blocks + blk) * kQ4Int8Cols);
      for (int j = 0; j < kQ4Int8Cols; ++j) {
        s[j] = w.scales[meta + static_cast<size_t>(j)];
        z[j] = w.zero_points[meta + static_cast<size_t>(j)];
      }
      const uint8_t* rows = w.packed.data() + (g * w.blocks + blk) * (bs / 8) * 64;
      for (int64_t t = 0; t < bs / 8 && blk * bs + t * 8 < K; ++t) {
        uint32_t x[kQ4Int8Cols];  // lane j: values k..k+3 in its bytes' low nibbles, k+4..k+7 in the high
        std::memcpy(x, rows + t * 64, sizeof(x));
        const int64_t k0 = blk * bs + t * 8;
        const int depth = static_cast<int>(std::min<int64_t>(8, K - k0));
        for (int i = 0; i < depth; ++i) {
          const int shift = (i & 3) * 8 + (i >> 2) * 4;
          float* dst = out + (k0 + i) * width + c0;
          // (code - zero point) * scale: q4_dequant_col's arithmetic, so the same bits.
          if (run == kQ4Int8Cols) {
            for (int j = 0; j < kQ4Int8Cols; ++j) {
              dst[j] = static_cast<float>(static_cast<int32_t>((x[j] >> shift) & 0xF) - z[j]) * s[j];
            }
          } else {
            for (int j = 0; j < kQ4Int8Cols; ++j) {
              vals[j] = static_cast<float>(static_cast<int32_t>((x[j] >> shift) & 0xF) - z[j]) * s[j];
            }
            std::memcpy(dst, vals + lane0, static_cast<size_t>(run) * sizeof(float));
          }
        }
      }
    }
    c0 += run;
  }
}

}  // namespace opt
}  // namespace xonnx
