// Optimized com.microsoft MatMulNBits for bits=4 (the converter's int4 weight-only MatMul):
// float32 A times a 4-bit block-quantized B [N, k_blocks, block_size / 2] dequantized on the fly.
// Few rows of A (the decode step) run a direct dequantize-and-FMA loop over the packed columns
// (q4_gemm_direct); more rows (prefill) dequantize one kNR-column panel at a time into a small
// per-chunk buffer and reuse the float GEMM microkernel, so the float B never exists whole.
// Work is split over column blocks. Anything else (other bits, float zero points, fp16 inputs,
// bad shapes) goes to the reference kernel (ref/contrib.cc), which defines the semantics and
// reports the errors.
// accuracy_level 4 (ORT: A may be quantized to int8, products accumulated in int32) with
// constant weights takes the int8 dot-product path (q4_int8.h: A quantized per block, vpdpbusd
// over the nibbles with AVX512-VNNI, vpmaddubsw with AVX2) for any number of rows, as ORT's
// CompInt8 does: it beats the float panels from one row to a 512-token prefill (bench_llm
// BM_MatMulNBits, K 1024, N 2816, 1 thread: M 5 0.30 vs 0.98 ms, M 512 14 vs 25 ms with VNNI;
// M 8 0.61 vs 1.45 ms, M 512 42 vs 52 ms with AVX2). Every other level, runtime weights, a CPU
// without either ISA and an A holding NaN or infinity take the float path: float32
// accumulation is the most accurate level, which every level allows.
#include <cstring>
#include <vector>

#include "runtime/core/checked.h"
#include "runtime/core/thread_pool.h"
#include "runtime/ops/optimized/opt_util.h"
#include "runtime/ops/optimized/q4_int8.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace opt {
namespace {

// On the float path, rows of A at or below this use the direct loop: a panel's dequantize +
// transpose costs about as much as multiplying it by that many rows.
constexpr int64_t kDirectMaxRows = 4;
// Columns per parallel task of the direct path.
constexpr int64_t kDirectCols = 16;
// Multiply-adds per parallel chunk; a dequantized multiply-add costs ~2 float ones, an int8
// one (4 per vpdpbusd lane) about half a float one.
constexpr int64_t kMinChunkMacs = 1 << 20;
constexpr int64_t kMinInt8ChunkMacs = 1 << 21;

class MatMulNBitsKernel final : public FastKernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    XONNX_ASSIGN_OR_RETURN(int64_t k, init.require_int("K"));
    XONNX_ASSIGN_OR_RETURN(int64_t n, init.require_int("N"));
    XONNX_ASSIGN_OR_RETURN(int64_t bs, init.require_int("block_size"));
    XONNX_ASSIGN_OR_RETURN(int64_t bits, init.get_int("bits", 4));
    XONNX_ASSIGN_OR_RETURN(int64_t prepacked, init.get_int("weight_prepacked", 0));
    XONNX_ASSIGN_OR_RETURN(int64_t accuracy_level, init.get_int("accuracy_level", 0));
    if (bits != 4) return unsupported("MatMulNBits: optimized kernel is bits=4 only");
    if (k <= 0 || n <= 0 || bs < 16 || (bs & (bs - 1)) != 0 || prepacked != 0 || init.has_input(4)) {
      return unsupported("MatMulNBits: left to the reference kernel");  // which reports what is wrong
    }
    // Every size below (B's bytes, padded K, the packed panels) is at most a small multiple of
    // N * k_blocks * block_size: with that product in range, none of them wraps.
    if (checked_mul(n, k / bs + 1, bs, 4) < 0) return unsupported("MatMulNBits: sizes beyond int64");
    XONNX_RETURN_IF_ERROR(require_f32_if_constant(init, 0, "MatMulNBits"));
    XONNX_RETURN_IF_ERROR(require_f32_if_constant(init, 2, "MatMulNBits"));
    XONNX_RETURN_IF_ERROR(require_f32_if_constant(init, 5, "MatMulNBits"));
    auto kernel = std::unique_ptr<MatMulNBitsKernel>(new MatMulNBitsKernel(k, n, bs));
    XONNX_RETURN_IF_ERROR(init_own_kernel(*kernel, init));
    if (accuracy_level == 4 && q4_int8_fast()) kernel->pack_int8_weights(init);
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

 private:
  MatMulNBitsKernel(int64_t k, int64_t n, int64_t bs)
      : K_(k), N_(n), bs_(bs), blocks_(k / bs + (k % bs != 0)), zp_row_((blocks_ * 4 + 7) / 8) {}

