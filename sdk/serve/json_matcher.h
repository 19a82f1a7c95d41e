// A byte-level recognizer of JSON text that validates against a CompiledSchema, for
// constrained decoding: advance() takes one byte and says whether some valid document still
// starts with the bytes so far; accepting() says whether they form a complete one. The
// language is exactly "compact-or-spaced JSON whose value validates", with these choices
// (docs/serve.md): at most kMaxWhitespaceRun whitespace bytes in a row (also before the value),
// none after the top-level value, object keys without backslash escapes, numbers of at most
// kMaxNumberChars characters (no exponent when the schema bounds the number), strings as
// well-formed UTF-8 with paired surrogate escapes (so every accepted text parses).
//
// A State is a set of alternative parse stacks (anyOf alternatives that the bytes so far do
// not tell apart); each stack is a short vector of frames. advance() writes into an output
// State whose buffers are reused, so walking a vocabulary trie allocates nothing once warm.
// The matcher is immutable and may be shared by threads; States are per sequence.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "sdk/serve/json_schema.h"

namespace xonnx::serve {

struct MatchFrame {
  uint8_t kind = 0;
  uint8_t phase = 0;
  uint8_t ws = 0;                          // whitespace bytes in a row
  uint8_t utf8 = 0;                        // string / key: continuation bytes still due; number: text length
  uint8_t utf8_lo = 0x80, utf8_hi = 0xBF;  // range of the next continuation byte
  uint8_t flags = 0;
  int32_t node = 0;
  int32_t current = -1;     // object: the property whose value is being read (-2: additional)
  int32_t dfa = 0;          // string pattern state
  uint32_t code = 0;        // \u escape value being read
  int64_t count = 0;        // array items, string characters, literal / key bytes
  uint64_t seen = 0;        // object: properties given so far
  uint64_t candidates = 0;  // key: known names the key can still become
  uint32_t lo = 0, hi = 0;  // literal: range of candidate literals
  char text[kMaxNumberChars] = {};
};

class JsonMatcher {
 public:
  struct State {
    std::vector<MatchFrame> frames;
    std::vector<uint32_t> ends;  // stack i is frames[ends[i-1], ends[i])
    bool empty() const { return ends.empty(); }
  };

  explicit JsonMatcher(std::shared_ptr<const CompiledSchema> schema);

  State initial() const;
  // out = the state after byte; returns false (out empty) when no valid document continues so.
  bool advance(const State& in, uint8_t byte, State& out) const;
  // Convenience for tests and checks: advances through bytes, false at the first refusal.
  bool advance(State& state, std::string_view bytes) const;
  // The bytes so far are a complete valid document.
  bool accepting(const State& state) const;

  const CompiledSchema& schema() const { return *schema_; }

 private:
  void feed(State& out, size_t base, uint8_t c) const;
  bool step(std::vector<MatchFrame>& frames, size_t base, uint8_t c, State& out, bool& forked) const;
  void fork_value(State& out, size_t base, uint8_t c) const;
  bool start_value(std::vector<MatchFrame>& frames, size_t base, int node, uint8_t c) const;
  bool step_string(MatchFrame& f, uint8_t c, bool& done) const;
  bool step_key(MatchFrame& f, const MatchFrame& object, uint8_t c, bool& done) const;
  bool step_number(MatchFrame& f, uint8_t c) const;
  bool number_viable(const MatchFrame& f, bool final) const;
  bool number_complete(const MatchFrame& f) const;
  bool literal_complete(const MatchFrame& f) const;
  void child_done(MatchFrame& parent) const;
  bool key_possible(const MatchFrame& object) const;

  std::shared_ptr<const CompiledSchema> schema_;
};

}  // namespace xonnx::serve
