#include "sdk/serve/embeddings.h"

#include <httplib.h>

#include <cmath>
#include <cstring>

#include "sdk/serve/embedding_model.h"
#include "sdk/serve/server_state.h"

namespace xonnx::serve {

using json = nlohmann::json;

namespace {

// OpenAI's limit of inputs per request.
constexpr size_t kMaxInputs = 2048;

bool is_token(const json& v) { return v.is_number_integer() && v.get<int64_t>() >= 0 && v.get<int64_t>() <= INT32_MAX; }

bool read_tokens(const json& array, std::vector<int32_t>& out) {
  for (const json& v : array) {
    if (!is_token(v)) return false;
    out.push_back(v.get<int32_t>());
  }
  return true;
}

}  // namespace

EmbeddingParse parse_embedding_request(const std::string& body) {
  EmbeddingParse p;
  const json j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    p.error = bad_request("the request body is not a JSON object");
    return p;
  }
  if (auto nested = nesting_error(j)) {
    p.error = *nested;
    return p;
  }
  EmbeddingRequest r;
  if (j.contains("model")) {
    if (!j["model"].is_string()) {
      p.error = bad_request("model: expected a string", "model");
      return p;
    }
    r.model = j["model"].get<std::string>();
  }
  if (!j.contains("input")) {
    p.error = bad_request("input is required: a string, an array of strings, or token ids", "input");
    return p;
  }
  const json& input = j["input"];
  auto fail = [&](const std::string& message, const std::string& param) {
    p.error = bad_request(message, param);
    return p;
  };
  if (input.is_string()) {
    r.texts.push_back(input.get<std::string>());
  } else if (!input.is_array() || input.empty()) {
    return fail("input: expected a non-empty string, array of strings, array of token ids or array of arrays of them",
                "input");
  } else if (input.size() > kMaxInputs) {
    return fail("input: at most " + std::to_string(kMaxInputs) + " inputs per request (" +
                    std::to_string(input.size()) + " given)",
                "input");
  } else if (is_token(input[0])) {
    r.token_inputs.emplace_back();
    if (!read_tokens(input, r.token_inputs.back())) return fail("input: expected token ids (integers >= 0)", "input");
  } else {
    const bool strings = input[0].is_string();
    for (size_t i = 0; i < input.size(); ++i) {
      const json& item = input[i];
      const std::string param = "input[" + std::to_string(i) + "]";
      if (strings && item.is_string()) {
        r.texts.push_back(item.get<std::string>());
      } else if (!strings && item.is_array() && !item.empty()) {
        r.token_inputs.emplace_back();
        if (!read_tokens(item, r.token_inputs.back()))
          return fail(param + ": expected token ids (integers >= 0)", param);
      } else {
        return fail(
            param + (strings ? ": expected a string like input[0]" : ": expected a non-empty array of token ids"),
            param);
      }
    }
  }
  for (size_t i = 0; i < r.texts.size(); ++i) {
    if (r.texts[i].empty()) {
      return fail("input cannot be an empty string", input.is_string() ? "input" : "input[" + std::to_string(i) + "]");
    }
  }
  if (j.contains("encoding_format") && !j["encoding_format"].is_null()) {
    const json& f = j["encoding_format"];
    if (!f.is_string() || (f != "float" && f != "base64")) {
      return fail("encoding_format: expected \"float\" or \"base64\"", "encoding_format");
    }
    r.base64 = f == "base64";
  }
  if (j.contains("dimensions") && !j["dimensions"].is_null()) {
    const json& d = j["dimensions"];
    if (!d.is_number_integer() || d.get<int64_t>() < 1 || d.get<int64_t>() > INT32_MAX) {
      return fail("dimensions: expected an integer >= 1", "dimensions");
    }
    r.dimensions = d.get<int32_t>();
  }
  p.request = std::move(r);
  return p;
}

