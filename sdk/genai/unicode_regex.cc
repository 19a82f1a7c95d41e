#include "sdk/genai/unicode_regex.h"

#include <re2/re2.h>

#include <cstdio>

#include "sdk/genai/unicode.h"

namespace xonnx::genai {
namespace {

// Oniguruma's Unicode \s (White_Space) and its complement, as RE2 class contents.
constexpr std::pair<uint32_t, uint32_t> kWhitespaceRanges[] = {
    {0x09, 0x0D},     {0x20, 0x20},     {0x85, 0x85},     {0xA0, 0xA0},     {0x1680, 0x1680},
    {0x2000, 0x200A}, {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000}};

std::string class_range(uint32_t lo, uint32_t hi) {
  char buf[40];
  if (lo == hi)
    std::snprintf(buf, sizeof buf, "\\x{%x}", lo);
  else
    std::snprintf(buf, sizeof buf, "\\x{%x}-\\x{%x}", lo, hi);
  return buf;
}

std::string whitespace_class_body(bool negated) {
  std::string s;
  if (!negated) {
    for (auto [lo, hi] : kWhitespaceRanges) s += class_range(lo, hi);
    return s;
  }
  uint32_t next = 0;
  for (auto [lo, hi] : kWhitespaceRanges) {
    if (lo > next) s += class_range(next, lo - 1);
    next = hi + 1;
  }
  s += class_range(next, 0x10FFFF);
  return s;
}

const char* const kWordClassBody = "\\p{L}\\p{M}\\p{N}\\p{Pc}";

// Translates an Oniguruma (Ruby syntax) pattern into RE2 syntax, one top-level alternative at
// a time, recording which alternatives end in an emulated lookahead.
class Translator {
 public:
  struct Alternative {
    std::string body;  // RE2 text of the alternative without its lookahead
    bool lookahead = false;
    bool negative = false;
    size_t min_repeat = 0;
    std::string lookahead_item;  // RE2 text of the single-char item inside the lookahead
  };

  explicit Translator(std::string_view p) : p_(p) {}

  Status run(std::vector<Alternative>& alternatives) {
    while (true) {
      Alternative alt;
      XONNX_RETURN_IF_ERROR(top_level_alternative(alt));
      alternatives.push_back(std::move(alt));
      if (i_ >= p_.size()) return Status::ok();
      if (p_[i_] == ')') return error("unbalanced ')'");
      ++i_;  // '|'
    }
  }

 private:
  Status error(const std::string& what) const {
    return invalid_argument("regex pattern at offset ", i_, ": ", what, " (pattern: \"", std::string(p_), "\")");
  }
  bool at(char c) const { return i_ < p_.size() && p_[i_] == c; }
  bool starts(std::string_view s) const { return p_.substr(i_, s.size()) == s; }

  // One alternative of the whole pattern: a sequence of quantified atoms, possibly ending in a
  // lookahead after a single repeated char item.
  Status top_level_alternative(Alternative& alt) {
    size_t atoms = 0;
    bool last_single = false;
    std::string last_quant;
    while (i_ < p_.size() && !at('|') && !at(')')) {
      if (starts("(?!") || starts("(?=")) {
        alt.negative = p_[i_ + 2] == '!';
        i_ += 3;
        bool single = false;
        std::string item;
        XONNX_RETURN_IF_ERROR(atom(item, single, 1));
        if (!single || !at(')')) return error("a lookahead must hold a single character or class");
        ++i_;
        if (i_ < p_.size() && !at('|') && !at(')')) return error("a lookahead must end its alternative");
        if (atoms != 1 || !last_single || (last_quant != "+" && last_quant != "*")) {
          return error("a lookahead is supported only after one greedy repeated character item, as in \\s+(?!\\S)");
        }
        alt.lookahead = true;
        alt.min_repeat = last_quant == "+" ? 1 : 0;
        alt.lookahead_item = item;
        return Status::ok();
      }
      XONNX_RETURN_IF_ERROR(quantified_atom(alt.body, last_single, last_quant, 0));
      ++atoms;
    }
    return Status::ok();
  }

  Status quantified_atom(std::string& out, bool& single, std::string& quant, int depth) {
    XONNX_RETURN_IF_ERROR(atom(out, single, depth));
    quant.clear();
    if (i_ >= p_.size()) return Status::ok();
    const char c = p_[i_];
    if (c == '*' || c == '+' || c == '?') {
      quant = c;
      ++i_;
    } else if (c == '{') {
      const size_t close = p_.find('}', i_);
      if (close == std::string_view::npos) return error("unterminated {n,m}");
      const std::string_view body = p_.substr(i_ + 1, close - i_ - 1);
      bool ok = !body.empty();
      for (char d : body) ok = ok && ((d >= '0' && d <= '9') || d == ',');
      if (!ok) {  // Oniguruma reads a '{' that starts no interval as a literal
        out += "\\{";
        ++i_;
        return Status::ok();
      }
      quant = std::string(p_.substr(i_, close - i_ + 1));
      if (body[0] == ',') quant = "{0" + std::string(body) + "}";  // Ruby's {,n}
      i_ = close + 1;
    } else {
      return Status::ok();
    }
    if (at('+')) return error("possessive quantifiers are not supported");
    if (at('?')) {
      quant += '?';
      ++i_;
    }
    out += quant;
    return Status::ok();
  }

