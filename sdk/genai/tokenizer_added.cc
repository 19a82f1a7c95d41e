#include "sdk/genai/tokenizer_added.h"

#include "sdk/genai/unicode.h"

namespace xonnx::genai {
namespace {

bool is_word_char(uint32_t cp) { return cp == '_' || is_alphanumeric(cp); }

uint32_t last_char(std::string_view s) {
  size_t start = s.size() - 1;
  while (start > 0 && (static_cast<uint8_t>(s[start]) & 0xC0) == 0x80) --start;
  return utf8_next(s, start);
}

}  // namespace

void AddedTokenMatcher::add(const AddedToken& token) {
  if (token.content.empty()) return;
  const int32_t index = static_cast<int32_t>(tokens_.size());
  tokens_.push_back(token);
  first_byte_[static_cast<uint8_t>(token.content[0])] = true;
  int32_t node = 0;
  for (char c : token.content) {
    const uint64_t key = static_cast<uint64_t>(node) * 256 + static_cast<uint8_t>(c);
    auto it = edges_.find(key);
    if (it == edges_.end()) {
      it = edges_.emplace(key, static_cast<int32_t>(terminal_.size())).first;
      terminal_.push_back(-1);
    }
    node = it->second;
  }
  // A repeated content keeps its first entry.
  if (terminal_[static_cast<size_t>(node)] < 0) terminal_[static_cast<size_t>(node)] = index;
}

size_t AddedTokenMatcher::longest_at(std::string_view text, size_t pos, size_t& index) const {
  size_t best = 0;
  int32_t node = 0;
  for (size_t i = pos; i < text.size(); ++i) {
    auto it = edges_.find(static_cast<uint64_t>(node) * 256 + static_cast<uint8_t>(text[i]));
    if (it == edges_.end()) break;
    node = it->second;
    if (terminal_[static_cast<size_t>(node)] >= 0) {
      best = i + 1 - pos;
      index = static_cast<size_t>(terminal_[static_cast<size_t>(node)]);
    }
  }
  return best;
}

void AddedTokenMatcher::split(std::string_view text, std::vector<AddedSplit>& out) const {
  size_t emitted = 0;  // end of the last piece
  size_t pos = 0;
  while (pos < text.size()) {
    size_t index = 0, len = 0;
    if (first_byte_[static_cast<uint8_t>(text[pos])]) len = longest_at(text, pos, index);
    if (len == 0) {
      ++pos;
      continue;
    }
    const AddedToken& t = tokens_[index];
    size_t begin = pos, end = pos + len;
    pos = end;  // matches do not overlap, a rejected one included (as Aho-Corasick's iterator)
    if (t.single_word) {
      const bool word_before = begin > 0 && is_word_char(last_char(text.substr(0, begin)));
      size_t after = end;
      const bool word_after = end < text.size() && is_word_char(utf8_next(text, after));
      if (word_before || word_after) continue;
    }
    if (t.lstrip) {
      size_t b = begin;
      while (b > emitted) {
        size_t start = b - 1;
        while (start > emitted && (static_cast<uint8_t>(text[start]) & 0xC0) == 0x80) --start;
        size_t i = start;
        if (!is_whitespace(utf8_next(text, i))) break;
        b = start;
      }
      begin = b;
    }
    if (t.rstrip) {
      while (end < text.size()) {
        size_t i = end;
        if (!is_whitespace(utf8_next(text, i))) break;
        end = i;
      }
      pos = end;
    }
    if (emitted < begin) out.push_back({emitted, begin, -1});
    out.push_back({begin, end, t.id});
    emitted = end;
  }
  if (emitted < text.size()) out.push_back({emitted, text.size(), -1});
}

}  // namespace xonnx::genai
