// Filters, tests, attributes / methods and global functions of the chat-template interpreter
// (internal to chat_template_*.cc). docs/genai.md lists them.
#pragma once

#include <string>

#include "sdk/genai/chat_template_value.h"

namespace xonnx::genai::jinja {

// value|name(args). Errors are plain messages; the caller adds the position.
Result<Value> apply_filter(const std::string& name, const Value& value, const CallArgs& args);
// value is name(args).
Result<bool> apply_test(const std::string& name, const Value& value, const CallArgs& args);
// obj.name: a dict item, or a str / dict method bound to obj; undefined otherwise.
Value get_attribute(const Value& obj, const std::string& name);
// obj[key] for lists, strings and dicts; undefined when absent.
Value get_item(const Value& obj, const Value& key);
// The global functions: range, namespace, dict, raise_exception, strftime_now.
Value global_function(const std::string& name);

// Python's str.strip family over Unicode whitespace, or over the chars of `chars`.
std::string strip_string(const std::string& s, bool left, bool right, const Value* chars);

}  // namespace xonnx::genai::jinja
