// tokenizer.json bytes (and, after a NUL byte, tokenizer_config.json) -> the loader; a
// tokenizer that loads then encodes texts with special tokens, spaces, digits, emoji and
// ill-formed UTF-8, decodes ids inside and outside its vocabulary, streams them back, and
// renders its chat templates.
#include <cstring>
#include <string>
#include <vector>

#include "sdk/genai/chat_template.h"
#include "sdk/genai/tokenizer.h"
#include "tests/fuzz/fuzz_target.h"

XONNX_FUZZ_TARGET(fuzz_tokenizer) {
  using namespace xonnx::genai;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::string_view tokenizer_json = bytes, config_json;
  if (size_t nul = bytes.find('\0'); nul != std::string_view::npos) {
    tokenizer_json = bytes.substr(0, nul);
    config_json = bytes.substr(nul + 1);
  }
  auto loaded = Tokenizer::from_json(tokenizer_json, config_json);
  if (!loaded.is_ok()) return 0;
  const Tokenizer& tokenizer = *loaded.value();
  const std::string texts[] = {
      "",
      "Hello, world! 123 4567",
      "  leading and   inner  spaces\n\n\ttabs\r\n",
      "<s>special</s><|im_start|>user<|im_end|><unk>",
      "caf\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\x98\x80 \xe2\x80\x8b",
      std::string("ill\xff\xfe formed \xc3 \xe4\xb8 \xf0\x9f", 21),
      std::string(300, 'a') + " " + std::string(200, ' '),
  };
  std::vector<int32_t> all_ids;
  for (const std::string& text : texts) {
    for (bool special : {true, false}) {
      std::vector<int32_t> ids = tokenizer.encode(text, special);
      (void)tokenizer.decode(ids, false);
      (void)tokenizer.decode(ids, true);
      all_ids.insert(all_ids.end(), ids.begin(), ids.end());
    }
  }
  const int32_t vocab = tokenizer.vocab_size();
  for (int32_t id : {-1, 0, 1, vocab - 1, vocab, vocab + 1, 2147483647}) all_ids.push_back(id);
  for (int32_t id = 0; id < vocab && id < 512; ++id) all_ids.push_back(id);
  (void)tokenizer.decode(all_ids, false);
  TokenStreamDecoder stream(tokenizer);
  for (int32_t id : all_ids) {
    (void)stream.put(id);
    (void)tokenizer.id_to_token(id);
    (void)tokenizer.token_to_piece(id);
    (void)tokenizer.is_special(id);
  }
  (void)stream.flush();
  if (!tokenizer.config().chat_templates.empty()) {
    const OrderedJson messages = OrderedJson::parse(R"([{"role": "user", "content": "hi"}])");
    (void)apply_chat_template(tokenizer.config(), messages);
  }
  return 0;
}
