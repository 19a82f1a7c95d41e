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

// Templates come from downloaded model folders: loops, growth, sharing, nesting and 64-bit
// integers that Python would take in its stride end in errors naming what was too much.
TEST(ChatTemplate, RenderingIsBounded) {
  const std::pair<std::string, const char*> cases[] = {
      {"{% for a in range(1000000) %}{% for b in range(1000000) %}{% endfor %}{% endfor %}",
       "more than 33554432 steps"},
      {"{% for i in range(1048575) %}{% for j in range(1048575) %}{% if j > 5 %}{% break %}{% endif %}{% endfor %}"
       "{% endfor %}",
       "steps"},
      {"{% set ns = namespace(x='ab') %}{% for i in range(100) %}{% set ns.x = ns.x + ns.x %}{% endfor %}",
       "a string longer than 64 MiB"},
      {"{{ 'aaaa' | replace('a', 'a' * 100000) | replace('a', 'a' * 100000) }}", "a string longer than 64 MiB"},
      {"{{ range(1048575) | join(range(1048575) | join) }}", "a string longer than 64 MiB"},
      {"{{ 'ab' * 9223372036854775807 }}", "repetition longer than 64 MiB"},
      {"{{ ('\n' * 60000000) | indent(200, true, true) }}", "a string longer than 64 MiB"},
      {"{{ ('a' * 60000000) | list }}", "a list of more than 1048576 items"},
      {"{{ (',' * 60000000).split(',') }}", "a list of more than 1048576 items"},
      {"{% for c in 'a' * 60000000 %}{% endfor %}", "a loop over more than 1048576 characters"},
      {"{% set ns = namespace(a=1) %}{% set ns.me = ns %}{{ ns }}", "a namespace() cannot be put inside"},
      {"{% set ns = namespace(a=1) %}{{ [ns] }}", "a namespace() cannot be put inside"},
      {"{% set ns = namespace(a=1) %}{{ namespace(b=ns) }}", "a namespace() cannot be put inside"},
      {"{% set ns = namespace(x=[1]) %}{% for i in range(60) %}{% set ns.x = [ns.x, ns.x] %}{% endfor %}{{ ns.x }}",
       "output longer than 64 MiB"},
      {"{% set ns = namespace(x=[1], y=[1]) %}{% for i in range(60) %}{% set ns.x = [ns.x, ns.x] %}"
       "{% set ns.y = [ns.y, ns.y] %}{% endfor %}{{ ns.x == ns.y }}",
       "steps"},
      {"{% set ns = namespace(x=[1]) %}{% for i in range(100000) %}{% set ns.x = [ns.x] %}{% endfor %}",
       "nested deeper than 128"},
      {"{% for i in range(100000) %}{% set x = [x] %}{% endfor %}", "nested deeper than 128"},
      {"{{ 99999999999999999999 }}", "integer literal 99999999999999999999 does not fit in 64 bits"},
      {"{{ 9223372036854775807 + 1 }}", "integer overflow in +"},
      {"{{ -9223372036854775807 - 10 }}", "integer overflow in -"},
      {"{{ 9223372036854775807 * 2 }}", "integer overflow in *"},
      {"{{ (-9223372036854775807 - 1) // -1 }}", "integer overflow in //"},
      {"{{ -(-9223372036854775807 - 1) }}", "integer overflow in unary -"},
      {"{{ (-9223372036854775807 - 1) | abs }}", "integer overflow in abs"},
      {"{{ 3 ** 40 }}", "integer overflow in **"},
      {"{{ [9223372036854775807, 1] | sum }}", "integer overflow in sum"},
      {"{{ range(1000000) | unique | list | length }}", "unique takes too many steps"},
      {"{{ 'nan' | float | int }}", "int of nan"},
      {"{{ '99999999999999999999' | int }}", "does not fit in 64 bits"},
  };
  for (const auto& [source, error] : cases) {
    const std::string got = render(source);
    EXPECT_NE(got.find("ERROR"), std::string::npos) << source;
    EXPECT_NE(got.find(error), std::string::npos) << source << "\n  gave: " << got.substr(0, 300);
  }
  // Near the bounds, Python's answers.
  EXPECT_EQ(render("{{ 3 ** 39 }}|{{ (-1) ** 9223372036854775807 }}|{{ 1 ** 9223372036854775807 }}"),
            "4052555153018976267|-1|1");
  EXPECT_EQ(render("{{ (-9223372036854775807 - 1) % -1 }}|{{ (-9223372036854775807 - 1) is divisibleby(-1) }}"),
            "0|True");
  EXPECT_EQ(render("{{ 'abc'[::9223372036854775807] }}|{{ 'abc'[::-9223372036854775807] }}"), "a|c");
  EXPECT_EQ(render("{{ range(9223372036854775806, 9223372036854775807, 2) | list }}"), "[9223372036854775806]");
  EXPECT_EQ(render("{{ [{'a': 1}] | map(attribute='99999999999999999999') | list }}"), "[]");
  const OrderedJson deep = OrderedJson::parse(std::string(200, '[') + std::string(200, ']'));
  EXPECT_NE(render("{{ x }}", OrderedJson{{"x", deep}}).find("nested deeper than 128"), std::string::npos);
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
