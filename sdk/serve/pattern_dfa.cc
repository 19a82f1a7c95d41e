#include "sdk/serve/pattern_dfa.h"

#include <algorithm>
#include <cctype>
#include <bitset>
#include <map>
#include <unordered_map>

namespace xonnx::serve {

namespace {

using ByteSet = std::bitset<256>;

struct Ast {
  enum class Type { kSet, kConcat, kAlt, kRepeat, kStart, kEnd };
  Type type = Type::kConcat;
  ByteSet set;
  std::vector<Ast> children;
  int min = 0, max = -1;  // kRepeat; max -1: unbounded
};

Ast set_of(const ByteSet& s) {
  Ast a;
  a.type = Ast::Type::kSet;
  a.set = s;
  return a;
}

ByteSet range(int lo, int hi) {
  ByteSet s;
  for (int c = lo; c <= hi; ++c) s.set(static_cast<size_t>(c));
  return s;
}

// Any non-ASCII character as UTF-8 (lead byte then its continuation bytes; the string matcher
// checks the finer UTF-8 rules).
Ast non_ascii_char() {
  Ast alt;
  alt.type = Ast::Type::kAlt;
  const ByteSet cont = range(0x80, 0xBF);
  const std::pair<int, int> leads[] = {{0xC2, 0xDF}, {0xE0, 0xEF}, {0xF0, 0xF4}};
  for (int n = 0; n < 3; ++n) {
    Ast seq;
    seq.children.push_back(set_of(range(leads[n].first, leads[n].second)));
    for (int k = 0; k <= n; ++k) seq.children.push_back(set_of(cont));
    alt.children.push_back(seq);
  }
  return alt;
}

Ast either(Ast a, Ast b) {
  Ast alt;
  alt.type = Ast::Type::kAlt;
  alt.children.push_back(std::move(a));
  alt.children.push_back(std::move(b));
  return alt;
}

ByteSet digit_set() { return range('0', '9'); }
ByteSet word_set() { return range('a', 'z') | range('A', 'Z') | range('0', '9') | range('_', '_'); }
ByteSet space_set() {
  ByteSet s;
  for (char c : std::string(" \t\n\r\f\v")) s.set(static_cast<uint8_t>(c));
  return s;
}
ByteSet ascii() { return range(0, 0x7F); }

class Parser {
 public:
  explicit Parser(const std::string& p) : p_(p) {}

  Result<Ast> parse() {
    XONNX_ASSIGN_OR_RETURN(Ast a, alternation(0));
    if (pos_ != p_.size()) return error("unbalanced ')'");
    return a;
  }

 private:
  Status error(const std::string& what) const { return unsupported("pattern '", p_, "' at offset ", pos_, ": ", what); }
  bool at_end() const { return pos_ >= p_.size(); }
  char peek() const { return p_[pos_]; }

  Result<Ast> alternation(int depth) {
    if (depth > 32) return error("groups nested too deep");
    Ast alt;
    alt.type = Ast::Type::kAlt;
    while (true) {
      XONNX_ASSIGN_OR_RETURN(Ast c, concatenation(depth));
      alt.children.push_back(std::move(c));
      if (at_end() || peek() != '|') break;
      ++pos_;
    }
    if (alt.children.size() == 1) return std::move(alt.children[0]);
    return alt;
  }

  Result<Ast> concatenation(int depth) {
    Ast seq;
    while (!at_end() && peek() != '|' && peek() != ')') {
      XONNX_ASSIGN_OR_RETURN(Ast atom, this->atom(depth));
      XONNX_ASSIGN_OR_RETURN(atom, quantified(std::move(atom)));
      seq.children.push_back(std::move(atom));
    }
    return seq;
  }

  Result<Ast> quantified(Ast atom) {
    while (!at_end()) {
      int min = 0, max = -1;
      const char c = peek();
      if (c == '*') {
        ++pos_;
      } else if (c == '+') {
        min = 1;
        ++pos_;
      } else if (c == '?') {
        max = 1;
        ++pos_;
      } else if (c == '{') {
        const size_t save = pos_;
        if (!counted(min, max)) {
          pos_ = save;  // ECMA reads a '{' that opens no quantifier as a literal
          return atom;
        }
      } else {
        return atom;
      }
      if (atom.type == Ast::Type::kStart || atom.type == Ast::Type::kEnd) return error("quantified anchor");
      if (!at_end() && peek() == '?') ++pos_;  // lazy: the same language
      Ast r;
      r.type = Ast::Type::kRepeat;
      r.min = min;
      r.max = max;
      r.children.push_back(std::move(atom));
      atom = std::move(r);
    }
    return atom;
  }

