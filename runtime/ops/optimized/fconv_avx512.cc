// The AVX-512 tile of the own fp32 convolution (fconv.h): 12 rows x 32 columns, 24 named
// accumulators (GCC keeps them in registers only as separate variables), two weight vectors
// and one broadcast per input value. Compiled with AVX-512 flags on x86-64 only; used only
// when cpuinfo reports it.
#include "runtime/ops/optimized/fconv.h"

#if defined(__x86_64__) && defined(__AVX512F__)
// GCC 12 warns about the undefined-value idiom inside its own AVX512 headers.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include "runtime/ops/optimized/avx512_exact.h"

namespace xonnx {
namespace opt {
namespace {

using avx512_exact::add;  // the residual's add, as the twin does it (no FMA contraction)

// Columns 0-15 at out, 16-31 at out + upper; the residual row z (laid out as out) added first.
inline void store_row(__m512 v0, __m512 v1, __m512 lo, __m512 hi, __mmask16 m0, __mmask16 m1, float* out, int64_t upper,
                      const float* z) {
  if (z) {
    v0 = add(v0, _mm512_maskz_loadu_ps(m0, z));
    v1 = add(v1, _mm512_maskz_loadu_ps(m1, z + upper));
  }
  // max/min return their second operand on NaN: NaN passes through the clamp.
  v0 = _mm512_min_ps(hi, _mm512_max_ps(lo, v0));
  v1 = _mm512_min_ps(hi, _mm512_max_ps(lo, v1));
  if (m0 == 0xFFFF && m1 == 0xFFFF) {
    _mm512_storeu_ps(out, v0);
    _mm512_storeu_ps(out + upper, v1);
  } else {
    _mm512_mask_storeu_ps(out, m0, v0);
    _mm512_mask_storeu_ps(out + upper, m1, v1);
  }
}

// The panel is read once per tile, 128 bytes per input value, from L2 or L3 for the first tile
// of a block: fetched 16 values (2 KB) ahead, the FMAs no longer wait on it (bench
// BM_MatMul_ConstB 130 -> 150 GFLOP/s; resnet50 1 thread 69 -> 60 ms, min of 4 alternating
// rounds). The next panel, from memory, comes with FconvTile::prefetch. Prefetches past the
// panel's end do not fault.
inline void prefetch_panel(const float* w) {
  constexpr int64_t kAhead = 16 * kFconvCols;
  _mm_prefetch(reinterpret_cast<const char*>(w + kAhead), _MM_HINT_T0);
  _mm_prefetch(reinterpret_cast<const char*>(w + kAhead + 16), _MM_HINT_T0);
}

#define XONNX_F_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define XONNX_F_ROWS8(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define XONNX_F_ROWS4(X) X(0) X(1) X(2) X(3)

// One tile of up to 12, 8 or 4 rows (ROWS lists the row indices) x 32 columns. The short ones
// serve a layer's last rows (7 x 7 = 49 pixels: four full tiles and one row): 8 accumulator
// chains still keep both FMA pipes busy, where a 12-row tile would compute 11 rows for nothing.
#define XONNX_F_DEFINE_TILE(name, ROWS)                                                 \
  void name(const FconvTile& t) {                                                       \
    const __m512 bias0 = _mm512_loadu_ps(t.bias), bias1 = _mm512_loadu_ps(t.bias + 16); \
    const int64_t c0 = t.cols < 16 ? t.cols : 16, c1 = t.cols - c0;                     \
    const __mmask16 m0 = static_cast<__mmask16>((1u << c0) - 1u);                       \
    const __mmask16 m1 = static_cast<__mmask16>((1u << c1) - 1u);                       \
    const int64_t nrows = t.rows, ldo = t.ldo, upper = t.upper;                         \
    float* out = t.out;                                                                 \
    ROWS(XONNX_F_INIT)                                                                  \
    if (t.residual) { ROWS(XONNX_F_PREFETCH_Z) }                                        \
    const float* w = t.panel;                                                           \
    const float* pf = t.prefetch;                                                       \
    const int64_t ps = t.prefetch_step;                                                 \
    const int64_t c = t.c;                                                              \
    for (int64_t tap = 0; tap < t.taps; ++tap) {                                        \
      if (tap < 64 && (t.padding_taps >> tap & 1)) {                                    \
        w += c * kFconvCols;                                                            \
        continue;                                                                       \
      }                                                                                 \
      const float* const* rows = t.a + tap * kFconvRows;                                \
      ROWS(XONNX_F_PTR)                                                                 \
      for (int64_t ci = 0; ci < c; ++ci, w += kFconvCols) {                             \
        prefetch_panel(w);                                                              \
        if (pf) {                                                                       \
          _mm_prefetch(reinterpret_cast<const char*>(pf), _MM_HINT_T1);                 \
          pf += ps;                                                                     \
        }                                                                               \
        const __m512 b0 = _mm512_loadu_ps(w), b1 = _mm512_loadu_ps(w + 16);             \
        ROWS(XONNX_F_STEP)                                                              \
      }                                                                                 \
    }                                                                                   \
    const __m512 lo = _mm512_set1_ps(t.lo), hi = _mm512_set1_ps(t.hi);                  \
    ROWS(XONNX_F_STORE)                                                                 \
  }
#define XONNX_F_INIT(r)                                          \
  __m512 s##r##_0 = bias0, s##r##_1 = bias1;                     \
  if (t.resume && r < nrows) {                                   \
    s##r##_0 = _mm512_maskz_loadu_ps(m0, out + r * ldo);         \
    s##r##_1 = _mm512_maskz_loadu_ps(m1, out + r * ldo + upper); \
  }
#define XONNX_F_PREFETCH_Z(r)                                                                  \
  if (r < nrows) {                                                                             \
    _mm_prefetch(reinterpret_cast<const char*>(t.residual + r * ldo), _MM_HINT_T0);            \
    _mm_prefetch(reinterpret_cast<const char*>(t.residual + r * ldo + upper + 15), _MM_HINT_T0); \
  }
#define XONNX_F_PTR(r) const float* a##r = rows[r];
#define XONNX_F_STEP(r)                           \
  {                                               \
    const __m512 av = _mm512_set1_ps(a##r[ci]);   \
    s##r##_0 = _mm512_fmadd_ps(av, b0, s##r##_0); \
    s##r##_1 = _mm512_fmadd_ps(av, b1, s##r##_1); \
  }
#define XONNX_F_STORE(r) \
  if (r < nrows)         \
    store_row(s##r##_0, s##r##_1, lo, hi, m0, m1, out + r * ldo, upper, t.residual ? t.residual + r * ldo : nullptr);

XONNX_F_DEFINE_TILE(tile_avx512, XONNX_F_ROWS)
XONNX_F_DEFINE_TILE(tile8_avx512, XONNX_F_ROWS8)
XONNX_F_DEFINE_TILE(tile4_avx512, XONNX_F_ROWS4)
#undef XONNX_F_DEFINE_TILE
#undef XONNX_F_INIT
#undef XONNX_F_PREFETCH_Z
#undef XONNX_F_PTR
#undef XONNX_F_STEP
#undef XONNX_F_STORE
#undef XONNX_F_ROWS8
#undef XONNX_F_ROWS4
// At most 16 valid columns (a narrow layer, or the last panel): half the tile, half the FMAs.
void tile16_avx512(const FconvTile& t) {
  const __m512 bias0 = _mm512_loadu_ps(t.bias);
  const __mmask16 m0 = static_cast<__mmask16>((1u << t.cols) - 1u);
  const int64_t rows = t.rows, ldo = t.ldo;
  float* out = t.out;
#define XONNX_F_INIT16(r) __m512 s##r = t.resume && r < rows ? _mm512_maskz_loadu_ps(m0, out + r * ldo) : bias0;
  XONNX_F_ROWS(XONNX_F_INIT16)
  const float* w = t.panel;
  const int64_t c = t.c;
  for (int64_t tap = 0; tap < t.taps; ++tap) {
    if (tap < 64 && (t.padding_taps >> tap & 1)) {
      w += c * kFconvCols;
      continue;
    }
    const float* const* rows = t.a + tap * kFconvRows;
#define XONNX_F_PTR16(r) const float* a##r = rows[r];
    XONNX_F_ROWS(XONNX_F_PTR16)
    for (int64_t ci = 0; ci < c; ++ci, w += kFconvCols) {
      prefetch_panel(w);
      const __m512 b0 = _mm512_loadu_ps(w);
#define XONNX_F_STEP16(r) s##r = _mm512_fmadd_ps(_mm512_set1_ps(a##r[ci]), b0, s##r);
      XONNX_F_ROWS(XONNX_F_STEP16)
    }
  }
  const __m512 lo = _mm512_set1_ps(t.lo), hi = _mm512_set1_ps(t.hi);
#define XONNX_F_STORE16(r)                                                                \
  if (r < rows) {                                                                         \
    if (t.residual) s##r = add(s##r, _mm512_maskz_loadu_ps(m0, t.residual + r * ldo));    \
    _mm512_mask_storeu_ps(out + r * ldo, m0, _mm512_min_ps(hi, _mm512_max_ps(lo, s##r))); \
  }
  XONNX_F_ROWS(XONNX_F_STORE16)
#undef XONNX_F_INIT16
#undef XONNX_F_PTR16
#undef XONNX_F_STEP16
#undef XONNX_F_STORE16
}
#undef XONNX_F_ROWS

void tile_any_avx512(const FconvTile& t) {
  if (t.cols <= 16) return tile16_avx512(t);
  if (t.rows <= 4) return tile4_avx512(t);
  if (t.rows <= 8) return tile8_avx512(t);
  tile_avx512(t);
}

}  // namespace

FconvTileFn fconv_tile_avx512() { return tile_any_avx512; }

}  // namespace opt
}  // namespace xonnx

#else

namespace xonnx {
namespace opt {
FconvTileFn fconv_tile_avx512() { return nullptr; }
}  // namespace opt
}  // namespace xonnx

#endif
