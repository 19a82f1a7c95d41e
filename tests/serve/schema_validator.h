// An independent JSON Schema validator for tests of the constrained decoder: it checks parsed
// values (nlohmann::json) against the schema document directly, sharing no code with the
// byte-level matcher. Patterns use std::regex (ECMAScript), a second regex engine.
#pragma once

#include <cmath>
#include <regex>
#include <string>

#include <nlohmann/json.hpp>

namespace xonnx::serve::testing {

inline size_t code_points(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

inline bool validate(const nlohmann::json& v, const nlohmann::json& s, const nlohmann::json& root, int depth = 0) {
  using nlohmann::json;
  if (depth > 100) return false;
  if (s.is_boolean()) return s.get<bool>();
  if (s.contains("$ref")) {
    const std::string ref = s["$ref"].get<std::string>();
    return validate(v, root.at(json::json_pointer(ref.substr(1))), root, depth + 1);
  }
  if (s.contains("const") && v != s["const"]) return false;
  if (s.contains("enum")) {
    bool found = false;
    for (const auto& e : s["enum"]) found = found || e == v;
    if (!found) return false;
  }
  if (s.contains("anyOf")) {
    bool any = false;
    for (const auto& alt : s["anyOf"]) any = any || validate(v, alt, root, depth + 1);
    if (!any) return false;
  }
  if (s.contains("oneOf")) {
    int n = 0;
    for (const auto& alt : s["oneOf"]) n += validate(v, alt, root, depth + 1);
    if (n != 1) return false;
  }
  if (s.contains("type")) {
    std::vector<std::string> types;
    if (s["type"].is_string())
      types.push_back(s["type"]);
    else
      for (const auto& t : s["type"]) types.push_back(t);
    if (s.value("nullable", false)) types.push_back("null");
    bool ok = false;
    for (const auto& t : types) {
      ok = ok || (t == "object" && v.is_object()) || (t == "array" && v.is_array()) ||
           (t == "string" && v.is_string()) || (t == "number" && v.is_number()) || (t == "boolean" && v.is_boolean()) ||
           (t == "null" && v.is_null()) ||
           (t == "integer" &&
            (v.is_number_integer() || (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>())));
    }
    if (!ok) return false;
  }
  if (v.is_object()) {
    const json props = s.value("properties", json::object());
    for (const auto& r : s.value("required", json::array())) {
      if (!v.contains(r.get<std::string>())) return false;
    }
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (props.contains(it.key())) {
        if (!validate(it.value(), props[it.key()], root, depth + 1)) return false;
      } else if (s.contains("additionalProperties")) {
        if (!validate(it.value(), s["additionalProperties"], root, depth + 1)) return false;
      }
    }
  }
  if (v.is_array()) {
    if (s.contains("minItems") && v.size() < s["minItems"].get<size_t>()) return false;
    if (s.contains("maxItems") && v.size() > s["maxItems"].get<size_t>()) return false;
    if (s.contains("items")) {
      for (const auto& item : v) {
        if (!validate(item, s["items"], root, depth + 1)) return false;
      }
    }
  }
  if (v.is_string()) {
    const std::string& str = v.get_ref<const std::string&>();
    if (s.contains("minLength") && code_points(str) < s["minLength"].get<size_t>()) return false;
    if (s.contains("maxLength") && code_points(str) > s["maxLength"].get<size_t>()) return false;
    if (s.contains("pattern") &&
        !std::regex_search(str, std::regex(s["pattern"].get<std::string>(), std::regex::ECMAScript))) {
      return false;
    }
  }
  if (v.is_number()) {
    const double x = v.get<double>();
    if (s.contains("minimum") && x < s["minimum"].get<double>()) return false;
    if (s.contains("maximum") && x > s["maximum"].get<double>()) return false;
    if (s.contains("exclusiveMinimum") && x <= s["exclusiveMinimum"].get<double>()) return false;
    if (s.contains("exclusiveMaximum") && x >= s["exclusiveMaximum"].get<double>()) return false;
  }
  return true;
}

}  // namespace xonnx::serve::testing
