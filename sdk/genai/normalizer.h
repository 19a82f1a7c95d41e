// tokenizer.json "normalizer": text transforms applied to the text between added tokens before
// pre-tokenization (HF tokenizers' normalizers/*.rs). Supported types: Sequence, NFC, NFD, NFKC,
// NFKD, Lowercase, StripAccents, Strip, Replace, Prepend. Offsets are not tracked: xonnx needs
// ids, not alignments.
#pragma once

#include <memory>
#include <string>

#include "sdk/genai/tokenizer_json.h"

namespace xonnx::genai {

class UnicodeRegex;

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  virtual void normalize(std::string& text) const = 0;
};

// Builds the normalizer described by j (at names it in errors).
Result<std::unique_ptr<Normalizer>> make_normalizer(const Json& j, const JsonPath& at);

// A "pattern" object of tokenizer.json ({"String": "..."} or {"Regex": "..."}) compiled.
Result<std::unique_ptr<UnicodeRegex>> read_pattern(const Json& obj, const JsonPath& at);
// Replaces every match of pattern in text with content.
std::string replace_all(const UnicodeRegex& pattern, const std::string& text, const std::string& content);

}  // namespace xonnx::genai
