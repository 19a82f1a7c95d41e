#include "sdk/serve/json_schema.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "sdk/serve/pattern_dfa.h"

namespace xonnx::serve {

using nlohmann::json;

CompiledSchema::CompiledSchema() {
  nodes_.resize(7);
  nodes_[kAnyNode].kind = SchemaNode::Kind::kAny;
  nodes_[kBoolNode].kind = SchemaNode::Kind::kLiterals;
  nodes_[kBoolNode].literals = {"false", "true"};
  nodes_[kNullNode].kind = SchemaNode::Kind::kLiterals;
  nodes_[kNullNode].literals = {"null"};
  nodes_[kAnyStringNode].kind = SchemaNode::Kind::kString;
  nodes_[kAnyObjectNode].kind = SchemaNode::Kind::kObject;
  nodes_[kAnyObjectNode].additional = kAnyNode;
  nodes_[kAnyArrayNode].kind = SchemaNode::Kind::kArray;
  nodes_[kAnyArrayNode].items = kAnyNode;
  nodes_[kAnyNumberNode].kind = SchemaNode::Kind::kNumber;
  for (auto& n : nodes_) n.pointer = "(builtin)";
}

std::shared_ptr<const CompiledSchema> CompiledSchema::any_object() {
  static const std::shared_ptr<const CompiledSchema> schema = [] {
    auto s = std::shared_ptr<CompiledSchema>(new CompiledSchema());
    SchemaNode object;
    object.kind = SchemaNode::Kind::kObject;
    object.additional = kAnyNode;
    object.pointer = "#";
    s->nodes_.push_back(object);
    s->root_ = static_cast<int>(s->nodes_.size() - 1);
    return std::shared_ptr<const CompiledSchema>(s);
  }();
  return schema;
}

namespace {

std::string escape_pointer_token(const std::string& token) {
  std::string out;
  for (char c : token) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

std::string child(const std::string& pointer, const std::string& token) {
  return pointer + "/" + escape_pointer_token(token);
}

// Keywords that only annotate: they never make a value invalid.
const std::set<std::string>& annotation_keywords() {
  static const std::set<std::string> k = {"$schema",       "$id",     "$comment",        "$anchor",
                                          "$vocabulary",   "title",   "description",     "default",
                                          "examples",      "example", "deprecated",      "readOnly",
                                          "writeOnly",     "format",  "contentEncoding", "contentMediaType",
                                          "contentSchema", "$defs",   "definitions",     "strict",
                                          "name"};
  return k;
}

// Validation keywords this matcher cannot enforce.
const std::set<std::string>& unsupported_keywords() {
  static const std::set<std::string> k = {"allOf",
                                          "not",
                                          "if",
                                          "then",
                                          "else",
                                          "patternProperties",
                                          "propertyNames",
                                          "dependentRequired",
                                          "dependentSchemas",
                                          "dependencies",
                                          "unevaluatedProperties",
                                          "unevaluatedItems",
                                          "contains",
                                          "minContains",
                                          "maxContains",
                                          "multipleOf",
                                          "minProperties",
                                          "maxProperties",
                                          "prefixItems",
                                          "additionalItems",
                                          "$dynamicRef",
                                          "$recursiveRef"};
  return k;
}

bool is_type_keyword(const std::string& key) {
  static const std::set<std::string> k = {"properties",
                                          "required",
                                          "additionalProperties",
                                          "items",
                                          "minItems",
                                          "maxItems",
                                          "minLength",
                                          "maxLength",
                                          "pattern",
                                          "minimum",
                                          "maximum",
                                          "exclusiveMinimum",
                                          "exclusiveMaximum",
                                          "uniqueItems"};
  return k.count(key) != 0;
}

}  // namespace

class SchemaCompiler {
 public:
  explicit SchemaCompiler(const json& document) : document_(document) {
    schema_ = std::shared_ptr<CompiledSchema>(new CompiledSchema());
  }

