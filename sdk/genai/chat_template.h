// Chat templates: the Jinja2 template in tokenizer_config.json's "chat_template" rendered as
// transformers' apply_chat_template renders it (trim_blocks, lstrip_blocks, messages, tools,
// add_generation_prompt, the special tokens, raise_exception, strftime_now). The interpreter
// covers the Jinja subset real chat templates use; docs/genai.md lists it. Templates with
// other constructs fail to parse with the line and column, never crash.
//
// A ChatTemplate is immutable after parse() and may render from several threads at once.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "runtime/core/status.h"
#include "sdk/genai/tokenizer_json.h"

namespace xonnx::genai {

namespace jinja {
struct Template;
}
struct TokenizerConfig;

class ChatTemplate {
 public:
  static Result<ChatTemplate> parse(std::string_view source);
  // Renders with the variables of context (a JSON object).
  Result<std::string> render(const OrderedJson& context) const;

 private:
  std::shared_ptr<const jinja::Template> template_;
};

struct ChatOptions {
  bool add_generation_prompt = true;
  OrderedJson tools;                          // a JSON array of tool schemas, or null
  OrderedJson extra = OrderedJson::object();  // more template variables (enable_thinking, ...)
  std::string template_name;                  // a named template of the config; empty: "default" (or
                                              // "tool_use" when tools are given)
  std::string template_source;                // use this template instead of the config's
};

// transformers' apply_chat_template(messages, tokenize=False): messages is a JSON array of
// {"role", "content", ...} objects.
Result<std::string> apply_chat_template(const TokenizerConfig& config, const OrderedJson& messages,
                                        const ChatOptions& options = {});

}  // namespace xonnx::genai
