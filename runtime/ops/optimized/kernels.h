// The vectorized float32 building blocks of the optimized op kernels, one table per ISA
// (kernels_{generic,avx2,avx512,neon}.cc compile the same bodies from kernels_impl.h).
// dispatch.cc chooses the table once per process with cpuinfo; op kernels fetch it at
// creation and keep the pointer. All functions are single-threaded: the op kernels split the
// work over the session's thread pool.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace xonnx {
namespace opt {

using MapFn = void (*)(const float* x, float* y, int64_t n);  // y = f(x), element-wise

// The arithmetic of the own Add / Sub / Mul / Div kernel (binary.cc).
enum class BinaryOp { kAdd, kSub, kMul, kDiv };

struct KernelTable {
  const char* isa;  // "avx512", "avx2", "neon", "generic"
  // GEMM microkernel geometry: register tile of mr rows x nr columns.
  int mr;
  int nr;

  // Packs columns [0, ncols) (ncols <= nr) of B [K, ldb] into dst [K][nr], zero-padded.
  void (*pack_b)(const float* b, int64_t ldb, int64_t K, int64_t ncols, float* dst);
  // C[M, ncols] = A[M, K] * packed panel (from pack_b); A rows lda apart, C rows ldc apart.
  void (*gemm_panel)(int64_t M, int64_t K, const float* a, int64_t lda, const float* packed, int64_t ncols, float* c,
                     int64_t ldc);
  // C[M, N] = A[M, K] * B[K, N] reading B in place (for few rows of A, where packing costs
  // more than it saves).
  void (*gemm_direct)(int64_t M, int64_t N, int64_t K, const float* a, int64_t lda, const float* b, int64_t ldb,
                      float* c, int64_t ldc);

  // y = (x - mean) * inv_std * scale + bias over n values (bias may be null); returns
  // mean and 1 / sqrt(var + eps) (population variance).
  void (*layer_norm_row)(const float* x, float* y, int64_t n, const float* scale, const float* bias, float eps,
                         float* mean, float* inv_std);
  // y = softmax(x) over n contiguous values.
  void (*softmax_row)(const float* x, float* y, int64_t n);
  // Softmax down each of `cols` contiguous columns over n rows `stride` apart.
  void (*softmax_columns)(const float* x, float* y, int64_t n, int64_t stride, int64_t cols);
  // y = exp(x - max(x)) over n values; returns their sum: softmax_row's numerators, for a
  // caller that divides later (attention divides its output rows, d values instead of n).
  float (*exp_shifted_row)(const float* x, float* y, int64_t n);
  // Element-wise over n values.
  void (*exp)(const float* x, float* y, int64_t n);
  void (*erf)(const float* x, float* y, int64_t n);
  void (*gelu_erf)(const float* x, float* y, int64_t n);    // 0.5 x (1 + erf(x / sqrt 2))
  void (*gelu_tanh)(const float* x, float* y, int64_t n);   // tanh approximation
  void (*swish)(const float* x, float* y, int64_t n);       // x * sigmoid(x) (SiLU)
  void (*hard_swish)(const float* x, float* y, int64_t n);  // x * clamp(fma(x, 1/6, 1/2), 0, 1)
  void (*sigmoid)(const float* x, float* y, int64_t n);     // 1 / (1 + e^-x)
  void (*tanh)(const float* x, float* y, int64_t n);
  // y[i] = x[i] op s[i], or s[i] op x[i] when `swapped`; s[0] for every i when `s_scalar`.
  // Over `rows` rows of n values (x and y advance by n, s restarts).
  void (*binary)(BinaryOp op, bool swapped, const float* x, const float* s, bool s_scalar, float* y, int64_t n,
                 int64_t rows);
  // Column sums / maxima: acc[j] (+)= x[j] over n values (acc initialised by the caller).
  void (*add_into)(const float* x, float* acc, int64_t n);
  void (*max_into)(const float* x, float* acc, int64_t n);
  // y[j] = clamp(x[j] * mul[j] + add[j], lo, hi), j < n (an inference BatchNorm's channels): the
  // product rounded before the add, as the reference's; NaN stays NaN.
  void (*scale_shift_clamp)(const float* x, const float* mul, const float* add, float lo, float hi, float* y,
                            int64_t n);
  // out[j] = sum over i < rows of x[i * stride + j], j < n: the even rows' sum plus the odd
  // rows' (two chains hide the add latency), the same order for every j, however [0, n) is cut.
  void (*column_sums)(const float* x, int64_t rows, int64_t stride, int64_t n, float* out);
  // Sum / max of n contiguous values (max: NaN if any value is NaN).
  float (*row_sum)(const float* x, int64_t n);
  float (*row_max)(const float* x, int64_t n);
  // The smallest and largest of n values folded into *mn / *mx; false when a value is NaN or
  // infinite (DynamicQuantizeLinear's range).
  bool (*row_range)(const float* x, int64_t n, float* mn, float* mx);
  // NHWC max pooling of `pixels` outputs of c channels: out[p][j] = the max over
  // taps[p * ntaps + t][j] (t < ntaps), where a value wins only when strictly greater than the
  // max so far (from -inf) and NaN never wins. Returns whether any output is -inf (an all-NaN
  // window, or -inf values), for the caller to redo those exactly.
  bool (*max_pool_pixels)(const float* const* taps, int64_t ntaps, int64_t pixels, int64_t c, float* out,
                          int64_t out_stride);
  // dst[c * ld_dst + r] = src[r * ld_src + c] for r < rows, c < cols (blocked).
  void (*transpose_2d)(const float* src, int64_t ld_src, float* dst, int64_t ld_dst, int64_t rows, int64_t cols);

