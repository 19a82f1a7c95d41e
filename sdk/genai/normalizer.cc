#include "sdk/genai/normalizer.h"

#include <vector>

#include "sdk/genai/unicode.h"
#include "sdk/genai/unicode_regex.h"

namespace xonnx::genai {
namespace {

class SequenceNormalizer : public Normalizer {
 public:
  std::vector<std::unique_ptr<Normalizer>> parts;
  void normalize(std::string& text) const override {
    for (const auto& n : parts) n->normalize(text);
  }
};

class UnicodeFormNormalizer : public Normalizer {
 public:
  explicit UnicodeFormNormalizer(NormalForm form) : form_(form) {}
  void normalize(std::string& text) const override { text = normalize_unicode(text, form_); }

 private:
  NormalForm form_;
};

class LowercaseNormalizer : public Normalizer {
 public:
  void normalize(std::string& text) const override { text = lowercase(text); }
};

class StripAccentsNormalizer : public Normalizer {
 public:
  void normalize(std::string& text) const override { text = strip_accents(text); }
};

class StripNormalizer : public Normalizer {
 public:
  bool left = true, right = true;
  void normalize(std::string& text) const override {
    size_t begin = 0, end = text.size();
    if (left) {
      while (begin < end) {
        size_t i = begin;
        if (!is_whitespace(utf8_next(text, i))) break;
        begin = i;
      }
    }
    if (right) {
      while (end > begin) {
        size_t start = end - 1;
        while (start > begin && (static_cast<uint8_t>(text[start]) & 0xC0) == 0x80) --start;
        size_t i = start;
        if (!is_whitespace(utf8_next(text, i))) break;
        end = start;
      }
    }
    text = text.substr(begin, end - begin);
  }
};

class ReplaceNormalizer : public Normalizer {
 public:
  std::unique_ptr<UnicodeRegex> pattern;
  std::string content;
  void normalize(std::string& text) const override { text = replace_all(*pattern, text, content); }
};

class PrependNormalizer : public Normalizer {
 public:
  std::string prepend;
  void normalize(std::string& text) const override {
    if (!text.empty()) text.insert(0, prepend);
  }
};

}  // namespace

Result<std::unique_ptr<UnicodeRegex>> read_pattern(const Json& obj, const JsonPath& at) {
  XONNX_ASSIGN_OR_RETURN(const Json* pattern, get_object(obj, "pattern", at));
  const JsonPath p = at / "pattern";
  std::string text;
  bool literal;
  if (pattern->contains("String")) {
    XONNX_RETURN_IF_ERROR(get_string(*pattern, "String", p, text));
    literal = true;
  } else if (pattern->contains("Regex")) {
    XONNX_RETURN_IF_ERROR(get_string(*pattern, "Regex", p, text));
    literal = false;
  } else {
    return p.error("expected {\"String\": ...} or {\"Regex\": ...}");
  }
  auto re = UnicodeRegex::compile(text, literal);
  if (!re.is_ok()) return p.error(re.status().message());
  return std::move(re).value();
}

std::string replace_all(const UnicodeRegex& pattern, const std::string& text, const std::string& content) {
  std::vector<std::pair<size_t, size_t>> matches;
  pattern.find_all(text, matches);
  if (matches.empty()) return text;
  std::string out;
  out.reserve(text.size());
  size_t prev = 0;
  for (auto [b, e] : matches) {
    out.append(text, prev, b - prev);
    out += content;
    prev = e;
  }
  out.append(text, prev, std::string::npos);
  return out;
}

Result<std::unique_ptr<Normalizer>> make_normalizer(const Json& j, const JsonPath& at) {
  XONNX_ASSIGN_OR_RETURN(std::string type, component_type(j, at));
  if (type == "Sequence") {
    auto seq = std::make_unique<SequenceNormalizer>();
    XONNX_ASSIGN_OR_RETURN(const Json* parts, get_array(j, "normalizers", at));
    for (size_t i = 0; i < parts->size(); ++i) {
      XONNX_ASSIGN_OR_RETURN(auto part, make_normalizer((*parts)[i], (at / "normalizers")[i]));
      seq->parts.push_back(std::move(part));
    }
    return std::unique_ptr<Normalizer>(std::move(seq));
  }
  if (type == "NFC") return std::unique_ptr<Normalizer>(new UnicodeFormNormalizer(NormalForm::kNFC));
  if (type == "NFD") return std::unique_ptr<Normalizer>(new UnicodeFormNormalizer(NormalForm::kNFD));
  if (type == "NFKC") return std::unique_ptr<Normalizer>(new UnicodeFormNormalizer(NormalForm::kNFKC));
  if (type == "NFKD") return std::unique_ptr<Normalizer>(new UnicodeFormNormalizer(NormalForm::kNFKD));
  if (type == "Lowercase") return std::unique_ptr<Normalizer>(new LowercaseNormalizer());
  if (type == "StripAccents") return std::unique_ptr<Normalizer>(new StripAccentsNormalizer());
  if (type == "Strip") {
    auto n = std::make_unique<StripNormalizer>();
    XONNX_RETURN_IF_ERROR(get_bool(j, "strip_left", at, n->left));
    XONNX_RETURN_IF_ERROR(get_bool(j, "strip_right", at, n->right));
    return std::unique_ptr<Normalizer>(std::move(n));
  }
  if (type == "Replace") {
    auto n = std::make_unique<ReplaceNormalizer>();
    XONNX_ASSIGN_OR_RETURN(n->pattern, read_pattern(j, at));
    XONNX_RETURN_IF_ERROR(get_string(j, "content", at, n->content));
    return std::unique_ptr<Normalizer>(std::move(n));
  }
  if (type == "Prepend") {
    auto n = std::make_unique<PrependNormalizer>();
    XONNX_RETURN_IF_ERROR(get_string(j, "prepend", at, n->prepend));
    return std::unique_ptr<Normalizer>(std::move(n));
  }
  return (at / "type")
      .error("unsupported normalizer \"", type,
             "\" (supported: Sequence, NFC, NFD, NFKC, NFKD, Lowercase, StripAccents, Strip, "
             "Replace, Prepend)");
}

}  // namespace xonnx::genai
