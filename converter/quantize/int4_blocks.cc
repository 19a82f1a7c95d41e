// Block-wise 4-bit quantization of a [K, N] weight in ONNX Runtime's MatMulNBits layout
// (quantize.h describes it). Symmetric: scale = max(-min / 8, max / 7) so neither end clips;
// asymmetric: the block range (widened to include 0) over 0..15 with a rounded zero point.
#include <algorithm>
#include <cmath>

#include "converter/quantize/quantize.h"
#include "converter/quantize/quantize_internal.h"

namespace xonnx {
namespace convert {
Int4Blocks quantize_int4_blockwise(const float* w, int64_t k, int64_t n, bool transposed, int64_t block_size,
                                   bool symmetric) {
  Int4Blocks q;
  q.k = k;
  q.n = n;
  q.block_size = block_size;
  q.blocks = (k + block_size - 1) / block_size;
  const int64_t blob = block_size / 2;
  const int64_t zp_row = (q.blocks + 1) / 2;
  q.packed.assign(static_cast<size_t>(n * q.blocks * blob), 0);
  q.scales.assign(static_cast<size_t>(n * q.blocks), 1.0f);
  if (!symmetric) q.zero_points.assign(static_cast<size_t>(n * zp_row), 0);
  auto at = [&](int64_t row, int64_t col) { return transposed ? w[col * k + row] : w[row * n + col]; };
  for (int64_t col = 0; col < n; ++col) {
    for (int64_t blk = 0; blk < q.blocks; ++blk) {
      const int64_t k0 = blk * block_size;
      const int64_t k1 = std::min(k, k0 + block_size);
      float lo = 0.0f, hi = 0.0f;  // the range always includes 0, so 0 stays exact
      for (int64_t i = k0; i < k1; ++i) {
        const float v = at(i, col);
        if (std::isfinite(v)) {
          lo = std::min(lo, v);
          hi = std::max(hi, v);
        }
      }
      float scale;
      int zp;
      if (symmetric) {
        scale = std::max(-lo / 8.0f, hi / 7.0f);
        zp = 8;
      } else {
        scale = (hi - lo) / 15.0f;
        zp = scale > 0 ? static_cast<int>(std::lround(-lo / scale)) : 8;
        zp = std::min(15, std::max(0, zp));
      }
      // An all-zero block: any positive scale represents it exactly (a zero scale is invalid).
      if (!(scale > 0) || !std::isfinite(scale)) scale = 1.0f;
      const size_t idx = static_cast<size_t>(col * q.blocks + blk);
      q.scales[idx] = scale;
      if (!symmetric) put_nibble(q.zero_points.data() + col * zp_row, blk, static_cast<uint8_t>(zp));
      uint8_t* blob_ptr = q.packed.data() + idx * static_cast<size_t>(blob);
      for (int64_t i = 0; i < block_size; ++i) {
        int code = zp;  // padding past K dequantizes to 0
        if (k0 + i < k1) {
          const float v = at(k0 + i, col);
          code = static_cast<int>(std::lround(v / scale)) + zp;
          if (std::isnan(v)) code = zp;
          code = std::min(15, std::max(0, code));
        }
        put_nibble(blob_ptr, i, static_cast<uint8_t>(code));
      }
    }
  }
  return q;
}

std::vector<float> dequantize_int4_blockwise(const Int4Blocks& q) {
  std::vector<float> w(static_cast<size_t>(q.k * q.n), 0.0f);
  const int64_t blob = q.block_size / 2;
  const int64_t zp_row = (q.blocks + 1) / 2;
  for (int64_t col = 0; col < q.n; ++col) {
    for (int64_t blk = 0; blk < q.blocks; ++blk) {
      const size_t idx = static_cast<size_t>(col * q.blocks + blk);
      const float scale = q.scales[idx];
      const int zp = q.zero_points.empty() ? 8 : get_nibble(q.zero_points.data() + col * zp_row, blk);
      const uint8_t* blob_ptr = q.packed.data() + idx * static_cast<size_t>(blob);
      for (int64_t i = 0; i < q.block_size && blk * q.block_size + i < q.k; ++i) {
        w[static_cast<size_t>((blk * q.block_size + i) * q.n + col)] =
            static_cast<float>(get_nibble(blob_ptr, i) - zp) * scale;
      }
    }
  }
  return w;
}

}  // namespace convert
}  // namespace xonnx
