#include "sdk/genai/chat_template_lexer.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "sdk/genai/unicode.h"

namespace xonnx::genai::jinja {

std::string where(const Position& pos) {
  return "line " + std::to_string(pos.line) + ", column " + std::to_string(pos.column) + ": ";
}

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

class Lexer {
 public:
  explicit Lexer(std::string_view src) : src_(src) {
    line_starts_.push_back(0);
    for (size_t i = 0; i < src_.size(); ++i) {
      if (src_[i] == '\n') line_starts_.push_back(i + 1);
    }
  }

  Result<std::vector<Token>> run() {
    bool strip_all = false;     // the previous tag ended in '-'
    bool trim_newline = false;  // the previous tag was a block or comment (trim_blocks)
    bool at_line_start = true;  // the text about to be read starts a line
    while (pos_ < src_.size()) {
      size_t tag = pos_;
      while ((tag = src_.find('{', tag)) != std::string_view::npos) {
        if (tag + 1 < src_.size() && (src_[tag + 1] == '{' || src_[tag + 1] == '%' || src_[tag + 1] == '#')) break;
        ++tag;
      }
      if (tag == std::string_view::npos) tag = src_.size();
      const std::string_view raw = src_.substr(pos_, tag - pos_);
      std::string text(raw);
      const Position text_pos = position(pos_);
      if (strip_all) {
        text.erase(0, std::find_if(text.begin(), text.end(), [](char c) { return !is_space(c); }) - text.begin());
      } else if (trim_newline && !text.empty() && text[0] == '\n') {
        text.erase(0, 1);
      } else if (trim_newline && text.compare(0, 2, "\r\n") == 0) {
        text.erase(0, 2);
      }
      if (tag < src_.size()) {
        const char kind = src_[tag + 1];
        const char modifier = tag + 2 < src_.size() ? src_[tag + 2] : 0;
        if (modifier == '-') {
          while (!text.empty() && is_space(text.back())) text.pop_back();
        } else if (kind != '{' && modifier != '+') {
          // lstrip_blocks: spaces and tabs between a line start and a block tag go.
          const size_t nl = raw.find_last_of('\n');
          const size_t from = nl == std::string_view::npos ? 0 : nl + 1;
          const bool blank = std::all_of(raw.begin() + static_cast<ptrdiff_t>(from), raw.end(),
                                         [](char c) { return c == ' ' || c == '\t'; });
          if (blank && (nl != std::string_view::npos || at_line_start)) {
            text.erase(text.size() - std::min(text.size(), raw.size() - from));
          }
        }
      }
      if (!text.empty()) emit(Token::Type::kText, normalize_newlines(text), text_pos);
      if (tag >= src_.size()) break;
      const char kind = src_[tag + 1];
      pos_ = tag + 2;
      if (pos_ < src_.size() && (src_[pos_] == '-' || src_[pos_] == '+')) ++pos_;
      char end_modifier = 0;
      if (kind == '#') {
        const size_t close = src_.find("#}", pos_);
        if (close == std::string_view::npos) return error(tag, "unterminated comment");
        end_modifier = close > pos_ && (src_[close - 1] == '-' || src_[close - 1] == '+') ? src_[close - 1] : 0;
        pos_ = close + 2;
      } else {
        emit(kind == '{' ? Token::Type::kVarBegin : Token::Type::kBlockBegin, "", position(tag));
        XONNX_RETURN_IF_ERROR(lex_tag(kind == '{' ? '}' : '%', end_modifier));
        if (kind == '%') XONNX_RETURN_IF_ERROR(maybe_raw(end_modifier));
      }
      strip_all = end_modifier == '-';
      trim_newline = kind != '{' && end_modifier != '+';
      at_line_start = pos_ > 0 && src_[pos_ - 1] == '\n';
    }
    emit(Token::Type::kEnd, "", position(src_.size()));
    return std::move(tokens_);
  }

