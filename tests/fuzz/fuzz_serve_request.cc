// A request body to `xonnx serve` -> the chat / completion / tokenize parsers (fields,
// sampling, stop strings, response_format's JSON schema compiled for constrained decoding); a
// schema that compiles then drives its matcher over a few documents and the body's own bytes.
#include <string>

#include "sdk/serve/api_request.h"
#include "sdk/serve/json_matcher.h"
#include "tests/fuzz/fuzz_target.h"

XONNX_FUZZ_TARGET(fuzz_serve_request) {
  using namespace xonnx::serve;
  const std::string body(reinterpret_cast<const char*>(data), size);
  for (Endpoint endpoint : {Endpoint::kChat, Endpoint::kCompletion}) {
    ParseResult parsed = parse_completion_request(body, endpoint);
    if (!parsed.request) {
      (void)parsed.error.to_json().dump();
      continue;
    }
    if (!parsed.request->schema) continue;
    const JsonMatcher matcher(parsed.request->schema);
    for (std::string_view doc : {std::string_view("{}"), std::string_view("[1, 2.5e3, \"a\\u00e9\"]"),
                                 std::string_view("{\"a\": {\"b\": [true, null]}}"), std::string_view("\"x\""),
                                 std::string_view(body).substr(0, 512)}) {
      JsonMatcher::State state = matcher.initial();
      (void)matcher.advance(state, doc);
      (void)matcher.accepting(state);
    }
  }
  for (bool detokenize : {false, true}) (void)parse_tokenize_request(body, detokenize);
  return 0;
}
