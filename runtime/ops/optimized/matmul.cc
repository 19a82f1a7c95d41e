// Optimized MatMul (float32): numpy matmul semantics (1-D operands, broadcast batch dims) for
// two runtime inputs (attention QK^T and AV) and constant right-hand sides (on AVX-512 ahead of
// XNNPACK's fully-connected operator; elsewhere the batched ones it declines). B is packed into
// kNR-column panels (a constant 2-D B once, at creation); rows of A are read in place. Where the
// CPU has the convolution's 12 x 32 tiles, 12 and more rows run on them (blocks of rows x
// panels); otherwise, and for fewer rows, gemm_panel's tiles run per batch x column panel. A
// runtime B with few rows of A skips packing (gemm_direct). FusedMatMul's transB packs B^T's
// rows as panels (transpose_2d) wherever B is packed: the Transpose that made B^T is not run.
#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/thread_pool.h"
#include "runtime/ops/common/fully_connected_gemm.h"
#include "runtime/ops/optimized/fconv.h"
#include "runtime/ops/optimized/opt_util.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace opt {
namespace {

// Rows of A at or below this use gemm_direct: packing a panel costs about as much as
// multiplying it by that many rows.
constexpr int64_t kDirectMaxRows = 3;
// Multiply-adds per parallel chunk (smaller chunks cost more to wake threads than they save).
constexpr int64_t kMinChunkMacs = 1 << 21;  // ~20 us
constexpr int64_t kStreamedMacCost = 8;
// A runtime B is packed for the tiles this many bytes of panels at a time (a group of batches).
constexpr int64_t kRuntimePanelBytes = 1 << 20;

struct Plan {
  Shape out_shape;
  int64_t M = 0, N = 0, K = 0;
  int64_t batches = 1;
  std::vector<int64_t> a_off, b_off;  // per output batch, element offsets of A and B matrices
};

// False when the shapes are not a valid matmul (the reference kernel reports it).
bool make_plan(const Shape& as, const Shape& bs, Plan& p) {
  if (as.empty() || bs.empty()) return false;
  const bool a_vec = as.size() == 1, b_vec = bs.size() == 1;
  p.M = a_vec ? 1 : as[as.size() - 2];
  p.K = as.back();
  const int64_t kb = b_vec ? bs[0] : bs[bs.size() - 2];
  p.N = b_vec ? 1 : bs.back();
  if (kb != p.K) return false;
  const size_t ar = a_vec ? 0 : as.size() - 2, br = b_vec ? 0 : bs.size() - 2;
  const size_t r = ar > br ? ar : br;
  Shape batch(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t da = i < r - ar ? 1 : as[i - (r - ar)];
    const int64_t db = i < r - br ? 1 : bs[i - (r - br)];
    if (da != db && da != 1 && db != 1) return false;
    batch[i] = da == 1 ? db : da;
  }
  p.batches = shape_numel(batch);
  p.out_shape = batch;
  if (!a_vec) p.out_shape.push_back(p.M);
  if (!b_vec) p.out_shape.push_back(p.N);
  // Offsets of each batch's matrices (broadcast dims have stride 0), odometer order.
  Shape sa(r, 0), sb(r, 0);  // small vectors: no allocation in run()
  int64_t ma = p.M * p.K, mb = p.K * p.N;
  for (size_t i = r; i-- > 0;) {
    const int64_t da = i < r - ar ? 1 : as[i - (r - ar)];
    const int64_t db = i < r - br ? 1 : bs[i - (r - br)];
    sa[i] = da == 1 ? 0 : ma;
    sb[i] = db == 1 ? 0 : mb;
    ma *= da;
    mb *= db;
  }
  p.a_off.assign(static_cast<size_t>(p.batches), 0);
  p.b_off.assign(static_cast<size_t>(p.batches), 0);
  Shape idx(r, 0);
  for (int64_t n = 0; n < p.batches; ++n) {
    int64_t oa = 0, ob = 0;
    for (size_t i = 0; i < r; ++i) {
      oa += idx[i] * sa[i];
      ob += idx[i] * sb[i];
    }
    p.a_off[static_cast<size_t>(n)] = oa;
    p.b_off[static_cast<size_t>(n)] = ob;
    for (size_t i = r; i-- > 0;) {
      if (++idx[i] < batch[i]) break;
      idx[i] = 0;
    }
  }
  return true;
}

class MatMulKernel final : public FastKernel {
 public:
  // MatMul, and com.microsoft FusedMatMul: alpha scales B's packed panels (or, for few rows of
  // A against a runtime B, the product); transB swaps B's last two dims (a B of rank 2 or more),
  // read transposed where it is packed (absorb-weight-transposes and absorb-runtime-transposes
  // make those of a graph's Transposes).
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    XONNX_RETURN_IF_ERROR(require_f32_if_constant(init, 0, "MatMul"));
    XONNX_RETURN_IF_ERROR(require_f32_if_constant(init, 1, "MatMul"));
    auto k = std::unique_ptr<MatMulKernel>(new MatMulKernel());
    if (init.node().op_type == "FusedMatMul") {
      for (const char* flag : {"transA", "transBatchA", "transBatchB"}) {
        XONNX_ASSIGN_OR_RETURN(const int64_t v, init.get_int(flag, 0));
        if (v != 0) return unsupported("own FusedMatMul: ", flag);
      }
      XONNX_ASSIGN_OR_RETURN(const int64_t trans_b, init.get_int("transB", 0));
      k->trans_b_ = trans_b != 0;
      XONNX_ASSIGN_OR_RETURN(k->alpha_, init.get_float("alpha", 1.0f));
    }
    XONNX_RETURN_IF_ERROR(init_own_kernel(*k, init));
    k->restrided_ = session_float_scratch(init);
    const Tensor* b = init.constant_input(1);
    if (b && b->rank() == 2 && b->numel() > 0) k->prepack(init, *b, k->trans_b_, k->alpha_);
    return std::unique_ptr<Kernel>(std::move(k));
  }

