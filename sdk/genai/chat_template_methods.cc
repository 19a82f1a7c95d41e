// Python's str and dict methods of the chat-template interpreter (s.strip(), s.split(),
// d.items(), d.get()), obj.name and obj[key], and the string operations the filters share with
// them (chat_template_builtins.cc).
#include "sdk/genai/chat_template_methods.h"

#include <algorithm>
#include <string>
#include <vector>

#include "sdk/genai/unicode.h"

namespace xonnx::genai::jinja {
namespace {

bool py_space(uint32_t cp) { return is_whitespace(cp) || (cp >= 0x1C && cp <= 0x1F); }

std::string map_chars(const std::string& s, uint32_t (*f)(uint32_t)) {
  std::string out;
  for (size_t i = 0; i < s.size();) utf8_append(out, f(utf8_next(s, i)));
  return out;
}

Status need_string(const Value& v, const char* what) {
  if (!v.is_string()) return invalid_argument(what, " needs a string, got ", v.type_name());
  return Status::ok();
}

}  // namespace

// Appends to a string that must stay within kMaxStringBytes.
Status append_bounded(std::string& out, const std::string& s) {
  XONNX_RETURN_IF_ERROR(check_string_size(out.size() + s.size()));
  out += s;
  return Status::ok();
}

std::string upper(const std::string& s) { return map_chars(s, to_upper); }
std::string lower(const std::string& s) { return map_chars(s, to_lower); }
std::string capitalize(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    const uint32_t cp = utf8_next(s, i);
    utf8_append(out, out.empty() ? to_upper(cp) : to_lower(cp));
  }
  return out;
}
std::string title(const std::string& s) {
  std::string out;
  bool prev_cased = false;
  for (size_t i = 0; i < s.size();) {
    const uint32_t cp = utf8_next(s, i);
    const bool cased = is_alphanumeric(cp) && !is_numeric(cp);
    utf8_append(out, cased ? (prev_cased ? to_lower(cp) : to_upper(cp)) : cp);
    prev_cased = cased;
  }
  return out;
}

Result<int64_t> int_arg(const CallArgs& a, size_t i, const char* name, int64_t fallback) {
  const Value* v = a.get(i, name);
  if (!v || v->is_none() || v->is_undefined()) return fallback;
  if (v->kind == Value::Kind::kInt) return v->integer;
  if (v->kind == Value::Kind::kBool) return static_cast<int64_t>(v->boolean);
  return invalid_argument("argument '", name, "' must be an integer, got ", v->type_name());
}

Result<std::string> replace(const std::string& s, const std::string& from, const std::string& to, int64_t count) {
  if (from.empty()) return s;
  std::string out;
  size_t pos = 0;
  for (int64_t n = 0; count < 0 || n < count; ++n) {
    const size_t hit = s.find(from, pos);
    if (hit == std::string::npos) break;
    XONNX_RETURN_IF_ERROR(check_string_size(out.size() + (hit - pos) + to.size()));
    out.append(s, pos, hit - pos);
    out += to;
    pos = hit + from.size();
  }
  XONNX_RETURN_IF_ERROR(append_bounded(out, s.substr(pos)));
  return out;
}

