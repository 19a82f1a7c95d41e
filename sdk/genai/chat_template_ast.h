// The parsed form of a chat template (internal to chat_template_*.cc): expressions and
// statements with their line and column for error messages.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sdk/genai/chat_template_value.h"

namespace xonnx::genai::jinja {

struct Position {
  int line = 1, column = 1;
};

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  enum class Kind {
    kLiteral,
    kName,
    kAttribute,
    kIndex,
    kSlice,
    kCall,
    kFilter,
    kTest,
    kUnary,
    kBinary,
    kAnd,
    kOr,
    kNot,
    kConditional,
    kList,
    kDict,
    kTuple
  };
  Kind kind;
  Position pos;
  Value literal;                      // kLiteral
  std::string name;                   // kName, kAttribute, kFilter, kTest; operator of kUnary / kBinary
  std::vector<ExprPtr> children;      // operands, call arguments, list items, dict keys and values
  std::vector<std::string> keywords;  // kCall / kFilter / kTest: names of the trailing keyword args
  bool negated = false;               // kTest: "is not"
  bool has_slice_part[3] = {};        // kSlice: which of start, stop, step are given (children in order)
};

struct Node;
using Body = std::vector<std::unique_ptr<Node>>;

struct Node {
  enum class Kind { kText, kOutput, kIf, kFor, kSet, kSetBlock, kMacro, kBreak, kContinue, kScope };
  Kind kind;
  Position pos;
  std::string text;                  // kText; kSet / kSetBlock / kMacro target name
  std::string attribute;             // kSet: ns.attribute target
  std::vector<std::string> targets;  // kFor loop variables; kSet tuple targets; kMacro parameters
  std::vector<ExprPtr> exprs;        // kOutput: [value]; kIf: conditions; kFor: [iterable, filter?];
                                     // kSet: [value]; kMacro: parameter defaults (null if none)
  std::vector<Body> bodies;          // kIf: branches (+ else); kFor: [body, else]; kSetBlock,
                                     // kMacro, kScope: [body]
};

struct Template {
  Body body;
};

// Parses template source (Jinja2 with trim_blocks and lstrip_blocks, as transformers renders
// chat templates). Errors name the line and column.
Result<std::shared_ptr<Template>> parse_template(std::string_view source);

}  // namespace xonnx::genai::jinja
