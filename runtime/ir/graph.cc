#include "runtime/ir/graph.h"

namespace xonnx {

const char* attr_type_name(AttrType t) {
  switch (t) {
    case AttrType::kUndefined: return "UNDEFINED";
    case AttrType::kFloat: return "FLOAT";
    case AttrType::kInt: return "INT";
    case AttrType::kString: return "STRING";
    case AttrType::kTensor: return "TENSOR";
    case AttrType::kGraph: return "GRAPH";
    case AttrType::kFloats: return "FLOATS";
    case AttrType::kInts: return "INTS";
    case AttrType::kStrings: return "STRINGS";
    case AttrType::kTensors: return "TENSORS";
    case AttrType::kGraphs: return "GRAPHS";
    case AttrType::kSparseTensor: return "SPARSE_TENSOR";
    case AttrType::kSparseTensors: return "SPARSE_TENSORS";
    case AttrType::kTypeProto: return "TYPE_PROTO";
    case AttrType::kTypeProtos: return "TYPE_PROTOS";
  }
  return "UNKNOWN";
}

const Attribute* Node::find_attr(const std::string& attr_name) const {
  for (const Attribute& a : attributes) {
    if (a.name == attr_name) return &a;
  }
  return nullptr;
}

std::string Node::describe() const {
  std::string d = domain.empty() ? op_type : domain + "::" + op_type;
  if (!name.empty()) return "node '" + name + "' (" + d + ")";
  if (!outputs.empty() && !outputs[0].empty()) return "node producing '" + outputs[0] + "' (" + d + ")";
  return "unnamed node (" + d + ")";
}

const NamedTensor* Graph::find_initializer(const std::string& n) const {
  for (const NamedTensor& t : initializers) {
    if (t.name == n) return &t;
  }
  return nullptr;
}

std::string normalize_domain(const std::string& domain) {
  return domain == "ai.onnx" ? std::string() : domain;
}

}  // namespace xonnx