  Result<std::shared_ptr<const CompiledSchema>> run() {
    auto root = compile(document_, "#", 0);
    if (!root.is_ok()) return root.status();
    schema_->root_ = root.value();
    XONNX_RETURN_IF_ERROR(check_alternative_cycles());
    return std::shared_ptr<const CompiledSchema>(schema_);
  }

 private:
  static constexpr int kMaxDepth = 64;
  static constexpr size_t kMaxNodes = 10000;

  // A $ref cycle that passes through no object or array ({"$ref": "#"} at the root) describes
  // no value: refuse it instead of looping while matching.
  Status check_alternative_cycles() const {
    const auto& nodes = schema_->nodes_;
    std::vector<uint8_t> mark(nodes.size(), 0);  // 0 new, 1 on the path, 2 done
    std::function<bool(size_t)> cyclic = [&](size_t i) {
      if (mark[i] == 1) return true;
      if (mark[i] == 2 || nodes[i].kind != SchemaNode::Kind::kAnyOf) return false;
      mark[i] = 1;
      for (int alt : nodes[i].alternatives) {
        if (cyclic(static_cast<size_t>(alt))) return true;
      }
      mark[i] = 2;
      return false;
    };
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (cyclic(i)) return invalid_argument(nodes[i].pointer, ": the '$ref' cycle never reaches a value");
    }
    return Status::ok();
  }

  int add(SchemaNode node) {
    schema_->nodes_.push_back(std::move(node));
    return static_cast<int>(schema_->nodes_.size() - 1);
  }

  Result<int> compile(const json& s, const std::string& pointer, int depth) {
    if (depth > kMaxDepth) return unsupported(pointer, ": schema nested deeper than ", kMaxDepth, " levels");
    if (schema_->nodes_.size() > kMaxNodes) return unsupported(pointer, ": schema has more than ", kMaxNodes, " parts");
    auto memo = compiled_.find(pointer);
    if (memo != compiled_.end()) return memo->second;
    if (s.is_boolean()) {
      if (s.get<bool>()) return CompiledSchema::kAnyNode;
      return invalid_argument(pointer, ": the schema false matches no value");
    }
    if (!s.is_object()) return invalid_argument(pointer, ": a schema must be an object or a boolean");
    // Reserve this pointer's node first so that $ref cycles resolve to it.
    const int index = add(SchemaNode{});
    compiled_[pointer] = index;
    pending_.insert(index);
    auto node = build(s, pointer, depth);
    pending_.erase(index);
    if (!node.is_ok()) return node.status();
    node.value().pointer = pointer;
    schema_->nodes_[static_cast<size_t>(index)] = std::move(node.value());
    return index;
  }

