// xonnx::genai::Tokenizer: Hugging Face tokenizer.json (+ tokenizer_config.json) read and run
// as HF tokenizers does, for BPE models: byte-level BPE (GPT-2, Llama-3, Qwen2/3, o200k,
// DeepSeek-V3, Mistral-Nemo) and SentencePiece-style BPE (Llama-2, Mistral, Gemma: Metaspace /
// "▁" with <0xNN> byte fallback). docs/genai.md lists the supported components.
//
// Ownership and threads: a Tokenizer is immutable after load() except for an internal word
// cache with its own lock, so one instance may be shared by threads (encode / decode are
// const and thread-safe). A TokenStreamDecoder is per stream, not thread-safe, and must not
// outlive its Tokenizer.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "runtime/core/status.h"
#include "sdk/genai/tokenizer_added.h"

namespace xonnx::genai {

class BpeModel;
class Decoder;
class Normalizer;
class PreTokenizer;

// What tokenizer_config.json adds to tokenizer.json.
struct TokenizerConfig {
  std::string bos_token, eos_token, unk_token, pad_token;  // empty when absent
  std::optional<bool> add_bos_token, add_eos_token;
  std::string tokenizer_class;
  bool clean_up_tokenization_spaces = false;
  // Chat templates by name; a single template string is named "default".
  std::vector<std::pair<std::string, std::string>> chat_templates;
};

class Tokenizer {
 public:
  ~Tokenizer();

  // Loads DIR/tokenizer.json and, when present, DIR/tokenizer_config.json; or a tokenizer.json
  // file and the tokenizer_config.json beside it. Errors name the file and the field.
  static Result<std::unique_ptr<Tokenizer>> load(const std::string& dir_or_file);
  // Only tokenizer_config.json (special-token strings, chat templates), without the
  // vocabulary: enough to render chat templates.
  static Result<TokenizerConfig> load_config(const std::string& dir_or_file);
  // From the two files' contents (config may be empty); names are used in error messages.
  static Result<std::unique_ptr<Tokenizer>> from_json(std::string_view tokenizer_json,
                                                      std::string_view tokenizer_config_json = {},
                                                      const std::string& source = "tokenizer.json");

  // Text to ids. add_special_tokens applies the post-processor (bos/eos of the template).
  // Ill-formed UTF-8 in text is read as U+FFFD.
  std::vector<int32_t> encode(std::string_view text, bool add_special_tokens = true) const;
  // Ids to text; ids outside the vocabulary are skipped.
  std::string decode(const std::vector<int32_t>& ids, bool skip_special_tokens = false) const;
  std::string decode(const int32_t* ids, size_t count, bool skip_special_tokens = false) const;

  // One past the largest token id (the width of the model's logits is at least this).
  int32_t vocab_size() const { return vocab_size_; }
  std::optional<int32_t> token_to_id(std::string_view token) const;
  // The vocabulary string of id ("Ġthe", "▁the", "<0x0A>", "<|im_end|>"); empty if unknown.
  std::string id_to_token(int32_t id) const;
  // The bytes id stands for when decoded after other text: "Ġthe" -> " the", "▁the" ->
  // " the", "<0x0A>" -> "\n", special tokens their content. May be part of a UTF-8 character.
  // The reference stays valid for the Tokenizer's lifetime.
  const std::string& token_bytes(int32_t id) const;
  // token_bytes as text (llama.cpp's token_to_piece): ill-formed bytes as U+FFFD.
  std::string token_to_piece(int32_t id) const;

  bool is_special(int32_t id) const;
  const std::vector<AddedToken>& added_tokens() const { return added_tokens_; }
  std::optional<int32_t> bos_id() const { return bos_id_; }
  std::optional<int32_t> eos_id() const { return eos_id_; }
  const TokenizerConfig& config() const { return config_; }

  // Drops the cache of merged words (it holds at most 64k words and clears itself when full).
  void clear_cache() const;

  // transformers' clean_up_tokenization (" ." -> ".", " n't" -> "n't", ...), which Python
  // transformers applies after decode when clean_up_tokenization_spaces is set.
  static std::string clean_up_tokenization(std::string_view text);

 private:
  Tokenizer();
  void encode_segment(std::string_view text, bool at_start, std::vector<int32_t>& ids) const;
  void build_token_bytes() const;

  std::unique_ptr<BpeModel> model_;
  std::unique_ptr<Normalizer> normalizer_;
  std::unique_ptr<PreTokenizer> pre_tokenizer_;
  std::unique_ptr<Decoder> decoder_;
  std::vector<AddedToken> added_tokens_;
  std::vector<const AddedToken*> added_by_id_;  // indexed by id, null for model tokens
  std::unordered_map<std::string, int32_t> added_ids_;
  AddedTokenMatcher raw_added_, normalized_added_;
  // Post-processor of one sequence: prefix + ids + suffix.
  std::vector<int32_t> prefix_, suffix_;
  TokenizerConfig config_;
  std::optional<int32_t> bos_id_, eos_id_;
  int32_t vocab_size_ = 0;

  mutable std::once_flag token_bytes_once_;
  mutable std::vector<std::string> token_bytes_;

  friend class TokenizerLoader;
};

// Streaming detokenizer for generation: feed ids as they come, get text that only ever holds
// complete UTF-8 characters and equals decode() of all ids once concatenated (HF's
// DecodeStream: each step decodes the last few ids with the previous ones as context, so
// Metaspace / Strip rules for the first token and multi-byte characters split over tokens
// come out right).
class TokenStreamDecoder {
 public:
  explicit TokenStreamDecoder(const Tokenizer& tokenizer, bool skip_special_tokens = true)
      : tokenizer_(tokenizer), skip_special_tokens_(skip_special_tokens) {}
  // The text id completes; empty while a character is still incomplete.
  std::string put(int32_t id);
  // What is left at the end of the stream (an incomplete character comes out as U+FFFD).
  std::string flush();
  void reset();

 private:
  const Tokenizer& tokenizer_;
  bool skip_special_tokens_;
  std::vector<int32_t> ids_;
  std::string prefix_;
  size_t prefix_index_ = 0;
};

}  // namespace xonnx::genai
