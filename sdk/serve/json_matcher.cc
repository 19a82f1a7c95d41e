#include "sdk/serve/json_matcher.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

#include "sdk/serve/pattern_dfa.h"

namespace xonnx::serve {

namespace {

enum FrameKind : uint8_t { kRoot, kValue, kObject, kArray, kString, kKey, kNumber, kLiteral };
enum RootPhase : uint8_t { kRootWaiting, kRootDone };
enum ObjectPhase : uint8_t { kObjOpen, kObjColon, kObjAfterValue, kObjNeedKey };
enum ArrayPhase : uint8_t { kArrOpen, kArrAfterValue };
enum StringPhase : uint8_t { kStrChars, kStrEscape, kStrHex, kStrCont, kStrLowSlash, kStrLowU, kStrLowHex };
enum NumberPhase : uint8_t { kNumStart, kNumMinus, kNumZero, kNumInt, kNumDot, kNumFrac, kNumE, kNumExpSign, kNumExp };
constexpr uint8_t kKeyFree = 1;  // key flag: the key may still be an additional (undeclared) one

constexpr size_t kMaxAlternatives = 64;

bool is_ws(uint8_t c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }
bool is_digit(uint8_t c) { return c >= '0' && c <= '9'; }
bool is_hex(uint8_t c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
uint32_t hex_value(uint8_t c) { return is_digit(c) ? c - '0' : (c | 0x20) - 'a' + 10; }

MatchFrame frame(uint8_t kind, int node, uint8_t phase = 0) {
  MatchFrame f;
  f.kind = kind;
  f.node = node;
  f.phase = phase;
  return f;
}

// UTF-8 lead byte: how many continuation bytes follow and the range of the first one.
bool utf8_lead(uint8_t c, MatchFrame& f) {
  f.utf8_lo = 0x80;
  f.utf8_hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF)
    f.utf8 = 1;
  else if (c == 0xE0)
    f.utf8 = 2, f.utf8_lo = 0xA0;
  else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF)
    f.utf8 = 2;
  else if (c == 0xED)
    f.utf8 = 2, f.utf8_hi = 0x9F;
  else if (c == 0xF0)
    f.utf8 = 3, f.utf8_lo = 0x90;
  else if (c >= 0xF1 && c <= 0xF3)
    f.utf8 = 3;
  else if (c == 0xF4)
    f.utf8 = 3, f.utf8_hi = 0x8F;
  else
    return false;
  return true;
}

bool utf8_continue(uint8_t c, MatchFrame& f) {
  if (c < f.utf8_lo || c > f.utf8_hi) return false;
  f.utf8_lo = 0x80;
  f.utf8_hi = 0xBF;
  --f.utf8;
  return true;
}

// Whether some value in the interval [lo, hi] (ends open when the flags say so) satisfies the
// node's bounds.
bool meets_bounds(const SchemaNode& n, double lo, bool lo_open, double hi, bool hi_open) {
  if (n.has_min && (n.min > lo || (n.min == lo && (n.exclusive_min && !lo_open)))) {
    lo = n.min;
    lo_open = n.exclusive_min;
  }
  if (n.has_max && (n.max < hi || (n.max == hi && (n.exclusive_max && !hi_open)))) {
    hi = n.max;
    hi_open = n.exclusive_max;
  }
  return lo < hi || (lo == hi && !lo_open && !hi_open);
}

}  // namespace

JsonMatcher::JsonMatcher(std::shared_ptr<const CompiledSchema> schema) : schema_(std::move(schema)) {}

JsonMatcher::State JsonMatcher::initial() const {
  State s;
  s.frames.push_back(frame(kRoot, -1, kRootWaiting));
  s.frames.push_back(frame(kValue, schema_->root()));
  s.ends.push_back(2);
  return s;
}

bool JsonMatcher::advance(const State& in, uint8_t byte, State& out) const {
  out.frames.clear();
  out.ends.clear();
  uint32_t begin = 0;
  for (uint32_t end : in.ends) {
    if (out.ends.size() >= kMaxAlternatives) break;
    const size_t base = out.frames.size();
    out.frames.insert(out.frames.end(), in.frames.begin() + begin, in.frames.begin() + end);
    feed(out, base, byte);
    begin = end;
  }
  return !out.ends.empty();
}

bool JsonMatcher::advance(State& state, std::string_view bytes) const {
  State next;
  for (char c : bytes) {
    if (!advance(state, static_cast<uint8_t>(c), next)) return false;
    std::swap(state, next);
  }
  return true;
}

