// The BPE model of tokenizer.json ("model": {"type": "BPE", ...}), as HF tokenizers'
// models/bpe: vocab, merges ("a b" strings or ["a", "b"] pairs), ignore_merges, byte_fallback
// (<0xNN> tokens), unk_token with fuse_unk, continuing_subword_prefix, end_of_word_suffix.
// A word is merged by a priority queue of candidate pairs over a linked list of symbols (lowest
// merge rank first, leftmost on ties), O(n log n); merged words are cached.
//
// Thread safety: tokenize may run concurrently (the cache has its own lock).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sdk/genai/flat_hash.h"
#include "sdk/genai/tokenizer_json.h"

namespace xonnx::genai {

class BpeModel {
 public:
  static Result<std::unique_ptr<BpeModel>> load(const Json& model, const JsonPath& at);

  // Appends the ids of one pre-tokenized word.
  void tokenize(std::string_view word, std::vector<int32_t>& ids) const;

  std::optional<int32_t> token_to_id(std::string_view token) const;
  // The token string of id, or nullptr for an id the vocab does not hold.
  const std::string* id_to_token(int32_t id) const;
  // One past the largest id of the vocab.
  int32_t id_limit() const { return static_cast<int32_t>(tokens_.size()); }
  bool byte_fallback() const { return byte_fallback_; }
  void clear_cache() const;

 private:
  BpeModel() = default;
  void merge_word(std::string_view word, std::vector<int32_t>& ids) const;

  std::vector<std::string> tokens_;  // by id; empty where no token has that id
  std::vector<bool> has_token_;
  StringIdTable vocab_;  // views into tokens_
  // (left id, right id) -> (rank, merged id)
  U64Table merges_;
  int32_t unk_id_ = -1;
  bool fuse_unk_ = false;
  bool byte_fallback_ = false;
  bool ignore_merges_ = false;
  std::string continuing_subword_prefix_;
  std::string end_of_word_suffix_;
  int32_t byte_ids_[256];  // <0xNN> ids, -1 where absent

  static constexpr size_t kCacheCapacity = 1 << 16;
  static constexpr size_t kMaxCachedWordBytes = 256;
  mutable std::mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::vector<int32_t>> cache_;
};

}  // namespace xonnx::genai
