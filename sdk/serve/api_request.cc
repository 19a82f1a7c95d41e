#include "sdk/serve/api_request.h"

#include <cmath>
#include <limits>
#include <utility>

namespace xonnx::serve {

using json = nlohmann::json;
using ordered_json = nlohmann::ordered_json;

json ApiError::to_json() const {
  json error = {{"message", message}, {"type", type}, {"param", nullptr}, {"code", nullptr}};
  if (!param.empty()) error["param"] = param;
  if (!code.empty()) error["code"] = code;
  return json{{"error", error}};
}

ApiError bad_request(std::string message, std::string param) {
  ApiError e;
  e.status = 400;
  e.message = std::move(message);
  e.param = std::move(param);
  return e;
}

namespace {

// Field readers: each returns false and fills `error` when the field is present but wrong.
struct Reader {
  const ordered_json& body;
  ApiError error;
  bool failed = false;

  bool fail(const std::string& field, const std::string& what) {
    if (!failed) error = bad_request("'" + field + "' " + what, field);
    failed = true;
    return false;
  }
  const ordered_json* get(const char* field) const {
    auto it = body.find(field);
    return it == body.end() || it->is_null() ? nullptr : &*it;
  }
  bool number(const char* field, double lo, double hi, float& out, bool* set = nullptr) {
    const ordered_json* v = get(field);
    if (!v) return true;
    if (!v->is_number()) return fail(field, "must be a number");
    const double d = v->get<double>();
    if (!(d >= lo && d <= hi)) return fail(field, "must be between " + short_number(lo) + " and " + short_number(hi));
    out = static_cast<float>(d);
    if (set) *set = true;
    return true;
  }
  bool integer(const char* field, int64_t lo, int64_t hi, std::optional<int64_t>& out) {
    const ordered_json* v = get(field);
    if (!v) return true;
    if (!v->is_number_integer()) return fail(field, "must be an integer");
    const int64_t i = v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)
                          ? INT64_MAX
                          : v->get<int64_t>();
    if (i < lo || i > hi) return fail(field, "must be between " + std::to_string(lo) + " and " + std::to_string(hi));
    out = i;
    return true;
  }
  bool boolean(const char* field, bool& out) {
    const ordered_json* v = get(field);
    if (!v) return true;
    if (!v->is_boolean()) return fail(field, "must be true or false");
    out = v->get<bool>();
    return true;
  }
  static std::string short_number(double d) {
    std::string s = std::to_string(d);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  }
};

// Message content: a string, or an array of {"type": "text", "text": ...} parts (joined).
bool read_content(Reader& r, const ordered_json& content, const std::string& field, std::string& out) {
  if (content.is_string()) {
    out = content.get<std::string>();
    return true;
  }
  if (!content.is_array()) return r.fail(field, "must be a string or an array of text parts");
  out.clear();
  for (size_t i = 0; i < content.size(); ++i) {
    const ordered_json& part = content[i];
    const std::string pf = field + "[" + std::to_string(i) + "]";
    if (!part.is_object() || !part.contains("type") || part["type"] != "text") {
      return r.fail(pf + ".type", "must be \"text\" (this server reads text only)");
    }
    if (!part.contains("text") || !part["text"].is_string()) return r.fail(pf + ".text", "must be a string");
    out += part["text"].get<std::string>();
  }
  return true;
}

bool read_messages(Reader& r, CompletionRequest& req) {
  const ordered_json* messages = r.get("messages");
  if (!messages) return r.fail("messages", "is required");
  if (!messages->is_array() || messages->empty()) return r.fail("messages", "must be a non-empty array");
  req.messages = ordered_json::array();
  for (size_t i = 0; i < messages->size(); ++i) {
    const ordered_json& m = (*messages)[i];
    const std::string field = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) return r.fail(field, "must be an object");
    auto role = m.find("role");
    if (role == m.end() || !role->is_string()) return r.fail(field + ".role", "must be a string");
    static const char* const kRoles[] = {"system", "developer", "user", "assistant", "tool"};
    bool known = false;
    for (const char* k : kRoles) known = known || *role == k;
    if (!known) return r.fail(field + ".role", "must be one of system, developer, user, assistant, tool");
    ordered_json out = m;  // keeps name, tool_call_id, ... for templates that read them
    auto content = m.find("content");
    if (content == m.end() || content->is_null()) {
      if (*role != "assistant") return r.fail(field + ".content", "is required");
      out["content"] = "";
    } else {
      std::string text;
      if (!read_content(r, *content, field + ".content", text)) return false;
      out["content"] = text;
    }
    // "developer" is OpenAI's newer name for the system role; chat templates know "system".
    if (*role == "developer") out["role"] = "system";
    req.messages.push_back(std::move(out));
  }
  return true;
}