bool JsonMatcher::accepting(const State& state) const {
  uint32_t begin = 0;
  for (uint32_t end : state.ends) {
    const MatchFrame& top = state.frames[end - 1];
    if (end - begin == 1 && top.kind == kRoot && top.phase == kRootDone) return true;
    if (end - begin == 2 && ((top.kind == kNumber && number_complete(top) && number_viable(top, true)) ||
                             (top.kind == kLiteral && literal_complete(top)))) {
      return true;
    }
    begin = end;
  }
  return false;
}

// Feeds c to the stack in out.frames[base, end): on success the stack stays and is recorded in
// out.ends; on failure it is removed. Forks (anyOf) record their surviving copies themselves.
void JsonMatcher::feed(State& out, size_t base, uint8_t c) const {
  bool forked = false;
  if (step(out.frames, base, c, out, forked)) {
    out.ends.push_back(static_cast<uint32_t>(out.frames.size()));
  } else if (!forked) {
    out.frames.resize(base);
  }
}

// An anyOf value at the top: each alternative continues as its own stack.
void JsonMatcher::fork_value(State& out, size_t base, uint8_t c) const {
  std::vector<MatchFrame> saved(out.frames.begin() + static_cast<std::ptrdiff_t>(base), out.frames.end());
  out.frames.resize(base);
  const SchemaNode& node = schema_->node(saved.back().node);
  for (int alt : node.alternatives) {
    if (out.ends.size() >= kMaxAlternatives) break;
    const size_t start = out.frames.size();
    out.frames.insert(out.frames.end(), saved.begin(), saved.end());
    out.frames.back().node = alt;
    feed(out, start, c);
  }
}

bool JsonMatcher::start_value(std::vector<MatchFrame>& frames, size_t base, int node_index, uint8_t c) const {
  const SchemaNode& node = schema_->node(node_index);
  MatchFrame& top = frames.back();
  const size_t depth = frames.size() - base;
  auto open = [&](uint8_t kind, int node) {
    if (depth > static_cast<size_t>(2 * kMaxNestingDepth)) return false;
    top = frame(kind, node);
    if (kind == kString && schema_->node(node).pattern) top.dfa = schema_->node(node).pattern->start();
    return true;
  };
  switch (node.kind) {
    case SchemaNode::Kind::kAny:
      if (c == '{') return open(kObject, CompiledSchema::kAnyObjectNode);
      if (c == '[') return open(kArray, CompiledSchema::kAnyArrayNode);
      if (c == '"') return open(kString, CompiledSchema::kAnyStringNode);
      if (c == '-' || is_digit(c)) return open(kNumber, CompiledSchema::kAnyNumberNode) && step_number(top, c);
      if (c == 't' || c == 'f') return start_value(frames, base, CompiledSchema::kBoolNode, c);
      if (c == 'n') return start_value(frames, base, CompiledSchema::kNullNode, c);
      return false;
    case SchemaNode::Kind::kObject: return c == '{' && open(kObject, node_index);
    case SchemaNode::Kind::kArray: return c == '[' && open(kArray, node_index);
    case SchemaNode::Kind::kString: return c == '"' && open(kString, node_index);
    case SchemaNode::Kind::kNumber:
    case SchemaNode::Kind::kInteger:
      return (c == '-' || is_digit(c)) && open(kNumber, node_index) && step_number(top, c);
    case SchemaNode::Kind::kLiterals: {
      top = frame(kLiteral, node_index);
      top.lo = 0;
      top.hi = static_cast<uint32_t>(node.literals.size());
      return true;  // the caller feeds c to the literal
    }
    case SchemaNode::Kind::kAnyOf: break;
  }
  return false;
}

bool JsonMatcher::key_possible(const MatchFrame& object) const {
  const SchemaNode& n = schema_->node(object.node);
  const uint64_t all = n.property_names.size() >= 64 ? ~uint64_t{0} : (uint64_t{1} << n.property_names.size()) - 1;
  return (all & ~object.seen) != 0 || n.additional >= 0;
}

void JsonMatcher::child_done(MatchFrame& parent) const {
  parent.ws = 0;
  if (parent.kind == kRoot) parent.phase = kRootDone;
}

