// Stop strings on streamed text: text is released as soon as it cannot be the start of a stop
// string; once a stop string appears, the text before it is released and nothing after.
// Matching is on bytes of the output text (special tokens included only if the caller puts
// them in).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace xonnx::genai {

class StopStringMatcher {
 public:
  StopStringMatcher() = default;
  explicit StopStringMatcher(std::vector<std::string> stops);  // empty strings are ignored
  // Adds text; returns the text now safe to release. After a match, returns what precedes
  // the stop string and ignores later calls.
  std::string put(std::string_view text);
  // Releases what was held back (at the end of the output).
  std::string flush();
  bool stopped() const { return matched_ >= 0; }
  // The stop string that matched ("" when none).
  const std::string& matched() const;
  void reset();

 private:
  std::vector<std::string> stops_;
  std::string held_;
  int matched_ = -1;
};

}  // namespace xonnx::genai
