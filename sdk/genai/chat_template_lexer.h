// Lexer of chat templates (internal): text and tag tokens, with Jinja2's whitespace control
// ({%- -%} {{- -}} {#- -#}, {%+ +%}) and the trim_blocks / lstrip_blocks settings
// transformers renders chat templates with.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sdk/genai/chat_template_ast.h"

namespace xonnx::genai::jinja {

struct Token {
  enum class Type { kText, kVarBegin, kVarEnd, kBlockBegin, kBlockEnd, kName, kString, kInt, kFloat, kOperator, kEnd };
  Type type;
  std::string text;  // text, name, string value or operator
  int64_t integer = 0;
  double real = 0;
  Position pos;
};

Result<std::vector<Token>> lex_template(std::string_view source);

// "line L, column C: " for error messages.
std::string where(const Position& pos);

}  // namespace xonnx::genai::jinja