  // Gemm as a fully-connected layer (FullyConnectedGemm): A [M, K] times the packed
  // alpha * op(B), plus the row bias.
  static Result<std::unique_ptr<Kernel>> create_gemm(const KernelInit& init) {
    XONNX_ASSIGN_OR_RETURN(FullyConnectedGemm g, FullyConnectedGemm::parse(init, "own Gemm"));
    if (g.n <= 0 || g.k <= 0) return unsupported("own Gemm: empty B");
    auto k = std::unique_ptr<MatMulKernel>(new MatMulKernel());
    XONNX_RETURN_IF_ERROR(init_own_kernel(*k, init));
    k->restrided_ = session_float_scratch(init);
    k->gemm_b_shape_ = {g.k, g.n};
    k->bias_ = std::move(g.bias);
    k->prepack(init, *init.constant_input(1), g.trans_b, g.alpha);
    if (init.has_input(2)) init.packed_constant_input(2);
    return std::unique_ptr<Kernel>(std::move(k));
  }

 private:
  void release_scratch() override { restrided_->release(); }

  Status run_fast(KernelContext& ctx, bool& handled) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    if (!is_f32(a) || !is_f32(b) || (gemm() && a.rank() != 2)) return Status::ok();
    Shape b_shape = gemm() ? gemm_b_shape_ : b.shape();
    if (trans_b_ && !gemm() && b.rank() >= 2) std::swap(b_shape[b_shape.size() - 2], b_shape.back());
    if (!make_plan(a.shape(), b_shape, plan_)) return Status::ok();
    const Plan& p = plan_;
    if (p.M <= 0 || p.N <= 0 || p.K <= 0 || p.batches <= 0) return Status::ok();  // empty: reference
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DataType::kFloat, p.out_shape));
    const bool bias_added = multiply(a, b, y->data<float>());
    if (!bias_.empty() && !bias_added) {  // Gemm's C, added to each of the M rows of N
      float* out = y->data<float>();
      k_->binary(BinaryOp::kAdd, false, out, bias_.data(), false, out, p.N, p.M);
    }
    handled = true;
    return Status::ok();
  }

  // plan_'s product into pc; true when Gemm's bias row is added too (the tiles add it).
  bool multiply(const Tensor& a, const Tensor& b, float* pc) {
    const Plan& p = plan_;
    const float* pa = a.data<float>();
    // A prepacked B is not read here: its initializer's memory may have been given back.
    const bool constant_b = prepacked_ && (gemm() || b.rank() == 2);
    const float* pb = constant_b ? nullptr : b.data<float>();
    const KernelTable& t = *k_;
    int64_t M = p.M, batches = p.batches;
    // B shared by every batch and A's batches contiguous: one tall GEMM over all rows of A
    // (also for one row per batch: a [L, 1, E] x [E, F] projection is one [L, E] GEMM).
    bool tall = batches > 1;
    for (int64_t n = 0; tall && n < batches; ++n)
      tall = p.b_off[static_cast<size_t>(n)] == 0 && p.a_off[static_cast<size_t>(n)] == n * p.M * p.K;
    if (tall) {
      M *= batches;
      batches = 1;
    }
    const int64_t N = p.N, K = p.K;
    const bool trans_b = trans_b_ && !constant_b && b.rank() >= 2;  // B^T at run time (a 1-D B is not transposed)
    if (M <= kDirectMaxRows && !constant_b && !trans_b) {           // gemm_direct reads B's rows in place
      // Tasks: batch x blocks of 64 columns.
      const int64_t cb = 64, nblocks = (N + cb - 1) / cb;
      pool_->parallel_for(static_cast<size_t>(batches * nblocks), chunk_for(M * K * cb, kMinChunkMacs),
                          [&](size_t begin, size_t end) {
                            for (size_t task = begin; task < end; ++task) {
                              const int64_t n = static_cast<int64_t>(task) / nblocks;
                              const int64_t j0 = (static_cast<int64_t>(task) % nblocks) * cb;
                              const int64_t nc = N - j0 < cb ? N - j0 : cb;
                              float* cn = pc + n * M * N + j0;
                              t.gemm_direct(M, nc, K, pa + p.a_off[static_cast<size_t>(n)], K,
                                            pb + p.b_off[static_cast<size_t>(n)] + j0, N, cn, N);
                              for (int64_t r = 0; r < M; ++r) scale(cn + r * N, nc);
                            }
                          });
      return false;
    }
    if (tile_ && M >= kFconvRows) {
      if (constant_b) {
        const TileBatches one{pa, batches == 1 ? nullptr : p.a_off.data(), prepacked_->data(), 0, pc};
        run_tiles(batches, M, N, K, one);
        return true;
      }
      multiply_runtime_b_on_tiles(M, N, K, batches, pa, pb, trans_b, pc);
      return false;
    }
    const int64_t nr = t.nr, panels = (N + nr - 1) / nr;
    // A constant B was packed at creation: even a decode step's single row reads its weights
    // faster as contiguous panels than as strided rows of B.
    const float* prepacked = constant_b ? prepacked_->data() : nullptr;
    // A few rows against a prepacked B stream the weights for little arithmetic: a multiply-
    // add then costs about as much time as kStreamedMacCost of the tiles' (in memory's pace).
    const size_t min_chunk =
        chunk_for((prepacked && M <= kDirectMaxRows ? kStreamedMacCost : M) * K * nr, kMinChunkMacs);
    if (!prepacked)
      packed_.prepare(*pool_, static_cast<size_t>(batches * panels), min_chunk, static_cast<size_t>(K * nr));
    pool_->parallel_for(static_cast<size_t>(batches * panels), min_chunk, [&](size_t begin, size_t end) {
      float* packed = prepacked ? nullptr : packed_.of(begin);
      for (size_t task = begin; task < end; ++task) {
        const int64_t n = static_cast<int64_t>(task) / panels;
        const int64_t j0 = (static_cast<int64_t>(task) % panels) * nr;
        const int64_t nc = N - j0 < nr ? N - j0 : nr;
        const float* an = batches == 1 ? pa : pa + p.a_off[static_cast<size_t>(n)];
        const float* panel = prepacked ? prepacked + (j0 / nr) * K * nr : packed;
        if (!prepacked) {
          pack_runtime_b(pb + p.b_off[static_cast<size_t>(n)], trans_b, N, K, j0, nc, nr, packed);
          scale(packed, K * nr);
        }
        t.gemm_panel(M, K, an, K, panel, nc, pc + n * M * N + j0, N);
      }
    });
    return false;
  }

  // Where the batches of a tiled product live: batch n multiplies A at a + a_off[n] (a_off null:
  // one batch) by the panels at panels + n * panels_stride into c + n * M * N.
  struct TileBatches {
    const float* a;
    const int64_t* a_off;
    const float* panels;
    int64_t panels_stride;
    float* c;
  };

  // A runtime B on the 12 x 32 tiles: each batch's B is packed whole into [K][32] panels first
  // (attention's QK^T and AV: 24 accumulators where gemm_panel's 8-row tiles keep 16), a group of
  // batches at a time so that the packed panels stay within kRuntimePanelBytes.
  void multiply_runtime_b_on_tiles(int64_t M, int64_t N, int64_t K, int64_t batches, const float* a, const float* b,
                                   bool trans_b, float* c) {
    const Plan& p = plan_;
    const int64_t panels = (N + kFconvCols - 1) / kFconvCols, batch_floats = panels * K * kFconvCols;
    const int64_t group = std::clamp<int64_t>(kRuntimePanelBytes / (batch_floats * 4), 1, batches);
    if (runtime_panels_.size() < static_cast<size_t>(group * batch_floats))
      runtime_panels_.resize(static_cast<size_t>(group * batch_floats));
    for (int64_t n0 = 0; n0 < batches; n0 += group) {
      const int64_t nb = std::min(group, batches - n0);
      pool_->parallel_for(static_cast<size_t>(nb * panels), chunk_for(K * kFconvCols, kMinChunkMacs / 8),
                          [&](size_t begin, size_t end) {
                            for (size_t task = begin; task < end; ++task) {
                              const int64_t n = static_cast<int64_t>(task) / panels;
                              const int64_t j0 = (static_cast<int64_t>(task) % panels) * kFconvCols;
                              float* panel = runtime_panels_.data() + n * batch_floats + j0 * K;
                              pack_runtime_b(b + p.b_off[static_cast<size_t>(n0 + n)], trans_b, N, K, j0,
                                             std::min(kFconvCols, N - j0), kFconvCols, panel);
                              scale(panel, K * kFconvCols);
                            }
                          });
      run_tiles(nb, M, N, K, {a, p.a_off.data() + n0, runtime_panels_.data(), batch_floats, c + n0 * M * N});
    }
  }

  // C_n [M, N] = A_n [M, K] x its packed B (+ Gemm's bias row, added in the tile) on the
  // convolution's tiles: 24 accumulators where the GEMM's 8-row tiles keep 16. A task is a block
  // of rows of one batch whose A (at most kRowBlockBytes) stays in L2 while its panels run over
  // it, one at a time: each panel comes from L2 or L3 once per block, A from memory once. (One
  // panel over all of M read a tall A once per panel: a [3136, 384] x [384, 96] projection read
  // its 4.8 MB A three times.) Few blocks also split the panels, so that every thread has work.
  // A K over kMaxSliceK runs in slices, each tile resuming from the last slice's sums (the same
  // bits): a slice of A for all rows stays in L2, so each panel slice comes from memory once
  // (bert_base's [128, 3072] x [3072, 768] with its weights in DRAM: 4.7 -> 4.4 ms; whole, A
  // took two row blocks, each reading every panel).
  void run_tiles(int64_t batches, int64_t M, int64_t N, int64_t K, const TileBatches& tb) {
    constexpr int64_t kRowBlockBytes = 1 << 20;
    constexpr int64_t kMaxSliceK = 768;  // a 96 KB panel slice
    const int64_t tiles = (M + kFconvRows - 1) / kFconvRows, panels = (N + kFconvCols - 1) / kFconvCols;
    const size_t row_slots = static_cast<size_t>(batches * tiles * kFconvRows);
    if (rows_.size() < row_slots) rows_.resize(row_slots);
    for (int64_t n = 0; n < batches; ++n) {
      const float* an = tb.a + (tb.a_off ? tb.a_off[n] : 0);
      const float** slots = rows_.data() + n * tiles * kFconvRows;
      for (int64_t r = 0; r < tiles * kFconvRows; ++r) slots[r] = an + std::min(r, M - 1) * K;
    }
    const int64_t slices = (K + kMaxSliceK - 1) / kMaxSliceK, kc = (K + slices - 1) / slices;
    const int64_t a_bytes = M * kc * static_cast<int64_t>(sizeof(float));
    const int64_t threads = pool_->num_threads();
    // Blocks sized evenly, as many per thread when there are several.
    int64_t blocks = (a_bytes + kRowBlockBytes - 1) / kRowBlockBytes;
    if (blocks > 1) blocks = std::min(tiles, (blocks * batches + threads - 1) / threads * threads / batches);
    blocks = std::max<int64_t>(blocks, 1);
    const int64_t all_blocks = batches * blocks;
    const int64_t groups =
        all_blocks >= 2 * threads ? 1 : std::min(panels, (2 * threads + all_blocks - 1) / all_blocks);
    const int64_t group_panels = (panels + groups - 1) / groups;
    const size_t tasks = static_cast<size_t>(all_blocks * groups);
    const size_t min_chunk = chunk_for(tiles / blocks * kFconvRows * K * group_panels * kFconvCols, kMinChunkMacs);
    // Rows 4 KB apart (K = 1024, 2048, 3072, ...): each block's from a copy (fconv_rows_alias).
    const int64_t block_rows = (tiles + blocks - 1) / blocks * kFconvRows;
    const bool restride = fconv_rows_alias(K);
    if (restride) {
      restrided_->prepare(*pool_, tasks, min_chunk, static_cast<size_t>(block_rows * (K + kFconvRowPad)));
      restrided_rows_.prepare(*pool_, tasks, min_chunk, static_cast<size_t>(block_rows));
    }
    pool_->parallel_for(tasks, min_chunk, [&](size_t task0, size_t task1) {
      FconvTile t;
      t.taps = 1;
      t.c = K;
      t.ldo = N;
      t.lo = -std::numeric_limits<float>::infinity();
      t.hi = std::numeric_limits<float>::infinity();
      int64_t copied = -1;  // the block whose rows restrided_ holds
      for (size_t task = task0; task < task1; ++task) {
        const int64_t blk = static_cast<int64_t>(task) / groups, group = static_cast<int64_t>(task) % groups;
        const int64_t n = blk / blocks, b = blk % blocks;
        const int64_t t0 = b * tiles / blocks, t1 = (b + 1) * tiles / blocks;
        const int64_t pn0 = group * group_panels, pn1 = std::min(panels, pn0 + group_panels);
        // first + (ti - t0) * kFconvRows: tile ti's row pointers
        const float* const* first = rows_.data() + (n * tiles + t0) * kFconvRows;
        if (restride) {
          const float** block = restrided_rows_.of(task0);
          const int64_t count = (t1 - t0) * kFconvRows;
          if (copied != blk && !restride_rows(first, count, tb.a + (tb.a_off ? tb.a_off[n] : 0), M, K,
                                              restrided_->of(task0), block_rows, block))
            std::copy(first, first + count, block);
          copied = blk;
          first = block;
        }
        float* cn = tb.c + n * M * N;
        for (int64_t k0 = 0; k0 < K; k0 += kc) {
          t.c = std::min(kc, K - k0);
          t.resume = k0 > 0;
          const float* slice_rows[kFconvRows];      // a tile's rows of A, from k0
          for (int64_t pn = pn0; pn < pn1; ++pn) {  // the panel stays in L1 or L2 over the block
            const int64_t j0 = pn * kFconvCols;
            t.panel = tb.panels + n * tb.panels_stride + j0 * K + k0 * kFconvCols;
            t.bias = tile_bias_.empty() ? kZeroBias : tile_bias_.data() + j0;
            t.cols = std::min(kFconvCols, N - j0);
            // The block's next panel (slice), which its first tiles fetch into L2.
            const float* next = pn + 1 < pn1 ? t.panel + K * kFconvCols
                                : k0 + kc < K
                                    ? tb.panels + n * tb.panels_stride + pn0 * kFconvCols * K + (k0 + kc) * kFconvCols
                                    : nullptr;
            for (int64_t ti = t0; ti < t1; ++ti) {
              fconv_share_next_panel(t, next, ti - t0, t1 - t0);
              const float* const* rows = first + (ti - t0) * kFconvRows;
              for (int64_t r = 0; r < kFconvRows; ++r) slice_rows[r] = rows[r] + k0;
              t.a = slice_rows;
              t.rows = std::min(kFconvRows, M - ti * kFconvRows);
              t.out = cn + ti * kFconvRows * N + j0;
              tile_(t);
            }
          }
        }
      }
    });
  }

  // B is read 64 rows of op(B) at a time (Tensor::read_bytes): a misaligned initializer is
  // packed without a copy of it being made first.
  std::shared_ptr<UninitAlignedVector<float>> pack_panels(const Tensor& b, bool trans_b, float alpha) const {
    const int64_t K = trans_b ? b.dim(1) : b.dim(0), N = trans_b ? b.dim(0) : b.dim(1);
    const int64_t nr = k_->nr, panels = (N + nr - 1) / nr;
    auto packed = std::make_shared<UninitAlignedVector<float>>(static_cast<size_t>(panels * K * nr));  // all written
    if (trans_b) {
      // Panel j [K][nr] is the transpose of B's rows j * nr ..: pieces of kPiece values of each
      // of its rows (read in order, as the file holds them), transposed in L1. Reading B^T's rows
      // instead takes a strided piece of every row of B per row block (vgg11's 25088 x 4096
      // classifier: 1.1 s of its session creation).
      constexpr int64_t kPiece = 256;
      std::vector<float> piece(static_cast<size_t>(nr * kPiece));
      for (int64_t j = 0; j < panels; ++j) {
        const int64_t cols = std::min(nr, N - j * nr);
        for (int64_t k0 = 0; k0 < K; k0 += kPiece) {
          const int64_t kb = std::min(kPiece, K - k0);
          for (int64_t n = 0; n < cols; ++n)
            b.read_bytes(static_cast<size_t>((j * nr + n) * K + k0) * sizeof(float),
                         static_cast<size_t>(kb) * sizeof(float), piece.data() + n * kPiece);
          float* dst = packed->data() + (j * K + k0) * nr;
          k_->transpose_2d(piece.data(), kPiece, dst, nr, cols, kb);
          for (int64_t k = 0; k < kb; ++k) {
            std::fill(dst + k * nr + cols, dst + (k + 1) * nr, 0.0f);
            if (alpha != 1.0f)
              for (int64_t n = 0; n < cols; ++n) dst[k * nr + n] *= alpha;
          }
        }
      }
      return packed;
    }
    constexpr int64_t kRows = 64;
    std::vector<float> rows(static_cast<size_t>(std::min(K, kRows) * N));
    for (int64_t k0 = 0; k0 < K; k0 += kRows) {
      const int64_t kb = std::min(kRows, K - k0);
      b.read_bytes(static_cast<size_t>(k0 * N) * sizeof(float), static_cast<size_t>(kb * N) * sizeof(float),
                   rows.data());
      if (alpha != 1.0f)
        for (size_t i = 0; i < static_cast<size_t>(kb * N); ++i) rows[i] *= alpha;
      for (int64_t j = 0; j < panels; ++j)
        k_->pack_b(rows.data() + j * nr, N, kb, N - j * nr < nr ? N - j * nr : nr, packed->data() + (j * K + k0) * nr);
    }
    return packed;
  }

  // The constant 2-D B (alpha * B^T for a Gemm with transB), every panel: [panels][K][nr],
  // shared with the session's other kernels that pack the same initializer the same way.
  void prepack(const KernelInit& init, const Tensor& b, bool trans_b, float alpha) {
    uint32_t alpha_bits;
    std::memcpy(&alpha_bits, &alpha, sizeof(alpha_bits));
    const std::string layout = "own MatMul panels, nr " + std::to_string(k_->nr) + (trans_b ? ", B^T" : ", B") +
                               ", alpha bits " + std::to_string(alpha_bits);
    prepacked_ = std::static_pointer_cast<const UninitAlignedVector<float>>(
        init.shared_packing(b, layout, [&] { return std::shared_ptr<const void>(pack_panels(b, trans_b, alpha)); }));
    init.packed_constant_input(1);
    // The tiles start from a Gemm's bias row (zero past N).
    const int64_t N = trans_b ? b.dim(0) : b.dim(1), panels = (N + k_->nr - 1) / k_->nr;
    if (tile_ && !bias_.empty()) {
      tile_bias_.assign(static_cast<size_t>(panels * kFconvCols), 0.0f);
      std::copy(bias_.begin(), bias_.end(), tile_bias_.begin());
    }
  }

  // Columns [j0, j0 + nc) of one batch's op(B) [K, N] as a panel [K][nr], zero past nc: from B
  // at b, or from B^T [N, K] (trans_b), whose rows are the panel's columns.
  void pack_runtime_b(const float* b, bool trans_b, int64_t N, int64_t K, int64_t j0, int64_t nc, int64_t nr,
                      float* dst) const {
    if (!trans_b) return k_->pack_b(b + j0, N, K, nc, dst);
    k_->transpose_2d(b + j0 * K, K, dst, nr, nc, K);
    if (nc < nr)
      for (int64_t k = 0; k < K; ++k) std::fill(dst + k * nr + nc, dst + (k + 1) * nr, 0.0f);
  }

  const KernelTable* k_ = &kernels();  // first: tile_ depends on it
  // FusedMatMul's alpha on n values of a packed panel or of the product (none for 1).
  void scale(float* v, int64_t n) const {
    if (alpha_ != 1.0f) k_->binary(BinaryOp::kMul, false, v, &alpha_, true, v, n, 1);
  }

  float alpha_ = 1.0f;    // FusedMatMul's
  bool trans_b_ = false;  // FusedMatMul's: a constant 2-D B's panels hold B^T; a runtime one is read so
  Plan plan_;             // reused across runs (kernels of one session run one at a time)
  bool gemm() const { return !gemm_b_shape_.empty(); }
  Shape gemm_b_shape_;              // a Gemm's: B is the packed [K, N], plus bias_ (empty for MatMul)
  std::vector<float> bias_;         // Gemm's beta * C as a row of N (empty without C)
  AlignedVector<float> tile_bias_;  // bias_ zero-padded to whole panels, for the tiles
  std::shared_ptr<const UninitAlignedVector<float>> prepacked_;  // shared (KernelInit::shared_packing)
  ChunkScratch<float> packed_;                                   // B panels packed at run time (a runtime B)
  AlignedVector<float> runtime_panels_;                          // a runtime B packed for the tiles, a group of batches
  // The 12 x 32 tile where the CPU has it: its panels are the convolution's [K][32] layout.
  FconvTileFn tile_ = k_->nr == kFconvCols ? fconv_tile_fast() : nullptr;
  std::vector<const float*> rows_;                  // run_tiles: a pointer per row of A, tiles padded (grows only)
  std::shared_ptr<ChunkScratch<float>> restrided_;  // the session's; run_tiles, per chunk: a block's rows, re-strided
  ChunkScratch<const float*> restrided_rows_;       // run_tiles, per chunk: pointers into restrided_
  static constexpr float kZeroBias[kFconvCols] = {};
};

}  // namespace

