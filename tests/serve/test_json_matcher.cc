// The JSON / JSON-schema matcher: documents it must accept and refuse byte by byte, schema
// compile errors with their JSON pointers, and fuzzing (random logits over a vocabulary, masked
// each step) where every finished output must parse and validate with an independent validator.
#include <gtest/gtest.h>

#include <random>

#include "sdk/genai/tokenizer.h"
#include "sdk/serve/json_matcher.h"
#include "sdk/serve/pattern_dfa.h"
#include "sdk/serve/token_mask.h"
#include "tests/serve/schema_validator.h"

namespace xonnx::serve {
namespace {

using nlohmann::json;

std::shared_ptr<const JsonMatcher> matcher_for(const std::string& schema) {
  auto compiled = CompiledSchema::compile(json::parse(schema));
  EXPECT_TRUE(compiled.is_ok()) << compiled.status().to_string();
  if (!compiled.is_ok()) return nullptr;
  return std::make_shared<JsonMatcher>(compiled.value());
}

// Whole document: every byte accepted and the end accepting.
bool accepts(const JsonMatcher& m, const std::string& text) {
  auto s = m.initial();
  return m.advance(s, text) && m.accepting(s);
}

bool prefix_ok(const JsonMatcher& m, const std::string& text) {
  auto s = m.initial();
  return m.advance(s, text);
}

TEST(JsonMatcher, AnyJsonObject) {
  JsonMatcher m(CompiledSchema::any_object());
  for (const char* ok :
       {"{}", "{\"a\":1}", "{ \"a\" : [1, 2.5e-3, -0, true, false, null, \"x\\n\\u00e9\"] }",
        "{\"nested\":{\"deep\":[[],{}]}}", "{\"\xc3\xa9\":\"\xe2\x82\xac\"}", "{\"s\":\"\\ud83d\\ude00\"}"}) {
    EXPECT_TRUE(accepts(m, ok)) << ok;
  }
  for (const char* bad :
       {"[]", "1", "{\"a\":}", "{\"a\":1,}", "{,}", "{\"a\" 1}", "{\"a\":01}", "{\"a\":1.}", "{\"a\":tru}",
        "{\"a\":\"\x01\"}", "{\"a\":\"\\x\"}", "{\"a\":\"\\ude00\"}", "{\"a\":\"\\ud83dx\"}", "{\"a\":\"\xc0\x80\"}",
        "{\"a\":\"\xed\xa0\x80\"}", "{}x", "{} ", "{\"a\\u0062\":1}"}) {
    EXPECT_FALSE(accepts(m, bad)) << bad;
  }
  EXPECT_TRUE(prefix_ok(m, "{\"a\":[1,"));
  EXPECT_FALSE(accepts(m, "{\"a\":[1,"));
  // Whitespace runs are bounded (a model cannot pad forever).
  EXPECT_TRUE(accepts(m, "{" + std::string(kMaxWhitespaceRun, ' ') + "}"));
  EXPECT_FALSE(prefix_ok(m, "{" + std::string(kMaxWhitespaceRun + 1, ' ')));
}

TEST(JsonMatcher, ObjectPropertiesRequiredAdditional) {
  auto m = matcher_for(R"({"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"},
    "nick":{"type":"string"}},"required":["name","age"],"additionalProperties":false})");
  EXPECT_TRUE(accepts(*m, R"({"name":"Ada","age":36})"));
  EXPECT_TRUE(accepts(*m, R"({"age":36,"nick":"A","name":"Ada"})"));
  EXPECT_FALSE(accepts(*m, R"({"name":"Ada"})"));           // missing required
  EXPECT_FALSE(prefix_ok(*m, R"({"name":"Ada","other")"));  // undeclared key
  EXPECT_FALSE(prefix_ok(*m, R"({"name":"Ada","name")"));   // repeated key
  EXPECT_FALSE(prefix_ok(*m, R"({"name":1)"));              // wrong type
  EXPECT_FALSE(prefix_ok(*m, R"({"age":1.5)"));             // integer
  EXPECT_FALSE(prefix_ok(*m, R"({"na":)"));                 // a prefix of a name is no name

  auto open = matcher_for(R"({"type":"object","properties":{"a":{"type":"boolean"}},
    "additionalProperties":{"type":"number"}})");
  EXPECT_TRUE(accepts(*open, R"({"a":true,"b":2,"ab":3})"));
  EXPECT_FALSE(prefix_ok(*open, R"({"b":true)"));
  EXPECT_FALSE(prefix_ok(*open, R"({"a":true,"a")"));  // a declared name again, even where free keys are allowed
}

