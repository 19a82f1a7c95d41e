// Filters, tests and global functions of the chat-template interpreter (docs/genai.md).
#include "sdk/genai/chat_template_builtins.h"

#include <algorithm>
#include <cmath>
#include <cerrno>
#include <ctime>

#include "sdk/genai/chat_template_methods.h"
#include "sdk/genai/unicode.h"

namespace xonnx::genai::jinja {
namespace {

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