  // 4-bit block-quantized weights (com.microsoft MatMulNBits, bits=4): a column's blocks are
  // `bs`-value blobs of bs/2 bytes (value 2i in the low nibble of byte i), one float scale per
  // block, zero points packed two per byte (low nibble first, null: 8). bs is a power of two >= 16.
  // w[k] = (q[k] - zp) * scale over all blocks * bs values of one column.
  void (*q4_dequant_col)(const uint8_t* blob, const float* scales, const uint8_t* zp, int64_t blocks, int64_t bs,
                         float* w);
  // M rows of A [.., K] (lda apart) into dst [M, blocks * bs] as q4_gemm_direct reads them
  // (zero-padded past K; the order of values within a block may be the ISA's own).
  void (*q4_pack_a)(int64_t M, const float* a, int64_t lda, int64_t K, int64_t kp, int64_t bs, float* dst);
  // C[M, ncols] = A[M, blocks * bs] (from q4_pack_a) * W for ncols consecutive columns (column j's blobs at
  // b + j * blocks * bs / 2, scales at scales + j * blocks, zero points at zp + j * zp_row),
  // dequantizing on the fly.
  void (*q4_gemm_direct)(int64_t M, const float* a, int64_t lda, const uint8_t* b, const float* scales,
                         const uint8_t* zp, int64_t zp_row, int64_t blocks, int64_t bs, int64_t ncols, float* c,
                         int64_t ldc);
};

// The kernel of a Conv's fused `activation` attribute (the layout pass's "Swish" or
// "HardSwish"): set in *fn, false for anything else. "" leaves *fn null.
bool fused_activation(const KernelTable& t, const std::string& name, MapFn* fn);

// The best table for this CPU (cpuinfo), chosen once. XONNX_OPT_ISA=generic|avx2|avx512|neon
// in the environment caps the choice (benchmarks and tests of the portable path).
const KernelTable& kernels();
// Whether kernels() is the AVX-512 table (the CPU has AVX-512 and XONNX_OPT_ISA allows it), and
// whether the CPU also has AVX512-VNNI: the gates of the own AVX-512 kernels outside the table.
bool avx512_chosen();
bool avx512_vnni_chosen();
// Every table this build has that the CPU supports (for differential tests across ISAs).
int supported_tables(const KernelTable** out, int max);
// Tests only (tests/unit/backend_test_util.h): kernels() returns `table` until called again
// with nullptr. The kernels outside the table (avx512_chosen) are not affected. Not for use
// while sessions run on other threads.
void set_kernels_for_testing(const KernelTable* table);

// Per-ISA tables (null when not compiled in for this target).
const KernelTable* generic_table();
const KernelTable* avx2_table();
const KernelTable* avx512_table();
const KernelTable* neon_table();

}  // namespace opt
}  // namespace xonnx
