#include "sdk/genai/tokenizer_json.h"

namespace xonnx::genai {

Result<Json> parse_json(std::string_view text, const std::string& file) {
  try {
    Json j = Json::parse(text.begin(), text.end());
    if (json_nesting(j) > kMaxJsonNesting) {
      return invalid_model(file, ": arrays and objects nested deeper than ", kMaxJsonNesting);
    }
    return j;
  } catch (const Json::exception& e) {  // parse errors, and numbers past 64 bits (out_of_range)
    return invalid_model(file, ": not valid JSON: ", e.what());
  }
}

static const Json* find(const Json& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

Status get_string(const Json& obj, std::string_view key, const JsonPath& at, std::string& out) {
  const Json* v = find(obj, key);
  if (!v) return Status::ok();
  if (!v->is_string()) return (at / key).error("expected a string, found ", v->type_name());
  out = v->get<std::string>();
  return Status::ok();
}

Status get_bool(const Json& obj, std::string_view key, const JsonPath& at, bool& out) {
  const Json* v = find(obj, key);
  if (!v) return Status::ok();
  if (!v->is_boolean()) return (at / key).error("expected true or false, found ", v->type_name());
  out = v->get<bool>();
  return Status::ok();
}

Status get_int(const Json& obj, std::string_view key, const JsonPath& at, int64_t& out) {
  const Json* v = find(obj, key);
  if (!v) return Status::ok();
  if (!v->is_number_integer()) return (at / key).error("expected an integer, found ", v->type_name());
  out = v->get<int64_t>();
  return Status::ok();
}

Result<const Json*> get_object(const Json& obj, std::string_view key, const JsonPath& at) {
  const Json* v = find(obj, key);
  if (!v) return (at / key).error("missing");
  if (!v->is_object()) return (at / key).error("expected an object, found ", v->type_name());
  return v;
}

Result<const Json*> get_array(const Json& obj, std::string_view key, const JsonPath& at) {
  const Json* v = find(obj, key);
  if (!v) return (at / key).error("missing");
  if (!v->is_array()) return (at / key).error("expected an array, found ", v->type_name());
  return v;
}

Result<std::string> component_type(const Json& obj, const JsonPath& at) {
  if (!obj.is_object()) return at.error("expected an object, found ", obj.type_name());
  std::string type;
  XONNX_RETURN_IF_ERROR(get_string(obj, "type", at, type));
  if (type.empty()) return (at / "type").error("missing");
  return type;
}

}  // namespace xonnx::genai