  Status atom(std::string& out, bool& single, int depth) {
    single = false;
    if (i_ >= p_.size()) return error("missing atom");
    const char c = p_[i_];
    if (c == '(') return group(out, depth);
    if (c == '[') {
      single = true;
      return char_class(out);
    }
    if (c == '\\') return escape(out, single, false);
    if (c == '*' || c == '+' || c == '?' || c == '{') return error("nothing to repeat");
    if (c == '.') {
      single = true;
      out += '.';
      ++i_;
      return Status::ok();
    }
    if (c == '^' || c == '$') {
      out += c;
      ++i_;
      return Status::ok();
    }
    single = true;
    const size_t len = utf8_sequence_length(p_, i_);
    if (len == 0) return error("ill-formed UTF-8");
    literal(out, p_.substr(i_, len));
    i_ += len;
    return Status::ok();
  }

  static void literal(std::string& out, std::string_view ch) {
    if (ch.size() == 1 && std::string_view("\\^$.|?*+()[]{}-").find(ch[0]) != std::string_view::npos) {
      out += '\\';
    }
    out += ch;
  }

  Status group(std::string& out, int depth) {
    ++i_;  // '('
    if (at('?')) {
      if (starts("?:")) {
        i_ += 2;
        out += "(?:";
      } else if (starts("?i:") || starts("?-i:")) {
        const size_t n = at('?') && p_[i_ + 1] == '-' ? 4 : 3;
        out += "(?" + std::string(p_.substr(i_ + 1, n - 1));
        i_ += n;
      } else if (starts("?<") && i_ + 2 < p_.size() && p_[i_ + 2] != '=' && p_[i_ + 2] != '!') {
        const size_t close = p_.find('>', i_);
        if (close == std::string_view::npos) return error("unterminated group name");
        i_ = close + 1;  // named group: captures are not used, so it becomes a plain group
        out += "(?:";
      } else if (starts("?!") || starts("?=")) {
        return error("lookahead is supported only at the end of a top-level alternative");
      } else {
        return error("unsupported group construct (lookbehind, atomic group, inline flags other than i)");
      }
    } else {
      out += "(?:";  // plain groups do not capture: capture slots mark the alternatives
    }
    while (true) {
      while (i_ < p_.size() && !at('|') && !at(')')) {
        bool single;
        std::string quant;
        XONNX_RETURN_IF_ERROR(quantified_atom(out, single, quant, depth + 1));
      }
      if (i_ >= p_.size()) return error("missing ')'");
      out += p_[i_];
      if (p_[i_++] == ')') return Status::ok();
    }
  }

