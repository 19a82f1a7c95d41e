// Weight deduplication. Identical constant initializers (same dtype, shape and bytes: hashed, then
// compared) become one: the first keeps its name, the others' readers are renamed to it (then CSE
// can merge the nodes that read them). Only initializers of at most PassOptions::dedup_max_bytes
// are compared: session creation limits it to small constants (shape arithmetic; large weights
// stay untouched, so mapped files are not paged in), the converter compares all. A 2-D
// initializer equal to the transpose of another (a tied lm_head after the exporter folded the
// Transpose) is replaced by that one when every reader is a MatMul with a 2-D A, which becomes
// Gemm(transB=1); with any other reader the pair stays (a Transpose would run at every step).
#include <cstring>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "runtime/ir/graph_edit.h"
#include "runtime/passes/passes.h"
#include "runtime/passes/shape_inference.h"

namespace xonnx {
namespace passes {

namespace {

constexpr uint64_t kFnvOffset = 1469598103934665603ull;
constexpr uint64_t kFnvPrime = 1099511628211ull;

uint64_t fnv(uint64_t h, const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * kFnvPrime;
  return h;
}

// Bulk bytes 8 at a time (FNV-style multiply plus a rotate so high bits mix down): ~8x faster
// than per-byte FNV on large weights; collisions only cost a byte compare.
uint64_t hash_bytes(uint64_t h, const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ w) * kFnvPrime;
    h ^= h >> 29;
  }
  return fnv(h, p + i, n - i);
}

uint64_t hash_header(DataType dtype, const Shape& shape) {
  uint64_t h = kFnvOffset;
  const int32_t dt = static_cast<int32_t>(dtype);
  h = fnv(h, &dt, sizeof(dt));
  for (int64_t d : shape) h = fnv(h, &d, sizeof(d));
  return h;
}

bool hashable(const Tensor& t) {
  return t.defined() && t.numel() >= 0 && (t.dtype() == DataType::kString || t.raw_data() || t.nbytes() == 0);
}

uint64_t hash_tensor(const Tensor& t) {
  uint64_t h = hash_header(t.dtype(), t.shape());
  if (t.dtype() == DataType::kString) {
    for (int64_t i = 0; i < t.numel(); ++i) {
      const std::string& s = t.string_data()[i];
      const uint64_t len = s.size();
      h = fnv(h, &len, sizeof(len));
      h = fnv(h, s.data(), s.size());
    }
    return h;
  }
  return hash_bytes(h, t.raw_data(), t.nbytes());
}

bool same_tensor(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  if (a.dtype() == DataType::kString) {
    for (int64_t i = 0; i < a.numel(); ++i) {
      if (a.string_data()[i] != b.string_data()[i]) return false;
    }
    return true;
  }
  return a.nbytes() == b.nbytes() && (a.nbytes() == 0 || std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0);
}

size_t tensor_bytes(const Tensor& t) {
  if (t.dtype() != DataType::kString) return t.nbytes();
  size_t n = 0;
  for (int64_t i = 0; i < t.numel(); ++i) n += t.string_data()[i].size();
  return n;
}

// Whole-byte element size of a 2-D tensor we can transpose (0: not transposable here).
size_t element_size(const Tensor& t) {
  if (t.rank() != 2 || t.dtype() == DataType::kString || !t.raw_data() || t.numel() <= 1) return 0;
  const int64_t bytes = dtype_storage_bytes(t.dtype(), 1);
  if (bytes <= 0 || static_cast<size_t>(bytes) * static_cast<size_t>(t.numel()) != t.nbytes()) {
    return 0;
  }
  return static_cast<size_t>(bytes);
}

// True when b (shape [n, m]) equals the transpose of a (shape [m, n]), element bytes compared.
bool is_transpose_of(const Tensor& a, const Tensor& b) {
  const size_t es = element_size(a);
  if (es == 0 || a.dtype() != b.dtype() || b.rank() != 2 || a.dim(0) != b.dim(1) || a.dim(1) != b.dim(0)) {
    return false;
  }
  const auto* pa = static_cast<const char*>(a.raw_data());
  const auto* pb = static_cast<const char*>(b.raw_data());
  const int64_t rows = a.dim(0), cols = a.dim(1);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      if (std::memcmp(pa + (r * cols + c) * es, pb + (c * rows + r) * es, es) != 0) return false;
    }
  }
  return true;
}

