// JSON Schema compiled for constrained decoding: the subset of JSON Schema (draft 2020-12 and
// draft 7 spellings) that a byte-level JSON matcher (json_matcher.h) can enforce while text is
// generated. docs/serve.md lists the keywords; anything else that constrains values is refused
// with the JSON pointer of the keyword, never ignored (ignoring it could yield output that does
// not validate). Annotations (title, description, default, examples, format, ...) are ignored.
//
// A CompiledSchema is immutable after compile and may be shared by threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/core/status.h"

namespace xonnx::serve {

class ByteDfa;

// Limits that keep the matcher's state small and its work per byte bounded.
constexpr size_t kMaxObjectProperties = 64;  // declared properties of one object (a 64-bit mask)
constexpr int kMaxNestingDepth = 32;         // objects/arrays open at once
constexpr int kMaxNumberChars = 24;          // characters of one generated number
constexpr int kMaxWhitespaceRun = 8;         // consecutive whitespace bytes between tokens

struct SchemaNode {
  enum class Kind : uint8_t { kAny, kObject, kArray, kString, kNumber, kInteger, kLiterals, kAnyOf };
  Kind kind = Kind::kAny;
  std::string pointer;  // where in the schema this node comes from ("#/properties/a")

  // kObject. Property names as they appear between the quotes in JSON (escaped), sorted;
  // property_nodes[i] is the schema of property_names[i].
  std::vector<std::string> property_names;
  std::vector<int> property_nodes;
  uint64_t required_mask = 0;  // bit i: property_names[i] is required
  int additional = -1;         // node for other keys; -1: no other keys allowed
  // kArray
  int items = -1;  // node of every item
  int64_t min_items = 0, max_items = INT64_MAX;
  // kString: lengths in Unicode code points; pattern as a DFA over the decoded UTF-8 bytes.
  int64_t min_length = 0, max_length = INT64_MAX;
  std::shared_ptr<const ByteDfa> pattern;
  // kNumber / kInteger bounds (for kInteger already rounded to integers, inclusive).
  bool has_min = false, has_max = false, exclusive_min = false, exclusive_max = false;
  double min = 0, max = 0;
  // kLiterals: enum / const values (and true / false / null), compact-serialized and sorted.
  std::vector<std::string> literals;
  // kAnyOf (also oneOf, and type arrays): the alternatives.
  std::vector<int> alternatives;
};

class CompiledSchema {
 public:
  // A JSON Schema document. Errors are kInvalidArgument (a malformed schema) or kUnsupported
  // (valid JSON Schema this matcher cannot enforce); both name the JSON pointer.
  static Result<std::shared_ptr<const CompiledSchema>> compile(const nlohmann::json& schema);
  // Any JSON object (response_format {"type": "json_object"}).
  static std::shared_ptr<const CompiledSchema> any_object();

  const SchemaNode& node(int index) const { return nodes_[static_cast<size_t>(index)]; }
  int root() const { return root_; }
  size_t size() const { return nodes_.size(); }

  // Nodes every schema has, for JSON values without constraints.
  static constexpr int kAnyNode = 0, kBoolNode = 1, kNullNode = 2, kAnyStringNode = 3, kAnyObjectNode = 4,
                       kAnyArrayNode = 5, kAnyNumberNode = 6;

 private:
  CompiledSchema();
  friend class SchemaCompiler;
  std::vector<SchemaNode> nodes_;
  int root_ = kAnyNode;
};

}  // namespace xonnx::serve