  Result<SchemaNode> build(const json& s, const std::string& pointer, int depth) {
    for (auto it = s.begin(); it != s.end(); ++it) {
      if (unsupported_keywords().count(it.key())) {
        return unsupported(child(pointer, it.key()), ": keyword '", it.key(),
                           "' is not supported for constrained decoding");
      }
    }
    if (s.contains("uniqueItems") && !(s["uniqueItems"].is_boolean() && !s["uniqueItems"].get<bool>())) {
      return unsupported(child(pointer, "uniqueItems"),
                         ": keyword 'uniqueItems' is not supported for constrained decoding");
    }
    // Keywords that constrain values, other than the one being handled.
    auto siblings = [&](std::initializer_list<const char*> handled) {
      std::vector<std::string> out;
      for (auto it = s.begin(); it != s.end(); ++it) {
        if (annotation_keywords().count(it.key())) continue;
        bool is_handled = false;
        for (const char* h : handled) is_handled = is_handled || it.key() == h;
        if (!is_handled &&
            (is_type_keyword(it.key()) || it.key() == "type" || it.key() == "enum" || it.key() == "const" ||
             it.key() == "anyOf" || it.key() == "oneOf" || it.key() == "$ref" || it.key() == "nullable")) {
          out.push_back(it.key());
        }
      }
      return out;
    };

    if (s.contains("$ref")) {
      auto other = siblings({"$ref"});
      if (!other.empty()) return unsupported(child(pointer, other[0]), ": keywords beside '$ref' are not supported");
      return build_ref(s["$ref"], child(pointer, "$ref"), depth);
    }
    if (s.contains("enum") || s.contains("const")) {
      if (s.contains("enum") && s.contains("const"))
        return unsupported(pointer, ": 'enum' together with 'const' is not supported");
      auto other = siblings({"enum", "const", "type", "nullable"});
      if (!other.empty())
        return unsupported(child(pointer, other[0]),
                           ": keywords beside 'enum'/'const' (other than 'type') are not supported");
      return build_literals(s, pointer);
    }
    if (s.contains("anyOf") || s.contains("oneOf")) {
      if (s.contains("anyOf") && s.contains("oneOf"))
        return unsupported(pointer, ": 'anyOf' together with 'oneOf' is not supported");
      const char* key = s.contains("anyOf") ? "anyOf" : "oneOf";
      auto other = siblings({key});
      if (!other.empty())
        return unsupported(child(pointer, other[0]), ": keywords beside '", key, "' are not supported");
      const json& alts = s[key];
      if (!alts.is_array() || alts.empty())
        return invalid_argument(child(pointer, key), ": must be a non-empty array of schemas");
      std::vector<int> indices;
      for (size_t i = 0; i < alts.size(); ++i) {
        XONNX_ASSIGN_OR_RETURN(int alt, compile(alts[i], child(child(pointer, key), std::to_string(i)), depth + 1));
        indices.push_back(alt);
      }
      return any_of(indices);
    }
    return build_typed(s, pointer, depth);
  }

  SchemaNode any_of(const std::vector<int>& indices) {
    SchemaNode n;
    n.kind = SchemaNode::Kind::kAnyOf;
    for (int alt : indices) {
      const SchemaNode& a = schema_->node(alt);
      if (!pending_.count(alt) && a.kind == SchemaNode::Kind::kAny) {
        n = SchemaNode{};  // one alternative takes anything: so does the whole
        return n;
      }
      if (!pending_.count(alt) && a.kind == SchemaNode::Kind::kAnyOf) {
        n.alternatives.insert(n.alternatives.end(), a.alternatives.begin(), a.alternatives.end());
      } else {
        n.alternatives.push_back(alt);
      }
    }
    return n;
  }

  Result<SchemaNode> build_ref(const json& ref, const std::string& pointer, int depth) {
    if (!ref.is_string()) return invalid_argument(pointer, ": '$ref' must be a string");
    const std::string& target = ref.get_ref<const std::string&>();
    if (target.empty() || target[0] != '#') {
      return unsupported(pointer, ": only local references ('#', '#/$defs/...') are supported, not '", target, "'");
    }
    const std::string path = target.substr(1);
    if (!path.empty() && path[0] != '/')
      return unsupported(pointer, ": anchor references ('", target, "') are not supported");
    const json* resolved = nullptr;
    try {
      const json::json_pointer jp(path);
      if (document_.contains(jp)) resolved = &document_.at(jp);
    } catch (const json::exception&) {
      return invalid_argument(pointer, ": '", target, "' is not a valid JSON pointer");
    }
    if (!resolved) return invalid_argument(pointer, ": '", target, "' does not resolve to a schema");
    XONNX_ASSIGN_OR_RETURN(int index, compile(*resolved, "#" + path, depth + 1));
    // Referenced node: this node stands for it (kAnyOf of one keeps cycles intact).
    SchemaNode n;
    n.kind = SchemaNode::Kind::kAnyOf;
    n.alternatives = {index};
    if (!pending_.count(index)) {
      SchemaNode copy = schema_->node(index);
      return copy;
    }
    return n;
  }