bool JsonMatcher::step(std::vector<MatchFrame>& frames, size_t base, uint8_t c, State& out, bool& forked) const {
  while (true) {
    MatchFrame& f = frames.back();
    auto whitespace = [&]() { return ++f.ws <= kMaxWhitespaceRun; };
    switch (f.kind) {
      case kRoot: return false;  // nothing after the value
      case kValue: {
        if (is_ws(c)) return whitespace();
        const SchemaNode& node = schema_->node(f.node);
        if (node.kind == SchemaNode::Kind::kAnyOf) {
          forked = true;
          fork_value(out, base, c);
          return false;
        }
        if (!start_value(frames, base, f.node, c)) return false;
        if (frames.back().kind == kLiteral) continue;  // feed c to the literal
        return true;
      }
      case kObject: {
        const SchemaNode& n = schema_->node(f.node);
        if (is_ws(c)) return whitespace();
        f.ws = 0;
        switch (f.phase) {
          case kObjOpen:
          case kObjNeedKey:
            if (c == '}' && f.phase == kObjOpen && (f.seen & n.required_mask) == n.required_mask) {
              frames.pop_back();
              child_done(frames.back());
              return true;
            }
            if (c != '"' || !key_possible(f)) return false;
            {
              MatchFrame key = frame(kKey, f.node);
              const size_t count = n.property_names.size();
              const uint64_t all = count >= 64 ? ~uint64_t{0} : (uint64_t{1} << count) - 1;
              key.flags = n.additional >= 0 ? kKeyFree : 0;
              // A free key may spell a declared name: keep them all to refuse repeats at the end.
              key.candidates = (key.flags & kKeyFree) ? all : all & ~f.seen;
              frames.push_back(key);
            }
            return true;
          case kObjColon:
            if (c != ':') return false;
            f.phase = kObjAfterValue;
            {
              const int child = f.current >= 0 ? n.property_nodes[static_cast<size_t>(f.current)] : n.additional;
              frames.push_back(frame(kValue, child));
            }
            return true;
          case kObjAfterValue:
            if (c == ',') {
              if (!key_possible(f)) return false;
              f.phase = kObjNeedKey;
              return true;
            }
            if (c == '}' && (f.seen & n.required_mask) == n.required_mask) {
              frames.pop_back();
              child_done(frames.back());
              return true;
            }
            return false;
        }
        return false;
      }
      case kKey: {
        bool done = false;
        MatchFrame& object = frames[frames.size() - 2];
        if (!step_key(f, object, c, done)) return false;
        if (done) {
          object.current = f.current;
          if (f.current >= 0) object.seen |= uint64_t{1} << f.current;
          object.phase = kObjColon;
          object.ws = 0;
          frames.pop_back();
        }
        return true;
      }
      case kArray: {
        const SchemaNode& n = schema_->node(f.node);
        if (is_ws(c)) return whitespace();
        f.ws = 0;
        if (c == ']' && f.count >= n.min_items) {
          frames.pop_back();
          child_done(frames.back());
          return true;
        }
        if (f.phase == kArrAfterValue) {
          if (c != ',' || f.count >= n.max_items) return false;
          ++f.count;
          frames.push_back(frame(kValue, n.items));
          return true;
        }
        if (n.max_items == 0) return false;
        f.phase = kArrAfterValue;
        f.count = 1;
        frames.push_back(frame(kValue, n.items));
        continue;  // c starts the first item
      }
      case kString: {
        bool done = false;
        if (!step_string(f, c, done)) return false;
        if (done) {
          frames.pop_back();
          child_done(frames.back());
        }
        return true;
      }
      case kNumber: {
        if (step_number(f, c)) return true;
        if (!number_complete(f) || !number_viable(f, true)) return false;
        frames.pop_back();
        child_done(frames.back());
        continue;  // c belongs to the parent
      }
      case kLiteral: {
        const auto& lits = schema_->node(f.node).literals;
        const size_t pos = static_cast<size_t>(f.count);
        uint32_t lo = f.lo;
        while (lo < f.hi && (lits[lo].size() <= pos || static_cast<uint8_t>(lits[lo][pos]) < c)) ++lo;
        uint32_t hi = lo;
        while (hi < f.hi && lits[hi].size() > pos && static_cast<uint8_t>(lits[hi][pos]) == c) ++hi;
        if (lo < hi) {
          f.lo = lo;
          f.hi = hi;
          ++f.count;
          if (hi - lo == 1 && lits[lo].size() == pos + 1) {  // complete, and nothing extends it
            frames.pop_back();
            child_done(frames.back());
          }
          return true;
        }
        if (!literal_complete(f)) return false;
        frames.pop_back();
        child_done(frames.back());
        continue;  // c belongs to the parent
      }
    }
    return false;
  }
}

bool JsonMatcher::literal_complete(const MatchFrame& f) const {
  const auto& lits = schema_->node(f.node).literals;
  return f.lo < f.hi && lits[f.lo].size() == static_cast<size_t>(f.count);
}