  // The int8 path's weights, packed once when B, scales and zero points are constants of the
  // sizes covered() accepts (runtime weights stay on the float path: repacking them per run
  // would cost more than the int8 products save).
  void pack_int8_weights(const KernelInit& init) {
    const Tensor* b = init.constant_input(1);
    const Tensor* s = init.constant_input(2);
    const Tensor* zp = init.has_input(3) ? init.constant_input(3) : nullptr;
    if (!b || !s || (init.has_input(3) && !zp)) return;
    if (b->dtype() != DataType::kUint8 || b->numel() != N_ * blocks_ * bs_ / 2) return;
    if (!is_f32(*s) || s->numel() != N_ * blocks_) return;
    if (zp && (zp->dtype() != DataType::kUint8 || zp->numel() != N_ * zp_row_)) return;
    int8_w_ = pack_q4_int8_weights(b->data<uint8_t>(), s->data<float>(), zp ? zp->data<uint8_t>() : nullptr, zp_row_,
                                   N_, blocks_, bs_);
    int8_fn_ = q4_int8_fast();
    panel_fn_ = q4_int8_panel_fast();
    if (!panel_fn_) return;
    // The panels of the float path (prefill) are dequantized from the packed copy too, so the
    // originals are read only when A holds NaN or infinity: the session returns their memory
    // and the weights are not resident twice.
    init.packed_constant_input(1);
    init.packed_constant_input(2);
    if (zp) init.packed_constant_input(3);
  }

  // The panels' scratch is 2 * K * nr floats per chunk (~0.5-1.4 MiB at a 0.5B model's
  // shapes, times every MatMulNBits of the model): an idle session gives it back.
  void release_scratch() override {
    panel_scratch_.release();
    std::vector<float>().swap(a_pack_);
    a_int8_ = Q4Int8A();
  }

  // The inputs this kernel covers; anything else is the reference kernel's.
  bool covered(KernelContext& ctx) const {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    const Tensor& s = ctx.input(2);
    if (!is_f32(a) || a.rank() < 1 || a.dim(a.rank() - 1) != K_ || a.numel() == 0) return false;
    if (b.dtype() != DataType::kUint8 || b.numel() != N_ * blocks_ * bs_ / 2) return false;
    if (!is_f32(s) || s.numel() != N_ * blocks_) return false;
    if (ctx.has_input(3)) {
      const Tensor& zp = ctx.input(3);
      if (zp.dtype() != DataType::kUint8 || zp.numel() != N_ * zp_row_) return false;
    }
    if (ctx.has_input(5) && (!is_f32(ctx.input(5)) || ctx.input(5).numel() != N_)) return false;
    return true;
  }

