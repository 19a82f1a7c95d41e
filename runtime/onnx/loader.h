// Loads .onnx files into the IR: maps the file, parses it with protobuf-lite, resolves
// external data, converts tensors, inlines model-local functions, and validates the graph.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "runtime/core/status.h"
#include "runtime/core/value.h"
#include "runtime/ir/graph.h"

namespace xonnx {

struct LoadOptions {
  // Largest tensor (initializer, constant or external data) the loader accepts, in bytes.
  int64_t max_tensor_bytes = std::numeric_limits<int64_t>::max();
  // Inline model-local functions into the graph (the runtime needs it; the converter may not).
  bool inline_functions = true;
};

// `path`'s directory is the base for external data. Errors name the file.
Result<Model> load_model(const std::string& path, const LoadOptions& options = {});
// From memory. `keepalive` (may be null) keeps `data` alive for initializer views; with a
// null keepalive, tensors are copied. External data resolves against `base_dir` (empty:
// external data is rejected).
Result<Model> load_model_from_memory(const void* data, size_t size, const std::string& base_dir,
                                     const LoadOptions& options = {},
                                     std::shared_ptr<const void> keepalive = nullptr);

// Reads a serialized TensorProto, SequenceProto or OptionalProto file (ONNX test data);
// `type` selects which (from the graph input's declared type).
Result<Value> load_value_file(const std::string& path, const TypeInfo& type);
// Reads a serialized TensorProto from memory.
Result<Tensor> parse_tensor_proto(const void* data, size_t size, const std::string& what);

}  // namespace xonnx
