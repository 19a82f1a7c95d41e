// Tokenizer::load: tokenizer.json (model, added tokens, normalizer, pre-tokenizer,
// post-processor, decoder) and tokenizer_config.json (special tokens, add_bos_token, chat
// templates).
#include <fstream>
#include <sstream>
#include <sys/stat.h>

#include "sdk/genai/normalizer.h"
#include "sdk/genai/pre_tokenizer.h"
#include "sdk/genai/tokenizer.h"
#include "sdk/genai/tokenizer_bpe.h"
#include "sdk/genai/tokenizer_decoder.h"

namespace xonnx::genai {

namespace {

Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found("cannot open ", path);
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) return io_error("cannot read ", path);
  return buf.str();
}

bool is_directory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool file_exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// A special token in tokenizer_config.json: "<s>" or {"content": "<s>", ...}.
Status read_token_field(const Json& config, const char* key, const JsonPath& at, std::string& out) {
  if (!config.contains(key) || config[key].is_null()) return Status::ok();
  const Json& v = config[key];
  if (v.is_string()) {
    out = v.get<std::string>();
    return Status::ok();
  }
  if (v.is_object()) return get_string(v, "content", at / key, out);
  return (at / key).error("expected a string or an object with \"content\"");
}

// Python transformers' Llama / Gemma tokenizer classes rebuild the post-processor from
// add_bos_token (default true) and add_eos_token (default false), whatever tokenizer.json says.
bool rebuilds_post_processor(const std::string& tokenizer_class) {
  static const char* const kClasses[] = {"LlamaTokenizer",         "LlamaTokenizerFast", "CodeLlamaTokenizer",
                                         "CodeLlamaTokenizerFast", "GemmaTokenizer",     "GemmaTokenizerFast"};
  for (const char* c : kClasses) {
    if (tokenizer_class == c) return true;
  }
  return false;
}

}  // namespace

class TokenizerLoader {
 public:
  static Result<TokenizerConfig> config_only(std::string_view text, const std::string& source) {
    return parse_config(text, source);
  }

  static Result<std::unique_ptr<Tokenizer>> load(std::string_view json_text, std::string_view config_text,
                                                 const std::string& source, const std::string& config_source) {
    std::unique_ptr<Tokenizer> t(new Tokenizer());
    XONNX_ASSIGN_OR_RETURN(Json j, parse_json(json_text, source));
    const JsonPath root{source, ""};
    if (!j.is_object()) return root.error("expected a JSON object");
    XONNX_RETURN_IF_ERROR(load_model(*t, j, root));
    XONNX_RETURN_IF_ERROR(load_added_tokens(*t, j, root));
    auto component = [&](const char* key) -> const Json* {
      auto it = j.find(key);
      return it == j.end() || it->is_null() ? nullptr : &*it;
    };
    if (const Json* n = component("normalizer")) {
      XONNX_ASSIGN_OR_RETURN(t->normalizer_, make_normalizer(*n, root / "normalizer"));
    }
    if (const Json* p = component("pre_tokenizer")) {
      XONNX_ASSIGN_OR_RETURN(t->pre_tokenizer_, make_pre_tokenizer(*p, root / "pre_tokenizer"));
    }
    if (const Json* d = component("decoder")) {
      XONNX_ASSIGN_OR_RETURN(t->decoder_, make_decoder(*d, root / "decoder"));
    }
    if (const Json* p = component("post_processor")) {
      XONNX_RETURN_IF_ERROR(load_post_processor(*t, *p, root / "post_processor", t->prefix_, t->suffix_));
    }
    if (!config_text.empty()) XONNX_RETURN_IF_ERROR(load_config(*t, config_text, config_source));
    return t;
  }

