// Winograd F(2x2, 3x3) and F(4x4, 3x3) for the own fp32 NHWC convolution (conv_winograd.cc): a
// 3x3, stride-1 convolution as 16 (36) GEMMs on transformed 4x4 (6x6) input patches, 2.25x (4x)
// fewer multiplies than the direct tiles (fconv.h), which run those GEMMs.
//   V = B^T d B (input patch d, per channel)      U = G g G^T (weights, once per session)
//   M[p] = V[p] x U[p] for each position p
//   y = A^T M A (the 2x2 or 4x4 output pixels), + bias, clamped to the fused activation range
// The transforms only add, subtract and multiply by powers of two (G's other factors are folded
// into U), so each product is exact and the AVX-512 transforms and their scalar twins below are
// bit-identical, contracted into FMAs or not. F(4x4) rounds more (its transforms reach 8x and
// 1/24): its outputs differ from the direct sums by ~4x F(2x2)'s. Non-finite inputs would meet as
// inf - inf in the transforms where the direct convolution keeps an inf: the input transforms
// report them, and the kernel hands such a run to the reference kernel.
#pragma once

#include <cstdint>

#include "runtime/ops/optimized/fconv.h"

namespace xonnx {
namespace opt {

constexpr int64_t kWinoPositions = 16;   // F(2x2): 4 x 4 transformed values per channel
constexpr int64_t kWino4Positions = 36;  // F(4x4): 6 x 6

// Weights [m][c][3][3] (ONNX order, one panel's rows at a time from rows_of) to the direct
// tiles' panels of 32 output channels for F(tile x tile, 3x3), tile 2 or 4: [positions][c][32]
// each, position p of panel pn at packed + (pn * positions + p) * c * 32.
FconvWeights pack_winograd_weights(const FconvRowsFn& rows_of, const float* bias, int64_t m, int64_t c,
                                   int64_t tile = 2);

// v[p * ldv + ci] = (B^T d B)[p] for the 4x4 patch d whose row-major point q is patch[q][ci]
// (a row of zeros for padding), ci < c. Returns false when a value is not finite.
using WinoInputFn = bool (*)(const float* const* patch, int64_t c, float* v, int64_t ldv);
// out[k][j] = clamp((A^T M A)[k] + bias[j] (+ z[k][j]), lo, hi) for the 2x2 output pixels k
// (row-major; out[k] null: outside the image, not written), from m[p * ldm + j], j < cols; z
// (or nullptr) the pixels' residual rows. The clamp keeps NaN (max(lo, .) then min(hi, .), the
// second operand winning), as the direct tiles do.
using WinoOutputFn = void (*)(const float* m, int64_t ldm, int64_t cols, const float* bias, float lo, float hi,
                              float* const* out, const float* const* z);

// One panel's weights transformed (fwinograd_pack.h): g holds `lanes` (1..32) kernels
// [c][3][3], panel gets [positions][c][32] for F(tile x tile).
using WinoPackFn = void (*)(const float* g, int64_t lanes, int64_t c, int64_t tile, float* panel);

// F(4x4, 3x3) uses the same types over 6x6 patches (36 positions) and 4x4 output pixels.

bool wino_input_reference(const float* const* patch, int64_t c, float* v, int64_t ldv);
void wino_output_reference(const float* m, int64_t ldm, int64_t cols, const float* bias, float lo, float hi,
                           float* const* out, const float* const* z);
bool wino4_input_reference(const float* const* patch, int64_t c, float* v, int64_t ldv);
void wino4_output_reference(const float* m, int64_t ldm, int64_t cols, const float* bias, float lo, float hi,
                            float* const* out, const float* const* z);
void wino_pack_reference(const float* g, int64_t lanes, int64_t c, int64_t tile, float* panel);
// The AVX-512 transforms, or nullptr where the CPU (or XONNX_OPT_ISA) has no AVX-512. The
// weight transform's two compilations give the same bits (fwinograd_pack.h).
WinoPackFn wino_pack_fast();
WinoInputFn wino_input_fast();
WinoOutputFn wino_output_fast();
WinoInputFn wino4_input_fast();
WinoOutputFn wino4_output_fast();

}  // namespace opt
}  // namespace xonnx
