// Tokenizer on small hand-made tokenizer.json files: BPE merge order, byte-level and
// SentencePiece-style pipelines, added tokens, post-processing, decoders, streaming, token
// bytes, and errors (never a crash) on malformed files. The real tokenizers of Llama-3, Qwen,
// Gemma, ... are checked against transformers.js by crosscheck.sh.
#include <gtest/gtest.h>

#include <fstream>
#include <random>

#include "sdk/genai/tokenizer.h"
#include "sdk/genai/tokenizer_json.h"
#include "sdk/genai/unicode.h"

namespace xonnx::genai {
namespace {

std::string byte_char(uint8_t b) {
  std::string s;
  utf8_append(s, byte_to_unicode(b));
  return s;
}

// Byte-level BPE: the 256 byte chars (id = byte), then merged tokens.
Json byte_level_json() {
  Json vocab = Json::object();
  for (int b = 0; b < 256; ++b) vocab[byte_char(static_cast<uint8_t>(b))] = b;
  const char* merged[] = {"he", "ll", "Ġt", "Ġthe", "hell", "hello", "Ġw"};
  for (int i = 0; i < 7; ++i) vocab[merged[i]] = 256 + i;
  Json j;
  j["model"] = {{"type", "BPE"},
                {"vocab", vocab},
                {"merges", Json::array({"h e", Json::array({"l", "l"}), "Ġ t", "Ġt he", "he ll", "hell o", "Ġ w"})}};
  j["pre_tokenizer"] = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}};
  j["decoder"] = {{"type", "ByteLevel"}};
  j["added_tokens"] = Json::array({
      {{"id", 300}, {"content", "<|im_start|>"}, {"special", true}, {"normalized", false}},
      {{"id", 301}, {"content", "<mask>"}, {"special", true}, {"lstrip", true}, {"normalized", false}},
      {{"id", 302}, {"content", "[W]"}, {"special", false}, {"single_word", true}, {"normalized", false}},
  });
  j["post_processor"] = {{"type", "TemplateProcessing"},
                         {"single", Json::array({{{"SpecialToken", {{"id", "<|im_start|>"}, {"type_id", 0}}}},
                                                 {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}})},
                         {"special_tokens", {{"<|im_start|>", {{"id", "<|im_start|>"}, {"ids", {300}}}}}}};
  return j;
}

std::unique_ptr<Tokenizer> load(const Json& j, const std::string& config = "") {
  auto t = Tokenizer::from_json(j.dump(), config);
  EXPECT_TRUE(t.is_ok()) << t.status().to_string();
  return t.is_ok() ? std::move(t).value() : nullptr;
}

using Ids = std::vector<int32_t>;

TEST(Tokenizer, ByteLevelBpeMergesByRank) {
  auto t = load(byte_level_json());
  ASSERT_TRUE(t);
  // "hello": h+e (rank 0), l+l (1), he+ll (4), hell+o (5).
  EXPECT_EQ(t->encode("hello", false), (Ids{261}));
  // " the": Ġ+t (2) then Ġt+he (3); " w" merges, "x" stays a byte.
  EXPECT_EQ(t->encode(" the wx", false), (Ids{259, 262, 'x'}));
  EXPECT_EQ(t->encode("hello", true), (Ids{300, 261}));
  EXPECT_EQ(t->decode(t->encode(" the wx hello\n\xC3\xA9", false)), " the wx hello\n\xC3\xA9");
  EXPECT_EQ(t->vocab_size(), 303);
  EXPECT_EQ(t->token_bytes(259), " the");
  EXPECT_EQ(t->id_to_token(259), "Ġthe");
  EXPECT_EQ(*t->token_to_id("<mask>"), 301);
}

TEST(Tokenizer, AddedTokensMatchBeforePreTokenization) {
  auto t = load(byte_level_json());
  ASSERT_TRUE(t);
  EXPECT_EQ(t->encode("he<|im_start|>he", false), (Ids{256, 300, 256}));
  // lstrip: the spaces before <mask> belong to it.
  EXPECT_EQ(t->encode("he  <mask>", false), (Ids{256, 301}));
  // single_word: inside a word it is plain text.
  const Ids spaced = t->encode("a [W] b", false);
  EXPECT_EQ(std::count(spaced.begin(), spaced.end(), 302), 1);
  const Ids glued = t->encode("a[W]b", false);
  EXPECT_EQ(std::count(glued.begin(), glued.end(), 302), 0);
  EXPECT_EQ(t->decode({300, 256}, /*skip_special_tokens=*/true), "he");
  EXPECT_TRUE(t->is_special(300));
  EXPECT_FALSE(t->is_special(302));
}

