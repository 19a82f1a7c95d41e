// Splits a serialized ModelProto so top-level initializer bytes are never copied:
// protobuf-lite parses everything except TensorProto.raw_data of graph initializers, whose
// byte ranges inside the input buffer are returned instead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "onnx.pb.h"
#include "runtime/core/status.h"

namespace xonnx {

struct ScannedInitializer {
  onnxpb::TensorProto proto;     // everything but raw_data
  const uint8_t* raw = nullptr;  // raw_data inside the scanned buffer, or nullptr if absent
  size_t raw_size = 0;
};

struct ScannedModel {
  onnxpb::ModelProto model;  // graph.initializer is empty; see initializers
  std::vector<ScannedInitializer> initializers;
};

// `what` names the buffer (the file path) in errors, which give the byte offset. Subgraphs
// nested deeper than max_nesting_depth are an error (checked before protobuf parses them).
Result<ScannedModel> scan_model(const void* data, size_t size, const std::string& what, int max_nesting_depth = 32);

}  // namespace xonnx
