#include "sdk/genai/chat_template_builtins.h"

#include <algorithm>
#include <cmath>
#include <cerrno>
#include <ctime>

#include "sdk/genai/unicode.h"

namespace xonnx::genai::jinja {
namespace {

// Appends to a string that must stay within kMaxStringBytes.
Status append_bounded(std::string& out, const std::string& s) {
  XONNX_RETURN_IF_ERROR(check_string_size(out.size() + s.size()));
  out += s;
  return Status::ok();
}

bool py_space(uint32_t cp) { return is_whitespace(cp) || (cp >= 0x1C && cp <= 0x1F); }

std::string map_chars(const std::string& s, uint32_t (*f)(uint32_t)) {
  std::string out;
  for (size_t i = 0; i < s.size();) utf8_append(out, f(utf8_next(s, i)));
  return out;
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

Status need_string(const Value& v, const char* what) {
  if (!v.is_string()) return invalid_argument(what, " needs a string, got ", v.type_name());
  return Status::ok();
}

Result<int64_t> int_arg(const CallArgs& a, size_t i, const char* name, int64_t fallback) {
  const Value* v = a.get(i, name);
  if (!v || v->is_none() || v->is_undefined()) return fallback;
  if (v->kind == Value::Kind::kInt) return v->integer;
  if (v->kind == Value::Kind::kBool) return static_cast<int64_t>(v->boolean);
  return invalid_argument("argument '", name, "' must be an integer, got ", v->type_name());
}

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

bool is_string_method(const std::string& n) {
  static const char* const kNames[] = {"strip",      "lstrip", "rstrip",     "upper",      "lower",    "title",
                                       "capitalize", "split",  "splitlines", "startswith", "endswith", "replace",
                                       "find",       "count",  "join",       "isdigit",    "isspace",  "isalpha"};
  return std::find(std::begin(kNames), std::end(kNames), n) != std::end(kNames);
}

// The items a filter or loop walks: list items, dict keys, string chars.
Result<List> iterate(const Value& v) {
  switch (v.kind) {
    case Value::Kind::kList: return *v.list;
    case Value::Kind::kUndefined: return List{};
    case Value::Kind::kDict: {
      List keys;
      for (const auto& kv : v.dict->items) keys.push_back(Value::of(kv.first));
      return keys;
    }
    case Value::Kind::kString: {
      XONNX_RETURN_IF_ERROR(check_items(code_point_count(v.string)));
      List chars;
      for (size_t i = 0; i < v.string.size();) {
        const size_t b = i;
        utf8_next(v.string, i);
        chars.push_back(Value::of(v.string.substr(b, i - b)));
      }
      return chars;
    }
    default: return invalid_argument("a ", v.type_name(), " is not iterable");
  }
}

// The attribute path "a.b" of an item (selectattr, map, sort, join).
Value attribute_path(const Value& item, const std::string& path) {
  Value v = item;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    const std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    const bool digits = !part.empty() && part.size() <= 18 && std::all_of(part.begin(), part.end(), ::isdigit);
    v = digits ? get_item(v, Value::of(static_cast<int64_t>(std::strtoll(part.c_str(), nullptr, 10))))
               : get_attribute(v, part);
    if (dot == std::string::npos) return v;
    start = dot + 1;
  }
}

CallArgs tail(const CallArgs& a, size_t from) {
  CallArgs t;
  for (size_t i = from; i < a.positional.size(); ++i) t.positional.push_back(a.positional[i]);
  t.keyword = a.keyword;
  return t;
}

Result<Value> select(const Value& v, const CallArgs& a, bool keep, bool by_attribute) {
  XONNX_ASSIGN_OR_RETURN(List items, iterate(v));
  List out;
  const size_t test_at = by_attribute ? 1 : 0;
  std::string attr;
  if (by_attribute) {
    if (a.positional.empty() || !a.positional[0].is_string())
      return invalid_argument("selectattr / rejectattr need an attribute name");
    attr = a.positional[0].string;
  }
  for (const Value& item : items) {
    const Value subject = by_attribute ? attribute_path(item, attr) : item;
    bool pass;
    if (a.positional.size() <= test_at) {
      pass = subject.truthy();
    } else {
      if (!a.positional[test_at].is_string()) return invalid_argument("the test must be named by a string");
      XONNX_ASSIGN_OR_RETURN(pass, apply_test(a.positional[test_at].string, subject, tail(a, test_at + 1)));
    }
    if (pass == keep) out.push_back(item);
  }
  return Value::of(std::move(out));
}

Result<Value> sort_values(List items, bool reverse, const std::string& attribute) {
  Status failure = Status::ok();
  std::stable_sort(items.begin(), items.end(), [&](const Value& x, const Value& y) {
    const Value a = attribute.empty() ? x : attribute_path(x, attribute);
    const Value b = attribute.empty() ? y : attribute_path(y, attribute);
    // Jinja sorts strings case-insensitively by default.
    const Value la = a.is_string() ? Value::of(lower(a.string)) : a,
                lb = b.is_string() ? Value::of(lower(b.string)) : b;
    auto r = reverse ? less(lb, la) : less(la, lb);
    if (!r.is_ok()) {
      failure = r.status();
      return false;
    }
    return r.value();
  });
  XONNX_RETURN_IF_ERROR(failure);
  return Value::of(std::move(items));
}

}  // namespace

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

Result<Value> apply_filter(const std::string& name, const Value& v, const CallArgs& a) {
  if (name == "trim") {
    if (v.is_undefined()) return Value::of("");
    return Value::of(strip_string(v.str(), true, true, a.get(0, "chars")));
  }
  if (name == "length" || name == "count") {
    if (v.is_string()) return Value::of(static_cast<int64_t>(code_point_count(v.string)));
    if (v.is_list()) return Value::of(static_cast<int64_t>(v.list->size()));
    if (v.is_dict()) return Value::of(static_cast<int64_t>(v.dict->items.size()));
    if (v.is_undefined()) return Value::of(int64_t{0});
    return invalid_argument("length of a ", v.type_name());
  }
  if (name == "upper") return Value::of(upper(v.str()));
  if (name == "lower") return Value::of(lower(v.str()));
  if (name == "capitalize") return Value::of(capitalize(v.str()));
  if (name == "title") return Value::of(title(v.str()));
  if (name == "string") return Value::of(v.str());
  if (name == "safe" || name == "e" || name == "escape" || name == "forceescape") {
    if (name == "safe") return v;
    std::string escaped = v.str();
    for (const auto& [from, to] : {std::pair<const char*, const char*>{"&", "&amp;"},
                                   {"<", "&lt;"},
                                   {">", "&gt;"},
                                   {"\"", "&#34;"},
                                   {"'", "&#39;"}}) {
      XONNX_ASSIGN_OR_RETURN(escaped, replace(escaped, from, to, -1));
    }
    return Value::of(std::move(escaped));
  }
  if (name == "default" || name == "d") {
    const Value* fallback = a.get(0, "default_value");
    const Value* boolean = a.get(1, "boolean");
    const bool use = v.is_undefined() || (boolean && boolean->truthy() && !v.truthy());
    return use ? (fallback ? *fallback : Value::of("")) : v;
  }
  if (name == "tojson") {
    XONNX_ASSIGN_OR_RETURN(int64_t indent, int_arg(a, 0, "indent", -1));
    return Value::of(v.to_json(static_cast<int>(std::min<int64_t>(indent, 64))));
  }
  if (name == "join") {
    XONNX_ASSIGN_OR_RETURN(List items, iterate(v));
    const Value* sep = a.get(0, "d");
    const Value* attr = a.get(1, "attribute");
    const std::string separator = sep ? sep->str() : "";
    std::string out;
    for (size_t i = 0; i < items.size(); ++i) {
      if (i) XONNX_RETURN_IF_ERROR(append_bounded(out, separator));
      XONNX_RETURN_IF_ERROR(
          append_bounded(out, (attr && attr->is_string() ? attribute_path(items[i], attr->string) : items[i]).str()));
    }
    return Value::of(std::move(out));
  }
  if (name == "first" || name == "last") {
    XONNX_ASSIGN_OR_RETURN(List items, iterate(v));
    if (items.empty()) return Value();
    return name == "first" ? items.front() : items.back();
  }
  if (name == "list") {
    XONNX_ASSIGN_OR_RETURN(List items, iterate(v));
    return Value::of(std::move(items));
  }
  if (name == "reverse") {
    if (v.is_string()) {
      std::vector<uint32_t> cps = code_points(v.string);
      std::reverse(cps.begin(), cps.end());
      return Value::of(from_code_points(cps, 0, cps.size()));
    }
    XONNX_ASSIGN_OR_RETURN(List items, iterate(v));
    std::reverse(items.begin(), items.end());
    return Value::of(std::move(items));
  }
  if (name == "int") {
    if (v.kind == Value::Kind::kInt) return v;
    if (v.kind == Value::Kind::kFloat) {  // Python raises on nan and inf; ours also past 64 bits
      if (!(std::fabs(v.real) < 9223372036854775808.0)) return invalid_argument("int of ", v.str());
      return Value::of(static_cast<int64_t>(v.real));
    }
    if (v.kind == Value::Kind::kBool) return Value::of(static_cast<int64_t>(v.boolean));
    if (v.is_string()) {
      char* end = nullptr;
      const std::string s = strip_string(v.string, true, true, nullptr);
      errno = 0;
      const long long x = std::strtoll(s.c_str(), &end, 10);
      if (!s.empty() && end == s.c_str() + s.size()) {
        if (errno == ERANGE) return invalid_argument("int of '", s, "': does not fit in 64 bits");
        return Value::of(static_cast<int64_t>(x));
      }
    }
    const Value* fallback = a.get(0, "default");
    return fallback ? *fallback : Value::of(int64_t{0});
  }
  if (name == "float") {
    if (v.is_number()) return Value::of(v.as_double());
    if (v.is_string()) {
      char* end = nullptr;
      const std::string s = strip_string(v.string, true, true, nullptr);
      const double x = std::strtod(s.c_str(), &end);
      if (!s.empty() && end == s.c_str() + s.size()) return Value::of(x);
    }
    const Value* fallback = a.get(0, "default");
    return fallback ? *fallback : Value::of(0.0);
  }
  if (name == "abs") {
    if (v.kind == Value::Kind::kInt) {
      if (v.integer == INT64_MIN) return invalid_argument("integer overflow in abs");
      return Value::of(v.integer < 0 ? -v.integer : v.integer);
    }
    if (v.is_number()) return Value::of(std::fabs(v.as_double()));
    return invalid_argument("abs of a ", v.type_name());
  }
  if (name == "round") {
    if (!v.is_number()) return invalid_argument("round of a ", v.type_name());
    XONNX_ASSIGN_OR_RETURN(int64_t precision, int_arg(a, 0, "precision", 0));
    const double scale = std::pow(10.0, static_cast<double>(precision));
    return Value::of(std::round(v.as_double() * scale) / scale);
  }
  if (name == "sum" || name == "min" || name == "max") {
    XONNX_ASSIGN_OR_RETURN(List items, iterate(v));
    if (name == "sum") {
      Value total = Value::of(int64_t{0});
      for (const Value& e : items) {
        if (!e.is_number()) return invalid_argument("sum of a ", e.type_name());
        if (total.kind == Value::Kind::kInt && e.kind == Value::Kind::kInt) {
          int64_t sum = 0;
          if (__builtin_add_overflow(total.integer, e.integer, &sum))
            return invalid_argument("integer overflow in sum");
          total = Value::of(sum);
        } else {
          total = Value::of(total.as_double() + e.as_double());
        }
      }
      return total;
    }
    if (items.empty()) return Value();
    Value best = items[0];
    for (const Value& e : items) {
      XONNX_ASSIGN_OR_RETURN(bool lt, less(e, best));
      if (name == "min" ? lt : (!lt && !equal(e, best))) best = e;
    }
    return best;
  }
  if (name == "sort") {
    XONNX_ASSIGN_OR_RETURN(List items, iterate(v));
    const Value* rev = a.get(0, "reverse");
    const Value* attr = a.get(2, "attribute");
    return sort_values(std::move(items), rev && rev->truthy(), attr && attr->is_string() ? attr->string : "");
  }
  if (name == "unique") {
    XONNX_ASSIGN_OR_RETURN(List items, iterate(v));
    List out;
    for (const Value& e : items) {
      if (std::none_of(out.begin(), out.end(), [&](const Value& o) { return equal(o, e); })) out.push_back(e);
      // Quadratic: once the walk budget is spent, equal() answers false at once, so stop.
      if (walk_budget_exhausted()) return invalid_argument("unique takes too many steps");
    }
    return Value::of(std::move(out));
  }
  if (name == "items") {
    if (v.is_undefined()) return Value::of(List{});
    if (!v.is_dict()) return invalid_argument("items of a ", v.type_name());
    return dict_method(v, "items", a);
  }
  if (name == "dictsort") {
    if (!v.is_dict()) return invalid_argument("dictsort of a ", v.type_name());
    XONNX_ASSIGN_OR_RETURN(Value items, dict_method(v, "items", a));
    return sort_values(*items.list, false, "0");
  }
  if (name == "select" || name == "reject") return select(v, a, name == "select", false);
  if (name == "selectattr" || name == "rejectattr") return select(v, a, name == "selectattr", true);
  if (name == "map") {
    XONNX_ASSIGN_OR_RETURN(List items, iterate(v));
    List out;
    const Value* attr = nullptr;
    for (const auto& [k, val] : a.keyword) {
      if (k == "attribute") attr = &val;
    }
    for (const Value& item : items) {
      if (attr) {
        Value got = attribute_path(item, attr->str());
        if (got.is_undefined()) {
          const Value* fallback = a.get(99, "default");
          if (fallback) got = *fallback;
        }
        out.push_back(got);
      } else {
        if (a.positional.empty() || !a.positional[0].is_string())
          return invalid_argument("map needs a filter name or attribute=");
        XONNX_ASSIGN_OR_RETURN(Value mapped, apply_filter(a.positional[0].string, item, tail(a, 1)));
        out.push_back(mapped);
      }
    }
    return Value::of(std::move(out));
  }
  if (name == "replace") {
    const Value* from = a.get(0, "old");
    const Value* to = a.get(1, "new");
    if (!from || !to) return invalid_argument("replace needs two arguments");
    XONNX_ASSIGN_OR_RETURN(int64_t count, int_arg(a, 2, "count", -1));
    XONNX_ASSIGN_OR_RETURN(std::string replaced, replace(v.str(), from->str(), to->str(), count));
    return Value::of(std::move(replaced));
  }
  if (name == "indent") {
    XONNX_ASSIGN_OR_RETURN(int64_t width, int_arg(a, 0, "width", 4));
    const Value* first = a.get(1, "first");
    const Value* blank = a.get(2, "blank");
    const std::string pad(static_cast<size_t>(std::clamp<int64_t>(width, 0, 256)), ' ');
    const std::string s = v.str();
    std::string out;
    size_t start = 0;
    for (bool first_line = true;; first_line = false) {
      const size_t nl = s.find('\n', start);
      const std::string line = s.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
      if ((!first_line || (first && first->truthy())) && (!line.empty() || (blank && blank->truthy()))) {
        XONNX_RETURN_IF_ERROR(append_bounded(out, pad));
      }
      XONNX_RETURN_IF_ERROR(append_bounded(out, line));
      if (nl == std::string::npos) break;
      XONNX_RETURN_IF_ERROR(append_bounded(out, "\n"));
      start = nl + 1;
    }
    return Value::of(out);
  }
  return invalid_argument("unsupported filter '", name, "'");
}

Result<bool> apply_test(const std::string& name, const Value& v, const CallArgs& a) {
  const Value* other = a.get(0, "value");
  if (name == "defined") return !v.is_undefined();
  if (name == "undefined") return v.is_undefined();
  if (name == "none") return v.is_none();
  if (name == "boolean") return v.kind == Value::Kind::kBool;
  if (name == "true") return v.kind == Value::Kind::kBool && v.boolean;
  if (name == "false") return v.kind == Value::Kind::kBool && !v.boolean;
  if (name == "integer") return v.kind == Value::Kind::kInt;
  if (name == "float") return v.kind == Value::Kind::kFloat;
  if (name == "number") return v.kind == Value::Kind::kInt || v.kind == Value::Kind::kFloat;
  if (name == "string") return v.is_string();
  if (name == "mapping") return v.is_dict();
  if (name == "iterable") return v.is_list() || v.is_dict() || v.is_string();
  if (name == "sequence") return v.is_list() || v.is_dict() || v.is_string();
  if (name == "callable") return v.kind == Value::Kind::kCallable;
  if (name == "lower") return v.is_string() && lower(v.string) == v.string;
  if (name == "upper") return v.is_string() && upper(v.string) == v.string;
  if (name == "odd" || name == "even") {
    if (v.kind != Value::Kind::kInt) return invalid_argument(name, " needs an integer");
    return (v.integer % 2 != 0) == (name == "odd");
  }
  if (!other) return invalid_argument("test '", name, "' needs an argument");
  if (name == "equalto" || name == "eq" || name == "==" || name == "sameas") return equal(v, *other);
  if (name == "ne" || name == "!=") return !equal(v, *other);
  if (name == "lt" || name == "<") return less(v, *other);
  if (name == "gt" || name == ">") return less(*other, v);
  if (name == "le" || name == "<=") {
    XONNX_ASSIGN_OR_RETURN(bool gt, less(*other, v));
    return !gt;
  }
  if (name == "ge" || name == ">=") {
    XONNX_ASSIGN_OR_RETURN(bool lt, less(v, *other));
    return !lt;
  }
  if (name == "in") {
    if (other->is_string() && v.is_string()) return other->string.find(v.string) != std::string::npos;
    if (other->is_dict() && v.is_string()) return other->dict->find(v.string) != nullptr;
    if (other->is_list())
      return std::any_of(other->list->begin(), other->list->end(), [&](const Value& e) { return equal(e, v); });
    return invalid_argument("'in' needs a string, list or dict on the right");
  }
  if (name == "divisibleby") {
    if (v.kind != Value::Kind::kInt || other->kind != Value::Kind::kInt || other->integer == 0) {
      return invalid_argument("divisibleby needs integers");
    }
    return other->integer == -1 || v.integer % other->integer == 0;  // INT64_MIN % -1 traps
  }
  return invalid_argument("unsupported test '", name, "'");
}

Value global_function(const std::string& name) {
  if (name == "range") {
    return Value::callable([](const CallArgs& a) -> Result<Value> {
      int64_t start = 0, stop = 0, step = 1;
      for (const Value& p : a.positional) {
        if (p.kind != Value::Kind::kInt) return invalid_argument("range needs integers");
      }
      if (a.positional.size() == 1)
        stop = a.positional[0].integer;
      else if (a.positional.size() >= 2)
        start = a.positional[0].integer, stop = a.positional[1].integer;
      if (a.positional.size() == 3) step = a.positional[2].integer;
      if (a.positional.empty() || a.positional.size() > 3 || step == 0)
        return invalid_argument("range(start, stop, step)");
      List out;
      for (int64_t i = start; step > 0 ? i < stop : i > stop;) {
        if (out.size() >= kMaxItems) return invalid_argument("range longer than ", kMaxItems);
        out.push_back(Value::of(i));
        if (__builtin_add_overflow(i, step, &i)) break;  // past stop
      }
      return Value::of(std::move(out));
    });
  }
  if (name == "namespace" || name == "dict") {
    const bool ns = name == "namespace";
    return Value::callable([ns](const CallArgs& a) -> Result<Value> {
      Dict d;
      d.is_namespace = ns;
      for (const Value& p : a.positional) {  // namespace(other_dict)
        if (!p.is_dict()) return invalid_argument("positional arguments must be dicts");
        for (const auto& [k, v] : p.dict->items) d.set(k, v);
      }
      for (const auto& [k, v] : a.keyword) {
        // Namespaces stay outside lists and dicts (chat_template.cc, refuse_namespace).
        if (v.is_namespace()) return invalid_argument("a namespace() cannot be put inside a dict or namespace");
        d.set(k, v);
      }
      return Value::of(std::move(d));
    });
  }
  if (name == "raise_exception") {
    return Value::callable([](const CallArgs& a) -> Result<Value> {
      return invalid_argument("the template raised an exception: ",
                              a.positional.empty() ? std::string() : a.positional[0].str());
    });
  }
  if (name == "strftime_now") {
    return Value::callable([](const CallArgs& a) -> Result<Value> {
      if (a.positional.empty() || !a.positional[0].is_string())
        return invalid_argument("strftime_now needs a format string");
      const std::time_t now = std::time(nullptr);
      std::tm tm{};
      localtime_r(&now, &tm);
      char buf[256];
      const size_t n = std::strftime(buf, sizeof buf, a.positional[0].string.c_str(), &tm);
      return Value::of(std::string(buf, n));
    });
  }
  return Value();
}

}  // namespace xonnx::genai::jinja
