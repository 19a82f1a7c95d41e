#include "sdk/genai/tokenizer_bpe.h"

#include <algorithm>
#include <cstdio>
#include <queue>

#include "sdk/genai/unicode.h"

namespace xonnx::genai {
namespace {

uint64_t pair_key(int32_t a, int32_t b) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
}

struct Symbol {
  int32_t id;
  int32_t prev, next;  // -1 at the ends
  bool removed;
};

struct Candidate {
  uint32_t rank;
  int32_t pos;
  int32_t new_id;
  // std::priority_queue pops the largest: invert so the lowest rank, then leftmost, comes first.
  bool operator<(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
};

}  // namespace

Result<std::unique_ptr<BpeModel>> BpeModel::load(const Json& model, const JsonPath& at) {
  std::unique_ptr<BpeModel> m(new BpeModel());
  XONNX_ASSIGN_OR_RETURN(const Json* vocab, get_object(model, "vocab", at));
  // Tables are indexed by id, so ids may leave gaps but not run far past the entries: a
  // one-token vocabulary with id 2^30 would otherwise cost 32 GB.
  const int64_t id_bound = std::min<int64_t>(int64_t{4} * static_cast<int64_t>(vocab->size()) + 65536, 1 << 30);
  int32_t max_id = -1;
  for (auto it = vocab->begin(); it != vocab->end(); ++it) {
    if (!it->is_number_integer() || it->get<int64_t>() < 0 || it->get<int64_t>() >= id_bound) {
      return (at / "vocab")
          .error("token \"", it.key(), "\": expected an id in [0, ", id_bound, ") (4 x the ", vocab->size(),
                 " entries + 65536)");
    }
    max_id = std::max(max_id, static_cast<int32_t>(it->get<int64_t>()));
  }
  m->tokens_.resize(static_cast<size_t>(max_id + 1));
  m->has_token_.assign(static_cast<size_t>(max_id + 1), false);
  for (auto it = vocab->begin(); it != vocab->end(); ++it) {
    const auto id = static_cast<size_t>(it->get<int64_t>());
    if (m->has_token_[id]) return (at / "vocab").error("id ", id, " is given to two tokens");
    m->tokens_[id] = it.key();
    m->has_token_[id] = true;
  }
  m->vocab_.reserve(m->tokens_.size());
  for (size_t id = 0; id < m->tokens_.size(); ++id) {
    if (m->has_token_[id]) m->vocab_.insert(m->tokens_[id], static_cast<int32_t>(id));
  }

  std::string unk;
  XONNX_RETURN_IF_ERROR(get_string(model, "unk_token", at, unk));
  if (!unk.empty()) m->unk_id_ = m->token_to_id(unk).value_or(-1);
  XONNX_RETURN_IF_ERROR(get_bool(model, "fuse_unk", at, m->fuse_unk_));
  XONNX_RETURN_IF_ERROR(get_bool(model, "byte_fallback", at, m->byte_fallback_));
  XONNX_RETURN_IF_ERROR(get_bool(model, "ignore_merges", at, m->ignore_merges_));
  XONNX_RETURN_IF_ERROR(get_string(model, "continuing_subword_prefix", at, m->continuing_subword_prefix_));
  XONNX_RETURN_IF_ERROR(get_string(model, "end_of_word_suffix", at, m->end_of_word_suffix_));
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    m->byte_ids_[b] = m->token_to_id(name).value_or(-1);
  }

  XONNX_ASSIGN_OR_RETURN(const Json* merges, get_array(model, "merges", at));
  m->merges_.reserve(merges->size());
  const size_t prefix_len = m->continuing_subword_prefix_.size();
  for (size_t rank = 0; rank < merges->size(); ++rank) {
    const Json& entry = (*merges)[rank];
    const JsonPath where = (at / "merges")[rank];
    std::string a, b;
    if (entry.is_string()) {  // "a b"
      const std::string& line = entry.get_ref<const std::string&>();
      const size_t space = line.find(' ');
      if (space == std::string::npos || line.find(' ', space + 1) != std::string::npos) {
        return where.error("expected \"left right\" with one space, found \"", line, "\"");
      }
      a = line.substr(0, space);
      b = line.substr(space + 1);
    } else if (entry.is_array() && entry.size() == 2 && entry[0].is_string() && entry[1].is_string()) {
      a = entry[0].get<std::string>();
      b = entry[1].get<std::string>();
    } else {
      return where.error("expected \"left right\" or [\"left\", \"right\"]");
    }
    const auto a_id = m->token_to_id(a), b_id = m->token_to_id(b);
    if (!a_id || !b_id) return where.error("token \"", !a_id ? a : b, "\" is not in the vocab");
    if (b.size() < prefix_len) return where.error("right token is shorter than continuing_subword_prefix");
    const auto new_id = m->token_to_id(a + b.substr(prefix_len));
    if (!new_id) return where.error("merged token \"", a + b.substr(prefix_len), "\" is not in the vocab");
    // A repeated pair keeps its last rank, as HF's HashMap collect does.
    m->merges_.insert_or_assign(pair_key(*a_id, *b_id),
                                (static_cast<uint64_t>(rank) << 32) | static_cast<uint32_t>(*new_id));
  }
  return m;
}

