// POST /v1/embeddings (OpenAI's request and response shapes) over an embedding model
// (embedding_model.h). Internal to xonnx_serve.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sdk/serve/api_request.h"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace xonnx::serve {

struct ServerContext;

struct EmbeddingRequest {
  std::string model;
  // `input`: a string, an array of strings, an array of token ids, or an array of such arrays.
  std::vector<std::string> texts;                  // when given as text
  std::vector<std::vector<int32_t>> token_inputs;  // when given as token ids
  bool base64 = false;                             // encoding_format "base64" (else "float")
  std::optional<int32_t> dimensions;
};

struct EmbeddingParse {
  std::optional<EmbeddingRequest> request;
  ApiError error;
};
// Checks the body's shape (not yet against a model: token ids, lengths and dimensions are
// checked once the model is known). Errors name the field (`input[3]`, `encoding_format`).
EmbeddingParse parse_embedding_request(const std::string& body);

// Little-endian float32 bytes in base64, as OpenAI's encoding_format "base64".
std::string embedding_base64(const std::vector<float>& vector);

void handle_embeddings(const httplib::Request& req, httplib::Response& res, ServerContext& ctx);

}  // namespace xonnx::serve
