// IR -> protobuf-lite messages (the writer's building blocks). Every IR field the loader
// reads is written back; tensors use raw_data (little-endian, sub-byte types packed) except
// strings, which use string_data.
#pragma once

#include <string>

#include "onnx.pb.h"
#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace xonnx {
namespace convert {

// `with_data` false leaves the element data out (the writer streams it separately).
Status tensor_to_proto(const Tensor& t, const std::string& name, bool with_data, onnxpb::TensorProto* out);
void type_to_proto(const TypeInfo& type, onnxpb::TypeProto* out);
void value_info_to_proto(const ValueInfo& v, onnxpb::ValueInfoProto* out);
Status attribute_to_proto(const Attribute& a, onnxpb::AttributeProto* out);
Status node_to_proto(const Node& n, onnxpb::NodeProto* out);
// `with_initializers` false leaves the graph's own initializers out (the writer streams
// the top-level ones); subgraphs always carry theirs. `ir_version` < 4 lists initializers
// among the graph inputs, as those IR versions require.
Status graph_to_proto(const Graph& g, bool with_initializers, int64_t ir_version, onnxpb::GraphProto* out);
Status function_to_proto(const FunctionDef& f, onnxpb::FunctionProto* out);
// Everything but the graph.
Status model_header_to_proto(const Model& m, onnxpb::ModelProto* out);

}  // namespace convert
}  // namespace xonnx
