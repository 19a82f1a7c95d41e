// The AVX512-VNNI int8 GEMM (qgemm.h). Compiled with -mavx512vnni on x86-64 only; used only
// when cpuinfo reports the extension. Tiles of 12 rows x 32 columns: 24 int32 accumulators,
// one vpdpbusd per 4 bytes of depth per 16 columns; A's 4 bytes are broadcast, W comes packed.
#include "runtime/ops/optimized/qgemm.h"

#if defined(__x86_64__) && defined(__AVX512VNNI__)
// GCC 12 warns about the undefined-value idiom inside its own AVX512 headers.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "runtime/ops/optimized/avx512_exact.h"
#include "runtime/ops/optimized/stream_prefetch.h"

namespace xonnx {
namespace opt {
namespace {

constexpr int kMr = 12;

// A's 4 bytes in every lane; int8 A gets its sign bits flipped to the unsigned encoding.
template <bool kFlip>
inline __m512i broadcast4(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  const __m512i b = _mm512_set1_epi32(v);
  return kFlip ? _mm512_xor_si512(b, _mm512_set1_epi32(static_cast<int32_t>(0x80808080u))) : b;
}

// The requantization of 16 columns, loaded once per tile (stores through uint8_t* may alias
// anything, so the compiler would reload these per row).
struct Columns {
  __mmask16 mask;
  __m512i offset;
  __m512 scale;
};

inline Columns columns(const QgemmRequant& rq, int64_t col, int64_t n) {
  const int64_t valid = std::max<int64_t>(0, std::min<int64_t>(16, n - col));
  Columns c;
  c.mask = static_cast<__mmask16>((1u << valid) - 1u);
  c.offset = _mm512_maskz_loadu_epi32(c.mask, rq.offset + col);
  c.scale = _mm512_maskz_loadu_ps(c.mask, rq.scale + col);
  return c;
}

// acc already holds the column offsets (the tile starts from them). The scaled value is
// clamped in float to [lo - zp, hi - zp] first, so a huge scale saturates instead of
// overflowing the int32 conversion; the integer then needs no clamp.
inline void store16(__m512i acc, const Columns& c, __m512i zp, __m512 lo, __m512 hi, uint8_t* out) {
  __m512 scaled = _mm512_mul_ps(_mm512_cvtepi32_ps(acc), c.scale);
  scaled = _mm512_min_ps(_mm512_max_ps(scaled, lo), hi);
  const __m512i q = _mm512_add_epi32(_mm512_cvtps_epi32(scaled), zp);
  __m128i bytes = _mm512_cvtepi32_epi8(q);
  // vpmovdb straight to memory is microcoded on AMD Zen 4/5: narrow in a register instead.
  __asm__("" : "+v"(bytes));
  if (c.mask == 0xFFFF) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), bytes);
  } else {
    _mm_mask_storeu_epi8(out, c.mask, bytes);
  }
}