TEST(JsonMatcher, ArraysAndNesting) {
  auto m = matcher_for(R"({"type":"array","items":{"type":"object","properties":{"x":{"type":"number"}},
    "required":["x"],"additionalProperties":false},"minItems":1,"maxItems":2})");
  EXPECT_TRUE(accepts(*m, R"([{"x":1}])"));
  EXPECT_TRUE(accepts(*m, R"([{"x":1},{"x":-2.5}])"));
  EXPECT_FALSE(accepts(*m, "[]"));
  EXPECT_FALSE(prefix_ok(*m, R"([{"x":1},{"x":2},)"));
  // Nesting depth is bounded.
  JsonMatcher any(CompiledSchema::any_object());
  std::string deep = "{\"a\":";
  for (int i = 0; i < 2 * kMaxNestingDepth + 2; ++i) deep += "[";
  EXPECT_FALSE(prefix_ok(any, deep));
}

TEST(JsonMatcher, EnumConstAnyOfRef) {
  auto m = matcher_for(R"({"type":"object","properties":{
      "color":{"enum":["red","green","greenish",1,12,null]},
      "kind":{"const":"fixed"},
      "v":{"anyOf":[{"type":"string","maxLength":3},{"type":"integer","minimum":0},{"type":"null"}]},
      "node":{"$ref":"#/$defs/node"}},
    "required":["color"],"additionalProperties":false,
    "$defs":{"node":{"type":"object","properties":{"next":{"anyOf":[{"$ref":"#/$defs/node"},{"type":"null"}]}},
                     "required":["next"],"additionalProperties":false}}})");
  for (const char* ok : {R"({"color":"red"})", R"({"color":"greenish"})", R"({"color":1})", R"({"color":12})",
                         R"({"color":null,"kind":"fixed"})", R"({"color":"red","v":"abc"})", R"({"color":"red","v":7})",
                         R"({"color":"red","v":null})", R"({"color":"red","node":{"next":{"next":null}}})"}) {
    EXPECT_TRUE(accepts(*m, ok)) << ok;
  }
  for (const char* bad :
       {R"({"color":"blue"})", R"({"color":"gree"})", R"({"color":123})", R"({"color":"red","kind":"other"})",
        R"({"color":"red","v":"abcd"})", R"({"color":"red","v":-1})", R"({"color":"red","node":{}})"}) {
    EXPECT_FALSE(accepts(*m, bad)) << bad;
  }
  // Type arrays.
  auto t = matcher_for(R"({"type":["string","null"]})");
  EXPECT_TRUE(accepts(*t, "\"x\""));
  EXPECT_TRUE(accepts(*t, "null"));
  EXPECT_FALSE(prefix_ok(*t, "1"));
}

TEST(JsonMatcher, NumberBounds) {
  auto i = matcher_for(R"({"type":"integer","minimum":-5,"exclusiveMaximum":120})");
  for (const char* ok : {"-5", "0", "7", "119", "-0"}) EXPECT_TRUE(accepts(*i, ok)) << ok;
  for (const char* bad : {"-6", "120", "1200", "-50"}) EXPECT_FALSE(accepts(*i, bad)) << bad;
  EXPECT_TRUE(accepts(*i, "13"));
  EXPECT_FALSE(prefix_ok(*i, "130"));
  EXPECT_FALSE(prefix_ok(*i, "-6"));
  auto n = matcher_for(R"({"type":"number","minimum":0.5,"maximum":2})");
  for (const char* ok : {"0.5", "1", "1.75", "2", "2.0", "0.55"}) EXPECT_TRUE(accepts(*n, ok)) << ok;
  for (const char* bad : {"0.4", "2.01", "3", "-1", "1e0", "0"}) EXPECT_FALSE(accepts(*n, bad)) << bad;
  EXPECT_FALSE(prefix_ok(*n, "0.4"));
  EXPECT_FALSE(prefix_ok(*n, "-"));
}

