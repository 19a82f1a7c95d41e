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
      float total = 0;
      for (int64_t ky = 0; ky < p.kh; ++ky) {
        const float* x = p.rows[ky] + ox * p.sw * B + j;
        const float* w = p.weights + ky * p.kw * B + j;
        float chain = ky == 0 ? std::fma(x[0], w[0], p.bias[j]) : x[0] * w[0];
        for (int64_t kx = 1; kx < p.kw; ++kx) chain = std::fma(x[kx * p.dw * B], w[kx * B], chain);
        total = ky == 0 ? chain : total + chain;
      }
      // maxps(lo, v) / minps(hi, v): the second operand (v) when either is NaN.
      const float above = p.lo > total ? p.lo : total;
      out[ox * p.out_stride + j] = p.hi < above ? p.hi : above;
    }
  }
}

void fdw_pack_reference(const float* src, int64_t w, int64_t src_stride, int64_t valid, float* dst,
                        const float* /*ahead*/) {
  for (int64_t x = 0; x < w; ++x)
    for (int64_t j = 0; j < kFdwChannelBlock; ++j)
      dst[x * kFdwChannelBlock + j] = j < valid ? src[x * src_stride + j] : 0.0f;
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
