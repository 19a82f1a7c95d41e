#include "sdk/genai/unicode.h"

#include <utf8proc.h>

#include <array>
#include <cstdlib>

namespace xonnx::genai {

size_t utf8_sequence_length(std::string_view s, size_t i) {
  const size_t n = s.size() - i;
  const auto b = [&](size_t k) { return static_cast<uint8_t>(s[i + k]); };
  const uint8_t c = b(0);
  if (c < 0x80) return 1;
  const auto cont = [&](size_t k, uint8_t lo = 0x80, uint8_t hi = 0xBF) { return k < n && b(k) >= lo && b(k) <= hi; };
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    const uint8_t lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    return cont(1, lo, hi) && cont(2) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    const uint8_t lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    return cont(1, lo, hi) && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

// Length of the maximal prefix at s[i] that could begin a well-formed sequence (Unicode's
// "maximal subpart"): the bytes one U+FFFD replaces.
static size_t maximal_subpart(std::string_view s, size_t i) {
  const uint8_t c = static_cast<uint8_t>(s[i]);
  size_t need = 0;
  uint8_t lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF)
    need = 1;
  else if (c >= 0xE0 && c <= 0xEF) {
    need = 2;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    need = 3;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  }
  size_t k = 1;
  for (; k <= need && i + k < s.size(); ++k) {
    const uint8_t x = static_cast<uint8_t>(s[i + k]);
    if (x < lo || x > hi) break;
    lo = 0x80, hi = 0xBF;
  }
  return k;
}

uint32_t utf8_next(std::string_view s, size_t& i) {
  const size_t len = utf8_sequence_length(s, i);
  const auto b = [&](size_t k) { return static_cast<uint32_t>(static_cast<uint8_t>(s[i + k])); };
  uint32_t cp;
  switch (len) {
    case 1: cp = b(0); break;
    case 2: cp = ((b(0) & 0x1F) << 6) | (b(1) & 0x3F); break;
    case 3: cp = ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F); break;
    case 4: cp = ((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F); break;
    default: i += maximal_subpart(s, i); return kReplacementChar;
  }
  i += len;
  return cp;
}

void utf8_append(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

bool utf8_is_valid(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t len = utf8_sequence_length(s, i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

std::string utf8_make_valid(std::string_view s) {
  if (utf8_is_valid(s)) return std::string(s);
  std::string out;
  out.reserve(s.size() + 8);
  for (size_t i = 0; i < s.size();) {
    const size_t len = utf8_sequence_length(s, i);
    if (len > 0) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      utf8_append(out, kReplacementChar);
      i += maximal_subpart(s, i);
    }
  }
  return out;
}

size_t utf8_incomplete_tail(std::string_view s) {
  // Look back at most 3 bytes for a lead byte whose sequence runs past the end.
  for (size_t back = 1; back <= 3 && back <= s.size(); ++back) {
    const size_t i = s.size() - back;
    const uint8_t c = static_cast<uint8_t>(s[i]);
    if ((c & 0xC0) == 0x80) continue;  // continuation byte: keep looking for the lead
    if (c < 0xC2 || c > 0xF4) return 0;
    if (utf8_sequence_length(s, i) != 0) return 0;
    return maximal_subpart(s, i) == back ? back : 0;  // a prefix of a valid sequence
  }
  return 0;
}

bool is_whitespace(uint32_t cp) {
  switch (cp) {
    case 0x09:
    case 0x0A:
    case 0x0B:
    case 0x0C:
    case 0x0D:
    case 0x20:
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000: return true;
    default: return cp >= 0x2000 && cp <= 0x200A;
  }
}

static utf8proc_category_t category(uint32_t cp) {
  return cp > 0x10FFFF ? UTF8PROC_CATEGORY_CN : utf8proc_category(static_cast<utf8proc_int32_t>(cp));
}

bool is_numeric(uint32_t cp) {
  if (cp < 0x80) return cp >= '0' && cp <= '9';
  const auto c = category(cp);
  return c == UTF8PROC_CATEGORY_ND || c == UTF8PROC_CATEGORY_NL || c == UTF8PROC_CATEGORY_NO;
}

bool is_alphanumeric(uint32_t cp) {
  if (cp < 0x80) return (cp | 0x20) >= 'a' && (cp | 0x20) <= 'z' ? true : (cp >= '0' && cp <= '9');
  const auto c = category(cp);
  return (c >= UTF8PROC_CATEGORY_LU && c <= UTF8PROC_CATEGORY_LO) ||
         (c >= UTF8PROC_CATEGORY_MN && c <= UTF8PROC_CATEGORY_NO);
}

bool is_punctuation(uint32_t cp) {
  const auto c = category(cp);
  return c >= UTF8PROC_CATEGORY_PC && c <= UTF8PROC_CATEGORY_PO;
}

uint32_t to_lower(uint32_t cp) {
  if (cp < 0x80) return cp >= 'A' && cp <= 'Z' ? cp + 32 : cp;
  return cp > 0x10FFFF ? cp : static_cast<uint32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp)));
}