 private:
  static Status load_model(Tokenizer& t, const Json& j, const JsonPath& root) {
    XONNX_ASSIGN_OR_RETURN(const Json* model, get_object(j, "model", root));
    const JsonPath at = root / "model";
    std::string type;
    XONNX_RETURN_IF_ERROR(get_string(*model, "type", at, type));
    if (type.empty() && model->contains("merges")) type = "BPE";  // older files omit the type
    if (type != "BPE") {
      return (at / "type")
          .error("unsupported model \"", type,
                 "\" (xonnx reads BPE models: byte-level BPE and "
                 "SentencePiece-style BPE with byte fallback)");
    }
    XONNX_ASSIGN_OR_RETURN(t.model_, BpeModel::load(*model, at));
    t.vocab_size_ = t.model_->id_limit();
    return Status::ok();
  }

  static Status load_added_tokens(Tokenizer& t, const Json& j, const JsonPath& root) {
    if (j.contains("added_tokens") && !j["added_tokens"].is_null()) {
      XONNX_ASSIGN_OR_RETURN(const Json* list, get_array(j, "added_tokens", root));
      for (size_t i = 0; i < list->size(); ++i) {
        const Json& e = (*list)[i];
        const JsonPath at = (root / "added_tokens")[i];
        if (!e.is_object()) return at.error("expected an object");
        AddedToken a;
        int64_t id = -1;
        XONNX_RETURN_IF_ERROR(get_int(e, "id", at, id));
        // As the model's ids (tokenizer_bpe.cc): tables are indexed by id.
        const int64_t id_bound = t.vocab_size_ + int64_t{4} * static_cast<int64_t>(list->size()) + 65536;
        if (id < 0 || id >= id_bound) {
          return (at / "id").error("expected an id in [0, ", id_bound, ") (the model's ", t.vocab_size_,
                                   " ids + 4 x the added tokens + 65536)");
        }
        a.id = static_cast<int32_t>(id);
        XONNX_RETURN_IF_ERROR(get_string(e, "content", at, a.content));
        if (a.content.empty()) return (at / "content").error("missing or empty");
        XONNX_RETURN_IF_ERROR(get_bool(e, "special", at, a.special));
        XONNX_RETURN_IF_ERROR(get_bool(e, "lstrip", at, a.lstrip));
        XONNX_RETURN_IF_ERROR(get_bool(e, "rstrip", at, a.rstrip));
        XONNX_RETURN_IF_ERROR(get_bool(e, "single_word", at, a.single_word));
        a.normalized = !a.special;  // HF's default when the field is absent
        XONNX_RETURN_IF_ERROR(get_bool(e, "normalized", at, a.normalized));
        t.added_tokens_.push_back(std::move(a));
      }
    }
    for (const AddedToken& a : t.added_tokens_) t.vocab_size_ = std::max(t.vocab_size_, a.id + 1);
    t.added_by_id_.assign(static_cast<size_t>(t.vocab_size_), nullptr);
    for (const AddedToken& a : t.added_tokens_) {
      t.added_by_id_[static_cast<size_t>(a.id)] = &a;
      t.added_ids_.emplace(a.content, a.id);
      (a.normalized ? t.normalized_added_ : t.raw_added_).add(a);
    }
    return Status::ok();
  }

  static Result<int32_t> special_token_id(const Tokenizer& t, const std::string& token, const JsonPath& at) {
    auto id = t.token_to_id(token);
    if (!id) return at.error("token \"", token, "\" is not in the vocabulary");
    return *id;
  }

