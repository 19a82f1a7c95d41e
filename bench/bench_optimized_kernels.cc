// Google Benchmark: each optimized kernel (runtime/ops/optimized) against its reference twin
// at the shapes of the transformer encoder (d=256, seq 128, 4 heads) and the GPT decode step
// (d=384, 6 heads, 128 cached tokens), as one-node models through a real Session.
// Run: build/bin/xonnx_bench_optimized [--benchmark_filter=MatMul]
// First argument of every benchmark: 0 = reference kernel, 1 = optimized kernel (XNNPACK
// disabled in both), 2 = XNNPACK (optimized kernels off; only where XNNPACK has the op);
// second: threads.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <utility>

#include "runtime/exec/session.h"
#include "runtime/ops/optimized/opt_util.h"
#include "runtime/passes/pass_util.h"
#include "runtime/ops/optimized/qdwconv.h"
#include "runtime/ops/optimized/conv_winograd.h"
#include "runtime/ops/optimized/fdwconv.h"

namespace xonnx {
namespace {

Tensor random_tensor(const Shape& shape, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  auto t = Tensor::allocate(DataType::kFloat, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uni(lo, hi);
  for (int64_t i = 0; i < t->numel(); ++i) t->data<float>()[i] = uni(rng);
  return std::move(t).value();
}

// One node over inputs x0..xn (from `first_const` on as initializers); `impl` as above.
std::unique_ptr<Session> one_node(const std::string& op, const std::vector<Tensor>& ins, size_t first_const,
                                  std::vector<Attribute> attrs, int64_t impl, int threads, int64_t opset) {
  Model m;
  m.ir_version = 8;
  m.opset_imports[""] = opset;
  Node n;
  n.op_type = op;
  for (size_t i = 0; i < ins.size(); ++i) {
    n.inputs.push_back("x" + std::to_string(i));
    if (i >= first_const)
      m.graph.initializers.push_back({"x" + std::to_string(i), ins[i]});
    else
      m.graph.inputs.push_back({"x" + std::to_string(i), {}});
  }
  n.outputs = {"y"};
  n.attributes = std::move(attrs);
  m.graph.outputs.push_back({"y", {}});
  m.graph.nodes.push_back(std::move(n));
  SessionOptions options;
  options.disable_xnnpack = impl != 2;
  options.num_threads = threads;
  opt::set_enabled(impl == 1);
  auto s = std::move(Session::create_from_model(std::move(m), options)).value();
  opt::set_enabled(true);
  return s;
}

void run(benchmark::State& state, const std::string& op, std::vector<Tensor> ins, std::vector<Attribute> attrs,
         double work, int64_t opset = 17, size_t first_const = SIZE_MAX) {
  const int64_t impl = state.range(0);
  auto s = one_node(op, ins, first_const, std::move(attrs), impl, static_cast<int>(state.range(1)), opset);
  std::vector<Value> in(ins.begin(), ins.begin() + static_cast<int64_t>(std::min(first_const, ins.size())));
  for (auto _ : state) {
    auto out = s->run(in);
    if (!out.is_ok()) {
      state.SkipWithError(out.status().message().c_str());
      return;
    }
    benchmark::DoNotOptimize(out);
  }
  state.SetLabel(impl == 1 ? std::string("optimized/") + opt::kernels().isa : impl == 2 ? "xnnpack" : "reference");
  state.counters["Gops"] =
      benchmark::Counter(work, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

void impls(benchmark::internal::Benchmark* b) {
  for (int64_t impl : {0, 1})
    for (int64_t threads : {1, 2}) b->Args({impl, threads});
  b->Unit(benchmark::kMicrosecond);
}

void impls_and_xnnpack(benchmark::internal::Benchmark* b) {
  for (int64_t impl : {0, 1, 2})
    for (int64_t threads : {1, 2}) b->Args({impl, threads});
  b->Unit(benchmark::kMicrosecond);
}

void BM_MatMul_QKt(benchmark::State& st) {
  run(st, "MatMul", {random_tensor({1, 4, 128, 64}, 1), random_tensor({1, 4, 64, 128}, 2)}, {},
      2.0 * 4 * 128 * 128 * 64);
}
BENCHMARK(BM_MatMul_QKt)->Apply(impls);

void BM_MatMul_AV(benchmark::State& st) {
  run(st, "MatMul", {random_tensor({1, 4, 128, 128}, 1), random_tensor({1, 4, 128, 64}, 2)}, {},
      2.0 * 4 * 128 * 128 * 64);
}
BENCHMARK(BM_MatMul_AV)->Apply(impls);

void BM_MatMul_Decode(benchmark::State& st) {
  run(st, "MatMul", {random_tensor({1, 6, 1, 64}, 1), random_tensor({1, 6, 64, 128}, 2)}, {}, 2.0 * 6 * 64 * 128);
}
BENCHMARK(BM_MatMul_Decode)->Apply(impls);

void BM_MatMul_FFN(benchmark::State& st) {  // a weight-shaped GEMM with a runtime B
  run(st, "MatMul", {random_tensor({128, 256}, 1), random_tensor({256, 1024}, 2)}, {}, 2.0 * 128 * 256 * 1024);
}
BENCHMARK(BM_MatMul_FFN)->Apply(impls);

void BM_MatMul_ConstB(benchmark::State& st) {  // the encoder's in_proj with its constant weight
  run(st, "MatMul", {random_tensor({128, 256}, 1), random_tensor({256, 768}, 2)}, {}, 2.0 * 128 * 256 * 768, 17, 1);
}
BENCHMARK(BM_MatMul_ConstB)->Apply(impls_and_xnnpack);

// ViT-S/16's attention (6 heads, 197 tokens, head size 64) as the fused ONNX Attention the
// session's fuse-attention pass makes, in torch's [B * heads, S, d] form: the GEMM path.
void BM_Attention_Encoder(benchmark::State& st) {
  run(st, "Attention", {random_tensor({6, 197, 64}, 1), random_tensor({6, 197, 64}, 2), random_tensor({6, 197, 64}, 3)},
      {int_attribute("q_num_heads", 1), int_attribute("kv_num_heads", 1), float_attribute("scale", 0.125f)},
      2.0 * 2 * 6 * 197 * 197 * 64, 23);
}
BENCHMARK(BM_Attention_Encoder)->Apply(impls);

void BM_LayerNorm(benchmark::State& st) {
  run(st, "LayerNormalization", {random_tensor({1, 128, 256}, 1), random_tensor({256}, 2), random_tensor({256}, 3)}, {},
      128.0 * 256);
}
BENCHMARK(BM_LayerNorm)->Apply(impls);

void BM_Erf(benchmark::State& st) { run(st, "Erf", {random_tensor({1, 128, 1024}, 1, -3, 3)}, {}, 128.0 * 1024); }
BENCHMARK(BM_Erf)->Apply(impls);

void BM_Gelu(benchmark::State& st) { run(st, "Gelu", {random_tensor({1, 128, 1024}, 1, -3, 3)}, {}, 128.0 * 1024, 20); }
BENCHMARK(BM_Gelu)->Apply(impls);

// x * sigmoid(x) over 32 K values (in L1 / L2): EfficientNet's fused activation.
void BM_Swish(benchmark::State& st) { run(st, "Swish", {random_tensor({32, 1024}, 1, -6, 6)}, {}, 32.0 * 1024, 24); }
BENCHMARK(BM_Swish)->Apply(impls);

void BM_Softmax(benchmark::State& st) {
  run(st, "Softmax", {random_tensor({4, 128, 128}, 1, -5, 5)}, {}, 4.0 * 128 * 128);
}
BENCHMARK(BM_Softmax)->Apply(impls_and_xnnpack);

void BM_Transpose_0213(benchmark::State& st) {
  run(st, "Transpose", {random_tensor({1, 128, 6, 64}, 1)}, {ints_attribute("perm", {0, 2, 1, 3})}, 128.0 * 384);
}
BENCHMARK(BM_Transpose_0213)->Apply(impls);

void BM_Transpose_KT(benchmark::State& st) {  // present_key [1,6,128,64] -> [1,6,64,128]
  run(st, "Transpose", {random_tensor({1, 6, 128, 64}, 1)}, {ints_attribute("perm", {0, 1, 3, 2})}, 6.0 * 128 * 64);
}
BENCHMARK(BM_Transpose_KT)->Apply(impls);

void BM_Transpose_120(benchmark::State& st) {  // encoder keys [128,4,64] -> [4,64,128]
  run(st, "Transpose", {random_tensor({128, 4, 64}, 1)}, {ints_attribute("perm", {1, 2, 0})}, 128.0 * 256);
}
BENCHMARK(BM_Transpose_120)->Apply(impls);

void BM_ReduceMean(benchmark::State& st) {
  run(st, "ReduceMean", {random_tensor({1, 128, 256}, 1)}, {ints_attribute("axes", {1})}, 128.0 * 256);
}
BENCHMARK(BM_ReduceMean)->Apply(impls);

// ---- 4-bit MatMulNBits GEMV (the int4 decoder's decode step) against the float MatMul of the
// same shape with a constant weight. Args: impl (0 reference, 1 optimized, 2 XNNPACK: float
// only), threads. Random codes and scales: timing does not depend on the values.
std::unique_ptr<Session> nbits_session(int64_t K, int64_t N, int64_t bs, int64_t impl, int threads) {
  const int64_t blocks = (K + bs - 1) / bs;
  auto b = std::move(Tensor::allocate(DataType::kUint8, {N, blocks, bs / 2})).value();
  std::mt19937 rng(7);
  for (int64_t i = 0; i < b.numel(); ++i) b.data<uint8_t>()[i] = static_cast<uint8_t>(rng());
  Model m;
  m.ir_version = 8;
  m.opset_imports[""] = 17;
  m.opset_imports["com.microsoft"] = 1;
  Node n;
  n.op_type = "MatMulNBits";
  n.domain = "com.microsoft";
  n.inputs = {"a", "b", "scales"};
  n.outputs = {"y"};
  for (auto [name, v] : {std::pair<const char*, int64_t>{"K", K}, {"N", N}, {"block_size", bs}, {"bits", 4}}) {
    Attribute a;
    a.name = name;
    a.type = AttrType::kInt;
    a.i = v;
    n.attributes.push_back(a);
  }
  m.graph.inputs.push_back({"a", {}});
  m.graph.initializers.push_back({"b", b});
  m.graph.initializers.push_back({"scales", random_tensor({N * blocks}, 8, 0.01f, 0.02f)});
  m.graph.outputs.push_back({"y", {}});
  m.graph.nodes.push_back(std::move(n));
  SessionOptions options;
  options.disable_xnnpack = true;
  options.num_threads = threads;
  opt::set_enabled(impl == 1);
  auto s = std::move(Session::create_from_model(std::move(m), options)).value();
  opt::set_enabled(true);
  return s;
}

void run_nbits(benchmark::State& state, int64_t K, int64_t N, int64_t M = 1) {
  const int64_t impl = state.range(0);
  auto s = nbits_session(K, N, 32, impl, static_cast<int>(state.range(1)));
  std::vector<Value> in = {random_tensor({M, K}, 1)};
  for (auto _ : state) {
    auto out = s->run(in);
    if (!out.is_ok()) {
      state.SkipWithError(out.status().message().c_str());
      return;
    }
    benchmark::DoNotOptimize(out);
  }
  state.SetLabel(impl == 1 ? std::string("optimized/") + opt::kernels().isa : "reference");
  state.counters["Gops"] =
      benchmark::Counter(2.0 * M * K * N, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

void nbits_impls(benchmark::internal::Benchmark* b) {
  for (int64_t impl : {0, 1})
    for (int64_t threads : {1, 2}) b->Args({impl, threads});
  b->Unit(benchmark::kMicrosecond);
}

void BM_MatMulNBits_Gemv_384x1536(benchmark::State& st) { run_nbits(st, 384, 1536); }
BENCHMARK(BM_MatMulNBits_Gemv_384x1536)->Apply(nbits_impls);
void BM_MatMulNBits_Gemv_1536x384(benchmark::State& st) { run_nbits(st, 1536, 384); }
BENCHMARK(BM_MatMulNBits_Gemv_1536x384)->Apply(nbits_impls);
void BM_MatMulNBits_Gemv_384x4096(benchmark::State& st) { run_nbits(st, 384, 4096); }
BENCHMARK(BM_MatMulNBits_Gemv_384x4096)->Apply(nbits_impls);

// Prefill: 128 rows (the panel path).
void BM_MatMulNBits_Gemm_128x384x1536(benchmark::State& st) { run_nbits(st, 384, 1536, 128); }
BENCHMARK(BM_MatMulNBits_Gemm_128x384x1536)->Apply(nbits_impls);

// The float twins: MatMul [M, K] x constant [K, N].
void BM_MatMulF32_Gemm_128x384x1536(benchmark::State& st) {
  run(st, "MatMul", {random_tensor({128, 384}, 1), random_tensor({384, 1536}, 2)}, {}, 2.0 * 128 * 384 * 1536, 17, 1);
}
BENCHMARK(BM_MatMulF32_Gemm_128x384x1536)->Apply(impls_and_xnnpack);
void BM_MatMulF32_Gemv_384x1536(benchmark::State& st) {
  run(st, "MatMul", {random_tensor({1, 384}, 1), random_tensor({384, 1536}, 2)}, {}, 2.0 * 384 * 1536, 17, 1);
}
BENCHMARK(BM_MatMulF32_Gemv_384x1536)->Apply(impls_and_xnnpack);
void BM_MatMulF32_Gemv_1536x384(benchmark::State& st) {
  run(st, "MatMul", {random_tensor({1, 1536}, 1), random_tensor({1536, 384}, 2)}, {}, 2.0 * 1536 * 384, 17, 1);
}
BENCHMARK(BM_MatMulF32_Gemv_1536x384)->Apply(impls_and_xnnpack);
void BM_MatMulF32_Gemv_384x4096(benchmark::State& st) {
  run(st, "MatMul", {random_tensor({1, 384}, 1), random_tensor({384, 4096}, 2)}, {}, 2.0 * 384 * 4096, 17, 1);
}
BENCHMARK(BM_MatMulF32_Gemv_384x4096)->Apply(impls_and_xnnpack);

// ---- int8 depthwise 3x3 rows (qdwconv.h) over a whole MobileNetV2 layer, block by block:
// convert the block of each input row the output row needs, then run it (as the op does,
// without its ring reuse). Args: impl (0 reference twin, 1 AVX-512), input width (square),
// channels, stride. Single thread.
void BM_QdwConv3x3(benchmark::State& state) {
  const bool fast = state.range(0) == 1;
  const int64_t w = state.range(1), c = state.range(2), stride = state.range(3);
  const opt::QdwRowFn row = fast ? opt::qdw_row_fast() : opt::qdw_row_reference;
  const opt::QdwConvertFn convert = fast ? opt::qdw_convert_fast() : opt::qdw_convert_reference;
  if (!row || !convert) {
    state.SkipWithError("no AVX-512 on this CPU");
    return;
  }
  const int64_t blocks = (c + 15) / 16, wp = w + 2, ow = (w - 1) / stride + 1;
  std::vector<uint8_t> in(static_cast<size_t>(w * w * c)), out(static_cast<size_t>(ow * ow * c));
  std::mt19937 rng(3);
  for (uint8_t& v : in) v = static_cast<uint8_t>(rng());
  std::vector<float> weights(static_cast<size_t>(9 * 16)), bias(16, 5.0f), scale(16, 0.001f),
      ring(static_cast<size_t>(3 * wp * 16), 0.0f);
  for (float& v : weights) v = static_cast<float>(static_cast<int>(rng() % 255) - 127);
  const float* rows[3] = {ring.data(), ring.data() + wp * 16, ring.data() + 2 * wp * 16};
  opt::QdwRow p;
  p.rows = rows;
  p.weights = weights.data();
  p.bias = bias.data();
  p.scale = scale.data();
  p.kh = p.kw = 3;
  p.sw = stride;
  p.out_stride = c;
  p.ow = ow;
  for (auto _ : state) {
    for (int64_t oy = 0; oy < ow; ++oy) {
      for (int64_t b = 0; b < blocks; ++b) {
        for (int64_t ky = 0; ky < 3; ++ky) {
          const int64_t iy = std::min(w - 1, std::max<int64_t>(0, oy * stride - 1 + ky));
          convert(in.data() + iy * w * c + b * 16, w, c, std::min<int64_t>(16, c - b * 16), true,
                  ring.data() + ky * wp * 16 + 16);
        }
        p.valid = std::min<int64_t>(16, c - b * 16);
        row(p, out.data() + oy * ow * c + b * 16);
      }
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetLabel(fast ? "avx512" : "reference");
  state.counters["Gops"] = benchmark::Counter(2.0 * 9 * ow * ow * c, benchmark::Counter::kIsIterationInvariantRate,
                                              benchmark::Counter::kIs1000);
}
BENCHMARK(BM_QdwConv3x3)
    ->ArgsProduct({{0, 1}, {112}, {32, 96}, {1, 2}})
    ->ArgsProduct({{0, 1}, {14}, {384}, {1}})
    ->Unit(benchmark::kMicrosecond);

// ---- float32 depthwise k x k rows (fdwconv.h) over a whole layer (MobileNetV2's 3x3, MNASNet's
// 5x5 on 7x7 and 14x14 maps), block by block: pack the block of each input row the output row
// needs, then run it (as the op does, without its ring reuse), or (pack 0) run the rows alone
// on rows packed once. Args: impl (0 reference twin, 1 AVX-512), input width (square),
// channels, stride, k, pack, misalign (floats), channels per group (1: depthwise; 4, 8: the
// grouped rows of ResNeXt-50 32x4d's first stages). Single thread.
void BM_FdwConv(benchmark::State& state) {
  const bool fast = state.range(0) == 1;
  const int64_t w = state.range(1), c = state.range(2), stride = state.range(3), k = state.range(4);
  const bool pack_rows = state.range(5) == 1;  // 0: the rows' kernel only, on rows packed once
  const opt::FdwRowFn row = fast ? opt::fdw_row_fast() : opt::fdw_row_reference;
  const opt::FdwPackFn pack = fast ? opt::fdw_pack_fast() : opt::fdw_pack_reference;
  if (!row || !pack) {
    state.SkipWithError("no AVX-512 on this CPU");
    return;
  }
  const int64_t blocks = (c + 15) / 16, pad = k / 2, wp = w + 2 * pad, ow = (w + 2 * pad - k) / stride + 1;
  AlignedVector<float> in(static_cast<size_t>(w * w * c)), out(static_cast<size_t>(ow * ow * c));
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  for (float& v : in) v = uni(rng);
  // The kernel's buffers are 64-byte aligned (core/aligned_vector.h); misalign 4 shifts the ring
  // and the weights by 16 bytes, as std::vector's were: every vector load then spans two lines.
  const int64_t misalign = state.range(6), group = state.range(7);
  AlignedVector<float> weights_store(static_cast<size_t>(blocks * k * k * group * 16 + misalign)),
      ring_store(static_cast<size_t>(k * wp * 16 + misalign), 0.0f);
  float* const weights = weights_store.data() + misalign;
  float* const ring = ring_store.data() + misalign;
  const std::vector<float> bias(16, 0.5f);
  for (int64_t i = 0; i < blocks * k * k * group * 16; ++i) weights[i] = uni(rng);
  std::vector<const float*> rows(static_cast<size_t>(k));
  for (int64_t ky = 0; ky < k; ++ky) rows[static_cast<size_t>(ky)] = ring + ky * wp * 16;
  const auto pack_row = [&](int64_t ky, int64_t iy, int64_t b) {
    pack(in.data() + iy * w * c + b * 16, w, c, c - b * 16, 1, ring + (ky * wp + pad) * 16, wp * 16, nullptr);
  };
  for (int64_t ky = 0; ky < k; ++ky) pack_row(ky, std::min(w - 1, ky), 0);
  opt::FdwRow p;
  p.rows = rows.data();
  p.bias = bias.data();
  p.kh = p.kw = k;
  p.sw = stride;
  p.out_stride = c;
  p.ow = ow;
  p.lo = 0.0f;
  p.hi = 6.0f;
  p.group = group;
  for (auto _ : state) {
    for (int64_t oy = 0; oy < ow; ++oy) {
      for (int64_t b = 0; b < blocks; ++b) {
        if (pack_rows) {
          for (int64_t ky = 0; ky < k; ++ky)
            pack_row(ky, std::min(w - 1, std::max<int64_t>(0, oy * stride - pad + ky)), b);
        }
        p.valid = std::min<int64_t>(16, c - b * 16);
        p.weights = weights + b * k * k * group * 16;
        row(p, out.data() + oy * ow * c + b * 16);
      }
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetLabel(fast ? "avx512" : "reference");
  state.counters["Gflops"] = benchmark::Counter(
      2.0 * k * k * group * ow * ow * c, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}
BENCHMARK(BM_FdwConv)
    ->ArgsProduct({{0, 1}, {112}, {32, 96}, {1, 2}, {3}, {0, 1}, {0}, {1}})
    ->ArgsProduct({{1}, {14}, {384}, {1}, {3}, {1}, {0, 4}, {1}})
    ->ArgsProduct({{1}, {7, 14}, {1152}, {1}, {5}, {0, 1}, {0, 4}, {1}})
    ->ArgsProduct({{1}, {28}, {120}, {2}, {5}, {0}, {0}, {1}})  // MNASNet's strided 5x5
    ->ArgsProduct({{1}, {56}, {96}, {1}, {7}, {0}, {0}, {1}})   // ConvNeXt-T's first 7x7
    ->ArgsProduct({{0, 1}, {56}, {128}, {1}, {3}, {0, 1}, {0}, {4}})  // ResNeXt-50's layer1 (groups of 4)
    ->ArgsProduct({{1}, {28}, {256}, {1}, {3}, {0, 1}, {0}, {8}})     // and layer2 (groups of 8)
    ->ArgsProduct({{1}, {56}, {256}, {2}, {3}, {0, 1}, {0}, {8}})     // layer2's first, stride 2
    ->Unit(benchmark::kMicrosecond);

// ---- float32 3x3 stride-1 convolution on Winograd F(2x2, 3x3) or F(4x4, 3x3) (conv_winograd.h)
// at resnet18's and vgg11's layer shapes, NHWC, pads 1. Args: input width (square), channels
// (in = out), threads, tile (2 or 4). Gflops count the direct convolution's 2 * 9 * c * m per
// pixel.
void BM_WinogradConv3x3(benchmark::State& state) {
  const int64_t w = state.range(0), c = state.range(1), tile = state.range(3);
  if (!opt::WinogradConvF32::applies(3, 3, 1, 1, 1, 1, c, c)) {
    state.SkipWithError("no AVX-512 on this CPU");
    return;
  }
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  std::vector<float> in(static_cast<size_t>(w * w * c)), out(in.size()), weights(static_cast<size_t>(c * c * 9));
  for (float& v : in) v = uni(rng);
  for (float& v : weights) v = uni(rng);
  const std::vector<float> bias(static_cast<size_t>(c), 0.5f);
  const auto rows_of = [&](int64_t o0, int64_t) { return weights.data() + o0 * c * 9; };
  opt::WinogradConvF32 conv(rows_of, bias.data(), c, c, 0.0f, std::numeric_limits<float>::infinity(), 1, 1, tile);
  ThreadPool pool(static_cast<int>(state.range(2)));
  opt::ChunkScratch<float> scratch;
  for (auto _ : state) {
    if (!conv.run(pool, scratch, in.data(), 1, w, w, {1, 1, 1, 1}, out.data())) state.SkipWithError("non-finite input");
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["Gflops"] = benchmark::Counter(2.0 * 9 * w * w * c * c, benchmark::Counter::kIsIterationInvariantRate,
                                                benchmark::Counter::kIs1000);
}
BENCHMARK(BM_WinogradConv3x3)
    ->ArgsProduct({{56}, {64}, {1, 2}, {2, 4}})
    ->ArgsProduct({{28}, {128, 512}, {1, 2}, {2, 4}})
    ->ArgsProduct({{14}, {256}, {1, 2}, {2, 4}})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace xonnx

BENCHMARK_MAIN();
