#include "sdk/genai/chat_template_value.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "sdk/genai/unicode.h"

namespace xonnx::genai::jinja {

namespace {
thread_local int64_t walk_budget = INT64_MAX;
// One node of a deep walk; false once the budget is used up.
bool spend() {
  if (walk_budget <= 0) return false;
  --walk_budget;
  return true;
}
}  // namespace

void set_walk_budget(int64_t units) { walk_budget = units; }
bool walk_budget_exhausted() { return walk_budget <= 0; }

Status check_string_size(size_t bytes) {
  if (bytes > kMaxStringBytes) return invalid_argument("a string longer than 64 MiB");
  return Status::ok();
}

Status check_items(size_t count) {
  if (count > kMaxItems) return invalid_argument("a list of more than ", kMaxItems, " items");
  return Status::ok();
}

const Value* CallArgs::get(size_t index, const char* name) const {
  for (const auto& [k, v] : keyword) {
    if (k == name) return &v;
  }
  return index < positional.size() ? &positional[index] : nullptr;
}

const Value* Dict::find(const std::string& key) const {
  for (const auto& [k, v] : items) {
    if (k == key) return &v;
  }
  return nullptr;
}

void Dict::set(const std::string& key, Value v) {
  nesting = std::max(nesting, v.nesting() + 1);
  for (auto& [k, old] : items) {
    if (k == key) {
      old = std::move(v);
      return;
    }
  }
  items.emplace_back(key, std::move(v));
}

Value Value::from_json(const OrderedJson& j) {
  switch (j.type()) {
    case OrderedJson::value_t::null: return none();
    case OrderedJson::value_t::boolean: return of(j.get<bool>());
    case OrderedJson::value_t::number_integer: return of(static_cast<int64_t>(j.get<int64_t>()));
    case OrderedJson::value_t::number_unsigned: return of(static_cast<int64_t>(j.get<uint64_t>()));
    case OrderedJson::value_t::number_float: return of(j.get<double>());
    case OrderedJson::value_t::string: return of(j.get<std::string>());
    case OrderedJson::value_t::array: {
      List l;
      l.reserve(j.size());
      for (const OrderedJson& e : j) l.push_back(from_json(e));
      return of(std::move(l));
    }
    case OrderedJson::value_t::object: {
      Dict d;
      for (auto it = j.begin(); it != j.end(); ++it) d.items.emplace_back(it.key(), from_json(*it));
      return of(std::move(d));
    }
    default: return Value();
  }
}

bool Value::truthy() const {
  switch (kind) {
    case Kind::kUndefined:
    case Kind::kNone: return false;
    case Kind::kBool: return boolean;
    case Kind::kInt: return integer != 0;
    case Kind::kFloat: return real != 0;
    case Kind::kString: return !string.empty();
    case Kind::kList: return !list->empty();
    case Kind::kDict: return !dict->items.empty();
    case Kind::kCallable: return true;
  }
  return false;
}

const char* Value::type_name() const {
  switch (kind) {
    case Kind::kUndefined: return "undefined";
    case Kind::kNone: return "none";
    case Kind::kBool: return "bool";
    case Kind::kInt: return "int";
    case Kind::kFloat: return "float";
    case Kind::kString: return "string";
    case Kind::kList: return "list";
    case Kind::kDict: return "dict";
    case Kind::kCallable: return "callable";
  }
  return "?";
}

// Python's float repr: the shortest digits that read back the same, in fixed notation for
// exponents -4..15 and scientific otherwise.
static std::string float_repr(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  if (x == 0) return std::signbit(x) ? "-0.0" : "0.0";
  char buf[64];
  int p = 1;
  for (; p < 17; ++p) {
    std::snprintf(buf, sizeof buf, "%.*e", p - 1, x);
    if (std::strtod(buf, nullptr) == x) break;
  }
  std::snprintf(buf, sizeof buf, "%.*e", p - 1, x);
  std::string s(buf);
  const bool negative = s[0] == '-';
  if (negative) s.erase(0, 1);
  const size_t epos = s.find('e');
  const int exp = std::atoi(s.c_str() + epos + 1);
  std::string digits;
  for (size_t i = 0; i < epos; ++i) {
    if (s[i] != '.') digits += s[i];
  }
  std::string out = negative ? "-" : "";
  if (exp >= -4 && exp < 16) {
    if (exp < 0) {
      out += "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
    } else if (static_cast<size_t>(exp) + 1 >= digits.size()) {
      out += digits + std::string(static_cast<size_t>(exp) + 1 - digits.size(), '0') + ".0";
    } else {
      out += digits.substr(0, static_cast<size_t>(exp) + 1) + "." + digits.substr(static_cast<size_t>(exp) + 1);
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  std::snprintf(buf, sizeof buf, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
  return out + buf;
}

static void json_string(std::string& out, const std::string& s) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

static void json_dump(std::string& out, const Value& v, int indent, int depth) {
  if (!spend() || out.size() > kMaxStringBytes) return;  // the caller sees the budget or the length
  auto newline = [&](int d) {
    if (indent < 0) return;
    out += '\n';
    out.append(static_cast<size_t>(indent * d), ' ');
  };
  switch (v.kind) {
    case Value::Kind::kUndefined:
    case Value::Kind::kNone:
    case Value::Kind::kCallable: out += "null"; return;
    case Value::Kind::kBool: out += v.boolean ? "true" : "false"; return;
    case Value::Kind::kInt: out += std::to_string(v.integer); return;
    case Value::Kind::kFloat:
      out += std::isnan(v.real)   ? "NaN"
             : std::isinf(v.real) ? (v.real > 0 ? "Infinity" : "-Infinity")
                                  : float_repr(v.real);
      return;
    case Value::Kind::kString: json_string(out, v.string); return;
    case Value::Kind::kList: {
      if (v.list->empty()) {
        out += "[]";
        return;
      }
      out += '[';
      for (size_t i = 0; i < v.list->size(); ++i) {
        if (i) out += indent < 0 ? ", " : ",";
        newline(depth + 1);
        json_dump(out, (*v.list)[i], indent, depth + 1);
      }
      newline(depth);
      out += ']';
      return;
    }
    case Value::Kind::kDict: {
      if (v.dict->items.empty()) {
        out += "{}";
        return;
      }
      out += '{';
      bool first = true;
      for (const auto& [k, e] : v.dict->items) {
        if (!first) out += indent < 0 ? ", " : ",";
        first = false;
        newline(depth + 1);
        json_string(out, k);
        out += ": ";
        json_dump(out, e, indent, depth + 1);
      }
      newline(depth);
      out += '}';
      return;
    }
  }
}

std::string Value::to_json(int indent) const {
  std::string out;
  json_dump(out, *this, indent, 0);
  return out;
}

static std::string string_repr(const std::string& s) {
  const bool has_single = s.find('\'') != std::string::npos, has_double = s.find('"') != std::string::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  for (unsigned char c : s) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\t')
      out += "\\t";
    else if (c == static_cast<unsigned char>(quote))
      out += std::string("\\") + quote;
    else if (c < 0x20 || c == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + quote;
}

static void repr_into(std::string& out, const Value& v) {
  if (!spend() || out.size() > kMaxStringBytes) return;  // the caller sees the budget or the length
  switch (v.kind) {
    case Value::Kind::kString: out += string_repr(v.string); return;
    case Value::Kind::kList:
      out += '[';
      for (size_t i = 0; i < v.list->size(); ++i) {
        if (i) out += ", ";
        repr_into(out, (*v.list)[i]);
      }
      out += ']';
      return;
    case Value::Kind::kDict: {
      out += '{';
      bool first = true;
      for (const auto& [k, e] : v.dict->items) {
        out += (first ? "" : ", ") + string_repr(k) + ": ";
        repr_into(out, e);
        first = false;
      }
      out += '}';
      return;
    }
    default: out += v.str();
  }
}

std::string Value::repr() const {
  std::string out;
  repr_into(out, *this);
  return out;
}

std::string Value::str() const {
  switch (kind) {
    case Kind::kUndefined: return "";
    case Kind::kNone: return "None";
    case Kind::kBool: return boolean ? "True" : "False";
    case Kind::kInt: return std::to_string(integer);
    case Kind::kFloat: return float_repr(real);
    case Kind::kString: return string;
    case Kind::kCallable: return "<function>";
    default: return repr();
  }
}

bool equal(const Value& a, const Value& b) {
  if (!spend()) return false;  // the renderer fails the render
  if (a.is_number() && b.is_number()) {
    if (a.kind == Value::Kind::kFloat || b.kind == Value::Kind::kFloat) return a.as_double() == b.as_double();
    const int64_t x = a.kind == Value::Kind::kBool ? a.boolean : a.integer;
    const int64_t y = b.kind == Value::Kind::kBool ? b.boolean : b.integer;
    return x == y;
  }
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Value::Kind::kUndefined:
    case Value::Kind::kNone: return true;
    case Value::Kind::kString: return a.string == b.string;
    case Value::Kind::kList: {
      if (a.list == b.list) return true;
      if (a.list->size() != b.list->size()) return false;
      for (size_t i = 0; i < a.list->size(); ++i) {
        if (!equal((*a.list)[i], (*b.list)[i])) return false;
      }
      return true;
    }
    case Value::Kind::kDict: {
      if (a.dict == b.dict) return true;
      if (a.dict->items.size() != b.dict->items.size()) return false;
      for (const auto& [k, v] : a.dict->items) {
        const Value* other = b.dict->find(k);
        if (!other || !equal(v, *other)) return false;
      }
      return true;
    }
    case Value::Kind::kCallable: return a.function == b.function;
    default: return false;
  }
}

Result<bool> less(const Value& a, const Value& b) {
  if (!spend()) return invalid_argument("comparison takes too many steps");
  if (a.is_number() && b.is_number()) return a.as_double() < b.as_double();
  if (a.is_string() && b.is_string()) return a.string < b.string;  // UTF-8 byte order = code point order
  if (a.is_list() && b.is_list()) {
    for (size_t i = 0; i < a.list->size() && i < b.list->size(); ++i) {
      if (equal((*a.list)[i], (*b.list)[i])) continue;
      return less((*a.list)[i], (*b.list)[i]);
    }
    return a.list->size() < b.list->size();
  }
  return invalid_argument("cannot compare ", a.type_name(), " with ", b.type_name());
}

std::vector<uint32_t> code_points(const std::string& s) {
  std::vector<uint32_t> out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) out.push_back(utf8_next(s, i));
  return out;
}

std::string from_code_points(const std::vector<uint32_t>& cps, size_t begin, size_t end) {
  std::string out;
  for (size_t i = begin; i < end && i < cps.size(); ++i) utf8_append(out, cps[i]);
  return out;
}

size_t code_point_count(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

}  // namespace xonnx::genai::jinja
