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
  // Bytes the loader has allocated so far (checked against options->max_memory_bytes and
  // increased by every tensor it allocates); may be null.
  int64_t* allocated = nullptr;
};

// Charges `bytes` of a new allocation for `what` against the per-tensor cap and the load's
// total (source.allocated); fails naming the limit before anything is allocated.
Status charge_allocation(const TensorSource& source, int64_t bytes, const std::string& what, const std::string& detail);

// `what` names the tensor for errors ("initializer 'w'", "attribute 'value' of node ...").
Result<Tensor> tensor_from_proto(const onnxpb::TensorProto& proto, const TensorSource& source, const std::string& what);
Result<TypeInfo> type_from_proto(const onnxpb::TypeProto& proto);

}  // namespace xonnx
