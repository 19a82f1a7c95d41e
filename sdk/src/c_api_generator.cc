// The C API's text generation: xonnx_generator_* over genai::Generator.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "sdk/genai/generator.h"
#include "sdk/src/c_api_internal.h"
#include "xonnx/xonnx.h"

struct xonnx_generator {
  std::unique_ptr<xonnx::genai::Generator> generator;
  std::unique_ptr<xonnx::genai::TokenStreamDecoder> stream;
  std::string text;  // the last xonnx_generator_stream_text result
};

using xonnx::capi::bad_arg;
using xonnx::capi::from_status;
using xonnx::capi::guarded;

xonnx_status* xonnx_generator_create(const char* model_dir, int num_threads, int32_t max_length,
                                     xonnx_generator** out) {
  return guarded([&]() -> xonnx_status* {
    if (!model_dir || !out) return bad_arg("model_dir and out must not be NULL");
    *out = nullptr;
    xonnx::genai::GeneratorOptions options;
    options.threads = std::max(1, num_threads);
    options.max_length = std::max(0, max_length);
    auto g = xonnx::genai::Generator::create(model_dir, options);
    if (!g.is_ok()) return from_status(g.status());
    auto handle = std::make_unique<xonnx_generator>();
    handle->generator = std::move(g).value();
    handle->stream = std::make_unique<xonnx::genai::TokenStreamDecoder>(handle->generator->tokenizer(), true);
    *out = handle.release();
    return nullptr;
  });
}

void xonnx_generator_release(xonnx_generator* generator) { delete generator; }

xonnx_status* xonnx_generator_set_sampling(xonnx_generator* generator, float temperature, int32_t top_k, float top_p,
                                           float repetition_penalty, int64_t seed) {
  return guarded([&]() -> xonnx_status* {
    if (!generator) return bad_arg("generator is NULL");
    xonnx::genai::SamplingParams p;
    p.temperature = temperature;
    p.top_k = top_k;
    p.top_p = top_p;
    p.repetition_penalty = repetition_penalty;
    p.seed = seed;
    return from_status(generator->generator->set_sampling(p));
  });
}

xonnx_status* xonnx_generator_append_text(xonnx_generator* generator, const char* text, int add_special_tokens) {
  return guarded([&]() -> xonnx_status* {
    if (!generator || !text) return bad_arg("generator and text must not be NULL");
    return from_status(generator->generator->append_text(text, add_special_tokens != 0));
  });
}

xonnx_status* xonnx_generator_append_tokens(xonnx_generator* generator, const int32_t* ids, size_t count) {
  return guarded([&]() -> xonnx_status* {
    if (!generator || (count && !ids)) return bad_arg("generator and ids must not be NULL");
    return from_status(generator->generator->append_tokens(ids, count));
  });
}

xonnx_status* xonnx_generator_next_token(xonnx_generator* generator, int32_t* token) {
  return guarded([&]() -> xonnx_status* {
    if (!generator || !token) return bad_arg("generator and token must not be NULL");
    auto t = generator->generator->next_token();
    if (!t.is_ok()) return from_status(t.status());
    *token = *t;
    return nullptr;
  });
}

int xonnx_generator_is_done(const xonnx_generator* generator) {
  if (!generator) return 1;
  const auto& g = *generator->generator;
  return g.is_full() || (!g.tokens().empty() && g.is_eos(g.tokens().back())) ? 1 : 0;
}

size_t xonnx_generator_token_count(const xonnx_generator* generator) {
  return generator ? generator->generator->tokens().size() : 0;
}

const int32_t* xonnx_generator_tokens(const xonnx_generator* generator) {
  return generator ? generator->generator->tokens().data() : nullptr;
}

void xonnx_generator_rewind(xonnx_generator* generator, size_t length) {
  if (!generator) return;
  generator->generator->rewind(length);
  generator->stream->reset();
}

const char* xonnx_generator_stream_text(xonnx_generator* generator, int32_t token) {
  if (!generator) return nullptr;
  try {
    generator->text = generator->stream->put(token);
  } catch (...) {
    generator->text.clear();
  }
  return generator->text.c_str();
}

xonnx_status* xonnx_generator_decode(const xonnx_generator* generator, const int32_t* ids, size_t count,
                                     int skip_special_tokens, char* buffer, size_t capacity, size_t* length) {
  return guarded([&]() -> xonnx_status* {
    if (!generator || (count && !ids) || (capacity && !buffer)) return bad_arg("NULL argument");
    const std::string text = generator->generator->tokenizer().decode(ids, count, skip_special_tokens != 0);
    if (length) *length = text.size();
    if (capacity) {
      const size_t n = std::min(text.size(), capacity - 1);
      std::memcpy(buffer, text.data(), n);
      buffer[n] = '\0';
    }
    return nullptr;
  });
}