uint32_t to_upper(uint32_t cp) {
  if (cp < 0x80) return cp >= 'a' && cp <= 'z' ? cp - 32 : cp;
  return cp > 0x10FFFF ? cp : static_cast<uint32_t>(utf8proc_toupper(static_cast<utf8proc_int32_t>(cp)));
}

std::string normalize_unicode(std::string_view s, NormalForm form) {
  const std::string valid = utf8_make_valid(s);
  bool ascii = true;
  for (char c : valid) ascii = ascii && static_cast<uint8_t>(c) < 0x80;
  if (ascii) return valid;  // every form leaves ASCII alone
  int options = UTF8PROC_STABLE;
  switch (form) {
    case NormalForm::kNFC: options |= UTF8PROC_COMPOSE; break;
    case NormalForm::kNFD: options |= UTF8PROC_DECOMPOSE; break;
    case NormalForm::kNFKC: options |= UTF8PROC_COMPOSE | UTF8PROC_COMPAT; break;
    case NormalForm::kNFKD: options |= UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT; break;
  }
  utf8proc_uint8_t* out = nullptr;
  const utf8proc_ssize_t n =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(valid.data()), static_cast<utf8proc_ssize_t>(valid.size()),
                   &out, static_cast<utf8proc_option_t>(options));
  if (n < 0) {  // only on allocation failure: the input is well-formed
    std::free(out);
    return valid;
  }
  std::string result(reinterpret_cast<const char*>(out), static_cast<size_t>(n));
  std::free(out);
  return result;
}

std::string strip_accents(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const uint32_t cp = utf8_next(s, i);
    if (category(cp) != UTF8PROC_CATEGORY_MN) utf8_append(out, cp);
  }
  return out;
}

std::string lowercase(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) utf8_append(out, to_lower(utf8_next(s, i)));
  return out;
}

namespace {
struct ByteMap {
  std::array<uint32_t, 256> to_char{};
  ByteMap() {
    uint32_t extra = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      to_char[b] = printable ? static_cast<uint32_t>(b) : extra++;
    }
  }
};
const ByteMap& byte_map() {
  static const ByteMap map;
  return map;
}
}  // namespace

uint32_t byte_to_unicode(uint8_t b) { return byte_map().to_char[b]; }

int unicode_to_byte(uint32_t cp) {
  // The map's image: printable Latin-1 maps to itself, the other 68 bytes to U+0100..U+0143.
  if ((cp >= '!' && cp <= '~') || (cp >= 0xA1 && cp <= 0xAC) || (cp >= 0xAE && cp <= 0xFF)) {
    return static_cast<int>(cp);
  }
  if (cp >= 256 && cp < 256 + 68) {
    static const auto inverse = [] {
      std::array<int, 68> inv{};
      for (int b = 0; b < 256; ++b) {
        const uint32_t c = byte_map().to_char[b];
        if (c >= 256) inv[c - 256] = b;
      }
      return inv;
    }();
    return inverse[cp - 256];
  }
  return -1;
}

}  // namespace xonnx::genai
