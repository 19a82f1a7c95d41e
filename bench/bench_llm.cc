// Google Benchmark of the LLM path against the machine's memory bandwidth:
//  - ReadBandwidth: a streaming sum over 1 GiB (far past the caches), the figure the others are
//    measured against;
//  - MatMulNBits (int4, block 32, accuracy_level 4) at a 0.5B model's shapes (K 1024, N 1024 /
//    2816 / 32000): M = 1 (decode) in GB/s of weights read, M = 512 (prefill) in Gop/s;
//  - a decode step (127 cached tokens) and a 512-token prefill of a GenAI-form decoder
//    (tests/llm/genai_decoder.h: d 1024, 16/4 heads, intermediate 2816, vocabulary 32000,
//    random int4 weights) with the KV cache in place.
// Every GB/s figure also comes as a fraction of the streaming-read bandwidth at the same thread
// count ("of_bw"), measured once per process before the first benchmark that needs it.
//
//   build/bin/xonnx_bench_llm [--benchmark_filter=Decode] [--layers N]
//   build/bin/xonnx_bench_llm --write-model OUT.onnx [--layers N]   (the same decoder with the
//       lengths computed from the input shapes and present = past + new, for
//       bench/compare_ort.sh OUT.onnx --shape input_ids=1,1 --shape past_key_values.L.key=1,4,127,64 ...)
//   XONNX_BENCH_PROFILE=1 build/bin/xonnx_bench_llm --benchmark_filter=Decode: per-op profile
//       of one decode step on stderr
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "converter/writer.h"
#include "runtime/exec/session.h"
#include "runtime/core/thread_pool.h"
#include "tests/llm/genai_decoder.h"

namespace xonnx {
namespace {

llmtest::DecoderShape g_shape = [] {
  llmtest::DecoderShape s;
  s.layers = 24;
  s.hidden = 1024;
  s.heads = 16;
  s.kv_heads = 4;
  s.intermediate = 2816;
  s.vocab = 32000;
  s.context = 640;
  return s;
}();

// ---- read bandwidth --------------------------------------------------------------------------

constexpr size_t kStreamBytes = size_t{1} << 30;

const float* stream_buffer() {
  static float* buf = [] {
    auto* p = static_cast<float*>(std::aligned_alloc(64, kStreamBytes));
    for (size_t i = 0; i < kStreamBytes / sizeof(float); ++i) p[i] = static_cast<float>(i & 255);
    return p;
  }();
  return buf;
}

// One pass summing the whole buffer, split over the pool; returns the sum (kept live).
float stream_sum(const ThreadPool& pool) {
  const float* p = stream_buffer();
  const size_t n = kStreamBytes / sizeof(float), chunks = 64;
  float partial[64] = {};
  pool.parallel_for(chunks, 1, [&](size_t begin, size_t end) {
    for (size_t c = begin; c < end; ++c) {
      const float* q = p + c * (n / chunks);
      float s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
      for (size_t i = 0; i < n / chunks; i += 8) {
        s0 += q[i];
        s1 += q[i + 1];
        s2 += q[i + 2];
        s3 += q[i + 3];
        s4 += q[i + 4];
        s5 += q[i + 5];
        s6 += q[i + 6];
        s7 += q[i + 7];
      }
      partial[c] = ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7));
    }
  });
  float s = 0;
  for (float v : partial) s += v;
  return s;
}

// Bytes per second of a streaming read at `threads` threads: the best of a few passes.
double read_bandwidth(int threads) {
  static std::map<int, double> measured;
  auto it = measured.find(threads);
  if (it != measured.end()) return it->second;
  stream_buffer();
  ThreadPool pool(threads);
  double best = 0;
  for (int pass = 0; pass < 5; ++pass) {
    const auto t0 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(stream_sum(pool));
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, kStreamBytes / s);
  }
  pool.rest();
  return measured[threads] = best;
}

