#include "sdk/genai/tokenizer_decoder.h"

#include "sdk/genai/normalizer.h"
#include "sdk/genai/unicode.h"
#include "sdk/genai/unicode_regex.h"

namespace xonnx::genai {
namespace {

std::string byte_level_decode(std::string_view token) {
  std::string bytes;
  bytes.reserve(token.size());
  for (size_t i = 0; i < token.size();) {
    const size_t begin = i;
    const int b = unicode_to_byte(utf8_next(token, i));
    if (b >= 0)
      bytes.push_back(static_cast<char>(b));
    else
      bytes.append(token.substr(begin, i - begin));  // a char outside the map stays as it is
  }
  return bytes;
}

// <0xNN> -> NN, else -1.
int byte_token_value(const std::string& t) {
  if (t.size() != 6 || t.compare(0, 3, "<0x") != 0 || t[5] != '>') return -1;
  int v = 0;
  for (int k = 3; k < 5; ++k) {
    const char c = t[static_cast<size_t>(k)];
    const int d = c >= '0' && c <= '9'   ? c - '0'
                  : c >= 'A' && c <= 'F' ? c - 'A' + 10
                  : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                         : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

class SequenceDecoder : public Decoder {
 public:
  std::vector<std::unique_ptr<Decoder>> parts;
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (const auto& d : parts) d->decode_chain(tokens);
  }
  void token_bytes(std::string& token) const override {
    for (const auto& d : parts) d->token_bytes(token);
  }
};

class ByteLevelDecoder : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::string bytes;
    for (const auto& t : tokens) bytes += byte_level_decode(t);
    tokens.assign(1, utf8_make_valid(bytes));
  }
  void token_bytes(std::string& token) const override { token = byte_level_decode(token); }
};

class MetaspaceDecoder : public Decoder {
 public:
  std::string replacement = "\xE2\x96\x81";
  bool prepend = true;  // prepend_scheme other than "never": the first token loses its ▁s
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = replace(tokens[i], i == 0 && prepend ? "" : " ");
  }
  void token_bytes(std::string& token) const override { token = replace(token, " "); }

 private:
  std::string replace(const std::string& t, const char* with) const {
    std::string out;
    for (size_t pos = 0;;) {
      const size_t hit = t.find(replacement, pos);
      out.append(t, pos, hit == std::string::npos ? std::string::npos : hit - pos);
      if (hit == std::string::npos) return out;
      out += with;
      pos = hit + replacement.size();
    }
  }
};

class ReplaceDecoder : public Decoder {
 public:
  std::unique_ptr<UnicodeRegex> pattern;
  std::string content;
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (auto& t : tokens) t = replace_all(*pattern, t, content);
  }
  void token_bytes(std::string& token) const override { token = replace_all(*pattern, token, content); }
};

class ByteFallbackDecoder : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::vector<std::string> out;
    std::string bytes;
    size_t byte_tokens = 0;
    auto flush = [&] {
      if (byte_tokens == 0) return;
      if (utf8_is_valid(bytes)) {
        out.push_back(bytes);
      } else {  // HF: one U+FFFD per byte token when the bytes are not valid UTF-8
        for (size_t k = 0; k < byte_tokens; ++k) out.push_back("\xEF\xBF\xBD");
      }
      bytes.clear();
      byte_tokens = 0;
    };
    for (auto& t : tokens) {
      const int v = byte_token_value(t);
      if (v >= 0) {
        bytes.push_back(static_cast<char>(v));
        ++byte_tokens;
      } else {
        flush();
        out.push_back(std::move(t));
      }
    }
    flush();
    tokens.swap(out);
  }
  void token_bytes(std::string& token) const override {
    const int v = byte_token_value(token);
    if (v >= 0) token.assign(1, static_cast<char>(v));
  }
};

class FuseDecoder : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::string all;
    for (const auto& t : tokens) all += t;
    tokens.assign(1, std::move(all));
  }
  void token_bytes(std::string&) const override {}
};

