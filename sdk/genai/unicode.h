// UTF-8 and Unicode helpers of the tokenizer: code point decoding, the character classes Hugging
// Face tokenizers tests with (Rust's char::is_whitespace / is_numeric / is_alphanumeric and
// Oniguruma's \s), normalization forms (utf8proc, Unicode 15) and the GPT-2 byte <-> char map.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace xonnx::genai {

constexpr uint32_t kReplacementChar = 0xFFFD;

// Length of the well-formed UTF-8 sequence at s[i], or 0 when the bytes there are not one.
size_t utf8_sequence_length(std::string_view s, size_t i);
// Decodes the code point at s[i] and advances i; an ill-formed byte decodes as U+FFFD, 1 byte.
uint32_t utf8_next(std::string_view s, size_t& i);
void utf8_append(std::string& out, uint32_t cp);
// Text with each maximal ill-formed subsequence replaced by U+FFFD (Rust's
// String::from_utf8_lossy, the WHATWG decoder): well-formed text comes back unchanged.
std::string utf8_make_valid(std::string_view s);
bool utf8_is_valid(std::string_view s);
// Number of bytes at the end of s that start a UTF-8 sequence not yet complete (0..3).
size_t utf8_incomplete_tail(std::string_view s);

// Unicode White_Space (Rust char::is_whitespace; Oniguruma's \s in Unicode mode).
bool is_whitespace(uint32_t cp);
// General category N* (Rust char::is_numeric).
bool is_numeric(uint32_t cp);
// Letters, numbers and marks (Rust char::is_alphanumeric, with combining marks standing in for
// the Other_Alphabetic property that utf8proc does not expose).
bool is_alphanumeric(uint32_t cp);
// General category P* (punctuation).
bool is_punctuation(uint32_t cp);
uint32_t to_lower(uint32_t cp);
uint32_t to_upper(uint32_t cp);

enum class NormalForm { kNFC, kNFD, kNFKC, kNFKD };
// Normalizes well-formed UTF-8 (ill-formed input is made valid first).
std::string normalize_unicode(std::string_view s, NormalForm form);
// Removes nonspacing marks (category Mn), as HF's StripAccents does (an NFD before it splits
// accented letters into letter + mark).
std::string strip_accents(std::string_view s);
std::string lowercase(std::string_view s);

// GPT-2's reversible byte <-> printable char map (ByteLevel pre-tokenizer and decoder).
uint32_t byte_to_unicode(uint8_t b);
// The byte a char of the map stands for, or -1 for a char outside the map.
int unicode_to_byte(uint32_t cp);

}  // namespace xonnx::genai
