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
  std::string self;
  if (!name.empty())
    self = "node '" + name + "' (" + d + ")";
  else if (!outputs.empty() && !outputs[0].empty())
    self = "node producing '" + outputs[0] + "' (" + d + ")";
  else
    self = "unnamed node (" + d + ")";
  return origin.empty() ? self : origin + ", rewritten by the session as " + self;
}

const NamedTensor* Graph::find_initializer(const std::string& n) const {
  for (const NamedTensor& t : initializers) {
    if (t.name == n) return &t;
  }
  return nullptr;
}

void deep_copy_subgraphs(Node& n) {
  auto own = [](std::shared_ptr<Graph>& g) {
    if (!g) return;
    g = std::make_shared<Graph>(*g);
    for (Node& inner : g->nodes) deep_copy_subgraphs(inner);
  };
  for (Attribute& a : n.attributes) {
    own(a.g);
    for (auto& sg : a.graphs) own(sg);
  }
}

bool is_internal_domain(const std::string& domain) {
  const std::string prefix = kInternalDomainPrefix;
  return domain.compare(0, prefix.size(), prefix) == 0 &&
         (domain.size() == prefix.size() || domain[prefix.size()] == '.');
}

std::string normalize_domain(const std::string& domain) { return domain == "ai.onnx" ? std::string() : domain; }

}  // namespace xonnx