  // Appends the post-processor's ids before and after the sequence of one input.
  static Status load_post_processor(const Tokenizer& t, const Json& p, const JsonPath& at, std::vector<int32_t>& prefix,
                                    std::vector<int32_t>& suffix) {
    XONNX_ASSIGN_OR_RETURN(std::string type, component_type(p, at));
    if (type == "ByteLevel") return Status::ok();  // it only adjusts offsets
    if (type == "Sequence") {
      XONNX_ASSIGN_OR_RETURN(const Json* parts, get_array(p, "processors", at));
      for (size_t i = 0; i < parts->size(); ++i) {
        std::vector<int32_t> pre, post;
        XONNX_RETURN_IF_ERROR(load_post_processor(t, (*parts)[i], (at / "processors")[i], pre, post));
        prefix.insert(prefix.begin(), pre.begin(), pre.end());
        suffix.insert(suffix.end(), post.begin(), post.end());
      }
      return Status::ok();
    }
    if (type == "TemplateProcessing") {
      XONNX_ASSIGN_OR_RETURN(const Json* single, get_array(p, "single", at));
      const Json* specials =
          p.contains("special_tokens") && p["special_tokens"].is_object() ? &p["special_tokens"] : nullptr;
      bool seen_sequence = false;
      for (size_t i = 0; i < single->size(); ++i) {
        const Json& item = (*single)[i];
        const JsonPath where = (at / "single")[i];
        if (item.is_object() && item.contains("Sequence")) {
          if (seen_sequence) return where.error("the single template names the sequence twice");
          seen_sequence = true;
          continue;
        }
        if (!item.is_object() || !item.contains("SpecialToken") || !item["SpecialToken"].is_object()) {
          return where.error("expected {\"SpecialToken\": ...} or {\"Sequence\": ...}");
        }
        std::string name;
        XONNX_RETURN_IF_ERROR(get_string(item["SpecialToken"], "id", where / "SpecialToken", name));
        std::vector<int32_t>& out = seen_sequence ? suffix : prefix;
        const Json* entry = specials && specials->contains(name) ? &(*specials)[name] : nullptr;
        if (entry && entry->is_object() && entry->contains("ids") && (*entry)["ids"].is_array()) {
          for (const Json& id : (*entry)["ids"]) {
            if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= t.vocab_size_) {
              return (at / "special_tokens" / name).error("ids must be token ids of the vocabulary");
            }
            out.push_back(static_cast<int32_t>(id.get<int64_t>()));
          }
        } else {
          XONNX_ASSIGN_OR_RETURN(int32_t id, special_token_id(t, name, where));
          out.push_back(id);
        }
      }
      if (!seen_sequence) return (at / "single").error("the template does not place the sequence ($A)");
      return Status::ok();
    }
    if (type == "BertProcessing" || type == "RobertaProcessing") {
      for (const char* key : {"cls", "sep"}) {
        const JsonPath where = at / key;
        if (!p.contains(key) || !p[key].is_array() || p[key].size() != 2 || !p[key][1].is_number_integer()) {
          return where.error("expected [\"token\", id]");
        }
        const int64_t id = p[key][1].get<int64_t>();
        if (id < 0 || id >= t.vocab_size_) return where.error("id ", id, " is outside the vocabulary");
        (std::string(key) == "cls" ? prefix : suffix).push_back(static_cast<int32_t>(id));
      }
      return Status::ok();
    }
    return (at / "type")
        .error("unsupported post_processor \"", type,
               "\" (supported: TemplateProcessing, ByteLevel, BertProcessing, RobertaProcessing, Sequence)");
  }

  static Result<TokenizerConfig> parse_config(std::string_view text, const std::string& source) {
    XONNX_ASSIGN_OR_RETURN(Json c, parse_json(text, source));
    const JsonPath at{source, ""};
    if (!c.is_object()) return at.error("expected a JSON object");
    TokenizerConfig cfg;
    XONNX_RETURN_IF_ERROR(read_token_field(c, "bos_token", at, cfg.bos_token));
    XONNX_RETURN_IF_ERROR(read_token_field(c, "eos_token", at, cfg.eos_token));
    XONNX_RETURN_IF_ERROR(read_token_field(c, "unk_token", at, cfg.unk_token));
    XONNX_RETURN_IF_ERROR(read_token_field(c, "pad_token", at, cfg.pad_token));
    XONNX_RETURN_IF_ERROR(get_string(c, "tokenizer_class", at, cfg.tokenizer_class));
    XONNX_RETURN_IF_ERROR(get_bool(c, "clean_up_tokenization_spaces", at, cfg.clean_up_tokenization_spaces));
    for (const char* key : {"add_bos_token", "add_eos_token"}) {
      bool value = false;
      if (!c.contains(key) || c[key].is_null()) continue;
      XONNX_RETURN_IF_ERROR(get_bool(c, key, at, value));
      (std::string(key) == "add_bos_token" ? cfg.add_bos_token : cfg.add_eos_token) = value;
    }
    if (c.contains("chat_template") && !c["chat_template"].is_null()) {
      const Json& ct = c["chat_template"];
      if (ct.is_string()) {
        cfg.chat_templates.emplace_back("default", ct.get<std::string>());
      } else if (ct.is_array()) {
        for (size_t i = 0; i < ct.size(); ++i) {
          const JsonPath where = (at / "chat_template")[i];
          std::string name, body;
          XONNX_RETURN_IF_ERROR(get_string(ct[i], "name", where, name));
          XONNX_RETURN_IF_ERROR(get_string(ct[i], "template", where, body));
          if (name.empty()) return (where / "name").error("missing");
          cfg.chat_templates.emplace_back(name, body);
        }
      } else {
        return (at / "chat_template").error("expected a string or a list of {name, template}");
      }
    }
    return cfg;
  }

  static Status load_config(Tokenizer& t, std::string_view text, const std::string& source) {
    XONNX_ASSIGN_OR_RETURN(t.config_, parse_config(text, source));
    const TokenizerConfig& cfg = t.config_;
    if (!cfg.bos_token.empty()) t.bos_id_ = t.token_to_id(cfg.bos_token);
    if (!cfg.eos_token.empty()) t.eos_id_ = t.token_to_id(cfg.eos_token);
    if (rebuilds_post_processor(cfg.tokenizer_class)) {
      t.prefix_.clear();
      t.suffix_.clear();
      if (cfg.add_bos_token.value_or(true) && t.bos_id_) t.prefix_.push_back(*t.bos_id_);
      if (cfg.add_eos_token.value_or(false) && t.eos_id_) t.suffix_.push_back(*t.eos_id_);
    }
    return Status::ok();
  }
};