namespace {

// Python's str.split; at most kMaxItems + 1 parts (the caller refuses more).
std::vector<std::string> split(const std::string& s, const Value* sep, int64_t maxsplit) {
  std::vector<std::string> out;
  if (!sep || sep->is_none() || sep->is_undefined()) {  // runs of whitespace, ends stripped
    size_t i = 0;
    while (i < s.size()) {
      size_t j = i;
      while (j < s.size()) {
        size_t k = j;
        if (!py_space(utf8_next(s, k))) break;
        j = k;
      }
      if (j >= s.size()) break;
      if (maxsplit >= 0 && static_cast<int64_t>(out.size()) == maxsplit) {
        out.push_back(strip_string(s.substr(j), false, true, nullptr));
        return out;
      }
      size_t k = j;
      while (k < s.size()) {
        size_t next = k;
        if (py_space(utf8_next(s, next))) break;
        k = next;
      }
      out.push_back(s.substr(j, k - j));
      if (out.size() > kMaxItems) return out;
      i = k;
    }
    return out;
  }
  const std::string& d = sep->string;
  size_t pos = 0;
  while (true) {
    const size_t hit = d.empty() ? std::string::npos : s.find(d, pos);
    if (hit == std::string::npos || (maxsplit >= 0 && static_cast<int64_t>(out.size()) == maxsplit)) {
      out.push_back(s.substr(pos));
      return out;
    }
    out.push_back(s.substr(pos, hit - pos));
    if (out.size() > kMaxItems) return out;
    pos = hit + d.size();
  }
}

Result<Value> list_of_strings(const std::vector<std::string>& parts) {
  XONNX_RETURN_IF_ERROR(check_items(parts.size()));
  List l;
  for (const auto& p : parts) l.push_back(Value::of(p));
  return Value::of(std::move(l));
}

Result<Value> string_method(const Value& self, const std::string& name, const CallArgs& a) {
  const std::string& s = self.string;
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    return Value::of(strip_string(s, name != "rstrip", name != "lstrip", a.get(0, "chars")));
  }
  if (name == "upper") return Value::of(upper(s));
  if (name == "lower") return Value::of(lower(s));
  if (name == "title") return Value::of(title(s));
  if (name == "capitalize") return Value::of(capitalize(s));
  if (name == "split") {
    const Value* sep = a.get(0, "sep");
    if (sep && !sep->is_none() && !sep->is_undefined()) {
      XONNX_RETURN_IF_ERROR(need_string(*sep, "split"));
      if (sep->string.empty()) return invalid_argument("split: empty separator");
    }
    XONNX_ASSIGN_OR_RETURN(int64_t maxsplit, int_arg(a, 1, "maxsplit", -1));
    return list_of_strings(split(s, sep, maxsplit));
  }
  if (name == "splitlines") {
    std::vector<std::string> lines;
    size_t start = 0;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '\n' || s[i] == '\r') {
        lines.push_back(s.substr(start, i - start));
        XONNX_RETURN_IF_ERROR(check_items(lines.size()));
        if (s[i] == '\r' && i + 1 < s.size() && s[i + 1] == '\n') ++i;
        start = i + 1;
      }
    }
    if (start < s.size()) lines.push_back(s.substr(start));
    return list_of_strings(lines);
  }
  if (name == "startswith" || name == "endswith") {
    const Value* p = a.get(0, "prefix");
    if (!p) return invalid_argument(name, " needs an argument");
    std::vector<std::string> options;
    if (p->is_string())
      options.push_back(p->string);
    else if (p->is_list()) {
      for (const Value& e : *p->list) {
        XONNX_RETURN_IF_ERROR(need_string(e, name.c_str()));
        options.push_back(e.string);
      }
    } else {
      return invalid_argument(name, " needs a string or a tuple of strings");
    }
    for (const auto& o : options) {
      const bool hit =
          o.size() <= s.size() &&
          (name == "startswith" ? s.compare(0, o.size(), o) == 0 : s.compare(s.size() - o.size(), o.size(), o) == 0);
      if (hit) return Value::of(true);
    }
    return Value::of(false);
  }
  if (name == "replace") {
    const Value* from = a.get(0, "old");
    const Value* to = a.get(1, "new");
    if (!from || !to || !from->is_string() || !to->is_string()) return invalid_argument("replace needs two strings");
    XONNX_ASSIGN_OR_RETURN(int64_t count, int_arg(a, 2, "count", -1));
    XONNX_ASSIGN_OR_RETURN(std::string replaced, replace(s, from->string, to->string, count));
    return Value::of(std::move(replaced));
  }
  if (name == "find" || name == "count") {
    const Value* sub = a.get(0, "sub");
    if (!sub || !sub->is_string()) return invalid_argument(name, " needs a string");
    if (name == "find") {
      const size_t hit = s.find(sub->string);
      return Value::of(hit == std::string::npos ? int64_t{-1}
                                                : static_cast<int64_t>(code_point_count(s.substr(0, hit))));
    }
    int64_t n = 0;
    for (size_t pos = 0; !sub->string.empty() && (pos = s.find(sub->string, pos)) != std::string::npos;
         pos += sub->string.size())
      ++n;
    return Value::of(n);
  }
  if (name == "join") {
    const Value* items = a.get(0, "iterable");
    if (!items || !items->is_list()) return invalid_argument("join needs a list");
    std::string out;
    for (size_t i = 0; i < items->list->size(); ++i) {
      XONNX_RETURN_IF_ERROR(need_string((*items->list)[i], "join"));
      if (i) XONNX_RETURN_IF_ERROR(append_bounded(out, s));
      XONNX_RETURN_IF_ERROR(append_bounded(out, (*items->list)[i].string));
    }
    return Value::of(std::move(out));
  }
  if (name == "isdigit" || name == "isspace" || name == "isalpha") {
    if (s.empty()) return Value::of(false);
    for (size_t i = 0; i < s.size();) {
      const uint32_t cp = utf8_next(s, i);
      const bool ok = name == "isdigit"   ? is_numeric(cp)
                      : name == "isspace" ? py_space(cp)
                                          : (is_alphanumeric(cp) && !is_numeric(cp));
      if (!ok) return Value::of(false);
    }
    return Value::of(true);
  }
  return invalid_argument("str has no method '", name, "'");
}