TEST(JsonMatcher, StringLengthAndPattern) {
  auto m = matcher_for(R"({"type":"string","minLength":2,"maxLength":3})");
  EXPECT_TRUE(accepts(*m, "\"ab\""));
  EXPECT_TRUE(accepts(*m, "\"\xc3\xa9\xc3\xa9\xc3\xa9\""));  // three code points
  EXPECT_TRUE(accepts(*m, "\"a\\n\""));
  EXPECT_FALSE(accepts(*m, "\"a\""));
  EXPECT_FALSE(prefix_ok(*m, "\"abcd"));
  auto p = matcher_for(R"({"type":"string","pattern":"^[A-Z]{2}-\\d{3,4}$"})");
  EXPECT_TRUE(accepts(*p, "\"AB-123\""));
  EXPECT_TRUE(accepts(*p, "\"AB-1234\""));
  EXPECT_FALSE(accepts(*p, "\"AB-12\""));
  EXPECT_FALSE(prefix_ok(*p, "\"Ab"));
  EXPECT_FALSE(prefix_ok(*p, "\"AB-12345"));
  auto search = matcher_for(R"({"type":"string","pattern":"cat|dog"})");  // unanchored: search
  EXPECT_TRUE(accepts(*search, "\"my dog!\""));
  EXPECT_FALSE(accepts(*search, "\"my bird\""));
  auto dot = matcher_for(R"({"type":"string","pattern":"^.{2}$"})");
  EXPECT_TRUE(accepts(*dot, "\"\xc3\xa9x\""));
  EXPECT_FALSE(accepts(*dot, "\"\xc3\xa9xy\""));
}