Result<std::unique_ptr<Tokenizer>> Tokenizer::from_json(std::string_view tokenizer_json,
                                                        std::string_view tokenizer_config_json,
                                                        const std::string& source) {
  return TokenizerLoader::load(tokenizer_json, tokenizer_config_json, source, "tokenizer_config.json");
}

// DIR -> DIR/tokenizer.json and DIR/tokenizer_config.json; FILE -> FILE and the config beside it.
static void tokenizer_paths(const std::string& dir_or_file, std::string& json_path, std::string& config_path) {
  json_path = dir_or_file;
  if (is_directory(dir_or_file)) {
    json_path = dir_or_file + "/tokenizer.json";
    config_path = dir_or_file + "/tokenizer_config.json";
  } else {
    const size_t slash = dir_or_file.find_last_of('/');
    config_path =
        (slash == std::string::npos ? std::string() : dir_or_file.substr(0, slash + 1)) + "tokenizer_config.json";
  }
}

Result<TokenizerConfig> Tokenizer::load_config(const std::string& dir_or_file) {
  std::string json_path, config_path;
  tokenizer_paths(dir_or_file, json_path, config_path);
  XONNX_ASSIGN_OR_RETURN(std::string text, read_file(config_path));
  return TokenizerLoader::config_only(text, config_path);
}

Result<std::unique_ptr<Tokenizer>> Tokenizer::load(const std::string& dir_or_file) {
  std::string json_path, config_path;
  tokenizer_paths(dir_or_file, json_path, config_path);
  XONNX_ASSIGN_OR_RETURN(std::string json_text, read_file(json_path));
  std::string config_text;
  if (file_exists(config_path)) {
    XONNX_ASSIGN_OR_RETURN(config_text, read_file(config_path));
  } else {
    config_path.clear();
  }
  return TokenizerLoader::load(json_text, config_text, json_path, config_path);
}

}  // namespace xonnx::genai