std::optional<int32_t> BpeModel::token_to_id(std::string_view token) const {
  const int32_t id = vocab_.find(token);
  if (id < 0) return std::nullopt;
  return id;
}

const std::string* BpeModel::id_to_token(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= tokens_.size() || !has_token_[static_cast<size_t>(id)]) return nullptr;
  return &tokens_[static_cast<size_t>(id)];
}

void BpeModel::tokenize(std::string_view word, std::vector<int32_t>& ids) const {
  if (word.empty()) return;
  if (ignore_merges_) {
    if (auto id = token_to_id(word)) {
      ids.push_back(*id);
      return;
    }
  }
  if (word.size() > kMaxCachedWordBytes) {
    merge_word(word, ids);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    auto it = cache_.find(std::string(word));
    if (it != cache_.end()) {
      ids.insert(ids.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  const size_t first = ids.size();
  merge_word(word, ids);
  std::lock_guard<std::mutex> lock(cache_mutex_);
  if (cache_.size() >= kCacheCapacity) cache_.clear();  // keep memory bounded on varied text
  cache_.emplace(std::string(word), std::vector<int32_t>(ids.begin() + static_cast<ptrdiff_t>(first), ids.end()));
}

void BpeModel::clear_cache() const {
  std::lock_guard<std::mutex> lock(cache_mutex_);
  cache_.clear();
}

void BpeModel::merge_word(std::string_view word, std::vector<int32_t>& ids) const {
  thread_local std::vector<Symbol> symbols;
  thread_local std::string piece;
  symbols.clear();
  auto add = [&](int32_t id) {
    const int32_t pos = static_cast<int32_t>(symbols.size());
    symbols.push_back({id, pos - 1, -1, false});
    if (pos > 0) symbols[static_cast<size_t>(pos - 1)].next = pos;
  };
  // Initial symbols: one per char (with prefix / suffix), else its bytes, else unk.
  int32_t pending_unk = -1;
  for (size_t i = 0; i < word.size();) {
    const size_t begin = i;
    utf8_next(word, i);
    piece.assign(begin > 0 ? continuing_subword_prefix_ : std::string());
    piece.append(word.substr(begin, i - begin));
    if (i == word.size()) piece += end_of_word_suffix_;
    if (auto id = token_to_id(piece)) {
      if (pending_unk >= 0) add(pending_unk), pending_unk = -1;
      add(*id);
      continue;
    }
    if (byte_fallback_) {
      bool all = true;
      for (char c : piece) all = all && byte_ids_[static_cast<uint8_t>(c)] >= 0;
      if (all) {
        for (char c : piece) add(byte_ids_[static_cast<uint8_t>(c)]);
        continue;
      }
    }
    if (unk_id_ >= 0) {
      if (pending_unk >= 0 && !fuse_unk_) add(pending_unk);
      pending_unk = unk_id_;
    }
  }
  if (pending_unk >= 0) add(pending_unk);

  auto lookup = [&](int32_t a, int32_t b, uint32_t& rank, int32_t& new_id) {
    uint64_t value;
    if (!merges_.find(pair_key(a, b), value)) return false;
    rank = static_cast<uint32_t>(value >> 32);
    new_id = static_cast<int32_t>(value & 0xFFFFFFFFu);
    return true;
  };
  std::priority_queue<Candidate> queue;
  for (size_t k = 0; k + 1 < symbols.size(); ++k) {
    uint32_t rank;
    int32_t new_id;
    if (lookup(symbols[k].id, symbols[k + 1].id, rank, new_id)) queue.push({rank, static_cast<int32_t>(k), new_id});
  }
  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    Symbol& left = symbols[static_cast<size_t>(top.pos)];
    if (left.removed || left.next < 0) continue;
    Symbol& right = symbols[static_cast<size_t>(left.next)];
    uint32_t rank;
    int32_t new_id;
    // A stale candidate: one of its symbols has merged since it was queued.
    if (!lookup(left.id, right.id, rank, new_id) || new_id != top.new_id) continue;
    left.id = top.new_id;
    right.removed = true;
    left.next = right.next;
    if (right.next >= 0) symbols[static_cast<size_t>(right.next)].prev = top.pos;
    if (left.prev >= 0 && lookup(symbols[static_cast<size_t>(left.prev)].id, left.id, rank, new_id)) {
      queue.push({rank, left.prev, new_id});
    }
    if (left.next >= 0 && lookup(left.id, symbols[static_cast<size_t>(left.next)].id, rank, new_id)) {
      queue.push({rank, top.pos, new_id});
    }
  }
  for (const Symbol& s : symbols) {
    if (!s.removed) ids.push_back(s.id);
  }
}

}  // namespace xonnx::genai
