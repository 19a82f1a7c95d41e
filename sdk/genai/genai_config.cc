#include "sdk/genai/genai_config.h"

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include "sdk/genai/tokenizer_json.h"

namespace xonnx::genai {
namespace {

const Json* field(const Json& obj, std::string_view key) {
  auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

// GenAI reads every number as a double: 2048, 2048.0 and 1e3 are all integers to it; a
// fractional value is not an integer here.
Status read_int(const Json& obj, std::string_view key, const JsonPath& at, int32_t& out, int64_t lo = 0,
                int64_t hi = std::numeric_limits<int32_t>::max()) {
  const Json* v = field(obj, key);
  if (!v) return Status::ok();
  if (!v->is_number()) return (at / key).error("expected a number, found ", v->type_name());
  const double d = v->get<double>();
  if (!std::isfinite(d) || d != std::floor(d)) return (at / key).error("expected an integer, found ", v->dump());
  if (d < static_cast<double>(lo) || d > static_cast<double>(hi)) {
    return (at / key).error(v->dump(), " is outside [", lo, ", ", hi, "]");
  }
  out = static_cast<int32_t>(d);
  return Status::ok();
}

Status read_int64(const Json& obj, std::string_view key, const JsonPath& at, int64_t& out) {
  const Json* v = field(obj, key);
  if (!v) return Status::ok();
  if (!v->is_number()) return (at / key).error("expected a number, found ", v->type_name());
  const double d = v->get<double>();
  if (v->is_number_integer()) {
    out = v->get<int64_t>();
  } else if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e18) {
    out = static_cast<int64_t>(d);
  } else {
    return (at / key).error("expected an integer, found ", v->dump());
  }
  return Status::ok();
}

Status read_float(const Json& obj, std::string_view key, const JsonPath& at, float& out) {
  const Json* v = field(obj, key);
  if (!v) return Status::ok();
  if (!v->is_number()) return (at / key).error("expected a number, found ", v->type_name());
  const double d = v->get<double>();
  if (!std::isfinite(d)) return (at / key).error("expected a finite number, found ", v->dump());
  out = static_cast<float>(d);
  return Status::ok();
}

// A name template must hold exactly one "%d" (the layer index) and no other conversion.
Status check_template(const std::string& name, const JsonPath& at) {
  size_t count = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    if (name[i] != '%') continue;
    if (i + 1 < name.size() && name[i + 1] == 'd') {
      ++count;
      ++i;
    } else {
      return at.error("'", name, "' may hold no '%' other than the layer index %d");
    }
  }
  if (count != 1) return at.error("'", name, "' must hold the layer index %d exactly once");
  return Status::ok();
}

Status read_decoder(const Json& d, const JsonPath& at, DecoderConfig& out) {
  XONNX_RETURN_IF_ERROR(get_string(d, "filename", at, out.filename));
  if (out.filename.empty()) return (at / "filename").error("must name the model file");
  XONNX_RETURN_IF_ERROR(read_int(d, "hidden_size", at, out.hidden_size));
  XONNX_RETURN_IF_ERROR(read_int(d, "num_attention_heads", at, out.num_attention_heads));
  XONNX_RETURN_IF_ERROR(read_int(d, "num_key_value_heads", at, out.num_key_value_heads));
  XONNX_RETURN_IF_ERROR(read_int(d, "num_hidden_layers", at, out.num_hidden_layers));
  XONNX_RETURN_IF_ERROR(read_int(d, "head_size", at, out.head_size));
  if (out.num_hidden_layers <= 0) return (at / "num_hidden_layers").error("must be a positive layer count");
  if (out.num_key_value_heads == 0) out.num_key_value_heads = out.num_attention_heads;
  if (out.num_key_value_heads <= 0)
    return (at / "num_key_value_heads").error("must be positive (or num_attention_heads)");
  if (out.head_size == 0 && out.num_attention_heads > 0) out.head_size = out.hidden_size / out.num_attention_heads;
  if (out.head_size <= 0) return (at / "head_size").error("must be positive (or hidden_size / num_attention_heads)");
  if (const Json* so = field(d, "session_options")) {
    if (!so->is_object()) return (at / "session_options").error("expected an object, found ", so->type_name());
    XONNX_RETURN_IF_ERROR(read_int(*so, "intra_op_num_threads", at / "session_options", out.intra_op_num_threads));
  }
  if (const Json* in = field(d, "inputs")) {
    const JsonPath p = at / "inputs";
    if (!in->is_object()) return p.error("expected an object, found ", in->type_name());
    if (field(*in, "past_names")) return (p / "past_names").error("combined key/value caches are not supported");
    if (field(*in, "inputs_embeds")) return (p / "inputs_embeds").error("embedding inputs are not supported");
    XONNX_RETURN_IF_ERROR(get_string(*in, "input_ids", p, out.inputs.input_ids));
    XONNX_RETURN_IF_ERROR(get_string(*in, "attention_mask", p, out.inputs.attention_mask));
    XONNX_RETURN_IF_ERROR(get_string(*in, "position_ids", p, out.inputs.position_ids));
    XONNX_RETURN_IF_ERROR(get_string(*in, "past_key_names", p, out.inputs.past_key_names));
    XONNX_RETURN_IF_ERROR(get_string(*in, "past_value_names", p, out.inputs.past_value_names));
    XONNX_RETURN_IF_ERROR(check_template(out.inputs.past_key_names, p / "past_key_names"));
    XONNX_RETURN_IF_ERROR(check_template(out.inputs.past_value_names, p / "past_value_names"));
  }
  if (const Json* o = field(d, "outputs")) {
    const JsonPath p = at / "outputs";
    if (!o->is_object()) return p.error("expected an object, found ", o->type_name());
    if (field(*o, "present_names")) return (p / "present_names").error("combined key/value caches are not supported");
    XONNX_RETURN_IF_ERROR(get_string(*o, "logits", p, out.outputs.logits));
    XONNX_RETURN_IF_ERROR(get_string(*o, "present_key_names", p, out.outputs.present_key_names));
    XONNX_RETURN_IF_ERROR(get_string(*o, "present_value_names", p, out.outputs.present_value_names));
    XONNX_RETURN_IF_ERROR(check_template(out.outputs.present_key_names, p / "present_key_names"));
    XONNX_RETURN_IF_ERROR(check_template(out.outputs.present_value_names, p / "present_value_names"));
  }
  if (field(d, "pipeline")) return (at / "pipeline").error("pipelines of several models are not supported");
  if (field(d, "sliding_window"))
    return (at / "sliding_window").error("sliding-window prompt processing is not supported");
  return Status::ok();
}

Status read_search(const Json& s, const JsonPath& at, SearchConfig& out) {
  XONNX_RETURN_IF_ERROR(read_int(s, "max_length", at, out.max_length));
  XONNX_RETURN_IF_ERROR(read_int(s, "min_length", at, out.min_length));
  XONNX_RETURN_IF_ERROR(get_bool(s, "do_sample", at, out.do_sample));
  XONNX_RETURN_IF_ERROR(read_float(s, "temperature", at, out.temperature));
  XONNX_RETURN_IF_ERROR(read_int(s, "top_k", at, out.top_k));
  XONNX_RETURN_IF_ERROR(read_float(s, "top_p", at, out.top_p));
  XONNX_RETURN_IF_ERROR(read_float(s, "repetition_penalty", at, out.repetition_penalty));
  XONNX_RETURN_IF_ERROR(get_bool(s, "past_present_share_buffer", at, out.past_present_share_buffer));
  XONNX_RETURN_IF_ERROR(read_int(s, "num_beams", at, out.num_beams, 1));
  XONNX_RETURN_IF_ERROR(read_int(s, "num_return_sequences", at, out.num_return_sequences, 1));
  XONNX_RETURN_IF_ERROR(read_int64(s, "random_seed", at, out.random_seed));
  if (out.temperature < 0) return (at / "temperature").error("must be >= 0, got ", out.temperature);
  if (out.top_p < 0 || out.top_p > 1) return (at / "top_p").error("must be in [0, 1], got ", out.top_p);
  if (out.repetition_penalty <= 0)
    return (at / "repetition_penalty").error("must be > 0, got ", out.repetition_penalty);
  if (out.num_beams != 1) return (at / "num_beams").error("beam search is not supported (", out.num_beams, " beams)");
  if (out.num_return_sequences != 1) {
    return (at / "num_return_sequences").error("one sequence per prompt is supported, got ", out.num_return_sequences);
  }
  return Status::ok();
}

Status read_eos(const Json& model, const JsonPath& at, std::vector<int32_t>& out) {
  const Json* v = field(model, "eos_token_id");
  if (!v) return Status::ok();
  if (v->is_array()) {
    for (size_t i = 0; i < v->size(); ++i) {
      const Json& e = (*v)[i];
      const double d = e.is_number() ? e.get<double>() : -1.0;
      if (!e.is_number() || d != std::floor(d) || d < 0 || d > std::numeric_limits<int32_t>::max()) {
        return (at / "eos_token_id")[i].error("expected a token id, found ", e.dump());
      }
      out.push_back(static_cast<int32_t>(d));
    }
    return Status::ok();
  }
  int32_t id = -1;
  XONNX_RETURN_IF_ERROR(read_int(model, "eos_token_id", at, id));
  out.push_back(id);
  return Status::ok();
}

}  // namespace

