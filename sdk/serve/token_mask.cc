#include "sdk/serve/token_mask.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace xonnx::serve {

VocabTrie::VocabTrie(const std::vector<std::string>& token_bytes, const std::vector<int32_t>& excluded)
    : bytes_(token_bytes), offered_(token_bytes.size(), 1), vocab_size_(token_bytes.size()) {
  for (int32_t id : excluded) {
    if (id >= 0 && static_cast<size_t>(id) < vocab_size_) offered_[static_cast<size_t>(id)] = 0;
  }
  // Build with maps, then flatten into sorted edge arrays.
  struct Build {
    std::map<uint8_t, uint32_t> children;
    std::vector<int32_t> tokens;
  };
  std::vector<Build> build(1);
  for (size_t id = 0; id < vocab_size_; ++id) {
    const std::string& b = bytes_[id];
    if (!offered_[id] || b.empty()) {
      offered_[id] = 0;
      continue;
    }
    uint32_t node = 0;
    for (char ch : b) {
      const auto byte = static_cast<uint8_t>(ch);
      auto it = build[node].children.find(byte);
      if (it == build[node].children.end()) {
        build.emplace_back();
        it = build[node].children.emplace(byte, static_cast<uint32_t>(build.size() - 1)).first;
      }
      node = it->second;
    }
    build[node].tokens.push_back(static_cast<int32_t>(id));
    max_depth_ = std::max(max_depth_, b.size());
  }
  nodes_.resize(build.size());
  for (size_t i = 0; i < build.size(); ++i) {
    nodes_[i].first_edge = static_cast<uint32_t>(edges_.size());
    nodes_[i].edge_count = static_cast<uint32_t>(build[i].children.size());
    for (const auto& [byte, child] : build[i].children) edges_.push_back({byte, child});
    nodes_[i].first_token = static_cast<uint32_t>(tokens_.size());
    nodes_[i].token_count = static_cast<uint32_t>(build[i].tokens.size());
    tokens_.insert(tokens_.end(), build[i].tokens.begin(), build[i].tokens.end());
  }
}

JsonConstraint::JsonConstraint(std::shared_ptr<const JsonMatcher> matcher, std::shared_ptr<const VocabTrie> trie,
                               std::vector<int32_t> eos_ids)
    : matcher_(std::move(matcher)), trie_(std::move(trie)), eos_ids_(std::move(eos_ids)) {
  state_ = matcher_->initial();
  depth_states_.resize(trie_->max_depth_ + 1);
}

bool JsonConstraint::is_eos(int32_t token) const {
  return std::find(eos_ids_.begin(), eos_ids_.end(), token) != eos_ids_.end();
}

void JsonConstraint::walk(uint32_t node_index, size_t depth, std::vector<uint8_t>& allowed, size_t& count) {
  const VocabTrie::Node& node = trie_->nodes_[node_index];
  for (uint32_t e = node.first_edge; e < node.first_edge + node.edge_count; ++e) {
    const VocabTrie::Edge& edge = trie_->edges_[e];
    if (!matcher_->advance(depth_states_[depth], edge.byte, depth_states_[depth + 1])) continue;
    const VocabTrie::Node& child = trie_->nodes_[edge.child];
    for (uint32_t t = child.first_token; t < child.first_token + child.token_count; ++t) {
      allowed[static_cast<size_t>(trie_->tokens_[t])] = 1;
      ++count;
    }
    if (child.edge_count) walk(edge.child, depth + 1, allowed, count);
  }
}

size_t JsonConstraint::fill_mask(std::vector<uint8_t>& allowed) {
  allowed.assign(trie_->vocab_size(), 0);
  size_t count = 0;
  depth_states_[0] = state_;
  walk(0, 0, allowed, count);
  if (complete()) {
    for (int32_t id : eos_ids_) {
      if (id >= 0 && static_cast<size_t>(id) < allowed.size() && !allowed[static_cast<size_t>(id)]) {
        allowed[static_cast<size_t>(id)] = 1;
        ++count;
      }
    }
  }
  return count;
}

size_t JsonConstraint::mask_logits(float* logits, size_t count) {
  const size_t allowed_count = fill_mask(mask_);
  const float minus_inf = -std::numeric_limits<float>::infinity();
  for (size_t i = 0; i < count; ++i) {
    if (i >= mask_.size() || !mask_[i]) logits[i] = minus_inf;
  }
  return allowed_count;
}

bool JsonConstraint::allows(int32_t token) const {
  if (is_eos(token)) return complete();
  if (!trie_->offered(token)) return false;
  JsonMatcher::State s = state_;
  return matcher_->advance(s, trie_->bytes(token));
}

bool JsonConstraint::accept(int32_t token) {
  if (is_eos(token)) return complete();
  if (!trie_->offered(token)) return false;
  JsonMatcher::State s = state_;
  if (!matcher_->advance(s, trie_->bytes(token))) return false;
  state_ = std::move(s);
  return true;
}

}  // namespace xonnx::serve
