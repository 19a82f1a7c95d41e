// Character error rate: edit distance (insertions, deletions, substitutions of Unicode code
// points) between a recognised text and the true text, over the true text's length.
#pragma once

#include <string>

namespace demo {

struct ErrorRate {
  size_t edits = 0;
  size_t reference_length = 0;  // code points
  double rate() const { return reference_length ? static_cast<double>(edits) / reference_length : (edits ? 1.0 : 0.0); }
};

// Both texts are UTF-8; bytes that are not valid UTF-8 count as one code point each.
ErrorRate character_error_rate(const std::string& hypothesis, const std::string& reference);

}  // namespace demo
