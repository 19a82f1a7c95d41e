// The AVX-512 tile of the own fp32 convolution (fconv.h): 12 rows x 32 columns, 24 named
// accumulators (GCC keeps them in registers only as separate variables), two weight vectors
// and one broadcast per input value; narrower tiles for at most 16 or 24 columns. Compiled
// with AVX-512 flags on x86-64 only; used only when cpuinfo reports it.
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

// A tile's columns 16-31 as one 512-bit vector, or columns 16-23 as one 256-bit vector for a
// tile of at most 24 columns (24 output channels, the tails of 120 and 184): cores that split a
// 512-bit FMA into two 256-bit halves (AMD Zen 4) run those in half the time (MobileNetV3's and
// MNASNet's 72 -> 24 layers at 56 x 56: -20 to -25 %), others lose nothing. Lanes<bits> is
// that vector's arithmetic; the products are the same bits either way. (A 256-bit tile for at
// most 8 columns measured no faster than the 16-column one: its broadcasts bound it.)
template <int kBits>
struct Lanes;
template <>
struct Lanes<512> {
  using V = __m512;
  using Mask = __mmask16;
  static constexpr Mask kFull = 0xFFFF;
  static __m512 narrow(__m512 v) { return v; }
  static __m512 load(const float* p) { return _mm512_loadu_ps(p); }
  static __m512 maskz_load(Mask m, const float* p) { return _mm512_maskz_loadu_ps(m, p); }
  static __m512 fma(__m512 a, __m512 b, __m512 c) { return _mm512_fmadd_ps(a, b, c); }
  static __m512 clamp(__m512 v, __m512 lo, __m512 hi) { return _mm512_min_ps(hi, _mm512_max_ps(lo, v)); }
  static void store(float* p, __m512 v) { _mm512_storeu_ps(p, v); }
  static void mask_store(float* p, Mask m, __m512 v) { _mm512_mask_storeu_ps(p, m, v); }
};
template <>
struct Lanes<256> {
  using V = __m256;
  using Mask = __mmask8;
  static constexpr Mask kFull = 0xFF;
  static __m256 narrow(__m512 v) { return _mm512_castps512_ps256(v); }
  static __m256 load(const float* p) { return _mm256_loadu_ps(p); }
  static __m256 maskz_load(Mask m, const float* p) { return _mm256_maskz_loadu_ps(m, p); }
  // AVX-512VL's form: the plain _mm256_fmadd_ps needs -mfma, which this file is not built with.
  static __m256 fma(__m512 a, __m256 b, __m256 c) {
    return _mm256_mask3_fmadd_ps(_mm512_castps512_ps256(a), b, c, kFull);
  }
  static __m256 clamp(__m256 v, __m256 lo, __m256 hi) { return _mm256_min_ps(hi, _mm256_max_ps(lo, v)); }
  static void store(float* p, __m256 v) { _mm256_storeu_ps(p, v); }
  static void mask_store(float* p, Mask m, __m256 v) { _mm256_mask_storeu_ps(p, m, v); }
};

template <int kBits>
typename Lanes<kBits>::Mask lane_mask(int64_t lanes) {
  return static_cast<typename Lanes<kBits>::Mask>((1u << lanes) - 1u);
}