 private:
  Position position(size_t offset) const {
    const size_t line =
        static_cast<size_t>(std::upper_bound(line_starts_.begin(), line_starts_.end(), offset) - line_starts_.begin());
    Position p;
    p.line = static_cast<int>(line);
    p.column = static_cast<int>(offset - line_starts_[line - 1] + 1);
    return p;
  }
  Status error(size_t offset, const std::string& what) const {
    return invalid_argument("chat template ", where(position(offset)), what);
  }
  void emit(Token::Type type, std::string text, Position pos) {
    Token t;
    t.type = type;
    t.text = std::move(text);
    t.pos = pos;
    tokens_.push_back(std::move(t));
  }
  // Jinja normalizes the newlines of template text to \n.
  static std::string normalize_newlines(const std::string& s) {
    if (s.find('\r') == std::string::npos) return s;
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '\r') {
        out += '\n';
        if (i + 1 < s.size() && s[i + 1] == '\n') ++i;
      } else {
        out += s[i];
      }
    }
    return out;
  }

  // Tokens of one {{ }} or {% %} tag up to its closing delimiter (close is '}' or '%').
  Status lex_tag(char close, char& end_modifier) {
    const Token::Type end_type = close == '}' ? Token::Type::kVarEnd : Token::Type::kBlockEnd;
    int depth = 0;  // open ( [ {: a "}}" inside a dict literal does not close the tag
    while (true) {
      while (pos_ < src_.size() && is_space(src_[pos_])) ++pos_;
      if (pos_ >= src_.size()) return error(pos_, std::string("missing '") + close + "}'");
      const size_t start = pos_;
      for (char m : {'-', '+'}) {
        if (depth > 0) break;
        if (src_[pos_] == m && pos_ + 2 < src_.size() && src_[pos_ + 1] == close && src_[pos_ + 2] == '}') {
          end_modifier = m;
          pos_ += 3;
          emit(end_type, "", position(start));
          return Status::ok();
        }
      }
      if (depth == 0 && src_[pos_] == close && pos_ + 1 < src_.size() && src_[pos_ + 1] == '}') {
        pos_ += 2;
        emit(end_type, "", position(start));
        return Status::ok();
      }
      const char c = src_[pos_];
      if (c == '\'' || c == '"') {
        XONNX_RETURN_IF_ERROR(lex_string(c));
      } else if (c >= '0' && c <= '9') {
        XONNX_RETURN_IF_ERROR(lex_number());
      } else if (c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
        while (pos_ < src_.size() && (src_[pos_] == '_' || std::isalnum(static_cast<unsigned char>(src_[pos_]))))
          ++pos_;
        emit(Token::Type::kName, std::string(src_.substr(start, pos_ - start)), position(start));
      } else {
        static const char* const kOps[] = {"**", "//", "==", "!=", "<=", ">=", "+", "-", "*", "/", "%", "~", "|",
                                           ".",  ",",  ":",  "(",  ")",  "[",  "]", "{", "}", "<", ">", "=", "!"};
        bool found = false;
        for (const char* op : kOps) {
          const std::string_view o(op);
          if (src_.substr(pos_, o.size()) == o) {
            pos_ += o.size();
            emit(Token::Type::kOperator, std::string(o), position(start));
            if (o == "(" || o == "[" || o == "{") ++depth;
            if ((o == ")" || o == "]" || o == "}") && depth > 0) --depth;
            found = true;
            break;
          }
        }
        if (!found) return error(start, std::string("unexpected character '") + c + "'");
      }
    }
  }

  Status lex_string(char quote) {
    const size_t start = pos_++;
    std::string value;
    while (true) {
      if (pos_ >= src_.size()) return error(start, "unterminated string");
      const char c = src_[pos_++];
      if (c == quote) break;
      if (c != '\\') {
        value += c;
        continue;
      }
      if (pos_ >= src_.size()) return error(start, "unterminated string");
      const char e = src_[pos_++];
      switch (e) {
        case 'n': value += '\n'; break;
        case 't': value += '\t'; break;
        case 'r': value += '\r'; break;
        case '0': value += '\0'; break;
        case 'a': value += '\a'; break;
        case 'b': value += '\b'; break;
        case 'f': value += '\f'; break;
        case 'v': value += '\v'; break;
        case 'x':
        case 'u':
        case 'U': {
          const size_t digits = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          if (pos_ + digits > src_.size()) return error(pos_, "bad escape");
          const std::string hex(src_.substr(pos_, digits));
          char* end = nullptr;
          const unsigned long cp = std::strtoul(hex.c_str(), &end, 16);
          if (end != hex.c_str() + digits || cp > 0x10FFFF) return error(pos_, "bad escape");
          utf8_append(value, static_cast<uint32_t>(cp));
          pos_ += digits;
          break;
        }
        case '\\':
        case '\'':
        case '"': value += e; break;
        case '\n': break;                    // line continuation
        default: value += '\\'; value += e;  // Python keeps unknown escapes as they are
      }
    }
    emit(Token::Type::kString, std::move(value), position(start));
    return Status::ok();
  }

  Status lex_number() {
    const size_t start = pos_;
    bool is_float = false;
    while (pos_ < src_.size() && (std::isdigit(static_cast<unsigned char>(src_[pos_])) || src_[pos_] == '_')) ++pos_;
    if (pos_ + 1 < src_.size() && src_[pos_] == '.' && std::isdigit(static_cast<unsigned char>(src_[pos_ + 1]))) {
      is_float = true;
      ++pos_;
      while (pos_ < src_.size() && std::isdigit(static_cast<unsigned char>(src_[pos_]))) ++pos_;
    }
    if (pos_ < src_.size() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
      size_t k = pos_ + 1;
      if (k < src_.size() && (src_[k] == '+' || src_[k] == '-')) ++k;
      if (k < src_.size() && std::isdigit(static_cast<unsigned char>(src_[k]))) {
        is_float = true;
        pos_ = k;
        while (pos_ < src_.size() && std::isdigit(static_cast<unsigned char>(src_[pos_]))) ++pos_;
      }
    }
    std::string digits;
    for (char c : src_.substr(start, pos_ - start)) {
      if (c != '_') digits += c;
    }
    Token t;
    t.pos = position(start);
    t.text = digits;
    if (is_float) {
      t.type = Token::Type::kFloat;
      t.real = std::strtod(digits.c_str(), nullptr);
    } else {
      t.type = Token::Type::kInt;
      errno = 0;
      t.integer = std::strtoll(digits.c_str(), nullptr, 10);
      if (errno == ERANGE) return error(start, "integer literal " + digits + " does not fit in 64 bits");
    }
    tokens_.push_back(std::move(t));
    return Status::ok();
  }

  // {% raw %} ... {% endraw %}: the text between is output as it is.
  Status maybe_raw(char& end_modifier) {
    const size_t n = tokens_.size();
    if (n < 3 || tokens_[n - 2].type != Token::Type::kName || tokens_[n - 2].text != "raw" ||
        tokens_[n - 3].type != Token::Type::kBlockBegin) {
      return Status::ok();
    }
    tokens_.resize(n - 3);
    size_t search = pos_;
    while (true) {
      const size_t open = src_.find("{%", search);
      if (open == std::string_view::npos) return error(pos_, "missing {% endraw %}");
      size_t k = open + 2;
      if (k < src_.size() && (src_[k] == '-' || src_[k] == '+')) ++k;
      while (k < src_.size() && is_space(src_[k])) ++k;
      if (src_.substr(k, 6) != "endraw") {
        search = open + 2;
        continue;
      }
      std::string text(src_.substr(pos_, open - pos_));
      if (src_[open + 2] == '-') {
        while (!text.empty() && is_space(text.back())) text.pop_back();
      }
      if (end_modifier == '-') {
        text.erase(0, std::find_if(text.begin(), text.end(), [](char c) { return !is_space(c); }) - text.begin());
      }
      if (!text.empty()) emit(Token::Type::kText, normalize_newlines(text), position(pos_));
      pos_ = k + 6;
      while (pos_ < src_.size() && is_space(src_[pos_])) ++pos_;
      end_modifier = 0;
      if (pos_ < src_.size() && (src_[pos_] == '-' || src_[pos_] == '+')) end_modifier = src_[pos_++];
      if (src_.substr(pos_, 2) != "%}") return error(pos_, "expected '%}' after endraw");
      pos_ += 2;
      return Status::ok();
    }
  }

  std::string_view src_;
  size_t pos_ = 0;
  std::vector<size_t> line_starts_;
  std::vector<Token> tokens_;
};

}  // namespace

Result<std::vector<Token>> lex_template(std::string_view source) {
  // Jinja drops one trailing newline of the template (keep_trailing_newline is off).
  if (!source.empty() && source.back() == '\n') source.remove_suffix(1);
  if (!source.empty() && source.back() == '\r') source.remove_suffix(1);
  return Lexer(source).run();
}

}  // namespace xonnx::genai::jinja
