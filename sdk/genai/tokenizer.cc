#include "sdk/genai/tokenizer.h"

#include "sdk/genai/normalizer.h"
#include "sdk/genai/pre_tokenizer.h"
#include "sdk/genai/tokenizer_bpe.h"
#include "sdk/genai/tokenizer_decoder.h"
#include "sdk/genai/unicode.h"

namespace xonnx::genai {

Tokenizer::Tokenizer() = default;
Tokenizer::~Tokenizer() = default;

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special_tokens) const {
  std::string repaired;
  if (!utf8_is_valid(text)) {
    repaired = utf8_make_valid(text);
    text = repaired;
  }
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3 + prefix_.size() + suffix_.size() + 4);
  if (add_special_tokens) ids = prefix_;
  if (raw_added_.empty()) {
    encode_segment(text, true, ids);
  } else {
    std::vector<AddedSplit> splits;
    raw_added_.split(text, splits);
    for (const AddedSplit& s : splits) {
      if (s.token >= 0)
        ids.push_back(s.token);
      else
        encode_segment(text.substr(s.begin, s.end - s.begin), s.begin == 0, ids);
    }
  }
  if (add_special_tokens) ids.insert(ids.end(), suffix_.begin(), suffix_.end());
  return ids;
}

void Tokenizer::encode_segment(std::string_view text, bool at_start, std::vector<int32_t>& ids) const {
  std::string normalized(text);
  if (normalizer_) normalizer_->normalize(normalized);
  std::vector<PreToken> pieces;
  auto tokenize = [&](std::string piece, bool start) {
    if (piece.empty()) return;
    pieces.clear();
    pieces.push_back({std::move(piece), start});
    if (pre_tokenizer_) pre_tokenizer_->pre_tokenize(pieces);
    for (const PreToken& p : pieces) model_->tokenize(p.text, ids);
  };
  if (normalized_added_.empty()) {
    tokenize(std::move(normalized), at_start);
    return;
  }
  std::vector<AddedSplit> splits;
  normalized_added_.split(normalized, splits);
  for (const AddedSplit& s : splits) {
    if (s.token >= 0)
      ids.push_back(s.token);
    else
      tokenize(normalized.substr(s.begin, s.end - s.begin), at_start && s.begin == 0);
  }
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids, bool skip_special_tokens) const {
  return decode(ids.data(), ids.size(), skip_special_tokens);
}

std::string Tokenizer::decode(const int32_t* ids, size_t count, bool skip_special_tokens) const {
  std::vector<std::string> tokens;
  tokens.reserve(count);
  for (size_t k = 0; k < count; ++k) {
    const int32_t id = ids[k];
    if (id < 0 || id >= vocab_size_) continue;
    if (const AddedToken* added = added_by_id_[static_cast<size_t>(id)]) {
      if (!(skip_special_tokens && added->special)) tokens.push_back(added->content);
    } else if (const std::string* t = model_->id_to_token(id)) {
      tokens.push_back(*t);
    }
  }
  std::string text;
  if (!decoder_) {  // HF joins the tokens with spaces when there is no decoder
    for (size_t k = 0; k < tokens.size(); ++k) text += (k ? " " : "") + tokens[k];
    return text;
  }
  decoder_->decode_chain(tokens);
  for (const auto& t : tokens) text += t;
  return text;
}

std::optional<int32_t> Tokenizer::token_to_id(std::string_view token) const {
  auto it = added_ids_.find(std::string(token));
  if (it != added_ids_.end()) return it->second;
  return model_->token_to_id(token);
}

std::string Tokenizer::id_to_token(int32_t id) const {
  if (id < 0 || id >= vocab_size_) return {};
  if (const AddedToken* added = added_by_id_[static_cast<size_t>(id)]) return added->content;
  const std::string* t = model_->id_to_token(id);
  return t ? *t : std::string();
}

bool Tokenizer::is_special(int32_t id) const {
  if (id < 0 || id >= vocab_size_) return false;
  const AddedToken* added = added_by_id_[static_cast<size_t>(id)];
  return added && added->special;
}

void Tokenizer::build_token_bytes() const {
  token_bytes_.resize(static_cast<size_t>(vocab_size_));
  for (int32_t id = 0; id < vocab_size_; ++id) {
    std::string t = id_to_token(id);
    if (decoder_) decoder_->token_bytes(t);
    token_bytes_[static_cast<size_t>(id)] = std::move(t);
  }
}

const std::string& Tokenizer::token_bytes(int32_t id) const {
  static const std::string kEmpty;
  if (id < 0 || id >= vocab_size_) return kEmpty;
  std::call_once(token_bytes_once_, [this] { build_token_bytes(); });
  return token_bytes_[static_cast<size_t>(id)];
}

std::string Tokenizer::token_to_piece(int32_t id) const { return utf8_make_valid(token_bytes(id)); }

void Tokenizer::clear_cache() const { model_->clear_cache(); }

std::string Tokenizer::clean_up_tokenization(std::string_view text) {
  static const std::pair<const char*, const char*> kRules[] = {
      {" .", "."},     {" ?", "?"},   {" !", "!"},   {" ,", ","},     {" ' ", "'"},
      {" n't", "n't"}, {" 'm", "'m"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
  std::string out(text);
  for (auto [from, to] : kRules) {
    std::string next;
    const std::string_view f(from);
    for (size_t pos = 0;;) {
      const size_t hit = out.find(f, pos);
      next.append(out, pos, hit == std::string::npos ? std::string::npos : hit - pos);
      if (hit == std::string::npos) break;
      next += to;
      pos = hit + f.size();
    }
    out.swap(next);
  }
  return out;
}

namespace {
constexpr std::string_view kReplacementUtf8 = "\xEF\xBF\xBD";
// More pending tokens than any incomplete character needs: emit them even if the text ends in
// U+FFFD (ill-formed bytes would otherwise be held back forever).
constexpr size_t kMaxPendingTokens = 8;
}  // namespace

std::string TokenStreamDecoder::put(int32_t id) {
  ids_.push_back(id);
  const std::string text = tokenizer_.decode(ids_, skip_special_tokens_);
  const bool incomplete = text.size() >= kReplacementUtf8.size() &&
                          text.compare(text.size() - kReplacementUtf8.size(), std::string::npos, kReplacementUtf8) == 0;
  if (text.size() <= prefix_.size() || (incomplete && ids_.size() - prefix_index_ < kMaxPendingTokens)) {
    return {};
  }
  // The new text is what follows the context's own decoding; a decoder that rewrites the
  // context (none of the supported ones) would still get the text past that length.
  std::string fresh = text.substr(prefix_.size());
  const size_t new_prefix_index = ids_.size() - prefix_index_;
  ids_.erase(ids_.begin(), ids_.begin() + static_cast<ptrdiff_t>(prefix_index_));
  prefix_ = tokenizer_.decode(ids_, skip_special_tokens_);
  prefix_index_ = new_prefix_index;
  return fresh;
}

std::string TokenStreamDecoder::flush() {
  const std::string text = tokenizer_.decode(ids_, skip_special_tokens_);
  std::string rest = text.size() > prefix_.size() ? text.substr(prefix_.size()) : std::string();
  reset();
  return rest;
}

void TokenStreamDecoder::reset() {
  ids_.clear();
  prefix_.clear();
  prefix_index_ = 0;
}

}  // namespace xonnx::genai