TEST(JsonSchemaCompile, ErrorsNameThePointer) {
  struct Case {
    const char* schema;
    const char* pointer;
    StatusCode code;
  };
  const Case cases[] = {
      {R"({"type":"object","properties":{"a":{"type":"strin"}}})", "#/properties/a/type", StatusCode::kInvalidArgument},
      {R"({"type":"object","properties":{"a":{"allOf":[]}}})", "#/properties/a/allOf", StatusCode::kUnsupported},
      {R"j({"type":"array","items":{"type":"string","pattern":"(?=x)"}})j", "#/items/pattern",
       StatusCode::kUnsupported},
      {R"({"type":"array","items":{"type":"string","pattern":"a{"}})", "", StatusCode::kOk},
      {R"({"$ref":"#/$defs/missing"})", "#/$ref", StatusCode::kInvalidArgument},
      {R"({"$ref":"http://example.com/s.json"})", "#/$ref", StatusCode::kUnsupported},
      {R"({"$ref":"#"})", "#", StatusCode::kInvalidArgument},
      {R"({"type":"integer","minimum":5,"maximum":4})", "#", StatusCode::kInvalidArgument},
      {R"({"type":"string","minLength":-1})", "#/minLength", StatusCode::kInvalidArgument},
      {R"({"type":"object","required":["x"],"additionalProperties":false})", "#/required/0",
       StatusCode::kInvalidArgument},
      {R"({"enum":[]})", "#/enum", StatusCode::kInvalidArgument},
      {R"({"type":"number","exclusiveMinimum":true})", "#/exclusiveMinimum", StatusCode::kUnsupported},
      {R"({"type":"array","uniqueItems":true})", "#/uniqueItems", StatusCode::kUnsupported},
      {R"("not a schema")", "#", StatusCode::kInvalidArgument},
  };
  for (const Case& c : cases) {
    auto r = CompiledSchema::compile(json::parse(c.schema));
    if (c.code == StatusCode::kOk) {
      EXPECT_TRUE(r.is_ok()) << c.schema << ": " << r.status().to_string();
      continue;
    }
    ASSERT_FALSE(r.is_ok()) << c.schema;
    EXPECT_EQ(r.status().code(), c.code) << c.schema << ": " << r.status().to_string();
    EXPECT_EQ(r.status().message().rfind(std::string(c.pointer) + ":", 0), 0u)
        << c.schema << " -> " << r.status().message();
  }
  // Deep nesting and large schemas fail cleanly.
  json deep = {{"type", "string"}};
  for (int i = 0; i < 200; ++i) deep = {{"type", "array"}, {"items", deep}};
  EXPECT_FALSE(CompiledSchema::compile(deep).is_ok());
}

TEST(PatternDfa, AgreesWithStdRegex) {
  const char* patterns[] = {"^[a-c]+x?$",       "ab|cd",   "^(ab)*$",     "^a{2,3}b{0,1}$",
                            "^\\d+(\\.\\d+)?$", "^[^x]*$", "^\\w\\s\\W$", "x.y",
                            "^(?:a|bc)+$",      "^$",      "^a{3}$",      "[0-9]{2}"};
  std::mt19937 rng(7);
  const std::string alphabet = "abcxy0123 .\t";
  for (const char* p : patterns) {
    auto dfa = ByteDfa::compile_search(p);
    ASSERT_TRUE(dfa.is_ok()) << p << ": " << dfa.status().to_string();
    const std::regex re(p, std::regex::ECMAScript);
    for (int t = 0; t < 400; ++t) {
      std::string s;
      const int len = static_cast<int>(rng() % 7);
      for (int i = 0; i < len; ++i) s += alphabet[rng() % alphabet.size()];
      int32_t state = dfa.value()->start();
      for (char c : s) {
        if (state == ByteDfa::kDead) break;
        state = dfa.value()->next(state, static_cast<uint8_t>(c));
      }
      const bool dfa_match = state != ByteDfa::kDead && dfa.value()->accepting(state);
      EXPECT_EQ(dfa_match, std::regex_search(s, re)) << "pattern " << p << " on \"" << s << "\"";
    }
  }
}

// Random logits, masked each step, sampled; the finished document must parse and validate.
struct FuzzResult {
  int finished = 0, unfinished = 0, dead_ends = 0, invalid = 0;
};

FuzzResult fuzz(const std::string& schema_text, const std::shared_ptr<const VocabTrie>& trie, int32_t eos, int runs,
                int max_steps, uint32_t seed) {
  const json schema = json::parse(schema_text);
  auto compiled = CompiledSchema::compile(schema);
  EXPECT_TRUE(compiled.is_ok()) << compiled.status().to_string();
  auto matcher = std::make_shared<JsonMatcher>(compiled.value());
  std::mt19937 rng(seed);
  std::normal_distribution<float> noise(0.0f, 2.0f);
  FuzzResult r;
  std::vector<float> logits(trie->vocab_size());
  // Tokens that close a string, object or array get a bias, as a model's prior would: with
  // uniform noise alone, free-form keys (additionalProperties) would almost never end.
  std::vector<int32_t> closers;
  for (size_t id = 0; id < trie->vocab_size(); ++id) {
    if (trie->bytes(static_cast<int32_t>(id)).find_first_of("\"}]") != std::string::npos) {
      closers.push_back(static_cast<int32_t>(id));
    }
  }
  for (int run = 0; run < runs; ++run) {
    JsonConstraint c(matcher, trie, {eos});
    std::string text;
    bool done = false;
    for (int step = 0; step < max_steps && !done; ++step) {
      for (auto& l : logits) l = noise(rng);
      logits[static_cast<size_t>(eos)] += 3.0f;  // let documents end when they can
      for (int32_t id : closers) logits[static_cast<size_t>(id)] += 2.0f;
      if (c.mask_logits(logits.data(), logits.size()) == 0) {
        ++r.dead_ends;
        ADD_FAILURE() << "no token allowed after: " << text;
        break;
      }
      // Sample from softmax over the allowed logits.
      float max = -INFINITY;
      for (float l : logits) max = std::max(max, l);
      double total = 0;
      for (float l : logits) total += std::isinf(l) ? 0 : std::exp(l - max);
      double pick = std::uniform_real_distribution<double>(0, total)(rng);
      int32_t token = -1;
      for (size_t i = 0; i < logits.size(); ++i) {
        if (std::isinf(logits[i])) continue;
        token = static_cast<int32_t>(i);
        pick -= std::exp(logits[i] - max);
        if (pick <= 0) break;
      }
      EXPECT_TRUE(c.allows(token));
      EXPECT_TRUE(c.accept(token));
      if (token == eos)
        done = true;
      else
        text += trie->bytes(token);
    }
    if (!done) {
      ++r.unfinished;
      continue;
    }
    ++r.finished;
    const json parsed = json::parse(text, nullptr, false);
    if (parsed.is_discarded() || !testing::validate(parsed, schema, schema)) {
      ++r.invalid;
      ADD_FAILURE() << "schema " << schema_text << "\nproduced " << text;
    }
  }
  return r;
}

const char* const kFuzzSchemas[] = {
    R"({"type":"object","properties":{"name":{"type":"string","maxLength":12},"age":{"type":"integer","minimum":0,"maximum":130},
        "email":{"type":"string","pattern":"^[a-z]{1,8}@[a-z]{1,8}\\.(com|org)$"},"tags":{"type":"array","items":{"enum":["a","bb","ccc"]},"maxItems":3}},
        "required":["name","age","email"],"additionalProperties":false})",
    R"({"type":"object","properties":{"score":{"type":"number","exclusiveMinimum":-1,"maximum":1},"ok":{"type":"boolean"},
        "note":{"anyOf":[{"type":"string","minLength":1,"maxLength":5},{"type":"null"}]}},"required":["score","ok","note"],"additionalProperties":false})",
    R"({"type":"array","items":{"type":"object","properties":{"x":{"type":"integer","minimum":-20,"maximum":20},
        "y":{"type":"integer","exclusiveMinimum":5,"exclusiveMaximum":9}},"required":["x","y"],"additionalProperties":false},"minItems":1,"maxItems":3})",
    R"({"$defs":{"tree":{"type":"object","properties":{"v":{"const":1},"kids":{"type":"array","items":{"$ref":"#/$defs/tree"},"maxItems":2}},
        "required":["v"],"additionalProperties":false}},"$ref":"#/$defs/tree"})",
    R"({"type":"object","properties":{"id":{"type":"string","pattern":"^[A-F0-9]{4}$"},"kind":{"type":["integer","null"],"minimum":3,"maximum":7}},
        "required":["id","kind"],"additionalProperties":{"type":"boolean"},"maxProperties":null})",
};

