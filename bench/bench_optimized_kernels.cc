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
#include <random>

#include "runtime/exec/session.h"
#include "runtime/ops/optimized/opt_util.h"

namespace xonnx {
namespace {

Tensor random_tensor(const Shape& shape, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  auto t = Tensor::allocate(DataType::kFloat, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uni(lo, hi);
  for (int64_t i = 0; i < t->numel(); ++i) t->data<float>()[i] = uni(rng);
  return std::move(t).value();
}

Attribute ints_attr(const std::string& name, std::vector<int64_t> v) {
  Attribute a;
  a.name = name;
  a.type = AttrType::kInts;
  a.ints = std::move(v);
  return a;
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
    if (i >= first_const) m.graph.initializers.push_back({"x" + std::to_string(i), ins[i]});
    else m.graph.inputs.push_back({"x" + std::to_string(i), {}});
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
  state.counters["Gops"] = benchmark::Counter(work, benchmark::Counter::kIsIterationInvariantRate,
                                              benchmark::Counter::kIs1000);
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
  run(st, "MatMul", {random_tensor({1, 4, 128, 64}, 1), random_tensor({1, 4, 64, 128}, 2)}, {}, 2.0 * 4 * 128 * 128 * 64);
}
BENCHMARK(BM_MatMul_QKt)->Apply(impls);

void BM_MatMul_AV(benchmark::State& st) {
  run(st, "MatMul", {random_tensor({1, 4, 128, 128}, 1), random_tensor({1, 4, 128, 64}, 2)}, {}, 2.0 * 4 * 128 * 128 * 64);
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

void BM_LayerNorm(benchmark::State& st) {
  run(st, "LayerNormalization", {random_tensor({1, 128, 256}, 1), random_tensor({256}, 2), random_tensor({256}, 3)},
      {}, 128.0 * 256);
}
BENCHMARK(BM_LayerNorm)->Apply(impls);

void BM_Erf(benchmark::State& st) {
  run(st, "Erf", {random_tensor({1, 128, 1024}, 1, -3, 3)}, {}, 128.0 * 1024);
}
BENCHMARK(BM_Erf)->Apply(impls);

void BM_Gelu(benchmark::State& st) {
  run(st, "Gelu", {random_tensor({1, 128, 1024}, 1, -3, 3)}, {}, 128.0 * 1024, 20);
}
BENCHMARK(BM_Gelu)->Apply(impls);

void BM_Softmax(benchmark::State& st) {
  run(st, "Softmax", {random_tensor({4, 128, 128}, 1, -5, 5)}, {}, 4.0 * 128 * 128);
}
BENCHMARK(BM_Softmax)->Apply(impls_and_xnnpack);

void BM_Transpose_0213(benchmark::State& st) {
  run(st, "Transpose", {random_tensor({1, 128, 6, 64}, 1)}, {ints_attr("perm", {0, 2, 1, 3})}, 128.0 * 384);
}
BENCHMARK(BM_Transpose_0213)->Apply(impls);

void BM_Transpose_KT(benchmark::State& st) {  // present_key [1,6,128,64] -> [1,6,64,128]
  run(st, "Transpose", {random_tensor({1, 6, 128, 64}, 1)}, {ints_attr("perm", {0, 1, 3, 2})}, 6.0 * 128 * 64);
}
BENCHMARK(BM_Transpose_KT)->Apply(impls);

void BM_Transpose_120(benchmark::State& st) {  // encoder keys [128,4,64] -> [4,64,128]
  run(st, "Transpose", {random_tensor({128, 4, 64}, 1)}, {ints_attr("perm", {1, 2, 0})}, 128.0 * 256);
}
BENCHMARK(BM_Transpose_120)->Apply(impls);

void BM_ReduceMean(benchmark::State& st) {
  run(st, "ReduceMean", {random_tensor({1, 128, 256}, 1)}, {ints_attr("axes", {1})}, 128.0 * 256);
}
BENCHMARK(BM_ReduceMean)->Apply(impls);

}  // namespace
}  // namespace xonnx

BENCHMARK_MAIN();