  // An escape outside or inside a class (in_class: only items valid in a class body).
  Status escape(std::string& out, bool& single, bool in_class) {
    if (i_ + 1 >= p_.size()) return error("pattern ends in '\\'");
    const char e = p_[i_ + 1];
    i_ += 2;
    single = true;
    auto set = [&](const std::string& body, bool negated) {
      if (in_class)
        out += body;
      else
        out += (negated ? "[^" : "[") + body + "]";
    };
    switch (e) {
      case 's': set(whitespace_class_body(false), false); return Status::ok();
      case 'S':
        if (in_class)
          out += whitespace_class_body(true);
        else
          out += "[^" + whitespace_class_body(false) + "]";
        return Status::ok();
      case 'd': out += "\\p{Nd}"; return Status::ok();
      case 'D': out += "\\P{Nd}"; return Status::ok();
      case 'w': set(kWordClassBody, false); return Status::ok();
      case 'W':
        if (in_class) return error("\\W inside a character class is not supported");
        set(kWordClassBody, true);
        return Status::ok();
      case 'h': set("0-9a-fA-F", false); return Status::ok();
      case 't': out += "\\t"; return Status::ok();
      case 'n': out += "\\n"; return Status::ok();
      case 'r': out += "\\r"; return Status::ok();
      case 'f': out += "\\f"; return Status::ok();
      case 'v': out += "\\v"; return Status::ok();
      case 'a': out += "\\a"; return Status::ok();
      case 'e': out += "\\x1b"; return Status::ok();
      case 'p':
      case 'P': {
        if (!at('{')) return error("\\p needs {Name}");
        const size_t close = p_.find('}', i_);
        if (close == std::string_view::npos) return error("unterminated \\p{");
        out += '\\';
        out += e;
        out += p_.substr(i_, close - i_ + 1);
        i_ = close + 1;
        return Status::ok();
      }
      case 'x':
      case 'u': {
        uint32_t cp = 0;
        size_t digits = 0;
        if (e == 'x' && at('{')) {
          const size_t close = p_.find('}', i_);
          if (close == std::string_view::npos) return error("unterminated \\x{");
          for (size_t k = i_ + 1; k < close; ++k, ++digits) {
            const int v = hex(p_[k]);
            if (v < 0) return error("bad hex digit in \\x{}");
            cp = cp * 16 + static_cast<uint32_t>(v);
          }
          i_ = close + 1;
        } else {
          const size_t want = e == 'x' ? 2 : 4;
          for (; digits < want && i_ < p_.size() && hex(p_[i_]) >= 0; ++digits, ++i_) {
            cp = cp * 16 + static_cast<uint32_t>(hex(p_[i_]));
          }
        }
        if (digits == 0 || cp > 0x10FFFF) return error("bad \\x or \\u escape");
        out += class_range(cp, cp);
        return Status::ok();
      }
      default: break;
    }
    if ((e >= '0' && e <= '9') || e == 'k' || e == 'g')
      return error("backreferences and subexpression calls are not supported");
    if ((e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z')) {
      if (!in_class && (e == 'b' || e == 'B' || e == 'A' || e == 'z' || e == 'Z' || e == 'G')) {
        return error(std::string("anchor \\") + e + " is not supported");
      }
      return error(std::string("unsupported escape \\") + e);
    }
    // An escaped punctuation or non-ASCII char stands for itself (RE2 rejects '\' before a
    // non-ASCII char, so that one goes unescaped).
    --i_;
    const size_t len = utf8_sequence_length(p_, i_);
    if (len == 0) return error("ill-formed UTF-8");
    if (len == 1) out += '\\';
    out += p_.substr(i_, len);
    i_ += len;
    return Status::ok();
  }

  static int hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  Status char_class(std::string& out) {
    ++i_;  // '['
    out += '[';
    if (at('^')) {
      out += '^';
      ++i_;
    }
    bool first = true;
    while (true) {
      if (i_ >= p_.size()) return error("missing ']'");
      const char c = p_[i_];
      if (c == ']' && !first) {
        out += ']';
        ++i_;
        return Status::ok();
      }
      first = false;
      if (c == '[') return error("nested character classes are not supported");
      if (c == '&' && starts("&&")) return error("character class intersection (&&) is not supported");
      if (c == '\\') {
        bool single;
        XONNX_RETURN_IF_ERROR(escape(out, single, true));
        continue;
      }
      const size_t len = utf8_sequence_length(p_, i_);
      if (len == 0) return error("ill-formed UTF-8");
      if (len == 1 && (c == ']' || c == '\\')) out += '\\';
      out += p_.substr(i_, len);
      i_ += len;
    }
  }

  std::string_view p_;
  size_t i_ = 0;
};

std::unique_ptr<re2::RE2> compile_re2(const std::string& text, std::string& error) {
  re2::RE2::Options options;
  options.set_log_errors(false);
  options.set_max_mem(64 << 20);
  auto re = std::make_unique<re2::RE2>(text, options);
  if (!re->ok()) {
    error = re->error();
    return nullptr;
  }
  return re;
}

std::string escape_literal(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    const size_t len = std::max<size_t>(1, utf8_sequence_length(s, i));
    const char c = s[i];
    if (len == 1 && !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) {
      out += class_range(static_cast<uint8_t>(c), static_cast<uint8_t>(c));
    } else {
      out += s.substr(i, len);
    }
    i += len;
  }
  return out;
}

}  // namespace

UnicodeRegex::~UnicodeRegex() = default;

Result<std::unique_ptr<UnicodeRegex>> UnicodeRegex::compile(std::string_view pattern, bool literal) {
  if (!utf8_is_valid(pattern)) return invalid_argument("regex pattern is not valid UTF-8");
  std::vector<Translator::Alternative> alts;
  if (literal) {
    alts.emplace_back();
    alts.back().body = escape_literal(pattern);
  } else {
    XONNX_RETURN_IF_ERROR(Translator(pattern).run(alts));
  }
  std::unique_ptr<UnicodeRegex> re(new UnicodeRegex());
  re->alternatives_.resize(alts.size());
  re->starts_.resize(alts.size());
  std::string error;
  auto compile = [&](const std::string& text, std::unique_ptr<re2::RE2>& out) -> Status {
    out = compile_re2(text, error);
    if (!out) return invalid_argument("regex pattern \"", std::string(pattern), "\" (as RE2: \"", text, "\"): ", error);
    return Status::ok();
  };
  // Alternatives first .. last - 1 as one RE2 pattern (^ and $ match at line breaks, as in
  // Ruby syntax).
  auto joined = [&](size_t first, size_t last) {
    std::string text = "(?m)";
    for (size_t j = first; j < last; ++j) text += (j > first ? "|(?:" : "(?:") + alts[j].body + ")";
    return text;
  };
  for (size_t k = 0; k < alts.size(); ++k) {
    Alternative& a = re->alternatives_[k];
    a.lookahead = alts[k].lookahead;
    a.negative = alts[k].negative;
    a.min_repeat = alts[k].min_repeat;
    if (a.lookahead) {
      XONNX_RETURN_IF_ERROR(compile(alts[k].lookahead_item, a.lookahead_item));
      XONNX_RETURN_IF_ERROR(compile(joined(k, k + 1), a.body));
    }
  }
  for (size_t first = 0; first < alts.size(); ++first) {
    if (first > 0 && !alts[first - 1].lookahead) continue;
    Start& st = re->starts_[first];
    XONNX_RETURN_IF_ERROR(compile(joined(first, alts.size()), st.all));
    if (first == 0) re->translated_ = st.all->pattern();
    for (size_t j = first; j < alts.size(); ++j) {
      if (!alts[j].lookahead) continue;
      st.before.emplace_back(j, nullptr);
      if (j > first) XONNX_RETURN_IF_ERROR(compile(joined(first, j), st.before.back().second));
    }
  }
  return re;
}

bool UnicodeRegex::apply_lookahead(std::string_view text, size_t begin, size_t& end, const Alternative& alt) const {
  // [begin, end) is the maximal run of the repeated item; give back one char at a time.
  std::vector<size_t> ends{begin};
  for (size_t i = begin; i < end;) {
    utf8_next(text, i);
    ends.push_back(i);
  }
  for (size_t k = ends.size(); k-- > alt.min_repeat;) {
    const size_t at = ends[k];
    bool item = false;
    if (at < text.size()) {
      size_t next = at;
      utf8_next(text, next);
      item = re2::RE2::FullMatch(re2::StringPiece(text.data() + at, next - at), *alt.lookahead_item);
    }
    if (item != alt.negative) {
      end = at;
      return true;
    }
  }
  return false;
}

bool UnicodeRegex::search(std::string_view text, size_t from, size_t first_alt, bool anchored, size_t& begin,
                          size_t& end) const {
  const Start& st = starts_[first_alt];
  const re2::StringPiece input(text.data(), text.size());
  auto matches_at = [&](const re2::RE2& re, size_t pos) {
    return re.Match(input, pos, text.size(), re2::RE2::ANCHOR_START, nullptr, 0);
  };
  while (from <= text.size()) {
    // Pre-tokenizer patterns cover the text, so the next match nearly always starts at `from`:
    // try there first (one forward DFA pass), then search.
    re2::StringPiece m;
    if (!st.all->Match(input, from, text.size(), re2::RE2::ANCHOR_START, &m, 1) &&
        (anchored || !st.all->Match(input, from, text.size(), re2::RE2::UNANCHORED, &m, 1))) {
      return false;
    }
    const size_t b = static_cast<size_t>(m.data() - text.data());
    size_t e = b + m.size();
    // Did a lookahead alternative win? It does where its body matches and no alternative
    // before it does (leftmost-first: the first alternative that matches at b wins).
    size_t winner = alternatives_.size();
    for (const auto& [j, before] : st.before) {
      if (!matches_at(*alternatives_[j].body, b)) continue;
      if (!before || !matches_at(*before, b)) winner = j;
      break;
    }
    if (winner == alternatives_.size() || apply_lookahead(text, b, e, alternatives_[winner])) {
      begin = b;
      end = e;
      return true;
    }
    // The lookahead never holds: the later alternatives may still match at b.
    if (winner + 1 < alternatives_.size() && search(text, b, winner + 1, true, begin, end)) return true;
    if (anchored || b >= text.size()) return false;
    from = b;
    utf8_next(text, from);
  }
  return false;
}

void UnicodeRegex::find_all(std::string_view text, std::vector<std::pair<size_t, size_t>>& matches) const {
  size_t from = 0;
  bool have_last = false;
  size_t last_end = 0;
  while (from <= text.size()) {
    size_t b, e;
    if (!search(text, from, 0, false, b, e)) return;
    if (b == e && have_last && e == last_end) {
      if (from >= text.size()) return;
      utf8_next(text, from);
      continue;
    }
    matches.emplace_back(b, e);
    have_last = true;
    last_end = e;
    from = e;
  }
}

}  // namespace xonnx::genai
