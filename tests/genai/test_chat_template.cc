// Chat templates: Jinja2 semantics as Python renders them (transformers' settings:
// trim_blocks, lstrip_blocks), the constructs transformers.js does not implement (so the
// cross-check cannot cover them), and errors with line and column.
#include <gtest/gtest.h>

#include "sdk/genai/chat_template.h"
#include "sdk/genai/tokenizer.h"

namespace xonnx::genai {
namespace {

std::string render(const std::string& source, const OrderedJson& context = OrderedJson::object()) {
  auto t = ChatTemplate::parse(source);
  if (!t.is_ok()) return "PARSE ERROR: " + t.status().message();
  auto r = t.value().render(context);
  return r.is_ok() ? r.value() : "RENDER ERROR: " + r.status().message();
}

TEST(ChatTemplate, WhitespaceControlTrimAndLstripBlocks) {
  // trim_blocks: the newline after a block tag goes; lstrip_blocks: indentation before one.
  EXPECT_EQ(render("{% if true %}\n    yes\n    {% endif %}\nend"), "    yes\nend");
  EXPECT_EQ(render("a  {%- if true -%}  b  {%- endif -%}  c"), "abc");
  EXPECT_EQ(render("{{ 'x' }}\n{{- 'y' }}\n"), "xy");  // the last newline of a template is dropped
  EXPECT_EQ(render("{# comment #}\nA  {#- c -#}  B"), "AB");
  EXPECT_EQ(render("  {%+ if true %}x{% endif %}"), "  x");  // + keeps the indentation
  EXPECT_EQ(render("{% raw %}{{ not evaluated }}{% endraw %}"), "{{ not evaluated }}");
  EXPECT_EQ(render("{{ {'a': {'b': 1}} | tojson }}"), "{\"a\": {\"b\": 1}}");  // "}}" inside a literal
}

TEST(ChatTemplate, PythonValuesPrintAsPython) {
  EXPECT_EQ(
      render("{{ true }} {{ none }} {{ 1.0 }} {{ 0.1 + 0.2 }} {{ 1e20 }} {{ [1, 'a', none] }} {{ {'k': false} }}"),
      "True None 1.0 0.30000000000000004 1e+20 [1, 'a', None] {'k': False}");
  EXPECT_EQ(render("{{ undefined_thing }}|{{ 7 / 2 }}|{{ 6 / 2 }}|{{ -7 // 2 }}|{{ -7 % 3 }}"), "|3.5|3.0|-4|2");
}

TEST(ChatTemplate, ConstructsBeyondTransformersJs) {
  EXPECT_EQ(render("{{ 'ab' * 3 }}"), "ababab");
  EXPECT_EQ(render("{{ 'yes' if 4 is divisibleby 2 }}|{{ 'no' if false }}|"), "yes||");
  EXPECT_EQ(render("{{ ['a', 'b'] | map('upper') | join(',') }}"), "A,B");
  EXPECT_EQ(render("{{ [{'a': 1}, {'b': 2}] | selectattr('a', 'undefined') | list | length }}"), "1");
  EXPECT_EQ(render("{% for x in 'abc' %}{{ loop.cycle('-', '+') }}{{ x }}{% endfor %}"), "-a+b-c");
  EXPECT_EQ(render("{{ 'a b  c'.split() }} {{ 'x-y-z'.split('-', 1) }} {{ 'abcdef'[::-2] }} {{ [1, 2, 3][-2:] }}"),
            "['a', 'b', 'c'] ['x', 'y-z'] fdb [2, 3]");
  EXPECT_EQ(render("{{ {'b': 1, 'a': 2} | tojson(indent=2) }}"), "{\n  \"b\": 1,\n  \"a\": 2\n}");
  EXPECT_EQ(render("{{ 'Tab\\there' | tojson }} {{ 'ünï' | tojson }}"), "\"Tab\\there\" \"ünï\"");
  EXPECT_EQ(render("{% set a, b = 1, 2 %}{{ a + b }}"), "3");
  EXPECT_EQ(render("{% macro m(x, y=2) %}{{ x * y }}{% endmacro %}{{ m(3) }} {{ m(3, y=4) }}"), "6 12");
  EXPECT_EQ(render("{% for x in [] %}x{% else %}empty{% endfor %}"), "empty");
  EXPECT_EQ(render("{% for x in [1, 2] %}{% set y = x %}{% endfor %}{{ y is defined }}"), "False");  // loop scope
  EXPECT_EQ(render("{% set ns = namespace(y=0) %}{% for x in [1, 2] %}{% set ns.y = ns.y + x %}{% endfor %}{{ ns.y }}"),
            "3");
  EXPECT_EQ(render("{{ 'x'.strip() }}{{ '  y \\n'.rstrip() }}|{{ 'abc'.startswith(('z', 'a')) }}"), "x  y|True");
}

TEST(ChatTemplate, ErrorsNameLineAndColumn) {
  EXPECT_EQ(render("ok\n{% if x %}\n{% include 'x' %}{% endif %}"),
            "PARSE ERROR: chat template line 3, column 4: unsupported statement 'include' "
            "(supported: if, for, set, macro, break, continue, generation, raw)");
  EXPECT_EQ(render("{% for x in y %}"), "PARSE ERROR: chat template line 1, column 17: missing {% endfor %}");
  EXPECT_EQ(render("{{ 1 + }}"), "PARSE ERROR: chat template line 1, column 8: expected an expression");
  EXPECT_EQ(render("a\n  {{ raise_exception('bad roles') }}"),
            "RENDER ERROR: chat template line 2, column 6: the template raised an exception: bad roles");
  EXPECT_EQ(render("{{ x | nosuchfilter }}"),
            "RENDER ERROR: chat template line 1, column 6: unsupported filter 'nosuchfilter'");
  EXPECT_EQ(
      render("{% set x.y = 1 %}"),
      "RENDER ERROR: chat template line 1, column 4: 'x' is not a namespace: only namespace() attributes can be assigned");
}

TEST(ChatTemplate, HostileTemplatesFailCleanly) {
  EXPECT_NE(render("{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}").find("nested too deeply"),
            std::string::npos);
  EXPECT_NE(render("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}").find("nested deeper"), std::string::npos);
  EXPECT_NE(render("{{ 'x' * 100000000000 }}").find("longer than"), std::string::npos);
  EXPECT_NE(render("{% for i in range(100000000) %}{% endfor %}").find("range longer"), std::string::npos);
  for (const char* bad :
       {"{{", "{%", "{% if %}", "{{ 'unterminated }}", "{{ a[ }}", "{% for %}", "{% endif %}", "{#"}) {
    EXPECT_NE(render(bad).find("ERROR"), std::string::npos) << bad;
  }
}

TEST(ChatTemplate, ApplyChatTemplatePicksTheTemplateAndPassesTokens) {
  TokenizerConfig config;
  config.bos_token = "<s>";
  config.chat_templates = {{"default",
                            "{{ bos_token }}{% for m in messages %}[{{ m.role }}:{{ m.content }}]{% endfor %}"
                            "{% if add_generation_prompt %}>{% endif %}"},
                           {"tool_use", "TOOLS {{ tools | length }}"}};
  const OrderedJson messages = OrderedJson::parse(R"([{"role": "user", "content": "hi"}])");
  auto r = apply_chat_template(config, messages);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r.value(), "<s>[user:hi]>");
  ChatOptions with_tools;
  with_tools.tools = OrderedJson::parse(R"([{"type": "function"}])");
  EXPECT_EQ(apply_chat_template(config, messages, with_tools).value(), "TOOLS 1");
  ChatOptions named;
  named.template_name = "missing";
  EXPECT_FALSE(apply_chat_template(config, messages, named).is_ok());
  EXPECT_FALSE(apply_chat_template(TokenizerConfig{}, messages).is_ok());
}

}  // namespace
}  // namespace xonnx::genai
