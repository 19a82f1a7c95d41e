// Template bytes (a model folder's chat_template, as downloaded) -> parser -> one render over
// a conversation with a system prompt, tool calls and a tool result, as `xonnx serve` renders.
#include <string>

#include "sdk/genai/chat_template.h"
#include "tests/fuzz/fuzz_target.h"

XONNX_FUZZ_TARGET(fuzz_chat_template) {
  using namespace xonnx::genai;
  auto parsed = ChatTemplate::parse(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!parsed.is_ok()) return 0;
  static const OrderedJson context = OrderedJson::parse(R"({
    "messages": [
      {"role": "system", "content": "You are terse."},
      {"role": "user", "content": "Weather in Oslo? \u00e9\u4e2d"},
      {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function",
        "function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}]},
      {"role": "tool", "tool_call_id": "c1", "content": "-3 C"},
      {"role": "user", "content": [{"type": "text", "text": "And tomorrow?"}]}
    ],
    "tools": [{"type": "function", "function": {"name": "get_weather", "description": "d",
      "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}],
    "add_generation_prompt": true,
    "bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>"
  })");
  (void)parsed.value().render(context);
  return 0;
}
