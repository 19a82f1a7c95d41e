#include "sdk/genai/pre_tokenizer.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <functional>

#include "sdk/genai/normalizer.h"
#include "sdk/genai/unicode.h"
#include "sdk/genai/unicode_regex.h"

namespace xonnx::genai {
namespace {

// GPT-2's pattern, which ByteLevel with use_regex applies.
constexpr const char* kGpt2Pattern =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

enum class Behavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

struct Span {
  size_t begin, end;
  bool is_match;
};

// The pieces of text around and between the matches, as HF's Pattern::find_matches returns.
void spans_from_matches(size_t size, const std::vector<std::pair<size_t, size_t>>& matches, std::vector<Span>& spans) {
  size_t prev = 0;
  for (auto [b, e] : matches) {
    if (prev != b) spans.push_back({prev, b, false});
    spans.push_back({b, e, true});
    prev = e;
  }
  if (prev != size) spans.push_back({prev, size, false});
}

// Every char for which pred holds is its own match.
void spans_from_chars(const std::string& text, const std::function<bool(uint32_t)>& pred, std::vector<Span>& spans) {
  size_t last = 0;
  for (size_t i = 0; i < text.size();) {
    const size_t b = i;
    if (pred(utf8_next(text, i))) {
      if (last < b) spans.push_back({last, b, false});
      spans.push_back({b, i, true});
      last = i;
    }
  }
  if (last < text.size()) spans.push_back({last, text.size(), false});
}

// HF's NormalizedString::split: merges or drops the spans per behavior and appends the
// non-empty pieces to out.
void split_by_behavior(const PreToken& piece, std::vector<Span>& spans, Behavior behavior, bool invert,
                       std::vector<PreToken>& out) {
  if (invert) {
    for (Span& s : spans) s.is_match = !s.is_match;
  }
  std::vector<Span> merged;
  switch (behavior) {
    case Behavior::kRemoved: merged = spans; break;
    case Behavior::kIsolated:
      for (const Span& s : spans) merged.push_back({s.begin, s.end, false});
      break;
    case Behavior::kContiguous: {
      bool previous_match = false;
      for (const Span& s : spans) {
        if (s.is_match == previous_match && !merged.empty())
          merged.back().end = s.end;
        else
          merged.push_back({s.begin, s.end, false});
        previous_match = s.is_match;
      }
      break;
    }
    case Behavior::kMergedWithPrevious: {
      bool previous_match = false;
      for (const Span& s : spans) {
        if (s.is_match && !previous_match && !merged.empty())
          merged.back().end = s.end;
        else
          merged.push_back({s.begin, s.end, false});
        previous_match = s.is_match;
      }
      break;
    }
    case Behavior::kMergedWithNext: {
      bool previous_match = false;
      for (size_t k = spans.size(); k-- > 0;) {
        const Span& s = spans[k];
        if (s.is_match && !previous_match && !merged.empty())
          merged.back().begin = s.begin;
        else
          merged.push_back({s.begin, s.end, false});
        previous_match = s.is_match;
      }
      std::reverse(merged.begin(), merged.end());
      break;
    }
  }
  for (const Span& s : merged) {
    if (s.is_match || s.begin == s.end) continue;
    out.push_back({piece.text.substr(s.begin, s.end - s.begin), piece.at_start && s.begin == 0});
  }
}

Result<Behavior> read_behavior(const Json& j, const JsonPath& at, Behavior fallback) {
  std::string name;
  XONNX_RETURN_IF_ERROR(get_string(j, "behavior", at, name));
  if (name.empty()) return fallback;
  if (name == "Removed") return Behavior::kRemoved;
  if (name == "Isolated") return Behavior::kIsolated;
  if (name == "MergedWithPrevious") return Behavior::kMergedWithPrevious;
  if (name == "MergedWithNext") return Behavior::kMergedWithNext;
  if (name == "Contiguous") return Behavior::kContiguous;
  return (at / "behavior").error("unknown split behavior \"", name, "\"");
}

class SequencePreTokenizer : public PreTokenizer {
 public:
  std::vector<std::unique_ptr<PreTokenizer>> parts;
  void pre_tokenize(std::vector<PreToken>& pieces) const override {
    for (const auto& p : parts) p->pre_tokenize(pieces);
  }
};

class RegexSplitPreTokenizer : public PreTokenizer {
 public:
  std::unique_ptr<UnicodeRegex> pattern;
  Behavior behavior = Behavior::kIsolated;
  bool invert = false;
  void pre_tokenize(std::vector<PreToken>& pieces) const override {
    std::vector<PreToken> out;
    out.reserve(pieces.size() * 4);
    std::vector<std::pair<size_t, size_t>> matches;
    std::vector<Span> spans;
    for (const PreToken& piece : pieces) {
      matches.clear();
      spans.clear();
      pattern->find_all(piece.text, matches);
      spans_from_matches(piece.text.size(), matches, spans);
      split_by_behavior(piece, spans, behavior, invert, out);
    }
    pieces.swap(out);
  }
};

class CharSplitPreTokenizer : public PreTokenizer {
 public:
  std::function<bool(uint32_t)> pred;
  Behavior behavior = Behavior::kRemoved;
  void pre_tokenize(std::vector<PreToken>& pieces) const override {
    std::vector<PreToken> out;
    std::vector<Span> spans;
    for (const PreToken& piece : pieces) {
      spans.clear();
      spans_from_chars(piece.text, pred, spans);
      split_by_behavior(piece, spans, behavior, false, out);
    }
    pieces.swap(out);
  }
};

class ByteLevelPreTokenizer : public PreTokenizer {
 public:
  bool add_prefix_space = true;
  std::unique_ptr<UnicodeRegex> regex;  // null when use_regex is false
  void pre_tokenize(std::vector<PreToken>& pieces) const override {
    std::vector<PreToken> out;
    out.reserve(pieces.size() * 4);
    std::vector<std::pair<size_t, size_t>> matches;
    std::vector<Span> spans;
    for (PreToken& piece : pieces) {
      if (add_prefix_space && (piece.text.empty() || piece.text[0] != ' ')) piece.text.insert(0, " ");
      const size_t first = out.size();
      if (regex) {
        matches.clear();
        spans.clear();
        regex->find_all(piece.text, matches);
        spans_from_matches(piece.text.size(), matches, spans);
        split_by_behavior(piece, spans, Behavior::kIsolated, false, out);
      } else if (!piece.text.empty()) {
        out.push_back(std::move(piece));
      }
      for (size_t k = first; k < out.size(); ++k) out[k].text = byte_level_encode(out[k].text);
    }
    pieces.swap(out);
  }
};

class MetaspacePreTokenizer : public PreTokenizer {
 public:
  enum class Prepend { kAlways, kFirst, kNever };
  std::string replacement = "\xE2\x96\x81";  // U+2581
  uint32_t replacement_cp = 0x2581;
  Prepend prepend = Prepend::kAlways;
  bool split = true;
  void pre_tokenize(std::vector<PreToken>& pieces) const override {
    std::vector<PreToken> out;
    std::vector<Span> spans;
    for (PreToken& piece : pieces) {
      std::string text;
      text.reserve(piece.text.size() + 3);
      for (char c : piece.text) {
        if (c == ' ')
          text += replacement;
        else
          text += c;
      }
      const bool starts = text.compare(0, replacement.size(), replacement) == 0;
      if (!starts && (prepend == Prepend::kAlways || (prepend == Prepend::kFirst && piece.at_start))) {
        text.insert(0, replacement);
      }
      PreToken replaced{std::move(text), piece.at_start};
      if (!split) {
        if (!replaced.text.empty()) out.push_back(std::move(replaced));
        continue;
      }
      spans.clear();
      const uint32_t r = replacement_cp;
      spans_from_chars(
          replaced.text, [r](uint32_t cp) { return cp == r; }, spans);
      split_by_behavior(replaced, spans, Behavior::kMergedWithNext, false, out);
    }
    pieces.swap(out);
  }
};

Result<std::unique_ptr<UnicodeRegex>> compile_builtin(const char* pattern, const JsonPath& at) {
  auto re = UnicodeRegex::compile(pattern);
  if (!re.is_ok()) return at.error(re.status().message());
  return std::move(re).value();
}

}  // namespace

std::string byte_level_encode(std::string_view text) {
  static const auto table = [] {
    std::array<std::string, 256> t;
    for (int b = 0; b < 256; ++b) utf8_append(t[b], byte_to_unicode(static_cast<uint8_t>(b)));
    return t;
  }();
  std::string out;
  out.reserve(text.size() * 2);
  for (char c : text) out += table[static_cast<uint8_t>(c)];
  return out;
}

Result<std::unique_ptr<PreTokenizer>> make_pre_tokenizer(const Json& j, const JsonPath& at) {
  XONNX_ASSIGN_OR_RETURN(std::string type, component_type(j, at));
  if (type == "Sequence") {
    auto seq = std::make_unique<SequencePreTokenizer>();
    XONNX_ASSIGN_OR_RETURN(const Json* parts, get_array(j, "pretokenizers", at));
    for (size_t i = 0; i < parts->size(); ++i) {
      XONNX_ASSIGN_OR_RETURN(auto part, make_pre_tokenizer((*parts)[i], (at / "pretokenizers")[i]));
      seq->parts.push_back(std::move(part));
    }
    return std::unique_ptr<PreTokenizer>(std::move(seq));
  }
  if (type == "Split") {
    auto p = std::make_unique<RegexSplitPreTokenizer>();
    XONNX_ASSIGN_OR_RETURN(p->pattern, read_pattern(j, at));
    XONNX_ASSIGN_OR_RETURN(p->behavior, read_behavior(j, at, Behavior::kIsolated));
    XONNX_RETURN_IF_ERROR(get_bool(j, "invert", at, p->invert));
    return std::unique_ptr<PreTokenizer>(std::move(p));
  }
  if (type == "ByteLevel") {
    auto p = std::make_unique<ByteLevelPreTokenizer>();
    bool use_regex = true;
    XONNX_RETURN_IF_ERROR(get_bool(j, "add_prefix_space", at, p->add_prefix_space));
    XONNX_RETURN_IF_ERROR(get_bool(j, "use_regex", at, use_regex));
    if (use_regex) {
      XONNX_ASSIGN_OR_RETURN(p->regex, compile_builtin(kGpt2Pattern, at));
    }
    return std::unique_ptr<PreTokenizer>(std::move(p));
  }
  if (type == "Digits") {
    auto p = std::make_unique<CharSplitPreTokenizer>();
    bool individual = false;
    XONNX_RETURN_IF_ERROR(get_bool(j, "individual_digits", at, individual));
    p->pred = is_numeric;
    p->behavior = individual ? Behavior::kIsolated : Behavior::kContiguous;
    return std::unique_ptr<PreTokenizer>(std::move(p));
  }
  if (type == "WhitespaceSplit") {
    auto p = std::make_unique<CharSplitPreTokenizer>();
    p->pred = is_whitespace;
    p->behavior = Behavior::kRemoved;
    return std::unique_ptr<PreTokenizer>(std::move(p));
  }
  if (type == "Punctuation") {
    auto p = std::make_unique<CharSplitPreTokenizer>();
    p->pred = [](uint32_t cp) { return (cp < 0x80 && std::ispunct(static_cast<int>(cp))) || is_punctuation(cp); };
    XONNX_ASSIGN_OR_RETURN(p->behavior, read_behavior(j, at, Behavior::kIsolated));
    return std::unique_ptr<PreTokenizer>(std::move(p));
  }
  if (type == "Whitespace") {
    auto p = std::make_unique<RegexSplitPreTokenizer>();
    XONNX_ASSIGN_OR_RETURN(p->pattern, compile_builtin("\\w+|[^\\w\\s]+", at));
    p->behavior = Behavior::kRemoved;
    p->invert = true;
    return std::unique_ptr<PreTokenizer>(std::move(p));
  }
  if (type == "Metaspace") {
    auto p = std::make_unique<MetaspacePreTokenizer>();
    XONNX_RETURN_IF_ERROR(get_string(j, "replacement", at, p->replacement));
    size_t i = 0;
    if (p->replacement.empty() || (p->replacement_cp = utf8_next(p->replacement, i), i != p->replacement.size())) {
      return (at / "replacement").error("expected a single character");
    }
    std::string scheme;
    XONNX_RETURN_IF_ERROR(get_string(j, "prepend_scheme", at, scheme));
    if (scheme.empty()) {  // older files: add_prefix_space
      bool add_prefix_space = true;
      XONNX_RETURN_IF_ERROR(get_bool(j, "add_prefix_space", at, add_prefix_space));
      p->prepend = add_prefix_space ? MetaspacePreTokenizer::Prepend::kAlways : MetaspacePreTokenizer::Prepend::kNever;
    } else if (scheme == "always") {
      p->prepend = MetaspacePreTokenizer::Prepend::kAlways;
    } else if (scheme == "first") {
      p->prepend = MetaspacePreTokenizer::Prepend::kFirst;
    } else if (scheme == "never") {
      p->prepend = MetaspacePreTokenizer::Prepend::kNever;
    } else {
      return (at / "prepend_scheme").error("expected always, first or never, found \"", scheme, "\"");
    }
    XONNX_RETURN_IF_ERROR(get_bool(j, "split", at, p->split));
    return std::unique_ptr<PreTokenizer>(std::move(p));
  }
  return (at / "type")
      .error("unsupported pre_tokenizer \"", type,
             "\" (supported: Sequence, Split, ByteLevel, Digits, Metaspace, Whitespace, "
             "WhitespaceSplit, Punctuation)");
}

}  // namespace xonnx::genai