std::string embedding_base64(const std::vector<float>& vector) {
  static const char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string bytes(vector.size() * 4, '\0');
  for (size_t i = 0; i < vector.size(); ++i) {
    uint32_t bits = 0;
    std::memcpy(&bits, &vector[i], 4);
    for (int b = 0; b < 4; ++b) bytes[i * 4 + static_cast<size_t>(b)] = static_cast<char>((bits >> (8 * b)) & 0xff);
  }
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t n = static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])) << 16;
    if (i + 1 < bytes.size()) n |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8;
    if (i + 2 < bytes.size()) n |= static_cast<unsigned char>(bytes[i + 2]);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(n >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kAlphabet[n & 63] : '=';
  }
  return out;
}

void handle_embeddings(const httplib::Request& req, httplib::Response& res, ServerContext& ctx) {
  EmbeddingParse parsed = parse_embedding_request(req.body);
  if (!parsed.request) return send_error(res, parsed.error);
  EmbeddingRequest& request = *parsed.request;
  ApiError error;
  auto backend = acquire_model(ctx, request.model, error);
  if (!backend.is_ok()) return send_error(res, error);
  EmbeddingModel* model = backend.value()->embedding_model();
  if (!model) {
    return send_error(res, bad_request("the model '" + request.model +
                                           "' generates text; /v1/embeddings needs an embedding model (docs/serve.md)",
                                       "model"));
  }
  const genai::Tokenizer& tok = model->tokenizer();
  std::vector<std::vector<int32_t>> inputs;
  for (const std::string& text : request.texts) inputs.push_back(tok.encode(text, /*add_special_tokens=*/true));
  if (request.texts.empty()) inputs = std::move(request.token_inputs);
  int64_t tokens = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string param = inputs.size() == 1 ? "input" : "input[" + std::to_string(i) + "]";
    for (int32_t id : inputs[i]) {
      if (id >= tok.vocab_size()) {
        return send_error(res, bad_request(param + ": token id " + std::to_string(id) + " is outside the vocabulary (" +
                                               std::to_string(tok.vocab_size()) + " tokens)",
                                           param));
      }
    }
    if (inputs[i].empty()) return send_error(res, bad_request(param + ": no tokens", param));
    if (static_cast<int64_t>(inputs[i].size()) > model->config().max_tokens) {
      ApiError e = bad_request(param + " is " + std::to_string(inputs[i].size()) + " tokens; this model's maximum is " +
                                   std::to_string(model->config().max_tokens),
                               param);
      e.code = "context_length_exceeded";
      return send_error(res, e);
    }
    tokens += static_cast<int64_t>(inputs[i].size());
  }
  auto vectors = model->embed(inputs);
  if (!vectors.is_ok()) {
    return send_error(res, {500, "server_error", "embedding failed: " + vectors.status().message(), "", ""});
  }
  json data = json::array();
  for (size_t i = 0; i < vectors.value().size(); ++i) {
    std::vector<float>& v = vectors.value()[i];
    if (request.dimensions && static_cast<size_t>(*request.dimensions) != v.size()) {
      // Shortened as OpenAI's text-embedding-3 models are (Matryoshka): the first N numbers,
      // normalized again. Only for models that normalize: a model that does not has no unit
      // length to keep.
      if (!model->config().normalize || *request.dimensions > static_cast<int32_t>(v.size())) {
        return send_error(
            res, bad_request("dimensions: this model gives " + std::to_string(v.size()) + "-dimensional vectors" +
                                 (model->config().normalize ? "" : " and cannot shorten them (it does not normalize)"),
                             "dimensions"));
      }
      v.resize(static_cast<size_t>(*request.dimensions));
      double norm = 0;
      for (float x : v) norm += static_cast<double>(x) * x;
      norm = std::max(std::sqrt(norm), 1e-12);
      for (float& x : v) x = static_cast<float>(x / norm);
    }
    data.push_back(
        {{"object", "embedding"}, {"index", i}, {"embedding", request.base64 ? json(embedding_base64(v)) : json(v)}});
  }
  ctx.registry.touch(request.model);
  ctx.metrics.count_embeddings(static_cast<uint64_t>(inputs.size()), static_cast<uint64_t>(tokens));
  const json body = {{"object", "list"},
                     {"data", data},
                     {"model", request.model},
                     {"usage", {{"prompt_tokens", tokens}, {"total_tokens", tokens}}}};
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

}  // namespace xonnx::serve