  Status run_fast(KernelContext& ctx, bool& handled) override {
    if (!covered(ctx)) return Status::ok();
    const Tensor& a = ctx.input(0);
    const int64_t M = a.numel() / K_;
    Shape out_shape = a.shape();
    out_shape.back() = N_;
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DataType::kFloat, out_shape));
    const float* pa = a.data<float>();
    float* pc = y->data<float>();
    if (int8_fn_ && quantize_a_int8(pa, M, K_, blocks_, bs_, a_int8_)) {
      run_int8(M, pc);
    } else if (M > kDirectMaxRows && panel_fn_) {
      run_panels(M, pa, nullptr, nullptr, nullptr, pc);  // A holds NaN or infinity: from the packed copy
    } else {
      // The original weights (data() of a dropped copy-on-access constant copies it again).
      const uint8_t* pb = ctx.input(1).data<uint8_t>();
      const float* ps = ctx.input(2).data<float>();
      const uint8_t* pz = ctx.has_input(3) ? ctx.input(3).data<uint8_t>() : nullptr;
      if (M <= kDirectMaxRows) {
        run_direct(M, pa, pb, ps, pz, pc);
      } else {
        run_panels(M, pa, pb, ps, pz, pc);
      }
    }
    if (ctx.has_input(5)) {
      const float* bias = ctx.input(5).data<float>();
      for (int64_t m = 0; m < M; ++m) k_->add_into(bias, pc + m * N_, N_);
    }
    handled = true;
    return Status::ok();
  }

  void run_direct(int64_t M, const float* pa, const uint8_t* pb, const float* ps, const uint8_t* pz, float* pc) {
    // A in the table's order, zero-padded to whole blocks (M * K floats: small next to M * K * N).
    const int64_t kp = blocks_ * bs_;
    if (a_pack_.size() < static_cast<size_t>(M * kp)) a_pack_.resize(static_cast<size_t>(M * kp));
    k_->q4_pack_a(M, pa, K_, K_, kp, bs_, a_pack_.data());
    const float* a = a_pack_.data();
    const int64_t lda = kp;
    const KernelTable& t = *k_;
    const int64_t col_bytes = blocks_ * bs_ / 2, tasks = (N_ + kDirectCols - 1) / kDirectCols;
    pool_->parallel_for(static_cast<size_t>(tasks), chunk_for(M * kp * kDirectCols, kMinChunkMacs),
                        [&](size_t begin, size_t end) {
                          for (size_t task = begin; task < end; ++task) {
                            const int64_t j0 = static_cast<int64_t>(task) * kDirectCols;
                            const int64_t nc = N_ - j0 < kDirectCols ? N_ - j0 : kDirectCols;
                            t.q4_gemm_direct(M, a, lda, pb + j0 * col_bytes, ps + j0 * blocks_,
                                             pz ? pz + j0 * zp_row_ : nullptr, zp_row_, blocks_, bs_, nc, pc + j0, N_);
                          }
                        });
  }

  void run_int8(int64_t M, float* pc) {
    const Q4Int8Fn fn = int8_fn_;
    const Q4Int8A& a = a_int8_;
    const Q4Int8Weights& w = int8_w_;
    const int64_t N = N_;
    pool_->parallel_for(
        static_cast<size_t>(w.groups), chunk_for(M * blocks_ * bs_ * kQ4Int8Cols, kMinInt8ChunkMacs),
        [&](size_t begin, size_t end) { fn(a, w, static_cast<int64_t>(begin), static_cast<int64_t>(end), pc, N); });
  }

  // pb == nullptr: the panels come from the packed copy (int8_w_), else from B, scales, zero points.
  void run_panels(int64_t M, const float* pa, const uint8_t* pb, const float* ps, const uint8_t* pz, float* pc) {
    const KernelTable& t = *k_;
    const int64_t nr = t.nr, kp = blocks_ * bs_, panels = (N_ + nr - 1) / nr, col_bytes = blocks_ * bs_ / 2;
    const int64_t K = K_, N = N_, blocks = blocks_, bs = bs_, zp_row = zp_row_;
    const size_t min_chunk = chunk_for(M * K * nr, kMinChunkMacs);
    panel_scratch_.prepare(*pool_, static_cast<size_t>(panels), min_chunk,
                           static_cast<size_t>(pb ? nr * kp + K * nr : K * nr));
    pool_->parallel_for(static_cast<size_t>(panels), min_chunk, [&](size_t begin, size_t end) {
      // Per chunk: the panel's columns dequantized [nr][kp], then transposed to [K][nr]; from the
      // packed copy straight into [K][nr].
      float* const cols = panel_scratch_.of(begin);
      float* const packed = pb ? cols + nr * kp : cols;
      for (size_t task = begin; task < end; ++task) {
        const int64_t j0 = static_cast<int64_t>(task) * nr;
        const int64_t nc = N - j0 < nr ? N - j0 : nr;
        if (!pb) {
          panel_fn_(int8_w_, j0, nc, nr, K, packed);
          t.gemm_panel(M, K, pa, K, packed, nc, pc + j0, N);
          continue;
        }
        for (int64_t j = 0; j < nc; ++j) {
          const int64_t col = j0 + j;
          t.q4_dequant_col(pb + col * col_bytes, ps + col * blocks, pz ? pz + col * zp_row : nullptr, blocks, bs,
                           cols + j * kp);
        }
        if (nc < nr) std::memset(cols + nc * kp, 0, static_cast<size_t>((nr - nc) * kp) * sizeof(float));
        t.transpose_2d(cols, kp, packed, nr, nr, K);
        t.gemm_panel(M, K, pa, K, packed, nc, pc + j0, N);
      }
    });
  }

  const int64_t K_, N_, bs_, blocks_, zp_row_;
  ChunkScratch<float> panel_scratch_;  // run_panels: dequantized columns, then the packed panel
  std::vector<float> a_pack_;          // reused across runs (kernels of one session run one at a time)
  Q4Int8Fn int8_fn_ = nullptr;  // set when the int8 path applies (accuracy_level 4, VNNI or AVX2, constant weights)
  Q4Int8PanelFn panel_fn_ = nullptr;  // with int8_fn_: the float path's panels from int8_w_
  Q4Int8Weights int8_w_;
  Q4Int8A a_int8_;  // reused across runs, like a_pack_
  const KernelTable* k_ = &kernels();
};

}  // namespace

void register_opt_matmul_nbits(OpRegistry& registry) {
  XONNX_REGISTER(registry, "com.microsoft", "MatMulNBits", 1, kLatestVersion, MatMulNBitsKernel::create,
                 Backend::kOptimized);
}

}  // namespace opt
}  // namespace xonnx