  bool number(int& out) {
    if (at_end() || !std::isdigit(static_cast<unsigned char>(peek()))) return false;
    int64_t v = 0;
    while (!at_end() && std::isdigit(static_cast<unsigned char>(peek()))) {
      v = std::min<int64_t>(v * 10 + (peek() - '0'), 100000);
      ++pos_;
    }
    out = static_cast<int>(v);
    return true;
  }

  bool counted(int& min, int& max) {
    ++pos_;  // '{'
    if (!number(min)) return false;
    max = min;
    if (!at_end() && peek() == ',') {
      ++pos_;
      max = -1;
      number(max);
    }
    if (at_end() || peek() != '}') return false;
    ++pos_;
    return true;
  }

  Result<Ast> atom(int depth) {
    const char c = peek();
    if (c == '(') {
      ++pos_;
      if (!at_end() && peek() == '?') {
        if (pos_ + 1 < p_.size() && p_[pos_ + 1] == ':') {
          pos_ += 2;
        } else {
          return error("lookaround and named groups are not supported");
        }
      }
      XONNX_ASSIGN_OR_RETURN(Ast inner, alternation(depth + 1));
      if (at_end() || peek() != ')') return error("missing ')'");
      ++pos_;
      return inner;
    }
    if (c == '[') return char_class();
    if (c == '.') {
      ++pos_;
      ByteSet s = ascii();
      s.reset('\n');
      s.reset('\r');
      return either(set_of(s), non_ascii_char());
    }
    if (c == '^' || c == '$') {
      ++pos_;
      Ast a;
      a.type = c == '^' ? Ast::Type::kStart : Ast::Type::kEnd;
      return a;
    }
    if (c == '\\') {
      ++pos_;
      if (at_end()) return error("pattern ends with '\\'");
      XONNX_ASSIGN_OR_RETURN(Ast e, escape(false));
      return e;
    }
    if (c == '*' || c == '+' || c == '?') return error("quantifier without an operand");
    return literal_char();
  }

  // One literal character, all of its UTF-8 bytes.
  Result<Ast> literal_char() {
    const auto lead = static_cast<uint8_t>(peek());
    size_t len = lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
    if (pos_ + len > p_.size()) return error("ill-formed UTF-8");
    Ast seq;
    for (size_t i = 0; i < len; ++i) {
      ByteSet s;
      s.set(static_cast<uint8_t>(p_[pos_ + i]));
      seq.children.push_back(set_of(s));
    }
    pos_ += len;
    return seq.children.size() == 1 ? std::move(seq.children[0]) : seq;
  }

  static Ast utf8_literal(uint32_t cp) {
    std::string bytes;
    if (cp < 0x80) {
      bytes += static_cast<char>(cp);
    } else if (cp < 0x800) {
      bytes += static_cast<char>(0xC0 | (cp >> 6));
      bytes += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      bytes += static_cast<char>(0xE0 | (cp >> 12));
      bytes += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      bytes += static_cast<char>(0x80 | (cp & 0x3F));
    }
    Ast seq;
    for (char b : bytes) {
      ByteSet s;
      s.set(static_cast<uint8_t>(b));
      seq.children.push_back(set_of(s));
    }
    return seq.children.size() == 1 ? std::move(seq.children[0]) : seq;
  }

  bool hex(size_t digits, uint32_t& out) {
    if (pos_ + digits > p_.size()) return false;
    out = 0;
    for (size_t i = 0; i < digits; ++i) {
      const char h = p_[pos_ + i];
      if (!std::isxdigit(static_cast<unsigned char>(h))) return false;
      out = out * 16 +
            static_cast<uint32_t>(std::isdigit(static_cast<unsigned char>(h)) ? h - '0' : (std::tolower(h) - 'a' + 10));
    }
    pos_ += digits;
    return true;
  }

