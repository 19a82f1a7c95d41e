#include "sdk/genai/stop_strings.h"

#include <algorithm>
#include <utility>

namespace xonnx::genai {

StopStringMatcher::StopStringMatcher(std::vector<std::string> stops) {
  for (std::string& s : stops)
    if (!s.empty()) stops_.push_back(std::move(s));
}

const std::string& StopStringMatcher::matched() const {
  static const std::string kNone;
  return matched_ >= 0 ? stops_[static_cast<size_t>(matched_)] : kNone;
}

void StopStringMatcher::reset() {
  held_.clear();
  matched_ = -1;
}

std::string StopStringMatcher::put(std::string_view text) {
  if (stopped()) return {};
  held_.append(text);
  if (stops_.empty()) return std::exchange(held_, std::string());
  // The earliest full match ends the output.
  size_t first = std::string::npos;
  for (size_t i = 0; i < stops_.size(); ++i) {
    const size_t at = held_.find(stops_[i]);
    if (at < first) {
      first = at;
      matched_ = static_cast<int>(i);
    }
  }
  if (first != std::string::npos) {
    std::string out = held_.substr(0, first);
    held_.clear();
    return out;
  }
  // Hold back the longest suffix that is a proper prefix of some stop string.
  size_t keep = 0;
  for (const std::string& s : stops_) {
    for (size_t n = std::min(s.size() - 1, held_.size()); n > keep; --n) {
      if (held_.compare(held_.size() - n, n, s, 0, n) == 0) {
        keep = n;
        break;
      }
    }
  }
  std::string out = held_.substr(0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  return out;
}

std::string StopStringMatcher::flush() { return stopped() ? std::string() : std::exchange(held_, std::string()); }

}  // namespace xonnx::genai
