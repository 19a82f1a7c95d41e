// The graph IR shared by the runtime and the converter: a direct, owning mirror of the ONNX
// model (names, not pointers, connect values), so passes can rewrite it freely and the
// writer can emit it back. Initializer tensors may be views into the model's mapping.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/tensor.h"

namespace xonnx {

struct Graph;

// A dimension: value >= 0 when known; otherwise `param` names it ("batch") or is empty.
struct Dim {
  int64_t value = -1;
  std::string param;
  bool known() const { return value >= 0; }
};

struct TypeInfo {
  enum class Kind { kUnknown, kTensor, kSequence, kOptional, kMap, kSparseTensor };
  Kind kind = Kind::kUnknown;
  DataType elem_type = DataType::kUndefined;  // tensor / sparse tensor element type
  bool has_shape = false;                     // false: rank unknown
  std::vector<Dim> dims;
  std::shared_ptr<TypeInfo> elem;  // sequence / optional element type
};

struct ValueInfo {
  std::string name;
  TypeInfo type;
};

enum class AttrType : int {
  kUndefined = 0,
  kFloat = 1,
  kInt = 2,
  kString = 3,
  kTensor = 4,
  kGraph = 5,
  kFloats = 6,
  kInts = 7,
  kStrings = 8,
  kTensors = 9,
  kGraphs = 10,
  kSparseTensor = 11,
  kSparseTensors = 12,
  kTypeProto = 13,
  kTypeProtos = 14,
};
const char* attr_type_name(AttrType t);

struct Attribute {
  std::string name;
  AttrType type = AttrType::kUndefined;
  std::string ref_attr_name;  // inside a function body: refers to the caller's attribute
  float f = 0.0f;
  int64_t i = 0;
  std::string s;
  Tensor t;  // TENSOR, and SPARSE_TENSOR densified by the loader
  std::shared_ptr<Graph> g;
  TypeInfo tp;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::vector<Tensor> tensors;
  std::vector<std::shared_ptr<Graph>> graphs;
  std::vector<TypeInfo> type_protos;
};

struct Node {
  std::string name;
  std::string op_type;
  std::string domain;  // "" is the default ONNX domain ("ai.onnx" is normalized to "")
  std::string overload;
  std::vector<std::string> inputs;   // "" marks an omitted optional input
  std::vector<std::string> outputs;  // "" marks an unused optional output
  std::vector<Attribute> attributes;
  // Opset of `domain` for this node when it differs from the model's import (nodes inlined
  // from a function that imports another version); 0 means "the model's import".
  int64_t opset = 0;
  // For a node a session-time rewrite made from a model node: that node's describe(), so
  // errors name what the user wrote. Empty for the model's own nodes; never written to files.
  std::string origin;

  const Attribute* find_attr(const std::string& attr_name) const;
  // "node 'name' (Op)" or "node #3 (Op)" for error messages.
  std::string describe() const;
};

struct NamedTensor {
  std::string name;
  Tensor tensor;
};

struct Graph {
  std::string name;
  std::vector<Node> nodes;
  std::vector<ValueInfo> inputs;
  std::vector<ValueInfo> outputs;
  std::vector<ValueInfo> value_info;
  std::vector<NamedTensor> initializers;

  const NamedTensor* find_initializer(const std::string& n) const;
};

struct FunctionDef {
  std::string name;
  std::string domain;
  std::string overload;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::vector<std::string> attribute_names;   // attributes without defaults
  std::vector<Attribute> attribute_defaults;  // attributes with defaults (IR >= 9)
  std::vector<Node> nodes;
  std::map<std::string, int64_t> opset_imports;
  std::vector<ValueInfo> value_info;
};

struct Model {
  int64_t ir_version = 0;
  std::map<std::string, int64_t> opset_imports;  // domain ("" for ONNX) -> version
  std::string producer_name;
  std::string producer_version;
  std::string domain;
  int64_t model_version = 0;
  std::string doc_string;
  std::vector<std::pair<std::string, std::string>> metadata_props;
  Graph graph;
  std::vector<FunctionDef> functions;  // empty after the loader inlines them
};

// Replaces the subgraphs of n's attributes (shared_ptrs, which a plain copy of a Node shares)
// with deep copies, recursively: for rewrites that must change one copy only.
void deep_copy_subgraphs(Node& n);

// The prefix of xonnx's internal domains (com.xonnx.nhwc, ...): ops that only session-time
// rewrites create. The loader rejects them in model files.
constexpr const char* kInternalDomainPrefix = "com.xonnx";
bool is_internal_domain(const std::string& domain);

// Normalizes "ai.onnx" to "" (both mean the default domain).
std::string normalize_domain(const std::string& domain);

}  // namespace xonnx
