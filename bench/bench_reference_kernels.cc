// Google Benchmark microbenchmarks of the reference kernels, each run as a one-node model
// through a real Session (so executor overhead is included, as in real models).
// Run: build/bin/xonnx_bench_kernels [--benchmark_filter=Conv]
#include <benchmark/benchmark.h>

#include <random>

#include "runtime/exec/session.h"

namespace xonnx {
namespace {

Tensor random_tensor(const Shape& shape, uint32_t seed) {
  auto t = Tensor::allocate(DataType::kFloat, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  for (int64_t i = 0; i < t->numel(); ++i) t->data<float>()[i] = uni(rng);
  return std::move(t).value();
}

// A model with one node `op` over graph input "x" and constant inputs `weights`.
std::unique_ptr<Session> one_node(const std::string& op, const std::vector<Tensor>& weights,
                                  std::vector<Attribute> attrs = {}) {
  Model m;
  m.ir_version = 8;
  m.opset_imports[""] = 17;
  Node n;
  n.op_type = op;
  n.inputs = {"x"};
  n.outputs = {"y"};
  n.attributes = std::move(attrs);
  m.graph.inputs.push_back({"x", {}});
  for (size_t i = 0; i < weights.size(); ++i) {
    const std::string name = "w" + std::to_string(i);
    n.inputs.push_back(name);
    m.graph.initializers.push_back({name, weights[i]});
  }
  m.graph.outputs.push_back({"y", {}});
  m.graph.nodes.push_back(std::move(n));
  return std::move(Session::create_from_model(std::move(m))).value();
}

void run(benchmark::State& state, Session& session, const Tensor& x, double flops) {
  std::vector<Value> in{Value(x)};
  for (auto _ : state) {
    auto out = session.run(in);
    if (!out.is_ok()) {
      state.SkipWithError(out.status().message().c_str());
      return;
    }
    benchmark::DoNotOptimize(out);
  }
  state.counters["GFLOPS"] =
      benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

void BM_Conv3x3(benchmark::State& state) {
  const int64_t c = state.range(0), hw = state.range(1);
  Attribute pads;
  pads.name = "pads";
  pads.type = AttrType::kInts;
  pads.ints = {1, 1, 1, 1};
  auto s = one_node("Conv", {random_tensor({c, c, 3, 3}, 1)}, {pads});
  run(state, *s, random_tensor({1, c, hw, hw}, 2), 2.0 * c * c * 9 * hw * hw);
}
BENCHMARK(BM_Conv3x3)->Args({16, 56})->Args({64, 56})->Unit(benchmark::kMillisecond);

void BM_MatMul(benchmark::State& state) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  auto s = one_node("MatMul", {random_tensor({k, n}, 1)});
  run(state, *s, random_tensor({m, k}, 2), 2.0 * m * k * n);
}
BENCHMARK(BM_MatMul)->Args({1, 384, 1536})->Args({128, 256, 256})->Unit(benchmark::kMillisecond);

void BM_AddBroadcast(benchmark::State& state) {
  const int64_t n = state.range(0);
  auto s = one_node("Add", {random_tensor({n}, 1)});
  run(state, *s, random_tensor({64, n}, 2), 64.0 * n);
}
BENCHMARK(BM_AddBroadcast)->Arg(127)->Arg(1024)->Unit(benchmark::kMicrosecond);

void BM_Softmax(benchmark::State& state) {
  const int64_t n = state.range(0);
  auto s = one_node("Softmax", {});
  run(state, *s, random_tensor({64, n}, 2), 64.0 * n);
}
BENCHMARK(BM_Softmax)->Arg(128)->Arg(1000)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace xonnx

BENCHMARK_MAIN();
