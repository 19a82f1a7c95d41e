// Multiply and add that GCC cannot contract into an FMA, for the AVX-512 kernels whose scalar
// twins they must match bit for bit (fdwconv_avx512.cc, fconv_avx512.cc). GCC writes
// _mm512_mul_ps / _mm512_add_ps as plain vector arithmetic, which its default
// -ffp-contract=fast may fuse into an FMA the twin does not do; the rounding variants are
// builtins it leaves alone (the zero-masking form: GCC 12 warns about the other's undefined
// pass-through operand; an all-ones mask compiles to the plain instruction).
// Include only from files compiled with AVX-512 flags, after <immintrin.h>.
#pragma once

#include <immintrin.h>

namespace xonnx {
namespace opt {
namespace avx512_exact {

inline __m512 mul(__m512 a, __m512 b) { return _mm512_maskz_mul_round_ps(0xFFFF, a, b, _MM_FROUND_CUR_DIRECTION); }
inline __m512 add(__m512 a, __m512 b) { return _mm512_maskz_add_round_ps(0xFFFF, a, b, _MM_FROUND_CUR_DIRECTION); }
// 256-bit (AVX-512VL): the masked builtin has no rounding form but is not contracted either.
inline __m256 add(__m256 a, __m256 b) { return _mm256_maskz_add_ps(0xFF, a, b); }

}  // namespace avx512_exact
}  // namespace opt
}  // namespace xonnx
