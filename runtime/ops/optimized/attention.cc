// Optimized com.microsoft GroupQueryAttention (float32): the reference kernel's checks and KV
// append (ref/attention_gqa.h), then flash-style attention (attention_core.h) with the query
// heads that share a K/V head processed together, so each cache row is read once per tile.
//  - Prefill: work items are (batch, K/V head, tile of query tokens), over the thread pool.
//  - Decode (one token): items are (batch, K/V head, slice of the cache); when there are fewer
//    heads than threads, long caches are cut into slices whose partial softmax states merge.
// Present buffers that share past's storage (past_present_share_buffer) get the new rows only
// (the executor hands such aliased outputs to GroupQueryAttention: exec/plan.cc).
// qk_output goes to the reference kernel.
#include <algorithm>
#include <vector>

#include "runtime/ops/optimized/attention_core.h"
#include "runtime/ops/optimized/opt_util.h"
#include "runtime/ops/ref/attention_gqa.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace opt {
namespace {

constexpr int64_t kRowsPerTile = 64;       // query rows (tokens x grouped heads) per prefill tile
constexpr int64_t kMinKeysPerSlice = 256;  // a decode slice of the cache is at least this long

class GqaKernel final : public FastKernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    XONNX_ASSIGN_OR_RETURN(gqa::Attrs a, gqa::parse_attrs(init));
    if (a.qk_output != 0) return unsupported("GroupQueryAttention: qk_output runs on the reference kernel");
    auto k = std::unique_ptr<GqaKernel>(new GqaKernel());
    XONNX_RETURN_IF_ERROR(init_own_kernel(*k, init));
    k->a_ = a;
    return std::unique_ptr<Kernel>(std::move(k));
  }

 private:
  Status run_fast(KernelContext& ctx, bool& handled) override {
    XONNX_ASSIGN_OR_RETURN(gqa::Dims d, gqa::check_inputs(ctx, a_));
    if (a_.do_rotary) grow(q_rot_, d.B * d.S * d.N * d.H);
    XONNX_ASSIGN_OR_RETURN(gqa::Present present, gqa::append_kv(ctx, a_, d, a_.do_rotary ? q_rot_.data() : nullptr));
    XONNX_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output_uninitialized(0, DataType::kFloat, {d.B, d.S, d.N * d.H}));
    grow(past_, d.B);
    int64_t keys = 0;  // the longest visible cache: slices cut this, not the buffer
    for (int64_t b = 0; b < d.B; ++b) {
      XONNX_ASSIGN_OR_RETURN(past_[b], gqa::past_length(ctx, d, b));
      keys = std::max(keys, past_[b] + d.S);
    }
    const int64_t reps = d.N / d.KV;
    const int64_t tokens_per_tile = std::max<int64_t>(1, kRowsPerTile / reps);
    const int64_t tiles = (d.S + tokens_per_tile - 1) / tokens_per_tile;
    const int64_t m_max = std::min(d.S, tokens_per_tile) * reps;
    int64_t slices = 1;
    if (d.S == 1) {
      const int64_t heads = d.B * d.KV;
      const int64_t want = (2 * pool_->num_threads() + heads - 1) / heads;
      slices = std::max<int64_t>(1, std::min(want, keys / kMinKeysPerSlice));
    }
    const int64_t groups = d.B * d.KV * tiles;  // each (batch, kv head, tile) finishes on its own
    const int64_t items = groups * slices;
    const int64_t state_size = m_max * d.H + 2 * m_max;
    grow(states_, items * state_size);

    const float* query = ctx.input(gqa::kQuery).data<float>();
    const float* bias = d.bias_b ? ctx.input(gqa::kAttentionBias).data<float>() : nullptr;
    const float* head_sink = ctx.has_input(gqa::kHeadSink) ? ctx.input(gqa::kHeadSink).data<float>() : nullptr;
    const float scale = gqa::scale_of(a_, d);
    const int64_t slice_len = (keys + slices - 1) / slices;
    // Items over a short cache stay on the caller (see attention_onnx.cc); a group's merge and
    // output touch its m_max x H accumulator once per slice.
    const size_t min_chunk = chunk_for(2 * m_max * slice_len * d.H);
    const size_t min_groups = chunk_for(2 * m_max * d.H * slices);
    scratch_.prepare(*pool_, static_cast<size_t>(items), min_chunk, static_cast<size_t>(m_max * (d.H + kKeyBlock)));
    bounds_.prepare(*pool_, static_cast<size_t>(items), min_chunk, static_cast<size_t>(2 * m_max));
    rows_.prepare(*pool_, static_cast<size_t>(items), min_chunk, static_cast<size_t>(m_max));
    sinks_.prepare(*pool_, static_cast<size_t>(groups), min_groups, static_cast<size_t>(m_max));
    outs_.prepare(*pool_, static_cast<size_t>(groups), min_groups, static_cast<size_t>(m_max));
    const KernelTable& t = *k_;
    const LlmKernelTable& lt = llm_kernels();

    // Rows of item `g`'s tile: token s0 + i / reps, head kh * reps + i % reps.
    auto tile_of = [&](int64_t g, int64_t& b, int64_t& kh, int64_t& s0, int64_t& m) {
      const int64_t tile = g % tiles;
      kh = (g / tiles) % d.KV;
      b = g / (tiles * d.KV);
      s0 = tile * tokens_per_tile;
      m = std::min(tokens_per_tile, d.S - s0) * reps;
    };
    auto state_of = [&](int64_t item, int64_t m) {
      float* base = states_.data() + item * state_size;
      return AttnState{base, base + m * d.H, base + m * d.H + m, nullptr};
    };
    pool_->parallel_for(static_cast<size_t>(items), min_chunk, [&](size_t begin, size_t end) {
      float* q = scratch_.of(begin);
      float* scores = q + m_max * d.H;
      int64_t* lo = bounds_.of(begin);
      int64_t* hi = lo + m_max;
      const float** brow = rows_.of(begin);
      for (size_t item = begin; item < end; ++item) {
        const int64_t g = static_cast<int64_t>(item) / slices, slice = static_cast<int64_t>(item) % slices;
        int64_t b, kh, s0, m;
        tile_of(g, b, kh, s0, m);
        for (int64_t i = 0; i < m; ++i) {
          const int64_t s = s0 + i / reps, h = kh * reps + i % reps;
          const float* src = a_.do_rotary ? q_rot_.data() + ((b * d.S + s) * d.N + h) * d.H
                                          : query + (b * d.S + s) * d.q_row + h * d.H;
          std::copy(src, src + d.H, q + i * d.H);
          hi[i] = past_[b] + s + 1;
          lo[i] = a_.local_window > 0 ? std::max<int64_t>(0, hi[i] - a_.local_window) : 0;
          brow[i] = bias ? bias + (((b % d.bias_b) * d.bias_n + h % d.bias_n) * d.S + s) * d.total : nullptr;
        }
        AttnTile tile;
        tile.m = m;
        tile.d = d.H;
        tile.q = q;
        tile.k = present.key->data<float>() + (b * d.KV + kh) * d.present_len * d.H;
        tile.v = present.value->data<float>() + (b * d.KV + kh) * d.present_len * d.H;
        tile.ld = d.H;
        tile.lo = lo;
        tile.hi = hi;
        tile.bias = bias ? brow : nullptr;
        tile.scale = scale;
        tile.softcap = a_.softcap;
        tile.k_begin = slice * slice_len;
        tile.k_end = std::min(keys, tile.k_begin + slice_len);
        AttnState st = state_of(static_cast<int64_t>(item), m);
        st.scores = scores;
        st.reset(m, d.H);
        attend(t, lt, tile, st);
      }
    });
    float* y = out->data<float>();
    pool_->parallel_for(static_cast<size_t>(groups), min_groups, [&](size_t begin, size_t end) {
      float** rows = outs_.of(begin);
      float* sinks = sinks_.of(begin);
      for (size_t g = begin; g < end; ++g) {
        int64_t b, kh, s0, m;
        tile_of(static_cast<int64_t>(g), b, kh, s0, m);
        AttnState st = state_of(static_cast<int64_t>(g) * slices, m);
        for (int64_t sl = 1; sl < slices; ++sl)
          merge_state(m, d.H, st, state_of(static_cast<int64_t>(g) * slices + sl, m));
        for (int64_t i = 0; i < m; ++i) {
          const int64_t s = s0 + i / reps, h = kh * reps + i % reps;
          rows[i] = y + ((b * d.S + s) * d.N + h) * d.H;
          sinks[i] = head_sink ? head_sink[h] : 0.0f;
        }
        finish_rows(m, d.H, st, head_sink || a_.smooth_softmax ? sinks : nullptr, rows);
      }
    });
    handled = true;
    return Status::ok();
  }

  template <typename T>
  static void grow(std::vector<T>& v, int64_t n) {
    if (v.size() < static_cast<size_t>(n)) v.resize(static_cast<size_t>(n));
  }

  // A prefill chunk's rotated queries and states (~2 MiB per layer for 256 tokens at a 0.5B
  // model's shapes) go back while the session is idle.
  void release_scratch() override {
    std::vector<float>().swap(q_rot_);
    std::vector<int64_t>().swap(past_);
    std::vector<float>().swap(states_);
    scratch_.release();
    bounds_.release();
    rows_.release();
    sinks_.release();
    outs_.release();
  }

  gqa::Attrs a_;
  std::vector<float> q_rot_;
  std::vector<int64_t> past_;
  std::vector<float> states_;
  ChunkScratch<float> scratch_;      // per item: gathered query rows, scores
  ChunkScratch<int64_t> bounds_;     // per item: visible key range of each row
  ChunkScratch<const float*> rows_;  // per item: attention_bias row of each query row
  ChunkScratch<float> sinks_;        // per finished group: sink logit of each row
  ChunkScratch<float*> outs_;        // per finished group: output row pointers
  const KernelTable* k_ = &kernels();
};

}  // namespace

void register_opt_attention(OpRegistry& registry) {
  XONNX_REGISTER(registry, "com.microsoft", "GroupQueryAttention", 1, kLatestVersion, GqaKernel::create,
                 Backend::kOptimized);
}

}  // namespace opt
}  // namespace xonnx
