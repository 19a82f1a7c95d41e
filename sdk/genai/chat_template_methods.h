// Python's str and dict methods of the chat-template interpreter, obj.name and obj[key], and the
// string operations its filters share with them (internal to chat_template_*.cc). docs/genai.md
// lists the methods.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "sdk/genai/chat_template_value.h"

namespace xonnx::genai::jinja {

// obj.name: a dict item, or a str / dict method bound to obj; undefined otherwise.
Value get_attribute(const Value& obj, const std::string& name);
// obj[key] for lists, strings and dicts; undefined when absent.
Value get_item(const Value& obj, const Value& key);
// d.items(), d.keys(), d.values(), d.get(key[, default]).
Result<Value> dict_method(const Value& self, const std::string& name, const CallArgs& args);

// Python's str.strip family over Unicode whitespace, or over the chars of `chars`.
std::string strip_string(const std::string& s, bool left, bool right, const Value* chars);
// Python's str.upper, lower, capitalize and title over Unicode.
std::string upper(const std::string& s);
std::string lower(const std::string& s);
std::string capitalize(const std::string& s);
std::string title(const std::string& s);
// Python's str.replace (count < 0: every occurrence), within kMaxStringBytes.
Result<std::string> replace(const std::string& s, const std::string& from, const std::string& to, int64_t count);
// Appends to a string that must stay within kMaxStringBytes.
Status append_bounded(std::string& out, const std::string& s);
// Integer argument i (or keyword `name`); `fallback` when absent, none or undefined.
Result<int64_t> int_arg(const CallArgs& args, size_t i, const char* name, int64_t fallback);

}  // namespace xonnx::genai::jinja
