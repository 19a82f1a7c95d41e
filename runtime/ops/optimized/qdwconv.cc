#include "runtime/ops/optimized/qdwconv.h"

#include <algorithm>
#include <cmath>

#include "runtime/ops/optimized/kernels.h"

namespace xonnx {
namespace opt {

QdwRowFn qdw_row_avx512();          // qdwconv_avx512.cc (nullptr off x86-64)
QdwConvertFn qdw_convert_avx512();  // qdwconv_avx512.cc

void qdw_row_reference(const QdwRow& p, uint8_t* out) {
  const float lo = static_cast<float>(p.lo - p.zero_point), hi = static_cast<float>(p.hi - p.zero_point);
  for (int64_t ox = 0; ox < p.ow; ++ox) {
    for (int64_t j = 0; j < p.valid; ++j) {
      float acc = p.bias[j];
      for (int64_t ky = 0; ky < p.kh; ++ky)
        for (int64_t kx = 0; kx < p.kw; ++kx)
          acc += p.rows[ky][(ox * p.sw + kx * p.dw) * kQdwChannelBlock + j] *
                 p.weights[(ky * p.kw + kx) * kQdwChannelBlock + j];
      const float scaled = std::min(hi, std::max(lo, acc * p.scale[j]));
      out[ox * p.out_stride + j] = static_cast<uint8_t>(static_cast<int32_t>(std::nearbyint(scaled)) + p.zero_point);
    }
  }
}

void qdw_convert_reference(const uint8_t* src, int64_t w, int64_t src_stride, int64_t valid, bool is_signed,
                           float* dst) {
  for (int64_t x = 0; x < w; ++x) {
    for (int64_t j = 0; j < kQdwChannelBlock; ++j) {
      const uint8_t v = j < valid ? src[x * src_stride + j] : 0;
      dst[x * kQdwChannelBlock + j] = is_signed ? static_cast<float>(static_cast<int8_t>(v)) : static_cast<float>(v);
    }
  }
}

QdwRowFn qdw_row_fast() {
  static const QdwRowFn fn = avx512_chosen() ? qdw_row_avx512() : nullptr;
  return fn;
}

QdwConvertFn qdw_convert_fast() {
  static const QdwConvertFn fn = avx512_chosen() ? qdw_convert_avx512() : nullptr;
  return fn;
}

}  // namespace opt
}  // namespace xonnx
