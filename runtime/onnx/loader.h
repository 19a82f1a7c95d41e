// Loads .onnx files into the IR: maps the file, parses it with protobuf-lite, resolves
// external data, converts tensors, inlines model-local functions, and validates the graph.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "runtime/core/limits.h"
#include "runtime/core/status.h"
#include "runtime/core/value.h"
#include "runtime/ir/graph.h"

namespace xonnx {

// Limits that keep a hostile file from exhausting memory or stack. Every limit hit is an
// error naming the limit (and the node, tensor or attribute that hit it); docs/security.md
// lists them with their defaults.
struct LoadOptions {
  // The memory cap in bytes: no single tensor may be larger, the tensors the loader itself
  // allocates (typed data, sparse densification) may not add up to more, and a session caps
  // its intermediate buffers, sequences and inputs by it too. Default: half the physical memory.
  int64_t max_memory_bytes = default_memory_cap();
  // Largest single tensor (initializer, constant, external data or intermediate), in bytes;
  // the smaller of this and max_memory_bytes applies.
  int64_t max_tensor_bytes = std::numeric_limits<int64_t>::max();
  // Nodes in the file: every graph, subgraph and function body together.
  int64_t max_nodes = 1'000'000;
  // Nodes inlining model-local functions copies from their bodies (a small file can expand
  // exponentially: F1 calls F0 twice, F2 calls F1 twice, ...).
  int64_t max_inlined_nodes = 1'000'000;
  // Payload of one non-tensor attribute (string, strings, ints, floats) in bytes.
  int64_t max_attribute_bytes = int64_t{256} << 20;
  // Subgraphs (If/Loop/Scan bodies) nested inside each other, and function calls nested in
  // function bodies.
  int max_nesting_depth = 32;
  // Inline model-local functions into the graph (the runtime needs it; the converter may not).
  bool inline_functions = true;
  // Accept nodes of xonnx's internal domains (com.xonnx.*) in the file. Only for tests that
  // feed a session-time rewrite's output back in: model files never may (the internal ops
  // trust what the rewrites guarantee and would be a memory-safety hole otherwise).
  bool allow_internal_ops = false;

  // The per-tensor cap: min(max_tensor_bytes, max_memory_bytes).
  int64_t tensor_cap() const { return max_tensor_bytes < max_memory_bytes ? max_tensor_bytes : max_memory_bytes; }
  // The name of the limit tensor_cap() comes from, for messages.
  const char* tensor_cap_name() const {
    return max_tensor_bytes < max_memory_bytes ? "max_tensor_bytes" : "max_memory_bytes";
  }
};

// `path`'s directory is the base for external data. Errors name the file.
Result<Model> load_model(const std::string& path, const LoadOptions& options = {});
// From memory. `keepalive` (may be null) keeps `data` alive for initializer views; with a
// null keepalive, tensors are copied. External data resolves against `base_dir` (empty:
// external data is rejected).
Result<Model> load_model_from_memory(const void* data, size_t size, const std::string& base_dir,
                                     const LoadOptions& options = {}, std::shared_ptr<const void> keepalive = nullptr);

// Reads a serialized TensorProto, SequenceProto or OptionalProto file (ONNX test data);
// `type` selects which (from the graph input's declared type).
Result<Value> load_value_file(const std::string& path, const TypeInfo& type);
// Reads a serialized TensorProto from memory.
Result<Tensor> parse_tensor_proto(const void* data, size_t size, const std::string& what);

}  // namespace xonnx