class StripDecoder : public Decoder {
 public:
  uint32_t content = ' ';
  size_t start = 0, stop = 0;
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (auto& t : tokens) {
      std::vector<size_t> bounds;  // byte offset of each char, then the size
      for (size_t i = 0; i < t.size(); utf8_next(t, i)) bounds.push_back(i);
      const size_t n = bounds.size();
      bounds.push_back(t.size());
      auto char_at = [&](size_t k) {
        size_t i = bounds[k];
        return utf8_next(t, i);
      };
      size_t cut_start = 0, cut_stop = n;
      while (cut_start < start && cut_start < n && char_at(cut_start) == content) ++cut_start;
      while (n - cut_stop < stop && cut_stop > cut_start && char_at(cut_stop - 1) == content) --cut_stop;
      t = t.substr(bounds[cut_start], bounds[cut_stop] - bounds[cut_start]);
    }
  }
  void token_bytes(std::string&) const override {}
};

class BpeSuffixDecoder : public Decoder {
 public:
  std::string suffix = "</w>";
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = replace(tokens[i], i + 1 == tokens.size() ? "" : " ");
  }
  void token_bytes(std::string& token) const override { token = replace(token, " "); }

 private:
  std::string replace(const std::string& t, const char* with) const {
    if (suffix.empty()) return t;
    std::string out;
    for (size_t pos = 0;;) {
      const size_t hit = t.find(suffix, pos);
      out.append(t, pos, hit == std::string::npos ? std::string::npos : hit - pos);
      if (hit == std::string::npos) return out;
      out += with;
      pos = hit + suffix.size();
    }
  }
};

}  // namespace

Result<std::unique_ptr<Decoder>> make_decoder(const Json& j, const JsonPath& at) {
  XONNX_ASSIGN_OR_RETURN(std::string type, component_type(j, at));
  if (type == "Sequence") {
    auto seq = std::make_unique<SequenceDecoder>();
    XONNX_ASSIGN_OR_RETURN(const Json* parts, get_array(j, "decoders", at));
    for (size_t i = 0; i < parts->size(); ++i) {
      XONNX_ASSIGN_OR_RETURN(auto part, make_decoder((*parts)[i], (at / "decoders")[i]));
      seq->parts.push_back(std::move(part));
    }
    return std::unique_ptr<Decoder>(std::move(seq));
  }
  if (type == "ByteLevel") return std::unique_ptr<Decoder>(new ByteLevelDecoder());
  if (type == "Metaspace") {
    auto d = std::make_unique<MetaspaceDecoder>();
    XONNX_RETURN_IF_ERROR(get_string(j, "replacement", at, d->replacement));
    std::string scheme;
    XONNX_RETURN_IF_ERROR(get_string(j, "prepend_scheme", at, scheme));
    if (scheme.empty())
      XONNX_RETURN_IF_ERROR(get_bool(j, "add_prefix_space", at, d->prepend));
    else
      d->prepend = scheme != "never";
    return std::unique_ptr<Decoder>(std::move(d));
  }
  if (type == "Replace") {
    auto d = std::make_unique<ReplaceDecoder>();
    XONNX_ASSIGN_OR_RETURN(d->pattern, read_pattern(j, at));
    XONNX_RETURN_IF_ERROR(get_string(j, "content", at, d->content));
    return std::unique_ptr<Decoder>(std::move(d));
  }
  if (type == "ByteFallback") return std::unique_ptr<Decoder>(new ByteFallbackDecoder());
  if (type == "Fuse") return std::unique_ptr<Decoder>(new FuseDecoder());
  if (type == "Strip") {
    auto d = std::make_unique<StripDecoder>();
    std::string content = " ";
    int64_t start = 0, stop = 0;
    XONNX_RETURN_IF_ERROR(get_string(j, "content", at, content));
    XONNX_RETURN_IF_ERROR(get_int(j, "start", at, start));
    XONNX_RETURN_IF_ERROR(get_int(j, "stop", at, stop));
    size_t i = 0;
    if (content.empty() || (d->content = utf8_next(content, i), i != content.size())) {
      return (at / "content").error("expected a single character");
    }
    if (start < 0 || stop < 0) return at.error("start and stop must not be negative");
    d->start = static_cast<size_t>(start);
    d->stop = static_cast<size_t>(stop);
    return std::unique_ptr<Decoder>(std::move(d));
  }
  if (type == "BPEDecoder") {
    auto d = std::make_unique<BpeSuffixDecoder>();
    XONNX_RETURN_IF_ERROR(get_string(j, "suffix", at, d->suffix));
    return std::unique_ptr<Decoder>(std::move(d));
  }
  return (at / "type")
      .error("unsupported decoder \"", type,
             "\" (supported: Sequence, ByteLevel, Metaspace, Replace, ByteFallback, Fuse, "
             "Strip, BPEDecoder)");
}

}  // namespace xonnx::genai
