// Filters, tests and global functions of the chat-template interpreter (internal to
// chat_template_*.cc; attributes and methods: chat_template_methods.h). docs/genai.md lists them.
#pragma once

#include <string>

#include "sdk/genai/chat_template_value.h"

namespace xonnx::genai::jinja {

// value|name(args). Errors are plain messages; the caller adds the position.
Result<Value> apply_filter(const std::string& name, const Value& value, const CallArgs& args);
// value is name(args).
Result<bool> apply_test(const std::string& name, const Value& value, const CallArgs& args);
// The global functions: range, namespace, dict, raise_exception, strftime_now.
Value global_function(const std::string& name);

}  // namespace xonnx::genai::jinja
