// Mutation smoke-fuzzing of the loader and executor: corrupted model bytes must load and run,
// or fail with a Status; never crash, hang or read out of bounds (run this binary under the
// `debug` preset's ASan/UBSan for the full check). Deterministic: fixed seeds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "runtime/exec/session.h"

namespace xonnx {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool has_loop(const Graph& g) {
  for (const Node& n : g.nodes) {
    if (n.op_type == "Loop" || n.op_type == "Scan") return true;
    for (const Attribute& a : n.attributes) {
      if (a.g && has_loop(*a.g)) return true;
    }
  }
  return false;
}

// Runs the session on zero inputs when every input shape is fixed and small.
void try_run(Session& s) {
  if (has_loop(s.model().graph)) return;  // a corrupted trip count may legitimately run long
  std::vector<Value> inputs;
  for (const ValueInfo& info : s.inputs()) {
    if (info.type.kind != TypeInfo::Kind::kTensor || !info.type.has_shape) return;
    Shape shape;
    for (const Dim& d : info.type.dims) {
      if (!d.known() || d.value > 4096) return;
      shape.push_back(d.value);
    }
    auto t = Tensor::allocate(info.type.elem_type, shape);
    if (!t.is_ok() || t->numel() > (1 << 20)) return;
    inputs.push_back(Value(std::move(t).value()));
  }
  (void)s.run(inputs);  // any Status is fine; crashing is not
}

// XONNX_FUZZ_SCALE=N multiplies the iterations (a longer local run; CI uses 1).
int scaled(int iterations) {
  const char* env = std::getenv("XONNX_FUZZ_SCALE");
  const int scale = env ? std::max(1, std::atoi(env)) : 1;
  return iterations * scale;
}

void fuzz(const std::string& path, int iterations, uint32_t seed) {
  iterations = scaled(iterations);
  const std::string original = read_file(path);
  ASSERT_FALSE(original.empty()) << path;
  std::mt19937 rng(seed);
  SessionOptions options;
  options.load.max_tensor_bytes = 64 << 20;  // corrupted dims must not allocate gigabytes
  int loaded = 0;
  for (int i = 0; i < iterations; ++i) {
    std::string bytes = original;
    const int kind = static_cast<int>(rng() % 4);
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !bytes.empty(); ++e) {
      const size_t pos = rng() % bytes.size();
      switch (kind) {
        case 0: bytes[pos] = static_cast<char>(rng()); break;               // random byte
        case 1: bytes[pos] ^= static_cast<char>(1u << (rng() % 8)); break;  // bit flip
        case 2: bytes.resize(pos); break;                                   // truncation
        default: bytes[pos] = static_cast<char>(0xff); break;               // huge varints
      }
    }
    auto s = Session::create_from_memory(bytes.data(), bytes.size(), options);
    if (!s.is_ok()) {
      EXPECT_FALSE(s.status().message().empty());
      continue;
    }
    ++loaded;
    try_run(**s);
  }
  ::testing::Test::RecordProperty("loaded", loaded);
}

const std::string kModels = XONNX_TEST_MODELS_DIR;

TEST(FuzzLoader, Mlp) { fuzz(kModels + "/mlp/model.onnx", 400, 1); }
TEST(FuzzLoader, IfModel) { fuzz(kModels + "/if_model/model.onnx", 400, 2); }
TEST(FuzzLoader, LocalFunctions) { fuzz(kModels + "/local_functions/model.onnx", 300, 3); }
TEST(FuzzLoader, TransformerEncoder) { fuzz(kModels + "/transformer_encoder/model.onnx", 200, 4); }

}  // namespace
}  // namespace xonnx
