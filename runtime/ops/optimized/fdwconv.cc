#include "runtime/ops/optimized/fdwconv.h"

#include <cmath>

#include "runtime/ops/optimized/kernels.h"

namespace xonnx {
namespace opt {

FdwRowFn fdw_row_avx512();    // fdwconv_avx512.cc (nullptr off x86-64)
FdwPackFn fdw_pack_avx512();  // fdwconv_avx512.cc

// The twin of the AVX-512 rows: the same chains in the same order (fdwconv.h); std::fma
// where the vector code fuses.
void fdw_row_reference(const FdwRow& p, float* out) {
  constexpr int64_t B = kFdwChannelBlock;
  for (int64_t ox = 0; ox < p.ow; ++ox) {
    for (int64_t j = 0; j < p.valid; ++j) {
      const int64_t g = p.group, first = j - j % g;  // the group's first channel in the block
      float total = 0;
      for (int64_t ky = 0; ky < p.kh; ++ky) {
        const float* x = p.rows[ky] + ox * p.sw * B + first;
        const float* w = p.weights + ky * p.kw * g * B + j;
        // Groups of 16: two chains, inputs [0, 8) and [8, 16) of each tap.
        const int64_t half = g == 16 ? 8 : g;
        float chain[2] = {0, 0};
        for (int64_t kx = 0; kx < p.kw; ++kx) {
          for (int64_t i = 0; i < g; ++i) {
            const float xv = x[kx * p.dw * B + i], wv = w[(kx * g + i) * B];
            float& c = chain[i / half];
            if (kx == 0 && i == 0) {
              c = ky == 0 ? std::fma(xv, wv, p.bias[j]) : xv * wv;
            } else if (kx == 0 && i == half) {
              c = xv * wv;
            } else {
              c = std::fma(xv, wv, c);
            }
          }
        }
        const float row = half < g ? chain[0] + chain[1] : chain[0];
        total = ky == 0 ? row : total + row;
      }
      // maxps(lo, v) / minps(hi, v): the second operand (v) when either is NaN.
      const float above = p.lo > total ? p.lo : total;
      out[ox * p.out_stride + j] = p.hi < above ? p.hi : above;
    }
  }
}

void fdw_pack_reference(const float* src, int64_t w, int64_t src_stride, int64_t channels, int64_t blocks, float* dst,
                        int64_t block_floats, const float* /*ahead*/) {
  for (int64_t b = 0; b < blocks; ++b)
    for (int64_t x = 0; x < w; ++x)
      for (int64_t j = 0; j < kFdwChannelBlock; ++j) {
        const int64_t ch = b * kFdwChannelBlock + j;
        dst[b * block_floats + x * kFdwChannelBlock + j] = ch < channels ? src[x * src_stride + ch] : 0.0f;
      }
}

FdwRowFn fdw_row_fast() {
  static const FdwRowFn fn = avx512_chosen() ? fdw_row_avx512() : nullptr;
  return fn;
}

FdwPackFn fdw_pack_fast() {
  static const FdwPackFn fn = avx512_chosen() ? fdw_pack_avx512() : nullptr;
  return fn;
}

}  // namespace opt
}  // namespace xonnx