  // After '\'. in_class: inside [...], where the result must be a set of ASCII bytes.
  Result<Ast> escape(bool in_class) {
    const char c = peek();
    ++pos_;
    switch (c) {
      case 'd': return set_of(digit_set());
      case 'w': return set_of(word_set());
      case 's': return set_of(space_set());
      case 'D':
        return in_class ? set_of(ascii() & ~digit_set()) : either(set_of(ascii() & ~digit_set()), non_ascii_char());
      case 'W':
        return in_class ? set_of(ascii() & ~word_set()) : either(set_of(ascii() & ~word_set()), non_ascii_char());
      case 'S': return set_of(ascii() & ~space_set());  // ASCII only: Unicode spaces count as \s in ECMA
      case 'n': return set_of(ByteSet().set('\n'));
      case 't': return set_of(ByteSet().set('\t'));
      case 'r': return set_of(ByteSet().set('\r'));
      case 'f': return set_of(ByteSet().set('\f'));
      case 'v': return set_of(ByteSet().set('\v'));
      case '0': return set_of(ByteSet().set(0));
      case 'x':
      case 'u': {
        uint32_t cp = 0;
        if (!hex(c == 'x' ? 2 : 4, cp)) return error("malformed \\x or \\u escape");
        if (cp >= 0xD800 && cp <= 0xDFFF) return error("surrogate escapes are not supported");
        if (in_class && cp >= 0x80) return error("non-ASCII characters inside a class are not supported");
        return utf8_literal(cp);
      }
      default:
        if (std::isalnum(static_cast<unsigned char>(c))) {
          --pos_;
          return error(std::string("escape '\\") + c + "' is not supported");
        }
        if (static_cast<uint8_t>(c) >= 0x80) return error("escaped non-ASCII character");
        return set_of(ByteSet().set(static_cast<uint8_t>(c)));
    }
  }

  Result<Ast> char_class() {
    ++pos_;  // '['
    bool negate = false;
    if (!at_end() && peek() == '^') {
      negate = true;
      ++pos_;
    }
    ByteSet set;
    bool first = true;
    while (!at_end() && (peek() != ']' || first)) {
      first = false;
      XONNX_ASSIGN_OR_RETURN(ByteSet lo, class_atom());
      if (pos_ + 1 < p_.size() && peek() == '-' && p_[pos_ + 1] != ']') {
        ++pos_;
        XONNX_ASSIGN_OR_RETURN(ByteSet hi, class_atom());
        if (lo.count() != 1 || hi.count() != 1) return error("class range with a class escape");
        int a = 0, b = 0;
        while (!lo.test(static_cast<size_t>(a))) ++a;
        while (!hi.test(static_cast<size_t>(b))) ++b;
        if (a > b) return error("class range out of order");
        set |= range(a, b);
      } else {
        set |= lo;
      }
    }
    if (at_end()) return error("missing ']'");
    ++pos_;
    if (!negate) return set_of(set);
    return either(set_of(ascii() & ~set), non_ascii_char());
  }

  Result<ByteSet> class_atom() {
    const char c = peek();
    if (static_cast<uint8_t>(c) >= 0x80) return error("non-ASCII characters inside a class are not supported");
    if (c == '\\') {
      ++pos_;
      if (at_end()) return error("pattern ends with '\\'");
      if (peek() == 'b') {
        ++pos_;
        return ByteSet().set('\b');
      }
      XONNX_ASSIGN_OR_RETURN(Ast e, escape(true));
      if (e.type != Ast::Type::kSet) return error("class escape outside ASCII");
      return e.set;
    }
    ++pos_;
    return ByteSet().set(static_cast<uint8_t>(c));
  }

