// TensorProto / TypeProto -> IR conversion with all the validation a hostile file needs:
// known element type, non-negative dims, no element-count overflow, data size matching
// dims, memory cap; external data through ExternalDataResolver (external_data.h).
#pragma once

#include <memory>
#include <string>

#include "onnx.pb.h"
#include "runtime/ir/graph.h"
#include "runtime/onnx/external_data.h"
#include "runtime/onnx/loader.h"

namespace xonnx {

struct TensorSource {
  const LoadOptions* options = nullptr;
  ExternalDataResolver* external = nullptr;  // may be null: external data rejected
  // raw_data held outside the proto (zero-copy scan): bytes and who keeps them alive.
  const uint8_t* raw = nullptr;
  size_t raw_size = 0;
  std::shared_ptr<const void> keepalive;
  bool file_backed = false;  // raw lies in a read-only file mapping (Storage::view)
};

// `what` names the tensor for errors ("initializer 'w'", "attribute 'value' of node ...").
Result<Tensor> tensor_from_proto(const onnxpb::TensorProto& proto, const TensorSource& source,
                                 const std::string& what);
Result<TypeInfo> type_from_proto(const onnxpb::TypeProto& proto);

}  // namespace xonnx
