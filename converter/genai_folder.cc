#include "converter/genai_folder.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "converter/report.h"

namespace xonnx {
namespace convert {
namespace {

using Json = nlohmann::ordered_json;

// Tokenizer files ORT GenAI (and transformers) read; tokenizer.json and tokenizer_config.json
// are the ones GenAI needs.
const char* const kTokenizerFiles[] = {
    "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json", "vocab.json",
    "merges.txt",     "tokenizer.model"};

std::string dir_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

bool is_dir(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool is_file(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// A JSON file's content; null when absent. A file that does not parse is an error.
Result<Json> read_json(const std::string& path) {
  if (!is_file(path)) return Json();
  std::ifstream in(path);
  Json j = Json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return invalid_argument("'", path, "' is not a JSON object");
  return j;
}

Status copy_file(const std::string& from, const std::string& to) {
  if (same_file(from, to)) return Status::ok();
  std::ifstream in(from, std::ios::binary);
  std::ofstream out(to, std::ios::binary | std::ios::trunc);
  out << in.rdbuf();
  if (!in || !out) return io_error("cannot copy '", from, "' to '", to, "'");
  return Status::ok();
}

// bos / eos / pad ids: from IN's genai_config.json, else its generation_config.json, else the
// tokenizer_config.json's token strings looked up in its added_tokens_decoder (eos plus <|im_end|>
// when that token exists, as tools/llm/make_genai_model.py does).
Result<Json> special_ids(const std::string& input_dir, const std::string& tokenizer_dir,
                         std::vector<std::string>* notes) {
  Json out = Json::object();
  XONNX_ASSIGN_OR_RETURN(Json genai, read_json(input_dir + "/genai_config.json"));
  if (genai.is_object() && genai.contains("model")) {
    for (const char* key : {"bos_token_id", "eos_token_id", "pad_token_id", "type"}) {
      if (genai["model"].contains(key)) out[key] = genai["model"][key];
    }
    notes->push_back("bos / eos / pad ids and the model type from " + input_dir + "/genai_config.json");
    return out;
  }
  XONNX_ASSIGN_OR_RETURN(Json gen, read_json(input_dir + "/generation_config.json"));
  if (gen.is_object()) {
    for (const char* key : {"bos_token_id", "eos_token_id", "pad_token_id"}) {
      if (gen.contains(key)) out[key] = gen[key];
    }
    notes->push_back("bos / eos / pad ids from " + input_dir + "/generation_config.json");
    return out;
  }
  XONNX_ASSIGN_OR_RETURN(Json tok, read_json(tokenizer_dir + "/tokenizer_config.json"));
  if (!tok.is_object()) return out;
  std::map<std::string, int64_t> by_content;
  if (tok.contains("added_tokens_decoder") && tok["added_tokens_decoder"].is_object()) {
    for (const auto& [id, entry] : tok["added_tokens_decoder"].items()) {
      if (entry.is_object() && entry.contains("content") && entry["content"].is_string()) {
        by_content[entry["content"].get<std::string>()] = std::stoll(id);
      }
    }
  }
  auto token_id = [&](const char* key) -> Json {
    if (!tok.contains(key)) return Json();
    const Json& t = tok[key];
    const std::string content = t.is_string()
                                    ? t.get<std::string>()
                                    : (t.is_object() && t.contains("content") ? t["content"].get<std::string>() : "");
    auto it = by_content.find(content);
    return it == by_content.end() ? Json() : Json(it->second);
  };
  out["bos_token_id"] = token_id("bos_token");
  Json eos = token_id("eos_token");
  if (by_content.count("<|im_end|>") && !eos.is_null() && eos.get<int64_t>() != by_content["<|im_end|>"]) {
    eos = Json::array({eos, by_content["<|im_end|>"]});
  }
  out["eos_token_id"] = eos;
  Json pad = token_id("pad_token");
  out["pad_token_id"] = pad.is_null() ? (eos.is_array() ? eos[0] : eos) : pad;
  notes->push_back("bos / eos / pad ids from " + tokenizer_dir + "/tokenizer_config.json");
  return out;
}

}  // namespace

std::string genai_config_json(const GenaiSummary& s, const std::string& special_json) {
  Json special = Json::parse(special_json, nullptr, false);
  if (!special.is_object()) special = Json::object();
  const GenaiLayer first = s.layers.empty() ? GenaiLayer() : s.layers[0];
  Json inputs = {{"input_ids", "input_ids"},
                 {"attention_mask", "attention_mask"},
                 {"past_key_names", "past_key_values.%d.key"},
                 {"past_value_names", "past_key_values.%d.value"}};
  Json outputs = {
      {"logits", "logits"}, {"present_key_names", "present.%d.key"}, {"present_value_names", "present.%d.value"}};
  Json decoder = {{"session_options", {{"log_id", "onnxruntime-genai"}, {"provider_options", Json::array()}}},
                  {"filename", "model.onnx"},
                  {"head_size", first.head_size},
                  {"hidden_size", s.hidden},
                  {"inputs", inputs},
                  {"outputs", outputs},
                  {"num_attention_heads", first.heads},
                  {"num_hidden_layers", static_cast<int64_t>(s.layers.size())},
                  {"num_key_value_heads", first.kv_heads}};
  auto get = [&special](const char* key) { return special.contains(key) ? special[key] : Json(); };
  Json model = {{"bos_token_id", get("bos_token_id")},
                {"context_length", s.context_length},
                {"decoder", decoder},
                {"eos_token_id", get("eos_token_id")},
                {"pad_token_id", get("pad_token_id")},
                {"type", special.contains("type") ? special["type"] : Json("llama")},
                {"vocab_size", s.vocab}};
  Json search = {{"diversity_penalty", 0.0},
                 {"do_sample", false},
                 {"early_stopping", true},
                 {"length_penalty", 1.0},
                 {"max_length", s.context_length},
                 {"min_length", 0},
                 {"no_repeat_ngram_size", 0},
                 {"num_beams", 1},
                 {"num_return_sequences", 1},
                 {"past_present_share_buffer", s.share_buffer},
                 {"repetition_penalty", 1.0},
                 {"temperature", 1.0},
                 {"top_k", 50},
                 {"top_p", 1.0}};
  Json config = {{"model", model}, {"search", search}};
  return config.dump(4) + "\n";
}

std::string genai_markdown(const GenaiSummary& s) {
  std::ostringstream os;
  os << "## GenAI decoder\n\n";
  os << "| | |\n|---|---|\n";
  os << "| attention | " << s.attention_op << " ("
     << (s.share_buffer ? "past and present share one max-length buffer" : "present = past + new") << ") |\n";
  os << "| layers | " << s.layers.size() << " |\n";
  os << "| hidden / vocab / context | " << s.hidden << " / " << s.vocab << " / " << s.context_length << " |\n";
  if (!s.config_path.empty()) os << "| config | `" << s.config_path << "` |\n";
  os << "| tokenizer | " << (s.tokenizer_files.empty() ? std::string("**none copied**") : "");
  for (size_t i = 0; i < s.tokenizer_files.size(); ++i) os << (i ? ", " : "") << "`" << s.tokenizer_files[i] << "`";
  os << " |\n\n";
  os << "| layer | attention | heads / KV / size | scale | rotary | projections | input norm | after output projection |\n"
        "|---:|---|---|---:|---|---|---|---|\n";
  for (size_t i = 0; i < s.layers.size(); ++i) {
    const GenaiLayer& l = s.layers[i];
    char scale[32];
    std::snprintf(scale, sizeof(scale), "%.6g", l.scale);
    os << "| " << i << " | `" << l.attention << "` | " << l.heads << " / " << l.kv_heads << " / " << l.head_size
       << " | " << scale << " | "
       << (l.rotary ? (l.interleaved ? "inside, interleaved" : "inside, rotate-half") : "none") << " | "
       << (l.projections.empty() ? "-" : l.projections) << " | " << (l.input_norm.empty() ? "-" : l.input_norm) << " | "
       << (l.output_norm.empty() ? "-" : l.output_norm) << " |\n";
  }
  os << "\n";
  if (!s.renamed.empty()) {
    os << "Interface renamed to GenAI's names:\n\n";
    for (const std::string& r : s.renamed) os << "- " << r << "\n";
    os << "\n";
  }
  for (const std::string& n : s.notes) os << "- " << n << "\n";
  if (!s.notes.empty()) os << "\n";
  return os.str();
}

namespace {

Result<GenaiFolderResult> write_folder(const GenaiFolderRequest& request, const std::string& input_dir,
                                       const std::string& tokenizer_dir) {
  GenaiFolderResult result;
  GenaiSummary& summary = result.genai;
  int64_t context_length = request.context_length;
  if (context_length <= 0) {
    XONNX_ASSIGN_OR_RETURN(Json in_config, read_json(input_dir + "/genai_config.json"));
    if (in_config.is_object() && in_config.contains("model") && in_config["model"].contains("context_length") &&
        in_config["model"]["context_length"].is_number_integer()) {
      context_length = in_config["model"]["context_length"].get<int64_t>();
      summary.notes.push_back("context length " + std::to_string(context_length) + " from " + input_dir +
                              "/genai_config.json");
    }
  }

  ConvertRequest req;
  req.input_path = request.input_path;
  req.output_path = request.out_dir + "/model.onnx";
  req.options.genai.enabled = true;
  req.options.genai.context_length = context_length;
  req.options.external_data = true;
  req.quantize = request.quantize;
  req.progress = request.progress;
  req.stage = request.stage;
  req.after_passes = [&](Model& model, const PipelineResult& pipeline) -> Status {
    std::vector<std::string> notes = summary.notes;
    XONNX_ASSIGN_OR_RETURN(summary, finish_genai_decoder(model, pipeline, context_length));
    summary.notes.insert(summary.notes.begin(), notes.begin(), notes.end());
    return Status::ok();
  };
  XONNX_ASSIGN_OR_RETURN(result.convert, convert_file(req));

  if (request.stage) request.stage("writing genai_config.json and the tokenizer files");
  XONNX_ASSIGN_OR_RETURN(Json special, special_ids(input_dir, tokenizer_dir, &summary.notes));
  summary.config_path = request.out_dir + "/genai_config.json";
  {
    std::ofstream out(summary.config_path, std::ios::trunc);
    out << genai_config_json(summary, special.dump());
    if (!out) return io_error("cannot write '", summary.config_path, "'");
  }
  for (const char* name : kTokenizerFiles) {
    const std::string from = tokenizer_dir + "/" + name;
    if (!is_file(from)) continue;
    XONNX_RETURN_IF_ERROR(copy_file(from, request.out_dir + "/" + name));
    summary.tokenizer_files.push_back(name);
  }
  if (!is_file(request.out_dir + "/tokenizer.json") || !is_file(request.out_dir + "/tokenizer_config.json")) {
    summary.notes.push_back("no tokenizer.json / tokenizer_config.json in '" + tokenizer_dir +
                            "': the folder needs them before GenAI can run it (--tokenizer DIR)");
  }
  return result;
}

}  // namespace

Result<GenaiFolderResult> convert_genai_folder(const GenaiFolderRequest& request) {
  const std::string input_dir = dir_of(request.input_path);
  const std::string tokenizer_dir = request.tokenizer_dir.empty() ? input_dir : request.tokenizer_dir;
  if (!request.tokenizer_dir.empty() && !is_dir(request.tokenizer_dir)) {
    return not_found("the tokenizer folder '", request.tokenizer_dir, "' does not exist");
  }
  const bool created = !is_dir(request.out_dir);
  if (created && ::mkdir(request.out_dir.c_str(), 0755) != 0) {
    return io_error("cannot create the output folder '", request.out_dir, "'");
  }
  if (same_file(request.out_dir, input_dir)) {
    return invalid_argument("the output folder '", request.out_dir,
                            "' is the input's folder (its genai_config.json and tokenizer would be overwritten)");
  }
  auto result = write_folder(request, input_dir, tokenizer_dir);
  // A failed conversion leaves no folder it made (convert_file writes no model on error).
  if (!result.is_ok() && created) ::rmdir(request.out_dir.c_str());
  return result;
}

}  // namespace convert
}  // namespace xonnx
