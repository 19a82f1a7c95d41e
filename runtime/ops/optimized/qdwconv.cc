#include "runtime/ops/optimized/qdwconv.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "runtime/ops/optimized/kernels.h"

namespace xonnx {
namespace opt {

QdwRowFn qdw_row_avx512();          // qdwconv_avx512.cc (nullptr off x86-64)
QdwConvertFn qdw_convert_avx512();  // qdwconv_avx512.cc

void qdw_row_reference(const QdwRow& p, uint8_t* out) {
  const float lo = static_cast<float>(p.lo - p.zero_point), hi = static_cast<float>(p.hi - p.zero_point);
  for (int64_t ox = 0; ox < p.ow; ++ox) {
    for (int64_t ch = 0; ch < p.c; ++ch) {
      const int64_t block = ch / kQdwChannelBlock * p.wp * kQdwChannelBlock, lane = ch % kQdwChannelBlock;
      float acc = p.bias[ch];
      for (int64_t ky = 0; ky < p.kh; ++ky)
        for (int64_t kx = 0; kx < p.kw; ++kx)
          acc += p.rows[ky][block + (ox * p.sw + kx * p.dw) * kQdwChannelBlock + lane] *
                 p.weights[(ky * p.kw + kx) * p.cp + ch];
      const float scaled = std::min(hi, std::max(lo, acc * p.scale[ch]));
      out[ox * p.c + ch] = static_cast<uint8_t>(static_cast<int32_t>(std::nearbyint(scaled)) + p.zero_point);
    }
  }
}

void qdw_convert_reference(const uint8_t* src, int64_t w, int64_t c, bool is_signed, float* dst, int64_t block_stride) {
  const int64_t cp = (c + kQdwChannelBlock - 1) / kQdwChannelBlock * kQdwChannelBlock;
  for (int64_t x = 0; x < w; ++x) {
    for (int64_t ch = 0; ch < cp; ++ch) {
      float& d = dst[ch / kQdwChannelBlock * block_stride + x * kQdwChannelBlock + ch % kQdwChannelBlock];
      const uint8_t v = ch < c ? src[x * c + ch] : 0;
      d = is_signed ? static_cast<float>(static_cast<int8_t>(v)) : static_cast<float>(v);
    }
  }
}

namespace {
bool has_avx512() { return std::strcmp(kernels().isa, "avx512") == 0; }
}  // namespace

QdwRowFn qdw_row_fast() {
  static const QdwRowFn fn = has_avx512() ? qdw_row_avx512() : nullptr;
  return fn;
}

QdwConvertFn qdw_convert_fast() {
  static const QdwConvertFn fn = has_avx512() ? qdw_convert_avx512() : nullptr;
  return fn;
}

}  // namespace opt
}  // namespace xonnx