bool read_prompt(Reader& r, CompletionRequest& req) {
  const ordered_json* prompt = r.get("prompt");
  if (!prompt) return r.fail("prompt", "is required");
  if (prompt->is_string()) {
    req.prompt = prompt->get<std::string>();
    return true;
  }
  if (prompt->is_array()) {
    if (prompt->size() == 1 && (*prompt)[0].is_string()) {
      req.prompt = (*prompt)[0].get<std::string>();
      return true;
    }
    if (prompt->empty()) return r.fail("prompt", "must not be empty");
    for (const auto& id : *prompt) {
      if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX) {
        return r.fail(
            "prompt",
            "must be a string, one string in an array, or an array of token ids (batches of prompts are not supported)");
      }
      req.prompt_ids.push_back(id.get<int32_t>());
    }
    return true;
  }
  return r.fail("prompt", "must be a string or an array of token ids");
}

bool read_stop(Reader& r, CompletionRequest& req) {
  const ordered_json* stop = r.get("stop");
  if (!stop) return true;
  if (stop->is_string()) {
    if (!stop->get<std::string>().empty()) req.stop.push_back(stop->get<std::string>());
    return true;
  }
  if (!stop->is_array() || stop->size() > 4) return r.fail("stop", "must be a string or an array of at most 4 strings");
  for (const auto& s : *stop) {
    if (!s.is_string()) return r.fail("stop", "must be a string or an array of at most 4 strings");
    if (!s.get<std::string>().empty()) req.stop.push_back(s.get<std::string>());
  }
  return true;
}

bool read_logit_bias(Reader& r, CompletionRequest& req) {
  const ordered_json* bias = r.get("logit_bias");
  if (!bias) return true;
  if (!bias->is_object()) return r.fail("logit_bias", "must be an object mapping token ids to numbers");
  for (auto it = bias->begin(); it != bias->end(); ++it) {
    const std::string field = "logit_bias." + it.key();
    char* end = nullptr;
    const long id = std::strtol(it.key().c_str(), &end, 10);
    if (it.key().empty() || *end != '\0' || id < 0 || id > INT32_MAX) return r.fail(field, "key must be a token id");
    if (!it.value().is_number()) return r.fail(field, "must be a number");
    const double v = it.value().get<double>();
    if (!(v >= -100 && v <= 100)) return r.fail(field, "must be between -100 and 100");
    req.sampling.logit_bias.emplace_back(static_cast<int32_t>(id), static_cast<float>(v));
  }
  return true;
}

