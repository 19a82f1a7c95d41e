// ModelRunner: one GenAI decoder graph (genai_config.json's model.decoder) run over a KV cache
// that lives outside the session, the common core of Generator (one sequence) and Engine
// (several). Internal to sdk/genai; not installed.
//
// The cache has `rows` rows of `row_length` positions. With past_present_share_buffer (the
// GroupQueryAttention form) every layer's key and value are one buffer [rows, kv_heads,
// row_length, head_size], passed as past and bound as present, so new rows are written in
// place; attention_mask is [B, row_length] with one 1 per valid position (the graph derives
// seqlens_k from its sum and total_sequence_length from its width), which keeps every input's
// shape fixed from one decode step to the next: after warm-up a step allocates nothing. Without
// it (graphs that concatenate past and new keys), the cache is two buffers per layer and kind
// used in turn, past viewed as [1, kv, P, h] and present bound as [1, kv, P + S, h]; that
// mode has a single row.
//
// Not thread-safe: one thread runs it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/core/value.h"
#include "sdk/genai/genai_config.h"

namespace xonnx {
class Session;
}

namespace xonnx::genai {

struct RunnerOptions {
  int32_t threads = 1;
  int32_t rows = 1;
  int32_t row_length = 0;  // 0: config.search.max_length; capped by context_length
  bool reference_kernels = false;
  // false: a run computes the logits of its last position only (the session narrows the graph's
  // head to that row: a prompt's first token comes sooner), and logits() is [batch, 1, vocab].
  // true: every position's, for scoring a text (perplexity).
  bool every_position_logits = false;
};

class ModelRunner {
 public:
  static Result<std::unique_ptr<ModelRunner>> create(const GenaiConfig& config, const RunnerOptions& options);
  ~ModelRunner();

  // Runs `count` tokens of row `row` whose first `past` positions are cached; afterwards
  // past + count are. logits() holds [1, count, vocab] (every_position_logits) or [1, 1, vocab].
  Status prefill(int32_t row, const int32_t* tokens, int32_t count, int32_t past);
  // One token for each of rows [0, batch): row b holds lengths[b] cached positions and gets
  // tokens[b] at position lengths[b]. logits() holds [batch, 1, vocab]. Shared-buffer mode
  // only. A row nobody decodes can take part with its own length (its position `length` is
  // written, nothing before it).
  Status decode(const int32_t* tokens, const int32_t* lengths, int32_t batch);

  // Logits of the last run: [batch, positions, vocab].
  const Tensor& logits() const;
  // The logits of batch row b, position s of logits().
  float* logits_row(int32_t b, int32_t s);
  // The logits of batch row b's last token of the last run.
  float* last_logits(int32_t b);
  int32_t vocab() const { return vocab_; }
  int32_t rows() const { return rows_; }
  int32_t row_length() const { return row_length_; }
  bool shares_buffer() const { return shared_; }
  int64_t kv_bytes() const;
  const GenaiConfig& config() const { return config_; }

  // Copies positions [0, count) of row `from` to row `to` (every layer; shared-buffer mode).
  void copy_row(int32_t from, int32_t to, int32_t count);

  // For an idle runner: keeps positions [0, keep[r]) of each row r (what the caller will
  // reuse) and returns the memory of the rest of the cache to the OS (it reads as zeros and
  // takes memory again when a run writes it), then trims the session (Session::trim_memory).
  // The cache is the OS's zero pages from the start, so only written positions ever take
  // memory. `keep` holds rows() lengths; in separate-buffer mode the one row keeps what it holds.
  void trim(const int32_t* keep);

 private:
  ModelRunner() = default;
  Status bind_cache(int32_t first_row, int32_t batch, int32_t past, int32_t count);
  Status fill_inputs(int32_t batch, int32_t sequence, const int32_t* tokens, const int32_t* lengths,
                     int32_t past_for_prefill);

  GenaiConfig config_;
  std::unique_ptr<Session> session_;
  bool shared_ = false;
  int32_t rows_ = 1, row_length_ = 0, vocab_ = 0;
  int64_t kv_heads_ = 0, head_size_ = 0;
  // Graph input indices (-1: absent) and dtypes of the id inputs.
  int input_ids_ = -1, attention_mask_ = -1, position_ids_ = -1;
  bool ids_int32_ = false, mask_int32_ = false, positions_int32_ = false;
  std::vector<int> past_inputs_;  // per layer: key, value
  std::vector<std::string> present_names_;
  int logits_output_ = -1;
  bool last_position_only_ = false;  // logits narrowed to each run's last position
  // Cache storages: per layer and kind (key, value); two sets without a shared buffer.
  std::vector<std::shared_ptr<Storage>> cache_[2];
  int current_ = 0;            // which set holds the past (non-shared mode)
  int32_t stored_length_ = 0;  // positions cached in that set (non-shared mode)
  // The rows bound now (first row, batch; shared mode), to rebind only on change.
  int64_t bound_key_[2] = {-1, -1};
  std::vector<Value> inputs_, outputs_;
};

}  // namespace xonnx::genai