bool JsonMatcher::step_key(MatchFrame& f, const MatchFrame& object, uint8_t c, bool& done) const {
  const SchemaNode& n = schema_->node(f.node);
  const size_t pos = static_cast<size_t>(f.count);
  uint64_t next = 0;
  for (uint64_t bits = f.candidates; bits; bits &= bits - 1) {
    const int i = __builtin_ctzll(bits);
    const std::string& name = n.property_names[static_cast<size_t>(i)];
    if (name.size() > pos && static_cast<uint8_t>(name[pos]) == c) next |= uint64_t{1} << i;
  }
  if (c == '"' && next == 0 && f.utf8 == 0) {
    // The closing quote (an escaped quote inside a declared name would have matched above).
    int exact = -1;
    for (uint64_t bits = f.candidates; bits; bits &= bits - 1) {
      const int i = __builtin_ctzll(bits);
      if (n.property_names[static_cast<size_t>(i)].size() == pos) exact = i;
    }
    if (exact >= 0) {
      if (object.seen & (uint64_t{1} << exact)) return false;  // a repeated key
      f.current = exact;
    } else if (f.flags & kKeyFree) {
      f.current = -2;
    } else {
      return false;
    }
    done = true;
    return true;
  }
  if (f.flags & kKeyFree) {
    bool ok;
    if (f.utf8 > 0)
      ok = utf8_continue(c, f);
    else if (c < 0x80)
      ok = c >= 0x20 && c != '\\' && c != '"';
    else
      ok = utf8_lead(c, f);
    if (!ok) f.flags &= static_cast<uint8_t>(~kKeyFree);
  }
  f.candidates = next;
  ++f.count;
  return next != 0 || (f.flags & kKeyFree);
}

namespace {

// The simple escapes and the bytes they stand for.
constexpr char kSimpleEscapes[] = "\"\\/bfnrt";
constexpr char kEscapedBytes[] = "\"\\/\b\f\n\r\t";

bool pattern_allows_escape(const ByteDfa& dfa, int state) {
  for (const char* b = kEscapedBytes; *b; ++b) {
    if (dfa.next(state, static_cast<uint8_t>(*b)) != ByteDfa::kDead) return true;
  }
  return false;
}

}  // namespace

bool JsonMatcher::step_string(MatchFrame& f, uint8_t c, bool& done) const {
  const SchemaNode& n = schema_->node(f.node);
  const ByteDfa* dfa = n.pattern.get();
  auto pattern_byte = [&](uint8_t b) {
    if (!dfa) return true;
    f.dfa = dfa->next(f.dfa, b);
    return f.dfa != ByteDfa::kDead;
  };
  auto begin_char = [&]() {
    if (f.count >= n.max_length) return false;
    ++f.count;
    return true;
  };
  switch (f.phase) {
    case kStrChars:
      if (c == '"') {
        if (f.count < n.min_length || (dfa && !dfa->accepting(f.dfa))) return false;
        done = true;
        return true;
      }
      if (c == '\\') {
        // Under a pattern, only start an escape that some simple escape can finish (\u is refused there).
        if (dfa && !pattern_allows_escape(*dfa, f.dfa)) return false;
        if (!begin_char()) return false;
        f.phase = kStrEscape;
        return true;
      }
      if (c < 0x20) return false;
      if (c < 0x80) return begin_char() && pattern_byte(c);
      if (!utf8_lead(c, f) || !begin_char()) return false;
      f.phase = kStrCont;
      return pattern_byte(c);
    case kStrCont:
      if (!utf8_continue(c, f)) return false;
      if (f.utf8 == 0) f.phase = kStrChars;
      return pattern_byte(c);
    case kStrEscape: {
      const char* hit = c ? std::strchr(kSimpleEscapes, c) : nullptr;
      if (hit) {
        f.phase = kStrChars;
        return pattern_byte(static_cast<uint8_t>(kEscapedBytes[hit - kSimpleEscapes]));
      }
      // \u escapes are refused under a pattern: their digits could lead where the pattern cannot follow.
      if (c != 'u' || dfa) return false;
      f.phase = kStrHex;
      f.flags = 0;
      f.code = 0;
      return true;
    }
    case kStrHex:
    case kStrLowHex: {
      if (!is_hex(c)) return false;
      const uint32_t digit = hex_value(c);
      if (f.phase == kStrLowHex) {
        // A low surrogate: DC00-DFFF.
        if (f.flags == 0 && digit != 0xD) return false;
        if (f.flags == 1 && digit < 0xC) return false;
      } else if (f.flags == 1 && f.code == 0xD && digit >= 0xC) {
        return false;  // a low surrogate without a high one before it
      }
      f.code = f.code * 16 + digit;
      if (++f.flags < 4) return true;
      f.flags = 0;
      f.phase = (f.phase == kStrHex && f.code >= 0xD800 && f.code <= 0xDBFF) ? kStrLowSlash : kStrChars;
      f.code = 0;
      return true;
    }
    case kStrLowSlash:
      if (c != '\\') return false;
      f.phase = kStrLowU;
      return true;
    case kStrLowU:
      if (c != 'u') return false;
      f.phase = kStrLowHex;
      return true;
  }
  return false;
}