bool read_response_format(Reader& r, CompletionRequest& req) {
  const ordered_json* format = r.get("response_format");
  if (!format) return true;
  if (!format->is_object() || !format->contains("type") || !(*format)["type"].is_string()) {
    return r.fail("response_format.type", "must be \"text\", \"json_object\" or \"json_schema\"");
  }
  const std::string type = (*format)["type"].get<std::string>();
  req.response_format = type;
  if (type == "text") return true;
  if (type == "json_object") {
    req.schema = CompiledSchema::any_object();
    return true;
  }
  if (type != "json_schema")
    return r.fail("response_format.type", "must be \"text\", \"json_object\" or \"json_schema\"");
  auto spec = format->find("json_schema");
  if (spec == format->end() || !spec->is_object())
    return r.fail("response_format.json_schema", "is required (an object)");
  auto schema = spec->find("schema");
  if (schema == spec->end()) {
    // OpenAI requires name and allows a missing schema (any JSON); take it as any JSON value.
    req.schema = CompiledSchema::any_object();
    return true;
  }
  if (!schema->is_object() && !schema->is_boolean()) {
    return r.fail("response_format.json_schema.schema", "must be a JSON Schema object");
  }
  auto compiled = CompiledSchema::compile(json::parse(schema->dump()));
  if (!compiled.is_ok()) return r.fail("response_format.json_schema.schema", compiled.status().message());
  req.schema = compiled.value();
  return true;
}

// Fields that change the output in ways this server does not implement.
bool refuse_unsupported(Reader& r, Endpoint endpoint) {
  if (const auto* n = r.get("n")) {
    if (!n->is_number_integer() || n->get<int64_t>() != 1) return r.fail("n", "must be 1 (one choice per request)");
  }
  if (const auto* v = r.get("logprobs")) {
    if (!(v->is_boolean() && !v->get<bool>())) return r.fail("logprobs", "is not supported");
  }
  if (const auto* v = r.get("top_logprobs")) {
    if (!(v->is_number_integer() && v->get<int64_t>() == 0)) return r.fail("top_logprobs", "is not supported");
  }
  if (const auto* v = r.get("tools")) {
    if (!(v->is_array() && v->empty())) return r.fail("tools", "is not supported (function calling)");
  }
  if (endpoint == Endpoint::kCompletion) {
    if (const auto* v = r.get("echo")) {
      if (!(v->is_boolean() && !v->get<bool>())) return r.fail("echo", "is not supported");
    }
    if (const auto* v = r.get("suffix")) {
      if (!(v->is_string() && v->get<std::string>().empty())) return r.fail("suffix", "is not supported");
    }
    if (const auto* v = r.get("best_of")) {
      if (!(v->is_number_integer() && v->get<int64_t>() == 1)) return r.fail("best_of", "must be 1");
    }
  }
  return true;
}

bool parse_object(const std::string& body, ordered_json& out, ApiError& error) {
  out = ordered_json::parse(body, nullptr, false);
  if (out.is_discarded()) {
    error = bad_request("the request body is not valid JSON");
    return false;
  }
  if (!out.is_object()) {
    error = bad_request("the request body must be a JSON object");
    return false;
  }
  if (auto nested = nesting_error(out)) {
    error = *nested;
    return false;
  }
  return true;
}

}  // namespace

