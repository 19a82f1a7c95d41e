// The OpenAI request bodies the server accepts (/v1/chat/completions, /v1/completions), parsed
// and checked before anything is queued, and OpenAI's error shape.
//
// Parsing never throws: every problem is an ApiError with the HTTP status, OpenAI's error type
// and the request field it concerns (`param`, e.g. "messages[2].content"). Fields OpenAI defines
// that change the output but are not implemented (n > 1, logprobs, tools, echo, suffix, best_of)
// are refused by name rather than ignored; fields that only annotate (user, metadata, store) are
// ignored. Sampling extensions other servers accept (top_k, min_p, repetition_penalty) are read.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sdk/genai/sampling.h"
#include "sdk/genai/tokenizer_json.h"
#include "sdk/serve/json_schema.h"

namespace xonnx::serve {

struct ApiError {
  int status = 400;
  std::string type = "invalid_request_error";  // OpenAI's error.type
  std::string message;
  std::string param;  // the request field at fault; empty: none
  std::string code;   // OpenAI's error.code ("model_not_found", "invalid_api_key", ...); may be empty

  // {"error": {"message", "type", "param", "code"}}
  nlohmann::json to_json() const;
};

ApiError bad_request(std::string message, std::string param = {});

// The 400 for a body whose arrays and objects nest deeper than genai::kMaxJsonNesting (the
// schema compiler, nlohmann's copies and dumps recurse once per level), or nothing.
template <class AnyJson>
std::optional<ApiError> nesting_error(const AnyJson& body) {
  if (genai::json_nesting(body) <= genai::kMaxJsonNesting) return std::nullopt;
  return bad_request("the request body nests arrays and objects deeper than " + std::to_string(genai::kMaxJsonNesting));
}

enum class Endpoint { kChat, kCompletion };

struct CompletionRequest {
  Endpoint endpoint = Endpoint::kChat;
  std::string model;
  nlohmann::ordered_json messages;  // chat: the messages, content parts joined into strings
  std::string prompt;               // completion: the prompt text
  std::vector<int32_t> prompt_ids;  // completion: a prompt given as token ids instead
  std::optional<int32_t> max_tokens;
  genai::SamplingParams sampling;  // fields the client did not set keep the model's defaults
  bool temperature_set = false, top_p_set = false, top_k_set = false;
  std::vector<std::string> stop;
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
  // response_format: json_object / json_schema; null for text.
  std::shared_ptr<const CompiledSchema> schema;
  std::string response_format = "text";
  nlohmann::ordered_json template_extra = nlohmann::ordered_json::object();  // chat_template_kwargs
};

// Parses a request body (raw bytes) for an endpoint. `sampling` holds the model-independent
// defaults the request's fields override. The result's sampling is not yet validated against a
// vocabulary (logit_bias ids are checked when the model is known).
struct ParseResult {
  std::optional<CompletionRequest> request;
  ApiError error;
};
ParseResult parse_completion_request(const std::string& body, Endpoint endpoint);

// Body of /tokenize and /detokenize.
struct TokenizeRequest {
  std::string model, text;
  std::vector<int32_t> tokens;
  bool add_special = true;
  nlohmann::ordered_json messages;  // /tokenize of a chat (rendered with the template) when set
};
struct TokenizeParse {
  std::optional<TokenizeRequest> request;
  ApiError error;
};
TokenizeParse parse_tokenize_request(const std::string& body, bool detokenize);

}  // namespace xonnx::serve