// Requantizes a tile's sums (noinline: keeps its registers out of the depth loop's way).
// c and ldc are in bytes here (the panels convert float rows).
template <int MR>
__attribute__((noinline)) void requantize_rows(const int32_t (*sums)[2][16], const QgemmRequant& rq, int64_t col,
                                               int64_t n, uint8_t* c, size_t ldc) {
  const Columns c0 = columns(rq, col, n), c1 = columns(rq, col + 16, n);
  if (rq.int32_out) {  // the sums already hold the offsets
    for (int r = 0; r < MR; ++r) {
      int32_t* out = reinterpret_cast<int32_t*>(c + r * ldc) + col;
      _mm512_mask_storeu_epi32(out, c0.mask, _mm512_load_si512(sums[r][0]));
      if (c1.mask) _mm512_mask_storeu_epi32(out + 16, c1.mask, _mm512_load_si512(sums[r][1]));
    }
    return;
  }
  if (rq.float_out) {
    // The product and the bias rounded separately, as the twin (and Cast -> Mul -> Add) does.
    const __m512 bias0 = rq.bias ? _mm512_maskz_loadu_ps(c0.mask, rq.bias + col) : _mm512_setzero_ps();
    const __m512 bias1 = rq.bias ? _mm512_maskz_loadu_ps(c1.mask, rq.bias + col + 16) : _mm512_setzero_ps();
    const auto scaled = [&](const int32_t* sum, const Columns& cc, __m512 bias) {
      const __m512 v = avx512_exact::mul(_mm512_cvtepi32_ps(_mm512_load_si512(sum)), cc.scale);
      return rq.bias ? avx512_exact::add(v, bias) : v;
    };
    for (int r = 0; r < MR; ++r) {
      float* out = reinterpret_cast<float*>(c + r * ldc) + col;
      _mm512_mask_storeu_ps(out, c0.mask, scaled(sums[r][0], c0, bias0));
      if (c1.mask) _mm512_mask_storeu_ps(out + 16, c1.mask, scaled(sums[r][1], c1, bias1));
    }
    return;
  }
  const __m512i zp = _mm512_set1_epi32(rq.zero_point);
  const __m512 lo = _mm512_set1_ps(static_cast<float>(rq.lo - rq.zero_point));
  const __m512 hi = _mm512_set1_ps(static_cast<float>(rq.hi - rq.zero_point));
  for (int r = 0; r < MR; ++r) {
    store16(_mm512_load_si512(sums[r][0]), c0, zp, lo, hi, c + r * ldc + col);
    if (c1.mask) store16(_mm512_load_si512(sums[r][1]), c1, zp, lo, hi, c + r * ldc + col + 16);
  }
}

template <int MR, bool kFlip>
void tile(const uint8_t* a, size_t lda, const int8_t* panel, int64_t k4, const QgemmRequant& rq, int64_t col, int64_t n,
          uint8_t* c, size_t ldc) {
  // 24 accumulators + 2 weight vectors + 1 broadcast live across the depth loop; the sums go
  // through a small buffer to the requantization so nothing else competes for registers.
  __m512i acc0[MR], acc1[MR];
  const __m512i o0 = columns(rq, col, n).offset, o1 = columns(rq, col + 16, n).offset;
  for (int r = 0; r < MR; ++r) {
    acc0[r] = o0;
    acc1[r] = o1;
  }
  for (int64_t kk = 0; kk < k4; kk += 4, panel += 4 * kQgemmNr) {
    if constexpr (MR <= 2) {  // few rows stream the panels from memory (stream_prefetch.h)
      prefetch_weights_ahead(panel);
      prefetch_weights_ahead(panel + 64);
    }
    const __m512i b0 = _mm512_loadu_si512(panel);
    const __m512i b1 = _mm512_loadu_si512(panel + 64);
    for (int r = 0; r < MR; ++r) {
      const __m512i av = broadcast4<kFlip>(a + r * lda + kk);
      acc0[r] = _mm512_dpbusd_epi32(acc0[r], av, b0);
      acc1[r] = _mm512_dpbusd_epi32(acc1[r], av, b1);
    }
  }
  alignas(64) int32_t sums[MR][2][16];
  for (int r = 0; r < MR; ++r) {
    _mm512_store_si512(sums[r][0], acc0[r]);
    _mm512_store_si512(sums[r][1], acc1[r]);
  }
  requantize_rows<MR>(sums, rq, col, n, c, ldc);
}

