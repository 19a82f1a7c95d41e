// genai_config.json: the model folder description ONNX Runtime GenAI reads (and its model
// builder writes), parsed as GenAI does for decoder-only models. Field names, defaults and
// name templates are GenAI's (src/config.h); docs/genai.md lists what is honoured.
//
// Unknown fields are ignored (newer builders add fields; GenAI itself rejects them), fields of
// the wrong type or out of range are errors naming the field ("genai_config.json:
// model.decoder.num_key_value_heads: ..."), and configurations this runtime cannot run
// (encoder-decoder or vision models, combined past_names, beam search) fail with the field named.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/status.h"

namespace xonnx::genai {

struct DecoderConfig {
  std::string filename = "model.onnx";
  int32_t hidden_size = 0;
  int32_t num_attention_heads = 0;
  int32_t num_key_value_heads = 0;  // defaults to num_attention_heads
  int32_t num_hidden_layers = 0;
  int32_t head_size = 0;             // defaults to hidden_size / num_attention_heads
  int32_t intra_op_num_threads = 0;  // session_options.intra_op_num_threads; 0 = not set

  // Graph input and output names; "%d" in the KV names stands for the layer index.
  struct Inputs {
    std::string input_ids = "input_ids";
    std::string attention_mask = "attention_mask";
    std::string position_ids = "position_ids";
    std::string past_key_names = "past_key_values.%d.key";
    std::string past_value_names = "past_key_values.%d.value";
  } inputs;
  struct Outputs {
    std::string logits = "logits";
    std::string present_key_names = "present.%d.key";
    std::string present_value_names = "present.%d.value";
  } outputs;
};

struct SearchConfig {
  int32_t max_length = 0;  // 0 or absent: model.context_length (as GenAI does on load)
  int32_t min_length = 0;
  bool do_sample = false;
  float temperature = 1.0f;
  int32_t top_k = 0;   // 0: no top-k
  float top_p = 0.0f;  // 0 or >= 1: no top-p
  float repetition_penalty = 1.0f;
  bool past_present_share_buffer = false;
  int32_t num_beams = 1;
  int32_t num_return_sequences = 1;
  int64_t random_seed = -1;  // -1: seeded from the OS
};

struct GenaiConfig {
  std::string dir;   // the model folder ("" when parsed from text)
  std::string type;  // model.type ("llama", "qwen2", "phi3", ...)
  int32_t context_length = 0;
  int32_t vocab_size = 0;
  int32_t bos_token_id = -1;
  std::vector<int32_t> eos_token_ids;  // eos_token_id: one id or a list
  int32_t pad_token_id = -1;
  DecoderConfig decoder;
  SearchConfig search;

  // "%d" of a name template replaced by the layer index.
  static std::string layer_name(const std::string& name_template, int32_t layer);
  // The decoder's model file inside dir.
  std::string model_path() const;
};

// Reads DIR/genai_config.json.
Result<GenaiConfig> load_genai_config(const std::string& dir);
// From the file's text; `source` names it in errors.
Result<GenaiConfig> parse_genai_config(std::string_view json, const std::string& source = "genai_config.json");

}  // namespace xonnx::genai
