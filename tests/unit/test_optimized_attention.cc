// Differential tests of the optimized LLM kernels against their reference twins: flash-style
// GroupQueryAttention (prefill tiles, decode slices of long caches), the attention blocks of
// every ISA table, and (Skip)SimplifiedLayerNormalization, over odd sizes.
#include <algorithm>

#include "runtime/ops/optimized/kernels_llm.h"
#include "tests/unit/test_optimized_common.h"

namespace xonnx {
namespace {

using namespace opttest;

Tensor ints(std::vector<int32_t> v) { return Tensor::from_vector<int32_t>(v, {static_cast<int64_t>(v.size())}); }

struct GqaCase {
  int64_t B = 1, S = 1, N = 4, KV = 2, H = 16;
  int64_t past = 0;    // valid cached tokens (every batch)
  int64_t buffer = 0;  // past buffer length (>= past)
  bool packed = false, rotary = false, bias = false, sink = false;
  std::vector<Attribute> attrs;
};

void gqa_diff(const GqaCase& c, const std::string& what, uint32_t seed = 1) {
  std::vector<In> in(12);
  const int64_t total = c.past + c.S;
  if (c.packed) {
    in[0] = var(rand_tensor({c.B, c.S, (c.N + 2 * c.KV) * c.H}, seed));
  } else {
    in[0] = var(rand_tensor({c.B, c.S, c.N * c.H}, seed));
    in[1] = var(rand_tensor({c.B, c.S, c.KV * c.H}, seed + 1));
    in[2] = var(rand_tensor({c.B, c.S, c.KV * c.H}, seed + 2));
  }
  if (c.buffer > 0) {
    in[3] = var(rand_tensor({c.B, c.KV, c.buffer, c.H}, seed + 3));
    in[4] = var(rand_tensor({c.B, c.KV, c.buffer, c.H}, seed + 4));
  }
  in[5] = var(ints(std::vector<int32_t>(static_cast<size_t>(c.B), static_cast<int32_t>(total - 1))));
  in[6] = var(ints({static_cast<int32_t>(total)}));
  std::vector<Attribute> attrs = c.attrs;
  attrs.push_back(attr_int("num_heads", c.N));
  attrs.push_back(attr_int("kv_num_heads", c.KV));
  if (c.rotary) {
    in[7] = var(rand_tensor({total + 2, c.H / 2}, seed + 5));
    in[8] = var(rand_tensor({total + 2, c.H / 2}, seed + 6));
    attrs.push_back(attr_int("do_rotary", 1));
  }
  if (c.bias) in[10] = var(rand_tensor({1, c.N, c.S, total}, seed + 7));
  if (c.sink) in[11] = var(rand_tensor({c.N}, seed + 8));
  while (!in.back().t.defined()) in.pop_back();
  diff_test(Op("GroupQueryAttention", "com.microsoft", 17, 3), in, attrs, true, what, 1e-4, 1e-5);
}

TEST(OptimizedAttention, GqaPrefillOddShapes) {
  for (int64_t h : {1, 3, 13, 64, 129}) {
    GqaCase c;
    c.S = 13;
    c.H = h;
    gqa_diff(c, "head size " + std::to_string(h));
  }
  for (int64_t s : kSizes) {
    GqaCase c;
    c.S = s;
    c.N = 8;
    c.KV = 2;
    c.H = 16;
    gqa_diff(c, "sequence " + std::to_string(s));
  }
}

TEST(OptimizedAttention, GqaRatiosAndFeatures) {
  for (int64_t kv : {8, 4, 2, 1}) {
    GqaCase c;
    c.S = 70;  // more than one tile of 64 rows at every ratio
    c.N = 8;
    c.KV = kv;
    c.H = 32;
    c.rotary = true;
    gqa_diff(c, "ratio " + std::to_string(8 / kv));
  }
  GqaCase w;
  w.S = 100;
  w.attrs = {attr_int("local_window_size", 7), attr_float("softcap", 1.5f), attr_float("scale", 0.3f)};
  gqa_diff(w, "window + softcap + scale");
  GqaCase p;
  p.S = 9;
  p.packed = true;
  p.rotary = true;
  p.attrs = {attr_int("rotary_interleaved", 1)};
  gqa_diff(p, "packed, interleaved rotary");
  GqaCase b;
  b.S = 5;
  b.bias = true;
  b.sink = true;
  gqa_diff(b, "attention_bias + head_sink");
  GqaCase sm;
  sm.S = 6;
  sm.attrs = {attr_int("smooth_softmax", 1)};
  gqa_diff(sm, "smooth_softmax");
}

TEST(OptimizedAttention, GqaDecodeOverCaches) {
  for (int64_t past : {1, 127, 700}) {  // 700 with one K/V head: slices of the cache that merge
    for (bool shared : {true, false}) {
      GqaCase c;
      c.S = 1;
      c.N = 16;
      c.KV = past == 700 ? 1 : 4;
      c.H = 64;
      c.past = past;
      c.buffer = shared ? past + 40 : past;
      c.rotary = true;
      gqa_diff(c, "past " + std::to_string(past) + (shared ? " in a max-length buffer" : ""));
    }
  }
  GqaCase w;
  w.B = 2;
  w.S = 1;
  w.KV = 1;
  w.past = 600;
  w.buffer = 640;
  w.attrs = {attr_int("local_window_size", 300)};
  w.sink = true;
  gqa_diff(w, "batch 2, window over slices, head_sink");
  GqaCase sub;
  sub.S = 5;
  sub.past = 20;
  sub.buffer = 32;
  gqa_diff(sub, "prompt continuing a cache");
}

TEST(OptimizedAttention, GqaErrorsNameTheInput) {
  GqaCase c;
  c.S = 2;
  std::vector<In> in(7);
  in[0] = var(rand_tensor({1, 2, 64}, 1));
  in[1] = var(rand_tensor({1, 2, 32}, 2));
  in[2] = var(rand_tensor({1, 2, 32}, 3));
  in[5] = var(ints({7}));  // total length 8 > total_sequence_length 2
  in[6] = var(ints({2}));
  for (bool optimized : {false, true}) {
    auto s = make_session(Op("GroupQueryAttention", "com.microsoft", 17, 3), in,
                          {attr_int("num_heads", 4), attr_int("kv_num_heads", 2)}, optimized, 1);
    ASSERT_TRUE(s.is_ok()) << s.status().to_string();
    auto r = (*s)->run({in[0].t, in[1].t, in[2].t, in[5].t, in[6].t});
    ASSERT_FALSE(r.is_ok());
    EXPECT_NE(r.status().to_string().find("seqlens_k[0]"), std::string::npos) << r.status().to_string();
    EXPECT_NE(r.status().to_string().find("n0"), std::string::npos) << r.status().to_string();
  }
}

TEST(OptimizedAttention, OnnxAttentionPastGroupedCausalMasks) {
  const Op op("Attention", "", 23, 3);
  for (int64_t hd : {1, 13, 64}) {
    for (int64_t past : {0, 5, 130}) {
      const int64_t kvs = past ? 1 : 9;
      std::vector<In> in = {var(rand_tensor({2, 8, kvs, hd}, 1)), var(rand_tensor({2, 2, kvs, hd}, 2)),
                            var(rand_tensor({2, 2, kvs, hd}, 3))};
      if (past) {
        in.push_back(In{});
        in.push_back(var(rand_tensor({2, 2, past, hd}, 4)));
        in.push_back(var(rand_tensor({2, 2, past, hd}, 5)));
      }
      diff_test(op, in, {attr_int("is_causal", 1)}, true,
                "4-D hd " + std::to_string(hd) + " past " + std::to_string(past), 1e-4, 1e-5);
    }
  }
  // Without present outputs or a past, 4-D K and V (and 3-D ones of one head) are read in place;
  // on this path (few query rows) 3-D ones of several heads are copied into the kernel's own
  // [B, kv heads, T, hd] buffers.
  const Op y_only("Attention", "", 23, 1);
  diff_test(
      y_only,
      {var(rand_tensor({2, 8, 3, 16}, 1)), var(rand_tensor({2, 2, 9, 16}, 2)), var(rand_tensor({2, 2, 9, 16}, 3))}, {},
      true, "4-D, no present", 1e-4, 1e-5);
  diff_test(y_only, {var(rand_tensor({2, 3, 16}, 1)), var(rand_tensor({2, 9, 16}, 2)), var(rand_tensor({2, 9, 16}, 3))},
            {attr_int("q_num_heads", 1), attr_int("kv_num_heads", 1)}, true, "3-D one head, no present", 1e-4, 1e-5);
  // 3-D inputs, a float mask over [qs, T] and softcap; then a bool mask [B, 1, qs, T].
  std::vector<In> in = {var(rand_tensor({1, 70, 4 * 16}, 6)), var(rand_tensor({1, 70, 2 * 16}, 7)),
                        var(rand_tensor({1, 70, 2 * 16}, 8)), var(rand_tensor({70, 70}, 9))};
  for (const Op& with : {op, y_only})
    diff_test(with, in, {attr_int("q_num_heads", 4), attr_int("kv_num_heads", 2), attr_float("softcap", 0.7f)}, true,
              std::string("3-D, float mask, softcap, ") + (with.num_outputs == 1 ? "no present" : "present"), 1e-4,
              1e-5);
  std::vector<bool> keep(3 * 5);
  for (size_t i = 0; i < keep.size(); ++i) keep[i] = i % 3 != 1;
  std::vector<uint8_t> bytes(keep.begin(), keep.end());
  Tensor mask = Tensor::allocate(DataType::kBool, {1, 1, 3, 5}).value();
  std::memcpy(mask.raw_data(), bytes.data(), bytes.size());
  diff_test(op,
            {var(rand_tensor({1, 2, 3, 8}, 10)), var(rand_tensor({1, 2, 5, 8}, 11)), var(rand_tensor({1, 2, 5, 8}, 12)),
             var(mask)},
            {attr_float("scale", 0.5f)}, true, "bool mask", 1e-4, 1e-5);
  // The qk output goes to the reference kernel.
  diff_test(
      Op("Attention", "", 23, 4),
      {var(rand_tensor({1, 2, 3, 8}, 10)), var(rand_tensor({1, 2, 5, 8}, 11)), var(rand_tensor({1, 2, 5, 8}, 12))}, {},
      false, "qk output");
}

TEST(OptimizedAttention, OnnxAttentionManyQueryRowsTakeTheGemmPath) {
  // At least 16 query rows per head: K^T and V packed per head, blocks of rows through the GEMM
  // panels (attention_onnx.cc, prefill); head sizes across the panel width, keys in partial
  // panels, grouped heads, causal with and without a past, masks broadcast every way.
  const Op op("Attention", "", 23, 1);
  for (int64_t hd : {1, 13, 64, 70}) {
    for (int64_t past : {0, 7}) {
      const int64_t qs = 40, T = qs + past;
      std::vector<In> in = {var(rand_tensor({2, 4, qs, hd}, 1)), var(rand_tensor({2, 2, qs, hd}, 2)),
                            var(rand_tensor({2, 2, qs, hd}, 3)), var(rand_tensor({2, 1, qs, T}, 4))};
      if (past) {
        in.push_back(var(rand_tensor({2, 2, past, hd}, 5)));
        in.push_back(var(rand_tensor({2, 2, past, hd}, 6)));
      }
      const std::string what = "hd " + std::to_string(hd) + " past " + std::to_string(past);
      diff_test(op, in, {attr_int("is_causal", 1)}, true, "causal, mask [B, 1, S, T], " + what, 1e-4, 1e-5);
      in[3] = var(rand_tensor({1, 4, 1, T}, 7));
      diff_test(op, in, {attr_float("scale", 0.3f)}, true, "mask [1, H, 1, T], " + what, 1e-4, 1e-5);
    }
  }
  // A torch encoder's 3-D [B * heads, S, d] form (one head each), a [S, T] mask; a long key
  // range (few rows per block); no mask.
  diff_test(op,
            {var(rand_tensor({6, 197, 64}, 8)), var(rand_tensor({6, 197, 64}, 9)), var(rand_tensor({6, 197, 64}, 10)),
             var(rand_tensor({197, 197}, 11))},
            {attr_int("q_num_heads", 1), attr_int("kv_num_heads", 1), attr_float("scale", 0.125f)}, true,
            "3-D, one head each", 1e-4, 1e-5);
  // 3-D K and V of several heads, read in place (a head's rows kv heads * hd apart), grouped
  // query heads, two batches; the rows of nn.MultiheadAttention's 12 heads (fuse-attention's
  // HeadsInRows).
  for (int64_t hd : {13, 64}) {
    diff_test(op,
              {var(rand_tensor({2, 33, 4 * hd}, 18)), var(rand_tensor({2, 45, 2 * hd}, 19)),
               var(rand_tensor({2, 45, 2 * hd}, 20)), var(rand_tensor({2, 1, 33, 45}, 21))},
              {attr_int("q_num_heads", 4), attr_int("kv_num_heads", 2)}, true,
              "3-D grouped heads in place, hd " + std::to_string(hd), 1e-4, 1e-5);
  }
  diff_test(
      op,
      {var(rand_tensor({1, 197, 768}, 22)), var(rand_tensor({1, 197, 768}, 23)), var(rand_tensor({1, 197, 768}, 24))},
      {attr_int("q_num_heads", 12), attr_int("kv_num_heads", 12), attr_float("scale", 0.125f)}, true,
      "3-D, 12 heads of 64", 1e-4, 1e-5);
  diff_test(op,
            {var(rand_tensor({1, 2, 17, 32}, 12)), var(rand_tensor({1, 2, 3000, 32}, 13)),
             var(rand_tensor({1, 2, 3000, 32}, 14))},
            {}, true, "3000 keys", 1e-4, 1e-5);
  // Its scratch (the session's) released by trim_memory between two runs: the same bits.
  const std::vector<In> in = {var(rand_tensor({1, 2, 40, 16}, 15)), var(rand_tensor({1, 2, 40, 16}, 16)),
                              var(rand_tensor({1, 2, 40, 16}, 17))};
  auto s = make_session(op, in, {}, true, 2);
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  const std::vector<Value> given = {Value(in[0].t), Value(in[1].t), Value(in[2].t)};
  auto first = (*s)->run(given);
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  (*s)->trim_memory();
  auto second = (*s)->run(given);
  ASSERT_TRUE(second.is_ok()) << second.status().to_string();
  const Tensor& a = (*first)[0].tensor();
  const Tensor& b = (*second)[0].tensor();
  EXPECT_TRUE(same_bits(std::vector<float>(a.data<float>(), a.data<float>() + a.numel()),
                        std::vector<float>(b.data<float>(), b.data<float>() + b.numel())));
}

TEST(OptimizedAttention, TableBlocksMatchScalarOnEveryIsa) {
  const opt::LlmKernelTable* tables[4];
  const int n_tables = opt::supported_llm_tables(tables, 4);
  for (int64_t d : {1, 3, 13, 16, 127, 128, 129}) {
    for (int64_t m : {1, 3, 4, 5, 13}) {
      const int64_t n = 37, ld = d + 3;
      Tensor q = rand_tensor({m, d}, 11), k = rand_tensor({n, ld}, 12), p = rand_tensor({m, n}, 13);
      std::vector<float> want_s(static_cast<size_t>(m * n)), want_acc(static_cast<size_t>(m * d), 0.5f);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double dot = 0;
          for (int64_t c = 0; c < d; ++c) dot += double(q.data<float>()[i * d + c]) * k.data<float>()[j * ld + c];
          want_s[i * n + j] = static_cast<float>(dot * 0.5);
          for (int64_t c = 0; c < d; ++c)
            want_acc[i * d + c] += p.data<float>()[i * n + j] * k.data<float>()[j * ld + c];
        }
      for (int ti = 0; ti < n_tables; ++ti) {
        const opt::LlmKernelTable& t = *tables[ti];
        std::vector<float> s(static_cast<size_t>(m * n)), acc(static_cast<size_t>(m * d), 0.5f);
        t.attn_scores(q.data<float>(), m, k.data<float>(), ld, n, d, 0.5f, s.data(), n);
        t.attn_accumulate(p.data<float>(), n, m, k.data<float>(), ld, n, d, acc.data());
        for (size_t i = 0; i < s.size(); ++i) ASSERT_NEAR(s[i], want_s[i], 1e-4) << t.isa << " d " << d << " m " << m;
        for (size_t i = 0; i < acc.size(); ++i) ASSERT_NEAR(acc[i], want_acc[i], 1e-4) << t.isa << " d " << d;
      }
    }
  }
}

TEST(OptimizedAttention, SimplifiedNormsOddSizes) {
  for (int64_t d : kSizes) {
    Tensor x = rand_tensor({3, 2, d}, 1), skip = rand_tensor({3, 2, d}, 2), g = rand_tensor({d}, 3),
           b = rand_tensor({d}, 4);
    diff_test(Op("SimplifiedLayerNormalization", "", 17, 2), {var(x), cst(g)}, {attr_float("epsilon", 1e-6f)}, true,
              "simplified d " + std::to_string(d));
    diff_test(Op("SkipSimplifiedLayerNormalization", "com.microsoft", 17, 1), {var(x), var(skip), cst(g), cst(b)}, {},
              true, "skip d " + std::to_string(d));
  }
  // All outputs but mean: output, "", inv_std_var, input_skip_bias_sum via a 4-output op.
  Tensor x = rand_tensor({5, 129}, 5), skip = rand_tensor({5, 129}, 6), g = rand_tensor({129}, 7);
  Op op("SkipSimplifiedLayerNormalization", "com.microsoft", 17, 1);
  diff_test(op, {var(x), var(skip), cst(g)}, {}, true, "2-D without bias");
  // A skip broadcast over the batch goes to the reference kernel.
  Tensor x3 = rand_tensor({2, 3, 8}, 8), s2 = rand_tensor({3, 8}, 9), g8 = rand_tensor({8}, 10);
  diff_test(op, {var(x3), var(s2), cst(g8)}, {}, false, "skip [S, D]");
}

}  // namespace
}  // namespace xonnx