// Hash of a's transpose, as hash_tensor would compute it on the transposed tensor. The
// transposed bytes are streamed through a small buffer (whole 8-byte words per chunk, so the
// result equals hashing them in one piece): no copy of the weight is made.
uint64_t hash_transposed(const Tensor& a) {
  const size_t es = element_size(a);
  const auto* p = static_cast<const char*>(a.raw_data());
  const int64_t rows = a.dim(0), cols = a.dim(1);
  uint64_t h = hash_header(a.dtype(), {cols, rows});
  char buffer[4096];
  size_t used = 0;
  for (int64_t c = 0; c < cols; ++c) {
    for (int64_t r = 0; r < rows; ++r) {
      if (used + es > sizeof(buffer)) {
        const size_t whole = used / 8 * 8;
        h = hash_bytes(h, buffer, whole);
        std::memmove(buffer, buffer + whole, used - whole);
        used -= whole;
      }
      std::memcpy(buffer + used, p + (r * cols + c) * es, es);
      used += es;
    }
  }
  return hash_bytes(h, buffer, used);
}

std::string describe_bytes(size_t bytes) { return std::to_string(bytes) + " bytes"; }

// True when node `n` reads `dup` only as the B of a 2-D MatMul that Gemm(transB=1) can replace.
bool gemm_can_read_transposed(const Node& n, const ShapeFacts& facts, const std::string& dup, DataType dtype) {
  const bool gemm_dtype = dtype == DataType::kFloat || dtype == DataType::kFloat16 || dtype == DataType::kDouble;
  const std::vector<Dim>* a_dims = n.inputs.size() == 2 ? facts.dims(n.inputs[0]) : nullptr;
  return n.op_type == "MatMul" && n.domain.empty() && n.inputs.size() == 2 && n.inputs[1] == dup &&
         n.inputs[0] != dup && a_dims && a_dims->size() == 2 && gemm_dtype;
}

bool reads_value(const Node& n, const std::string& name) {
  bool reads = false;
  for (const std::string& in : n.inputs) reads |= in == name;
  for_each_subgraph(n, [&](const Graph& sub) { reads |= outer_scope_reads(sub).count(name) > 0; });
  return reads;
}

// Whether every reader of `dup` can read `kept` through Gemm(transB=1). Any other reader would
// need a Transpose node computed at every run (and its MatMul could no longer pack a constant
// B): GPT-2's lm_head reads a 3-D hidden state, so a file-size win would cost a quarter of the
// decoder step. Such pairs stay two initializers.
bool retie_is_free(const Graph& graph, const ShapeFacts& facts, const std::string& kept, const std::string& dup) {
  const DataType dtype = graph.find_initializer(kept)->tensor.dtype();
  for (const Node& n : graph.nodes) {
    if (reads_value(n, dup) && !gemm_can_read_transposed(n, facts, dup, dtype)) return false;
  }
  return true;
}

// Replaces the initializer `dup` (== kept^T) by `kept`: its readers, all 2-D MatMuls
// (retie_is_free), become Gemm(transB=1).
void retie_transposed(Graph& graph, const ShapeFacts& facts, const std::string& kept, const std::string& dup) {
  const DataType dtype = graph.find_initializer(kept)->tensor.dtype();
  for (Node& n : graph.nodes) {
    if (!gemm_can_read_transposed(n, facts, dup, dtype)) continue;
    n.op_type = "Gemm";
    n.inputs[1] = kept;
    Attribute trans_b;
    trans_b.name = "transB";
    trans_b.type = AttrType::kInt;
    trans_b.i = 1;
    n.attributes.push_back(trans_b);
  }
}

}  // namespace