  const std::string& p_;
  size_t pos_ = 0;
};

struct Nfa {
  struct State {
    ByteSet set;
    int next = -1;  // target of the byte edge
    std::vector<int> eps;
  };
  std::vector<State> states;
  int add() {
    states.emplace_back();
    return static_cast<int>(states.size() - 1);
  }
};

struct Frag {
  int start, end;
};

constexpr size_t kMaxNfaStates = 20000;

Result<Frag> build(const Ast& a, Nfa& nfa) {
  if (nfa.states.size() > kMaxNfaStates) return unsupported("pattern expands to more than ", kMaxNfaStates, " states");
  switch (a.type) {
    case Ast::Type::kSet: {
      Frag f{nfa.add(), nfa.add()};
      nfa.states[static_cast<size_t>(f.start)].set = a.set;
      nfa.states[static_cast<size_t>(f.start)].next = f.end;
      return f;
    }
    case Ast::Type::kConcat: {
      Frag f{nfa.add(), -1};
      f.end = f.start;
      for (const Ast& c : a.children) {
        XONNX_ASSIGN_OR_RETURN(Frag cf, build(c, nfa));
        nfa.states[static_cast<size_t>(f.end)].eps.push_back(cf.start);
        f.end = cf.end;
      }
      return f;
    }
    case Ast::Type::kAlt: {
      Frag f{nfa.add(), nfa.add()};
      for (const Ast& c : a.children) {
        XONNX_ASSIGN_OR_RETURN(Frag cf, build(c, nfa));
        nfa.states[static_cast<size_t>(f.start)].eps.push_back(cf.start);
        nfa.states[static_cast<size_t>(cf.end)].eps.push_back(f.end);
      }
      return f;
    }
    case Ast::Type::kRepeat: {
      Frag f{nfa.add(), -1};
      f.end = f.start;
      const Ast& body = a.children[0];
      for (int i = 0; i < a.min; ++i) {
        XONNX_ASSIGN_OR_RETURN(Frag cf, build(body, nfa));
        nfa.states[static_cast<size_t>(f.end)].eps.push_back(cf.start);
        f.end = cf.end;
      }
      if (a.max < 0) {
        XONNX_ASSIGN_OR_RETURN(Frag cf, build(body, nfa));
        const int out = nfa.add();
        nfa.states[static_cast<size_t>(f.end)].eps.push_back(cf.start);
        nfa.states[static_cast<size_t>(f.end)].eps.push_back(out);
        nfa.states[static_cast<size_t>(cf.end)].eps.push_back(cf.start);
        nfa.states[static_cast<size_t>(cf.end)].eps.push_back(out);
        f.end = out;
      } else {
        const int out = nfa.add();
        for (int i = a.min; i < a.max; ++i) {
          XONNX_ASSIGN_OR_RETURN(Frag cf, build(body, nfa));
          nfa.states[static_cast<size_t>(f.end)].eps.push_back(cf.start);
          nfa.states[static_cast<size_t>(f.end)].eps.push_back(out);
          f.end = cf.end;
        }
        nfa.states[static_cast<size_t>(f.end)].eps.push_back(out);
        f.end = out;
      }
      return f;
    }
    case Ast::Type::kStart:
    case Ast::Type::kEnd: break;
  }
  return unsupported("'^' and '$' are supported only at the ends of the pattern");
}

// Strips ^ / $ at the ends of each top-level alternative and wraps unanchored ends in "any
// bytes"; anchors anywhere else are refused by build().
Ast anchored_search(Ast top) {
  std::vector<Ast> alternatives;
  if (top.type == Ast::Type::kAlt)
    alternatives = std::move(top.children);
  else
    alternatives.push_back(std::move(top));
  Ast any;
  any.type = Ast::Type::kRepeat;
  any.children.push_back(set_of(ByteSet().set()));
  Ast out;
  out.type = Ast::Type::kAlt;
  for (Ast& alt : alternatives) {
    if (alt.type != Ast::Type::kConcat) {
      Ast seq;
      seq.children.push_back(std::move(alt));
      alt = std::move(seq);
    }
    auto& parts = alt.children;
    const bool start = !parts.empty() && parts.front().type == Ast::Type::kStart;
    if (start) parts.erase(parts.begin());
    const bool end = !parts.empty() && parts.back().type == Ast::Type::kEnd;
    if (end) parts.pop_back();
    if (!start) parts.insert(parts.begin(), any);
    if (!end) parts.push_back(any);
    out.children.push_back(std::move(alt));
  }
  return out;
}

}  // namespace

class DfaBuilder {
 public:
  static Result<std::shared_ptr<const ByteDfa>> build(const std::string& pattern) {
    XONNX_ASSIGN_OR_RETURN(Ast ast, Parser(pattern).parse());
    Nfa nfa;
    const int accept_state = 0;
    nfa.add();  // state 0: the accepting end
    XONNX_ASSIGN_OR_RETURN(Frag f, ::xonnx::serve::build(anchored_search(std::move(ast)), nfa));
    nfa.states[static_cast<size_t>(f.end)].eps.push_back(accept_state);

    // Bytes that no NFA edge tells apart share one class.
    std::vector<int> byte_class(256);
    std::vector<uint8_t> class_byte;
    {
      std::map<std::vector<bool>, int> signatures;
      for (int b = 0; b < 256; ++b) {
        std::vector<bool> sig;
        sig.reserve(nfa.states.size());
        for (const auto& s : nfa.states) sig.push_back(s.next >= 0 && s.set.test(static_cast<size_t>(b)));
        auto [it, inserted] = signatures.emplace(std::move(sig), static_cast<int>(class_byte.size()));
        if (inserted) class_byte.push_back(static_cast<uint8_t>(b));
        byte_class[static_cast<size_t>(b)] = it->second;
      }
    }

    auto closure = [&](std::vector<int> set) {
      std::vector<char> seen(nfa.states.size(), 0);
      std::vector<int> stack = set;
      for (int s : set) seen[static_cast<size_t>(s)] = 1;
      while (!stack.empty()) {
        const int s = stack.back();
        stack.pop_back();
        for (int e : nfa.states[static_cast<size_t>(s)].eps) {
          if (!seen[static_cast<size_t>(e)]) {
            seen[static_cast<size_t>(e)] = 1;
            set.push_back(e);
            stack.push_back(e);
          }
        }
      }
      std::sort(set.begin(), set.end());
      return set;
    };

    std::map<std::vector<int>, int32_t> index;
    std::vector<std::vector<int>> sets = {closure({f.start})};
    index[sets[0]] = 0;
    std::vector<std::vector<int32_t>> by_class;  // state x class
    for (size_t d = 0; d < sets.size(); ++d) {
      if (sets.size() > static_cast<size_t>(ByteDfa::kMaxStates)) {
        return unsupported("pattern '", pattern, "' needs more than ", ByteDfa::kMaxStates, " DFA states");
      }
      std::vector<int32_t> row(class_byte.size(), ByteDfa::kDead);
      for (size_t k = 0; k < class_byte.size(); ++k) {
        std::vector<int> moved;
        for (int s : sets[d]) {
          const auto& st = nfa.states[static_cast<size_t>(s)];
          if (st.next >= 0 && st.set.test(class_byte[k])) moved.push_back(st.next);
        }
        if (moved.empty()) continue;
        auto next = closure(std::move(moved));
        auto [it, inserted] = index.emplace(next, static_cast<int32_t>(sets.size()));
        if (inserted) sets.push_back(std::move(next));
        row[k] = it->second;
      }
      by_class.push_back(std::move(row));
    }

    // A state from which no accepting state is reachable is dead.
    const size_t n = sets.size();
    std::vector<uint8_t> accepting(n), live(n);
    for (size_t d = 0; d < n; ++d) accepting[d] = std::binary_search(sets[d].begin(), sets[d].end(), accept_state);
    live = accepting;
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t d = 0; d < n; ++d) {
        if (live[d]) continue;
        for (int32_t t : by_class[d]) {
          if (t >= 0 && live[static_cast<size_t>(t)]) {
            live[d] = 1;
            changed = true;
            break;
          }
        }
      }
    }
    if (!live[0]) return invalid_argument("pattern '", pattern, "' matches no string");
    auto dfa = std::make_shared<ByteDfa>();
    dfa->accepting_ = accepting;
    dfa->table_.assign(n * 256, ByteDfa::kDead);
    for (size_t d = 0; d < n; ++d) {
      for (int b = 0; b < 256; ++b) {
        const int32_t t = by_class[d][static_cast<size_t>(byte_class[static_cast<size_t>(b)])];
        dfa->table_[d * 256 + static_cast<size_t>(b)] = (t >= 0 && live[static_cast<size_t>(t)]) ? t : ByteDfa::kDead;
      }
    }
    return std::shared_ptr<const ByteDfa>(dfa);
  }
};

Result<std::shared_ptr<const ByteDfa>> ByteDfa::compile_search(const std::string& pattern) {
  return DfaBuilder::build(pattern);
}

}  // namespace xonnx::serve