  Result<std::vector<std::string>> types_of(const json& s, const std::string& pointer) {
    std::vector<std::string> types;
    if (s.contains("type")) {
      const json& t = s["type"];
      if (t.is_string()) {
        types.push_back(t.get<std::string>());
      } else if (t.is_array() && !t.empty()) {
        for (const json& e : t) {
          if (!e.is_string())
            return invalid_argument(child(pointer, "type"), ": must be a string or an array of strings");
          types.push_back(e.get<std::string>());
        }
      } else {
        return invalid_argument(child(pointer, "type"), ": must be a string or a non-empty array of strings");
      }
      static const std::set<std::string> known = {"object", "array", "string", "number", "integer", "boolean", "null"};
      for (const auto& type : types) {
        if (!known.count(type)) return invalid_argument(child(pointer, "type"), ": unknown type '", type, "'");
      }
    }
    if (s.contains("nullable")) {
      if (!s["nullable"].is_boolean()) return invalid_argument(child(pointer, "nullable"), ": must be a boolean");
      if (s["nullable"].get<bool>() && !types.empty()) types.push_back("null");
    }
    return types;
  }

  Result<SchemaNode> build_literals(const json& s, const std::string& pointer) {
    XONNX_ASSIGN_OR_RETURN(auto types, types_of(s, pointer));
    auto type_allows = [&](const json& v) {
      if (types.empty()) return true;
      for (const auto& t : types) {
        if ((t == "object" && v.is_object()) || (t == "array" && v.is_array()) || (t == "string" && v.is_string()) ||
            (t == "number" && v.is_number()) || (t == "boolean" && v.is_boolean()) || (t == "null" && v.is_null()) ||
            (t == "integer" &&
             (v.is_number_integer() || (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>())))) {
          return true;
        }
      }
      return false;
    };
    SchemaNode n;
    n.kind = SchemaNode::Kind::kLiterals;
    std::vector<json> values;
    if (s.contains("const")) {
      values.push_back(s["const"]);
    } else {
      if (!s["enum"].is_array() || s["enum"].empty())
        return invalid_argument(child(pointer, "enum"), ": must be a non-empty array");
      for (const json& v : s["enum"]) values.push_back(v);
    }
    for (const json& v : values) {
      if (type_allows(v)) n.literals.push_back(v.dump(-1, ' ', false, json::error_handler_t::replace));
    }
    if (n.literals.empty()) return invalid_argument(pointer, ": no value of 'enum'/'const' has the schema's 'type'");
    std::sort(n.literals.begin(), n.literals.end());
    n.literals.erase(std::unique(n.literals.begin(), n.literals.end()), n.literals.end());
    return n;
  }

  Result<SchemaNode> build_typed(const json& s, const std::string& pointer, int depth) {
    XONNX_ASSIGN_OR_RETURN(auto types, types_of(s, pointer));
    if (types.empty()) {
      bool constrained = false;
      for (auto it = s.begin(); it != s.end(); ++it) constrained = constrained || is_type_keyword(it.key());
      if (!constrained) return SchemaNode{};
      // No 'type': any value, with each keyword applying to the values of its own type.
      types = {"object", "array", "string", "number", "boolean", "null"};
    }
    std::vector<int> alternatives;
    for (const auto& type : types) {
      if (type == "boolean") {
        alternatives.push_back(CompiledSchema::kBoolNode);
      } else if (type == "null") {
        alternatives.push_back(CompiledSchema::kNullNode);
      } else {
        Result<SchemaNode> n = type == "object"   ? build_object(s, pointer, depth)
                               : type == "array"  ? build_array(s, pointer, depth)
                               : type == "string" ? build_string(s, pointer)
                                                  : build_number(s, pointer, type == "integer");
        if (!n.is_ok()) return n.status();
        if (types.size() == 1) return n;
        n.value().pointer = pointer;
        alternatives.push_back(add(std::move(n.value())));
      }
    }
    return any_of(alternatives);
  }

