// Added tokens of tokenizer.json ("added_tokens"): found in the text before normalization (or
// after it, for tokens marked "normalized") with leftmost-longest matching, then lstrip / rstrip
// take the whitespace next to them and single_word requires word boundaries, as HF tokenizers'
// AddedVocabulary does.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace xonnx::genai {

struct AddedToken {
  int32_t id = -1;
  std::string content;
  bool special = false;
  bool lstrip = false;
  bool rstrip = false;
  bool single_word = false;
  bool normalized = false;
};

// One piece of a split: text (token < 0) or an added token.
struct AddedSplit {
  size_t begin, end;
  int32_t token;
};

class AddedTokenMatcher {
 public:
  void add(const AddedToken& token);
  bool empty() const { return tokens_.empty(); }
  // Splits text into runs of plain text and added tokens (the pieces cover text in order,
  // except whitespace an lstrip / rstrip token absorbed).
  void split(std::string_view text, std::vector<AddedSplit>& out) const;

 private:
  // Length of the longest token starting at text[pos] (0 if none), and its index.
  size_t longest_at(std::string_view text, size_t pos, size_t& index) const;

  std::vector<AddedToken> tokens_;
  bool first_byte_[256] = {};
  // Byte trie: node * 256 + byte -> child node; terminal token index per node (-1 if none).
  std::unordered_map<uint64_t, int32_t> edges_;
  std::vector<int32_t> terminal_{-1};
};

}  // namespace xonnx::genai
