// tokenizer.json "pre_tokenizer": splits normalized text into the words the model tokenizes
// (HF tokenizers' pre_tokenizers/*.rs). Supported types: Sequence, Split (String or Regex
// pattern; behaviors Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous; invert),
// ByteLevel (add_prefix_space, use_regex), Digits, Metaspace (prepend_scheme always / first /
// never, split), Whitespace, WhitespaceSplit, Punctuation.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sdk/genai/tokenizer_json.h"

namespace xonnx::genai {

struct PreToken {
  std::string text;
  bool at_start = false;  // begins at offset 0 of the input (Metaspace's prepend_scheme "first")
};

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  // Replaces each piece with the pieces it splits into; empty pieces are dropped.
  virtual void pre_tokenize(std::vector<PreToken>& pieces) const = 0;
};

Result<std::unique_ptr<PreTokenizer>> make_pre_tokenizer(const Json& j, const JsonPath& at);

// The ByteLevel pre-tokenizer's char map applied to every byte of text.
std::string byte_level_encode(std::string_view text);

}  // namespace xonnx::genai
