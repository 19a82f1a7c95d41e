// Values of the chat-template interpreter: Jinja's (Python's) data model reduced to what chat
// templates use: undefined, none, bool, int, float, str, list, dict (insertion-ordered, string
// keys; a namespace() is a dict whose attributes may be assigned) and callables (macros,
// builtins, bound methods). Lists and dicts are shared by reference, as in Python.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/core/status.h"
#include "sdk/genai/tokenizer_json.h"

namespace xonnx::genai::jinja {

// Bounds of what one render may build: a template is code from a downloaded model folder, so
// its strings, lists and nesting are bounded instead of trusted (docs/genai.md).
constexpr size_t kMaxStringBytes = size_t{64} << 20;  // any string, the output included
constexpr size_t kMaxItems = size_t{1} << 20;         // any list
constexpr uint32_t kMaxNesting = kMaxJsonNesting;     // lists and dicts inside each other (and
                                                      // the variables, checked with json_nesting)

// Work of the deep walks (equal, less, repr, to_json) on this thread: a list holding one value
// twice, nested 60 deep, is small but has 2^60 paths. The renderer sets the budget per render;
// a walk that runs out stops early and the render fails. Unlimited outside a render.
void set_walk_budget(int64_t units);
bool walk_budget_exhausted();

// The errors of a string or a list past the bounds above.
Status check_string_size(size_t bytes);
Status check_items(size_t count);

struct Value;
using List = std::vector<Value>;
struct Dict;

struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
  // The keyword argument name, else positional[index], else null.
  const Value* get(size_t index, const char* name) const;
};
using Function = std::function<Result<Value>(const CallArgs&)>;

struct Value {
  enum class Kind : uint8_t { kUndefined, kNone, kBool, kInt, kFloat, kString, kList, kDict, kCallable };
  Kind kind = Kind::kUndefined;
  bool boolean = false;
  int64_t integer = 0;
  double real = 0;
  std::string string;
  std::shared_ptr<List> list;
  std::shared_ptr<Dict> dict;
  std::shared_ptr<Function> function;
  uint32_t list_nesting = 0;  // a list's depth: 1 + its deepest item's

  static Value none() {
    Value v;
    v.kind = Kind::kNone;
    return v;
  }
  static Value of(bool b) {
    Value v;
    v.kind = Kind::kBool;
    v.boolean = b;
    return v;
  }
  static Value of(int64_t i) {
    Value v;
    v.kind = Kind::kInt;
    v.integer = i;
    return v;
  }
  static Value of(double d) {
    Value v;
    v.kind = Kind::kFloat;
    v.real = d;
    return v;
  }
  static Value of(std::string s) {
    Value v;
    v.kind = Kind::kString;
    v.string = std::move(s);
    return v;
  }
  static Value of(const char* s) { return of(std::string(s)); }
  static Value of(List l) {
    Value v;
    v.kind = Kind::kList;
    v.list = std::make_shared<List>(std::move(l));
    v.list_nesting = 1;
    for (const Value& item : *v.list) v.list_nesting = std::max(v.list_nesting, item.nesting() + 1);
    return v;
  }
  static Value of(Dict d);
  static Value callable(Function f) {
    Value v;
    v.kind = Kind::kCallable;
    v.function = std::make_shared<Function>(std::move(f));
    return v;
  }
  static Value from_json(const OrderedJson& j);

  bool is_undefined() const { return kind == Kind::kUndefined; }
  bool is_none() const { return kind == Kind::kNone; }
  bool is_number() const { return kind == Kind::kInt || kind == Kind::kFloat || kind == Kind::kBool; }
  bool is_string() const { return kind == Kind::kString; }
  bool is_list() const { return kind == Kind::kList; }
  bool is_dict() const { return kind == Kind::kDict; }
  bool is_namespace() const;
  // How deep lists and dicts nest inside this value (0 for scalars). Exact: only namespaces are
  // mutable, and a namespace cannot be put inside a list or dict.
  uint32_t nesting() const;
  double as_double() const {
    return kind == Kind::kFloat ? real : kind == Kind::kBool ? boolean : static_cast<double>(integer);
  }

  bool truthy() const;
  // Python's str() (what {{ }} prints) and repr() (inside containers).
  std::string str() const;
  std::string repr() const;
  // json.dumps(ensure_ascii=False) with Python's default separators, or indent.
  std::string to_json(int indent = -1) const;
  const char* type_name() const;
};

struct Dict {
  std::vector<std::pair<std::string, Value>> items;
  bool is_namespace = false;
  uint32_t nesting = 1;  // 1 + the deepest item's (set() keeps it)
  const Value* find(const std::string& key) const;
  void set(const std::string& key, Value v);
};

inline Value Value::of(Dict d) {
  Value v;
  v.kind = Kind::kDict;
  v.dict = std::make_shared<Dict>(std::move(d));
  return v;
}
inline bool Value::is_namespace() const { return kind == Kind::kDict && dict->is_namespace; }
inline uint32_t Value::nesting() const {
  return kind == Kind::kList ? list_nesting : kind == Kind::kDict ? dict->nesting : 0;
}

// Python == (deep for lists and dicts; 1 == 1.0 == True).
bool equal(const Value& a, const Value& b);
// Python < for numbers, strings and lists; false with error set for other kinds.
Result<bool> less(const Value& a, const Value& b);

// Code point views of UTF-8 strings, for len(), indexing and slicing as Python does on str.
std::vector<uint32_t> code_points(const std::string& s);
std::string from_code_points(const std::vector<uint32_t>& cps, size_t begin, size_t end);
size_t code_point_count(const std::string& s);

}  // namespace xonnx::genai::jinja
