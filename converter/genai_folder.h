// `xonnx convert IN --genai OUT_DIR`: a TorchScript export of a Llama-style decoder step (opset
// 14-17, decomposed attention with past / present) becomes a folder in ONNX Runtime GenAI's
// layout: model.onnx + model.onnx.data in the builder's CPU form (SimplifiedLayerNormalization,
// SkipSimplifiedLayerNormalization, GroupQueryAttention with rotary inside and past / present in one
// buffer, MatMulNBits int4 block 32 accuracy_level 4), genai_config.json, and the tokenizer files.
// The fusions are converter passes (genai_only in pass_list.cc); this file runs the conversion,
// checks the result is a GenAI decoder, names its inputs and outputs as GenAI does, and writes the
// config and tokenizer files beside it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "converter/convert.h"

namespace xonnx {
namespace convert {

struct GenaiFolderRequest {
  std::string input_path;
  std::string out_dir;         // created when missing (its parent must exist); never IN's folder
  std::string tokenizer_dir;   // "": IN's folder
  int64_t context_length = 0;  // 0: IN's genai_config.json, else the rotary tables' rows
  QuantizeOptions quantize;    // the CLI sets int4, block 32, accuracy_level 4, symmetric
  ProgressFn progress;
  std::function<void(const std::string& stage)> stage;
};

struct GenaiLayer {
  std::string attention;  // the fused node's name
  std::string past_key, past_value, present_key, present_value;
  int64_t heads = 0, kv_heads = 0, head_size = 0;
  float scale = 0;
  bool rotary = false, interleaved = false;
  std::string projections;  // "packed QKV MatMul" / "Q, K, V MatMul"
  std::string input_norm;   // op computing the attention's input ("SimplifiedLayerNormalization")
  std::string output_norm;  // op reading the output projection ("SkipSimplifiedLayerNormalization")
};

struct GenaiSummary {
  std::vector<GenaiLayer> layers;
  std::string attention_op = "com.microsoft:GroupQueryAttention";
  int64_t hidden = 0, vocab = 0, context_length = 0;
  bool share_buffer = true;          // GroupQueryAttention: past and present in one max-length buffer
  std::vector<std::string> renamed;  // "input 'x' -> 'input_ids'"
  std::vector<std::string> notes;    // where a figure came from, what was capped
  std::vector<std::string> tokenizer_files;
  std::string config_path;
};

struct GenaiFolderResult {
  ConvertResult convert;
  GenaiSummary genai;
};

// Errors (IN unreadable, OUT_DIR not creatable or IN's folder, attention not fused: the error lists
// the failed checks) leave no model written.
Result<GenaiFolderResult> convert_genai_folder(const GenaiFolderRequest& request);

// After the passes: checks `model` is a fused decoder (every attention block fused, nothing else
// reading the KV inputs), renames its inputs / outputs to GenAI's (input_ids, attention_mask,
// past_key_values.N.key / .value -> logits, present.N.key / .value) in that order, and
// summarizes it. `context_length` 0 takes the rotary cache's rows.
Result<GenaiSummary> finish_genai_decoder(Model& model, const PipelineResult& pipeline, int64_t context_length);

// genai_config.json for the summary; bos / eos / pad from `special` ({"bos_token_id": ..,
// "eos_token_id": .., "pad_token_id": ..}, any may be missing).
std::string genai_config_json(const GenaiSummary& s, const std::string& special_json);

// The report section: per layer what was fused, the interface, the config's figures.
std::string genai_markdown(const GenaiSummary& s);

}  // namespace convert
}  // namespace xonnx