std::shared_ptr<const VocabTrie> byte_vocab(int32_t& eos) {
  // Every single byte plus JSON-ish chunks, as a BPE vocabulary would have them.
  std::vector<std::string> bytes;
  for (int b = 0; b < 256; ++b) bytes.emplace_back(1, static_cast<char>(b));
  for (const char* chunk :
       {"{\"",      "\":",          "\",",   "\"}",  "true",    "false", "null",  "name",    "age",
        "email",    "tags",         "score", "ok",   "note",    "\":\"", "},{",   "12",      "0.",
        "-1",       ".com",         "@",     "kids", "\"v\":1", "[]",    "\\u00", "\\ud83d", "\\ude00",
        "\xc3\xa9", "\xe2\x82\xac", "  ",    "\n",   "id",      "kind",  "AB",    "F0"}) {
    bytes.emplace_back(chunk);
  }
  eos = static_cast<int32_t>(bytes.size());
  bytes.emplace_back("<eos>");
  return std::make_shared<VocabTrie>(bytes, std::vector<int32_t>{eos});
}

TEST(JsonConstraintFuzz, ByteVocabulary) {
  int32_t eos = 0;
  auto trie = byte_vocab(eos);
  for (const char* schema : kFuzzSchemas) {
    std::string text = schema;
    // maxProperties: null is not a keyword we accept; the 5th schema tests it is refused.
    if (text.find("maxProperties") != std::string::npos) {
      EXPECT_FALSE(CompiledSchema::compile(json::parse(text)).is_ok());
      text.replace(text.find(",\"maxProperties\":null"), std::string(",\"maxProperties\":null").size(), "");
    }
    const FuzzResult r = fuzz(text, trie, eos, 60, 600, 11);
    EXPECT_EQ(r.invalid, 0) << text;
    EXPECT_EQ(r.dead_ends, 0) << text;
    // Free-form keys (additionalProperties) rarely spell the required ones under noise: that
    // schema is checked for dead ends and validity only.
    const int min_finished = text.find("additionalProperties\":{") != std::string::npos ? 0 : 30;
    EXPECT_GE(r.finished, min_finished) << text << " (finished " << r.finished << ", unfinished " << r.unfinished
                                        << ")";
  }
  // json_object mode.
  JsonMatcher any(CompiledSchema::any_object());
  (void)any;
}

TEST(JsonConstraintFuzz, ShippedTokenizerVocabulary) {
  auto tok = genai::Tokenizer::load(std::string(XONNX_TEST_LLM_DIR) + "/tiny/genai_int4");
  ASSERT_TRUE(tok.is_ok()) << tok.status().to_string();
  const genai::Tokenizer& t = *tok.value();
  std::vector<std::string> bytes;
  std::vector<int32_t> special;
  for (int32_t id = 0; id < t.vocab_size(); ++id) {
    bytes.push_back(t.token_bytes(id));
    if (t.is_special(id)) special.push_back(id);
  }
  auto trie = std::make_shared<VocabTrie>(bytes, special);
  const int32_t eos = *t.token_to_id("<|im_end|>");
  for (const char* schema : {kFuzzSchemas[0], kFuzzSchemas[1], kFuzzSchemas[2], kFuzzSchemas[3]}) {
    const FuzzResult r = fuzz(schema, trie, eos, 25, 400, 5);
    EXPECT_EQ(r.invalid, 0) << schema;
    EXPECT_EQ(r.dead_ends, 0) << schema;
    EXPECT_GE(r.finished, 10) << schema << " (finished " << r.finished << ", unfinished " << r.unfinished << ")";
  }
}

}  // namespace
}  // namespace xonnx::serve
