// Constrained decoding over a vocabulary: which tokens may come next so that the text stays a
// prefix of a valid JSON document (json_matcher.h).
//
// VocabTrie holds every token's bytes in a trie (built once per model). A step walks the trie
// depth-first from the sequence's matcher state, advancing the state one byte per trie edge and
// pruning a whole subtree at the first refused byte, so a step costs one matcher step per
// surviving trie node rather than vocabulary x token length. Special tokens never match JSON;
// end-of-sequence tokens are allowed exactly when the document is complete.
//
// VocabTrie is immutable and shared; a JsonConstraint is per sequence and not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sdk/serve/json_matcher.h"

namespace xonnx::serve {

class VocabTrie {
 public:
  // token_bytes[id] is what token id decodes to; ids listed in excluded (special tokens) and
  // tokens with no bytes are never offered.
  VocabTrie(const std::vector<std::string>& token_bytes, const std::vector<int32_t>& excluded);

  size_t vocab_size() const { return vocab_size_; }
  size_t nodes() const { return nodes_.size(); }
  const std::string& bytes(int32_t id) const { return bytes_[static_cast<size_t>(id)]; }
  bool offered(int32_t id) const {
    return id >= 0 && static_cast<size_t>(id) < vocab_size_ && offered_[static_cast<size_t>(id)];
  }

 private:
  friend class JsonConstraint;
  struct Node {
    uint32_t first_edge = 0, edge_count = 0;
    uint32_t first_token = 0, token_count = 0;
  };
  struct Edge {
    uint8_t byte;
    uint32_t child;
  };
  std::vector<Node> nodes_;
  std::vector<Edge> edges_;
  std::vector<int32_t> tokens_;  // ids ending at each node, by Node::first_token
  std::vector<std::string> bytes_;
  std::vector<uint8_t> offered_;
  size_t vocab_size_ = 0;
  size_t max_depth_ = 0;
};

class JsonConstraint {
 public:
  JsonConstraint(std::shared_ptr<const JsonMatcher> matcher, std::shared_ptr<const VocabTrie> trie,
                 std::vector<int32_t> eos_ids);

  // allowed[id] = 1 for every token that may come next (size: the vocabulary). Returns the
  // number of allowed tokens; 0 only if the schema left no way on (which compile() prevents
  // for the supported keywords, short of contradictory ones such as a pattern longer than
  // maxLength).
  size_t fill_mask(std::vector<uint8_t>& allowed);
  // Sets the logits of refused tokens to -infinity (count = the logits' width, which may exceed
  // the tokenizer's vocabulary: ids past it are refused).
  size_t mask_logits(float* logits, size_t count);
  // Whether token may come next, without building the whole mask.
  bool allows(int32_t token) const;
  // Takes token as generated; false (state unchanged) if it was not allowed.
  bool accept(int32_t token);
  // The text so far is a complete document (end-of-sequence allowed).
  bool complete() const { return matcher_->accepting(state_); }
  bool is_eos(int32_t token) const;

 private:
  void walk(uint32_t node, size_t depth, std::vector<uint8_t>& allowed, size_t& count);

  std::shared_ptr<const JsonMatcher> matcher_;
  std::shared_ptr<const VocabTrie> trie_;
  std::vector<int32_t> eos_ids_;
  JsonMatcher::State state_;
  std::vector<JsonMatcher::State> depth_states_;  // reused by walk(): the state at each trie depth
  std::vector<uint8_t> mask_;
};

}  // namespace xonnx::serve
