// UnicodeRegex: Oniguruma semantics on RE2 (Unicode \s, emulated lookahead, empty matches) and
// clear errors for what it does not support.
#include <gtest/gtest.h>

#include "sdk/genai/unicode.h"
#include "sdk/genai/unicode_regex.h"

namespace xonnx::genai {
namespace {

std::vector<std::string> pieces(const std::string& pattern, const std::string& text) {
  auto re = UnicodeRegex::compile(pattern);
  EXPECT_TRUE(re.is_ok()) << re.status().to_string();
  if (!re.is_ok()) return {};
  std::vector<std::pair<size_t, size_t>> m;
  re.value()->find_all(text, m);
  std::vector<std::string> out;
  for (auto [b, e] : m) out.push_back(text.substr(b, e - b));
  return out;
}

const char* kGpt2 = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
const char* kLlama3 =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

using V = std::vector<std::string>;

TEST(UnicodeRegex, WhitespaceRunGivesBackOneCharBeforeAWord) {
  // \s+(?!\S): a run followed by a word leaves its last space to the word (" world").
  EXPECT_EQ(pieces(kGpt2, "Hello   world"), (V{"Hello", "  ", " world"}));
  EXPECT_EQ(pieces(kGpt2, "a  "), (V{"a", "  "}));              // at the end the whole run matches
  EXPECT_EQ(pieces(kGpt2, "a \tb"), (V{"a", " ", "\t", "b"}));  // \t is not the optional space
}

TEST(UnicodeRegex, SingleSpaceBeforeSymbolFallsToLaterAlternative) {
  // "x !": " !" is matched by " ?[^\s\p{L}\p{N}]+" before the whitespace alternatives.
  EXPECT_EQ(pieces(kGpt2, "x !"), (V{"x", " !"}));
  // A single space before a digit with a pattern whose digits take no space: the lookahead
  // fails for the run of one, and the plain \s+ alternative takes it.
  EXPECT_EQ(pieces(kLlama3, "a 123"), (V{"a", " ", "123"}));
}

TEST(UnicodeRegex, Llama3CaseInsensitiveContractionsDigitsAndNewlines) {
  EXPECT_EQ(pieces(kLlama3, "I'LL do it's"), (V{"I", "'LL", " do", " it", "'s"}));
  EXPECT_EQ(pieces(kLlama3, "1234567"), (V{"123", "456", "7"}));
  EXPECT_EQ(pieces(kLlama3, "a\n\n  b"), (V{"a", "\n\n", " ", " b"}));
}

TEST(UnicodeRegex, WhitespaceIsUnicodeAsInOniguruma) {
  // U+3000 (ideographic space) and U+00A0 are \s for Oniguruma, not for RE2's own \s.
  EXPECT_EQ(pieces("\\s+",
                   "a\xE3\x80\x80\xC2\xA0"
                   "b"),
            (V{"\xE3\x80\x80\xC2\xA0"}));
  EXPECT_EQ(pieces("\\S+", "x\xE3\x80\x80y"), (V{"x", "y"}));
  EXPECT_EQ(pieces("[^\\s]+", "x\xE3\x80\x80y"), (V{"x", "y"}));
}

TEST(UnicodeRegex, EmptyMatchesFollowOnigurumasIteration) { EXPECT_EQ(pieces("a*", "baa"), (V{"", "aa"})); }

TEST(UnicodeRegex, LiteralPatternsMatchVerbatim) {
  auto re = UnicodeRegex::compile("a.b(", /*literal=*/true);
  ASSERT_TRUE(re.is_ok());
  std::vector<std::pair<size_t, size_t>> m;
  re.value()->find_all("xa.b(yaxb(", m);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].first, 1u);
}

TEST(UnicodeRegex, UnsupportedConstructsAreErrorsWithTheOffset) {
  for (const char* bad : {"(?<=a)b", "a++", "(?>ab)", "\\1", "a(?!b)c", "(a(?!b))", "[a[b]]", "(ab", "[ab"}) {
    auto re = UnicodeRegex::compile(bad);
    ASSERT_FALSE(re.is_ok()) << bad;
    EXPECT_NE(re.status().message().find("offset"), std::string::npos) << re.status().message();
  }
}

TEST(Unicode, Utf8RepairReplacesMaximalSubparts) {
  EXPECT_EQ(utf8_make_valid("a\xC3"), "a\xEF\xBF\xBD");
  EXPECT_EQ(utf8_make_valid("\xE2\x82x"), "\xEF\xBF\xBDx");                            // truncated 3-byte: one U+FFFD
  EXPECT_EQ(utf8_make_valid("\xFF\xFE"), "\xEF\xBF\xBD\xEF\xBF\xBD");                  // two bad bytes: two
  EXPECT_EQ(utf8_make_valid("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  EXPECT_EQ(utf8_incomplete_tail("ab\xE2\x82"), 2u);
  EXPECT_EQ(utf8_incomplete_tail("ab\xE2\x82\xAC"), 0u);
}

TEST(Unicode, NormalFormsAndByteMap) {
  EXPECT_EQ(normalize_unicode("e\xCC\x81", NormalForm::kNFC), "\xC3\xA9");
  EXPECT_EQ(normalize_unicode("\xC3\xA9", NormalForm::kNFD), "e\xCC\x81");
  EXPECT_EQ(normalize_unicode("\xEF\xBC\xA1", NormalForm::kNFKC), "A");  // fullwidth A
  for (int b = 0; b < 256; ++b) EXPECT_EQ(unicode_to_byte(byte_to_unicode(static_cast<uint8_t>(b))), b);
  EXPECT_EQ(byte_to_unicode(' '), 0x120u);  // 'Ġ'
}

}  // namespace
}  // namespace xonnx::genai
