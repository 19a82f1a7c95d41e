// Reading tokenizer.json / tokenizer_config.json with nlohmann::json: typed field access whose
// errors name the file and the field path ("tokenizer.json: model.merges[12]: ...").
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/core/status.h"

namespace xonnx::genai {

using Json = nlohmann::json;
// Keeps the key order of objects (chat messages and tool schemas are rendered in it).
using OrderedJson = nlohmann::ordered_json;

// Where a JSON value sits: the file name and the path of fields and indices down to it.
struct JsonPath {
  std::string file;
  std::string path;

  JsonPath operator/(std::string_view key) const {
    return {file, path.empty() ? std::string(key) : path + "." + std::string(key)};
  }
  JsonPath operator[](size_t index) const { return {file, path + "[" + std::to_string(index) + "]"}; }
  template <typename... Args>
  Status error(Args&&... args) const {
    return invalid_model(file, ": ", path.empty() ? std::string("(top level)") : path, ": ",
                         std::forward<Args>(args)...);
  }
};

// The deepest arrays and objects may nest in JSON from a file or a client: the walkers of the
// tokenizer, the chat templates and the server, and nlohmann's copies and dumps, recurse once
// per level, so a document nested a million deep would overflow the stack.
constexpr size_t kMaxJsonNesting = 128;

// How deep arrays and objects nest in root (0 for a scalar), found without recursion; stops
// counting once past kMaxJsonNesting.
template <class AnyJson>
size_t json_nesting(const AnyJson& root) {
  size_t deepest = 0;
  std::vector<std::pair<const AnyJson*, size_t>> stack{{&root, 0}};
  while (!stack.empty() && deepest <= kMaxJsonNesting) {
    auto [j, depth] = stack.back();
    stack.pop_back();
    if (!j->is_structured()) continue;
    deepest = std::max(deepest, depth + 1);
    for (const AnyJson& child : *j) stack.emplace_back(&child, depth + 1);
  }
  return deepest;
}

// Parses text as JSON; a syntax error names the file and the byte offset, and a document
// nested deeper than kMaxJsonNesting is refused.
Result<Json> parse_json(std::string_view text, const std::string& file);

// Typed accessors: a missing field gives the fallback; a field of the wrong type is an error.
Status get_string(const Json& obj, std::string_view key, const JsonPath& at, std::string& out);
Status get_bool(const Json& obj, std::string_view key, const JsonPath& at, bool& out);
Status get_int(const Json& obj, std::string_view key, const JsonPath& at, int64_t& out);
// A field that must be present and an object or array.
Result<const Json*> get_object(const Json& obj, std::string_view key, const JsonPath& at);
Result<const Json*> get_array(const Json& obj, std::string_view key, const JsonPath& at);
// The "type" field of a component object (normalizer, pre_tokenizer, decoder, ...).
Result<std::string> component_type(const Json& obj, const JsonPath& at);

}  // namespace xonnx::genai