// SentencePiece-style BPE: "▁" for spaces, <0xNN> byte fallback, the decoder undoing both.
Json sentencepiece_json() {
  Json vocab = Json::object();
  vocab["<unk>"] = 0;
  vocab["<s>"] = 1;
  vocab["</s>"] = 2;
  char name[8];
  for (int b = 0; b < 256; ++b) {
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    vocab[name] = 3 + b;
  }
  const char* pieces[] = {"▁", "h", "i", "▁h", "▁hi", "a", "b"};
  for (int i = 0; i < 7; ++i) vocab[pieces[i]] = 259 + i;
  Json j;
  j["model"] = {{"type", "BPE"},         {"vocab", vocab},       {"merges", Json::array({"▁ h", "▁h i"})},
                {"byte_fallback", true}, {"unk_token", "<unk>"}, {"fuse_unk", true}};
  j["normalizer"] = {
      {"type", "Sequence"},
      {"normalizers", Json::array({{{"type", "Prepend"}, {"prepend", "▁"}},
                                   {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "▁"}}})}};
  j["decoder"] = {{"type", "Sequence"},
                  {"decoders", Json::array({{{"type", "Replace"}, {"pattern", {{"String", "▁"}}}, {"content", " "}},
                                            {{"type", "ByteFallback"}},
                                            {{"type", "Fuse"}},
                                            {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}})}};
  j["added_tokens"] = Json::array({{{"id", 1}, {"content", "<s>"}, {"special", true}, {"normalized", false}},
                                   {{"id", 2}, {"content", "</s>"}, {"special", true}, {"normalized", false}}});
  return j;
}

TEST(Tokenizer, SentencePieceStyleByteFallbackAndDecoders) {
  auto t =
      load(sentencepiece_json(), R"({"bos_token": "<s>", "eos_token": "</s>", "tokenizer_class": "LlamaTokenizer"})");
  ASSERT_TRUE(t);
  // "hi é": ▁hi, ▁, then é as two byte tokens (0xC3 0xA9); Llama's class adds <s>.
  const Ids ids = t->encode("hi \xC3\xA9", true);
  EXPECT_EQ(ids, (Ids{1, 263, 259, 3 + 0xC3, 3 + 0xA9}));
  EXPECT_EQ(t->decode(ids, true), "hi \xC3\xA9");
  EXPECT_EQ(t->decode({3 + 0xC3, 263}), "\xEF\xBF\xBD hi");  // a lone lead byte: one U+FFFD
  EXPECT_EQ(t->token_bytes(3 + 0x41), "A");
  EXPECT_EQ(t->token_bytes(262), " h");
  EXPECT_EQ(*t->bos_id(), 1);
  EXPECT_EQ(*t->eos_id(), 2);
}

TEST(Tokenizer, StreamDecoderEmitsOnlyCompleteCharacters) {
  auto t = load(sentencepiece_json());
  ASSERT_TRUE(t);
  const Ids ids = t->encode("hi \xC3\xA9 hi", false);
  TokenStreamDecoder stream(*t);
  std::string all;
  for (int32_t id : ids) {
    const std::string piece = stream.put(id);
    EXPECT_TRUE(utf8_is_valid(piece));
    EXPECT_EQ(piece.find("\xEF\xBF\xBD"), std::string::npos);
    all += piece;
  }
  all += stream.flush();
  EXPECT_EQ(all, t->decode(ids));
  EXPECT_EQ(all, "hi \xC3\xA9 hi");
}

TEST(Tokenizer, StreamDecoderMatchesDecodeOnRandomIds) {
  auto t = load(byte_level_json());
  ASSERT_TRUE(t);
  std::mt19937 rng(7);
  for (int round = 0; round < 50; ++round) {
    Ids ids;
    for (int k = 0; k < 20; ++k) ids.push_back(static_cast<int32_t>(rng() % 303));
    TokenStreamDecoder stream(*t, /*skip_special_tokens=*/false);
    std::string all;
    for (int32_t id : ids) all += stream.put(id);
    all += stream.flush();
    EXPECT_EQ(all, t->decode(ids));
  }
}

