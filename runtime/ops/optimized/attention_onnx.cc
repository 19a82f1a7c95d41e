// Optimized ONNX Attention (opset 23/24, float32) on the flash-style core of attention_core.h:
// past_key / past_value concatenated into present, grouped heads, is_causal, softcap, scale and
// an additive or boolean mask whose last dim covers every key. The query heads sharing a K/V
// head form the rows of a tile, so each K/V row is read once per tile. Declined to the reference
// kernel (ref/attention.cc): qk_matmul_output, nonpad_kv_seqlen, other dtypes, a value head
// size differing from the query's, a mask shorter than the keys.
// Many query rows per head (a prompt, an encoder; the session's fuse-attention pass makes this op
// of torch's MatMul -> scale -> mask -> Softmax -> MatMul) take the GEMM path instead (prefill()).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "runtime/ops/optimized/attention_core.h"
#include "runtime/ops/optimized/fconv.h"
#include "runtime/ops/optimized/opt_util.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace opt {
namespace {

constexpr int64_t kRowsPerTile = 64;
// The GEMM path: at least this many query rows per head, keys up to kPrefillMaxKeys (its
// scratch per thread, packed K and V, grows with the keys: ~2 MB at 4096 keys of head size 64;
// longer caches take the flash path); a task's scores [rows, T] take about kScoreFloats floats.
constexpr int64_t kPrefillMinRows = 16;
constexpr int64_t kPrefillMaxKeys = 4096;
constexpr int64_t kScoreFloats = 16384;

class AttentionKernel final : public FastKernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    if (init.num_outputs() > 3 && !init.node().outputs[3].empty()) {
      return unsupported("Attention: qk_matmul_output runs on the reference kernel");
    }
    if (init.has_input(6)) return unsupported("Attention: nonpad_kv_seqlen runs on the reference kernel");
    auto k = std::unique_ptr<AttentionKernel>(new AttentionKernel());
    XONNX_RETURN_IF_ERROR(init_own_kernel(*k, init));
    if (k->k_->nr == kFconvCols) k->tile_ = fconv_tile_fast();
    k->gemm_scratch_ = session_float_scratch(init);
    XONNX_ASSIGN_OR_RETURN(int64_t causal, init.get_int("is_causal", 0));
    XONNX_ASSIGN_OR_RETURN(k->q_heads_, init.get_int("q_num_heads", 0));
    XONNX_ASSIGN_OR_RETURN(k->kv_heads_, init.get_int("kv_num_heads", 0));
    XONNX_ASSIGN_OR_RETURN(float softcap, init.get_float("softcap", 0.0f));
    k->causal_ = causal != 0;
    k->softcap_ = softcap;
    if (init.has_attr("scale")) {
      XONNX_ASSIGN_OR_RETURN(k->scale_, init.get_float("scale", 1.0f));
      k->has_scale_ = true;
    }
    return std::unique_ptr<Kernel>(std::move(k));
  }

 private:
  Status run_fast(KernelContext& ctx, bool& handled) override {
    const Tensor& q = ctx.input(0);
    const Tensor& k = ctx.input(1);
    const Tensor& v = ctx.input(2);
    if (!is_f32(q) || !is_f32(k) || !is_f32(v) || q.rank() != k.rank() || q.rank() != v.rank()) return Status::ok();
    const bool three_d = q.rank() == 3;
    if (!three_d && q.rank() != 4) return Status::ok();
    const int64_t B = q.dim(0);
    int64_t qh, kvh, qs, kvs, hd;
    if (three_d) {
      if (q_heads_ <= 0 || kv_heads_ <= 0 || q.dim(2) % q_heads_ || k.dim(2) % kv_heads_) return Status::ok();
      qh = q_heads_;
      kvh = kv_heads_;
      qs = q.dim(1);
      kvs = k.dim(1);
      hd = q.dim(2) / qh;
      if (k.shape() != Shape{B, kvs, kvh * hd} || v.shape() != k.shape()) return Status::ok();
    } else {
      qh = q.dim(1);
      kvh = k.dim(1);
      qs = q.dim(2);
      kvs = k.dim(2);
      hd = q.dim(3);
      if (k.shape() != Shape{B, kvh, kvs, hd} || v.shape() != k.shape()) return Status::ok();
    }
    if (B <= 0 || qh <= 0 || kvh <= 0 || qh % kvh || hd <= 0) return Status::ok();
    int64_t past = 0;
    if (ctx.has_input(4) || ctx.has_input(5)) {
      const Tensor& pk = ctx.input(4);
      const Tensor& pv = ctx.input(5);
      if (!is_f32(pk) || !is_f32(pv) || pk.rank() != 4 || pk.dim(0) != B || pk.dim(1) != kvh || pk.dim(3) != hd ||
          pv.shape() != pk.shape()) {
        return Status::ok();
      }
      past = pk.dim(2);
    }
    const int64_t T = past + kvs;
    // The mask: [.., qs or 1, T] broadcast over batch and heads; bool becomes 0 / -inf.
    const float* mask = nullptr;
    int64_t mb = 0, mh = 0, mq = 0;  // element strides of batch, head and query dims (0: broadcast)
    if (ctx.has_input(3)) {
      const Tensor& m = ctx.input(3);
      if (m.rank() < 2 || m.rank() > 4 || m.dim(m.rank() - 1) != T) return Status::ok();
      Shape ms(4 - m.rank(), 1);
      ms.insert(ms.end(), m.shape().begin(), m.shape().end());
      const int64_t target[3] = {B, qh, qs};
      for (int i = 0; i < 3; ++i)
        if (ms[i] != 1 && ms[i] != target[i]) return Status::ok();
      mq = ms[2] == 1 ? 0 : T;
      mh = ms[1] == 1 ? 0 : ms[2] * T;
      mb = ms[0] == 1 ? 0 : ms[1] * ms[2] * T;
      if (m.dtype() == DataType::kBool) {
        grow(mask_f_, m.numel());
        const bool* p = m.data<bool>();
        for (int64_t i = 0; i < m.numel(); ++i) mask_f_[i] = p[i] ? 0.0f : -std::numeric_limits<float>::infinity();
        mask = mask_f_.data();
      } else if (is_f32(m)) {
        mask = m.data<float>();
      } else {
        return Status::ok();
      }
    }
    // present = past rows, then the new rows, per (batch, kv head): [B, kvh, T, hd]. Without a
    // past, K and V in that layout already are it: unless present is wanted, the kernels read
    // them in place (an encoder's or a cross-attention's K and V: up to MBs per call). So does
    // the GEMM path for 3-D K and V of several heads, a head's rows kvh * hd apart (it packs
    // them first).
    const Shape present_shape{B, kvh, T, hd};
    const bool wanted[2] = {ctx.num_outputs() > 1 && ctx.output_wanted(1),
                            ctx.num_outputs() > 2 && ctx.output_wanted(2)};
    const bool gemm_path = softcap_ == 0 && qs >= kPrefillMinRows && T > 0 && T <= kPrefillMaxKeys;
    const bool in_place = past == 0 && (!three_d || kvh == 1 || gemm_path) && !wanted[0] && !wanted[1];
    const float* pk = k.data<float>();
    const float* pv = v.data<float>();
    if (!in_place) {
      float* dst[2];
      for (int which = 0; which < 2; ++which) {
        if (wanted[which]) {
          XONNX_ASSIGN_OR_RETURN(Tensor * t,
                                 ctx.allocate_output_uninitialized(1 + which, DataType::kFloat, present_shape));
          dst[which] = t->data<float>();
        } else {
          std::vector<float>& own = which == 0 ? k_own_ : v_own_;
          grow(own, B * kvh * T * hd);
          dst[which] = own.data();
        }
      }
      const float* past_of[2] = {past > 0 ? ctx.input(4).data<float>() : nullptr,
                                 past > 0 ? ctx.input(5).data<float>() : nullptr};
      const float* new_of[2] = {pk, pv};
      // One task per (batch, kv head, K or V): a decode step's cache copy is split over the
      // threads where it is long enough to pay for it.
      pool_->parallel_for(static_cast<size_t>(B * kvh * 2), chunk_for(T * hd), [&](size_t begin, size_t end) {
        for (size_t item = begin; item < end; ++item) {
          const int which = static_cast<int>(item % 2);
          const int64_t bh = static_cast<int64_t>(item / 2), b = bh / kvh, h = bh % kvh;
          float* out = dst[which] + bh * T * hd;
          if (past > 0)
            std::memcpy(out, past_of[which] + bh * past * hd, static_cast<size_t>(past * hd) * sizeof(float));
          for (int64_t s = 0; s < kvs; ++s) {
            const float* row =
                three_d ? new_of[which] + (b * kvs + s) * kvh * hd + h * hd : new_of[which] + (bh * kvs + s) * hd;
            std::memcpy(out + (past + s) * hd, row, static_cast<size_t>(hd) * sizeof(float));
          }
        }
      });
      pk = dst[0];
      pv = dst[1];
    }
    const Shape y_shape = three_d ? Shape{B, qs, qh * hd} : Shape{B, qh, qs, hd};
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DataType::kFloat, y_shape));
    const float scale = has_scale_ ? scale_ : 1.0f / std::sqrt(static_cast<float>(hd));
    const Heads heads{B, qh, kvh, qs, T, hd, past, three_d, three_d && in_place};
    if (gemm_path) {
      prefill(heads, q.data<float>(), pk, pv, {mask, mb, mh, mq}, scale, y->data<float>());
      handled = true;
      return Status::ok();
    }
    const int64_t reps = qh / kvh;
    const int64_t tokens_per_tile = std::max<int64_t>(1, kRowsPerTile / reps);
    const int64_t tiles = (qs + tokens_per_tile - 1) / tokens_per_tile;
    const int64_t m_max = std::min(qs, tokens_per_tile) * reps;
    const int64_t items = B * kvh * tiles;
    // A decode step over a short cache (Whisper's self-attention, 25 keys: 8 us) stays on the
    // caller: waking a worker for it took 45 us.
    const size_t min_chunk = chunk_for(2 * m_max * T * hd);
    scratch_.prepare(*pool_, static_cast<size_t>(items), min_chunk,
                     static_cast<size_t>(m_max * (2 * hd + kKeyBlock + 2)));
    bounds_.prepare(*pool_, static_cast<size_t>(items), min_chunk, static_cast<size_t>(2 * m_max));
    ptrs_.prepare(*pool_, static_cast<size_t>(items), min_chunk, static_cast<size_t>(m_max));
    outs_.prepare(*pool_, static_cast<size_t>(items), min_chunk, static_cast<size_t>(m_max));
    const float* qp = q.data<float>();
    float* yp = y->data<float>();
    const KernelTable& t = *k_;
    const LlmKernelTable& lt = llm_kernels();
    pool_->parallel_for(static_cast<size_t>(items), min_chunk, [&](size_t begin, size_t end) {
      float* qbuf = scratch_.of(begin);
      float* acc = qbuf + m_max * hd;
      float* scores = acc + m_max * hd;
      float* mx = scores + m_max * kKeyBlock;
      float* sum = mx + m_max;
      int64_t* lo = bounds_.of(begin);
      int64_t* hi = lo + m_max;
      const float** brow = ptrs_.of(begin);
      float** orow = outs_.of(begin);
      for (size_t item = begin; item < end; ++item) {
        const int64_t tile = static_cast<int64_t>(item) % tiles;
        const int64_t kh = (static_cast<int64_t>(item) / tiles) % kvh;
        const int64_t b = static_cast<int64_t>(item) / (tiles * kvh);
        const int64_t s0 = tile * tokens_per_tile;
        const int64_t m = std::min(tokens_per_tile, qs - s0) * reps;
        for (int64_t i = 0; i < m; ++i) {
          const int64_t s = s0 + i / reps, h = kh * reps + i % reps;
          const int64_t at = heads.row(b, h, s);
          std::memcpy(qbuf + i * hd, qp + at, static_cast<size_t>(hd) * sizeof(float));
          orow[i] = yp + at;
          lo[i] = 0;
          hi[i] = causal_ ? std::min(T, s + past + 1) : T;
          brow[i] = mask ? mask + b * mb + h * mh + s * mq : nullptr;
        }
        AttnTile tl;
        tl.m = m;
        tl.d = hd;
        tl.q = qbuf;
        tl.k = pk + (b * kvh + kh) * T * hd;
        tl.v = pv + (b * kvh + kh) * T * hd;
        tl.ld = hd;
        tl.lo = lo;
        tl.hi = hi;
        tl.bias = mask ? brow : nullptr;
        tl.scale = scale;
        tl.softcap = softcap_;
        tl.k_begin = 0;
        tl.k_end = T;
        AttnState st{acc, mx, sum, scores};
        st.reset(m, hd);
        attend(t, lt, tl, st);
        finish_rows(m, hd, st, nullptr, orow);
      }
    });
    handled = true;
    return Status::ok();
  }

  struct Heads {
    int64_t B, qh, kvh, qs, T, hd, past;
    bool three_d;     // Q and Y [B, S, heads * hd], else [B, heads, S, hd]
    bool kv_three_d;  // K and V [B, T, kvh * hd] (read in place), else [B, kvh, T, hd]
    // Query row s of head h of batch b (Q and Y alike), and the distance between rows.
    int64_t row(int64_t b, int64_t h, int64_t s) const {
      return three_d ? (b * qs + s) * qh * hd + h * hd : ((b * qh + h) * qs + s) * hd;
    }
    int64_t ld() const { return three_d ? qh * hd : hd; }
    // The first K / V row of kv head h of batch b, and the distance between its rows.
    int64_t kv_head(int64_t b, int64_t h) const {
      return kv_three_d ? b * T * kvh * hd + h * hd : (b * kvh + h) * T * hd;
    }
    int64_t kv_ld() const { return kv_three_d ? kvh * hd : hd; }
  };
  struct Mask {
    const float* values;     // nullptr: none
    int64_t batch, head, q;  // element strides (0: broadcast)
  };

  // The GEMM path. A task takes one query head's blocks of rows, or a share of them when the
  // heads are fewer than twice the threads: it packs the head's K^T (times the scale) and V into
  // the table's panels, then per block S = Q K^T, plus the mask, softmax over each whole row
  // (every key at once: no running maximum to rescale by), Y = S V. Packed K / V and the scores
  // stay in cache instead of going through memory between three ops.
  void prefill(const Heads& a, const float* q, const float* k, const float* v, const Mask& mask, float scale,
               float* y) {
    const KernelTable& t = *k_;
    const int64_t nr = t.nr, T = a.T, hd = a.hd, reps = a.qh / a.kvh;
    const int64_t k_panels = (T + nr - 1) / nr, v_panels = (hd + nr - 1) / nr;
    const int64_t k_floats = k_panels * hd * nr, v_floats = v_panels * T * nr;
    // Blocks of equal rows, a multiple of the tiles' rows, at most ~kScoreFloats scores each.
    const int64_t tile_rows = tile_ ? kFconvRows : t.mr;
    const int64_t most = std::max(tile_rows, std::min<int64_t>(kScoreFloats / T, 64) / tile_rows * tile_rows);
    const int64_t even = (a.qs + (a.qs + most - 1) / most - 1) / ((a.qs + most - 1) / most);
    const int64_t rows = (even + tile_rows - 1) / tile_rows * tile_rows;
    const int64_t blocks = (a.qs + rows - 1) / rows, heads = a.B * a.qh;
    const int64_t shares = std::min(blocks, (2 * pool_->num_threads() + heads - 1) / heads);
    const int64_t items = heads * shares;
    ChunkScratch<float>& scratch = *gemm_scratch_;
    scratch.prepare(*pool_, static_cast<size_t>(items), 1, static_cast<size_t>(k_floats + v_floats + rows * T + rows));
    pool_->parallel_for(static_cast<size_t>(items), 1, [&](size_t begin, size_t end) {
      float* kp = scratch.of(begin);
      float* vp = kp + k_floats;
      float* s = vp + v_floats;
      float* inv = s + rows * T;  // per row: 1 / its sum of exponentials
      for (size_t item = begin; item < end; ++item) {
        const int64_t share = static_cast<int64_t>(item) % shares, h = static_cast<int64_t>(item) / shares % a.qh;
        const int64_t b = static_cast<int64_t>(item) / (shares * a.qh);
        const int64_t kv0 = a.kv_head(b, h / reps), ld = a.kv_ld();
        const float* kh = k + kv0;
        for (int64_t p = 0; p < k_panels; ++p) {
          const int64_t j0 = p * nr, n = std::min(nr, T - j0);
          float* panel = kp + p * hd * nr;
          if (n < nr) std::fill(panel, panel + hd * nr, 0.0f);
          t.transpose_2d(kh + j0 * ld, ld, panel, nr, n, hd);
          t.binary(BinaryOp::kMul, false, panel, &scale, true, panel, hd * nr, 1);
        }
        const float* vh = v + kv0;
        for (int64_t p = 0; p < v_panels; ++p) t.pack_b(vh + p * nr, ld, T, std::min(nr, hd - p * nr), vp + p * T * nr);
        for (int64_t block = share * blocks / shares; block < (share + 1) * blocks / shares; ++block) {
          const int64_t s0 = block * rows, m = std::min(rows, a.qs - s0);
          for (int64_t p = 0; p < k_panels; ++p)
            product(m, hd, q + a.row(b, h, s0), a.ld(), kp + p * hd * nr, std::min(nr, T - p * nr), s + p * nr, T);
          for (int64_t i = 0; i < m; ++i) {
            float* row = s + i * T;
            if (mask.values) {
              const float* mrow = mask.values + b * mask.batch + h * mask.head + (s0 + i) * mask.q;
              t.binary(BinaryOp::kAdd, false, row, mrow, false, row, T, 1);
            }
            const int64_t seen = causal_ ? std::min(T, s0 + i + a.past + 1) : T;
            inv[i] = 1.0f / t.exp_shifted_row(row, row, seen);
            std::fill(row + seen, row + T, 0.0f);
          }
          // Y = exp(S - max) V, each row divided by its sum afterwards: d values, not T.
          float* out = y + a.row(b, h, s0);
          for (int64_t p = 0; p < v_panels; ++p)
            product(m, T, s, T, vp + p * T * nr, std::min(nr, hd - p * nr), out + p * nr, a.ld());
          for (int64_t i = 0; i < m; ++i) {
            float* row = out + i * a.ld();
            t.binary(BinaryOp::kMul, false, row, inv + i, true, row, hd, 1);
          }
        }
      }
    });
  }

  // C [m, ncols] = A [m, K] (rows lda apart) times a packed panel [K][nr]: on the convolution's
  // 12 x 32 tiles where the CPU has them (24 accumulators where gemm_panel's 8-row tiles keep 16).
  void product(int64_t m, int64_t K, const float* a, int64_t lda, const float* panel, int64_t ncols, float* c,
               int64_t ldc) const {
    if (!tile_) {
      k_->gemm_panel(m, K, a, lda, panel, ncols, c, ldc);
      return;
    }
    alignas(64) static const float kZeroBias[kFconvCols] = {};
    std::array<const float*, kFconvRows> rows;
    FconvTile ft;
    ft.a = rows.data();
    ft.panel = panel;
    ft.bias = kZeroBias;
    ft.taps = 1;
    ft.c = K;
    ft.cols = ncols;
    ft.ldo = ldc;
    ft.lo = -std::numeric_limits<float>::infinity();
    ft.hi = std::numeric_limits<float>::infinity();
    for (int64_t r0 = 0; r0 < m; r0 += kFconvRows) {
      for (int64_t i = 0; i < kFconvRows; ++i) rows[static_cast<size_t>(i)] = a + std::min(r0 + i, m - 1) * lda;
      ft.rows = std::min(kFconvRows, m - r0);
      ft.out = c + r0 * ldc;
      tile_(ft);
    }
  }

  template <typename T>
  static void grow(std::vector<T>& v, int64_t n) {
    if (v.size() < static_cast<size_t>(n)) v.resize(static_cast<size_t>(n));
  }

  void release_scratch() override {
    std::vector<float>().swap(mask_f_);
    std::vector<float>().swap(k_own_);
    std::vector<float>().swap(v_own_);
    scratch_.release();
    gemm_scratch_->release();
    bounds_.release();
    ptrs_.release();
    outs_.release();
  }

  bool causal_ = false;
  bool has_scale_ = false;
  float scale_ = 1.0f;
  float softcap_ = 0.0f;
  int64_t q_heads_ = 0, kv_heads_ = 0;
  std::vector<float> mask_f_, k_own_, v_own_;
  ChunkScratch<float> scratch_;  // per item: query rows, accumulators, scores, max, sum
  // The GEMM path's, per task: packed K and V, scores, 1 / sums (the session's: one run at a time).
  std::shared_ptr<ChunkScratch<float>> gemm_scratch_;
  ChunkScratch<int64_t> bounds_;     // per item: visible key range of each row
  ChunkScratch<const float*> ptrs_;  // per item: mask row of each query row
  ChunkScratch<float*> outs_;        // per item: output row of each query row
  const KernelTable* k_ = &kernels();
  FconvTileFn tile_ = nullptr;  // the GEMM path's tiles where the CPU has them (else gemm_panel)
};

}  // namespace

void register_opt_attention_onnx(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "Attention", 23, kLatestVersion, AttentionKernel::create, Backend::kOptimized);
}

}  // namespace opt
}  // namespace xonnx