std::string GenaiConfig::layer_name(const std::string& name_template, int32_t layer) {
  const size_t at = name_template.find("%d");
  if (at == std::string::npos) return name_template;
  return name_template.substr(0, at) + std::to_string(layer) + name_template.substr(at + 2);
}

std::string GenaiConfig::model_path() const { return dir.empty() ? decoder.filename : dir + "/" + decoder.filename; }

Result<GenaiConfig> parse_genai_config(std::string_view text, const std::string& source) {
  XONNX_ASSIGN_OR_RETURN(Json root, parse_json(text, source));
  const JsonPath top{source, ""};
  if (!root.is_object()) return top.error("expected an object, found ", root.type_name());
  XONNX_ASSIGN_OR_RETURN(const Json* model, get_object(root, "model", top));
  const JsonPath at = top / "model";
  GenaiConfig c;
  XONNX_RETURN_IF_ERROR(get_string(*model, "type", at, c.type));
  if (c.type.empty()) return (at / "type").error("missing");
  if (c.type == "whisper" || c.type == "marian-ssru" || c.type == "decoder-pipeline") {
    return (at / "type").error("'", c.type, "' models are not supported (decoder-only language models are)");
  }
  for (const char* part : {"encoder", "encoder_decoder_init", "vision", "speech", "embedding"}) {
    if (const Json* sub = field(*model, part); sub && sub->is_object() && field(*sub, "filename")) {
      return (at / part).error("multi-model folders (", part, ") are not supported");
    }
  }
  XONNX_RETURN_IF_ERROR(read_int(*model, "context_length", at, c.context_length));
  XONNX_RETURN_IF_ERROR(read_int(*model, "vocab_size", at, c.vocab_size));
  XONNX_RETURN_IF_ERROR(read_int(*model, "bos_token_id", at, c.bos_token_id, -1));
  XONNX_RETURN_IF_ERROR(read_int(*model, "pad_token_id", at, c.pad_token_id, -1));
  XONNX_RETURN_IF_ERROR(read_eos(*model, at, c.eos_token_ids));
  if (c.context_length <= 0) return (at / "context_length").error("must be a positive token count");
  XONNX_ASSIGN_OR_RETURN(const Json* decoder, get_object(*model, "decoder", at));
  XONNX_RETURN_IF_ERROR(read_decoder(*decoder, at / "decoder", c.decoder));
  if (const Json* search = field(root, "search")) {
    if (!search->is_object()) return (top / "search").error("expected an object, found ", search->type_name());
    XONNX_RETURN_IF_ERROR(read_search(*search, top / "search", c.search));
  }
  if (c.search.max_length == 0) c.search.max_length = c.context_length;
  return c;
}

Result<GenaiConfig> load_genai_config(const std::string& dir) {
  const std::string path = dir + "/genai_config.json";
  std::ifstream f(path, std::ios::binary);
  if (!f) return not_found(path, ": cannot open (a GenAI model folder holds genai_config.json)");
  std::ostringstream text;
  text << f.rdbuf();
  XONNX_ASSIGN_OR_RETURN(GenaiConfig c, parse_genai_config(text.str(), path));
  c.dir = dir;
  return c;
}

}  // namespace xonnx::genai