TEST(Tokenizer, ArbitraryBytesNeverCrash) {
  auto a = load(byte_level_json());
  auto b = load(sentencepiece_json());
  ASSERT_TRUE(a && b);
  std::mt19937 rng(11);
  for (int round = 0; round < 300; ++round) {
    std::string s(rng() % 40, '\0');
    for (char& c : s) c = static_cast<char>(rng());
    const Ids x = a->encode(s), y = b->encode(s);
    EXPECT_TRUE(utf8_is_valid(a->decode(x)));
    EXPECT_TRUE(utf8_is_valid(b->decode(y)));
  }
  // Ids outside the vocabulary are skipped.
  EXPECT_EQ(a->decode({-5, 100000, 'a'}), "a");
}

void expect_error(const std::string& json, const std::string& needle) {
  auto t = Tokenizer::from_json(json, "", "tok.json");
  ASSERT_FALSE(t.is_ok()) << json;
  EXPECT_NE(t.status().message().find(needle), std::string::npos) << t.status().message();
  EXPECT_NE(t.status().message().find("tok.json"), std::string::npos) << t.status().message();
}

TEST(Tokenizer, MalformedFilesAreErrorsNamingTheField) {
  expect_error("{", "not valid JSON");
  expect_error("[]", "expected a JSON object");
  expect_error(R"({"model": {"type": "Unigram", "vocab": []}})", "model.type");
  expect_error(R"({"model": {"type": "BPE", "vocab": {"a": "x"}, "merges": []}})", "model.vocab");
  expect_error(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a b"]}})", "model.merges[0]");
  expect_error(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a a a"]}})", "model.merges[0]");
  expect_error(
      R"J({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}, "pre_tokenizer": {"type": "Split", "pattern": {"Regex": "(?<=a)"}}})J",
      "pre_tokenizer.pattern");
  expect_error(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}, "decoder": {"type": "CTC"}})",
               "decoder.type");
  expect_error(
      R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}, "added_tokens": [{"id": -1, "content": "x"}]})",
      "added_tokens[0].id");
  expect_error(
      R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}, "post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<nope>"}}, {"Sequence": {"id": "A"}}]}})",
      "post_processor.single[0]");
  // Tables are indexed by id: one token at id 2^30 would cost 32 GB.
  expect_error(R"({"model": {"type": "BPE", "vocab": {"a": 1073741823}, "merges": []}})", "model.vocab");
  expect_error(
      R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}, "added_tokens": [{"id": 1073741823, "content": "x"}]})",
      "added_tokens[0].id");
  expect_error(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}, "x": 66605e1111111111111111})",
               "not valid JSON");  // a number past 64 bits threw out_of_range
  std::string deep = R"({"type": "NFC"})";
  for (int i = 0; i < 200; ++i) deep = R"({"type": "Sequence", "normalizers": [)" + deep + "]}";
  expect_error(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}, "normalizer": )" + deep + "}",
               "nested deeper than 128");
  // Every prefix of a valid file fails cleanly.
  const std::string good = byte_level_json().dump();
  for (size_t n = 0; n < good.size(); n += 97) {
    auto t = Tokenizer::from_json(good.substr(0, n));
    EXPECT_FALSE(t.is_ok());
  }
  EXPECT_FALSE(Tokenizer::load("/nonexistent/dir").is_ok());
}

TEST(Tokenizer, CleanUpTokenizationAsTransformers) {
  EXPECT_EQ(Tokenizer::clean_up_tokenization("Hello , world ! I do n't know ."), "Hello, world! I don't know.");
}

}  // namespace
}  // namespace xonnx::genai

namespace xonnx::genai {
namespace {

// The shipped tiny LLM's own byte-level BPE (tools/llm): its trainer's encoder gave these ids
// for every held-out fortune and edge case (transformers.js agrees, tools/llm/check_tokenizer.mjs).
TEST(Tokenizer, ShippedTinyModelTokenizerCases) {
  const std::string dir = std::string(XONNX_TEST_LLM_DIR) + "/tiny";
  std::ifstream in(dir + "/tokenizer_cases.json");
  if (!in) GTEST_SKIP() << "no " << dir << "/tokenizer_cases.json";
  const Json cases = Json::parse(in);
  auto t = Tokenizer::load(dir + "/genai_fp32");
  ASSERT_TRUE(t.is_ok()) << t.status().to_string();
  size_t same = 0;
  for (const Json& c : cases) {
    const std::string text = c["text"].get<std::string>();
    const Ids ids = t.value()->encode(text, false);
    EXPECT_EQ(ids, c["ids"].get<Ids>()) << text;
    EXPECT_EQ(t.value()->decode(ids), text);
    same += ids == c["ids"].get<Ids>();
  }
  EXPECT_EQ(same, cases.size());
  EXPECT_GT(cases.size(), 100u);
}

}  // namespace
}  // namespace xonnx::genai
