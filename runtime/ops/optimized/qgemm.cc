#include "runtime/ops/optimized/qgemm.h"

#include <algorithm>
#include <cmath>

#include "runtime/ops/optimized/kernels.h"

namespace xonnx {
namespace opt {

QgemmFn qgemm_avx512vnni();  // qgemm_avx512vnni.cc (nullptr off x86-64)

QgemmWeights pack_qgemm_weights(const int8_t* w, int64_t n, int64_t k) {
  QgemmWeights p;
  p.n = n;
  p.k = k;
  p.k4 = (k + 3) / 4 * 4;
  const int64_t panels = (n + kQgemmNr - 1) / kQgemmNr;
  p.packed.assign(static_cast<size_t>(panels * p.k4 * kQgemmNr), 0);
  p.column_sums.assign(static_cast<size_t>(n), 0);
  for (int64_t col = 0; col < n; ++col) {
    int8_t* panel = p.packed.data() + (col / kQgemmNr) * p.k4 * kQgemmNr;
    const int64_t lane = col % kQgemmNr;
    for (int64_t kk = 0; kk < k; ++kk) {
      const int8_t v = w[col * k + kk];
      panel[(kk / 4) * kQgemmNr * 4 + lane * 4 + kk % 4] = v;
      p.column_sums[static_cast<size_t>(col)] += v;
    }
  }
  return p;
}

void qgemm_reference(const uint8_t* a, size_t lda, size_t m, const QgemmWeights& w, const QgemmRequant& rq, uint8_t* c,
                     size_t ldc) {
  for (size_t r = 0; r < m; ++r) {
    for (int64_t col = 0; col < w.n; ++col) {
      const int8_t* panel = w.packed.data() + (col / kQgemmNr) * w.k4 * kQgemmNr;
      const int64_t lane = col % kQgemmNr;
      int32_t acc = 0;
      const uint8_t flip = rq.a_signed ? 0x80 : 0;
      for (int64_t kk = 0; kk < w.k4; ++kk)
        acc += (a[r * lda + kk] ^ flip) * panel[(kk / 4) * kQgemmNr * 4 + lane * 4 + kk % 4];
      if (rq.int32_out) {
        reinterpret_cast<int32_t*>(c)[r * ldc + static_cast<size_t>(col)] = acc + rq.offset[col];
        continue;
      }
      if (rq.float_out) {
        const float scaled = static_cast<float>(acc + rq.offset[col]) * rq.scale[col];
        reinterpret_cast<float*>(c)[r * ldc + static_cast<size_t>(col)] = rq.bias ? scaled + rq.bias[col] : scaled;
        continue;
      }
      // Clamped in float first: a huge scale must saturate, not overflow the int32 conversion.
      float scaled = static_cast<float>(acc + rq.offset[col]) * rq.scale[col];
      scaled = std::min(static_cast<float>(rq.hi - rq.zero_point),
                        std::max(static_cast<float>(rq.lo - rq.zero_point), scaled));
      const int32_t q = static_cast<int32_t>(std::nearbyint(scaled)) + rq.zero_point;
      c[r * ldc + static_cast<size_t>(col)] = static_cast<uint8_t>(q);
    }
  }
}

QgemmFn qgemm_fast() {
  static const QgemmFn fn = avx512_vnni_chosen() ? qgemm_avx512vnni() : nullptr;
  return fn;
}

}  // namespace opt
}  // namespace xonnx