Result<bool> dedup_weights(Model& model, PassContext& ctx) {
  Graph& graph = model.graph;
  std::set<std::string> protected_names;  // graph inputs/outputs keep their initializers
  for (const ValueInfo& vi : graph.inputs) protected_names.insert(vi.name);
  for (const ValueInfo& vi : graph.outputs) protected_names.insert(vi.name);

  // Checked before anything reads the bytes: a mapped weight above the limit stays unread.
  auto compared = [&](const Tensor& t) { return static_cast<int64_t>(tensor_bytes(t)) <= ctx.options.dedup_max_bytes; };
  std::map<uint64_t, std::vector<size_t>> by_hash;  // hash -> initializer indices kept
  std::vector<uint64_t> hashes(graph.initializers.size(), 0);
  std::set<std::string> removed;
  std::unordered_map<std::string, std::string> renames;  // duplicate -> the initializer kept
  bool changed = false;
  for (size_t i = 0; i < graph.initializers.size(); ++i) {
    const NamedTensor& cur = graph.initializers[i];
    if (protected_names.count(cur.name) || !compared(cur.tensor) || !hashable(cur.tensor)) continue;
    hashes[i] = hash_tensor(cur.tensor);
    std::vector<size_t>& bucket = by_hash[hashes[i]];
    const NamedTensor* original = nullptr;
    for (size_t j : bucket) {
      if (same_tensor(graph.initializers[j].tensor, cur.tensor)) {
        original = &graph.initializers[j];
        break;
      }
    }
    if (!original) {
      bucket.push_back(i);
      continue;
    }
    const size_t bytes = tensor_bytes(cur.tensor);
    ctx.note("merged '" + cur.name + "' into '" + original->name + "' (" + describe_bytes(bytes) + ")");
    ctx.bytes_saved += static_cast<int64_t>(bytes);
    renames[cur.name] = original->name;
    removed.insert(cur.name);
    changed = true;
  }
  if (!renames.empty()) replace_uses(graph, renames);  // one sweep for all duplicates

  // Transposed pairs among the survivors: index hashes of the transposes of 2-D tensors whose
  // transposed shape occurs at all (most weights have no partner: no transposing them).
  std::set<std::tuple<DataType, int64_t, int64_t>> shapes_2d;
  for (const NamedTensor& t : graph.initializers) {
    if (compared(t.tensor) && element_size(t.tensor) != 0) {
      shapes_2d.insert({t.tensor.dtype(), t.tensor.dim(0), t.tensor.dim(1)});
    }
  }
  std::map<uint64_t, std::vector<size_t>> by_transposed_hash;
  for (size_t i = 0; i < graph.initializers.size(); ++i) {
    const NamedTensor& t = graph.initializers[i];
    if (removed.count(t.name) || protected_names.count(t.name) || !compared(t.tensor) || element_size(t.tensor) == 0 ||
        !shapes_2d.count({t.tensor.dtype(), t.tensor.dim(1), t.tensor.dim(0)})) {
      continue;
    }
    by_transposed_hash[hash_transposed(t.tensor)].push_back(i);
  }
  std::vector<std::pair<std::string, std::string>> retie;  // (kept, duplicate)
  std::set<std::string> retied;
  for (size_t i = 0; i < graph.initializers.size(); ++i) {
    const NamedTensor& cur = graph.initializers[i];
    if (removed.count(cur.name) || protected_names.count(cur.name) || !compared(cur.tensor) ||
        element_size(cur.tensor) == 0 || !shapes_2d.count({cur.tensor.dtype(), cur.tensor.dim(1), cur.tensor.dim(0)})) {
      continue;
    }
    auto match = by_transposed_hash.find(hashes[i]);
    if (match == by_transposed_hash.end()) continue;
    for (size_t j : match->second) {
      // Keep the earlier initializer; a square symmetric matrix is its own transpose.
      const NamedTensor& other = graph.initializers[j];
      if (j >= i || retied.count(other.name) || !is_transpose_of(other.tensor, cur.tensor)) {
        continue;
      }
      retie.emplace_back(other.name, cur.name);
      retied.insert(cur.name);
      break;
    }
  }
  if (!retie.empty()) {
    const ShapeFacts facts = infer_shapes(model);
    for (const auto& [kept, dup] : retie) {
      if (!retie_is_free(graph, facts, kept, dup)) {
        ctx.note("kept '" + dup + "' (the transpose of '" + kept + "'): a reader would need a Transpose at every run");
        continue;
      }
      const size_t bytes = tensor_bytes(graph.find_initializer(dup)->tensor);
      ctx.note("merged '" + dup + "' into '" + kept + "' transposed (" + describe_bytes(bytes) + ")");
      ctx.bytes_saved += static_cast<int64_t>(bytes);
      retie_transposed(graph, facts, kept, dup);
      removed.insert(dup);
      changed = true;
    }
  }

  std::vector<NamedTensor> kept;
  for (NamedTensor& t : graph.initializers) {
    if (!removed.count(t.name)) kept.push_back(std::move(t));
  }
  graph.initializers = std::move(kept);
  return changed;
}

}  // namespace passes
}  // namespace xonnx