void register_opt_matmul(OpRegistry& registry) {
  // On AVX-512, before XNNPACK's fully-connected operator for a constant B too: the 8 x 32
  // tiles run faster (bench BM_MatMulF32_*) and packing is a vector copy, where XNNPACK packs
  // element by element.
  XONNX_REGISTER(registry, "", "MatMul", 1, kLatestVersion, MatMulKernel::create, Backend::kOptimized,
                 avx512_chosen() ? kPriorityBeforeXnnpack : kBackendPriority);
  XONNX_REGISTER(registry, "com.microsoft", "FusedMatMul", 1, kLatestVersion, MatMulKernel::create,
                 Backend::kOptimized);
  // Gemm as a fully-connected layer: a classifier's single row streams its weights from the
  // prepacked panels. Elsewhere than on AVX-512 after XNNPACK's, which is the faster one there,
  // but not the only one: session creation makes every projection with a bias row a Gemm
  // (fuse-matmul-add), and a build or session without XNNPACK must not run those on the
  // reference kernel.
  XONNX_REGISTER(registry, "", "Gemm", 1, kLatestVersion, MatMulKernel::create_gemm, Backend::kOptimized,
                 avx512_chosen() ? kPriorityBeforeXnnpack : kBackendPriority);
}

}  // namespace opt
}  // namespace xonnx