ParseResult parse_completion_request(const std::string& body, Endpoint endpoint) {
  ParseResult result;
  ordered_json parsed;
  if (!parse_object(body, parsed, result.error)) return result;
  Reader r{parsed, {}};
  CompletionRequest req;
  req.endpoint = endpoint;
  const ordered_json* model = r.get("model");
  if (!model || !model->is_string() || model->get<std::string>().empty()) {
    r.fail("model", "is required (a model id from /v1/models)");
  } else {
    req.model = model->get<std::string>();
  }
  std::optional<int64_t> max_tokens, max_completion_tokens, seed, top_k;
  if (!r.failed) refuse_unsupported(r, endpoint);
  if (!r.failed) endpoint == Endpoint::kChat ? read_messages(r, req) : read_prompt(r, req);
  if (!r.failed) r.integer("max_tokens", 1, INT32_MAX, max_tokens);
  if (!r.failed) r.integer("max_completion_tokens", 1, INT32_MAX, max_completion_tokens);
  if (!r.failed) r.number("temperature", 0, 2, req.sampling.temperature, &req.temperature_set);
  if (!r.failed) r.number("top_p", 0, 1, req.sampling.top_p, &req.top_p_set);
  if (!r.failed && req.top_p_set && req.sampling.top_p <= 0) r.fail("top_p", "must be greater than 0");
  if (!r.failed) r.integer("top_k", 0, INT32_MAX, top_k);
  if (!r.failed) r.number("min_p", 0, 1, req.sampling.min_p);
  if (!r.failed) r.number("repetition_penalty", 1e-3, 100, req.sampling.repetition_penalty);
  if (!r.failed) r.number("presence_penalty", -2, 2, req.sampling.presence_penalty);
  if (!r.failed) r.number("frequency_penalty", -2, 2, req.sampling.frequency_penalty);
  if (!r.failed) r.integer("seed", INT64_MIN, INT64_MAX, seed);
  if (!r.failed) read_stop(r, req);
  if (!r.failed) read_logit_bias(r, req);
  if (!r.failed) r.boolean("stream", req.stream);
  if (!r.failed) {
    if (const auto* options = r.get("stream_options")) {
      if (!options->is_object()) {
        r.fail("stream_options", "must be an object");
      } else if (!req.stream) {
        r.fail("stream_options", "is only allowed with stream: true");
      } else if (options->contains("include_usage")) {
        if (!(*options)["include_usage"].is_boolean())
          r.fail("stream_options.include_usage", "must be true or false");
        else
          req.include_usage = (*options)["include_usage"].get<bool>();
      }
    }
  }
  if (!r.failed) read_response_format(r, req);
  if (!r.failed) {
    if (const auto* kwargs = r.get("chat_template_kwargs")) {
      if (!kwargs->is_object())
        r.fail("chat_template_kwargs", "must be an object");
      else
        req.template_extra = *kwargs;
    }
  }
  if (r.failed) {
    result.error = r.error;
    return result;
  }
  if (max_completion_tokens)
    req.max_tokens = static_cast<int32_t>(*max_completion_tokens);
  else if (max_tokens)
    req.max_tokens = static_cast<int32_t>(*max_tokens);
  if (top_k) {
    req.sampling.top_k = static_cast<int32_t>(*top_k);
    req.top_k_set = true;
  }
  // OpenAI's seeds are any integer; negative ones are mapped into the engine's range.
  if (seed) req.sampling.seed = *seed >= 0 ? *seed : -(*seed + 1);
  result.request = std::move(req);
  return result;
}

TokenizeParse parse_tokenize_request(const std::string& body, bool detokenize) {
  TokenizeParse result;
  ordered_json parsed;
  if (!parse_object(body, parsed, result.error)) return result;
  Reader r{parsed, {}};
  TokenizeRequest req;
  const ordered_json* model = r.get("model");
  if (model && !model->is_string()) r.fail("model", "must be a string");
  if (model && model->is_string()) req.model = model->get<std::string>();
  if (detokenize) {
    const ordered_json* tokens = r.get("tokens");
    if (!tokens || !tokens->is_array()) {
      r.fail("tokens", "is required (an array of token ids)");
    } else {
      for (const auto& id : *tokens) {
        if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX) {
          r.fail("tokens", "must hold token ids (integers >= 0)");
          break;
        }
        req.tokens.push_back(id.get<int32_t>());
      }
    }
  } else if (const ordered_json* messages = r.get("messages")) {
    if (!messages->is_array() || messages->empty())
      r.fail("messages", "must be a non-empty array");
    else
      req.messages = *messages;
  } else {
    const ordered_json* text = r.get("content") ? r.get("content") : r.get("prompt");
    if (!text || !text->is_string())
      r.fail("content", "is required (a string; or messages)");
    else
      req.text = text->get<std::string>();
    if (!r.failed) r.boolean("add_special", req.add_special);
  }
  if (r.failed) {
    result.error = r.error;
    return result;
  }
  result.request = std::move(req);
  return result;
}

}  // namespace xonnx::serve
