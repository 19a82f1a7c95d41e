// Reading tokenizer.json / tokenizer_config.json with nlohmann::json: typed field access whose
// errors name the file and the field path ("tokenizer.json: model.merges[12]: ...").
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

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

// Parses text as JSON; a syntax error names the file and the byte offset.
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
