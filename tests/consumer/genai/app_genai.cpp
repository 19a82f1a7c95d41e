// An application on the installed genai component (xonnx::genai: tokenizer, chat templates):
// encodes a text with a Hugging Face tokenizer.json, checks that it decodes back, and prints the
// ids, which the packaging test compares with the in-tree CLI's `xonnx tokenize`.
//   app_genai TOKENIZER_DIR TEXT
#include <cstdio>
#include <string>

#include "sdk/genai/tokenizer.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s TOKENIZER_DIR TEXT\n", argv[0]);
    return 2;
  }
  auto tokenizer = xonnx::genai::Tokenizer::load(argv[1]);
  if (!tokenizer.is_ok()) {
    std::fprintf(stderr, "%s\n", tokenizer.status().to_string().c_str());
    return 1;
  }
  const std::vector<int32_t> ids = (*tokenizer)->encode(argv[2], /*add_special_tokens=*/false);
  for (size_t i = 0; i < ids.size(); ++i) std::printf("%s%d", i ? " " : "", ids[i]);
  std::printf("\n");
  if (ids.empty() || (*tokenizer)->decode(ids) != argv[2]) {
    std::fprintf(stderr, "the text does not decode back\n");
    return 1;
  }
  std::printf("ok\n");
  return 0;
}