// Columns 0-15 (all valid: the tile has more than 16) at out, the upper ones (mask m1) at out +
// upper; the residual row z (laid out as out) added first. max/min return their second operand
// on NaN: NaN passes through the clamp.
template <int kUpperBits, class L = Lanes<kUpperBits>>
inline void store_row(__m512 v0, typename L::V v1, __m512 lo, __m512 hi, typename L::Mask m1, float* out, int64_t upper,
                      const float* z) {
  if (z) {
    v0 = add(v0, _mm512_loadu_ps(z));
    v1 = add(v1, L::maskz_load(m1, z + upper));
  }
  v0 = Lanes<512>::clamp(v0, lo, hi);
  v1 = L::clamp(v1, L::narrow(lo), L::narrow(hi));
  _mm512_storeu_ps(out, v0);
  if (m1 == L::kFull) {
    L::store(out + upper, v1);
  } else {
    L::mask_store(out + upper, m1, v1);
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

// One tile of up to 12, 8 or 4 rows (ROWS lists the row indices) x 17-32 columns, the upper
// ones in U (Lanes). The short ones serve a layer's last rows (7 x 7 = 49 pixels: four full
// tiles and one row): 8 accumulator chains still keep both FMA pipes busy, where a 12-row tile
// would compute 11 rows for nothing.
#define XONNX_F_DEFINE_TILE(name, ROWS)                                                   \
  template <int kUpperBits>                                                               \
  void name(const FconvTile& t) {                                                         \
    using L = Lanes<kUpperBits>;                                                          \
    using U = typename L::V;                                                              \
    const __m512 bias0 = _mm512_loadu_ps(t.bias);                                         \
    const U bias1 = L::load(t.bias + 16);                                                 \
    const typename L::Mask m1 = lane_mask<kUpperBits>(t.cols - 16);                       \
    const int64_t nrows = t.rows, ldo = t.ldo, upper = t.upper;                           \
    float* out = t.out;                                                                   \
    ROWS(XONNX_F_INIT)                                                                    \
    if (t.residual) {                                                                     \
      ROWS(XONNX_F_PREFETCH_Z)                                                            \
    }                                                                                     \
    const float* w = t.panel;                                                             \
    const float* pf = t.prefetch;                                                         \
    const int64_t ps = t.prefetch_step;                                                   \
    const int64_t c = t.c;                                                                \
    for (int64_t tap = 0; tap < t.taps; ++tap) {                                          \
      if (tap < 64 && (t.padding_taps >> tap & 1)) {                                      \
        w += c * kFconvCols;                                                              \
        continue;                                                                         \
      }                                                                                   \
      const float* const* rows = t.a + tap * kFconvRows;                                  \
      ROWS(XONNX_F_PTR)                                                                   \
      for (int64_t ci = 0; ci < c; ++ci, w += kFconvCols) {                               \
        prefetch_panel(w);                                                                \
        if (pf) {                                                                         \
          _mm_prefetch(reinterpret_cast<const char*>(pf), _MM_HINT_T1);                   \
          if (ps > 16) _mm_prefetch(reinterpret_cast<const char*>(pf + 16), _MM_HINT_T1); \
          pf += ps;                                                                       \
        }                                                                                 \
        const __m512 b0 = _mm512_loadu_ps(w);                                             \
        const U b1 = L::load(w + 16);                                                     \
        ROWS(XONNX_F_STEP)                                                                \
      }                                                                                   \
    }                                                                                     \
    const __m512 lo = _mm512_set1_ps(t.lo), hi = _mm512_set1_ps(t.hi);                    \
    ROWS(XONNX_F_STORE)                                                                   \
  }
#define XONNX_F_INIT(r)                                  \
  __m512 s##r##_0 = bias0;                               \
  U s##r##_1 = bias1;                                    \
  if (t.resume && r < nrows) {                           \
    s##r##_0 = _mm512_loadu_ps(out + r * ldo);           \
    s##r##_1 = L::maskz_load(m1, out + r * ldo + upper); \
  }
#define XONNX_F_PREFETCH_Z(r)                                                                    \
  if (r < nrows) {                                                                               \
    _mm_prefetch(reinterpret_cast<const char*>(t.residual + r * ldo), _MM_HINT_T0);              \
    _mm_prefetch(reinterpret_cast<const char*>(t.residual + r * ldo + upper + 15), _MM_HINT_T0); \
  }
#define XONNX_F_PTR(r) const float* a##r = rows[r];
#define XONNX_F_STEP(r)                           \
  {                                               \
    const __m512 av = _mm512_set1_ps(a##r[ci]);   \
    s##r##_0 = _mm512_fmadd_ps(av, b0, s##r##_0); \
    s##r##_1 = L::fma(av, b1, s##r##_1);          \
  }
#define XONNX_F_STORE(r)                                                        \
  if (r < nrows)                                                                \
    store_row<kUpperBits>(s##r##_0, s##r##_1, lo, hi, m1, out + r * ldo, upper, \
                          t.residual ? t.residual + r * ldo : nullptr);

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

template <int kUpperBits>
void tile_rows_avx512(const FconvTile& t) {
  if (t.rows <= 4) return tile4_avx512<kUpperBits>(t);
  if (t.rows <= 8) return tile8_avx512<kUpperBits>(t);
  tile_avx512<kUpperBits>(t);
}

void tile_any_avx512(const FconvTile& t) {
  if (t.cols <= 16) return tile16_avx512(t);
  if (t.cols <= 24) return tile_rows_avx512<256>(t);
  tile_rows_avx512<512>(t);
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