  static Result<int64_t> count_keyword(const json& s, const std::string& pointer, const char* key, int64_t fallback) {
    if (!s.contains(key)) return fallback;
    const json& v = s[key];
    if (v.is_number_unsigned()) return static_cast<int64_t>(std::min<uint64_t>(v.get<uint64_t>(), INT64_MAX));
    if (v.is_number_integer() && v.get<int64_t>() >= 0) return v.get<int64_t>();
    if (v.is_number_float() && v.get<double>() >= 0 && std::floor(v.get<double>()) == v.get<double>()) {
      return static_cast<int64_t>(std::min(v.get<double>(), 9.0e18));
    }
    return invalid_argument(child(pointer, key), ": must be a non-negative integer");
  }

  Result<SchemaNode> build_object(const json& s, const std::string& pointer, int depth) {
    SchemaNode n;
    n.kind = SchemaNode::Kind::kObject;
    std::map<std::string, int> properties;  // escaped name -> node
    if (s.contains("properties")) {
      const json& props = s["properties"];
      if (!props.is_object()) return invalid_argument(child(pointer, "properties"), ": must be an object");
      if (props.size() > kMaxObjectProperties) {
        return unsupported(child(pointer, "properties"), ": more than ", kMaxObjectProperties,
                           " properties in one object");
      }
      for (auto it = props.begin(); it != props.end(); ++it) {
        const std::string p = child(child(pointer, "properties"), it.key());
        XONNX_ASSIGN_OR_RETURN(int index, compile(it.value(), p, depth + 1));
        properties[escaped_name(it.key())] = index;
      }
    }
    n.additional = CompiledSchema::kAnyNode;
    if (s.contains("additionalProperties")) {
      const json& a = s["additionalProperties"];
      if (a.is_boolean() && !a.get<bool>()) {
        n.additional = -1;
      } else {
        XONNX_ASSIGN_OR_RETURN(n.additional, compile(a, child(pointer, "additionalProperties"), depth + 1));
      }
    }
    std::set<std::string> required;
    if (s.contains("required")) {
      const json& r = s["required"];
      if (!r.is_array()) return invalid_argument(child(pointer, "required"), ": must be an array of strings");
      for (size_t i = 0; i < r.size(); ++i) {
        if (!r[i].is_string())
          return invalid_argument(child(child(pointer, "required"), std::to_string(i)), ": must be a string");
        const std::string name = escaped_name(r[i].get<std::string>());
        if (!properties.count(name)) {
          if (n.additional < 0) {
            return invalid_argument(child(child(pointer, "required"), std::to_string(i)), ": required property '",
                                    r[i].get<std::string>(),
                                    "' is not in 'properties' and additionalProperties is false");
          }
          properties[name] = n.additional;
        }
        required.insert(name);
      }
    }
    if (properties.size() > kMaxObjectProperties) {
      return unsupported(pointer, ": more than ", kMaxObjectProperties, " properties in one object");
    }
    for (const auto& [name, index] : properties) {  // std::map: sorted by escaped name
      if (required.count(name)) n.required_mask |= uint64_t{1} << n.property_names.size();
      n.property_names.push_back(name);
      n.property_nodes.push_back(index);
    }
    return n;
  }

  static std::string escaped_name(const std::string& name) {
    const std::string quoted = json(name).dump(-1, ' ', false, json::error_handler_t::replace);
    return quoted.substr(1, quoted.size() - 2);
  }

  Result<SchemaNode> build_array(const json& s, const std::string& pointer, int depth) {
    SchemaNode n;
    n.kind = SchemaNode::Kind::kArray;
    n.items = CompiledSchema::kAnyNode;
    XONNX_ASSIGN_OR_RETURN(n.min_items, count_keyword(s, pointer, "minItems", 0));
    XONNX_ASSIGN_OR_RETURN(n.max_items, count_keyword(s, pointer, "maxItems", INT64_MAX));
    if (s.contains("items")) {
      const json& items = s["items"];
      if (items.is_array())
        return unsupported(child(pointer, "items"), ": tuple 'items' (an array of schemas) is not supported");
      if (items.is_boolean() && !items.get<bool>()) {
        n.max_items = 0;
      } else {
        XONNX_ASSIGN_OR_RETURN(n.items, compile(items, child(pointer, "items"), depth + 1));
      }
    }
    if (n.min_items > n.max_items) return invalid_argument(child(pointer, "minItems"), ": is larger than maxItems");
    return n;
  }

