// Regular expressions of tokenizer.json (Split pre-tokenizer, Replace normalizer/decoder), which
// Hugging Face tokenizers compiles with Oniguruma, run on RE2 (linear time, no backtracking).
//
// The pattern is translated to RE2 syntax with Oniguruma's Unicode meaning of \s \S \d \D \w
// (\s is White_Space, not ASCII as in RE2). RE2 has no lookaround; a negative or positive
// lookahead is emulated where it ends a top-level alternative after a greedy repeated single
// character item, as in the GPT-2 / Llama-3 / Qwen2 / o200k patterns' `\s+(?!\S)`: the
// alternative matches the maximal run and gives back one char at a time until the lookahead
// holds, exactly as a backtracking engine does, and if it never holds the later alternatives
// are tried at the same position. Other lookarounds, atomic groups, possessive quantifiers,
// backreferences and inline flags other than i are rejected at compile time with the position.
//
// Thread safety: a compiled regex is immutable; find_all may run concurrently.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/core/status.h"

namespace re2 {
class RE2;
}

namespace xonnx::genai {

class UnicodeRegex {
 public:
  ~UnicodeRegex();
  // Compiles an Oniguruma-syntax pattern, or a literal string when `literal` is set.
  static Result<std::unique_ptr<UnicodeRegex>> compile(std::string_view pattern, bool literal = false);

  // Byte ranges [begin, end) of the successive non-overlapping leftmost-first matches in text,
  // with Oniguruma's iteration rule for empty matches (none right after the previous match).
  void find_all(std::string_view text, std::vector<std::pair<size_t, size_t>>& matches) const;

  const std::string& translated() const { return translated_; }

 private:
  struct Alternative {
    bool lookahead = false;                    // this alternative is `C+(?!D)`, `C*(?=D)`, ...
    bool negative = false;                     // (?!...) rather than (?=...)
    size_t min_repeat = 0;                     // 1 for C+, 0 for C*
    std::unique_ptr<re2::RE2> body;            // C+ alone
    std::unique_ptr<re2::RE2> lookahead_item;  // D, matched against one code point
  };
  // The regexes that match alternatives first, first + 1, ... (first is 0, or follows a
  // lookahead alternative whose lookahead failed).
  struct Start {
    std::unique_ptr<re2::RE2> all;  // those alternatives, without lookaheads
    // For each lookahead alternative j >= first: the alternatives first .. j - 1 (null if none),
    // which take precedence over j where they match.
    std::vector<std::pair<size_t, std::unique_ptr<re2::RE2>>> before;
  };
  UnicodeRegex() = default;
  bool search(std::string_view text, size_t from, size_t first_alt, bool anchored, size_t& begin, size_t& end) const;
  bool apply_lookahead(std::string_view text, size_t begin, size_t& end, const Alternative& alt) const;

  std::string translated_;
  std::vector<Alternative> alternatives_;
  std::vector<Start> starts_;  // indexed by first alternative; only the used ones are filled
};

}  // namespace xonnx::genai