// The full 12-row tile with named accumulators: GCC keeps 24 of them in registers only when
// they are separate variables (with arrays it copies and spills around every vpdpbusd).
#define XONNX_Q_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
template <bool kFlip>
void tile12(const uint8_t* a, size_t lda, const int8_t* panel, int64_t k4, const QgemmRequant& rq, int64_t col,
            int64_t n, uint8_t* c, size_t ldc) {
  const __m512i o0 = columns(rq, col, n).offset, o1 = columns(rq, col + 16, n).offset;
#define XONNX_Q_INIT(r) __m512i s##r##_0 = o0, s##r##_1 = o1;
  XONNX_Q_ROWS(XONNX_Q_INIT)
  const uint8_t* a_rows[12];
  for (int r = 0; r < 12; ++r) a_rows[r] = a + r * lda;
  for (int64_t kk = 0; kk < k4; kk += 4, panel += 4 * kQgemmNr) {
    const __m512i b0 = _mm512_loadu_si512(panel);
    const __m512i b1 = _mm512_loadu_si512(panel + 64);
#define XONNX_Q_STEP(r)                                   \
  {                                                       \
    const __m512i av = broadcast4<kFlip>(a_rows[r] + kk); \
    s##r##_0 = _mm512_dpbusd_epi32(s##r##_0, av, b0);     \
    s##r##_1 = _mm512_dpbusd_epi32(s##r##_1, av, b1);     \
  }
    XONNX_Q_ROWS(XONNX_Q_STEP)
  }
  alignas(64) int32_t sums[12][2][16];
#define XONNX_Q_SAVE(r)                     \
  _mm512_store_si512(sums[r][0], s##r##_0); \
  _mm512_store_si512(sums[r][1], s##r##_1);
  XONNX_Q_ROWS(XONNX_Q_SAVE)
#undef XONNX_Q_INIT
#undef XONNX_Q_STEP
#undef XONNX_Q_SAVE
  requantize_rows<12>(sums, rq, col, n, c, ldc);
}
#undef XONNX_Q_ROWS

template <bool kFlip>
void qgemm_panels(const uint8_t* a, size_t lda, size_t m, const QgemmWeights& w, const QgemmRequant& rq, uint8_t* c,
                  size_t ldc) {
  const int64_t panels = (w.n + kQgemmNr - 1) / kQgemmNr;
  ldc *= rq.float_out || rq.int32_out ? 4 : 1;  // in bytes from here on
  for (int64_t p = 0; p < panels; ++p) {
    const int8_t* panel = w.packed.data() + p * w.k4 * kQgemmNr;
    const int64_t col = p * kQgemmNr;
    size_t r = 0;
    for (; r + kMr <= m; r += kMr) tile12<kFlip>(a + r * lda, lda, panel, w.k4, rq, col, w.n, c + r * ldc, ldc);
    const uint8_t* ar = a + r * lda;
    uint8_t* cr = c + r * ldc;
    switch (m - r) {
#define XONNX_Q_TAIL(rows) \
  case rows: tile<rows, kFlip>(ar, lda, panel, w.k4, rq, col, w.n, cr, ldc); break;
      XONNX_Q_TAIL(11)
      XONNX_Q_TAIL(10)
      XONNX_Q_TAIL(9) XONNX_Q_TAIL(8) XONNX_Q_TAIL(7) XONNX_Q_TAIL(6) XONNX_Q_TAIL(5) XONNX_Q_TAIL(4) XONNX_Q_TAIL(3)
          XONNX_Q_TAIL(2) XONNX_Q_TAIL(1)
#undef XONNX_Q_TAIL
              default : break;
    }
  }
}

void qgemm_vnni(const uint8_t* a, size_t lda, size_t m, const QgemmWeights& w, const QgemmRequant& rq, uint8_t* c,
                size_t ldc) {
  if (rq.a_signed) {
    qgemm_panels<true>(a, lda, m, w, rq, c, ldc);
  } else {
    qgemm_panels<false>(a, lda, m, w, rq, c, ldc);
  }
}

}  // namespace

QgemmFn qgemm_avx512vnni() { return qgemm_vnni; }

}  // namespace opt
}  // namespace xonnx

#else

namespace xonnx {
namespace opt {
QgemmFn qgemm_avx512vnni() { return nullptr; }
}  // namespace opt
}  // namespace xonnx

#endif