  Result<SchemaNode> build_string(const json& s, const std::string& pointer) {
    SchemaNode n;
    n.kind = SchemaNode::Kind::kString;
    XONNX_ASSIGN_OR_RETURN(n.min_length, count_keyword(s, pointer, "minLength", 0));
    XONNX_ASSIGN_OR_RETURN(n.max_length, count_keyword(s, pointer, "maxLength", INT64_MAX));
    if (n.min_length > n.max_length) return invalid_argument(child(pointer, "minLength"), ": is larger than maxLength");
    if (s.contains("pattern")) {
      if (!s["pattern"].is_string()) return invalid_argument(child(pointer, "pattern"), ": must be a string");
      auto dfa = ByteDfa::compile_search(s["pattern"].get<std::string>());
      if (!dfa.is_ok()) return dfa.status().with_context(child(pointer, "pattern") + ": ");
      n.pattern = std::move(dfa.value());
    }
    return n;
  }

  Result<SchemaNode> build_number(const json& s, const std::string& pointer, bool integer) {
    SchemaNode n;
    n.kind = integer ? SchemaNode::Kind::kInteger : SchemaNode::Kind::kNumber;
    auto bound = [&](const char* key, bool& has, double& value, bool& exclusive, bool is_exclusive,
                     bool is_min) -> Status {
      if (!s.contains(key)) return Status::ok();
      const json& v = s[key];
      if (v.is_boolean())
        return unsupported(child(pointer, key),
                           ": the draft-4 boolean form is not supported; give the bound as a number");
      if (!v.is_number()) return invalid_argument(child(pointer, key), ": must be a number");
      const double x = v.get<double>();
      if (!std::isfinite(x)) return invalid_argument(child(pointer, key), ": must be finite");
      // Of an inclusive and an exclusive bound on the same side, keep the tighter.
      if (has) {
        const bool tighter =
            is_min ? (x > value || (x == value && is_exclusive)) : (x < value || (x == value && is_exclusive));
        if (!tighter) return Status::ok();
      }
      has = true;
      value = x;
      exclusive = is_exclusive;
      return Status::ok();
    };
    XONNX_RETURN_IF_ERROR(bound("minimum", n.has_min, n.min, n.exclusive_min, false, true));
    XONNX_RETURN_IF_ERROR(bound("exclusiveMinimum", n.has_min, n.min, n.exclusive_min, true, true));
    XONNX_RETURN_IF_ERROR(bound("maximum", n.has_max, n.max, n.exclusive_max, false, false));
    XONNX_RETURN_IF_ERROR(bound("exclusiveMaximum", n.has_max, n.max, n.exclusive_max, true, false));
    constexpr double kExact = 9007199254740992.0;  // 2^53: integers beyond are not exact in a double
    if (integer) {
      if (n.has_min) {
        n.min = n.exclusive_min ? std::floor(n.min) + 1 : std::ceil(n.min);
        n.exclusive_min = false;
      }
      if (n.has_max) {
        n.max = n.exclusive_max ? std::ceil(n.max) - 1 : std::floor(n.max);
        n.exclusive_max = false;
      }
      if ((n.has_min && std::fabs(n.min) > kExact) || (n.has_max && std::fabs(n.max) > kExact)) {
        return unsupported(pointer, ": integer bounds beyond 2^53 are not supported");
      }
    }
    if (n.has_min && n.has_max && (n.min > n.max || (n.min == n.max && (n.exclusive_min || n.exclusive_max)))) {
      return invalid_argument(pointer, ": no number lies within the bounds");
    }
    return n;
  }

  const json& document_;
  std::shared_ptr<CompiledSchema> schema_;
  std::map<std::string, int> compiled_;
  std::set<int> pending_;
};

Result<std::shared_ptr<const CompiledSchema>> CompiledSchema::compile(const json& schema) {
  return SchemaCompiler(schema).run();
}

}  // namespace xonnx::serve