void BM_ReadBandwidth(benchmark::State& state) {
  stream_buffer();  // its pages are written once, outside the timing
  ThreadPool pool(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(stream_sum(pool));
  pool.rest();
  state.counters["GB/s"] = benchmark::Counter(
      static_cast<double>(kStreamBytes), benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}
BENCHMARK(BM_ReadBandwidth)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// ---- MatMulNBits ------------------------------------------------------------------------------

std::unique_ptr<Session> nbits_session(int64_t K, int64_t N, int threads) {
  Model m;
  m.ir_version = 8;
  m.opset_imports[""] = 17;
  m.opset_imports["com.microsoft"] = 1;
  const int64_t blocks = K / 32;
  std::vector<uint8_t> w(static_cast<size_t>(N * blocks * 16));
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<uint8_t>(i * 2654435761u >> 13);
  m.graph.initializers.push_back({"w", Tensor::from_vector<uint8_t>(w, {N, blocks, 16})});
  m.graph.initializers.push_back(
      {"s", Tensor::from_vector<float>(std::vector<float>(size_t(N * blocks), 0.01f), {N * blocks})});
  Node n;
  n.op_type = "MatMulNBits";
  n.domain = "com.microsoft";
  n.inputs = {"a", "w", "s"};
  n.outputs = {"y"};
  for (auto [name, v] :
       {std::pair<const char*, int64_t>{"K", K}, {"N", N}, {"block_size", 32}, {"bits", 4}, {"accuracy_level", 4}}) {
    Attribute a;
    a.name = name;
    a.type = AttrType::kInt;
    a.i = v;
    n.attributes.push_back(a);
  }
  m.graph.nodes.push_back(n);
  m.graph.inputs.push_back({"a", {}});
  m.graph.outputs.push_back({"y", {}});
  SessionOptions o;
  o.num_threads = threads;
  return std::move(Session::create_from_model(std::move(m), o)).value();
}

// Args: N, M, threads. Iterations rotate over enough copies of the weights (each its own
// session) to exceed the last-level cache, so few rows (a decode step, a batch of decode
// steps, a short prompt) read their weights from memory as in a model.
void BM_MatMulNBits(benchmark::State& state) {
  const int64_t K = 1024, N = state.range(0), M = state.range(1);
  const int threads = static_cast<int>(state.range(2));
  const double bw = read_bandwidth(threads);
  const double weight_bytes = N * K / 2.0 + N * (K / 32) * 4.0;
  const int copies = M <= 64 ? static_cast<int>(std::max(1.0, 128e6 / weight_bytes)) : 1;
  std::vector<std::unique_ptr<Session>> sessions;
  for (int c = 0; c < copies; ++c) sessions.push_back(nbits_session(K, N, threads));
  std::vector<float> a(static_cast<size_t>(M * K));
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>((i * 7) % 13) / 13.0f - 0.5f;
  std::vector<Value> in = {Value(Tensor::from_vector<float>(a, {M, K}))}, out;
  size_t next = 0;
  for (auto _ : state) {
    Status st = sessions[next]->run(in, out);
    next = (next + 1) % sessions.size();
    if (!st.is_ok()) {
      state.SkipWithError(st.message().c_str());
      return;
    }
  }
  state.counters["GB/s"] =
      benchmark::Counter(weight_bytes, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
  state.counters["Gop/s"] =
      benchmark::Counter(2.0 * M * K * N, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
  state.counters["bw_GB/s"] = bw / 1e9;
}
BENCHMARK(BM_MatMulNBits)
    ->ArgsProduct({{1024, 2816, 32000}, {1}, {1, 2}})
    ->ArgsProduct({{1024, 2816}, {512}, {1, 2}})
    ->ArgsProduct({{2816}, {4, 5, 8, 16, 32, 64}, {1}})  // where the direct path hands over to panels
    ->ArgNames({"N", "M", "threads"})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

// ---- the decoder ------------------------------------------------------------------------------

struct Decoder {
  std::unique_ptr<Session> session;
  std::unique_ptr<llmtest::SharedBufferLoop> loop;
};

Decoder make_decoder(int threads, int64_t max_length) {
  SessionOptions o;
  o.num_threads = threads;
  Decoder d;
  d.session = std::move(Session::create_from_model(llmtest::DecoderBuilder(g_shape).build(), o)).value();
  d.loop = std::make_unique<llmtest::SharedBufferLoop>(*d.session, g_shape, max_length);
  Status st = d.loop->init();
  if (!st.is_ok()) std::fprintf(stderr, "%s\n", st.to_string().c_str());
  return d;
}

// Weight bytes one token reads: int4 codes + scales of every MatMulNBits, norms, one
// embedding row; plus the K/V rows of `cached` tokens.
double bytes_per_token(int64_t cached) {
  const llmtest::DecoderShape& s = g_shape;
  const int64_t H = s.head_size();
  const double per_layer = static_cast<double>(s.hidden) * ((s.heads + 2 * s.kv_heads) * H) +
                           static_cast<double>(s.heads * H) * s.hidden + 3.0 * s.hidden * s.intermediate;
  const double params = per_layer * s.layers + static_cast<double>(s.hidden) * s.vocab;
  const double kv = 2.0 * s.layers * s.kv_heads * H * 4.0 * static_cast<double>(cached);
  return params / 2 + params / 32 * 4 + s.hidden * 4.0 + kv;
}

std::vector<int64_t> prompt(int64_t n) {
  std::vector<int64_t> t(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) t[static_cast<size_t>(i)] = (i * 37 + 11) % g_shape.vocab;
  return t;
}

void print_profile(const Profiler& p) {
  std::map<std::string, std::pair<double, int>> by_op;
  double total = 0;
  for (const auto& e : p.entries()) {
    auto& [us, n] = by_op[e.op_type + " (" + backend_name(e.backend) + ")"];
    us += e.self_us;
    ++n;
    total += e.self_us;
  }
  std::vector<std::pair<double, std::string>> rows;
  for (const auto& [op, v] : by_op) rows.push_back({v.first, op});
  std::sort(rows.rbegin(), rows.rend());
  std::fprintf(stderr, "decode step profile (%.0f us):\n", total);
  for (const auto& [us, op] : rows) {
    std::fprintf(stderr, "  %-48s %8.0f us %5.1f %%  x%d\n", op.c_str(), us, 100.0 * us / total, by_op[op].second);
  }
}

// Args: threads. One token after 127 cached ones.
void BM_DecodeStep(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const double bw = read_bandwidth(threads);
  const int64_t cached = 127;
  Decoder d = make_decoder(threads, cached + 1 + 512);
  Status st = d.loop->step(prompt(cached));
  const std::vector<int64_t> token = {42};
  for (auto _ : state) {
    d.loop->rewind(cached);  // back to 127 cached tokens: the step rewrites position 127 in place
    if (st.is_ok()) st = d.loop->step(token);
    if (!st.is_ok()) {
      state.SkipWithError(st.to_string().c_str());
      return;
    }
  }
  state.counters["tokens/s"] = benchmark::Counter(1.0, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["GB/s"] = benchmark::Counter(
      bytes_per_token(cached + 1), benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
  state.counters["bw_GB/s"] = bw / 1e9;
  if (std::getenv("XONNX_BENCH_PROFILE")) {
    Profiler p;
    d.session->set_profiler(&p);
    d.loop->rewind(cached);
    (void)d.loop->step(token);
    d.session->set_profiler(nullptr);
    print_profile(p);
  }
}
BENCHMARK(BM_DecodeStep)->Arg(1)->Arg(2)->ArgNames({"threads"})->Unit(benchmark::kMillisecond)->UseRealTime();

// Args: threads. A 512-token prompt into an empty cache.
void BM_Prefill512(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  Decoder d = make_decoder(threads, 640);
  const std::vector<int64_t> tokens = prompt(512);
  for (auto _ : state) {
    d.loop->rewind(0);
    Status st = d.loop->step(tokens);
    if (!st.is_ok()) {
      state.SkipWithError(st.to_string().c_str());
      return;
    }
  }
  state.counters["tokens/s"] = benchmark::Counter(512.0, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Prefill512)->Arg(1)->Arg(2)->ArgNames({"threads"})->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace xonnx

int main(int argc, char** argv) {
  std::vector<char*> args;
  const char* write_to = nullptr;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--write-model") == 0 && i + 1 < argc) {
      write_to = argv[++i];
    } else if (std::strcmp(argv[i], "--layers") == 0 && i + 1 < argc) {
      xonnx::g_shape.layers = std::atoi(argv[++i]);
    } else {
      args.push_back(argv[i]);
    }
  }
  if (write_to) {
    xonnx::convert::WriteOptions o;
    o.external_data = true;
    xonnx::llmtest::DecoderShape shape = xonnx::g_shape;
    shape.lengths_from_shapes = true;
    xonnx::Status st = xonnx::convert::write_model(xonnx::llmtest::DecoderBuilder(shape).build(), write_to, o);
    if (!st.is_ok()) {
      std::fprintf(stderr, "%s\n", st.to_string().c_str());
      return 1;
    }
    return 0;
  }
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