bool is_string_method(const std::string& n) {
  static const char* const kNames[] = {"strip",      "lstrip", "rstrip",     "upper",      "lower",    "title",
                                       "capitalize", "split",  "splitlines", "startswith", "endswith", "replace",
                                       "find",       "count",  "join",       "isdigit",    "isspace",  "isalpha"};
  return std::find(std::begin(kNames), std::end(kNames), n) != std::end(kNames);
}

}  // namespace

Result<Value> dict_method(const Value& self, const std::string& name, const CallArgs& a) {
  const Dict& d = *self.dict;
  if (name == "items" || name == "keys" || name == "values") {
    List out;
    for (const auto& [k, v] : d.items) {
      if (name == "items")
        out.push_back(Value::of(List{Value::of(k), v}));
      else
        out.push_back(name == "keys" ? Value::of(k) : v);
    }
    return Value::of(std::move(out));
  }
  if (name == "get") {
    const Value* key = a.get(0, "key");
    if (!key || !key->is_string()) return invalid_argument("get needs a string key");
    if (const Value* v = d.find(key->string)) return *v;
    const Value* fallback = a.get(1, "default");
    return fallback ? *fallback : Value::none();
  }
  return invalid_argument("dict has no method '", name, "'");
}

std::string strip_string(const std::string& s, bool left, bool right, const Value* chars) {
  const bool custom = chars && chars->is_string();
  const std::vector<uint32_t> set = custom ? code_points(chars->string) : std::vector<uint32_t>{};
  auto strip_cp = [&](uint32_t cp) {
    return custom ? std::find(set.begin(), set.end(), cp) != set.end() : py_space(cp);
  };
  const std::vector<uint32_t> cps = code_points(s);
  size_t b = 0, e = cps.size();
  if (left)
    while (b < e && strip_cp(cps[b])) ++b;
  if (right)
    while (e > b && strip_cp(cps[e - 1])) --e;
  return from_code_points(cps, b, e);
}

Value get_attribute(const Value& obj, const std::string& name) {
  if (obj.is_dict()) {
    if (const Value* v = obj.dict->find(name)) return *v;
    if (name == "items" || name == "keys" || name == "values" || name == "get") {
      return Value::callable([obj, name](const CallArgs& a) { return dict_method(obj, name, a); });
    }
    return Value();
  }
  if (obj.is_string() && is_string_method(name)) {
    return Value::callable([obj, name](const CallArgs& a) { return string_method(obj, name, a); });
  }
  return Value();
}

Value get_item(const Value& obj, const Value& key) {
  if (obj.is_dict() && key.is_string()) {
    const Value* v = obj.dict->find(key.string);
    return v ? *v : get_attribute(obj, key.string);
  }
  if ((obj.is_list() || obj.is_string()) && (key.kind == Value::Kind::kInt || key.kind == Value::Kind::kBool)) {
    int64_t i = key.kind == Value::Kind::kInt ? key.integer : key.boolean;
    if (obj.is_list()) {
      const auto n = static_cast<int64_t>(obj.list->size());
      if (i < 0) i += n;
      return i >= 0 && i < n ? (*obj.list)[static_cast<size_t>(i)] : Value();
    }
    const std::vector<uint32_t> cps = code_points(obj.string);
    const auto n = static_cast<int64_t>(cps.size());
    if (i < 0) i += n;
    return i >= 0 && i < n ? Value::of(from_code_points(cps, static_cast<size_t>(i), static_cast<size_t>(i) + 1))
                           : Value();
  }
  if (key.is_string()) return get_attribute(obj, key.string);
  return Value();
}

}  // namespace xonnx::genai::jinja
