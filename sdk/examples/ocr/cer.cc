#include "sdk/examples/ocr/cer.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace demo {
namespace {

std::vector<uint32_t> code_points(const std::string& s) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    const size_t len = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
    bool valid = len > 0 && i + len <= s.size();
    uint32_t cp = len == 1 ? b : b & (0x7F >> len);
    for (size_t k = 1; valid && k < len; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      valid = (c & 0xC0) == 0x80;
      cp = (cp << 6) | (c & 0x3F);
    }
    if (!valid) {
      out.push_back(0x110000u + b);  // not a code point: an invalid byte stands for itself
      ++i;
      continue;
    }
    out.push_back(cp);
    i += len;
  }
  return out;
}

}  // namespace

ErrorRate character_error_rate(const std::string& hypothesis, const std::string& reference) {
  const std::vector<uint32_t> h = code_points(hypothesis), r = code_points(reference);
  std::vector<size_t> row(h.size() + 1), next(h.size() + 1);
  for (size_t j = 0; j <= h.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= r.size(); ++i) {
    next[0] = i;
    for (size_t j = 1; j <= h.size(); ++j) {
      next[j] = std::min({row[j] + 1, next[j - 1] + 1, row[j - 1] + (r[i - 1] == h[j - 1] ? 0 : 1)});
    }
    std::swap(row, next);
  }
  return {row[h.size()], r.size()};
}

}  // namespace demo