bool JsonMatcher::number_complete(const MatchFrame& f) const {
  return f.phase == kNumZero || f.phase == kNumInt || f.phase == kNumFrac || f.phase == kNumExp;
}

bool JsonMatcher::step_number(MatchFrame& f, uint8_t c) const {
  const SchemaNode& n = schema_->node(f.node);
  const bool integer = n.kind == SchemaNode::Kind::kInteger;
  const bool bounded = n.has_min || n.has_max;
  uint8_t phase = f.phase;
  switch (f.phase) {
    case kNumStart:
      if (c == '-')
        phase = kNumMinus;
      else if (c == '0')
        phase = kNumZero;
      else if (is_digit(c))
        phase = kNumInt;
      else
        return false;
      break;
    case kNumMinus:
      if (c == '0')
        phase = kNumZero;
      else if (is_digit(c))
        phase = kNumInt;
      else
        return false;
      break;
    case kNumZero:
    case kNumInt:
      if (is_digit(c) && f.phase == kNumInt)
        phase = kNumInt;
      else if (c == '.' && !integer)
        phase = kNumDot;
      else if ((c == 'e' || c == 'E') && !integer && !bounded)
        phase = kNumE;
      else
        return false;
      break;
    case kNumDot:
    case kNumFrac:
      if (is_digit(c))
        phase = kNumFrac;
      else if ((c == 'e' || c == 'E') && f.phase == kNumFrac && !bounded)
        phase = kNumE;
      else
        return false;
      break;
    case kNumE:
      if (c == '+' || c == '-')
        phase = kNumExpSign;
      else if (is_digit(c))
        phase = kNumExp;
      else
        return false;
      break;
    case kNumExpSign:
    case kNumExp:
      if (is_digit(c))
        phase = kNumExp;
      else
        return false;
      break;
  }
  if (f.utf8 >= kMaxNumberChars) return false;
  const MatchFrame before = f;
  f.text[f.utf8++] = static_cast<char>(c);
  f.phase = phase;
  if (bounded && !number_viable(f, false)) {
    f = before;
    return false;
  }
  return true;
}

// Whether the number read so far can still end within the bounds (final: as it stands).
bool JsonMatcher::number_viable(const MatchFrame& f, bool final) const {
  const SchemaNode& n = schema_->node(f.node);
  if (!n.has_min && !n.has_max) return true;
  const bool negative = f.utf8 > 0 && f.text[0] == '-';
  char buf[kMaxNumberChars + 1];
  std::memcpy(buf, f.text, f.utf8);
  buf[f.utf8] = 0;
  const bool integer = n.kind == SchemaNode::Kind::kInteger;
  if (final) {
    const double v = std::strtod(buf, nullptr);
    return meets_bounds(n, v, false, v, false);
  }
  const int room = kMaxNumberChars - f.utf8;  // characters that may still follow
  // Completions of the magnitude read so far, as [a, b): for "12" with k more digits
  // [12*10^k, 13*10^k); for "1.2" [1.2, 1.3).
  auto check = [&](double a, double b, bool b_open) {
    if (integer) {
      b = b_open ? std::ceil(b) - 1 : b;  // the integers in [a, b)
      b_open = false;
      if (a > b) return false;
    }
    return negative ? meets_bounds(n, -b, b_open, -a, false) : meets_bounds(n, a, false, b, b_open);
  };
  switch (f.phase) {
    case kNumStart: return true;
    case kNumMinus: return check(0, INFINITY, true);
    case kNumZero: return integer ? check(0, 0, false) : check(0, 1, true);
    case kNumInt: {
      const double m = std::fabs(std::strtod(buf, nullptr));
      double scale = 1;
      for (int k = 0; k <= room; ++k, scale *= 10) {
        if (check(m * scale, integer ? (m + 1) * scale : (m + 1) * scale, true)) return true;
      }
      return false;
    }
    case kNumDot:
    case kNumFrac: {
      const double x = std::fabs(std::strtod(buf, nullptr));
      int frac_digits = 0;
      for (const char* p = std::strchr(buf, '.') + 1; *p; ++p) ++frac_digits;
      return check(x, x + std::pow(10.0, -frac_digits), true);
    }
    default: return true;  // exponents are refused when bounded
  }
}

}  // namespace xonnx::serve
